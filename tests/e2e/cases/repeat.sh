# tests/e2e/cases/repeat.sh: telling a leak from warm-up: gate run --repeat, --sample and
# gate watch on real nodes. Sourced by tests/e2e/run.sh (uses attach.sh's cluster helpers).

# js FILE EXPR: evaluates EXPR with `d` the JSON in FILE; fails the case unless it is true
js_true() {
	node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		if (!(eval(process.argv[2]))) { console.log("false: " + process.argv[2]); process.exit(1); }' \
		"$1" "$2" >"$WORK/js.out" 2>&1 || fail "$(basename "$1"): $(tail -n 2 "$WORK/js.out")"
}

# A cache that fills with the same 60 000 keys every run: one before/after pair calls it a
# leak; --repeat 3 sees runs 2 and 3 add nothing and passes. Per-run figures in every output.
case_repeat_warmup_passes() {
	local d; d=$(fixture warmup)
	run_gate run -C "$d"
	expect_rc 1
	expect_in "$OUT" "ets grew"
	run_gate run -C "$d" --repeat 3 --json "$d/run.json" --html "$d/report.html" \
		--junit "$d/junit.xml"
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	expect_in "$OUT" "Runs (--repeat 3)"
	expect_in "$OUT" "1 (warm)"
	expect_in "$OUT" "judged: the smallest growth of runs 2..3, times 2"
	expect_in "$ERR" "run 3 of 3 (--repeat)"
	# the peak tracker started after the warm-up runs to the last snapshot (it stopped at
	# the snapshot after run 2, and the last one said it was never started)
	expect_in "$OUT" "peak RSS"
	expect_not_in "$OUT" "peak not measured"
	junit_valid "$d/junit.xml"
	junit_check "$d/junit.xml" --failures 0 --errors 0
	grep -q '<property name="gate.repeat.runs" value="3"/>' "$d/junit.xml" ||
		fail "no gate.repeat.runs property in the JUnit"
	grep -q '<property name="gate.repeat.run.3.ets.delta" value="' "$d/junit.xml" ||
		fail "no per-run ets property in the JUnit"
	js_true "$d/run.json" 'd.iterations.length === 4 && d.iterations[1].warmup === true &&
		d.iterations.every((it, k) => it.run === k && it.memory.ets > 0) &&
		d.iterations[1].delta.ets > 5e6 && Math.abs(d.iterations[3].delta.ets) < 1e6 &&
		d.iterations[3].tests >= 2 && d.iterations[3].failed === 0'
	expect_in "$d/report.html" '<section id="runs">'
	expect_in "$d/report.html" 'data-run="3"'
	no_leftovers "$d"
}

# A log that grows by 30 000 fresh rows every run fails with --repeat 3, named as a leak.
case_repeat_growth_fails() {
	local d; d=$(fixture grows)
	run_gate run -C "$d" --repeat 3
	expect_rc 1
	expect_in "$OUT" "gate: FAILED"
	expect_in "$OUT" "ets grew"
	expect_in "$OUT" "judged: the smallest"
	junit_valid "$d/_build/gate/junit.xml"
	# the culprit from the JUnit message: the console wraps long lines
	junit_check "$d/_build/gate/junit.xml" --failure-contains "ets=--repeat 3: runs 2..3 grew +3" \
		--failure-contains "ets=likely culprit: Grows.LogTest"
	no_leftovers "$d"
}

# A test that fails in run 1 only still fails the gate, named with its run; bad --repeat
# values are usage errors; [run] repeat in gate.toml works like --repeat.
case_repeat_failure_in_any_run() {
	local d; d=$(fixture warmup)
	run_gate run -C "$d" --repeat 2 -- --include first_run_fails
	expect_rc 1
	expect_in "$OUT" "passes from the second run on (run 1)"
	junit_check "$d/_build/gate/junit.xml" --failures 1
	# a test that leaves the node in a removed directory: the next run starts all the same
	run_gate run -C "$d" --repeat 2 -- --include leaves_cwd
	expect_rc 0
	printf '[run]\nrepeat = 2\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "Runs (--repeat 2)"
	printf '[run]\nrepeat = 0\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "gate.toml:2"
	for bad in 1 101 x; do
		run_gate run -C "$d" --repeat "$bad"
		expect_rc 2
		expect_in "$ERR" "--repeat $bad: expected a number of runs"
	done
	run_gate run -C "$d" --repeat 2 --exec true
	expect_rc 2
	run_gate run -C "$d" --sample 2parsecs
	expect_rc 2
	expect_in "$ERR" "--sample 2parsecs: expected an interval"
	no_leftovers "$d"
}

# Light snapshots every 250 ms while a 3 s workload runs: in --json and as charts.
case_sample_exec_chart() {
	local d; d=$(fixture warmup)
	run_gate run -C "$d" --exec 'sleep 3' --sample 250ms --json "$d/run.json" --html "$d/report.html"
	expect_rc 0
	expect_in "$ERR" "samples taken every 250 ms"
	js_true "$d/run.json" 'd.samples.count >= 5 && d.samples.samples.length === d.samples.count &&
		d.samples.interval_ms === 250 &&
		d.samples.samples.every((s, i, a) => s.memory.total > 0 && s.process_count > 0 &&
			(i === 0 || s.t_ms > a[i - 1].t_ms)) &&
		d.samples.samples[d.samples.count - 1].t_ms >= 2000'
	expect_in "$d/report.html" '<section id="samples">'
	expect_in "$d/report.html" '<figure class="series" data-category="total">'
	expect_in "$d/report.html" '<polyline class="line" points="'
	expect_not_in "$d/report.html" "<script"
	no_leftovers "$d"
}

# watch_run ARGS...: gate watch on the cluster's first node
watch_run() {
	ERL_EPMD_PORT=$CL_PORT run_gate watch --attach "${CL_NODES[0]}" \
		--cookie-file "$CL_HOME/.erlang.cookie" "$@"
}

# Three samples a second apart: three JSON lines, exit 0, nothing left in the node.
case_watch_count_lines() {
	cl_start 1
	watch_run --count 3 --interval 1s
	expect_rc 0
	[ "$(wc -l <"$OUT")" = 3 ] || fail "expected 3 lines, got $(wc -l <"$OUT")"
	node -e 'const ls = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
		ls.forEach((l, i) => { const d = JSON.parse(l);
			if (d.sample !== i + 1 || !(d.memory.total > 0) || !(d.process_count > 0) ||
			    d.alerts.length !== 0 || d.node !== process.argv[2]) throw new Error(l); });' \
		"$OUT" "${CL_NODES[0]}" >"$WORK/js.out" 2>&1 || fail "bad JSON lines: $(tail -n 3 "$WORK/js.out")"
	local dir; dir=$(mktemp -d "$WORK/prom.XXXXXX")
	watch_run --count 2 --interval 200ms --format openmetrics --out "$dir/gate.prom"
	expect_rc 0
	expect_in "$dir/gate.prom" "# TYPE erlang_memory_bytes gauge"
	expect_in "$dir/gate.prom" "erlang_memory_bytes{node=\"${CL_NODES[0]}\",category=\"total\"} "
	expect_in "$dir/gate.prom" "gate_watch_alerts_total{node=\"${CL_NODES[0]}\"} 0"
	[ "$(ls -A "$dir")" = "gate.prom" ] || fail "files beside the exposition: $(ls -A "$dir")"
	watch_run --count 2 --format openmetrics
	expect_rc 2
	expect_in "$ERR" "--out FILE"
	run_gate watch --count 2
	expect_rc 2
	expect_in "$ERR" "gate watch needs --attach NODE"
	cl_no_probe "${CL_NODES[0]}"
	cl_stop
}

# ETS memory jumps by ~30 MB while watched: an alert on stderr with the drill-down, exit 1,
# and the probe removed.
case_watch_alert_drilldown() {
	cl_start 1
	local a=${CL_NODES[0]} i
	ERL_EPMD_PORT=$CL_PORT gate_bg '"sample":4' watch --attach "$a" \
		--cookie-file "$CL_HOME/.erlang.cookie" --interval 300ms --count 200 --exit-on-alert
	echo 'spawn(fun() -> T = ets:new(gate_e2e_hog, [public]),
		ets:insert(T, [{I, binary:copy(<<"x">>, 200)} || I <- lists:seq(1, 100000)]),
		receive stop -> ok end end).' |
		HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -name "$a" -e >/dev/null 2>&1
	for i in $(seq 1 300); do kill -0 "$BG_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$BG_PID"
	RC=$?
	expect_rc 1
	expect_in "$ERR" "gate watch: ALERT $a: "
	expect_in "$ERR" "above its rolling average"
	expect_in "$ERR" "drill-down of $a: top processes by memory:"
	expect_in "$ERR" "drill-down of $a: largest ETS tables:"
	tail -n 1 "$OUT" | node -e 'const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
		if (!(d.alerts.length > 0 && d.drilldown.processes.length > 0 &&
		      d.drilldown.ets.length > 0)) process.exit(1);' || fail "the last line has no alert and drill-down"
	cl_wait_no_probe "$a"
	cl_stop
}

# Stopped by SIGTERM between samples: exit 143 and the probe removed; killed with SIGKILL:
# the probe's watchdog removes it.
case_watch_signals_leave_nothing() {
	cl_start 1
	local a=${CL_NODES[0]}
	ERL_EPMD_PORT=$CL_PORT gate_bg '"sample":2' watch --attach "$a" \
		--cookie-file "$CL_HOME/.erlang.cookie" --interval 200ms
	gate_signal TERM
	expect_rc 143
	cl_no_probe "$a"
	ERL_EPMD_PORT=$CL_PORT gate_bg '"sample":2' watch --attach "$a" \
		--cookie-file "$CL_HOME/.erlang.cookie" --interval 200ms
	# the probe loads under a free slot's names (gate_probe, gate_probe__1, ...)
	cl_call "$a" erlang loaded "[]" | grep -q 'gate_probe' || fail "the probe was not loaded while watching"
	gate_signal KILL
	cl_wait_no_probe "$a"
	cl_stop
}

# A node that stops answering for a while (SIGSTOP): the samples that time out are reported
# and skipped, the watch goes on and ends normally once the node answers again.
case_watch_keeps_going_after_timeouts() {
	cl_start 1
	local a=${CL_NODES[0]} i
	ERL_EPMD_PORT=$CL_PORT gate_bg '"sample":2' watch --attach "$a" \
		--cookie-file "$CL_HOME/.erlang.cookie" --interval 200ms --timeout 300ms --count 20
	kill -STOP "${CL_PIDS[0]}"
	# stopped until a sample has timed out and been skipped (said on stderr)
	for i in $(seq 1 500); do grep -qF "skipped: node $a did not answer" "$ERR" && break; sleep 0.02; done
	kill -CONT "${CL_PIDS[0]}"
	for i in $(seq 1 300); do kill -0 "$BG_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$BG_PID"
	RC=$?
	expect_rc 0
	expect_in "$ERR" "skipped: node $a did not answer"
	[ "$(wc -l <"$OUT")" = 20 ] || fail "expected 20 lines, got $(wc -l <"$OUT")"
	grep -q '"error":' "$OUT" || fail "no line tells of a skipped sample"
	tail -n 1 "$OUT" | grep -q '"memory":' || fail "the last sample after the stall has no figures"
	cl_no_probe "$a"
	cl_stop
}

# --reconnect: the node killed and started again under its name while watched: the samples
# while it is away are lines with "connected": false, gate connects again and the watch ends
# normally, every sample number 1..N with its line, in order; nothing left in the new node.
case_watch_reconnect_after_restart() {
	cl_start 1
	local a=${CL_NODES[0]} i
	ERL_EPMD_PORT=$CL_PORT gate_bg '"sample":3' watch --attach "$a" \
		--cookie-file "$CL_HOME/.erlang.cookie" --interval 200ms --timeout 500ms --count 40 --reconnect
	kill -KILL "${CL_PIDS[0]}"
	wait "${CL_PIDS[0]}" 2>/dev/null
	# away until a sample has found it gone
	for i in $(seq 1 500); do grep -qE '"connected": ?false' "$OUT" && break; sleep 0.02; done
	cl_node "$a" ""
	CL_PIDS[0]=$CL_LAST_PID
	cl_wait_registered "$a"
	for i in $(seq 1 300); do kill -0 "$BG_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$BG_PID"
	RC=$?
	expect_rc 0
	expect_in "$ERR" "connected to $a again (reconnect 1)"
	node -e 'const ls = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
		if (ls.length !== 40) throw new Error(ls.length + " lines");
		let down = 0;
		ls.forEach((l, i) => { const d = JSON.parse(l);
			if (d.sample !== i + 1) throw new Error("line " + (i + 1) + ": " + l);
			if (d.connected === false) down++; });
		if (down === 0) throw new Error("no sample while the node was away");
		if (JSON.parse(ls[39]).connected === false) throw new Error("not connected at the end");' \
		"$OUT" >"$WORK/js.out" 2>&1 || fail "bad JSON lines: $(tail -n 3 "$WORK/js.out")"
	cl_wait_no_probe "$a"
	cl_stop
}
