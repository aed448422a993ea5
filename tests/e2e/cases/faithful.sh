# tests/e2e/cases/faithful.sh: gate run is faithful to bare `mix test`: never
# green when `mix test` is red, the reason in the console and the JUnit, the project's own
# formatters, alias, --no-start, partitions and node name kept, stdin at end-of-file.
# Each case also runs bare `mix test` on its own copy of the fixture (stdin /dev/null, as CI
# does) and checks gate's exit against it. Sourced by tests/e2e/run.sh.

# bare_mix FIXTURE ARGS...: bare `mix test ARGS` in a fresh copy; BARE_RC, BARE_OUT
bare_mix() {
	local b; b=$(fixture "$1")
	shift
	BARE_OUT="$WORK/bare.$RANDOM"
	(cd "$b" && MIX_ENV=test timeout -k 5 300 mix test "$@" </dev/null >"$BARE_OUT" 2>&1)
	BARE_RC=$?
	no_leftovers "$b"
}

# at_least_as_strict EXPECTED_BARE_RC: bare mix test exited so, and gate is not greener
at_least_as_strict() {
	[ "$BARE_RC" = "$1" ] || fail "bare mix test exited $BARE_RC, expected $1: $(tail -n 3 "$BARE_OUT")"
	if [ "$BARE_RC" != 0 ] && [ "$RC" = 0 ]; then
		fail "bare mix test is red ($BARE_RC) and gate is green"
	fi
}

# An umbrella whose second app has a failing test: every app's suite runs in the one node,
# the JUnit names the app with each module, the failed test is named.
case_faithful_umbrella_second_app_fails() {
	local d; d=$(fixture umbrella_fail)
	run_gate run -C "$d"
	expect_rc 1
	bare_mix umbrella_fail
	at_least_as_strict 2
	expect_in "$OUT" "4 tests: 3 passed, 1 failed"
	expect_in "$OUT" "  - BetaTest (app beta): test beta answer is right"
	local j="$d/_build/gate/junit.xml"
	junit_valid "$j"
	junit_check "$j" --failures 1 --errors 0 \
		--failure-contains "test beta answer is right=gate-fixture: beta drifted" \
		--testcase "AlphaTest (app alpha)=test doubles" \
		--testcase "BetaTest (app beta)=test beta passes"
	expect_in "$j" '<property name="mix.app" value="beta"/>'
	expect_in "$j" 'file="apps/beta/test/beta_test.exs"' # relative to the project's root
	no_leftovers "$d"
}

# A module whose setup_all raises: its tests are invalid, each an error carrying the module's
# failure (the one suite whose records the formatter unpacks in the node before they go to
# gate), and the run fails as bare mix test does.
case_faithful_setup_all_fails() {
	local d; d=$(fixture setup_all_fail)
	run_gate run -C "$d"
	expect_rc 1
	bare_mix setup_all_fail
	at_least_as_strict 2
	expect_in "$OUT" "3 tests: 1 passed, 0 failed, 0 skipped, 2 invalid (setup_all failed)"
	expect_in "$OUT" "gate: FAILED (2 tests)"
	local j="$d/_build/gate/junit.xml"
	junit_valid "$j"
	junit_check "$j" --failures 0 --errors 2 \
		--failure-contains "test reads a row=setup_all failed: ** (RuntimeError) gate-fixture: no database" \
		--failure-contains "test writes a row=setup_all failed: ** (RuntimeError) gate-fixture: no database" \
		--testcase "FineTest=test needs nothing"
	no_leftovers "$d"
}

# --warnings-as-errors with a warning in a test file: every test passes, mix test exits 1.
case_faithful_warnings_as_errors() {
	local d; d=$(fixture warn_errors)
	run_gate run -C "$d" -- --warnings-as-errors
	expect_rc 1
	bare_mix warn_errors --warnings-as-errors
	at_least_as_strict 1
	expect_in "$ERR" "gate: mix test failed: bare \`mix test\` would exit with status 1: ERROR! Test suite aborted after successful execution due to warnings while using the --warnings-as-errors option"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 1 \
		--failure-contains "exit status=ERROR! Test suite aborted after successful execution due to warnings" \
		--failure-contains "exit status=variable \"gate_fixture_unused\" is unused"
	expect_in "$d/_build/gate/junit.xml" 'type="mix.test.exit_status.1"'
	expect_in "$OUT" "gate: FAILED (mix test exit status 1)" # the summary agrees with the exit
	# without the option the same suite is green, under both
	run_gate run -C "$d"
	expect_rc 0
	no_leftovers "$d"
}

# A test file that does not compile: the suite could not run at all (exit 2, Mix's words).
case_faithful_suite_cannot_load() {
	local d; d=$(fixture warn_errors)
	printf 'defmodule BrokenTest do\n  use ExUnit.Case\n  test "x", do: assert(undefined_fun())\nend\n' \
		>"$d/test/broken_test.exs"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "mix test could not run the suite (bare \`mix test\` would exit with status 1)"
	expect_in "$ERR" "undefined function undefined_fun/0"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=undefined function undefined_fun/0"
	local b; b=$(fixture warn_errors)
	cp "$d/test/broken_test.exs" "$b/test/"
	(cd "$b" && MIX_ENV=test mix test </dev/null >"$WORK/bare.out" 2>&1)
	BARE_RC=$? BARE_OUT="$WORK/bare.out"
	at_least_as_strict 1
	no_leftovers "$d"
	no_leftovers "$b"
}

# --only with a tag no test has: ExUnit runs nothing and Mix says so with exit 1.
case_faithful_only_matching_nothing() {
	local d; d=$(fixture failing)
	run_gate run -C "$d" -- --only gate_no_such_tag
	expect_rc 1
	bare_mix failing --only gate_no_such_tag
	at_least_as_strict 1
	expect_in "$ERR" "The --only option was given to \"mix test\" but no test was executed"
	junit_check "$d/_build/gate/junit.xml" --errors 1 \
		--failure-contains "exit status=The --only option was given"
	no_leftovers "$d"
}

# The project's own JUnit-like formatter (configured in test_helper.exs) runs beside gate's:
# its file is written, as without gate, and ExUnit's console output is there too.
case_faithful_user_formatter_kept() {
	local d; d=$(fixture user_formatter)
	run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "2 tests, 0 failures" # ExUnit.CLIFormatter, as configured
	local x="$d/_build/test/user.xml"
	[ -s "$x" ] || fail "the project's formatter wrote no $x"
	xmllint --noout "$x" 2>"$WORK/xmllint.err" || fail "the project's XML is not well-formed: $(cat "$WORK/xmllint.err")"
	[ "$(grep -c '<testcase ' "$x")" = 2 ] || fail "the project's XML has not the 2 tests: $(cat "$x")"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 --testcase "UserFormatterTest=test another"
	no_leftovers "$d"
}

# A `test` alias with a preparation step (as ecto.create/ecto.migrate): it runs, before the
# before-snapshot, so the 20 000-row table it builds is not counted as the suite's growth.
case_faithful_alias_prep_outside_window() {
	local d; d=$(fixture alias_prep)
	run_gate run -C "$d"
	expect_rc 0
	bare_mix alias_prep
	at_least_as_strict 0
	expect_in "$OUT" "gate-fixture: prepared 20000 rows"
	expect_in "$BARE_OUT" "gate-fixture: prepared 20000 rows"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "AliasPrepTest=test the alias's preparation ran before the suite"
	# inside the measured window the table would fail the ets and binary rules
	expect_not_in "$OUT" "gate_fixture_prep"
	no_leftovers "$d"
}

# A project whose test alias passes --no-start: its application is not started before its
# test_helper runs (which starts it itself).
case_faithful_no_start() {
	local d; d=$(fixture no_start)
	run_gate run -C "$d"
	expect_rc 0
	bare_mix no_start
	at_least_as_strict 0
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "NoStartTest=test the application was not started before test_helper.exs"
	# --no-start on the command line too, on a project started by its helper
	run_gate run -C "$d" -- --no-start
	expect_rc 0
	no_leftovers "$d"
}

# test_coverage threshold 100 % with --cover: mix test exits 3, gate fails with Mix's words.
case_faithful_coverage_threshold() {
	local d; d=$(fixture coverage_threshold)
	run_gate run -C "$d" -- --cover
	expect_rc 1
	bare_mix coverage_threshold --cover
	at_least_as_strict 3
	expect_in "$ERR" "would exit with status 3: Coverage test failed, threshold not met: Coverage: 50.00%, Threshold: 100.00%"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 1 \
		--failure-contains "exit status=Coverage test failed, threshold not met"
	expect_in "$d/_build/gate/junit.xml" 'type="mix.test.exit_status.3"'
	no_leftovers "$d"
}

# --partitions 2 with MIX_TEST_PARTITION=2: the same tests as bare mix test's partition 2,
# the partition in the JUnit and in the baseline's file name.
case_faithful_partitioned() {
	local d; d=$(git_fixture partitioned)
	MIX_TEST_PARTITION=2 run_gate run -C "$d" --update-baseline -- --partitions 2
	expect_rc 0
	# the partition keeps a baseline of its own
	[ -s "$d/.gate/baseline.partition-2.json" ] || fail "no .gate/baseline.partition-2.json"
	[ ! -e "$d/.gate/baseline.json" ] || fail "the partition wrote the whole suite's baseline"
	MIX_TEST_PARTITION=2 run_gate run -C "$d" --baseline-ref worktree -- --partitions 2
	expect_rc 0
	expect_in "$ERR" "baseline.partition-2.json"
	MIX_TEST_PARTITION=2 bare_mix partitioned --partitions 2
	at_least_as_strict 0
	local bare gate
	bare=$(sed -n 's/^\([0-9]*\) tests\{0,1\}, 0 failures.*/\1/p' "$BARE_OUT")
	gate=$(grep -c '<testcase classname="Part' "$d/_build/gate/junit.xml")
	[ -n "$bare" ] && [ "$bare" = "$gate" ] && [ "$gate" -lt 6 ] ||
		fail "partition 2 ran $gate tests under gate, $bare bare (of 6)"
	expect_in "$d/_build/gate/junit.xml" '<property name="mix.test.partition" value="2"/>'
	no_leftovers "$d"
}

# A test reading stdin gets :eof, as under mix test < /dev/null, and never gate's boot data.
case_faithful_stdin_eof() {
	local d; d=$(fixture stdin_read)
	run_gate run -C "$d"
	expect_rc 0
	bare_mix stdin_read
	at_least_as_strict 0
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "StdinReadTest=test stdin is at end-of-file"
	no_leftovers "$d"
}

# More tests than gate records is "could not run" (exit 2), with the cap and the count. The
# cap is lowered with GATE_TEST_CAP, a setting for gate's own tests.
case_faithful_test_cap_is_error() {
	local d; d=$(fixture partitioned)
	GATE_TEST_CAP=4 run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "the suite ran 6 tests, more than gate records (its cap is 4 tests per run); 2 were not recorded"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=its cap is 4 tests"
	GATE_TEST_CAP=6 run_gate run -C "$d"
	expect_rc 0
	no_leftovers "$d"
}

# Attached: `-- --only wip` must not leak into the next run, which runs (and fails) all.
case_faithful_attach_filters_restored() {
	cl_start 0
	mix_node wip_filter test
	CL_PIDS+=("$MIX_PID")
	run_attached -C "$MIX_DIR" --attach "$MIX_NODE" -- --only wip
	expect_rc 0
	expect_in "$OUT" "2 tests, 0 failures, 1 excluded"
	run_attached -C "$MIX_DIR" --attach "$MIX_NODE"
	expect_rc 1
	expect_in "$OUT" "2 tests: 1 passed, 1 failed"
	junit_check "$MIX_DIR/_build/gate/junit.xml" --failures 1 \
		--failure-contains "test the untagged one fails=gate-fixture: untagged test ran"
	cl_no_probe "$MIX_NODE"
	cl_stop "$MIX_DIR"
}

# cl_stderr_ok NODE: standard_error is the node's own again (gate's capture of what mix test
# prints is gone) and writing to it works
cl_stderr_ok() {
	local out
	out=$(echo "P = whereis(standard_error), {initial_call, C} = process_info(P, initial_call),
		{C, io:put_chars(standard_error, \"\")}." |
		HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -name "$1" -e 2>&1)
	case "$out" in
	*gate_probe* | *erlang,apply* | *badarg* | *undefined*) fail "standard_error on $1 is not the node's own: $out" ;;
	"{ok, {"*", ok}}") ;;
	*) fail "standard_error on $1: $out" ;;
	esac
}

# gate killed with SIGKILL (and interrupted with SIGINT) while an attached suite runs: the
# probe's watchdog (or cleanup) stops the suite, and the node's standard_error is its own.
case_faithful_attach_killed_restores_stderr() {
	cl_start 0
	mix_node blocking test
	CL_PIDS+=("$MIX_PID")
	cl_stderr_ok "$MIX_NODE"
	ERL_EPMD_PORT=$CL_PORT gate_bg "gate-fixture: blocking now" run -C "$MIX_DIR" --attach "$MIX_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie"
	gate_signal KILL
	cl_wait_no_probe "$MIX_NODE"
	cl_stderr_ok "$MIX_NODE"
	ERL_EPMD_PORT=$CL_PORT gate_bg "gate-fixture: blocking now" run -C "$MIX_DIR" --attach "$MIX_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie"
	gate_signal INT
	cl_no_probe "$MIX_NODE"
	cl_stderr_ok "$MIX_NODE"
	cl_stop "$MIX_DIR"
}

# A test_helper that never calls ExUnit.start(): bare mix test fails (ExUnit.Server is not
# running); gate, which starts ExUnit itself before the before-snapshot, says so and fails.
case_faithful_exunit_never_started() {
	local d b; d=$(fixture partitioned)
	: >"$d/test/test_helper.exs"
	run_gate run -C "$d"
	expect_rc 1
	expect_in "$ERR" "would exit with status 1: ExUnit was never started: no test_helper.exs called ExUnit.start()"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "exit status=ExUnit was never started"
	b=$(fixture partitioned)
	: >"$b/test/test_helper.exs"
	(cd "$b" && MIX_ENV=test mix test </dev/null >"$WORK/bare.out" 2>&1)
	BARE_RC=$? BARE_OUT="$WORK/bare.out"
	at_least_as_strict 1
	no_leftovers "$d"
	no_leftovers "$b"
}
