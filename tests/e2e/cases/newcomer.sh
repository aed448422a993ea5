# tests/e2e/cases/newcomer.sh: what a person new to gate meets first, as they meet it: a
# failing finding that ends with the command explaining its rule, that command, and `--json -`
# whose stdout a program reads whole while mix's and gate's own lines go to stderr. Sourced by
# tests/e2e/run.sh (helpers there).

# stdout must be one JSON document and nothing else (node reads it as a program would)
json_only() { # FILE
	node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$1" 2>"$WORK/json.err" ||
		fail "stdout is not one JSON document: $(head -c 300 "$WORK/json.err"); stdout begins: $(head -c 200 "$1")"
}

# A project that still needs compiling and has a failing test: stdout is the run's JSON alone
# (the compiler's "Compiling 1 file", the test output and gate's summary are on stderr).
case_json_stdout_run() {
	local d
	d=$(fixture failing)
	run_gate run -C "$d" --json -
	expect_rc 1
	json_only "$OUT"
	expect_in "$OUT" '"findings"'
	expect_not_in "$OUT" "Compiling"
	expect_not_in "$OUT" "gate: FAILED"
	expect_in "$ERR" "Compiling"
	expect_in "$ERR" "gate: FAILED"
	expect_in "$ERR" "test the answer is right"
	[ -e "$d/-" ] && fail "--json - wrote a file named '-'"
	no_leftovers "$d"
}

# gate snapshot --json - on a project that needs compiling: the same.
case_json_stdout_snapshot() {
	local d
	d=$(fixture clean)
	run_gate snapshot -C "$d" --json -
	expect_rc 0
	json_only "$OUT"
	expect_in "$OUT" '"processes"'
	expect_not_in "$OUT" "Generated"
	expect_in "$ERR" "Generated"
	no_leftovers "$d"
}

# A leak's finding ends with `gate explain RULE`, in the console and in the JUnit failure; the
# command explains the rule; an unknown rule is a usage error that lists the rules.
case_explain_after_failure() {
	local d
	d=$(fixture leak_ets)
	run_gate run -C "$d"
	expect_rc 1
	expect_in "$OUT" "gate explain ets: its usual causes and fixes"
	expect_in "$d/_build/gate/junit.xml" "gate explain ets: its usual causes and fixes"
	run_gate explain ets
	expect_rc 0
	expect_in "$OUT" "What it measures"
	expect_in "$OUT" "Usual causes"
	expect_in "$OUT" "Usual fixes"
	expect_in "$OUT" "[ets] max_total"
	run_gate explain --list
	expect_rc 0
	expect_in "$OUT" "persistent_term"
	run_gate explain nope
	expect_rc 2
	expect_in "$ERR" "no rule named nope (the rules: growth, ets,"
	no_leftovers "$d"
}
