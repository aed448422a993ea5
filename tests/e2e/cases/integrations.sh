# tests/e2e/cases/integrations.sh: CI and developer integrations: git hooks on
# real pushes and commits, the step summary, annotations and HTML report of real runs (the
# page rendered in headless Chromium), the YAML files parsed, the console's colour and
# progress lines. Sourced by tests/e2e/run.sh, whose helpers it uses.

INTEG="$ROOT/tests/integrations"

# integ_npm: the integration checks' npm packages (yaml, playwright-core), installed once
integ_npm() {
	[ -d "$INTEG/node_modules/yaml" ] && [ -d "$INTEG/node_modules/playwright-core" ] && return 0
	(cd "$INTEG" && npm ci --silent --no-audit --no-fund >/dev/null 2>&1) ||
		fail "npm ci in tests/integrations failed"
}

# a bare remote for REPO as origin; prints its path
bare_remote() {
	local r
	r=$(mktemp -d "$WORK/remote.XXXXXX")
	git init -q --bare -b main "$r" && git -C "$1" remote add origin "$r"
	echo "$r"
}

# (a) a failing gate blocks the push; the hook that was there runs first with the refs on
# its stdin; uninstall puts it back byte for byte. The push runs as from a git GUI: an
# empty environment, no terminal, started outside the repository.
case_hook_failing_gate_blocks_push() {

	local d r; d=$(git_fixture failing)
	r=$(bare_remote "$d")
	printf '#!/bin/sh\necho "team hook: $1" >"%s/team.ran"\ncat >>"%s/team.ran"\n' "$WORK" "$WORK" \
		>"$d/.git/hooks/pre-push"
	chmod 755 "$d/.git/hooks/pre-push"
	cp "$d/.git/hooks/pre-push" "$WORK/team-hook.orig"
	run_gate hook install -C "$d"
	expect_rc 0
	expect_in "$OUT" "is kept as $d/.git/hooks/pre-push.gate-chained and runs first"
	printf '# dirty\n' >>"$d/mix.exs" # a dirty tree does not matter
	(cd / && env -i HOME="$HOME" PATH=/usr/bin:/bin git -C "$d" push -q origin main) \
		</dev/null >"$WORK/push.out" 2>&1
	local rc=$?
	[ "$rc" -ne 0 ] || fail "the push went through a failing gate"
	expect_in "$WORK/push.out" "gate: pre-push hook: blocked, gate run exited 1"
	expect_in "$WORK/push.out" "gate: FAILED (1 test)"
	[ -z "$(git -C "$r" for-each-ref)" ] || fail "the remote got refs: $(git -C "$r" for-each-ref)"
	expect_in "$WORK/team.ran" "team hook: origin"
	expect_in "$WORK/team.ran" "refs/heads/main $(git -C "$d" rev-parse HEAD)"
	# GATE_HOOK_SKIP=1 lets one push through; the team's hook still runs
	rm -f "$WORK/team.ran"
	GATE_HOOK_SKIP=1 git -C "$d" push -q origin main >"$WORK/push2.out" 2>&1 ||
		fail "GATE_HOOK_SKIP=1 push failed: $(cat "$WORK/push2.out")"
	[ -f "$WORK/team.ran" ] || fail "the chained hook did not run on the skipped push"
	run_gate hook uninstall -C "$d"
	expect_rc 0
	cmp -s "$WORK/team-hook.orig" "$d/.git/hooks/pre-push" || fail "the team's hook was not restored"
	[ -x "$d/.git/hooks/pre-push" ] || fail "the restored hook lost its mode"
	[ ! -e "$d/.git/hooks/pre-push.gate-chained" ] || fail "the chained copy is still there"
	run_gate hook uninstall -C "$d"
	expect_rc 2
	expect_in "$ERR" "is not gate's"
	no_leftovers "$d"
}

# (b) a pre-commit hook for a project in a subdirectory (-C relative to the root, recorded at
# install), no hook before it: a passing gate lets a commit with unstaged and untracked
# changes around through; a second install updates in place.
case_hook_pre_commit_subdir_passes() {
	local d m; d=$(fixture clean)
	m=$(mktemp -d "$WORK/mono.XXXXXX")
	mkdir -p "$m/apps" && mv "$d" "$m/apps/clean"
	(cd "$m" && git init -q -b main && git config user.name "Gate E2E" &&
		git config user.email e2e@gate.invalid && git add -A && git commit -q -m base) >/dev/null 2>&1
	(cd "$m/apps" && "$GATE" hook install --pre-commit -C clean -- -q -- --exclude nothing) >"$WORK/inst.out" 2>&1 ||
		fail "install: $(cat "$WORK/inst.out")"
	expect_in "$WORK/inst.out" "installed the pre-commit hook $m/.git/hooks/pre-commit"
	expect_in "$WORK/inst.out" "run -C <repository>/apps/clean -q -- --exclude nothing"
	[ ! -e "$m/.git/hooks/pre-commit.gate-chained" ] || fail "a chained hook appeared from nowhere"
	printf "# unstaged\n" >>"$m/apps/clean/mix.exs"
	printf 'untracked\n' >"$m/scratch.txt"
	printf 'docs\n' >"$m/README" && git -C "$m" add README
	git -C "$m" commit -q -m "docs" >"$WORK/commit.out" 2>&1 || fail "commit blocked: $(tail -n 5 "$WORK/commit.out")"
	expect_in "$WORK/commit.out" "gate: pre-commit hook: the memory gate on $m/apps/clean"
	expect_in "$WORK/commit.out" "gate: PASSED"
	[ "$(git -C "$m" log -1 --format=%s)" = docs ] || fail "the commit was not made"
	git -C "$m" diff --quiet -- apps/clean/mix.exs && fail "the unstaged change was lost"
	run_gate hook install --pre-commit -C "$m/apps/clean"
	expect_rc 0
	expect_in "$OUT" "updated gate's pre-commit hook"
	run_gate hook install --pre-commit --pre-push -C "$m/apps/clean"
	expect_rc 2
	run_gate hook install -C "$WORK"
	expect_rc 2
	expect_in "$ERR" "no readable mix.exs"
	no_leftovers "$m"
}

# (c) a real failing run inside GitHub's environment variables: annotations on stdout, the
# step summary appended to $GITHUB_STEP_SUMMARY, the JUnit read by junit2json, the HTML
# report rendered by Chromium with one trend point per noted run.
case_ci_reports_of_a_failing_run() {
	integ_npm
	local d; d=$(git_fixture clean)
	run_gate baseline update -q -C "$d" --commit
	expect_rc 0
	# two more noted runs: gate's own note, copied with other totals onto later commits
	local note i total
	note=$(git -C "$d" notes --ref=gate show HEAD)
	total=$(printf '%s' "$note" | sed -n 's/.*"total":\([0-9]*\).*/\1/p')
	[ -n "$total" ] || fail "no total in the note: $note"
	for i in 1 2; do
		git -C "$d" commit -q --allow-empty -m "work $i"
		git -C "$d" notes --ref=gate add -m "$(printf '%s' "$note" | sed "s/\"total\":[0-9]*/\"total\":$((total + i * 150000))/")" HEAD
	done
	rm -rf "$d/lib" "$d/test" "$d/mix.exs"
	cp -r "$FIX/failing/lib" "$FIX/failing/test" "$FIX/failing/mix.exs" "$d/"
	git_in "$d" add -A >/dev/null
	git_in "$d" commit -q -m "the failing code" >/dev/null
	printf '## an earlier step wrote this\n' >"$WORK/step_summary.md"
	GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$WORK/step_summary.md" GITHUB_WORKSPACE="$d" \
		run_gate run -C "$d" --html "$WORK/report/gate.html"
	expect_rc 1
	expect_in "$OUT" "::error file=test/failing_test.exs,line=4,title=FailingTest%3A test the answer is right::"
	expect_in "$OUT" "%0A     gate-fixture: the answer drifted%0A"
	[ "$(grep -c '^::' "$OUT")" = 1 ] || fail "expected one annotation: $(grep '^::' "$OUT")"
	expect_in "$ERR" "collecting garbage for the before-snapshot"
	local s="$WORK/step_summary.md"
	[ "$(head -n 1 "$s")" = "## an earlier step wrote this" ] || fail "the earlier step's summary was replaced"
	expect_in "$s" "gate: FAILED (1 test)"
	expect_in "$s" "| FailingTest: test the answer is right | test/failing\\_test.exs:4 | 1) test the answer is right (FailingTest) test/failing\\_test.exs\\:4 gate-fixture\\: the answer drifted code"
	expect_in "$s" "| processes\\_used |"
	expect_in "$s" "| baseline |"
	[ "$(stat -c %s "$s")" -lt 1048576 ] || fail "the summary is over 1 MiB"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --failures 1 --errors 0 \
		--failure-contains "test the answer is right=gate-fixture: the answer drifted"
	node "$INTEG/render.js" "$WORK/report/gate.html" "$WORK/report/gate.png" --points 3 \
		--verdict "gate: FAILED" --text "test the answer is right" --text "Largest ETS tables" \
		>"$WORK/render.out" 2>&1 || fail "render: $(cat "$WORK/render.out")"
	[ "$(head -c 8 "$WORK/report/gate.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "no PNG screenshot"
	[ -z "$(ls -A "$WORK/report" | grep -v '^gate\.\(html\|png\)$')" ] || fail "left in the report dir: $(ls -A "$WORK/report")"
	[ -z "$(ours_matching 'gate-chromium-')" ] || fail "chromium left running"
	fsck_clean "$d"
	no_leftovers "$d"
}

# (d) the CI files parse with a real YAML parser and hold what GitHub, GitLab and the
# pre-commit framework rely on; the pre-commit entry runs gate as the framework would.
case_ci_yaml_files_and_precommit_entry() {
	integ_npm
	node "$INTEG/yaml-check.js" "$ROOT" >"$WORK/yaml.out" 2>&1 || fail "$(cat "$WORK/yaml.out")"
	local d; d=$(git_fixture failing)
	(cd "$d" && GATE_BIN="$GATE" "$ROOT/integrations/pre-commit.sh" -q -C .) >"$WORK/pc.out" 2>&1
	local rc=$?
	[ "$rc" = 1 ] || fail "integrations/pre-commit.sh on a failing project exited $rc: $(tail -n 3 "$WORK/pc.out")"
	expect_in "$WORK/pc.out" "gate: FAILED (1 test)"
	no_leftovers "$d"
}

# (e) bad output paths: a directory is refused before the node boots; an unwritable file
# is exit 2 after the run, naming it, with nothing half-written
case_ci_reports_bad_paths() {
	local d; d=$(fixture clean)
	run_gate run -C "$d" --html "$WORK/"
	expect_rc 2
	expect_in "$ERR" "--html $WORK/: not a file name"
	expect_not_in "$ERR" "booting node"
	printf 'a file\n' >"$WORK/plain"
	run_gate run -q -C "$d" --summary "$WORK/plain/summary.md"
	expect_rc 2
	expect_in "$ERR" "gate: error: cannot write a report: "
	expect_in "$ERR" "$WORK/plain/summary.md"
	expect_in "$OUT" "gate: PASSED" # the verdict was printed; the missing file makes it 2
	[ "$(cat "$WORK/plain")" = "a file" ] || fail "the file in the way was changed"
	GITHUB_STEP_SUMMARY="$WORK/" run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "\$GITHUB_STEP_SUMMARY $WORK/: not a file name"
	no_leftovers "$d"
}

# (f) colour on a terminal only, never with NO_COLOR; --quiet drops the progress lines; the
# long phases have progress lines with elapsed times
case_console_color_and_progress() {
	local d; d=$(fixture clean)
	local esc; esc=$(printf '\033[')
	script -qec "'$GATE' run -C '$d'" /dev/null >"$WORK/tty.out" 2>&1 </dev/null
	grep -qF "$esc" "$WORK/tty.out" || fail "no colour on a terminal"
	expect_in "$WORK/tty.out" "PASSED"
	NO_COLOR=1 script -qec "'$GATE' run -q -C '$d'" /dev/null >"$WORK/nocolor.out" 2>&1 </dev/null
	if grep -qF "$esc" "$WORK/nocolor.out"; then fail "colour despite NO_COLOR"; fi
	if grep -q "gate: \[" "$WORK/nocolor.out"; then fail "progress lines despite -q"; fi
	expect_in "$WORK/nocolor.out" "gate: PASSED"
	run_gate run -C "$d"
	expect_rc 0
	if grep -qF "$esc" "$OUT"; then fail "colour on a pipe"; fi
	grep -Eq 'gate: \[ *[0-9.]+s\] node nonode@nohost is up \(booted in [0-9.]+ s\)' "$ERR" ||
		fail "no boot progress line with its time"
	grep -Eq 'gate: \[ *[0-9.]+s\] collecting garbage for the after-snapshot' "$ERR" ||
		fail "no GC progress line"
	grep -Eq 'gate: \[ *[0-9.]+s\] mix test finished in [0-9.]+ s: 28 tests recorded' "$ERR" ||
		fail "no test-run progress line with its time"
	no_leftovers "$d"
}

# (g) the CI files' own shell, run here as the runners would run it: the action's "Run gate"
# step (bash -eo pipefail, GitHub's variables) and its "Verdict" step, and GitLab's
# gate:merge-request script, on a failing project with an origin/main to compare with; then
# both jobs of the Phoenix + Ecto workflow, step by step (phoenix_workflow_steps_run)
case_ci_template_steps_run() {
	integ_npm
	local d t; d=$(git_fixture failing)
	t=$(mktemp -d "$WORK/runner.XXXXXX")
	git -C "$d" update-ref refs/remotes/origin/main HEAD
	node "$INTEG/ci-step.js" "$ROOT/integrations/github/action.yml" "Run gate" >"$t/run.sh" ||
		fail "the action has no Run gate step"
	(cd "$d" && env GATE_EXE="$GATE" INPUT_PROJECT=. INPUT_BASELINE_REF=origin/main \
		INPUT_BASELINE_BRANCH=gate/baseline \
		INPUT_REQUIRE_BASELINE=false INPUT_UPDATE_BASELINE=false INPUT_ARGS="-q -- --seed 0" \
		RUNNER_TEMP="$t" GITHUB_OUTPUT="$t/output" GITHUB_STEP_SUMMARY="$t/summary.md" \
		GITHUB_ACTIONS=true GITHUB_WORKSPACE="$d" \
		bash --noprofile --norc -eo pipefail "$t/run.sh") >"$t/run.out" 2>&1 ||
		fail "the Run gate step failed by itself: $(tail -n 3 "$t/run.out")"
	expect_in "$t/output" "exit-code=1"
	expect_in "$t/output" "reports=$t/gate-reports"
	expect_in "$t/run.out" "::error file=test/failing_test.exs,line=4,title=FailingTest%3A test the answer is right::"
	expect_in "$t/summary.md" "gate: FAILED (1 test)"
	expect_in "$t/summary.md" "Baseline: none at origin/main\\:.gate/baseline.json"
	[ -s "$t/gate-reports/report.html" ] || fail "the step wrote no HTML report"
	junit_check "$t/gate-reports/junit.xml" --failures 1 --errors 0
	# a pull request before the first baseline: no baseline branch yet is nothing to compare
	# with (a skipped baseline), not "could not run"
	(cd "$d" && env GATE_EXE="$GATE" INPUT_PROJECT=. INPUT_BASELINE_REF= INPUT_BASELINE_BRANCH=gate/baseline \
		INPUT_REQUIRE_BASELINE=false INPUT_UPDATE_BASELINE=false INPUT_ARGS="-q -- --exclude test" \
		RUNNER_TEMP="$t/first" GITHUB_OUTPUT="$t/first.output" GITHUB_STEP_SUMMARY="$t/first.md" \
		bash --noprofile --norc -eo pipefail "$t/run.sh") >"$t/first.out" 2>&1 ||
		fail "the Run gate step failed by itself: $(tail -n 3 "$t/first.out")"
	expect_in "$t/first.output" "exit-code=0"
	expect_in "$t/first.out" "gate: no origin/gate/baseline yet: nothing to compare with"
	# the toolchain check: no elixir on PATH stops the action with the reason
	node "$INTEG/ci-step.js" "$ROOT/integrations/github/action.yml" "Check the toolchain" >"$t/tool.sh"
	mkdir -p "$t/bin" && ln -s "$(command -v erl)" "$t/bin/erl"
	env PATH="$t/bin:/usr/bin:/bin" bash --noprofile --norc -eo pipefail "$t/tool.sh" >"$t/tool.ok" 2>&1 ||
		fail "the toolchain check failed with erl and elixir on PATH: $(cat "$t/tool.ok")"
	expect_in "$t/tool.ok" "gate: Erlang/OTP "
	mkdir -p "$t/onlyerl" && ln -s "$(command -v erl)" "$t/onlyerl/erl"
	for x in sh dirname basename sed cat; do ln -s "$(command -v "$x")" "$t/onlyerl/$x"; done
	env PATH="$t/onlyerl" "$BASH" --noprofile --norc -eo pipefail "$t/tool.sh" >"$t/tool.out" 2>&1
	local trc=$?
	[ "$trc" = 2 ] || fail "the toolchain check without elixir exited $trc"
	expect_in "$t/tool.out" "::error title=gate::no elixir mix on PATH: set up Erlang/OTP and Elixir first (erlef/setup-beam"
	node "$INTEG/ci-step.js" "$ROOT/integrations/github/action.yml" "Verdict" >"$t/verdict.sh"
	local rc want
	for want in 0 1 2; do
		RC=$want bash --noprofile --norc -eo pipefail "$t/verdict.sh" >/dev/null 2>&1
		rc=$?
		[ "$rc" = "$want" ] || fail "the Verdict step exits $rc for gate's $want"
	done
	# GitLab's job compares with the baseline branch; here origin/gate/baseline is main
	git -C "$d" update-ref refs/remotes/origin/gate/baseline HEAD
	node "$INTEG/ci-step.js" "$ROOT/integrations/gitlab/gate.gitlab-ci.yml" gate:merge-request >"$t/gitlab.sh"
	mkdir -p "$d/gate-reports" "$t/gatehome/build"
	ln -s "$GATE" "$t/gatehome/build/gate"
	(cd "$d" && env CI_DEFAULT_BRANCH=main GATE_PROJECT=. GATE_ARGS=-q GATE_HOME="$t/gatehome" \
		GATE_BASELINE_BRANCH=gate/baseline sh -e "$t/gitlab.sh") >"$t/gitlab.out" 2>&1
	rc=$?
	[ "$rc" = 1 ] || fail "gate:merge-request's script exited $rc: $(tail -n 3 "$t/gitlab.out")"
	junit_check "$d/gate-reports/junit.xml" --failures 1 --errors 0
	expect_in "$d/gate-reports/summary.md" "gate: FAILED (1 test)"
	[ -s "$d/gate-reports/report.html" ] || fail "GitLab's job wrote no HTML report"
	no_leftovers "$d"
	phoenix_workflow_steps_run
}

# The Phoenix + Ecto workflow (integrations/github/example-workflow-phoenix.yml), its two
# jobs' steps in order as a runner runs them, through a remote as a team's repository: the
# main branch's job commits the first baseline on gate/baseline, a pull request passes
# against it and its comment is deleted, a pull request whose code leaks fails and is
# commented.
# - With a Phoenix application on PostgreSQL in $GATE_REALWORLD_APPS (tests/realworld/lib.sh)
#   and a PostgreSQL server installed, the jobs run on a copy of the application, its
#   config/test.exs unchanged, with a private server on localhost:5432 standing for the
#   service container (pg_start: trust authentication, superuser postgres, so the service's
#   user is the application's and its password goes unchecked); the leak is gate_plant's
#   GenServer that keeps every response body of the application's own requests.
# - Without them the harness cannot start the service: the jobs run on fixture alias_prep (a
#   test alias whose preparation step stands for ecto.create and ecto.migrate), without a
#   database and without the leaking pull request, and the case says so.
# The runner's own actions are played here: actions/checkout is the workspace (the project's
# repository, origin the remote), erlef/setup-beam this machine's erl and elixir (not the
# workflow's versions), actions/cache the deps and _build already in the workspace; gate's
# action runs its own steps (ci-step.js) with the gate built here in place of the release
# binary or the source build, and no upload; the sticky comment is recorded (post or delete)
# when its if: holds.
phoenix_workflow_steps_run() {
	local wf=integrations/github/example-workflow-phoenix.yml t r app="" p flags=""
	node "$INTEG/workflow-job.js" --check "$ROOT" "$wf" >"$WORK/phx-check.out" 2>&1 ||
		{ fail "$(cat "$WORK/phx-check.out")"; return; }
	. "$ROOT/tests/realworld/lib.sh"
	for p in $(rw_projects "$rw_apps"); do
		if rw_is_phoenix "$rw_apps/$p" && rw_needs_postgres "$rw_apps/$p"; then
			app="$rw_apps/$p"
			break
		fi
	done
	[ -z "$app" ] || pg_bin >/dev/null || app=""
	t=$(mktemp -d "$WORK/phx.XXXXXX")
	WF_WRAP="" WF_EXTRA_ENV=()
	if [ -n "$app" ]; then
		rw_copy_app "$app" "$t/app" || { fail "cannot copy $app"; return; }
		# a team's repository of its own: the folder may be a checkout of its upstream (its
		# history and its origin remote are not the team's, and its origin would take the
		# pushes)
		rm -rf "$t/app/.git" "$t/app/.gate" "$t/app/_build/gate"
		if ! pg_start "$t/pg.env" 2>"$t/pg.err"; then
			fail "PostgreSQL did not start: $(tail -n 3 "$t/pg.err")"
			pg_stop "$t/pg.env"
			return
		fi
		WF_WRAP=$(pg_wrap "$t/pg.env")
		WF_EXTRA_ENV=("PGPORT=$(sed -n 's/^PGPORT=//p' "$t/pg.env")")
		! grep -q '^PGHOST=' "$t/pg.env" || WF_EXTRA_ENV+=("PGHOST=$(sed -n 's/^PGHOST=//p' "$t/pg.env")")
		mkdir "$t/plant"
		flags=$(plant_flags "$ROOT" "$t/plant") || fail "gate_plant.erl does not compile"
	else
		echo "    note: no Phoenix application on PostgreSQL in $rw_apps, or no PostgreSQL server: the Phoenix workflow's jobs ran on fixture alias_prep without a database (see CONTRIBUTING.md, Real projects)"
		cp -a "$FIX/alias_prep" "$t/app"
	fi
	(cd "$t/app" && git init -q -b main && git add -A && git -c user.name="Gate E2E" \
		-c user.email=e2e@gate.invalid commit -q -m "the project") >/dev/null 2>&1 ||
		{ fail "cannot make a repository of the project"; pg_stop "$t/pg.env"; return; }
	r=$(bare_remote "$t/app")
	git -C "$t/app" push -q origin main 2>/dev/null || fail "cannot push main to the remote"
	# the main branch's job: the first baseline, committed on gate/baseline and pushed with
	# its note
	WF_DB_CONFIG=""
	[ -z "$app" ] || WF_DB_CONFIG="$t/app/config/test.exs"
	wf_job memory-baseline "$t/app" "$t/main"
	expect_in "$WF_GATE_OUT" "exit-code=0"
	git -C "$r" rev-parse -q --verify refs/heads/gate/baseline >/dev/null || fail "the main job pushed no gate/baseline"
	git -C "$r" rev-parse -q --verify refs/notes/gate >/dev/null || fail "the main job pushed no refs/notes/gate"
	[ "$(git -C "$r" rev-parse main)" = "$(git -C "$t/app" rev-parse main)" ] || fail "the main job moved main"
	# a pull request, unchanged: compared with that baseline, it passes; the comment goes
	git -C "$t/app" checkout -q main
	wf_job memory-pr "$t/app" "$t/pr"
	expect_in "$WF_GATE_OUT" "exit-code=0"
	expect_in "$WF_GATE_OUT" "comment=false"
	expect_in "$t/pr/Run gate.out" "baseline: origin/gate/baseline:.gate/baseline.json at commit"
	expect_in "$t/pr/comments" "delete"
	expect_not_in "$t/pr/comments" "post"
	if [ -n "$app" ] && [ -n "$flags" ]; then
		# a pull request whose code keeps every response body: one finding, the comment posted
		WF_EXTRA_ENV+=(GATE_PLANT=bodies "ERL_AFLAGS=$flags")
		wf_job memory-pr "$t/app" "$t/leak"
		expect_in "$WF_GATE_OUT" "exit-code=1"
		expect_in "$WF_GATE_OUT" "comment=true"
		expect_in "$t/leak/comments" "post $t/leak/gate-reports/summary.md"
		expect_not_in "$t/leak/comments" "delete"
		expect_in "$t/leak/gate-reports/summary.md" "GatePlant.BodyKeeper"
		expect_in "$t/leak/Run gate.out" "::error "
		junit_check "$t/leak/gate-reports/junit.xml" --failures 1 --errors 0
	fi
	pg_stop "$t/pg.env"
	no_leftovers "$t/app"
}

# wf_job JOB DIR T: the job JOB of the Phoenix workflow, its steps run in DIR by the wf_*
# functions below (tests/integrations/workflow-job.js prints the calls), under $WF_WRAP with
# $WF_EXTRA_ENV; T gets each step's output, the gate step's outputs ($WF_GATE_OUT), the
# comments recorded (T/comments) and the reports (T/gate-reports). With $WF_DB_CONFIG (a
# config/test.exs), the job's PostgreSQL service must be what that file connects to.
wf_job() {
	WF_JOB=$1 WF_DIR=$2 WF_T=$3 WF_FAILED=0 WF_ENV=() WF_SERVICES=() WF_GATE_OUT="$3/none"
	mkdir -p "$WF_T"
	: >"$WF_T/comments"
	node "$INTEG/workflow-job.js" "$ROOT" integrations/github/example-workflow-phoenix.yml "$WF_JOB" >"$WF_T/job.sh" ||
		{ fail "workflow-job.js: no job $WF_JOB"; return; }
	# shellcheck disable=SC1091 # the job's calls, printed above
	. "$WF_T/job.sh"
	# the service's user and password are the ones the application's config/test.exs
	# connects with, on localhost
	[ -n "${WF_DB_CONFIG:-}" ] || return 0
	local svc=" ${WF_SERVICES[*]} " user pass
	user=$(printf '%s' "$svc" | sed -n 's/.* POSTGRES_USER=\([^ ]*\) .*/\1/p')
	pass=$(printf '%s' "$svc" | sed -n 's/.* POSTGRES_PASSWORD=\([^ ]*\) .*/\1/p')
	grep -q "username: \"$user\"" "$WF_DB_CONFIG" && grep -q "password: \"$pass\"" "$WF_DB_CONFIG" &&
		grep -q 'hostname: "localhost"' "$WF_DB_CONFIG" ||
		fail "$WF_JOB: the workflow's service ($user/$pass on localhost:5432) is not what $WF_DB_CONFIG connects to"
}

wf_env() { WF_ENV+=("$1=$2"); }
wf_service() { WF_SERVICES+=("$@"); }

# wf_if EXPR: whether a step with that if: runs now (the expressions the workflows use:
# always(), steps.ID.outputs.KEY == 'VALUE', joined by &&); none: only while no step failed
wf_if() {
	local e=$1 part ref want
	case "$e" in *'always()'*) ;; *) [ "$WF_FAILED" = 0 ] || return 1 ;; esac
	[ -n "$e" ] || return 0
	while IFS= read -r part; do
		part=$(printf '%s' "$part" | sed 's/^ *//; s/ *$//')
		case "$part" in
		'always()') ;;
		steps.*.outputs.*" == '"*"'")
			ref=${part%% ==*}
			want=${part#*== \'}
			want=${want%\'}
			[ "$(wf_output "$(printf '%s' "$ref" | cut -d. -f2)" "${ref##*.}")" = "$want" ] || return 1
			;;
		*)
			fail "$WF_JOB: the harness cannot evaluate if: $e"
			return 1
			;;
		esac
	done <<<"${e// && /$'\n'}"
}

# wf_output ID KEY: the output KEY of step ID (its GITHUB_OUTPUT file), the last one written
wf_output() { sed -n "s/^$2=//p" "$WF_T/out.$1" 2>/dev/null | tail -n 1; }

# wf_run INDEX NAME ID IF SCRIPT: a run step, as GitHub runs it (bash -eo pipefail)
wf_run() {
	local label=${2:-step$1}
	wf_if "$4" || return 0
	printf '%s\n' "$5" >"$WF_T/step$1.sh"
	# shellcheck disable=SC2086 # WF_WRAP: the database's network namespace, a command prefix
	if ! (cd "$WF_DIR" && env "${WF_ENV[@]}" "${WF_EXTRA_ENV[@]}" GITHUB_OUTPUT="$WF_T/out.${3:-$1}" \
		timeout -k 5 600 $WF_WRAP bash --noprofile --norc -eo pipefail "$WF_T/step$1.sh") >"$WF_T/$label.out" 2>&1; then
		WF_FAILED=1
		fail "$WF_JOB: step $1 ($label) failed: $(tail -n 3 "$WF_T/$label.out")"
	fi
}

# wf_uses INDEX NAME ID IF ACTION INPUT=VALUE...: a uses step, played as the case's header says
wf_uses() {
	local id=${3:-$1} uses=$5 kv ref
	wf_if "$4" || return 0
	shift 5
	case "$uses" in
	actions/checkout@* | actions/cache@*) ;;
	erlef/setup-beam@*)
		command -v erl >/dev/null && command -v elixir >/dev/null || fail "$WF_JOB: no erl or elixir on PATH"
		;;
	*/integrations/github@*) wf_gate_action "$id" "$@" ;;
	marocchino/sticky-pull-request-comment@*)
		for kv in "$@"; do
			case "$kv" in
			delete=true) echo "delete" >>"$WF_T/comments" ;;
			path=*)
				ref=$(printf '%s' "${kv#path=}" | sed -n 's/^\${{ steps\.\([A-Za-z0-9_-]*\)\.outputs\.\([A-Za-z0-9_-]*\) }}$/\1 \2/p')
				[ -n "$ref" ] || { fail "$WF_JOB: the comment's path is not a step's output: $kv"; continue; }
				# shellcheck disable=SC2086 # ID KEY
				kv=$(wf_output $ref)
				[ -s "$kv" ] || fail "$WF_JOB: the comment's file $kv is missing or empty"
				echo "post $kv" >>"$WF_T/comments"
				;;
			esac
		done
		;;
	*) fail "$WF_JOB: the harness does not know the action $uses" ;;
	esac
}

# wf_gate_action ID INPUT_X=VALUE...: gate's action, its steps as GitHub runs them (its
# install and build steps replaced by the gate built here, its upload left out)
wf_gate_action() {
	local id=$1 kv upd=false branch="" merged=false rc
	shift
	for kv in "$@"; do
		case "$kv" in
		INPUT_UPDATE_BASELINE=*) upd=${kv#*=} ;;
		INPUT_BASELINE_BRANCH=*) branch=${kv#*=} ;;
		INPUT_MERGED=*) merged=${kv#*=} ;;
		esac
	done
	WF_GATE_OUT="$WF_T/out.$id"
	wf_action_step "Check the toolchain" || return
	wf_action_step "Fetch the baselines and the notes" MAIN=main BRANCH="$branch" || return
	if [ "$upd" = true ]; then
		wf_action_step "Prepare the baseline branch" BRANCH="$branch" RUNNER_TEMP="$WF_T" || return
	fi
	wf_action_step "Run gate" "$@" GATE_EXE="$GATE" RUNNER_TEMP="$WF_T" GITHUB_OUTPUT="$WF_GATE_OUT" \
		GITHUB_STEP_SUMMARY="$WF_T/step-summary.md" GITHUB_ACTIONS=true GITHUB_WORKSPACE="$WF_DIR" || return
	rc=$(sed -n 's/^exit-code=//p' "$WF_GATE_OUT")
	if [ "$upd" = true ] && [ "$rc" = 0 ]; then
		wf_action_step "Push the baseline and the notes" BRANCH="$branch" || return
	fi
	# the Verdict step fails the job with gate's exit code: later steps need always()
	wf_action_step "Verdict" RC="$rc" INPUT_MERGED="$merged" || WF_FAILED=1
}

# wf_action_step STEP ENV...: one step of gate's action in $WF_DIR; a non-zero exit fails the
# case, but the Verdict step's 1 (gate's "failed"), which is returned, for the job's status
wf_action_step() {
	local step=$1 rc
	shift
	node "$INTEG/ci-step.js" "$ROOT/integrations/github/action.yml" "$step" >"$WF_T/$step.sh" ||
		{ fail "the action has no step $step"; return 1; }
	# shellcheck disable=SC2086 # WF_WRAP: a command prefix
	(cd "$WF_DIR" && env "${WF_ENV[@]}" "${WF_EXTRA_ENV[@]}" "$@" \
		timeout -k 5 600 $WF_WRAP bash --noprofile --norc -eo pipefail "$WF_T/$step.sh") >"$WF_T/$step.out" 2>&1
	rc=$?
	[ "$rc" = 0 ] && return 0
	[ "$step" = Verdict ] && [ "$rc" = 1 ] && return 1
	fail "$WF_JOB: the action's step $step exited $rc: $(tail -n 3 "$WF_T/$step.out")"
	return 1
}

# ci_step FILE STEP DIR ENV...: runs that step of the action in DIR as GitHub would
ci_step() {
	local file=$1 step=$2 dir=$3
	shift 3
	node "$INTEG/ci-step.js" "$ROOT/$file" "$step" >"$WORK/step.sh" || { fail "no step $step"; return 1; }
	(cd "$dir" && env "$@" bash --noprofile --norc -eo pipefail "$WORK/step.sh")
}

# protect_main REMOTE: the remote refuses pushes to main, as a protected branch does, unless
# GATE_E2E_ADMIN=1 (a maintainer merging)
protect_main() {
	cat >"$1/hooks/pre-receive" <<'HOOK'
#!/bin/sh
while read -r old new ref; do
	if [ "$ref" = refs/heads/main ] && [ "${GATE_E2E_ADMIN:-}" != 1 ]; then
		echo "remote: main is a protected branch" >&2
		exit 1
	fi
done
HOOK
	chmod 755 "$1/hooks/pre-receive"
}

# github_main_job CLONE RUNNER_DIR: the action's steps of the baseline job (update-baseline,
# baseline-branch gate/baseline) in CLONE as GitHub would run them
github_main_job() {
	local c=$1 t=$2
	mkdir -p "$t"
	ci_step integrations/github/action.yml "Fetch the baselines and the notes" "$c" MAIN=main BRANCH=gate/baseline \
		>"$t/fetch.out" 2>&1 || { fail "main job's fetch step: $(tail -n 3 "$t/fetch.out")"; return 1; }
	ci_step integrations/github/action.yml "Prepare the baseline branch" "$c" BRANCH=gate/baseline RUNNER_TEMP="$t" \
		>"$t/prepare.out" 2>&1 || { fail "main job's prepare step: $(tail -n 3 "$t/prepare.out")"; return 1; }
	ci_step integrations/github/action.yml "Run gate" "$c" GATE_EXE="$GATE" INPUT_PROJECT=. \
		INPUT_BASELINE_BRANCH=gate/baseline INPUT_BASELINE_REF= INPUT_REQUIRE_BASELINE=false \
		INPUT_UPDATE_BASELINE=true INPUT_ARGS=-q RUNNER_TEMP="$t" GITHUB_OUTPUT="$t/output" \
		>"$t/run.out" 2>&1 || { fail "main job's Run gate step: $(tail -n 3 "$t/run.out")"; return 1; }
	expect_in "$t/output" "exit-code=0"
	ci_step integrations/github/action.yml "Push the baseline and the notes" "$c" BRANCH=gate/baseline \
		>"$t/push.out" 2>&1 || { fail "main job's push step: $(tail -n 3 "$t/push.out")"; return 1; }
}

# (h) the whole loop through a remote whose main is protected: the main job (action with
# update-baseline) merges the commit under test into gate/baseline, commits the baseline
# there and pushes it with the notes, main untouched; a second main job after a new commit
# extends that branch (fast-forward), so the trend has both runs; a pull request's clone
# fetches them with the action's fetch step and is compared with that baseline; GitLab's
# baseline job does the same on the same remote
case_ci_main_job_then_pull_request() {
	integ_npm
	local d r t c1 c2 main0; d=$(git_fixture clean)
	r=$(bare_remote "$d")
	git -C "$d" push -q origin main 2>/dev/null || fail "cannot push to the test remote"
	protect_main "$r"
	main0=$(git -C "$r" rev-parse main)
	t=$(mktemp -d "$WORK/runner.XXXXXX")
	c1="$t/main" && git clone -q "$r" "$c1"
	github_main_job "$c1" "$t/m1" || return
	[ "$(git -C "$c1" log -1 --format='%an <%ae>')" = "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>" ] ||
		fail "the baseline commit's author: $(git -C "$c1" log -1 --format='%an <%ae>')"
	[ "$(git -C "$r" rev-parse main)" = "$main0" ] || fail "the main job pushed to the protected main"
	[ "$(git -C "$r" rev-parse gate/baseline)" = "$(git -C "$c1" rev-parse HEAD)" ] || fail "gate/baseline was not pushed"
	[ "$(git -C "$r" rev-parse gate/baseline~1)" = "$main0" ] || fail "the first baseline is not on top of main"
	git -C "$r" rev-parse -q --verify refs/notes/gate >/dev/null || fail "refs/notes/gate was not pushed"
	# a maintainer merges new work into main; the next main job extends gate/baseline
	local w="$t/dev"
	git clone -q "$r" "$w" && printf 'more\n' >"$w/README" && git -C "$w" add README &&
		git -C "$w" -c user.name=dev -c user.email=dev@gate.invalid commit -q -m "new work" &&
		GATE_E2E_ADMIN=1 git -C "$w" push -q origin main 2>/dev/null || fail "the maintainer's push failed"
	local b1; b1=$(git -C "$r" rev-parse gate/baseline)
	local c1b="$t/main2" && git clone -q "$r" "$c1b"
	github_main_job "$c1b" "$t/m2" || return
	git -C "$r" merge-base --is-ancestor "$b1" gate/baseline || fail "the second baseline did not extend gate/baseline"
	git -C "$r" merge-base --is-ancestor main gate/baseline || fail "gate/baseline does not hold main's new commit"
	# a pull request: a clone without the notes, then the action's fetch step
	c2="$t/pr" && git clone -q "$r" "$c2" && git -C "$c2" checkout -q -b feature
	git -C "$c2" rev-parse -q --verify refs/notes/gate >/dev/null && fail "a clone has the notes already?"
	ci_step integrations/github/action.yml "Fetch the baselines and the notes" "$c2" MAIN=main BRANCH=gate/baseline \
		>"$t/fetch.out" 2>&1 || fail "fetch step: $(tail -n 3 "$t/fetch.out")"
	git -C "$c2" rev-parse -q --verify refs/notes/gate >/dev/null || fail "the fetch step did not get the notes"
	ci_step integrations/github/action.yml "Run gate" "$c2" GATE_EXE="$GATE" INPUT_PROJECT=. \
		INPUT_BASELINE_BRANCH=gate/baseline INPUT_BASELINE_REF= INPUT_REQUIRE_BASELINE=true \
		INPUT_UPDATE_BASELINE=false INPUT_ARGS=-q RUNNER_TEMP="$t/p" GITHUB_OUTPUT="$t/p.output" \
		GITHUB_STEP_SUMMARY="$t/p.md" >"$t/p.out" 2>&1 || fail "PR Run gate step: $(tail -n 3 "$t/p.out")"
	expect_in "$t/p.output" "exit-code=0"
	expect_in "$t/p.md" "Baseline: origin/gate/baseline\\:.gate/baseline.json at commit $(git -C "$r" rev-parse gate/baseline | cut -c1-12); trend over 2 noted runs"
	[ "$(grep -c 'class="point"' "$t/p/gate-reports/report.html")" = 2 ] || fail "the PR's trend chart lacks the noted runs"
	# GitLab's baseline job on the same remote: a detached checkout as GitLab makes it, the
	# template's fetch lines, its script; GATE_PUSH_URL is the test remote
	local c3="$t/gitlab"
	git clone -q "$r" "$c3" && git -C "$c3" checkout -q --detach origin/main
	git -C "$r" config receive.advertisePushOptions true
	{
		node "$INTEG/ci-step.js" "$ROOT/integrations/gitlab/gate.gitlab-ci.yml" .gate before_script "git fetch"
		node "$INTEG/ci-step.js" "$ROOT/integrations/gitlab/gate.gitlab-ci.yml" gate:baseline
	} >"$t/gl.sh"
	mkdir -p "$c3/gate-reports" "$t/gatehome/build"
	ln -s "$GATE" "$t/gatehome/build/gate"
	local b2; b2=$(git -C "$r" rev-parse gate/baseline)
	(cd "$c3" && env CI_DEFAULT_BRANCH=main CI_COMMIT_BRANCH=main CI_COMMIT_SHA="$(git -C "$c3" rev-parse HEAD)" \
		GATE_PROJECT=. GATE_ARGS=-q GATE_PUSH_TOKEN=unused GATE_PUSH_URL="$r" GATE_HOME="$t/gatehome" \
		GATE_BASELINE_BRANCH=gate/baseline GATE_AUTHOR_NAME=gate \
		GATE_AUTHOR_EMAIL=gate@gitlab.invalid sh -e "$t/gl.sh") >"$t/gl.out" 2>&1 ||
		fail "gate:baseline's script: $(tail -n 3 "$t/gl.out")"
	[ "$(git -C "$r" rev-parse gate/baseline)" = "$(git -C "$c3" rev-parse HEAD)" ] || fail "GitLab's job did not push gate/baseline"
	git -C "$r" merge-base --is-ancestor "$b2" gate/baseline || fail "GitLab's baseline did not extend gate/baseline"
	[ "$(git -C "$r" rev-parse refs/notes/gate)" = "$(git -C "$c3" rev-parse refs/notes/gate)" ] ||
		fail "GitLab's job did not push the notes"
	[ "$(git -C "$r" rev-parse main)" = "$(git -C "$w" rev-parse HEAD)" ] || fail "a job pushed to the protected main"
	junit_check "$c3/gate-reports/junit.xml" --failures 0 --errors 0
	fsck_clean "$c1"
	fsck_clean "$r"
	no_leftovers "$t"
	no_leftovers "$d"
}

# (h2) credentials are checked before the suite runs: a remote this job cannot push to (a
# read-only git daemon) stops the action's prepare step and GitLab's gate:baseline with exit 2
# and the reason, and no node is booted; GitLab's job without GATE_PUSH_TOKEN says so first
case_ci_push_rights_checked_before_the_suite() {
	integ_npm
	local d t port dpid i; d=$(git_fixture clean)
	t=$(mktemp -d "$WORK/runner.XXXXXX")
	git clone -q --bare "$d" "$t/srv/repo.git"
	for i in 1 2 3 4 5; do
		port=$(free_port)
		git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --base-path="$t/srv" --export-all \
			"$t/srv" >/dev/null 2>&1 &
		dpid=$!
		local up=0 k
		for k in $(seq 1 50); do # up to 5 s for it to answer
			git ls-remote "git://127.0.0.1:$port/repo.git" >/dev/null 2>&1 && { up=1; break; }
			kill -0 "$dpid" 2>/dev/null || break
			sleep 0.1
		done
		[ "$up" = 1 ] && break
		kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=""
	done
	[ -n "$dpid" ] || { fail "no git daemon would start"; return; }
	local c="$t/clone"
	git clone -q "git://127.0.0.1:$port/repo.git" "$c"
	ci_step integrations/github/action.yml "Prepare the baseline branch" "$c" BRANCH=gate/baseline RUNNER_TEMP="$t" \
		>"$t/prepare.out" 2>&1
	local rc=$?
	[ "$rc" = 2 ] || fail "the prepare step with a read-only remote exited $rc"
	expect_in "$t/prepare.out" "::error title=gate::this job cannot push to gate/baseline: give it permissions: contents: write"
	# GitLab: no token at all, then a token that cannot push: both before gate runs
	node "$INTEG/ci-step.js" "$ROOT/integrations/gitlab/gate.gitlab-ci.yml" gate:baseline >"$t/gl.sh"
	mkdir -p "$t/gatehome/build" && ln -s "$GATE" "$t/gatehome/build/gate"
	(cd "$c" && env CI_COMMIT_SHA="$(git -C "$c" rev-parse HEAD)" GATE_PROJECT=. GATE_ARGS=-q \
		GATE_PUSH_TOKEN= GATE_HOME="$t/gatehome" GATE_BASELINE_BRANCH=gate/baseline CI_PROJECT_PATH=group/app \
		sh -e "$t/gl.sh") >"$t/gl1.out" 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "gate:baseline without GATE_PUSH_TOKEN exited $rc"
	expect_in "$t/gl1.out" "gate: error: set GATE_PUSH_TOKEN"
	(cd "$c" && env CI_COMMIT_SHA="$(git -C "$c" rev-parse HEAD)" GATE_PROJECT=. GATE_ARGS=-q \
		GATE_PUSH_TOKEN=read-only GATE_PUSH_URL="git://127.0.0.1:$port/repo.git" GATE_HOME="$t/gatehome" \
		GATE_BASELINE_BRANCH=gate/baseline GATE_AUTHOR_NAME=gate GATE_AUTHOR_EMAIL=gate@gitlab.invalid \
		CI_PROJECT_PATH=group/app sh -e "$t/gl.sh") >"$t/gl2.out" 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "gate:baseline with a token that cannot push exited $rc"
	expect_in "$t/gl2.out" "gate: error: GATE_PUSH_TOKEN cannot push to gate/baseline of group/app"
	expect_not_in "$t/gl1.out" "booting node"
	expect_not_in "$t/gl2.out" "booting node"
	[ ! -e "$c/_build/gate" ] || fail "gate ran although the push could not happen"
	kill "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	no_leftovers "$t"
	no_leftovers "$d"
}

# (i) a leaking suite's reports carry the leak attribution: the likely culprit in each
# failing rule, its lists under it, the top growing test modules
case_ci_reports_name_the_culprit() {
	local d; d=$(fixture leak_ets)
	run_gate run -q -C "$d" --summary "$WORK/leak.md" --html "$WORK/leak.html"
	expect_rc 1
	expect_in "$WORK/leak.md" "likely culprit\\: LeakEts.CorpusTest (+"
	expect_in "$WORK/leak.md" "  - 1. LeakEts.CorpusTest (sync) +"
	expect_in "$WORK/leak.md" "#### Top growing test modules (by total)"
	expect_in "$WORK/leak.md" "| 1 | LeakEts.CorpusTest | +"
	expect_in "$WORK/leak.html" '<pre class="detail">'
	expect_in "$WORK/leak.html" '<tr class="growing"><td class="n">1</td><td>LeakEts.CorpusTest</td>'
	no_leftovers "$d"
}

# the Phoenix workflow's jobs on a real application when this machine has one: the long tier
# (make test-long)
e2e_long ci_template_steps_run
