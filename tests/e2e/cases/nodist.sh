# tests/e2e/cases/nodist.sh, sourced by tests/e2e/run.sh: the node gate starts is the node
# `mix test` would have started: not distributed (nonode@nohost, no cookie, no
# listening socket, no epmd), the suite free to start and stop distribution itself, gate's
# channel (a pipe pair) working through it, and --distributed NAME for a workload that
# reaches the node by distribution. Uses attach.sh's private epmd (cl_start 0, cl_stop).

# listening_sockets PID: the TCP sockets in LISTEN state the process PID owns, as
# "inode:port" words (its fds' socket inodes matched against /proc/PID/net/tcp{,6}); empty
# when none. ss -ltnp says the same, and is checked too where it sees the process.
listening_sockets() {
	local pid=$1 inodes f
	inodes=$(for f in /proc/"$pid"/fd/*; do readlink "$f" 2>/dev/null; done |
		sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | sort -u)
	[ -n "$inodes" ] || return 0
	cat /proc/"$pid"/net/tcp /proc/"$pid"/net/tcp6 2>/dev/null |
		awk -v want=" $(echo $inodes) " '$4 == "0A" && index(want, " " $10 " ") {
			split($2, a, ":"); printf "%s:0x%s ", $10, a[2] }'
}

# nodist_look DIR: waits for the fixture's pid file in DIR (the test is holding), prints the
# node's OS pid
nodist_look() {
	local i
	for i in $(seq 1 3000); do
		[ -s "$1/pid" ] && { cat "$1/pid"; return 0; }
		kill -0 "$BG_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "the fixture never wrote its pid: $(tail -n 5 "$ERR")"
	return 1
}

# The plain tests pass (node() == :nonode@nohost, Node.start/stop by the suite), and while
# the suite runs the node owns no listening socket, has no -name/-sname/-setcookie on its
# command line and started no epmd; bare mix test agrees.
case_nodist_plain_node() {
	local d s pid listen
	cl_start 0
	d=$(fixture nodist)
	s=$(mktemp -d "$WORK/nodist_sync.XXXXXX")
	HOME=$CL_HOME ERL_EPMD_PORT=$CL_PORT NODIST_NAME="x$RANDOM" NODIST_SYNC=$s \
		gate_bg "booting node" run -C "$d"
	expect_in "$ERR" "booting node nonode@nohost"
	pid=$(nodist_look "$s") || { kill "$BG_PID"; wait "$BG_PID"; cl_stop "$d"; return; }
	[ -d "/proc/$pid" ] || fail "no process $pid (the node's System.pid())"
	grep -qa beam "/proc/$pid/cmdline" || fail "process $pid is no BEAM"
	listen=$(listening_sockets "$pid")
	[ -z "$listen" ] || fail "the node listens during the run (inode:port): $listen"
	if ss -ltnpH 2>/dev/null | grep -q "pid=$pid,"; then
		fail "ss shows the node listening: $(ss -ltnpH | grep "pid=$pid,")"
	fi
	tr '\0' '\n' <"/proc/$pid/cmdline" | grep -Exq -- '-(name|sname|setcookie)' &&
		fail "the node has distribution flags: $(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-300)"
	touch "$s/go"
	wait "$BG_PID"
	RC=$?
	expect_rc 0
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "NodistTest=test the node is not distributed" \
		--testcase "NodistTest=test the suite starts and stops distribution itself"
	# bare mix test agrees (bare_mix's own leftover check would count the private epmd)
	local b; b=$(fixture nodist)
	BARE_OUT="$WORK/bare.$RANDOM"
	(cd "$b" && HOME=$CL_HOME ERL_EPMD_PORT=$CL_PORT NODIST_NAME="y$RANDOM" MIX_ENV=test \
		timeout -k 5 300 mix test </dev/null >"$BARE_OUT" 2>&1)
	BARE_RC=$?
	at_least_as_strict 0
	cl_stop "$d" "$b"
}

# The check above can fail: a suite that starts distribution and holds it while the look is
# taken shows its listener, found the same way (the control of listening_sockets). Then
# SIGKILL of gate with distribution up in the node: the node halts (its pipe closed), and no
# BEAM and no epmd of ours is left.
case_nodist_suite_distribution_seen_and_sigkill() {
	local d s pid listen
	cl_start 0
	d=$(fixture nodist)
	s=$(mktemp -d "$WORK/nodist_sync.XXXXXX")
	HOME=$CL_HOME ERL_EPMD_PORT=$CL_PORT NODIST_NAME="z$RANDOM" NODIST_SYNC=$s NODIST_HOLD_DIST=1 \
		gate_bg "booting node" run -C "$d"
	pid=$(nodist_look "$s") || { kill "$BG_PID"; wait "$BG_PID"; cl_stop "$d"; return; }
	listen=$(listening_sockets "$pid")
	[ -n "$listen" ] || fail "the suite's distribution listener was not seen (the look is blind)"
	ERL_EPMD_PORT=$CL_PORT epmd -port "$CL_PORT" -names 2>/dev/null | grep -q "name z" ||
		fail "the suite's node is not registered with the (private) epmd"
	kill -9 "$BG_PID"
	wait "$BG_PID" 2>/dev/null
	local i
	for i in $(seq 1 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
	[ -d "/proc/$pid" ] && fail "the node outlived gate's SIGKILL"
	cl_stop "$d"
}

# --exec in start mode: without --distributed the workload gets no node to reach (nothing
# is distributed); with it, erl_call reaches the node under that name, on loopback, with the
# cookie gate made. Bad names and --attach are refused.
case_nodist_distributed_option() {
	local d name
	d=$(fixture clean)
	cat >"$d/env.sh" <<'EOS'
#!/bin/sh
echo "env: node=${GATE_NODE-unset} port=${GATE_NODE_PORT-unset} cookie=${GATE_COOKIE_FILE-unset}"
EOS
	chmod +x "$d/env.sh"
	run_gate run -C "$d" --exec ./env.sh
	expect_rc 0
	expect_in "$OUT" "env: node=unset port=unset cookie=unset"
	name="e2e_dist_$RANDOM"
	cat >"$d/reach.sh" <<'EOS'
#!/bin/sh
erl_call=$(ls /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | head -n 1)
echo "load: reaching $GATE_NODE"
"$erl_call" -address "127.0.0.1:$GATE_NODE_PORT" -c "$(cat "$GATE_COOKIE_FILE")" -a 'erlang node []'
EOS
	chmod +x "$d/reach.sh"
	run_gate run -C "$d" --distributed "$name" --exec ./reach.sh
	expect_rc 0
	expect_in "$ERR" "booting node $name@127.0.0.1"
	expect_in "$OUT" "load: reaching $name@127.0.0.1"
	expect_in "$OUT" "'$name@127.0.0.1'"
	run_gate run -C "$d" --distributed "bad name" --exec true
	expect_rc 2
	expect_in "$ERR" "--distributed bad name: expected a node name"
	run_gate run -C "$d" --distributed "a@example.com" --exec true
	expect_rc 2
	expect_in "$ERR" "the node listens on 127.0.0.1 only"
	run_gate run --attach a@127.0.0.1 --distributed x
	expect_rc 2
	expect_in "$ERR" "--distributed: an attached node is distributed already"
	no_leftovers "$d"
}

# System.argv() is mix test's command line (["test" | ARGS]), not the empty list the node's
# `mix run -e` boot leaves; and a private ETS table the suite leaves (another process's) is
# named without gate's probe crashing on it: no error report of gate's in the output.
case_nodist_argv_and_private_table() {
	local d p
	cl_start 0
	d=$(fixture nodist)
	HOME=$CL_HOME ERL_EPMD_PORT=$CL_PORT NODIST_NAME="a$RANDOM" \
		NODIST_ARGS="--seed 0 test/nodist_test.exs" \
		run_gate run -C "$d" -- --seed 0 test/nodist_test.exs
	expect_rc 0
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "NodistTest=test System.argv() is mix test's command line"
	cl_stop "$d"
	p=$(fixture nodist_private_ets)
	run_gate run -C "$p"
	expect_rc 1
	expect_in "$OUT" "ETS table gate_private_rows"
	expect_not_in "$OUT" "raised an exception"
	expect_not_in "$ERR" "raised an exception"
	expect_not_in "$OUT" "insufficient access rights"
	no_leftovers "$p"
}

# An epmd the suite starts listens where it would under bare `mix test`: nodes named after
# another of the host's addresses (127.0.0.2 here, a container's eth0 address in CI) reach
# each other (gate's node once had ERL_EPMD_ADDRESS=127.0.0.1 in its environment, which its
# peers' epmd inherited); the suite's environment has no variable of gate's and no MIX_ENV
# when gate was given none; and the epmd the suite started outlives the run, as it outlives
# bare `mix test` (the case ends it).
case_nodist_suite_epmd_everywhere() {
	local d home port
	d=$(fixture nodist_host_address)
	home=$(mktemp -d "$WORK/nodist_home.XXXXXX")
	for port in $(shuf -i 20000-40000 -n 20); do
		ss -ltnH "sport = :$port" 2>/dev/null | grep -q . || break
	done
	# as `mix test` run by hand: neither variable set (put back after)
	local mix_env=${MIX_ENV-} had_mix_env=${MIX_ENV+x}
	local epmd_addr=${ERL_EPMD_ADDRESS-} had_epmd_addr=${ERL_EPMD_ADDRESS+x}
	unset MIX_ENV ERL_EPMD_ADDRESS
	HOME="$home" ERL_EPMD_PORT="$port" NODIST_NAME="h$RANDOM" NODIST_MIX_ENV_UNSET=1 \
		run_gate run -C "$d"
	[ -n "$had_mix_env" ] && export MIX_ENV="$mix_env"
	[ -n "$had_epmd_addr" ] && export ERL_EPMD_ADDRESS="$epmd_addr"
	expect_rc 0
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "HostAddressTest=test nodes on one of the host's own addresses reach each other" \
		--testcase "HostAddressTest=test the OS environment is the one mix test was given"
	ERL_EPMD_PORT=$port epmd -port "$port" -names >/dev/null 2>&1 ||
		fail "the epmd the suite started ended with the run"
	ERL_EPMD_PORT=$port epmd -port "$port" -kill >/dev/null 2>&1
	no_leftovers "$d"
	no_leftovers "$home"
}

# A CI's `elixir --sname NAME -S mix test` through gate: node.erl_flags = "-sname NAME" in
# gate.toml; the suite passes as it does bare, and gate names the node by its real name
# (progress, summary), not nonode@nohost.
case_nodist_sname_by_erl_flags() {
	local d b name
	cl_start 0
	d=$(fixture nodist_sname)
	name="sn$RANDOM"
	printf '[node]\nerl_flags = "-sname %s"\n' "$name" >"$d/gate.toml"
	HOME=$CL_HOME ERL_EPMD_PORT=$CL_PORT NODIST_SNAME=$name run_gate run -C "$d"
	expect_rc 0
	expect_in "$ERR" "node is $name@"
	expect_in "$OUT" "erlang:memory on $name@"
	expect_not_in "$OUT" "erlang:memory on nonode@nohost"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "SnameTest=test the node is named by its command line, and starts a peer under short names"
	b=$(fixture nodist_sname)
	name="sb$RANDOM"
	BARE_OUT="$WORK/bare.$RANDOM"
	(cd "$b" && HOME=$CL_HOME ERL_EPMD_PORT=$CL_PORT NODIST_SNAME=$name MIX_ENV=test \
		timeout -k 5 300 elixir --sname "$name" -S mix test </dev/null >"$BARE_OUT" 2>&1)
	BARE_RC=$?
	at_least_as_strict 0
	cl_stop "$d" "$b"
}
