# tests/e2e/cases/config_init.sh, sourced by tests/e2e/run.sh: `gate config init` on a project
# that has no gate.toml writes a short one (every value at its default) that `gate config
# check` accepts and `gate run` passes the clean fixture with; run again, it refuses to write
# over the file (exit 2, the file unchanged, no temp file left) and says how to go on.

case_config_init_check_run_refuse() {
	local d sum
	d=$(fixture clean)
	[ ! -e "$d/gate.toml" ] || fail "the clean fixture already has a gate.toml"
	# the default FILE: gate.toml in the current directory
	cd "$d" || { fail "cannot cd to $d"; return; }
	run_gate config init
	cd - >/dev/null || return
	expect_rc 0
	expect_in "$ERR" "gate: wrote gate.toml ("
	[ "$(wc -l <"$ERR")" -eq 1 ] || fail "stderr is not one line: $(cat "$ERR")"
	[ ! -s "$OUT" ] || fail "stdout is not empty: $(head -n 3 "$OUT")"
	[ -f "$d/gate.toml" ] || { fail "no $d/gate.toml written"; return; }
	[ "$(wc -l <"$d/gate.toml")" -lt 80 ] || fail "gate.toml has $(wc -l <"$d/gate.toml") lines"
	expect_in "$d/gate.toml" "gate config reference"
	expect_in "$d/gate.toml" "# ets = \"warn\""

	run_gate config check "$d/gate.toml"
	expect_rc 0
	expect_in "$ERR" "gate: $d/gate.toml is valid"
	expect_in "$OUT" "[baseline]"

	run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	junit_valid "$d/_build/gate/junit.xml"

	sum=$(cksum <"$d/gate.toml")
	run_gate config init "$d/gate.toml"
	expect_rc 2
	expect_in "$ERR" "gate: error: $d/gate.toml: already exists"
	expect_in "$ERR" "remove it first, or pass another FILE"
	[ "$(cksum <"$d/gate.toml")" = "$sum" ] || fail "a refused init changed $d/gate.toml"
	if ls -A "$d" | grep -q '\.tmp\.'; then fail "a temp file was left: $(ls -A "$d")"; fi
	no_leftovers "$d"
}
