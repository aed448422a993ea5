# tests/e2e/cases/falsealarm.sh, sourced by tests/e2e/run.sh: no false alarm on a clean
# suite, an honest memory model that adds up on its face, and one leak, one finding: a single
# planted leak fails one memory testcase (the refc binaries a table's rows or
# persistent_term's values hold are the structure's too), the most specific first, and the
# JUnit message of the first failure is that finding's line.

# first_failure FILE: the message attribute of the first <failure> in the JUnit report (the
# gate.memory suite comes first), as CI's test reports show it for a title
first_failure() {
	grep -o '<failure message="[^"]*"' "$1" | head -n 1 | sed 's/^<failure message="//; s/"$//'
}

# one_leak DIR MAX_FAILURES FIRST_TEXT [GATE RUN ARGS...]: the gate fails, with at most
# MAX_FAILURES failing testcases (every test passes), and the first one contains FIRST_TEXT
one_leak() {
	local d=$1 max=$2 first=$3 n msg
	shift 3
	run_gate run -C "$d" "$@"
	expect_rc 1
	junit_valid "$d/_build/gate/junit.xml"
	n=$(grep -c '<failure ' "$d/_build/gate/junit.xml")
	if [ "$n" -lt 1 ] || [ "$n" -gt "$max" ]; then
		fail "$n failing testcases for one planted leak, expected 1 to $max: $(grep -o '<testcase [^>]*name="[^"]*"[^>]*>[[:space:]]*<failure' "$d/_build/gate/junit.xml" | sed 's/.* name="\([^"]*\)".*/\1/' | tr '\n' ',')"
	fi
	msg=$(first_failure "$d/_build/gate/junit.xml")
	case "$msg" in
	*"$first"*) ;;
	*) fail "the first failure is not the most specific one (want \"$first\"): $msg" ;;
	esac
	expect_in "$OUT" "gate: FAILED ($n memory rule"
	no_leftovers "$d"
}

case_one_leak_binary_holder() {
	local d; d=$(fixture leak_binary)
	one_leak "$d" 1 "process LeakBinary.Holder (&lt;0."
}

case_one_leak_ets_rows() {
	local d; d=$(fixture leak_ets)
	# the rows hold 100-byte strings: refc binaries, measured and the table's
	one_leak "$d" 1 "ets grew"
	expect_in "$OUT" "likely culprit: LeakEts.CorpusTest"
}

case_one_leak_table_cap() {
	local d; d=$(fixture leak_ets)
	printf '[[ets.table]]\nname = "corpus_*"\nmax_bytes = "2 MB"\n' >"$d/gate.toml"
	one_leak "$d" 1 "ETS table corpus_cache (owner LeakEts.Corpus) grew"
}

case_one_leak_processes() {
	local d; d=$(fixture plant)
	one_leak "$d" 1 "500 processes born during the run are still alive" -- --only procs
}

case_one_leak_mailbox() {
	local d; d=$(fixture plant)
	one_leak "$d" 1 "process Plant.Sink (&lt;0." -- --only mailbox
}

case_one_leak_atoms() {
	local d; d=$(fixture plant)
	one_leak "$d" 1 "atom count grew" -- --only atoms
	# the atom table's entries beyond memory(atom) are the atom rule's: system says so (the
	# JUnit has the row's message whole; the atoms are named as the structure)
	expect_in "$d/_build/gate/junit.xml" "new atoms plant_user_# +"
}

case_one_leak_genserver_state() {
	local d; d=$(fixture oneleak)
	one_leak "$d" 1 "processes_used grew" -- --only state
	# the JUnit message: the console wraps long lines
	case "$(first_failure "$d/_build/gate/junit.xml")" in
	*"likely culprit: OneLeak.StateTest (+"*) ;;
	*) fail "the first failure does not name OneLeak.StateTest as the culprit" ;;
	esac
}

case_one_leak_persistent_term() {
	local d; d=$(fixture oneleak)
	# persistent_term's values live in the literal area: not code, the rest of system
	one_leak "$d" 1 "persistent_term {OneLeak.Settings, _} x 4 000" -- --only pterm
}

case_one_leak_table_left_alive() {
	local d; d=$(fixture oneleak)
	one_leak "$d" 1 "ETS table one_leak_index (owner &lt;0." -- --only tables
}

# Clean suites: no false alarm, and the table adds up on its face: raw growth, what was
# subtracted with the reasons, judged; code is judged with its literals.
case_clean_table_adds_up() {
	local d; d=$(fixture oneleak)
	run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "category"
	expect_in "$OUT" "grew"
	expect_in "$OUT" "subtracted"
	expect_in "$OUT" "judged = grew - subtracted; subtracted, and why:"
	expect_in "$OUT" "  total: code and literals +"
	expect_in "$OUT" "(modules the suite loaded)"
	expect_in "$OUT" "  system: code and literals +"
	# the code row takes the suite's own modules as context, counted by where they came from
	expect_in "$OUT" "  code: the suite's own modules +"
	expect_not_in "$OUT" "likely culprit"
	# no ranking of test modules by raw light-snapshot figures when nothing was flagged
	expect_not_in "$OUT" "Top growing test modules"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0
	# --json carries persistent_term's bytes, which the model takes out of the literals
	run_gate run -q -C "$d" --json "$d/run.json"
	expect_rc 0
	grep -q '"persistent_term_memory":' "$d/run.json" || fail "no persistent_term_memory in --json"
	grep -q 'modules\{0,1\} compiled from this suite.s files, [0-9]* modules\{0,1\} loaded from disk' "$d/run.json" ||
		fail "the code row does not count the suite's own modules in --json"
	no_leftovers "$d"
}

# make realworld's classifier, on fixtures standing in for real projects: a clean suite is
# no false alarm; a gate failure on a suite whose tests pass is one (exit 1); a failing test
# is reported as such, not as a false alarm; with no real project, it says so and passes.
case_realworld_script_classifies() {
	local rw="$WORK/rw" out="$WORK/rw.out" rc
	mkdir -p "$rw/src" "$rw/apps"
	# no application: only the fixture standing in for a library suite runs
	local GATE_REALWORLD_APPS="$rw/apps"
	export GATE_REALWORLD_APPS
	cp -r "$FIX/clean" "$rw/src/clean"
	GATE_REALWORLD="$rw/src" sh "$ROOT/tests/bench/realworld.sh" 1 >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "realworld.sh on the clean fixture exited $rc: $(tail -n 5 "$out")"
	grep -Eq '^clean +28 +0 +0 +0 +0 ' "$out" || fail "no clean row with 0 false alarms: $(cat "$out")"
	rm -rf "$rw/src/clean"
	cp -r "$FIX/leak_binary" "$rw/src/leaky"
	GATE_REALWORLD="$rw/src" sh "$ROOT/tests/bench/realworld.sh" 1 >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "realworld.sh on a gate failure with passing tests exited $rc"
	grep -q 'FALSE ALARM' "$out" || fail "a gate failure with passing tests is no false alarm: $(cat "$out")"
	rm -rf "$rw/src/leaky"
	cp -r "$FIX/failing" "$rw/src/failing"
	GATE_REALWORLD="$rw/src" sh "$ROOT/tests/bench/realworld.sh" 1 >"$out" 2>&1
	rc=$?
	grep -q 'a test failed' "$out" || fail "a failing test is not reported as one: $(cat "$out")"
	expect_not_in "$out" "FALSE ALARM"
	# it fails in both runs of the round: a broken suite
	[ "$rc" -eq 1 ] || fail "realworld.sh on a suite whose test fails in every run exited $rc"
	expect_in "$out" "realworld: failing: tests failed in 2 of 2 runs (bare and gate)"
	rm -rf "$rw/src/failing"
	# a test that fails in its first run only (the bare one): a flaky test, reported, not a
	# broken suite
	cp -r "$FIX/clean" "$rw/src/flaky"
	cat >"$rw/src/flaky/test/flaky_once_test.exs" <<'EXS'
defmodule FlakyOnceTest do
  use ExUnit.Case

  test "fails the first time it runs in this folder" do
    ran = Path.join(File.cwd!(), "ran_once")
    first? = not File.exists?(ran)
    File.write!(ran, "")
    refute first?
  end
end
EXS
	GATE_REALWORLD="$rw/src" sh "$ROOT/tests/bench/realworld.sh" 1 >"$out" 2>&1
	expect_in "$out" "realworld: flaky round 1: bare exit 2, gate exit 0: a test failed (bare: 1, under gate: 0)"
	expect_not_in "$out" "the suite is broken here"
	expect_not_in "$out" "gate passed"
	GATE_REALWORLD="$rw/src" sh "$ROOT/tests/bench/realworld.sh" x >"$out" 2>&1
	[ $? -eq 2 ] || fail "realworld.sh with a bad round count did not exit 2"
	# a machine without real projects: one line per folder looked at, and the check passes
	GATE_REALWORLD="$rw/none" GATE_REALWORLD_APPS="$rw/apps" sh "$ROOT/tests/bench/realworld.sh" 1 >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "realworld.sh without real projects exited $rc: $(cat "$out")"
	expect_in "$out" "realworld: skipped library suites: no Mix project in $rw/none"
	expect_in "$out" "realworld: skipped applications: no Mix project in $rw/apps"
	expect_in "$out" "realworld: ok: skipped, no real project on this machine"
	no_leftovers "$rw"
}
