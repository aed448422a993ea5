# tests/e2e/cases/attach.sh: gate run --attach, --exec and --cluster on real nodes:
# plain Erlang nodes and Mix nodes on loopback with random names, behind a private epmd on a
# random port, with a random cookie in a private HOME. Sourced by tests/e2e/run.sh.

ERL_CALL=$(ls /usr/lib/erlang/lib/erl_interface-*/bin/erl_call 2>/dev/null | head -n 1)

# cl_start N: a private epmd, HOME and cookie, and N plain nodes connected to the first.
# Sets CL_HOME, CL_PORT, CL_EPMD (pid), CL_NODES and CL_PIDS (arrays, the first is the
# node gate attaches to). Every node halts by itself after 5 minutes, should a case die.
cl_start() {
	local n=$1 i name tag
	CL_HOME=$(mktemp -d "$WORK/cluster.XXXXXX")
	CL_NODES=()
	CL_PIDS=()
	tag=$RANDOM$RANDOM
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$CL_HOME/.erlang.cookie"
	chmod 400 "$CL_HOME/.erlang.cookie"
	local addrs=127.0.0.1 hip try up
	hip=$(getent hosts "$(hostname -s)" | awk '{print $1; exit}')
	case "$hip" in 127.*) [ "$hip" = 127.0.0.1 ] || addrs="$addrs,$hip" ;; esac
	# a random port may be taken by someone else's test: then another one
	for try in 1 2 3 4 5; do
		CL_PORT=$(free_port)
		(export ERL_EPMD_PORT=$CL_PORT; exec epmd -port "$CL_PORT" -address "$addrs") >/dev/null 2>&1 &
		CL_EPMD=$!
		up=0
		for i in $(seq 1 100); do
			kill -0 "$CL_EPMD" 2>/dev/null || break
			ERL_EPMD_PORT=$CL_PORT epmd -port "$CL_PORT" -names >/dev/null 2>&1 && { up=1; break; }
			sleep 0.1
		done
		[ "$up" = 1 ] && break
		kill "$CL_EPMD" 2>/dev/null
		wait "$CL_EPMD" 2>/dev/null
	done
	[ "$up" = 1 ] || { fail "no private epmd would start"; return; }
	for i in $(seq 1 "$n"); do
		name="e2e_${tag}_$i@127.0.0.1"
		cl_node "$name" "$([ "$i" -gt 1 ] && echo "true = net_kernel:connect_node('${CL_NODES[0]}'),")"
		CL_NODES+=("$name")
		CL_PIDS+=("$CL_LAST_PID")
		cl_wait_registered "$name"
	done
	[ "$n" -gt 0 ] || return
	for i in $(seq 1 100); do
		[ "$(cl_call "${CL_NODES[0]}" erlang nodes "[]" 2>/dev/null | grep -o '@127.0.0.1' | wc -l)" = "$((n - 1))" ] && return
		sleep 0.1
	done
	fail "the cluster of $n nodes did not connect"
}

# cl_node NAME EVAL: one plain node under the cluster's epmd and HOME; pid in CL_LAST_PID
cl_node() {
	(cd "$CL_HOME" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT && exec erl -noshell -name "$1" \
		-start_epmd false -kernel inet_dist_use_interface '{127,0,0,1}' \
		-eval "spawn(fun() -> timer:sleep(300000), halt() end), $2 ok.") >/dev/null 2>&1 &
	CL_LAST_PID=$!
}

cl_wait_registered() { # NAME
	local i
	for i in $(seq 1 100); do
		ERL_EPMD_PORT=$CL_PORT epmd -port "$CL_PORT" -names 2>/dev/null | grep -q "name ${1%@*} " && return
		sleep 0.1
	done
	fail "node $1 never registered with epmd"
}

# cl_call NODE MOD FUN ARGS: erl_call -a on a node of the cluster, its answer on stdout.
# erl_call's own connection can fail when the machine is loaded and the node busy (a node of
# 200 000 processes purging code): that is not what the cases check, so it is tried again.
cl_call() {
	local out i
	for i in 1 2 3 4 5; do
		out=$(HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -name "$1" -a "$2 $3 $4" 2>&1)
		case "$out" in
		*"erl_call: failed to connect"*) sleep 1 ;;
		*) break ;;
		esac
	done
	printf '%s\n' "$out"
}

# cl_no_probe NODE...: neither gate's modules nor its keeper are left on the nodes
cl_no_probe() {
	local n out
	for n in "$@"; do
		out=$(cl_call "$n" code is_loaded "[gate_probe]")
		[ "$out" = "false" ] || fail "gate_probe still loaded on $n: $out"
		out=$(cl_call "$n" code is_loaded "['Elixir.Gate.Formatter']")
		[ "$out" = "false" ] || fail "Gate.Formatter still loaded on $n: $out"
		# every module of the probe: gate loads them under a file name "gate:..."
		out=$(echo '[M || {M, "gate:" ++ _} <- code:all_loaded()].' |
			HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -name "$n" -e 2>&1)
		[ "$out" = "{ok, []}" ] || fail "probe modules still loaded on $n: $out"
		out=$(cl_call "$n" erlang whereis "[gate_probe_keeper]")
		[ "$out" = "undefined" ] || fail "gate_probe_keeper still alive on $n: $out"
		out=$(cl_call "$n" application get_all_env "[gate_probe]")
		[ "$out" = "[]" ] || fail "gate's settings left on $n: $out"
		# the meta trace that measures the literals of modules compiled in memory, and its
		# process, are gone
		out=$(cl_call "$n" erlang trace_info "[{code,load_binary,3},meta]")
		case "$out" in "{meta,false}" | "{meta, false}") ;; *) fail "a meta trace left on code:load_binary/3 on $n: $out" ;; esac
		out=$(cl_call "$n" erlang whereis "[gate_probe_loads]")
		[ "$out" = "undefined" ] || fail "gate_probe_loads still alive on $n: $out"
		# the meta traces that see the spawns with a fun, and their process, are gone
		for mfa in "{erlang,spawn,3}" "{erlang,spawn_link,3}" "{erlang,spawn_opt,4}"; do
			out=$(cl_call "$n" erlang trace_info "[$mfa,meta]")
			case "$out" in "{meta,false}" | "{meta, false}") ;; *) fail "a meta trace left on $mfa on $n: $out" ;; esac
		done
		out=$(cl_call "$n" erlang whereis "[gate_probe_spawns]")
		[ "$out" = "undefined" ] || fail "gate_probe_spawns still alive on $n: $out"
		# the attribution hook in ExUnit.EventManager is undone: the loaded module is the
		# file's
		out=$(echo "case code:is_loaded('Elixir.ExUnit.EventManager') of false -> original;
			{file, F} -> {ok, {_, M}} = beam_lib:md5(F),
			case 'Elixir.ExUnit.EventManager':module_info(md5) of M -> original; _ -> hooked end end." |
			HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -name "$n" -e 2>&1)
		[ "$out" = "{ok, original}" ] || fail "ExUnit.EventManager on $n is not the original: $out"
	done
}

# cl_stop [DIR...]: every node and the epmd, then nothing of the cluster (nor in DIRs) may
# be left
cl_stop() {
	local p d
	for p in "${CL_PIDS[@]}" "$CL_EPMD"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	no_leftovers "$CL_HOME"
	for d in "$@"; do no_leftovers "$d"; done
}

# run_attached ARGS...: gate run --attach with the cluster's epmd and cookie file
run_attached() {
	ERL_EPMD_PORT=$CL_PORT run_gate run --cookie-file "$CL_HOME/.erlang.cookie" "$@"
}

# gate_bg TEXT ARGS...: gate with ARGS in the background, output in $OUT and $ERR, until
# TEXT shows in either; its pid in BG_PID. gate_signal SIG then stops it (RC).
gate_bg() {
	local text=$1 i
	shift
	OUT="$WORK/out.$RANDOM"
	ERR="$WORK/err.$RANDOM"
	"$GATE" "$@" >"$OUT" 2>"$ERR" &
	BG_PID=$!
	for i in $(seq 1 600); do
		grep -qF -- "$text" "$OUT" "$ERR" 2>/dev/null && return
		sleep 0.1
	done
	fail "never saw: $text"
}

gate_signal() {
	kill -s "$1" "$BG_PID"
	wait "$BG_PID"
	RC=$?
}

# suites_check REPORT NODE=failures|clean...: per node suite gate.memory[NODE], read with
# junit2json: "failures" has failing testcases, "clean" none and no errors, "lost" only the
# node's error testcase
suites_check() {
	(cd "$ROOT/tests/junit" && node --input-type=module -e '
		import { readFile } from "node:fs/promises";
		import { parse } from "junit2json";
		const root = await parse(await readFile(process.argv[1], "utf8"));
		const suites = root.testsuite;
		const bad = [];
		for (const spec of process.argv.slice(2)) {
			const [node, want] = spec.split("=");
			const s = suites.find((x) => x.name === `gate.memory[${node}]`);
			if (!s) { bad.push(`no suite gate.memory[${node}]`); continue; }
			const cases = s.testcase || [];
			const f = cases.filter((c) => c.failure).length;
			const e = cases.filter((c) => c.error).length;
			if (want === "failures" && (f === 0 || e !== 0)) bad.push(`${node}: ${f} failures, ${e} errors, wanted failures`);
			if (want === "clean" && (f !== 0 || e !== 0 || cases.length < 5)) bad.push(`${node}: ${f} failures, ${e} errors, ${cases.length} cases, wanted clean`);
			if (want === "lost" && !(e === 1 && cases.length === 1)) bad.push(`${node}: ${e} errors of ${cases.length} cases, wanted lost`);
		}
		if (bad.length) { console.log(bad.join("; ")); process.exit(1); }
	' "$@") >"$WORK/suites.out" 2>&1 || fail "per-node suites: $(cat "$WORK/suites.out")"
}

# Three nodes; the workload leaks on the second only: only its suite fails, and the probe
# leaves all three.
case_cluster_leak_on_one_node() {
	cl_start 3
	local a=${CL_NODES[0]} b=${CL_NODES[1]} c=${CL_NODES[2]} d
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	HOME="$CL_HOME" run_attached -C "$d" --attach "$a" --cluster \
		--exec "$FIX/workload/leak_ets.sh $b"
	expect_rc 1
	expect_in "$ERR" "cluster of 3 nodes through $a"
	expect_in "$OUT" "workload: planting 20000 rows on $b" # the command's output streams through
	expect_in "$OUT" "Memory growth (erlang:memory on $b)"
	expect_in "$OUT" "gate: FAILED"
	junit_valid "$d/_build/gate/junit.xml"
	suites_check "$d/_build/gate/junit.xml" "$b=failures" "$a=clean" "$c=clean"
	junit_check "$d/_build/gate/junit.xml" --errors 0 \
		--testcase "gate.memory.growth[$b]=ets" --testcase "gate.memory.growth[$a]=ets" \
		--failure-contains "left_alive workload_leak=ETS table workload_leak" \
		--testcase "gate.exec=$FIX/workload/leak_ets.sh $b"
	cl_no_probe "$a" "$b" "$c"
	# every node's findings are finished as one node's are: --warn-only makes a leak (on
	# the third node now) a warning there too (exit 0), and the reports keep what it says
	HOME="$CL_HOME" run_attached -C "$d" --attach "$a" --cluster --warn-only \
		--exec "$FIX/workload/leak_ets.sh $c" --summary "$d/summary.md"
	expect_rc 0
	expect_in "$OUT" "1 warning (severity warn, never failing the gate):" # one leak, one voice
	expect_in "$OUT" "gate: PASSED"
	expect_in "$d/summary.md" "PASSED"
	expect_in "$d/summary.md" "Warnings (severity warn: never failing the gate)"
	suites_check "$d/_build/gate/junit.xml" "$a=clean" "$b=clean"
	[ "$(xpath_count "$d/_build/gate/junit.xml" "//testsuite[@name='gate.memory[$c]']/testcase/skipped[starts-with(@message, 'warning: ')]")" -ge 1 ] ||
		fail "node $c's leak is not a warning in its JUnit suite"
	cl_no_probe "$a" "$b" "$c"
	cl_stop
}

# A node killed mid-run is an error testcase of its own suite; the others complete.
case_cluster_node_killed_mid_run() {
	cl_start 3
	local a=${CL_NODES[0]} b=${CL_NODES[1]} c=${CL_NODES[2]} d
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	run_attached -C "$d" --attach "$a" --cluster --exec "kill -9 ${CL_PIDS[2]}" \
		--summary "$d/summary.md" --html "$d/report.html"
	expect_rc 1
	expect_in "$OUT" "Node $c: lost"
	expect_in "$OUT" "gate: FAILED (1 node lost)"
	# the Markdown summary and the HTML report carry every node's findings, labelled
	expect_in "$d/summary.md" "FAILED (1 node lost)" # the console's words: a node, not a rule
	expect_in "$d/summary.md" "lost the connection to" # (Markdown escapes the name's _)
	expect_in "$d/summary.md" "(noconnection)"
	expect_in "$d/summary.md" "${b//_/\\_}\\: ets"
	expect_in "$d/report.html" "lost the connection to $c"
	expect_in "$d/report.html" "<p>1 node lost</p>"
	junit_valid "$d/_build/gate/junit.xml"
	suites_check "$d/_build/gate/junit.xml" "$c=lost" "$a=clean" "$b=clean"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failures 0 \
		--failure-contains "node=lost the connection to $c"
	cl_no_probe "$a" "$b"
	# the attached node itself dies: gate cannot go on (exit 2), and with no way left to
	# the other node, the probe's watchdog there removes it
	run_attached -C "$d" --attach "$a" --cluster --exec "kill -9 ${CL_PIDS[0]}"
	expect_rc 2
	expect_in "$ERR" "the connection to node $a broke"
	cl_wait_no_probe "$b"
	cl_stop
}

# cl_wait_no_probe NODE: the watchdog's work takes a moment after the node learns of it
cl_wait_no_probe() {
	local i
	for i in $(seq 1 50); do
		[ "$(cl_call "$1" code is_loaded "[gate_probe]")" = "false" ] && break
		sleep 0.1
	done
	cl_no_probe "$1"
}

# gate killed with SIGKILL while attached cannot clean up: the probe's watchdog removes it
# from the node, and the kernel kills the --exec command.
case_attach_sigkill_of_gate() {
	cl_start 1
	local a=${CL_NODES[0]} d
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	ERL_EPMD_PORT=$CL_PORT gate_bg "running sleep 300" run -C "$d" --attach "$a" \
		--cookie-file "$CL_HOME/.erlang.cookie" --exec "sleep 300"
	[ "$(cl_call "$a" code is_loaded "[gate_probe]")" != "false" ] || fail "the probe was not loaded during the run"
	gate_signal KILL
	cl_wait_no_probe "$a"
	cl_stop "$d"
}

# Wrong cookie, an unknown node, no epmd, an unknown host, and a node that is no Mix node when
# tests are asked for: exit 2 with the fix, and nothing left loaded.
case_attach_refusals() {
	cl_start 1
	local a=${CL_NODES[0]} d
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	printf 'wrong\n' >"$WORK/wrong.cookie"
	ERL_EPMD_PORT=$CL_PORT run_gate run -C "$d" --attach "$a" --cookie-file "$WORK/wrong.cookie"
	expect_rc 2
	expect_in "$ERR" "the cookie read from $WORK/wrong.cookie was rejected"
	junit_check "$d/_build/gate/junit.xml" --errors 1
	run_attached -C "$d" --attach "nobody_$RANDOM@127.0.0.1"
	expect_rc 2
	expect_in "$ERR" "is registered with epmd on 127.0.0.1 (port $CL_PORT)"
	expect_in "$ERR" "epmd -names"
	ERL_EPMD_PORT=$((CL_PORT + 1)) run_gate run -C "$d" --attach "$a" --cookie-file "$CL_HOME/.erlang.cookie"
	expect_rc 2
	expect_in "$ERR" "epmd is not running on 127.0.0.1 (port $((CL_PORT + 1)))"
	run_attached -C "$d" --attach "x@no-such-host.invalid" --boot-timeout 10
	expect_rc 2
	expect_in "$ERR" "unknown host no-such-host.invalid"
	run_attached -C "$d" --attach "$a"
	expect_rc 2
	expect_in "$ERR" "node $a has no Mix project loaded"
	expect_in "$ERR" "MIX_ENV=test iex --sname x -S mix"
	expect_in "$ERR" "--exec"
	cl_no_probe "$a"
	# the same node with a workload instead of tests passes
	run_attached -C "$d" --attach "$a" --exec "true"
	expect_rc 0
	junit_check "$d/_build/gate/junit.xml" --errors 0 --failures 0 --testcase "gate.exec=true"
	cl_no_probe "$a"
	cl_stop
}

# mix_node FIXTURE MIX_ENV: a Mix node of a fixture copy in the cluster's epmd and HOME,
# named in MIX_NODE, its pid in MIX_PID, its directory in MIX_DIR; waits until it answers
mix_node() {
	local i
	MIX_DIR=$(fixture "$1")
	MIX_NODE="e2e_mix_$RANDOM$RANDOM@127.0.0.1"
	(cd "$MIX_DIR" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT MIX_ENV=$2 && exec ${GATE_E2E_ELIXIR:-elixir} \
		--name "$MIX_NODE" --erl "-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}" \
		-S mix run --no-halt -e 'spawn(fn -> Process.sleep(300_000); System.halt() end)
		File.write!("mix_node.ready", "")') >"$WORK/mix_node.out" 2>&1 &
	MIX_PID=$!
	for i in $(seq 1 600); do
		[ -e "$MIX_DIR/mix_node.ready" ] && return # mix run got to -e: the project is up
		sleep 0.1
	done
	fail "the Mix node $MIX_NODE never answered: $(tail -n 5 "$WORK/mix_node.out")"
}

# A running Mix node in the test env: the suite runs inside it, its output comes back to
# gate's stdout, and the node is left as it was found.
case_attach_mix_test_node() {
	local i
	cl_start 1
	mix_node clean test
	run_attached -C "$MIX_DIR" --attach "$MIX_NODE"
	expect_rc 0
	expect_in "$ERR" "attached to node $MIX_NODE"
	expect_not_in "$ERR" "attribution is approximate" # the hook works in an attached node
	expect_in "$OUT" "28 tests, 0 failures" # ExUnit's console output, sent back from the node
	expect_in "$OUT" "28 tests: 28 passed, 0 failed"
	junit_valid "$MIX_DIR/_build/gate/junit.xml"
	junit_check "$MIX_DIR/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "Clean.CacheTest=test the cache holds what was put"
	cl_no_probe "$MIX_NODE"
	[ "$(cl_call "$MIX_NODE" erlang node "[]")" = "'$MIX_NODE'" ] || fail "the attached node did not survive"
	# the same node with a plain node connected to it, as a cluster: the suite runs in the
	# attached node, both are judged
	local peer="e2e_peer_$RANDOM@127.0.0.1"
	cl_node "$peer" "true = net_kernel:connect_node('$MIX_NODE'),"
	CL_PIDS+=("$MIX_PID" "$CL_LAST_PID")
	cl_wait_registered "$peer"
	for i in $(seq 1 100); do
		cl_call "$MIX_NODE" erlang nodes "[]" | grep -qF "'$peer'" && break
		sleep 0.1
	done
	run_attached -q -C "$MIX_DIR" --attach "$MIX_NODE" --cluster
	expect_rc 0 # the suite ran before in this node: it runs again all the same
	expect_in "$OUT" "28 tests: 28 passed, 0 failed"
	suites_check "$MIX_DIR/_build/gate/junit.xml" "$MIX_NODE=clean" "$peer=clean"
	cl_no_probe "$MIX_NODE" "$peer"
	cl_stop "$MIX_DIR"
}

# A Mix node in dev is refused for tests; SIGINT while an attached suite runs stops the
# suite and purges the probe, and the node lives on.
case_attach_dev_node_and_sigint() {
	cl_start 1
	mix_node blocking dev
	run_attached -C "$MIX_DIR" --attach "$MIX_NODE"
	expect_rc 2
	expect_in "$ERR" "is not a Mix node in the test env (Mix.env() is :dev)"
	cl_no_probe "$MIX_NODE"
	kill "$MIX_PID" 2>/dev/null
	wait "$MIX_PID" 2>/dev/null
	local dev_dir=$MIX_DIR
	mix_node blocking test
	HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT gate_bg "gate-fixture: blocking now" \
		run -C "$MIX_DIR" --attach "$MIX_NODE"
	gate_signal INT
	expect_rc 130
	expect_in "$ERR" "interrupted by"
	cl_no_probe "$MIX_NODE"
	local runner
	runner=$(cl_call "$MIX_NODE" erlang whereis "[gate_probe_collector]")
	[ "$runner" = "undefined" ] || fail "the suite's runner is still alive: $runner"
	local blocked
	blocked=$(echo "length([P || P <- processes(), {current_function, {'Elixir.BlockingTest', _, _}} <- [process_info(P, current_function)]])." |
		HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -name "$MIX_NODE" -e 2>&1)
	[ "$blocked" = "{ok, 0}" ] || fail "the interrupted test is still running in the node: $blocked"
	[ "$(cl_call "$MIX_NODE" erlang node "[]")" = "'$MIX_NODE'" ] || fail "the attached node did not survive"
	# and the node can run the suite again afterwards (the blocking test filtered out)
	run_attached -q -C "$MIX_DIR" --attach "$MIX_NODE" -- --exclude test
	expect_rc 0
	junit_check "$MIX_DIR/_build/gate/junit.xml" --errors 0 --failures 0 --skipped 1
	cl_no_probe "$MIX_NODE"
	CL_PIDS+=("$MIX_PID")
	cl_stop "$MIX_DIR" "$dev_dir"
}

# --exec in start mode with --distributed: the command reaches the node gate
# started (GATE_NODE, GATE_NODE_PORT, GATE_COOKIE_FILE), its status is the testcase, a missing command is exit 2,
# and SIGTERM stops it with the node.
case_exec_start_mode() {
	local d old_tmp=${TMPDIR-}; d=$(fixture clean)
	# a TMPDIR of the case's own: other users' gate runs on this machine make their own
	# gate-exec.* dirs in /tmp, and only ours must be gone
	export TMPDIR="$WORK/exec_tmp.$RANDOM"
	mkdir -p "$TMPDIR"
	cat >"$d/probe_node.sh" <<'EOS'
#!/bin/sh
erl_call=$(ls /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | head -n 1)
echo "load: reaching $GATE_NODE"
"$erl_call" -address "127.0.0.1:$GATE_NODE_PORT" -c "$(cat "$GATE_COOKIE_FILE")" -a 'erlang node []'
exit "${1:-0}"
EOS
	chmod +x "$d/probe_node.sh"
	run_gate run -C "$d" --distributed "gate_$RANDOM" --exec "./probe_node.sh 0"
	expect_rc 0
	expect_in "$OUT" "load: reaching gate_"
	expect_in "$OUT" "'gate_" # erl_call's answer: the node's name
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 --testcase "gate.exec=./probe_node.sh 0"
	run_gate run -q -C "$d" --exec "./probe_node.sh 3"
	expect_rc 1
	junit_check "$d/_build/gate/junit.xml" --failures 1 \
		--failure-contains "./probe_node.sh 3=exited with status 3"
	run_gate run -q -C "$d" --exec "no-such-command-$RANDOM --flag"
	expect_rc 2
	expect_in "$ERR" "not found on PATH"
	run_gate run -q -C "$d" --exec "echo 'unclosed"
	expect_rc 2
	expect_in "$ERR" "is not closed"
	gate_bg "workload-started" run -C "$d" --distributed "gate_$RANDOM" --exec "sh -c 'echo workload-started; sleep 300'"
	gate_signal TERM
	expect_rc 143
	ls -d "$TMPDIR"/gate-exec.* >/dev/null 2>&1 && fail "a workload cookie dir was left: $(ls -d "$TMPDIR"/gate-exec.*)"
	if [ -n "$old_tmp" ]; then export TMPDIR=$old_tmp; else unset TMPDIR; fi
	no_leftovers "$d"
}

# SIGTERM while a cluster's workload runs: the workload's group is killed and the probe
# leaves every node before gate exits 143.
case_cluster_sigterm_purges_every_node() {
	cl_start 2
	local a=${CL_NODES[0]} b=${CL_NODES[1]} d
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	ERL_EPMD_PORT=$CL_PORT gate_bg "load-started" run -C "$d" --attach "$a" \
		--cookie-file "$CL_HOME/.erlang.cookie" --cluster --exec "sh -c 'echo load-started; sleep 300'"
	gate_signal TERM
	expect_rc 143
	expect_in "$ERR" "interrupted by"
	junit_check "$d/_build/gate/junit.xml" --errors 1
	cl_no_probe "$a" "$b"
	cl_stop "$d"
}

case_attach_usage_errors() {
	run_gate run --cluster --exec true
	expect_rc 2
	expect_in "$ERR" "--cluster goes with --attach NODE"
	run_gate run --cookie-file "$WORK/x.cookie"
	expect_rc 2
	expect_in "$ERR" "--cookie-file goes with --attach NODE"
	run_gate run --attach a@127.0.0.1 --cluster --update-baseline
	expect_rc 2
	expect_in "$ERR" "--cluster runs compare no baseline"
	run_gate run --exec true -- --only slow
	expect_rc 2
	expect_in "$ERR" "put them in the --exec command"
	run_gate run --exec
	expect_rc 2
	expect_in "$ERR" "needs a value"
	run_gate run --help
	expect_rc 0
	expect_in "$OUT" "--attach NODE"
	expect_in "$OUT" "--exec CMD"
	expect_in "$OUT" "--cluster"
}

# Short names: a node started with -sname, attached as name@host (this machine's short host
# name, which must resolve to a loopback address for the private epmd to be reached there).
case_attach_short_names() {
	local host ip name pid d i out
	host=$(hostname -s)
	ip=$(getent hosts "$host" | awk '{print $1; exit}')
	case "$ip" in 127.*) ;; *) fail "$host resolves to '$ip', not loopback: cannot test short names here"; return ;; esac
	cl_start 0
	name="e2e_short_$RANDOM"
	(cd "$CL_HOME" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT && exec erl -noshell -sname "$name" \
		-start_epmd false -kernel inet_dist_use_interface "{${ip//./,}}" \
		-eval 'spawn(fun() -> timer:sleep(300000), halt() end).') >/dev/null 2>&1 &
	pid=$!
	CL_PIDS+=("$pid")
	cl_wait_registered "$name@$host"
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	run_attached -C "$d" --attach "$name@$host" --exec true
	expect_rc 0
	expect_in "$ERR" "attached to node $name@$host"
	junit_check "$d/_build/gate/junit.xml" --errors 0 --failures 0 --testcase "gate.exec=true"
	out=$(HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -sname "$name" -a 'code is_loaded [gate_probe]' 2>&1)
	[ "$out" = "false" ] || fail "gate_probe still loaded on $name@$host: $out"
	cl_stop
}
