# tests/e2e/cases/snapfast.sh: issue 29's cases: `gate snapshot --attach` taken as users take
# it, back to back against an Elixir node. The probe leaves in one call and the node purges it
# later, once no gate is attached; a snapshot taken while a previous copy is still there loads
# under another slot's names; once the purges are done NOTHING of gate's is left in the node:
# no module of the probe with current or old code (erlang:loaded/0 lists both), no helper
# process, no setting, and code_server still answers. Sourced by tests/e2e/run.sh (helpers
# there and in attach.sh: cl_start, cl_call, cl_stop, ...).

# sf_node: an Elixir node under the cluster's epmd and HOME (cl_start 0 first) with 2 000 idle
# processes, a tenth of them holding a sub-binary, and 50 ETS tables; in SF_NODE / SF_PID
sf_node() {
	local i
	SF_NODE="e2e_sf_$RANDOM$RANDOM@127.0.0.1"
	mkdir -p "$CL_HOME/sf"
	cat >"$CL_HOME/sf/node.exs" <<'EOF'
defmodule SfNode do
  def start(ready) do
    for i <- 1..2000, do: spawn(fn -> idle(i) end)
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
SfNode.start("ready")
Process.sleep(:infinity)
EOF
	(cd "$CL_HOME/sf" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT && exec ${GATE_E2E_ELIXIR:-elixir} \
		--name "$SF_NODE" --erl "-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}" \
		node.exs) >"$WORK/sf_node.out" 2>&1 &
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

# sf_wait_clean NODE: the node's purges end once no gate is attached (2 s after the
# last one left, then a scan of every process per module); waits for them, then nothing of
# gate's may be left
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
