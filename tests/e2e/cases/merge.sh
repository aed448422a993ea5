# tests/e2e/cases/merge.sh: `gate merge` on real partitioned runs: `gate run` of
# each partition of a fixture (real mix test --partitions 2, MIX_TEST_PARTITION=k, a real
# node each), merged into one verdict and one JUnit report (xmllint against the xsd, and
# junit2json), one baseline commit in a real git repository, and every refusal.
# Sourced by tests/e2e/run.sh.

# merge_partitions DIR N [GATE RUN ARGS...]: runs every partition of DIR's suite under gate
# with --json DIR/_build/rK.json; the exit codes in MERGE_RCS (space-separated, in order)
merge_partitions() {
	local d=$1 n=$2 k
	shift 2
	MERGE_RCS=""
	for k in $(seq 1 "$n"); do
		MIX_TEST_PARTITION=$k run_gate run -C "$d" -q --json "$d/_build/r$k.json" \
			--junit "$d/_build/j$k.xml" "$@" -- --partitions "$n"
		MERGE_RCS="$MERGE_RCS $RC"
	done
	MERGE_RCS=${MERGE_RCS# }
}

# json_get FILE EXPR: a value of a result file (python3, as a reader of the format would)
json_get() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# json_edit FILE OUT PYTHON: OUT is FILE with the statement applied to d
json_edit() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[3]); json.dump(d, open(sys.argv[2], "w"))' "$1" "$2" "$3"
}

# xpath_count FILE XPATH
xpath_count() {
	xmllint --xpath "count($2)" "$1" 2>/dev/null
}

# Two partitions that pass: the merge passes, with every test once in one JUnit report,
# each test's suite carrying its partition, each partition's memory suite labelled.
case_merge_partitions_pass() {
	local d; d=$(git_fixture partitioned)
	merge_partitions "$d" 2
	[ "$MERGE_RCS" = "0 0" ] || fail "the partitions' runs exited $MERGE_RCS, expected 0 0"
	run_gate merge -C "$d" "$d/_build/r2.json" "$d/_build/r1.json" --junit "$d/_build/m.xml" \
		--summary "$d/_build/m.md" --json "$d/_build/m.json"
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	expect_in "$OUT" "What grew, per partition"
	expect_in "$OUT" "partition 1/2"
	expect_in "$OUT" "partition 2/2"
	local t1 t2 total
	t1=$(json_get "$d/_build/r1.json" 'd["tests"]["total"]')
	t2=$(json_get "$d/_build/r2.json" 'd["tests"]["total"]')
	total=$((t1 + t2))
	[ "$t1" -gt 0 ] && [ "$t2" -gt 0 ] || fail "a partition ran no test ($t1, $t2)"
	expect_in "$OUT" "$total tests: $total passed, 0 failed"
	junit_valid "$d/_build/m.xml"
	# every test once: as many testcases as both partitions ran, none twice
	local cases uniq
	cases=$(xpath_count "$d/_build/m.xml" '//testcase[starts-with(@classname,"Part")]')
	[ "$cases" = "$total" ] || fail "the merged JUnit has $cases tests, the partitions ran $total"
	uniq=$(xmllint --xpath '//testcase[starts-with(@classname,"Part")]/@name' "$d/_build/m.xml" |
		sort | uniq -d)
	[ -z "$uniq" ] || fail "tests twice in the merged JUnit: $uniq"
	local k
	for k in 1 2 3 4 5 6; do
		junit_check "$d/_build/m.xml" --testcase "Part${k}Test=test part $k"
	done
	junit_check "$d/_build/m.xml" --failures 0 --errors 0
	# each test's suite says its partition, as the partition's own run saw it
	local mod part
	for mod in $(json_get "$d/_build/r1.json" '" ".join(c["module"][7:] for c in d["tests"]["cases"])'); do
		part=$(xmllint --xpath "string(//testsuite[@name='$mod']/properties/property[@name='mix.test.partition']/@value)" "$d/_build/m.xml")
		[ "$part" = 1 ] || fail "$mod ran in partition 1, its merged suite says '$part'"
	done
	[ "$(xpath_count "$d/_build/m.xml" '//testsuite[@name="gate.memory[partition 2/2]"]')" = 1 ] ||
		fail "no gate.memory[partition 2/2] suite"
	expect_in "$d/_build/m.md" "partition 2/2"
	[ "$(json_get "$d/_build/m.json" 'd["merged"]')" = "[1, 2]" ] || fail "--json: merged is not [1, 2]"
	# that merged result caught again by a glob over the results: named as what it is
	run_gate merge -C "$d" "$d/_build/r1.json" "$d/_build/r2.json" "$d/_build/m.json" --junit "$d/_build/m2.xml"
	expect_rc 2
	expect_in "$ERR" "$d/_build/m.json is the output of gate merge --json"
	[ ! -e "$d/_build/m2.xml" ] || fail "a refused merge wrote a JUnit report"
	no_leftovers "$d"
}

# A leak planted in one test file: the partition that ran it fails, and so does the merge,
# naming the table and that partition (whichever mix test gave the file to).
case_merge_leak_names_partition() {
	local d; d=$(git_fixture partitioned_leak)
	merge_partitions "$d" 2
	local leaky
	leaky=$(for k in 1 2; do
		json_get "$d/_build/r$k.json" '" ".join(c["module"] for c in d["tests"]["cases"])' |
			grep -q Part4Test && echo "$k"
	done)
	[ -n "$leaky" ] || fail "no partition ran Part4Test"
	case "$MERGE_RCS" in
	"1 0") [ "$leaky" = 1 ] || fail "partition 1 failed, the leak ran in $leaky" ;;
	"0 1") [ "$leaky" = 2 ] || fail "partition 2 failed, the leak ran in $leaky" ;;
	*) fail "the partitions exited $MERGE_RCS, expected one 1 and one 0" ;;
	esac
	# the merge says exactly what the leaky partition's own run said: no cause added or lost
	local own
	own=$(xpath_count "$d/_build/j$leaky.xml" '//testcase[failure]')
	[ "$own" -ge 1 ] || fail "partition $leaky's own JUnit has no failure"
	run_gate merge -C "$d" "$d/_build/r1.json" "$d/_build/r2.json" --junit "$d/_build/m.xml"
	expect_rc 1
	expect_in "$OUT" "gate: FAILED ($own memory rule"
	expect_in "$OUT" "merge_leak_cache"
	expect_in "$OUT" "Memory growth (erlang:memory on partition $leaky/2)"
	junit_valid "$d/_build/m.xml"
	[ "$(xpath_count "$d/_build/m.xml" '//testcase[failure]')" = "$own" ] ||
		fail "the merged JUnit has $(xpath_count "$d/_build/m.xml" '//testcase[failure]') failures, partition $leaky's own $own"
	[ "$(xpath_count "$d/_build/m.xml" "//testcase[failure and not(contains(@classname,'[partition $leaky/2]'))]")" = 0 ] ||
		fail "a failing memory testcase is not labelled partition $leaky/2"
	junit_check "$d/_build/m.xml" --failures "$own" --errors 0 --first-failure-contains "merge_leak_cache"
	# and with --warn-only the leak is a warning: the merge passes, saying it
	run_gate merge -C "$d" "$d/_build/r1.json" "$d/_build/r2.json" --junit "$d/_build/w.xml" --warn-only
	expect_rc 0
	no_leftovers "$d"
}

# Every refusal is exit 2 naming the file, the thing and the fix; nothing is written.
case_merge_refusals() {
	local d; d=$(git_fixture partitioned)
	merge_partitions "$d" 2
	[ "$MERGE_RCS" = "0 0" ] || fail "the partitions' runs exited $MERGE_RCS"
	local r1=$d/_build/r1.json r2=$d/_build/r2.json
	rm -f "$d/_build/gate/junit.xml"
	run_gate merge -C "$d" "$r1"
	expect_rc 2
	expect_in "$ERR" "partition 2 of 2 is missing"
	expect_in "$ERR" "--allow-missing 2"
	[ ! -e "$d/_build/gate/junit.xml" ] || fail "a refused merge wrote a JUnit report"
	run_gate merge -C "$d" "$r1" --allow-missing 2
	expect_rc 0
	expect_in "$OUT" "partition 2/2: no result (allowed by --allow-missing)"
	# a baseline update holds every partition's: not from a merge with one missing
	run_gate merge -C "$d" "$r1" --allow-missing 2 --update-baseline --commit
	expect_rc 0
	expect_in "$ERR" "the baselines were not updated: 1 of 2 partitions have no result"
	[ ! -e "$d/.gate" ] || fail "a merge with a partition missing wrote baselines: $(ls "$d/.gate")"
	run_gate merge -C "$d" "$r1" --allow-missing 3
	expect_rc 2
	expect_in "$ERR" "--allow-missing 3: the suite has 2 partitions"
	run_gate merge -C "$d" "$r1" "$r1" "$r2"
	expect_rc 2
	expect_in "$ERR" "partition 1 of 2 twice: $r1 and $r1"
	json_edit "$r2" "$d/_build/commit.json" 'd["commit"] = "0" * 40'
	run_gate merge -C "$d" "$r1" "$d/_build/commit.json"
	expect_rc 2
	expect_in "$ERR" "different commits"
	expect_in "$ERR" "$d/_build/commit.json measured 000000000000"
	json_edit "$r2" "$d/_build/config.json" 'd["config_digest"] = "0123456789abcdef"'
	run_gate merge -C "$d" "$r1" "$d/_build/config.json"
	expect_rc 2
	expect_in "$ERR" "different configurations"
	json_edit "$r2" "$d/_build/version.json" 'd["gate"] = "9.9.9"'
	run_gate merge -C "$d" "$r1" "$d/_build/version.json"
	expect_rc 2
	expect_in "$ERR" "different gate versions"
	expect_in "$ERR" "by gate 9.9.9"
	json_edit "$r2" "$d/_build/newer.json" 'd["format"] = "gate.run/3"'
	run_gate merge -C "$d" "$r1" "$d/_build/newer.json"
	expect_rc 2
	expect_in "$ERR" "$d/_build/newer.json: format gate.run/3 is newer than this gate reads"
	run_gate merge -C "$d" "$r1" "$d/_build/j2.xml"
	expect_rc 2
	expect_in "$ERR" "$d/_build/j2.xml: line 1 column"
	expect_in "$ERR" "not a gate run result"
	# an artifact that did not arrive whole: a real result cut in the middle, an empty one
	head -c "$(($(stat -c %s "$r2") / 2))" "$r2" >"$d/_build/cut.json"
	run_gate merge -C "$d" "$r1" "$d/_build/cut.json"
	expect_rc 2
	expect_in "$ERR" "$d/_build/cut.json: line "
	expect_in "$ERR" "the result is cut short"
	: >"$d/_build/empty.json"
	run_gate merge -C "$d" "$r1" "$d/_build/empty.json"
	expect_rc 2
	expect_in "$ERR" "$d/_build/empty.json: the file is empty"
	echo '{"hello": 1}' >"$d/_build/other.json"
	run_gate merge -C "$d" "$r1" "$d/_build/other.json"
	expect_rc 2
	expect_in "$ERR" "$d/_build/other.json: not a gate run result"
	run_gate merge -C "$d" "$r1" "$d/_build/absent.json"
	expect_rc 2
	expect_in "$ERR" "$d/_build/absent.json"
	# a run that was no partition
	run_gate run -C "$d" -q --json "$d/_build/whole.json"
	expect_rc 0
	run_gate merge -C "$d" "$d/_build/whole.json" "$r2"
	expect_rc 2
	expect_in "$ERR" "$d/_build/whole.json is not a partition's result"
	rm -f "$d/_build/gate/junit.xml"
	run_gate merge -C "$d"
	expect_rc 2
	expect_in "$ERR" "no results given"
	run_gate merge -C "$d" "$r1" "$d/_build/config.json"
	expect_rc 2
	[ ! -e "$d/_build/gate/junit.xml" ] || fail "a refused merge wrote a JUnit report"
	no_leftovers "$d"
}

# On main: the merge commits every partition's baseline in ONE commit (the partitions write
# none), its note is the whole suite's summary, `gate baseline history` shows it, and the
# partitions' next runs read their own baselines from it.
case_merge_baseline_one_commit() {
	local d; d=$(git_fixture partitioned)
	echo "_build/" >"$d/.gitignore"
	git_in "$d" add .gitignore >/dev/null
	git_in "$d" commit -q -m "ignore _build" >/dev/null
	local head; head=$(git -C "$d" rev-parse HEAD)
	merge_partitions "$d" 2
	[ "$MERGE_RCS" = "0 0" ] || fail "the partitions' runs exited $MERGE_RCS"
	[ ! -e "$d/.gate" ] || fail "a partition's run wrote a baseline"
	run_gate merge -C "$d" "$d/_build/r1.json" "$d/_build/r2.json" --update-baseline --commit
	expect_rc 0
	expect_in "$OUT" "the baselines of 2 partitions"
	[ "$(git -C "$d" rev-list --count "$head"..HEAD)" = 1 ] || fail "not exactly one commit"
	local files
	files=$(git -C "$d" show --name-only --format= HEAD | sort | tr '\n' ' ')
	[ "$files" = ".gate/baseline.partition-1.json .gate/baseline.partition-2.json " ] ||
		fail "the commit holds: $files"
	[ "$(git -C "$d" rev-parse HEAD~1)" = "$head" ] || fail "the commit is not on the measured HEAD"
	[ -z "$(git -C "$d" status --porcelain)" ] || fail "the working tree is not clean: $(git -C "$d" status --porcelain)"
	fsck_clean "$d"
	git -C "$d" notes --ref=refs/notes/gate show HEAD >"$WORK/note" 2>&1 || fail "no note on the commit"
	local t1 t2
	t1=$(json_get "$d/_build/r1.json" 'd["tests"]["total"]')
	t2=$(json_get "$d/_build/r2.json" 'd["tests"]["total"]')
	expect_in "$WORK/note" "\"test_count\":$((t1 + t2))"
	# and each partition's own figures, which its next run's trend reads
	expect_in "$WORK/note" "\"partitions\":{\"1\":{"
	expect_in "$WORK/note" "\"test_count\":$t1"
	run_gate baseline history -C "$d"
	expect_rc 0
	expect_in "$OUT" "$(git -C "$d" rev-parse --short=7 HEAD)"
	# the merge job run again: its own commit is on the measured one, and nothing is new
	run_gate merge -C "$d" "$d/_build/r1.json" "$d/_build/r2.json" --update-baseline --commit
	expect_rc 0
	expect_in "$OUT" "already has exactly these 2 baselines: nothing committed"
	[ "$(git -C "$d" rev-list --count "$head"..HEAD)" = 1 ] || fail "a rerun added a commit"
	# new code on top: those figures are not its figures
	printf '# more\n' >>"$d/lib/partitioned.ex"
	git_in "$d" commit -q -am "new code" >/dev/null
	run_gate merge -C "$d" "$d/_build/r1.json" "$d/_build/r2.json" --update-baseline --commit
	expect_rc 2
	expect_in "$ERR" "HEAD moved since the run started"
	# the partitions read their own baselines from that commit
	MIX_TEST_PARTITION=1 run_gate run -C "$d" --baseline-ref HEAD -- --partitions 2
	expect_rc 0
	expect_in "$ERR" ".gate/baseline.partition-1.json at commit"
	expect_in "$ERR" "trend over 1 noted run"
	no_leftovers "$d"
}

# env_file FILE: the KEY=VALUE lines a step appended to $GITHUB_ENV, as arguments for env
env_file() {
	[ -f "$1" ] && grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$1"
}

# The templates' shell steps run here as the CI would (tests/integrations/ci-step.js): the
# GitHub matrix's partitions (the action's Run gate step with MIX_TEST_PARTITION), then the
# merge job's steps on main: one commit of both baselines on gate/baseline, pushed with the
# notes; then GitLab's gate:partition (CI_NODE_INDEX of CI_NODE_TOTAL) and gate:merge on the
# same remote after new work on main: the baseline branch grows by that one commit again.
case_merge_templates_run() {
	local d r t k; d=$(git_fixture partitioned)
	echo "_build/" >"$d/.gitignore"
	git_in "$d" add .gitignore >/dev/null
	git_in "$d" commit -q -m "ignore _build" >/dev/null
	r=$(mktemp -d "$WORK/remote.XXXXXX")
	git init -q --bare -b main "$r" && git -C "$d" remote add origin "$r"
	git -C "$d" push -q origin main 2>/dev/null || fail "cannot push to the test remote"
	t=$(mktemp -d "$WORK/runner.XXXXXX")
	local wf=integrations/github/example-workflow-partitioned.yml
	mkdir -p "$t/results"
	for k in 1 2; do
		git clone -q "$r" "$t/p$k"
		ci_step integrations/github/action.yml "Fetch the baselines and the notes" "$t/p$k" MAIN=main \
			BRANCH=gate/baseline >"$t/f$k.out" 2>&1 || fail "partition $k's fetch step: $(tail -n 3 "$t/f$k.out")"
		ci_step integrations/github/action.yml "Run gate" "$t/p$k" GATE_EXE="$GATE" INPUT_PROJECT=. \
			INPUT_BASELINE_BRANCH=gate/baseline INPUT_BASELINE_REF= INPUT_REQUIRE_BASELINE=false \
			INPUT_UPDATE_BASELINE=false MIX_TEST_PARTITION=$k INPUT_MERGED=true GITHUB_ACTIONS=true \
			GITHUB_STEP_SUMMARY="$t/step$k.md" \
			INPUT_ARGS="-q --json gate-result/result-$k.json -- --partitions 2" RUNNER_TEMP="$t/r$k" \
			GITHUB_OUTPUT="$t/o$k" >"$t/p$k.out" 2>&1 || fail "partition $k's Run gate step: $(tail -n 3 "$t/p$k.out")"
		expect_in "$t/o$k" "exit-code=0"
		# merged: the merge job's step summary is the one
		[ ! -e "$t/step$k.md" ] || fail "partition $k wrote a step summary of its own"
		cp "$t/p$k/gate-result/result-$k.json" "$t/results/" || fail "partition $k wrote no result"
	done
	# the merge job: the results downloaded, the baseline branch prepared, the merge, the push
	local m="$t/merge" main0
	git clone -q "$r" "$m" && mkdir -p "$m/gate-results" && cp "$t/results/"*.json "$m/gate-results/"
	main0=$(git -C "$r" rev-parse main)
	ci_step "$wf" "memory-merge/Prepare the baseline branch" "$m" GITHUB_ENV="$t/genv" \
		>"$t/prep.out" 2>&1 || fail "merge job's prepare step: $(tail -n 3 "$t/prep.out")"
	# shellcheck disable=SC2046 # the KEY=VALUE lines the step wrote, one argument each
	(IFS=$'\n'; ci_step "$wf" "memory-merge/Merge the partitions" "$m" GATE_EXE="$GATE" \
		GITHUB_OUTPUT="$t/mo" GITHUB_STEP_SUMMARY="$t/step.md" $(env_file "$t/genv")) >"$t/merge.out" 2>&1 ||
		fail "merge job's merge step: $(tail -n 3 "$t/merge.out")"
	expect_in "$t/mo" "exit-code=0"
	expect_in "$t/mo" "comment=false"
	expect_in "$t/step.md" "gate: PASSED"
	junit_valid "$m/gate-reports/junit.xml"
	junit_check "$m/gate-reports/junit.xml" --failures 0 --errors 0 --testcase "Part1Test=test part 1" \
		--testcase "Part2Test=test part 2"
	ci_step "$wf" "memory-merge/Push the baselines and the notes" "$m" >"$t/push.out" 2>&1 ||
		fail "merge job's push step: $(tail -n 3 "$t/push.out")"
	[ "$(git -C "$r" rev-parse main)" = "$main0" ] || fail "the merge job pushed to main"
	[ "$(git -C "$r" rev-parse gate/baseline~1)" = "$main0" ] || fail "gate/baseline is not one commit on main"
	local files
	files=$(git -C "$r" show --name-only --format= gate/baseline | sort | tr '\n' ' ')
	[ "$files" = ".gate/baseline.partition-1.json .gate/baseline.partition-2.json " ] ||
		fail "the baseline commit holds: $files"
	git -C "$r" notes --ref=refs/notes/gate show gate/baseline >/dev/null 2>&1 || fail "no note pushed"

	# GitLab, after new work on main
	local w="$t/dev"
	git clone -q "$r" "$w" && printf 'more\n' >"$w/README" && git -C "$w" add README &&
		git -C "$w" -c user.name=dev -c user.email=dev@gate.invalid commit -q -m "new work" &&
		git -C "$w" push -q origin main 2>/dev/null || fail "the new work could not be pushed"
	local sha b1; sha=$(git -C "$w" rev-parse HEAD); b1=$(git -C "$r" rev-parse gate/baseline)
	mkdir -p "$t/gatehome/build" && ln -s "$GATE" "$t/gatehome/build/gate"
	git -C "$r" config receive.advertisePushOptions true # the push's -o ci.skip, as GitLab takes it
	local gl=integrations/gitlab/gate.gitlab-ci.yml
	{
		node "$INTEG/ci-step.js" "$ROOT/$gl" .gate before_script "git fetch"
		node "$INTEG/ci-step.js" "$ROOT/$gl" .gate before_script "mkdir -p gate-reports"
	} >"$t/glbefore.sh"
	node "$INTEG/ci-step.js" "$ROOT/$gl" gate:partition >"$t/glpart.sh" || fail "no gate:partition"
	# a partition that failed (exit 1) is a warning, gate:merge the one verdict; exit 2 fails it
	(cd "$INTEG" && node --input-type=module -e "import {readFileSync} from 'node:fs'; import {parse} from 'yaml';
		const j = parse(readFileSync(process.argv[1], 'utf8'))['gate:partition'];
		process.exit(JSON.stringify(j.allow_failure) === JSON.stringify({exit_codes: [1]}) ? 0 : 1)" "$ROOT/$gl") ||
		fail "gate:partition does not take exit 1 as allowed (gate:merge gives the verdict)"
	node "$INTEG/ci-step.js" "$ROOT/$gl" gate:merge >"$t/glmerge.sh" || fail "no gate:merge"
	local gm="$t/glm"
	git clone -q "$r" "$gm" && git -C "$gm" checkout -q --detach "$sha" && mkdir -p "$gm/gate-results"
	for k in 1 2; do
		git clone -q "$r" "$t/gl$k" && git -C "$t/gl$k" checkout -q --detach "$sha"
		(cd "$t/gl$k" && env CI_DEFAULT_BRANCH=main GATE_BASELINE_BRANCH=gate/baseline GATE_PROJECT=. \
			GATE_ARGS= GATE_HOME="$t/gatehome" CI_NODE_INDEX=$k CI_NODE_TOTAL=2 \
			sh -e -c ". '$t/glbefore.sh' && . '$t/glpart.sh'") >"$t/glp$k.out" 2>&1 ||
			fail "gate:partition $k: $(tail -n 3 "$t/glp$k.out")"
		expect_in "$t/glp$k.out" "baseline: origin/gate/baseline:.gate/baseline.partition-$k.json at commit"
		cp "$t/gl$k/gate-results/result-$k.json" "$gm/gate-results/" || fail "gate:partition $k kept no result"
	done
	(cd "$gm" && env CI_DEFAULT_BRANCH=main CI_COMMIT_BRANCH=main CI_COMMIT_SHA="$sha" GATE_PROJECT=. \
		GATE_HOME="$t/gatehome" GATE_BASELINE_BRANCH=gate/baseline GATE_PUSH_TOKEN=unused \
		GATE_PUSH_URL="$r" GATE_AUTHOR_NAME=gate GATE_AUTHOR_EMAIL=gate@gitlab.invalid GATE_MR_NOTE=false \
		sh -e -c ". '$t/glbefore.sh' && . '$t/glmerge.sh'") >"$t/glm.out" 2>&1 ||
		fail "gate:merge: $(tail -n 5 "$t/glm.out")"
	expect_in "$t/glm.out" "the baselines of 2 partitions"
	# the branch grew by the merge of the new work and the one baseline commit
	[ "$(git -C "$r" rev-parse gate/baseline~1^1)" = "$b1" ] || fail "GitLab's baseline commit is not on the previous baseline"
	[ "$(git -C "$r" rev-parse gate/baseline~1^2)" = "$sha" ] || fail "GitLab's baseline commit is not on the measured commit"
	files=$(git -C "$r" show --name-only --format= gate/baseline | sort | tr '\n' ' ')
	[ "$files" = ".gate/baseline.partition-1.json .gate/baseline.partition-2.json " ] ||
		fail "GitLab's baseline commit holds: $files"
	[ "$(git -C "$r" rev-parse main)" = "$sha" ] || fail "a job pushed to main"
	junit_valid "$gm/gate-reports/junit.xml"
	fsck_clean "$r"
	no_leftovers "$t"
	no_leftovers "$d"
}

# The partitioned workflow's partition jobs (the action with merged: true): a leak in one
# partition is said once, by the merge job: the partition writes no ::error annotation and no
# step summary, and its job passes on 0 and 1 (its result is what counts) but not on 2; the
# same step without merged annotates, as a one-job workflow must.
case_merge_partition_jobs_quiet() {
	local d t k leaky=""; d=$(git_fixture partitioned_leak)
	git -C "$d" update-ref refs/remotes/origin/main HEAD
	t=$(mktemp -d "$WORK/runner.XXXXXX")
	for k in 1 2; do
		ci_step integrations/github/action.yml "Run gate" "$d" GATE_EXE="$GATE" INPUT_PROJECT=. \
			INPUT_BASELINE_BRANCH=gate/baseline INPUT_BASELINE_REF=origin/main INPUT_REQUIRE_BASELINE=false \
			INPUT_UPDATE_BASELINE=false MIX_TEST_PARTITION=$k INPUT_MERGED=true GITHUB_ACTIONS=true \
			GITHUB_STEP_SUMMARY="$t/step$k.md" INPUT_ARGS="-q --json $t/result-$k.json -- --partitions 2" \
			RUNNER_TEMP="$t/r$k" GITHUB_OUTPUT="$t/o$k" >"$t/p$k.out" 2>&1 ||
			fail "partition $k's Run gate step: $(tail -n 3 "$t/p$k.out")"
		grep -q "exit-code=1" "$t/o$k" && leaky=$k
		expect_not_in "$t/p$k.out" "::error"
		[ ! -e "$t/step$k.md" ] || fail "partition $k wrote a step summary of its own"
	done
	[ -n "$leaky" ] || fail "no partition failed on the leak"
	for k in 0 1 2; do
		ci_step integrations/github/action.yml "Verdict" "$t" RC=$k INPUT_MERGED=true >"$t/v$k.out" 2>&1
		RC=$?
		OUT="$t/v$k.out" ERR="$t/v$k.out" expect_rc "$([ "$k" = 2 ] && echo 2 || echo 0)"
	done
	expect_in "$t/v1.out" "the merge job (gate merge) gives the suite's one verdict"
	# the one voice: the merge job annotates the leak once, naming its partition
	(cd "$d" && GITHUB_ACTIONS=true "$GATE" merge -C . -q --junit "$t/m.xml" "$t"/result-*.json) >"$t/m.out" 2>&1
	[ "$(grep -c '^::error .*partition '"$leaky"'/2' "$t/m.out")" -ge 1 ] ||
		fail "the merge did not annotate the leak with its partition: $(grep '::' "$t/m.out" | head -n 3)"
	# without merged, the same step annotates (a one-job workflow's partition of one)
	ci_step integrations/github/action.yml "Run gate" "$d" GATE_EXE="$GATE" INPUT_PROJECT=. \
		INPUT_BASELINE_BRANCH=gate/baseline INPUT_BASELINE_REF=origin/main INPUT_REQUIRE_BASELINE=false \
		INPUT_UPDATE_BASELINE=false MIX_TEST_PARTITION=$leaky INPUT_MERGED=false GITHUB_ACTIONS=true \
		INPUT_ARGS="-q -- --partitions 2" RUNNER_TEMP="$t/r3" GITHUB_OUTPUT="$t/o3" >"$t/p3.out" 2>&1 ||
		fail "the unmerged Run gate step: $(tail -n 3 "$t/p3.out")"
	expect_in "$t/p3.out" "::error "
	no_leftovers "$d"
	no_leftovers "$t"
}
