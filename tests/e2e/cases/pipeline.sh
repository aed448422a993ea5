# tests/e2e/cases/pipeline.sh: the run pipeline's late steps on real runs: a
# failure after the reports' figures are known (the --json file, a refused baseline commit)
# is said once, in one set of reports: one step summary appended, one annotation, one JUnit
# file with the error case. Sourced by tests/e2e/run.sh, whose helpers it uses.

# late_reports_once NAME: the step summary ($WORK/NAME.md) holds the earlier step's line and
# one gate summary; stdout one annotation; the JUnit file an error case naming WHY ($2)
late_reports_once() {
	local s="$WORK/$1.md" why=$2 d=$3
	[ "$(head -n 1 "$s")" = "## an earlier step" ] || fail "the earlier step's summary was replaced"
	[ "$(grep -c '^## an earlier step' "$s")" = 1 ] || fail "the earlier line was copied"
	[ "$(grep -c '^### .*gate: ERROR' "$s")" = 1 ] || fail "not one gate summary: $(cat "$s")"
	[ "$(grep -c '^::' "$OUT")" = 1 ] || fail "expected one annotation: $(grep '^::' "$OUT")"
	expect_in "$OUT" "$why"
	[ "$(grep -c 'gate: error: .*'"$why" "$ERR")" = 1 ] || fail "the error was not said once: $(cat "$ERR")"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1
	expect_in "$d/_build/gate/junit.xml" "$why"
	# the run's results are not lost with it: the summary, the tests and the memory checks
	expect_in "$OUT" "gate: PASSED"
	expect_in "$d/_build/gate/junit.xml" 'classname="gate.memory.growth"'
	expect_in "$d/_build/gate/junit.xml" 'classname="Clean.CacheTest"'
	expect_in "$s" "| processes\\_used |"
	[ "$(grep -n 'gate: error: ' "$ERR" | cut -d: -f1)" -gt 0 ] || fail "no error line"
}

case_pipeline_late_json_failure_reports_once() {
	local d; d=$(git_fixture clean)
	mkdir -p "$d/out/run.json" # a directory where the file goes: the write fails late
	printf '## an earlier step\n' >"$WORK/json.md"
	GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$WORK/json.md" GITHUB_WORKSPACE="$d" \
		run_gate run -C "$d" --json "$d/out/run.json"
	expect_rc 2
	late_reports_once json "out/run.json" "$d"
	[ -d "$d/out/run.json" ] || fail "the directory in the way was touched"
	[ -z "$(ls -A "$d/out/run.json")" ] || fail "left in the directory: $(ls -A "$d/out/run.json")"
	no_leftovers "$d"
}

case_pipeline_late_commit_refused_reports_once() {
	local d head; d=$(git_fixture clean)
	git -C "$d" checkout -q --detach HEAD # as in a CI checkout of a pull request
	head=$(git -C "$d" rev-parse HEAD)
	printf '## an earlier step\n' >"$WORK/commit.md"
	GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$WORK/commit.md" GITHUB_WORKSPACE="$d" \
		run_gate run -C "$d" --update-baseline --commit
	expect_rc 2
	late_reports_once commit "HEAD is detached" "$d"
	[ "$(git -C "$d" rev-parse HEAD)" = "$head" ] || fail "HEAD moved"
	[ -z "$(git -C "$d" status --porcelain)" ] || fail "the working tree changed: $(git -C "$d" status --porcelain)"
	fsck_clean "$d"
	no_leftovers "$d"
}

# the JUnit file cannot be written: exit 2 before the baseline commit, which would otherwise
# change the branch under a run CI reads as "could not run"
case_pipeline_junit_unwritable_commits_nothing() {
	local d head; d=$(git_fixture clean)
	printf 'not a directory\n' >"$d/blocker"
	git -C "$d" add blocker && git -C "$d" commit -q -m "a file where the report's folder goes"
	head=$(git -C "$d" rev-parse HEAD)
	run_gate run -C "$d" --junit "$d/blocker/junit.xml" --update-baseline --commit
	expect_rc 2
	expect_in "$ERR" "cannot write the JUnit report"
	expect_in "$OUT" "gate: PASSED"
	[ "$(git -C "$d" rev-parse HEAD)" = "$head" ] || fail "the baseline was committed: $(git -C "$d" log --oneline -1)"
	[ ! -e "$d/.gate/baseline.json" ] || fail "a baseline file was written"
	[ -z "$(git -C "$d" status --porcelain)" ] || fail "the working tree changed: $(git -C "$d" status --porcelain)"
	[ -z "$(git -C "$d" notes --ref=gate list 2>/dev/null)" ] || fail "a note was written"
	no_leftovers "$d"
}
