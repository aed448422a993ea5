# tests/e2e/cases/onevoice.sh, sourced by tests/e2e/run.sh: one leak, one voice in
# the merge-request configuration too. A baseline is committed from a clean run in a real git
# repository, then each kind of single leak (tests/fixtures/onevoice, one tagged test each)
# runs with --baseline-ref and GITHUB_ACTIONS=true: exactly one failing memory testcase and
# one ::error annotation, naming the structure; the same without a baseline. The JUnit
# validates against the strict schema (file/line stripped), clean and failing.

# onevoice_repo [TOML]: the fixture in a fresh git repository (gate.toml when given), its
# baseline committed from a clean run (every leak is excluded by default); prints the path
onevoice_repo() {
	local d
	d=$(git_fixture onevoice)
	if [ -n "${1:-}" ]; then
		printf '%b' "$1" >"$d/gate.toml"
		git_in "$d" add gate.toml >/dev/null
		git_in "$d" commit -q -m "gate.toml" >/dev/null
	fi
	run_gate run -q -C "$d" --update-baseline --commit
	[ "$RC" -eq 0 ] || fail "the clean run that makes the baseline exited $RC: $(tail -n 5 "$ERR")"
	junit_valid "$d/_build/gate/junit.xml" # clean: valid against the strict schema
	echo "$d"
}

# one_voice DIR KIND TEXT [GATE RUN ARGS...]: the leak KIND fails exactly one memory testcase
# and one annotation, both naming TEXT; every test passes
one_voice() {
	local d=$1 kind=$2 text=$3 n a msg
	shift 3
	GITHUB_ACTIONS=true GITHUB_WORKSPACE="$d" run_gate run -C "$d" "$@" -- --only "$kind"
	expect_rc 1
	local j="$d/_build/gate/junit.xml"
	junit_valid "$j" # failing: valid too
	n=$(grep -c '<failure ' "$j")
	a=$(grep -c '^::error' "$OUT")
	[ "$n" = 1 ] || fail "$kind: $n failing testcases, want 1: $(grep -o '<failure message="[^"]*"' "$j" | cut -c1-160)"
	[ "$a" = 1 ] || fail "$kind: $a error annotations, want 1: $(grep '^::error' "$OUT" | cut -c1-160)"
	msg=$(grep -o '<failure message="[^"]*"' "$j" | head -n 1)
	case "$msg" in
	*"$text"*) ;;
	*) fail "$kind: the failure does not name \"$text\": $msg" ;;
	esac
	grep '^::error' "$OUT" | grep -qF -- "$text" || fail "$kind: the annotation does not name \"$text\""
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_not_in "$j" "<properties><property name=\"mix.app\"" # none inside a testcase
}

# one_voice_both KIND TEXT [TOML]: in the merge-request configuration, then without a baseline
one_voice_both() {
	local kind=$1 text=$2 toml=${3:-} d base
	d=$(onevoice_repo "$toml")
	base=$(git -C "$d" rev-parse HEAD)
	one_voice "$d" "$kind" "$text" --baseline-ref "$base"
	expect_in "$ERR" "baseline: $base:.gate/baseline.json at commit"
	# the baseline's comparison is one testcase, its rows context
	[ "$(grep -c 'classname="gate.memory.baseline"' "$d/_build/gate/junit.xml")" = 1 ] ||
		fail "$kind: the baseline comparison is not one testcase"
	rm -rf "$d/.git" "$d/.gate"
	one_voice "$d" "$kind" "$text"
	ONEVOICE_DIR=$d
	no_leftovers "$d"
}

case_onevoice_ets_table() {
	one_voice_both ets "ETS table onevoice_sessions (owner OneVoice.Sessions) +60 000 rows"
	# the binary row says what explains it (the console wraps it; the JUnit has it whole)
	expect_in "$ONEVOICE_DIR/_build/gate/junit.xml" "context: explained by ETS table onevoice_sessions"
}
case_onevoice_persistent_term() {
	one_voice_both pterm "persistent_term {OneVoice.Settings, _} x 4 000"
}
case_onevoice_atoms() { one_voice_both atoms "onevoice_user_# x 60 000"; }
case_onevoice_binary_holder() {
	one_voice_both binary "process OneVoice.Holder ("
	expect_in "$OUT" "holds 300 refc binaries"
}
case_onevoice_processes() { one_voice_both procs "OneVoice.Worker:init/1 x 500"; }
case_onevoice_mailbox() {
	one_voice_both mailbox "process OneVoice.Sink (" # the sink
	expect_in "$OUT" "has 20 000 messages in its mailbox"
}
case_onevoice_genserver_state() {
	one_voice_both state "process OneVoice.Registry ("
}
case_onevoice_ets_cap() {
	one_voice_both ets "ETS table onevoice_sessions (owner OneVoice.Sessions) grew" \
		'[[ets.table]]\nname = "onevoice_*"\nmax_bytes = "2 MB"\n'
}
case_onevoice_table_group() {
	one_voice_both tables "400 ETS tables \`leaked\` (owner OneVoice.Holder) created during the run still alive"
	expect_in "$OUT" "MB together"
}
case_onevoice_ports() { one_voice_both ports "port cat x 300"; }
case_onevoice_monitors() {
	one_voice_both monitors "process OneVoice.Pool ("
	expect_in "$OUT" "holds 30 000 monitors"
	expect_in "$OUT" "(the other end: <0."
	# the pool's small table that happens to be called monitors is no explanation
	expect_not_in "$OUT" "ETS table monitors"
}

# A failing ExUnit test's annotation is placed on its line, as a memory finding's is.
case_onevoice_failing_test_placed() {
	local d; d=$(fixture failing)
	GITHUB_ACTIONS=true run_gate run -C "$d"
	expect_rc 1
	grep -q '^::error file=test/[a-z_]*_test.exs,line=[0-9]*,title=' "$OUT" ||
		fail "a failing test's annotation has no file= and line=: $(grep '^::error' "$OUT" | head -n 2)"
	junit_valid "$d/_build/gate/junit.xml"
	no_leftovers "$d"
}

# The merge-request configuration with --repeat 3: the holder keeps 19 MB more in every run;
# the rules judge runs 2..3, the baseline's binary row sees all 3 runs against one clean run:
# still one failing testcase and one annotation, the holder's (the baseline row is context).
case_onevoice_repeat_baseline() {
	local d base
	d=$(onevoice_repo)
	base=$(git -C "$d" rev-parse HEAD)
	one_voice "$d" binary "process OneVoice.Holder (" --baseline-ref "$base" --repeat 3
	expect_in "$d/_build/gate/junit.xml" "context: explained by"
	no_leftovers "$d"
}
