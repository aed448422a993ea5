# tests/e2e/cases/actionable.sh, sourced by tests/e2e/run.sh: a failing finding someone can act
# on (tests/fixtures/feedblame, one shape per tag): the module that grew a structure is its
# culprit, not the one that started its process; the code that spawned a group of processes
# is named; `--confirm` runs the culprit's file alone; every finding naming a test module ends
# with the command that reproduces it.

# one_failure JUNIT: the JUnit file is valid and has exactly one failing testcase, whose
# message is then in $MSG (the first one's, to show what failed otherwise)
one_failure() {
	junit_valid "$1"
	[ "$(grep -c '<failure ' "$1")" = 1 ] || fail "want one failing testcase: $(grep -o '<failure message="[^"]*"' "$1" | cut -c1-300)"
	MSG=$(grep -o '<failure message="[^"]*"' "$1" | head -n 1)
}

# A server started (unlinked) in one module's setup_all, fed 20 000 entries by another's
# tests: the feeder is the culprit, the starter is said as context.
case_actionable_feeder_blamed() {
	local d j msg
	d=$(fixture feedblame)
	run_gate run -C "$d" -- --only feed --seed 0
	expect_rc 1
	j="$d/_build/gate/junit.xml"
	one_failure "$j"
	msg=$MSG
	case "$msg" in
	*"likely culprit: FeedBlame.FeederTest ("*"started by FeedBlame.StarterTest)"*) ;;
	*) fail "the feeder is not the culprit with its starter as context: $msg" ;;
	esac
	case "$msg" in *"likely culprit: FeedBlame.StarterTest"*) fail "the starter is blamed: $msg" ;; esac
	# the finding ends with the command that reproduces it, the run's arguments kept
	case "$msg" in
	*"; reproduce: gate run -C $d -- test/feeder_test.exs --only feed --seed 0\""*) ;;
	*) fail "no reproduce line at the end: $msg" ;;
	esac
	grep -q '^    reproduce: gate run -C' "$OUT" || fail "the console has no reproduce line of its own"
	no_leftovers "$d"
}

# spawned_group SHAPE NAMED MODULE FILE: gate run --only SHAPE on the fixture fails as one
# finding that names the group NAMED (its spawner, then where it waits), never by where it
# waits alone, with MODULE as culprit and FILE in its reproduce line.
spawned_group() {
	local d
	d=$(fixture feedblame)
	run_gate run -C "$d" -- --only "$1"
	expect_rc 1
	one_failure "$d/_build/gate/junit.xml"
	case "$MSG" in *"$2"*) ;; *) fail "the spawning code is not named as \"$2\": $MSG" ;; esac
	case "$MSG" in *"spawned fun in"*) fail "a group is still named by where it waits alone: $MSG" ;; esac
	case "$MSG" in *"likely culprit: $3"*) ;; *) fail "the test module is not named: $MSG" ;; esac
	case "$MSG" in *"reproduce: gate run -C $d -- $4 --only $1"*) ;; *) fail "no reproduce line naming the test: $MSG" ;; esac
	no_leftovers "$d"
}

# A library function spawning 3 000 workers that wait for a job: the group is named by the
# function that spawned them, with the file and line of the fun, before where they wait.
case_actionable_spawner_named() {
	local line
	line=$(grep -n '      spawn(fn ->' "$FIX/feedblame/lib/feed_blame.ex" | cut -d: -f1)
	spawned_group spawn "spawned by FeedBlame.Pool.start_workers/1 (lib/feed_blame.ex:$line), waiting in that fun x 3 000" \
		FeedBlame.PoolTest test/pool_test.exs
}

# The issue's own shape: a library function spawning 3 000 processes with
# `fn -> Process.sleep(:infinity) end`. Such a process keeps nothing of its fun (initial call
# erlang:apply/2, its stack Process.sleep/1 alone): the spawn seen as it happened names the
# function and the line of the fun, then where the processes wait.
case_actionable_spawner_named_sleeping() {
	local line
	line=$(grep -n 'spawn(fn -> Process.sleep(:infinity) end)' "$FIX/feedblame/lib/feed_blame.ex" | cut -d: -f1)
	spawned_group sleep "spawned by FeedBlame.Sleepers.start/1 (lib/feed_blame.ex:$line), waiting in Process:sleep/1 x 3 000" \
		FeedBlame.SleepersTest test/sleepers_test.exs
}

# --confirm on the two-module case: the feeder alone grows nothing (the server is not
# running), said in the finding with the module it needs; the verdict stays the first run's,
# and the confirming run leaves nothing behind.
case_actionable_confirm_not_alone() {
	local d j msg
	d=$(fixture feedblame)
	run_gate run --confirm -C "$d" -- --only feed --seed 0
	expect_rc 1
	j="$d/_build/gate/junit.xml"
	one_failure "$j"
	msg=$MSG
	case "$msg" in
	*"; not reproduced alone: it needs what ran before it (FeedBlame.StarterTest); reproduce: gate run -C $d -- test/feeder_test.exs"*) ;;
	*) fail "no \"not reproduced alone\" naming the starter: $msg" ;;
	esac
	expect_in "$OUT" "not reproduced alone: it needs what ran before it (FeedBlame.StarterTest)"
	expect_in "$ERR" "confirming: test/feeder_test.exs alone in a fresh node, --repeat 3"
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	no_leftovers "$d"
}

# A leak inside one module (a table its tests fill): confirmed alone, with what it grows in
# each run, in the JUnit, the --json, the step summary and the console; [run] confirm = true
# in gate.toml asks for it as --confirm does.
case_actionable_confirm_alone() {
	local d j msg
	d=$(fixture feedblame)
	printf '[run]\nconfirm = true\n' >"$d/gate.toml"
	run_gate run -C "$d" --json "$d/run.json" --summary "$d/summary.md" -- --only cache
	expect_rc 1
	j="$d/_build/gate/junit.xml"
	one_failure "$j"
	msg=$MSG
	case "$msg" in
	*"likely culprit: FeedBlame.CacheTest"*"; confirmed alone: test/cache_test.exs grows ETS table feed_blame_cache by +"*" in each run; reproduce: gate run -C $d -- test/cache_test.exs --only cache\""*) ;;
	*) fail "not confirmed alone: $msg" ;;
	esac
	grep -q '"confirm": *"confirmed alone: test/cache_test.exs grows ETS table feed_blame_cache' "$d/run.json" || fail "--json lacks the confirmation"
	grep -q '"reproduce": *"reproduce: gate run -C ' "$d/run.json" || fail "--json lacks the reproduce line"
	grep -q '^  - confirmed alone' "$d/summary.md" || fail "the step summary lacks the confirmation: $(grep -A3 Culprits "$d/summary.md")"
	grep -q '^  - reproduce' "$d/summary.md" || fail "the step summary lacks the reproduce line"
	expect_in "$OUT" "confirmed alone: test/cache_test.exs grows ETS table"
	no_leftovers "$d"
}

# --confirm costs nothing on a passing run, and is skipped, said so, without a single culprit
# module (two leaks of two modules).
case_actionable_confirm_pass_and_skip() {
	local d
	d=$(fixture feedblame)
	run_gate run --confirm -C "$d"
	expect_rc 0
	expect_not_in "$ERR" "confirming:"
	expect_not_in "$OUT" "confirm: skipped"
	expect_not_in "$OUT" "alone:"
	run_gate run --confirm -C "$d" -- --only cache --only spawn
	expect_rc 1
	expect_in "$OUT" "confirm: skipped, the findings name more than one culprit test module"
	expect_not_in "$ERR" "confirming: test/"
	no_leftovers "$d"
}

# The confirming run is bounded by [run] confirm_timeout: one that never ends in time is
# stopped with its node, and the finding says so; the verdict stays the first run's.
case_actionable_confirm_timeout() {
	local d j msg
	d=$(fixture feedblame)
	printf '[run]\nconfirm_timeout = "4 s"\n' >"$d/gate.toml"
	FEEDBLAME_CONFIRM_SLOW=1 run_gate run --confirm -C "$d" -- --only cache
	expect_rc 1
	j="$d/_build/gate/junit.xml"
	junit_valid "$j"
	msg=$(grep -o '<failure message="[^"]*"' "$j" | head -n 1)
	case "$msg" in
	*"; not confirmed alone: it ran past [run] confirm_timeout; reproduce: "*) ;;
	*) fail "the timeout is not said: $msg" ;;
	esac
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	no_leftovers "$d"
}
