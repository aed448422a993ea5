# tests/e2e/cases/attribution.sh: leak attribution, sourced by tests/e2e/run.sh.

# One module plants a binary, ETS and process leak among clean modules; the failing
# rules' JUnit messages and the console name it first.
attribution_checks() { # DIR MODULE HOLDER
	local d=$1 m=$2 h=$3
	expect_rc 1
	expect_not_in "$ERR" "attribution is approximate"
	expect_in "$OUT" "Top growing test modules"
	expect_in "$OUT" "  1. $m"
	expect_in "$OUT" "ETS tables created during the run and left alive:"
	expect_in "$OUT" "test modules that left it behind"
	expect_in "$OUT" "attrib_cache, 20 000 rows"
	expect_in "$OUT" "spawned by Attrib.Holder.plant/1 (lib/attrib.ex:22), waiting in Process:sleep/1 x 200"
	expect_in "$OUT" "processes holding the most refc binary bytes after GC:"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" \
		--failures 3 \
		--failure-contains "process $h=likely culprit: $m (its processes hold 1" \
		--failure-contains "left_alive attrib_cache=likely culprit: $m (its processes own 1 ETS table of 2." \
		--failure-contains "born=likely culprit: $m (left 201 processes alive" \
		--failure-contains "process $h=1. $m"
	grep -q "<property name=\"gate.memory.binary.delta\"" "$d/_build/gate/junit.xml" ||
		fail "no module delta properties in the JUnit"
	no_leftovers "$d"
}

case_attribution_sync_module_named() {
	local d; d=$(fixture attrib)
	run_gate run -C "$d" -- --include leak_sync
	attribution_checks "$d" Attrib.LeakSyncTest Attrib.SyncHolder
	expect_in "$OUT" "Attrib.LeakSyncTest (sync)"
}

case_attribution_async_module_named() {
	local d; d=$(fixture attrib)
	run_gate run -C "$d" -- --include leak_async
	attribution_checks "$d" Attrib.LeakAsyncTest Attrib.AsyncHolder
	expect_in "$OUT" "Attrib.LeakAsyncTest (async: shared with"
}

# The hooked ExUnit.EventManager is compiled once and kept in _build/gate: the next run takes
# it from there (the same file, not written again), and a file that is not that module (cut
# short, replaced) is compiled and written again; the attribution stays synchronous each time.
case_attribution_hook_cached() {
	local d f ino; d=$(fixture attrib)
	run_gate run -C "$d" -- --include leak_sync
	attribution_checks "$d" Attrib.LeakSyncTest Attrib.SyncHolder
	f=$(ls "$d"/_build/gate/ex_unit_hook-*.beam 2>/dev/null)
	[ "$(echo "$f" | wc -w)" = 1 ] || fail "expected one hook file in _build/gate, got: $f"
	ino=$(stat -c %i "$f")
	run_gate run -C "$d" -- --include leak_sync
	attribution_checks "$d" Attrib.LeakSyncTest Attrib.SyncHolder
	[ "$(stat -c %i "$f")" = "$ino" ] || fail "the second run wrote the hook file again instead of taking it"
	printf 'not a beam' >"$f"
	run_gate run -C "$d" -- --include leak_sync
	attribution_checks "$d" Attrib.LeakSyncTest Attrib.SyncHolder
	[ "$(head -c 4 "$f")" = FOR1 ] || fail "a broken hook file was not replaced: $(head -c 20 "$f")"
	[ "$(ls "$d"/_build/gate | grep -c -v '^junit.xml$')" = 1 ] || fail "more than the hook file: $(ls -a "$d"/_build/gate)"
}

case_attribution_per_test() {
	local d; d=$(fixture attrib)
	run_gate run -C "$d" --per-test -- --include leak_sync
	expect_rc 1
	expect_not_in "$ERR" "attribution is approximate"
	expect_in "$ERR" "growth measured per test and module"
	expect_in "$OUT" "Top growing tests"
	expect_in "$OUT" "  1. Attrib.LeakSyncTest \"test starts a cache holder and never stops it\""
	junit_valid "$d/_build/gate/junit.xml"
	# the leaking test carries its deltas; a clean test beside it grew no ETS
	junit_check "$d/_build/gate/junit.xml" \
		--failure-contains "left_alive attrib_cache=likely culprit: Attrib.LeakSyncTest \"test starts a cache holder" \
		--property "test starts a cache holder and never stops it=gate.memory.binary.delta>15000000" \
		--property "test starts a cache holder and never stops it=gate.memory.ets.delta>2000000" \
		--property "test starts a cache holder and never stops it=gate.processes.delta>199"
	node "$ROOT/tests/junit/check.js" "$d/_build/gate/junit.xml" \
		--property "test a clean test beside it=gate.memory.ets.delta>100000" >/dev/null 2>&1 &&
		fail "the clean test beside the leak was charged with ETS growth"
	no_leftovers "$d"
}

# The clean suite passes with per-test attribution on: measuring adds no false alarm.
case_attribution_per_test_clean_passes() {
	local d; d=$(fixture attrib)
	run_gate run -C "$d" --per-test
	expect_rc 0
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--property "test sums=gate.memory.total.delta>-100000000"
	no_leftovers "$d"
}

# --per-test on thousands of one-line tests: the readings keep to their budget (a twentieth of
# the run's time), so most of those tests share a reading and carry no figures of their own
# (the console says how many were read alone); the slow test that leaks is read alone and
# named, with its figures in its testcase.
case_attribution_per_test_budget() {
	local d; d=$(fixture pertest_budget)
	run_gate run -C "$d" --per-test
	expect_rc 1
	expect_in "$OUT" "likely culprit: Budget.LeakTest \"test fills a cache table"
	grep -Eq "^Top growing tests \(by total; light readings at each test's edges, [0-9 ]+ of 4 002 tests read alone\):" "$OUT" ||
		fail "the console does not say how many of the 4 002 tests were read alone"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" \
		--property "test fills a cache table and leaves it=gate.memory.ets.delta>3000000"
	local measured
	measured=$(grep -c "gate.attribution: " "$d/_build/gate/junit.xml")
	[ "$measured" -gt 0 ] && [ "$measured" -lt 4002 ] ||
		fail "$measured testcases carry figures: expected some of the 4 002, not all"
	no_leftovers "$d"
}

# --per-test's readings keep to a budget of the run's time so far, compiling included, and
# other cases' nodes beside them eat into it: these run alone, after the others, on the
# fixture as in the repository (compiled in the run), as they were written for
e2e_serial attribution_per_test attribution_per_test_clean_passes attribution_per_test_budget
e2e_fresh attribution_per_test attribution_per_test_clean_passes attribution_per_test_budget
