# tests/e2e/cases/finelevel.sh, sourced by tests/e2e/run.sh: the fine level on the
# fine_nif fixture (a NIF built by the fixture's own Mix compiler): a NIF's enif_alloc blocks
# named by the NIF's module, a NIF's plain malloc seen as RSS outside the BEAM's allocators,
# a test's transient 200 MB list as the run's peak in that test, a GenServer holding a
# 3-million-element batch during one call named by [process] max_heap, the suite's own
# system monitor left alone and said so, and the same project without leaks passing.

# fine_fixture: a copy of the fine_nif fixture. Under make compat the Debian 13 chroot has no C
# compiler (gcc brings binutils, and binutils libjansson, which make release-compat, run next
# on the same chroot, must not find there), so the NIF is built here, by this machine's cc
# against the chroot's OTP headers (erts-*/include), and the fixture's Mix compiler finds it
# up to date, as it would after a make
fine_fixture() {
	local d inc
	d=$(fixture fine_nif)
	if [ -n "${GATE_COMPAT_ROOT:-}" ] && [ ! -x "$GATE_COMPAT_ROOT/usr/bin/cc" ]; then
		inc=$(ls -d "$GATE_COMPAT_ROOT"/usr/lib/erlang/erts-*/include 2>/dev/null | tail -n 1)
		mkdir -p "$d/priv"
		[ -n "$inc" ] && cc -O2 -fPIC -shared -I "$inc" -o "$d/priv/fine_nif.so" "$d/c_src/fine_nif.c" ||
			echo "    cannot build the fine_nif NIF against $GATE_COMPAT_ROOT's OTP headers" >&2
	fi
	echo "$d"
}

# fine_run DIR LEAK [GATE RUN ARGS...]: gate run with FINE_LEAK=LEAK (the fixture's switch)
fine_run() {
	local d=$1 leak=$2
	shift 2
	export FINE_LEAK=$leak
	run_gate run -C "$d" --json "$d/out.json" "$@"
	unset FINE_LEAK
}

# json_get FILE EXPR: a value of the --json document (python3's json), "None" when null
json_get() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

case_fine_clean_passes() {
	local d; d=$(fine_fixture)
	printf '[process]\nmax_heap = "40 MB"\n' >"$d/gate.toml"
	fine_run "$d" none
	expect_rc 0
	expect_in "$OUT" "Node memory (OS and allocators):"
	expect_in "$OUT" "allocated (carriers)"
	# the run's peak and RSS against the allocators are in the JSON, with figures
	[ "$(json_get "$d/out.json" "d['peak']['rss_peak'] > 0 and d['peak']['reset']")" = True ] ||
		fail "no resettable peak in the JSON: $(json_get "$d/out.json" "d['peak']")"
	[ "$(json_get "$d/out.json" "d['rss']['after']['rss'] > 0 and d['rss']['after']['mapped'] > 0")" = True ] ||
		fail "no RSS and mapped figures in the JSON"
	[ "$(json_get "$d/out.json" "d['peak']['monitor']")" = gate ] || fail "gate did not watch heaps"
	junit_valid "$d/_build/gate/junit.xml"
	grep -q 'name="rss outside the BEAM"\|name="outside the BEAM"' "$d/_build/gate/junit.xml" ||
		fail "the JUnit report has no rss testcase"
	no_leftovers "$d"
}

case_fine_enif_names_the_nif() {
	local d; d=$(fine_fixture)
	fine_run "$d" enif
	expect_rc 1
	expect_in "$d/_build/gate/junit.xml" "allocated by NIF FineNif.Native: +30 000 blocks ("
	expect_in "$d/_build/gate/junit.xml" "nif_internal); system grew"
	# one leak, one voice: the system finding carries the origin; nothing else fails
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	no_leftovers "$d"
}

case_fine_malloc_outside_the_beam() {
	local d; d=$(fine_fixture)
	# opt-in: by default the figures are reported, not judged
	fine_run "$d" malloc
	expect_rc 0
	expect_in "$d/_build/gate/junit.xml" "unaccounted (not judged: [rss] max_unaccounted is off)"
	printf '[rss]\nmax_unaccounted = "32 MB"\n' >>"$d/gate.toml"
	fine_run "$d" malloc
	expect_rc 1
	expect_in "$d/_build/gate/junit.xml" "outside the BEAM's allocators (a NIF's malloc"
	expect_in "$d/_build/gate/junit.xml" "likely culprit: FineNif.NativeTest (RSS +"
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	[ "$(json_get "$d/out.json" "d['rss']['unaccounted'] > 50000000")" = True ] ||
		fail "the JSON's unaccounted RSS is not the 60 MB leaked: $(json_get "$d/out.json" "d['rss']")"
	no_leftovers "$d"
}

case_fine_peak_names_the_test() {
	local d; d=$(fine_fixture)
	printf '[peak]\nmax = "400 MB"\n' >"$d/gate.toml"
	fine_run "$d" peak --per-test --summary "$d/summary.md" --html "$d/report.html"
	expect_rc 1
	expect_in "$OUT" "peak RSS"
	# the run's peak, the node's high-water mark and the allocated peak, in every report
	# (the console wraps long lines: read with its line breaks and indents as one space)
	tr -s ' \n' '  ' <"$OUT" | grep -qF "allocated peak (carriers) at most" ||
		fail "the console does not give the allocated peak"
	expect_in "$d/summary.md" "allocated peak (carriers) at most"
	expect_in "$d/report.html" "allocated peak (carriers) at most"
	expect_in "$d/_build/gate/junit.xml" "in FineNif.PeakTest, test &quot;test builds a big list for a moment&quot;"
	# the transient list's memory went back to the BEAM (mseg's cache): no RSS finding; the
	# run's peak and the test's own max_peak tag fail
	expect_not_in "$OUT" "outside the BEAM's allocators"
	expect_in "$OUT" "gate: FAILED (2 memory rules)"
	[ "$(json_get "$d/out.json" "d['peak']['rss_peak'] > 400000000")" = True ] ||
		fail "the JSON's peak is not above the limit"
	# the allocated peak: the allocators' highest carriers, raised by the run's 200 MB list
	[ "$(json_get "$d/out.json" "d['peak']['allocated_peak_raised'] and d['peak']['allocated_peak'] > 200000000 and d['peak']['allocated_peak_before'] < d['peak']['allocated_peak']")" = True ] ||
		fail "the JSON's allocated peak did not see the list: $(json_get "$d/out.json" "d['peak']")"
	expect_in "$d/_build/gate/junit.xml" "allocated peak (carriers) at most "
	no_leftovers "$d"
}

# --per-test reads a test's finish only when the last reading is older than ten times its
# cost, so short tests share a window: the untagged test that built the peak is still named,
# the window's other tests having taken under a tenth of its time.
case_fine_peak_untagged_per_test() {
	local d; d=$(fine_fixture)
	printf '[peak]\nmax = "400 MB"\n' >"$d/gate.toml"
	sed -i '/@tag gate: \[max_peak/d' "$d/test/peak_test.exs"
	sed -i 's/^  use ExUnit.Case$/  use ExUnit.Case\n  for i <- 1..40, do: test("quick #{i}", do: assert(true))/' \
		"$d/test/peak_test.exs"
	fine_run "$d" peak --per-test
	expect_rc 1
	expect_in "$d/_build/gate/junit.xml" "in FineNif.PeakTest, test &quot;test builds a big list for a moment&quot;"
	no_leftovers "$d"
}

case_fine_batch_names_the_genserver() {
	local d; d=$(fine_fixture)
	printf '[process]\nmax_heap = "40 MB"\n' >"$d/gate.toml"
	fine_run "$d" batch
	expect_rc 1
	# the JUnit message: the console wraps long lines
	expect_in "$d/_build/gate/junit.xml" "process FineNif.Batcher (&lt;0."
	expect_in "$d/_build/gate/junit.xml" "during FineNif.PeakTest test &quot;test sums a batch through the batcher&quot;, over the limit 40.0 MB"
	no_leftovers "$d"
}

case_fine_suite_monitor_left_alone() {
	local d; d=$(fine_fixture)
	printf '[process]\nmax_heap = "40 MB"\n' >"$d/gate.toml"
	export FINE_MONITOR=1
	fine_run "$d" batch
	unset FINE_MONITOR
	# the suite's monitor replaced gate's during the run: gate says so and does not fail on
	# heaps it could not watch
	expect_rc 0
	expect_in "$OUT" "system monitor: replaced during the run by"
	no_leftovers "$d"
}

case_fine_bad_sizes() {
	local d; d=$(fine_fixture)
	printf '[peak]\nmax = "lots"\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "peak.max"
	printf '[rss]\nmax_unaccounted = -3\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "rss.max_unaccounted"
	printf '[process]\nmax_heap = "12 parsecs"\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "process.max_heap"
	# a test's own limit that does not parse: its file, line and test, and the fix
	rm -f "$d/gate.toml"
	sed -i 's/max_peak: "100 MB"/max_peak: "lots"/' "$d/test/peak_test.exs"
	FINE_LEAK=none run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "test/peak_test.exs:6: FineNif.PeakTest \"test builds a big list for a moment\": gate: max_peak: \"lots\" is not a size; write e.g. max_peak: \"1 MB\""
	no_leftovers "$d"
}

case_fine_instrument() {
	local d; d=$(fine_fixture)
	fine_run "$d" none --instrument
	expect_rc 0
	# every allocator tags its blocks: far more {origin, type} pairs than driver_alloc's and
	# binary_alloc's own
	[ "$(json_get "$d/out.json" "len(set(o['type'] for o in d['after']['fine']['origins'])) > 20")" = True ] ||
		fail "--instrument did not tag every allocator"
	# boot flags cannot change a running node
	run_gate run -C "$d" --instrument --attach "gate_nobody_$RANDOM@127.0.0.1"
	expect_rc 2
	expect_in "$ERR" "--instrument tags allocations at the node's boot"
	no_leftovers "$d"
}

case_fine_max_peak_tag() {
	local d; d=$(fine_fixture)
	# no [peak] max, no --per-test: the test's @tag gate: [max_peak: "100 MB"] alone
	fine_run "$d" peak
	expect_rc 1
	expect_in "$d/_build/gate/junit.xml" "FineNif.PeakTest &quot;test builds a big list for a moment&quot; peaked at RSS"
	expect_in "$d/_build/gate/junit.xml" "over its @tag gate max_peak 100.0 MB"
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	# the same test without the leak is within it
	fine_run "$d" none
	expect_rc 0
	expect_in "$d/_build/gate/junit.xml" "within its @tag gate max_peak 100.0 MB"
	no_leftovers "$d"
}

# --cluster: every node's fine level is judged as one node's is: a process that builds a big
# batch on the second node fails [process] max_heap there, named, in that node's suite (and
# nothing else: the batch is let go); the attached node, where nothing grew, passes.
case_fine_cluster_heap_on_one_node() {
	cl_start 2
	local a=${CL_NODES[0]} b=${CL_NODES[1]} d
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	printf '[process]\nmax_heap = "40 MB"\n' >"$d/gate.toml"
	HOME="$CL_HOME" run_attached -C "$d" --attach "$a" --cluster \
		--exec "$FIX/workload/big_heap.sh $b"
	expect_rc 1
	expect_in "$OUT" "workload: a batch of 3000000 elements on $b"
	junit_valid "$d/_build/gate/junit.xml"
	suites_check "$d/_build/gate/junit.xml" "$b=failures" "$a=clean"
	expect_in "$d/_build/gate/junit.xml" "process workload_batcher (&lt;"
	expect_in "$d/_build/gate/junit.xml" "over the limit 40.0 MB"
	# one cause, one failure: the heap, in the second node's suite; each node's own peak
	[ "$(xpath_count "$d/_build/gate/junit.xml" "//testsuite[@name='gate.memory[$b]']/testcase[failure]")" = 1 ] ||
		fail "node $b's suite does not have exactly one failure"
	[ "$(xpath_count "$d/_build/gate/junit.xml" "//testcase[@classname='gate.memory.heap[$b]' and @name='heap workload_batcher']/failure")" = 1 ] ||
		fail "node $b's heap testcase does not fail"
	[ "$(xpath_count "$d/_build/gate/junit.xml" "//testcase[@classname='gate.memory.peak[$a]' and @name='run']")" = 1 ] ||
		fail "node $a has no peak testcase"
	expect_in "$d/_build/gate/junit.xml" "allocated peak (carriers) at most"
	cl_no_probe "$a" "$b"
	rm -rf "$d"
	cl_stop
}

# A node gate cannot read the OS figures of (no /proc: another OS, a container without it;
# here a node in a mount namespace with an empty /proc): attached, its RSS and peak limits are
# skipped saying why, on the console and in the JUnit report; nothing fails for it and
# nothing is silently dropped.
case_fine_attach_without_proc() {
	if [ "$(id -u)" != 0 ] || ! unshare --mount --propagation private true 2>/dev/null; then
		echo "    note: not root (or no mount namespace): cannot hide /proc from a node; case not run"
		return
	fi
	cl_start 0
	local n="e2e_noproc_$RANDOM$RANDOM@127.0.0.1" d
	(cd "$CL_HOME" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT &&
		exec unshare --mount --propagation private sh -c 'mount -t tmpfs none /proc && exec erl -noshell -name "$0" -start_epmd false -kernel inet_dist_use_interface "{127,0,0,1}" -eval "spawn(fun() -> timer:sleep(300000), halt() end)."' "$n") >/dev/null 2>&1 &
	CL_PIDS+=("$!")
	cl_wait_registered "$n"
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	printf '[rss]\nmax_unaccounted = "32 MB"\n[peak]\nmax = "1 GB"\n' >"$d/gate.toml"
	run_attached -C "$d" --attach "$n" --exec true
	expect_rc 0
	expect_in "$OUT" "RSS not measured: cannot read /proc/self/status in the node"
	expect_in "$OUT" "peak not measured: cannot read /proc/self/status in the node"
	expect_in "$d/_build/gate/junit.xml" "not measured: cannot read /proc/self/status in the node"
	[ "$(xpath_count "$d/_build/gate/junit.xml" "//testcase[starts-with(@classname, 'gate.memory.rss') and @name='outside the BEAM']/skipped")" = 1 ] ||
		fail "the rss testcase is not skipped"
	[ "$(xpath_count "$d/_build/gate/junit.xml" "//testcase[starts-with(@classname, 'gate.memory.peak') and @name='run']/skipped")" = 1 ] ||
		fail "the peak testcase is not skipped"
	cl_no_probe "$n"
	rm -rf "$d"
	cl_stop
}

# max_peak on a test that cannot be measured: an async test shares its window with its
# neighbours; it is said not judged, with the fix, and does not fail.
case_fine_max_peak_async_said() {
	local d; d=$(fine_fixture)
	sed -i 's/use ExUnit.Case$/use ExUnit.Case, async: true/' "$d/test/peak_test.exs" "$d/test/native_test.exs"
	fine_run "$d" peak
	expect_rc 0
	expect_in "$d/_build/gate/junit.xml" "max_peak 100.0 MB not judged: an async test shares its window with the tests running alongside, so its peak is not its own; make its module async: false to judge it"
	no_leftovers "$d"
}
