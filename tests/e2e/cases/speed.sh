# tests/e2e/cases/speed.sh: attach cases. gate snapshot --attach does not wait for
# the purge of its modules (code:purge checks every process of the node): it deletes them and
# hands the final purge to a process of the node. These cases prove that the node still ends
# with nothing of gate's: no module loaded, no old code, no helper process, no setting, after
# gate exits normally and after gate is killed with SIGKILL mid-snapshot. They poll with a
# generous bound (no timed assertion). Sourced by tests/e2e/run.sh (helpers there and in
# attach.sh: cl_start, cl_node, cl_call, cl_no_probe, cl_stop, gate_bg, ...).

# sp_node: a plain node in a fresh private cluster with 200 000 idle processes (a tenth of them
# holding a sub-binary, as make bench's), so that a snapshot and a purge take a while; its name
# in SP_NODE
sp_node() {
	cl_start 0
	SP_NODE="e2e_speed_$RANDOM$RANDOM@127.0.0.1"
	cl_node "$SP_NODE" "[spawn(fun() -> P = case I rem 10 of
			0 -> binary:part(binary:copy(<<I:8>>, 1000), 0, 100);
			_ -> none
		end, receive stop -> P end end) || I <- lists:seq(1, 200000)],"
	CL_NODES=("$SP_NODE")
	CL_PIDS=("$CL_LAST_PID")
	cl_wait_registered "$SP_NODE"
}

# sp_wait_clean NODE: polls (up to 5 minutes: the machine may be busy) until the node has
# neither gate's modules nor their old code, then checks everything else cl_no_probe checks
sp_wait_clean() {
	local i m clean f SP_MODS=()
	# every module of the probe (build/probe/*.beam)
	for f in "$ROOT/${GATE_BUILD:-build}"/probe/*.beam; do
		m=$(basename "$f" .beam)
		case $m in gate_probe*) SP_MODS+=("$m") ;; *) SP_MODS+=("'$m'") ;; esac
	done
	for i in $(seq 1 1500); do
		clean=1
		for m in "${SP_MODS[@]}"; do
			[ "$(cl_call "$1" code is_loaded "[$m]")" = "false" ] || clean=0
			[ "$(cl_call "$1" erlang check_old_code "[$m]")" = "false" ] || clean=0
		done
		[ "$(cl_call "$1" erlang whereis "[gate_probe_watchdog]")" = "undefined" ] || clean=0
		[ "$clean" = 1 ] && break
		sleep 0.2
	done
	[ "$clean" = 1 ] || fail "gate's code (or its old code, or its watchdog) is still on $1"
	cl_no_probe "$1"
}

# gate exits normally: the JSON is written, the modules are no longer loaded when gate has
# exited, and the purge left to the node ends with no old code either. A second gate right
# after the first (while the node may still be purging the first one's code, which refuses a
# new load with not_purged) works, and the node ends clean again.
case_snapshot_attach_ends_clean() {
	sp_node
	ERL_EPMD_PORT=$CL_PORT run_gate snapshot -q --attach "$SP_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie" --json "$WORK/speed.json"
	expect_rc 0
	[ "$(cl_call "$SP_NODE" code is_loaded "[gate_probe]")" = "false" ] ||
		fail "gate_probe still loaded after gate exited"
	sp_wait_clean "$SP_NODE"
	ERL_EPMD_PORT=$CL_PORT run_gate snapshot -q --attach "$SP_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie" --json "$WORK/speed1.json"
	expect_rc 0
	ERL_EPMD_PORT=$CL_PORT run_gate snapshot -q --attach "$SP_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie" --json "$WORK/speed1.json"
	expect_rc 0
	expect_not_in "$ERR" "refused"
	sp_wait_clean "$SP_NODE"
	# without --bin-leak the before-GC figures are not measured: null, not a made-up 0
	node -e '
		const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const p = s.processes || s.procs;
		if (!Array.isArray(p) || p.length === 0) throw new Error("no processes in the JSON");
		for (const x of p) if (x.bin_bytes_before_gc !== null || x.bin_refs_before_gc !== null)
			throw new Error("before-GC figures without --bin-leak: " + JSON.stringify(x));
		if (!p.some((x) => x.bin_bytes > 0)) throw new Error("no process with binaries");
	' "$WORK/speed.json" || fail "the snapshot JSON is not as expected"
	# with --bin-leak they are measured (the sub-binaries survive the GC: nothing freed)
	ERL_EPMD_PORT=$CL_PORT run_gate snapshot -q --bin-leak --attach "$SP_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie" --json "$WORK/speed2.json"
	expect_rc 0
	node -e '
		const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const p = s.processes || s.procs;
		for (const x of p) if (!Number.isInteger(x.bin_bytes_before_gc) || x.bin_bytes_before_gc < x.bin_bytes)
			throw new Error("before-GC figures with --bin-leak: " + JSON.stringify(x));
	' "$WORK/speed2.json" || fail "the --bin-leak snapshot JSON is not as expected"
	sp_wait_clean "$SP_NODE"
	[ "$(cl_call "$SP_NODE" erlang node "[]")" = "'$SP_NODE'" ] || fail "the node did not survive"
	cl_stop
}

# gate killed with SIGKILL while the probe is in the node (mid-snapshot): the watchdog removes
# it. From its start gate runs 20 ms at a time and is stopped (SIGSTOP) while the node is
# asked: the snapshot of 200 000 processes it waits for lasts longer than that, so a check
# falls between the load and the removal, whatever the machine's speed.
case_snapshot_attach_sigkill_ends_clean() {
	sp_node
	OUT="$WORK/out.$RANDOM"
	ERR="$WORK/err.$RANDOM"
	ERL_EPMD_PORT=$CL_PORT "$GATE" snapshot --attach "$SP_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie" --json "$WORK/killed.json" >"$OUT" 2>"$ERR" &
	BG_PID=$!
	local i loaded=0
	for i in $(seq 1 1000); do
		sleep 0.02
		kill -STOP "$BG_PID" 2>/dev/null || break
		if [ "$(cl_call "$SP_NODE" code is_loaded "[gate_probe]")" != "false" ]; then
			loaded=1
			break
		fi
		kill -CONT "$BG_PID"
	done
	[ "$loaded" = 1 ] || fail "never saw the probe loaded while gate ran: $(cat "$ERR")"
	gate_signal KILL
	[ ! -s "$WORK/killed.json" ] || fail "a killed gate wrote its JSON"
	sp_wait_clean "$SP_NODE"
	[ "$(cl_call "$SP_NODE" erlang node "[]")" = "'$SP_NODE'" ] || fail "the node did not survive"
	cl_stop
}

# snapshots and purges on a node of 200 000 processes, a minute or more: the long tier (make
# test-long)
e2e_long snapshot_attach_ends_clean
