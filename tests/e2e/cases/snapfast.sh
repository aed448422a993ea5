# tests/e2e/cases/snapfast.sh: `gate snapshot --attach` taken as users take
# it, back to back against an Elixir node. The probe leaves in one call and the node purges it
# later, once no gate is attached; a snapshot taken while a previous copy is still there loads
# under another slot's names; once the purges are done NOTHING of gate's is left in the node:
# no module of the probe with current or old code (erlang:loaded/0 lists both), no helper
# process, no setting, and code_server still answers. Sourced by tests/e2e/run.sh (helpers
# there and in attach.sh: cl_start, cl_call, cl_stop, ...).

# sf_node [N]: an Elixir node under the cluster's epmd and HOME (cl_start 0 first) with N idle
# processes (default 3 000: more than the 2 000 up to which gate purges its probe before it
# exits, so the node's purges are handed off), a tenth of them holding a sub-binary, and 50 ETS
# tables; in SF_NODE / SF_PID
sf_node() {
	local i n=${1:-3000}
	SF_NODE="e2e_sf_$RANDOM$RANDOM@127.0.0.1"
	mkdir -p "$CL_HOME/sf"
	cat >"$CL_HOME/sf/node.exs" <<'EOF'
defmodule SfNode do
  def start(ready, n) do
    for i <- 1..n, do: spawn(fn -> idle(i) end)
    for _ <- 1..50, do: :ets.insert(:ets.new(:sf_table, [:public]), {1, 2})
    File.write!(ready, "")
  end

  defp idle(i) when rem(i, 10) == 0 do
    part = :binary.part(:binary.copy(<<rem(i, 256)>>, 1000), 0, 100)

    receive do
      :stop -> part
    end
  end

  defp idle(_) do
    receive do
      :stop -> :ok
    end
  end
end

spawn(fn -> Process.sleep(300_000); System.halt() end)
SfNode.start("ready", String.to_integer(hd(System.argv())))
Process.sleep(:infinity)
EOF
	(cd "$CL_HOME/sf" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT && exec ${GATE_E2E_ELIXIR:-elixir} \
		--name "$SF_NODE" --erl "-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}" \
		node.exs "$n") >"$WORK/sf_node.out" 2>&1 &
	SF_PID=$!
	CL_PIDS+=("$SF_PID")
	for i in $(seq 1 600); do
		[ -e "$CL_HOME/sf/ready" ] && return
		sleep 0.1
	done
	fail "the Elixir node $SF_NODE never came up: $(tail -n 5 "$WORK/sf_node.out")"
}

# sf_left NODE: what of gate's is in the node, current or old code included ("" when nothing)
sf_left() {
	echo '[M || M <- erlang:loaded(), lists:prefix("gate_probe", atom_to_list(M))
			orelse M =:= '"'"'Elixir.Gate.Formatter'"'"']
		++ [R || R <- registered(), lists:prefix("gate_probe", atom_to_list(R))]
		++ [{env, A} || {A, _, _} <- application:loaded_applications(),
			lists:prefix("gate_probe", atom_to_list(A))]
		++ [{running, P} || P <- processes(), {current_function, {M, _, _}} <-
			[process_info(P, current_function)], lists:prefix("gate_probe", atom_to_list(M))].' |
		HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -name "$1" -e 2>&1
}

# sf_wait_clean NODE: in a node of more than 2 000 processes the purges end once no gate is
# attached (2 s after the last one left, then a scan of every process per module); waits for
# them (polls up to 2 minutes: the machine is shared),
# then nothing of gate's may be left
sf_wait_clean() {
	local i out
	for i in $(seq 1 600); do
		out=$(sf_left "$1")
		[ "$out" = "{ok, []}" ] && break
		sleep 0.2
	done
	[ "$out" = "{ok, []}" ] || fail "gate left in $1 after its purges: $out"
	# code_server still serves (a purge sent to the runtime's purger directly can hang it)
	out=$(cl_call "$1" code is_loaded "[lists]")
	case "$out" in "{file,"*) ;; *) fail "code_server of $1 does not answer: $out" ;; esac
}

# sf_snap N: gate snapshot --attach SF_NODE --json, the N-th of a series; checks its success
sf_snap() {
	ERL_EPMD_PORT=$CL_PORT run_gate snapshot --attach "$SF_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie" --json "$WORK/sf$1.json"
	expect_rc 0
	grep -q '"processes"' "$WORK/sf$1.json" 2>/dev/null || fail "snapshot $1 wrote no JSON with processes"
	expect_in "$ERR" "probe removed"
}

# Three snapshots back to back, then nothing of gate's left once the node's purges are done.
case_snapshot_back_to_back_elixir() {
	cl_start 0
	sf_node
	sf_snap 1
	sf_snap 2
	sf_snap 3
	sf_wait_clean "$SF_NODE"
	cl_stop "$CL_HOME/sf"
}

# While a gate stays attached (here a hidden node named as gate names its C node), the purges
# wait: each snapshot finds the previous one's copy still there and loads under the next
# slot's names. When that gate leaves, every slot is purged.
case_snapshot_slots_while_a_gate_is_attached() {
	cl_start 0
	sf_node
	local g="gate_${RANDOM}${RANDOM}_c@127.0.0.1"
	(cd "$CL_HOME" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT && exec erl -noshell -hidden \
		-name "$g" -start_epmd false -kernel inet_dist_use_interface '{127,0,0,1}' -eval "
		true = net_kernel:connect_node('$SF_NODE'),
		ok = file:write_file(\"$WORK/sf_gate.ok\", <<>>),
		timer:sleep(300000), halt().") >"$WORK/sf_gate.out" 2>&1 &
	local gpid=$! i
	for i in $(seq 1 300); do
		[ -e "$WORK/sf_gate.ok" ] && break
		sleep 0.1
	done
	[ -e "$WORK/sf_gate.ok" ] || fail "the stand-in gate never connected: $(tail -n 3 "$WORK/sf_gate.out")"
	sf_snap 1
	expect_in "$ERR" "probe loaded as gate_probe"
	expect_not_in "$ERR" "gate_probe__"
	sf_snap 2
	expect_in "$ERR" "probe loaded as gate_probe__1 "
	sf_snap 3
	expect_in "$ERR" "probe loaded as gate_probe__2 "
	# the slots' copies are deleted (no current code) and wait for their purge
	local out
	out=$(cl_call "$SF_NODE" code is_loaded "[gate_probe__2]")
	[ "$out" = "false" ] || fail "gate_probe__2 still current after its gate left: $out"
	kill "$gpid" 2>/dev/null
	wait "$gpid" 2>/dev/null
	sf_wait_clean "$SF_NODE"
	cl_stop "$CL_HOME/sf"
}

# sf_nothing_now NODE: nothing of gate's in the node NOW, without waiting (gate has exited and
# the node has at most 2 000 processes: its unload purged everything before it returned)
sf_nothing_now() {
	local out
	out=$(sf_left "$1")
	[ "$out" = "{ok, []}" ] || fail "gate left in $1 right after it exited: $out"
	out=$(cl_call "$1" application get_all_env "[gate_probe]")
	[ "$out" = "[]" ] || fail "gate's settings left on $1: $out"
}

# A node of 500 processes: three snapshots back to back, and after each, as soon as gate has
# exited, nothing of gate's is in the node (no current or old code, no process, no name); each
# loads under the compiled names (slot 0: the previous one left nothing to wait for).
case_snapshot_small_node_nothing_after_exit() {
	cl_start 0
	sf_node 500
	local k
	for k in 1 2 3; do
		sf_snap "$k"
		expect_in "$ERR" "probe loaded as gate_probe"
		expect_not_in "$ERR" "gate_probe__"
		sf_nothing_now "$SF_NODE"
	done
	cl_stop "$CL_HOME/sf"
}

# gate watch on a node of 500 processes: stopped with SIGINT, nothing of gate's is left when it
# has exited; killed with SIGKILL, the probe's watchdog notices the connection go and purges at
# once (polled, bounded: the node has to notice the connection's end).
case_watch_small_node_nothing_after_exit() {
	cl_start 0
	sf_node 500
	local i out
	ERL_EPMD_PORT=$CL_PORT gate_bg '"sample":2' watch --attach "$SF_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie" --interval 200ms
	gate_signal INT
	expect_rc 130
	sf_nothing_now "$SF_NODE"
	ERL_EPMD_PORT=$CL_PORT gate_bg '"sample":2' watch --attach "$SF_NODE" \
		--cookie-file "$CL_HOME/.erlang.cookie" --interval 200ms
	[ "$(cl_call "$SF_NODE" code is_loaded "[gate_probe]")" != "false" ] ||
		fail "the probe was not loaded while watching"
	gate_signal KILL
	for i in $(seq 1 100); do
		out=$(sf_left "$SF_NODE")
		[ "$out" = "{ok, []}" ] && break
		sleep 0.1
	done
	sf_nothing_now "$SF_NODE"
	cl_stop "$CL_HOME/sf"
}

# gate run --attach twice in a row on a Mix node in the test env (a few hundred processes):
# each run's suite passes, each loads under the compiled names (the previous run left nothing
# to purge), and after each nothing of gate's is left in the node, the formatter included.
# Then twice again with 3 000 more processes in the node (the second run under slot 1's names).
case_attach_run_twice_nothing_after_exit() {
	cl_start 0
	mix_node clean test
	CL_PIDS+=("$MIX_PID")
	local k
	for k in 1 2; do
		run_attached -C "$MIX_DIR" --attach "$MIX_NODE"
		expect_rc 0
		expect_in "$OUT" "28 tests: 28 passed, 0 failed"
		expect_in "$ERR" "probe loaded as gate_probe"
		expect_not_in "$ERR" "gate_probe__"
		sf_nothing_now "$MIX_NODE"
		cl_no_probe "$MIX_NODE"
	done
	# 3 000 more processes: the purges are handed off, so the second run right after the
	# first finds its copy still there and runs under the next slot's names
	echo '[spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, 3000)], ok.' |
		HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT "$ERL_CALL" -name "$MIX_NODE" -e >/dev/null 2>&1
	run_attached -C "$MIX_DIR" --attach "$MIX_NODE"
	expect_rc 0
	run_attached -C "$MIX_DIR" --attach "$MIX_NODE"
	expect_rc 0
	expect_in "$OUT" "28 tests: 28 passed, 0 failed"
	expect_in "$ERR" "probe loaded as gate_probe__1 "
	sf_wait_clean "$MIX_NODE"
	cl_no_probe "$MIX_NODE"
	cl_stop "$MIX_DIR"
}
