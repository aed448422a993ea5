# tests/e2e/cases/attention.sh: limits where tests are written and reports that respect a
# reviewer's attention: ExUnit `gate` tags (pass, fail, exempt, async, refused),
# --warn-only and [severity], the annotation budget and its order, the review-comment flag,
# the JUnit case count of the demo with one leak, and where CI reporters place memory
# findings. Sourced by tests/e2e/run.sh, whose helpers it uses.

# xpath_count FILE XPATH: prints the count
xpath_count() { xmllint --xpath "count($2)" "$1" 2>/dev/null; }

# attention_case FILE NAME: the gate.memory.tag testcase of test NAME, as an XPath
attention_case() { printf '//testcase[@classname="gate.memory.tag" and @name=%s]' "'$1'"; }

# Tagged tests are measured and judged on their own: within (passes), over (fails, names the
# table first, at its file and line), over a warn limit (a skipped case "warning: ..."),
# async (the neighbour's growth in its window counts, and says so). Reporters place them.
case_attention_tag_limits() {
	local d j; d=$(git_fixture tags)
	run_gate run -C "$d"
	expect_rc 1
	j="$d/_build/gate/junit.xml"
	junit_valid "$j"
	junit_check "$j" \
		--failure-contains 'Tags.LimitsTest "test over its limit"=ETS table tags_store (owner Tags.Store) +20 000 rows' \
		--failure-contains 'Tags.LimitsTest "test over its limit"=max_growth 1.0 MB' \
		--failure-contains "Tags.AsyncTaggedTest \"test tagged, async\"=(async: the node's growth over the test's run, tests running alongside included)" \
		--failure-contains 'Tags.AsyncTaggedTest "test tagged, async"=ETS table tags_async (owner Tags.Store)' \
		--testcase 'gate.memory.tag=Tags.LimitsTest "test within its limits"'
	local within over warn
	within=$(attention_case 'Tags.LimitsTest "test within its limits"')
	over=$(attention_case 'Tags.LimitsTest "test over its limit"')
	warn=$(attention_case 'Tags.LimitsTest "test over a warn limit"')
	[ "$(xpath_count "$j" "$within/failure")" = 0 ] || fail "the test within its limits failed"
	[ "$(xpath_count "$j" "$within/system-out[contains(., 'within its @tag gate limits')]")" = 1 ] ||
		fail "the passing tag case does not say it is within its limits"
	[ "$(xpath_count "$j" "$over[@file='test/limits_test.exs' and @line='12']")" = 1 ] ||
		fail "the failing tag case is not at test/limits_test.exs:12"
	[ "$(xpath_count "$j" "$warn/skipped[starts-with(@message, 'warning: ETS table tags_warned')]")" = 1 ] ||
		fail "the warn-severity tag is not a skipped case reading 'warning: ETS table tags_warned'"
	# the tag failures are the first failures (the most specific findings)
	junit_check "$j" --first-failure-contains "ETS table tags_"
	node "$ROOT/tests/junit/reporters.js" "$j" "$d" --expect-file test/limits_test.exs:12 \
		--expect-file test/async_test.exs:10 >"$WORK/reporters.out" 2>&1 ||
		fail "reporters: $(grep PROBLEM "$WORK/reporters.out" | head -3)"
	expect_in "$OUT" "tag              FAIL"
	no_leftovers "$d"
}

# @tag gate: false: the only test that ran leaks, and it is never named as the culprit
# (per test, and its module, whose every test that ran is exempt); nothing is measured for it
case_attention_tag_exempt() {
	local d; d=$(fixture tags)
	run_gate run -C "$d" --per-test -- --only exempt_only
	expect_rc 1
	expect_in "$OUT" "ETS table tags_store (owner Tags.Store) +30 000 rows"
	expect_not_in "$OUT" "likely culprit: Tags.LimitsTest"
	expect_in "$OUT" "no test stands out"
	[ "$(xpath_count "$d/_build/gate/junit.xml" '//testcase[@classname="gate.memory.tag"]')" = 0 ] ||
		fail "an exempt test got a tag testcase"
	no_leftovers "$d"
}

# @moduletag gate: [...] judges every test of the module: the one that leaves a process and
# its ETS table alive fails on both counts, the one that cleans up passes
case_attention_moduletag() {
	local d; d=$(fixture tags)
	run_gate run -C "$d" -- --only moduletag_only
	expect_rc 1
	junit_check "$d/_build/gate/junit.xml" \
		--failure-contains 'Tags.ModuleTagTest "test leaves a process and its table alive"=left processes 1, max_processes 0; left ETS tables 1, max_ets_tables 0'
	[ "$(xpath_count "$d/_build/gate/junit.xml" "$(attention_case 'Tags.ModuleTagTest "test cleans up after itself"')/failure")" = 0 ] ||
		fail "the test that cleans up failed its module's limits"
	no_leftovers "$d"
}

# A tag gate cannot read is exit 2 naming the test's file:line, the key and the keys
case_attention_bad_tag_is_error() {
	local d; d=$(fixture tags)
	run_gate run -C "$d" -- --only bad_tag
	expect_rc 2
	expect_in "$ERR" "test/limits_test.exs:29: Tags.LimitsTest \"test a misspelt key\": gate: unknown key max_grwth; the keys are max_growth, max_processes, max_ets_tables, severity, max_peak"
	no_leftovers "$d"
}

# --warn-only: every memory finding is a warning (exit 0, no JUnit failure, ::warning
# annotations); a failing test still fails. [severity] does it per rule.
case_attention_warn_only() {
	local d j; d=$(git_fixture tags)
	GITHUB_ACTIONS=true run_gate run -C "$d" --warn-only
	expect_rc 0
	j="$d/_build/gate/junit.xml"
	junit_valid "$j"
	junit_check "$j" --failures 0 --errors 0
	[ "$(xpath_count "$j" '//testcase[starts-with(@classname, "gate.memory")]/skipped[starts-with(@message, "warning: ")]')" -ge 3 ] ||
		fail "fewer than 3 warnings in the JUnit"
	expect_in "$OUT" "::warning file=test/limits_test.exs,line=12,title=gate%3A tag"
	expect_not_in "$OUT" "::error"
	expect_in "$OUT" "gate: PASSED"
	expect_in "$OUT" "warnings (severity warn, never failing the gate):"
	expect_in "$OUT" "  warning: ETS table tags_store (owner Tags.Store) +20 000 rows"
	# failing tests still fail
	run_gate run -C "$d" --warn-only -- --include failing
	expect_rc 1
	expect_in "$OUT" "12 failed"
	# per rule: tag and ets warn, growth still fails
	printf '[severity]\ntag = "warn"\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 1
	junit_check "$d/_build/gate/junit.xml" --failure-contains "ets=ETS table tags_"
	[ "$(xpath_count "$d/_build/gate/junit.xml" '//testcase[@classname="gate.memory.tag"]/failure')" = 0 ] ||
		fail "[severity] tag = \"warn\" still failed a tag case"
	printf '[severity]\ntag = "loud"\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" 'gate.toml:2:7: severity.tag: "loud" is not a severity; write "error" (fails the gate) or "warn" (reported, never failing)'
	no_leftovers "$d"
}

# The annotation budget: at most [attention] annotations lines (default 8), failed tests
# first (file and line), then memory findings, the most specific first, at their culprit
# test's file and line; the last line says what was left out.
case_attention_annotation_budget() {
	local d; d=$(git_fixture tags)
	GITHUB_ACTIONS=true GITHUB_WORKSPACE="$d" run_gate run -C "$d" -- --include failing
	expect_rc 1
	grep '^::' "$OUT" >"$WORK/ann.txt"
	[ "$(wc -l <"$WORK/ann.txt")" = 8 ] || fail "$(wc -l <"$WORK/ann.txt") annotations, expected 8: $(cut -c1-80 "$WORK/ann.txt")"
	[ "$(head -n 7 "$WORK/ann.txt" | grep -c '^::error file=test/failing_test.exs,line=')" = 7 ] ||
		fail "the first 7 annotations are not the failed tests: $(head -n 7 "$WORK/ann.txt" | cut -c1-80)"
	tail -n 1 "$WORK/ann.txt" | grep -q '^::notice title=gate::and [0-9]* more: 5 failed tests, [0-9]* failing memory rules' ||
		fail "the last line is not the notice of what was left out: $(tail -n 1 "$WORK/ann.txt" | cut -c1-160)"
	# a larger budget: the 12 tests, then the tag failures first, at their file and line
	printf '[attention]\nannotations = 16\n' >"$d/gate.toml"
	GITHUB_ACTIONS=true GITHUB_WORKSPACE="$d" run_gate run -C "$d" -- --include failing
	expect_rc 1
	grep '^::' "$OUT" >"$WORK/ann.txt"
	[ "$(wc -l <"$WORK/ann.txt")" -le 16 ] || fail "more than 16 annotations"
	[ "$(head -n 12 "$WORK/ann.txt" | grep -c '^::error file=test/failing_test.exs')" = 12 ] ||
		fail "the failed tests do not come first"
	sed -n 13p "$WORK/ann.txt" | grep -q '^::error file=test/async_test.exs,line=10,title=gate%3A tag ' ||
		fail "annotation 13 is not the first tag failure at its file and line: $(sed -n 13p "$WORK/ann.txt" | cut -c1-120)"
	no_leftovers "$d"
}

# --comment-flag: "true" when the gate fails, "false" on a clean pass with nothing regressed;
# under GitHub Actions $GITHUB_OUTPUT gets comment=...
case_attention_comment_flag() {
	local d c; d=$(git_fixture tags)
	: >"$WORK/gho"
	GITHUB_OUTPUT="$WORK/gho" run_gate run -C "$d" --comment-flag "$WORK/flag"
	expect_rc 1
	[ "$(cat "$WORK/flag")" = true ] || fail "a failing gate's flag is $(cat "$WORK/flag")"
	expect_in "$WORK/gho" "comment=true"
	c=$(fixture clean)
	run_gate run -C "$c" --comment-flag "$WORK/flag"
	expect_rc 0
	[ "$(cat "$WORK/flag")" = false ] || fail "a clean pass's flag is $(cat "$WORK/flag")"
	no_leftovers "$d"
	no_leftovers "$c"
}

# The demo with one leak and a baseline: the JUnit keeps one case per rule and subject that
# failed or was judged against a limit, and no passing per-table baseline rows (35 testcases
# on this machine: the count is printed); every failing memory case is placed at a test file
# by both reporters' lookups.
case_attention_demo_junit_cases() {
	local d j n; d=$(mktemp -d "$WORK/demo.XXXXXX")
	cp -r "$ROOT/examples/demo/." "$d/"
	rm -rf "$d/_build"
	(cd "$d" && git init -q -b main && git config user.name "Gate E2E" &&
		git config user.email e2e@gate.invalid && git add -A && git commit -q -m demo) ||
		fail "cannot make a repository of the demo"
	GATE_AUTHOR_NAME=e2e GATE_AUTHOR_EMAIL=e2e@gate.invalid run_gate run -C "$d" --update-baseline --commit
	expect_rc 0
	GITHUB_ACTIONS=true GITHUB_WORKSPACE="$d" run_gate run -C "$d" --baseline-ref HEAD --html "$WORK/demo.html" -- --include leak
	expect_rc 1
	j="$d/_build/gate/junit.xml"
	junit_valid "$j"
	n=$(xpath_count "$j" '//testcase')
	echo "    demo with one leak and a baseline: $n JUnit testcases"
	[ "$(xpath_count "$j" '//testcase[@classname="gate.memory.baseline" and starts-with(@name, "ets:") and not(failure) and not(skipped)]')" = 0 ] ||
		fail "passing per-table baseline cases are still written"
	[ "$(xpath_count "$j" '//testcase[starts-with(@classname, "gate.memory") and failure and not(@file)]')" = 0 ] ||
		fail "a failing memory case has no file"
	node "$ROOT/tests/junit/reporters.js" "$j" "$d" --expect-file test/demo_test.exs:21 >"$WORK/reporters.out" 2>&1 ||
		fail "reporters: $(grep PROBLEM "$WORK/reporters.out" | head -3)"
	[ "$(grep -c '^::' "$OUT")" -le 8 ] || fail "more than 8 annotations"
	expect_not_in "$OUT" "file=growth"
	# the HTML report in headless Chromium: the headline (what grew, who grew it, where) under
	# the verdict, each culprit list once
	integ_npm
	node "$ROOT/tests/integrations/render.js" "$WORK/demo.html" "$WORK/demo.png" --verdict "gate: FAILED" \
		--text "What grew, who grew it" --text "ets table demo_sessions: ETS table demo_sessions (owner Demo.Sessions) grew" \
		--text "at test/demo_test.exs:21" >"$WORK/render.out" 2>&1 ||
		fail "render: $(tail -n 3 "$WORK/render.out")"
	# every culprit list (a heading line and its indented lines) once in the page
	local dup
	dup=$(sed 's/<pre class="detail">/\n/g; s/<\/pre>/\n/g' "$WORK/demo.html" |
		awk '/^[^ <]/ { if (b != "") print b; b = $0; next } /^  / && b != "" { b = b "|" $0; next } { if (b != "") print b; b = "" } END { if (b != "") print b }' |
		grep 'most\|alive\|after GC' | sort | uniq -d)
	[ -z "$dup" ] || fail "a culprit list is repeated in the HTML: $dup"
	no_leftovers "$d"
}
