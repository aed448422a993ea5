# tests/e2e/cases/attach_safety.sh: attach cases: a suite that writes bytes that
# are not UTF-8 runs attached as it runs under bare mix test (gate's own group leader passes
# them through), and a gate killed right after loading the probe leaves no code behind (the
# watchdog starts in the call that loads the module). Sourced by tests/e2e/run.sh (helpers
# there and in attach.sh: cl_start, mix_node, run_attached, cl_no_probe, cl_stop, ...).

case_attach_raw_bytes_output() {
	cl_start 1
	mix_node raw_output test
	run_attached -C "$MIX_DIR" --attach "$MIX_NODE"
	expect_rc 0
	expect_in "$OUT" "1 test: 1 passed, 0 failed"
	expect_in "$OUT" "utf8 é ok"
	# the bytes arrive as the test wrote them
	grep -qaF "$(printf 'raw-before \377\376\303( raw-after')" "$OUT" ||
		fail "the raw bytes did not come through: $(grep -a raw "$OUT" | od -c | head -n 3)"
	grep -qaF "$(printf 'chardata-before \342\202 chardata-after')" "$OUT" ||
		fail "the chardata bytes did not come through"
	expect_not_in "$ERR" "badrecord"
	cl_no_probe "$MIX_NODE"
	[ "$(cl_call "$MIX_NODE" erlang node "[]")" = "'$MIX_NODE'" ] || fail "the attached node did not survive"
	CL_PIDS+=("$MIX_PID")
	cl_stop "$MIX_DIR"
}

# A gate's C node (hidden, named gate_<hex>_c) that dies right after the calls that load the
# probe (every module, gate_probe first as gate loads them), before any other call: the probe's
# modules are gone from the node.
case_attach_killed_after_load_leaves_no_probe() {
	cl_start 1
	local a=${CL_NODES[0]} g="gate_${RANDOM}${RANDOM}_c@127.0.0.1"
	local beams="$ROOT/${GATE_BUILD:-build}/probe"
	[ -f "$beams/gate_probe.beam" ] || { fail "no $beams/gate_probe.beam"; return; }
	(cd "$CL_HOME" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT && exec erl -noshell -hidden \
		-name "$g" -start_epmd false -kernel inet_dist_use_interface '{127,0,0,1}' -eval "
		Load = fun(M) -> {ok, B} = file:read_file(\"$beams/\" ++ atom_to_list(M) ++ \".beam\"),
			{module, M} = rpc:call('$a', code, load_binary, [M, \"gate:x.beam\", B]) end,
		Load(gate_probe),
		[Load(list_to_atom(filename:basename(F, \".beam\"))) || F <- filelib:wildcard(\"$beams/*.beam\"),
			filename:basename(F) =/= \"gate_probe.beam\"],
		true = is_pid(rpc:call('$a', erlang, whereis, [gate_probe_watchdog])),
		ok = file:write_file(\"$WORK/loader.ok\", <<\"loaded\">>),
		erlang:halt(0, [{flush, false}]).") >"$WORK/loader.out" 2>&1
	# (a file, written before the abrupt halt: stdout may not be flushed by then)
	[ -f "$WORK/loader.ok" ] || fail "the loader failed: $(tail -n 5 "$WORK/loader.out")"
	rm -f "$WORK/loader.ok"
	cl_wait_no_probe "$a"
	cl_stop
}
