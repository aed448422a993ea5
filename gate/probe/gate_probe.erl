%% gate/probe/gate_probe.erl: the probe gate loads into the node under test: its entry points.
%%
%% The probe is several modules (gate_probe*.erl and the ExUnit formatter), loaded with
%% code:load_binary/3 under a file name "gate:Module.beam" (nothing is written to the node's
%% disk) and removed again at the end. Every function gate calls over RPC is exported here and
%% returns plain terms (maps with atom keys, binaries, integers) that gate/probe/probe.c
%% decodes with bounds checks; the work is done by the module of its concern:
%%   gate_probe           hello, cleanup, the watchdog (a probe that outlives gate removes
%%                        itself), cluster mode, sampling during a run
%%   gate_probe_snapshot  one snapshot: memory, the pass over the processes, ETS, allocators
%%   gate_probe_grew      what grew since the before-snapshot, and which test module owns it
%%   gate_probe_run       running mix test in the node (and --repeat's reset between runs)
%%   gate_probe_events    the hook in ExUnit.EventManager: module and test edges, tags
%%   gate_probe_alloc     the fine level: RSS, carriers, allocation origins, the run's peak
%% Work that touches every process is done inside the node: one RPC per process from the C
%% side would cost ~65 us each.
%%
%% -gate_load(always | tests): when gate loads a module (gate/probe/embed.sh reads it): in
%% every session (snapshots, the watchdog, the other nodes of a cluster) or only where mix
%% test runs. This module is loaded first: its on_load starts the watchdog, which removes
%% every module loaded after it too.
-module(gate_probe).
-gate_load(always).

-export([hello/0, preload/0, prepare/0, snapshot/1, run_tests/1, run_tests/2, run_prep/2, cleanup/0]).
%% the probe's removal: gate's last call (see "Removal")
-export([unload/1]).
%% cluster mode: gate talks to one node, which reaches the others (see "Cluster mode")
-export([cluster_nodes/0, cluster_load/3, cluster_snapshot/3, cluster_unload/3, watch/1]).
%% sampling during a run (gate run --sample; see the section near the end)
-export([sample_start/2, sample_stop/0]).
%% gate run --repeat: the node made ready for the next run of the suite
-export([repeat_mark/0, repeat_reset/0]).
%% for the other modules of the probe
-export([gl_adopt/0, truncate/1]).
%% the watchdog starts in the very call that loads this module (see "The watchdog")
-on_load(on_load/0).

%% Largest failure message shipped back per test; ExUnit messages above that are cut.
-define(MAX_MESSAGE, 16384).

%% ---- Entry points whose work lives in another module of the probe ----
preload() -> gate_probe_run:preload().
prepare() -> gate_probe_run:prepare().
%% deep snapshots carry the fine level (gate_probe_alloc: RSS, carriers, origins, peak)
snapshot(Opts) ->
    case erlang:module_loaded(gate_probe_alloc) of
        true -> %% a local fun, not `fun gate_probe_snapshot:snapshot/1`: an
                %% external fun is a literal, which the slot renaming of
                %% probe_names.c does not rewrite (only the atom table)
                gate_probe_alloc:around(Opts, fun(O) -> gate_probe_snapshot:snapshot(O) end);
        false -> gate_probe_snapshot:snapshot(Opts)
    end.
run_tests(Args) -> gate_probe_run:run_tests(Args).
run_tests(Args, Opts) -> gate_probe_run:run_tests(Args, Opts).
run_prep(Args, Opts) -> gate_probe_run:run_prep(Args, Opts).
repeat_mark() -> gate_probe_run:repeat_mark().
repeat_reset() -> gate_probe_run:repeat_reset().

%% Mod:Fun() when Mod is loaded, else nothing: cleanup/0 runs where only some of the probe's
%% modules are (a snapshot session, a node of a cluster, a watchdog whose gate died between
%% two loads), and calling a module that is not loaded would search the node's code path.
if_loaded(Mod, Fun) ->
    case erlang:module_loaded(Mod) of
        true -> Mod:Fun();
        false -> ok
    end.

%% What the node is: versions, and whether it is a Mix project in which tests can run.
hello() ->
    Mix = code:is_loaded('Elixir.Mix.Project') =/= false andalso
          erlang:function_exported('Elixir.Mix.Project', get, 0) andalso
          'Elixir.Mix.Project':get() =/= nil,
    #{otp_release => list_to_binary(erlang:system_info(otp_release)),
      erts => list_to_binary(erlang:system_info(version)),
      elixir => app_vsn(elixir),
      mix_project => Mix,
      mix_env => case Mix of
                     true -> atom_to_binary('Elixir.Mix':env());
                     false -> <<>>
                 end,
      node => atom_to_binary(node()),
      word_size => erlang:system_info(wordsize)}.

app_vsn(App) ->
    case lists:keyfind(App, 1, application:loaded_applications()) of
        {App, _, Vsn} -> list_to_binary(Vsn);
        false -> <<>>
    end.

%% Called by gate before it removes the probe. A suite still running (gate was interrupted
%% or timed out) is stopped with the process that runs it.
cleanup() ->
    watch_stop(),
    sample_stop(),
    if_loaded(gate_probe_events, hook_remove),
    %% an attached node keeps running: none of gate's settings may stay in it
    [application:unset_env(gate_probe, K) || K <- [spawn_owners, spawn_tests, attribution, attribution_sync, root,
                                                   repeat_required]],
    if_loaded(gate_probe_snapshot, keeper_stop),
    if_loaded(gate_probe_alloc, cleanup), %% the peak tracker, its system monitor
    case whereis(gate_probe_collector) of
        Runner when is_pid(Runner), Runner =/= self() -> stop_suite(Runner);
        _ -> ok
    end,
    catch unregister(gate_probe_collector),
    ok.

%% When gate fetches the output of the call (a node it attached to), the suite's processes
%% (the runner, its module and test processes, the formatters it started) share the call's
%% own group leader: they all go, and the node is left as it was. In a node gate started the
%% group leader is the node's shared user, and the node is stopped anyway: the runner alone.
stop_suite(Runner) ->
    GL = case process_info(Runner, group_leader) of
             {group_leader, G} -> G;
             undefined -> undefined
         end,
    exit(Runner, kill),
    case is_pid(GL) andalso GL =/= whereis(user) andalso GL =/= group_leader() of
        true ->
            [exit(P, kill) || P <- processes(), P =/= self(), P =/= GL,
                              process_info(P, group_leader) =:= {group_leader, GL}],
            ok;
        false -> ok
    end.

truncate(Bin) when byte_size(Bin) > ?MAX_MESSAGE ->
    Cut = binary:part(Bin, 0, ?MAX_MESSAGE),
    <<Cut/binary, "\n[gate: message truncated]">>;
truncate(Bin) -> Bin.

%% ---- Cluster mode ----
%% gate connects to one node only (a hidden C node) and never to the others: this node
%% pushes the probe to them with code:load_binary over erpc, snapshots them in parallel and
%% removes the probe again. Every node keeps its own keeper (the before set) under the same
%% registered name, so the born-process and created-table checks work per node.

%% This node and every node it is connected to.
cluster_nodes() -> [atom_to_binary(N) || N <- [node() | nodes()]].

%% Loads Blobs ([{Module, FileName, Beam}]) into every node of Nodes but this one, in
%% parallel. Returns [{Node, ok | {error, Text}}].
cluster_load(Nodes, Blobs, Timeout) ->
    on_each([N || N <- node_atoms(Nodes), N =/= node()],
            fun(N, _) ->
                    [load_on(N, B, Timeout) || B <- Blobs],
                    ok = erpc:call(N, gate_probe, watch, [[atom_to_binary(node())]], Timeout)
            end).

load_on(N, {Mod, File, Beam}, Timeout) ->
    %% a previous gate's modules, deleted by its unload/1, may still wait for their purge
    %% there (purger/2 waits for quiet): old code makes the load and the next delete fail,
    %% so it goes first (a purge with no old code scans nothing)
    _ = erpc:call(N, code, purge, [Mod], Timeout),
    case erpc:call(N, code, load_binary, [Mod, File, Beam], Timeout) of
        {module, Mod} -> ok;
        Other -> error({refused, Mod, Other})
    end.

%% One snapshot (Opts as for snapshot/1) of every node of Nodes at once. gate's helper
%% processes on this node are left out of this node's figures. Returns [{Node, {ok, Map} |
%% {error, Text}}]: a node that disconnected, or whose snapshot failed, gets its error.
cluster_snapshot(Nodes, Opts, Timeout) ->
    on_each(node_atoms(Nodes),
            fun(N, Skip) when N =:= node() -> {ok, snapshot(Opts#{skip => Skip})};
               (N, Skip) ->
                    {ok, erpc:call(N, gate_probe, snapshot, [Opts#{skip => Skip}], Timeout)}
            end).

%% Removes the probe from every node of Nodes but this one (gate's own connection: gate
%% removes it there last). Errors are ignored: a node that left has nothing loaded any more.
cluster_unload(Nodes, Mods, Timeout) ->
    Others = [N || N <- node_atoms(Nodes), N =/= node()],
    %% one call per node: its helpers stopped, the modules deleted, the purge (a scan of
    %% every process per module) left to a process of that node (see "Removal")
    _ = erpc:multicall(Others, ?MODULE, unload, [Mods], Timeout),
    ok.

node_atoms(Nodes) -> [binary_to_atom(N) || N <- Nodes].

%% Runs Fun(Node, Skip) for every node in a process of its own and collects the results in
%% the order of Nodes. Skip is the caller and every worker: a snapshot taken on this node
%% leaves them out.
on_each(Nodes, Fun) ->
    Self = self(),
    Workers = [{N, spawn_monitor(fun() ->
                                         Skip = receive {go, S} -> S end,
                                         R = try Fun(N, Skip)
                                             catch C:E -> {error, reason_text(N, C, E)}
                                             end,
                                         Self ! {self(), gate_result, R}
                                 end)} || N <- Nodes],
    Skip = [Self | [P || {_, {P, _}} <- Workers]],
    [P ! {go, Skip} || {_, {P, _}} <- Workers],
    [{atom_to_binary(N),
      receive
          {P, gate_result, R} -> erlang:demonitor(Ref, [flush]), R;
          {'DOWN', Ref, process, P, Why} -> {error, reason_text(N, exit, Why)}
      end} || {N, {P, Ref}} <- Workers].

reason_text(N, error, {erpc, noconnection}) ->
    <<"lost the connection to ", (atom_to_binary(N))/binary, " (noconnection): the node "
      "stopped, crashed or was disconnected">>;
reason_text(N, error, {erpc, timeout}) ->
    <<"node ", (atom_to_binary(N))/binary, " did not answer in time">>;
reason_text(_N, C, E) ->
    truncate(iolist_to_binary(io_lib:format("~0tp", [{C, E}]))).

%% ---- The watchdog: a probe that outlives gate removes itself ----
%% gate removes the probe at the end, also when it fails or is interrupted. Only when gate
%% is killed outright (SIGKILL), or when the node gate reaches a cluster through dies, the
%% probe would stay behind: the watchdog watches gate's connection (Nodes: gate's C node,
%% or for the other nodes of a cluster the node gate is attached to) and, when it goes
%% down, stops a suite still running, restores what the probe changed and purges it.
%% It starts in the call that loads the module (on_load), watching the gate C nodes
%% connected then, so no kill between two calls leaves code behind; watch/1 then names
%% gate's node exactly.
%%
%% Attached, the watchdog is also the group leader of the suite (gl_adopt/0): it sends
%% what the suite writes to gate as {rex_stdout, Bytes}, bytes as they are, invalid UTF-8
%% included (OTP's own forwarder for rpc output crashes on those).
on_load() ->
    _ = (catch watch_start([N || N <- nodes(hidden), gate_c_node(N)], none)),
    ok.

gate_c_node(N) ->
    case string:split(atom_to_list(N), "@") of
        ["gate_" ++ Alive, _Host] -> lists:suffix("_c", Alive);
        _ -> false
    end.

watch(Nodes) ->
    Watched = [binary_to_atom(N) || N <- Nodes],
    %% gate itself is a hidden C node; a cluster peer watches a normal node: no output there
    Out = case Watched of
              [G] -> case lists:member(G, nodes(hidden)) of
                         true -> {gate_probe_output, G};
                         false -> none
                     end;
              _ -> none
          end,
    watch_start(Watched, Out).

watch_start(Watched, Out) ->
    watch_stop(),
    Pid = spawn(fun() ->
                        [erlang:monitor_node(N, true) || N <- Watched],
                        watchdog(Out)
                end),
    register(gate_probe_watchdog, Pid),
    ok.

watchdog(Out) ->
    receive
        {nodedown, _} -> self_remove();
        stop -> ok;
        {gl_output, From, Ref} -> From ! {Ref, Out =/= none}, watchdog(Out);
        {io_request, From, ReplyAs, Req} ->
            Reply = try io_request(Req, Out) catch _:_ -> {error, request} end,
            From ! {io_reply, ReplyAs, Reply},
            watchdog(Out);
        _ -> watchdog(Out)
    end.

%% The io protocol, as far as output needs it; input is at end of file.
io_request({put_chars, Enc, Chars}, Out) -> io_put(Enc, Chars, Out);
io_request({put_chars, Enc, M, F, A}, Out) -> io_put(Enc, apply(M, F, A), Out);
io_request({put_chars, Chars}, Out) -> io_put(latin1, Chars, Out);
io_request({put_chars, M, F, A}, Out) -> io_put(latin1, apply(M, F, A), Out);
io_request({requests, Reqs}, Out) ->
    lists:foldl(fun(R, ok) -> io_request(R, Out); (_, Err) -> Err end, ok, Reqs);
io_request({setopts, _}, _Out) -> ok;
io_request(getopts, _Out) -> [{binary, true}, {encoding, unicode}];
io_request({get_geometry, _}, _Out) -> {error, enotsup};
io_request({get_chars, _, _, _}, _Out) -> eof;
io_request({get_chars, _, _, _, _}, _Out) -> eof;
io_request({get_line, _, _}, _Out) -> eof;
io_request({get_until, _, _, _, _, _}, _Out) -> eof;
io_request(_, _Out) -> {error, request}.

%% Bytes go to gate as they are: a unicode list is encoded as UTF-8, a binary or a latin1
%% list is passed on byte for byte (a test may write anything).
io_put(Enc, Chars, Out) ->
    Bin = case Enc of
              unicode when is_list(Chars) ->
                  case unicode:characters_to_binary(Chars) of
                      B when is_binary(B) -> B;
                      _ -> iolist_to_binary(Chars)
                  end;
              _ when is_binary(Chars) -> Chars;
              _ -> iolist_to_binary(Chars)
          end,
    case Out of
        none -> ok;
        Dest -> Dest ! {rex_stdout, Bin}, ok
    end.

%% Called by run_tests: attached, the watchdog becomes the group leader of the suite.
gl_adopt() ->
    case whereis(gate_probe_watchdog) of
        undefined -> ok;
        W ->
            Ref = monitor(process, W),
            W ! {gl_output, self(), Ref},
            receive
                {Ref, true} -> demonitor(Ref, [flush]), group_leader(W, self()), ok;
                {Ref, false} -> demonitor(Ref, [flush]), ok;
                {'DOWN', Ref, _, _, _} -> ok
            after 5000 -> demonitor(Ref, [flush]), ok
            end
    end.

watch_stop() ->
    case whereis(gate_probe_watchdog) of
        undefined -> ok;
        Pid when Pid =:= self() -> ok;
        Pid ->
            Ref = monitor(process, Pid),
            Pid ! stop,
            receive {'DOWN', Ref, _, _, _} -> ok after 5000 -> exit(Pid, kill) end
    end.

%% Runs in the watchdog, which runs this module's code: the modules are deleted and their
%% purge left to remove/2's purger, which starts once the watchdog has ended. The modules are
%% the probe's that are loaded, whichever gate loaded them: those whose file is "gate:..."
%% (gate/probe/probe.c names them so, here and on a cluster's nodes).
self_remove() ->
    catch unregister(gate_probe_watchdog),
    catch cleanup(),
    Slot = slot(?MODULE),
    %% the formatter keeps its name in every slot (mix test names it): it goes too
    remove([M || {M, "gate:" ++ _} <- code:all_loaded(),
                 slot(M) =:= Slot orelse M =:= 'Elixir.Gate.Formatter'], self()),
    ok.

%% gate loads the modules of a session under one slot's names (probe.c): gate_probe,
%% gate_probe_snapshot, ... in slot 0, gate_probe__1, gate_probe_snapshot__1, ... in slot 1.
%% A watchdog removes its own slot's modules, not those of another gate attached meanwhile.
slot(M) ->
    case string:split(atom_to_list(M), "__", trailing) of
        [_, N] -> N;
        _ -> ""
    end.

%% ---- Removal ----
%% A deleted module's old code leaves the node only by a purge, and a purge always scans every
%% process: code:purge/1 asks code_server, which asks the runtime's purger (erts_code_purger),
%% which sends a check to every process; the runtime refuses the purge's steps to any other
%% process (erts_internal:purge_module/2 raises notsup), so no process can skip the scan, even
%% when, as here, no process runs probe code any more. Measured on OTP 25 (idle machine, the
%% notes' figures): 2-3 us per process and module, i.e. about 250 ms per module at 100 000
%% processes, during which code_server serves nobody else (the next gate's loads wait) and,
%% as the probe's modules have funs, no code can be loaded in the node at all. Four modules
%% are loaded for a snapshot. So the purges are done where they cost least:
%%   - a node of at most ?PURGE_NOW_PROCS processes (a test node, a development node: a scan
%%     of each module is a few ms): unload/1 purges every module itself before it returns;
%%     when gate has exited nothing of it is left, current or old code;
%%   - a bigger node: unload/1 only stops the helpers and deletes the modules (a delete does
%%     not scan), and one process of the node purges them afterwards, one module after the
%%     other, once no gate has been connected for ?PURGE_GRACE_MS (or the same gates for
%%     ?PURGE_DEFER_MS, see quiet/1): snapshots taken back to back (a new gate connects within
%%     tens of ms) do not find code_server busy with the previous one's purges, and the
%%     purges do not compete with their passes over the processes for CPU. A next gate loads
%%     under another slot's names meanwhile (probe.c, probe_names.h).
%% The purges go through code_server (code:purge/1), never to the runtime's purger directly
%% (erlang:purge_module/1): on OTP 25 that purger drops a module's on_load completion that
%% code_server sends it during a purge it did not ask for, and code_server then waits for
%% ever (seen: every code:load_binary of the node hung).
%% (each can be set with erlc -D, as the comparison of the policies in docs/benchmarks.md did:
%% -DPURGE_DEFER_MS=0 -DPURGE_GRACE_MS=0 purges at once after every gate, and
%% -DPURGE_NOW_PROCS=100000000 inside gate's call whatever the node's size)
-ifndef(PURGE_NOW_PROCS).
-define(PURGE_NOW_PROCS, 2000).
-endif.
-ifndef(PURGE_GRACE_MS).
-define(PURGE_GRACE_MS, 2000).
-endif.
-ifndef(PURGE_DEFER_MS).
-define(PURGE_DEFER_MS, 60000).
-endif.

%% Mods: the probe's modules as gate loaded them (binaries: this session's names). Returns
%% once the modules are deleted and, in a small node, purged.
unload(Mods) ->
    %% whatever the clean-up meets (a suite's processes already gone, a hook half undone),
    %% the modules leave: the error goes back to gate, which ignores it
    _ = (catch cleanup()),
    Ms = [binary_to_atom(M) || M <- Mods],
    case purge_now() of
        true ->
            [delete(M) || M <- Ms],
            purge_all(Ms);
        false ->
            _ = remove(Ms, self()),
            ok
    end.

purge_now() -> erlang:system_info(process_count) =< ?PURGE_NOW_PROCS.

%% Purges Mods and this slot's leftovers, this module last and by a tail call: the process
%% running this (gate's call, the purger) then holds no frame of the probe's code, so the
%% purge does not kill it (a process is only checked for code it runs or returns to).
purge_all(Mods) ->
    [purge_gone(M) || M <- Mods, M =/= ?MODULE],
    [code:purge(M) || M <- slot_leftovers(Mods)],
    purge_self().

%% Old code of this slot that another gate left (one whose purger a later load killed).
slot_leftovers(Mods) ->
    Slot = slot(?MODULE),
    [M || M <- erlang:loaded(), M =/= ?MODULE, probe_module(M), slot(M) =:= Slot,
          not lists:member(M, Mods), erlang:check_old_code(M)].

%% Deletes Mods and hands their purge to a process that starts once Owner (the process
%% running this code: gate's call, or the watchdog) has ended: a purge kills the processes
%% still running old code, and Owner must be able to answer first. The purger is spawned
%% before the deletes, from current code.
remove(Mods, Owner) ->
    Purger = spawn(fun() -> purger(Owner, Mods) end),
    %% a module with old code already (loaded twice) cannot be deleted yet: the purger
    %% deletes it after its first purge
    [delete(M) || M <- Mods],
    Purger.

%% A module that has old code already (loaded twice without a purge between) cannot be
%% deleted: its old code is purged first, here, so that no current code of gate's is left
%% when unload/1 returns (this scan is the exception; the deleted code's purge stays the
%% purger's).
delete(M) ->
    _ = erlang:check_old_code(M) andalso code:purge(M),
    code:delete(M).

%% The other modules first, this one last and by a tail call (purge_all/1). In a big node
%% it waits for quiet before each purge: a gate that attached meanwhile waits for one scan
%% at most. In a small node (a watchdog whose gate was killed) it purges at once.
purger(Owner, Mods) ->
    Ref = erlang:monitor(process, Owner),
    receive {'DOWN', Ref, process, Owner, _} -> ok end,
    case purge_now() of
        true -> purge_all(Mods);
        false -> purge_quietly(Mods)
    end.

purge_quietly(Mods) ->
    Now = erlang:monotonic_time(millisecond),
    Q0 = {gates(), Now, Now},
    Q = lists:foldl(fun(M, Q1) -> Q2 = quiet(Q1), purge_gone(M), Q2 end,
                    Q0, [M || M <- Mods, M =/= ?MODULE]),
    _ = lists:foldl(fun(M, Q1) -> Q2 = quiet(Q1), code:purge(M), Q2 end,
                    Q, slot_leftovers(Mods)),
    purge_self().

%% Returns once no gate has been connected for ?PURGE_GRACE_MS, or once the same gates have
%% stayed connected, none arriving, for ?PURGE_DEFER_MS (a gate watch attached for hours): a
%% series of snapshots back to back brings a new gate (a new C node) every run, and the
%% purges wait for its end. Measured at 1 000 000 processes on a loaded machine (one run:
%% 7-15 s; a new process starting: up to 0.4 s): a fixed 30 s deadline, a 10 s wait for the
%% same gates and a 0.5 s grace each let purges into the series, which doubled a run's pass
%% and held a removal 10 s in code_server. {Gates, ChangedAt, SeenAt}: the gates connected,
%% when that set last changed, when a gate was last seen.
quiet({Gates0, Changed0, Seen0}) ->
    Now = erlang:monotonic_time(millisecond),
    case gates() of
        [] when Now - Seen0 >= ?PURGE_GRACE_MS -> {[], Changed0, Seen0};
        [] -> timer:sleep(20), quiet({[], Now, Seen0});
        Gates0 when Now - Changed0 >= ?PURGE_DEFER_MS -> {Gates0, Changed0, Now};
        Gates0 -> timer:sleep(20), quiet({Gates0, Changed0, Now});
        Gates -> timer:sleep(20), quiet({Gates, Now, Now})
    end.

gates() -> lists:sort([N || N <- nodes(hidden), gate_c_node(N)]).

probe_module(M) ->
    M =:= 'Elixir.Gate.Formatter' orelse lists:prefix("gate_probe", atom_to_list(M)).

purge_gone(M) ->
    _ = code:purge(M),
    case erlang:module_loaded(M) of
        true -> _ = code:delete(M), code:purge(M);
        false -> ok
    end.

purge_self() ->
    %% (its quiet wait came with the last module's: this purge follows at once)
    case erlang:module_loaded(?MODULE) of
        true -> _ = code:purge(?MODULE), code:delete(?MODULE);
        false -> ok
    end,
    code:purge(?MODULE).

%% ---- Sampling during a run (gate run --sample) ----
%% A sampler process takes a light snapshot (erlang:memory and the process, ETS table, atom
%% and port counts; no GC, no walk over processes: ~0.4 ms) every IntervalMs, at fixed times
%% T0 + k x IntervalMs so that a slow sample does not shift the next. At most Cap samples are
%% kept: when the cap is reached every other one is dropped and the interval doubled, so a
%% long workload costs a bounded heap and reply. sample_stop/0 ends it and returns them, t in
%% ms since sample_start/2. cleanup/0 stops it too.
-define(SAMPLE_KEYS, [total, processes, processes_used, system, atom, atom_used, binary, code,
                      ets]).

sample_start(IntervalMs, Cap) when is_integer(IntervalMs), IntervalMs > 0, is_integer(Cap),
                                   Cap >= 2 ->
    sample_stop(),
    T0 = erlang:monotonic_time(millisecond),
    Pid = spawn(fun() -> sampler(IntervalMs, Cap, T0, T0, [], 0) end),
    register(gate_probe_sampler, Pid),
    ok.

sampler(Iv, Cap, T0, Due, Acc, N) ->
    Now = erlang:monotonic_time(millisecond),
    {Acc1, N1, Iv1} = case Now >= Due of
                          true -> sample_keep([sample_light(Now - T0) | Acc], N + 1, Cap, Iv);
                          false -> {Acc, N, Iv}
                      end,
    %% the next due time on the grid T0 + k x Iv1 after now
    Next = T0 + ((max(Now, Due) - T0) div Iv1 + 1) * Iv1,
    receive
        {stop, From, Ref} -> From ! {Ref, Iv1, lists:reverse(Acc1), N1}
    after max(0, Next - erlang:monotonic_time(millisecond)) ->
            sampler(Iv1, Cap, T0, Next, Acc1, N1)
    end.

%% Acc is newest first; thinning keeps the oldest sample and every other one after it.
sample_keep(Acc, N, Cap, Iv) when N >= Cap ->
    Kept = lists:reverse(sample_every_other(lists:reverse(Acc))),
    {Kept, length(Kept), Iv * 2};
sample_keep(Acc, N, _Cap, Iv) -> {Acc, N, Iv}.

sample_every_other([A, _ | Rest]) -> [A | sample_every_other(Rest)];
sample_every_other(L) -> L.

sample_light(T) ->
    Mem = erlang:memory(?SAMPLE_KEYS),
    list_to_tuple([T | [V || {_, V} <- Mem]] ++
                  [erlang:system_info(process_count), erlang:system_info(ets_count),
                   erlang:system_info(atom_count), erlang:system_info(port_count)]).

%% #{interval_ms, samples => [{T, Total, Processes, ProcessesUsed, System, Atom, AtomUsed,
%% Binary, Code, Ets, ProcessCount, EtsCount, AtomCount, PortCount}]}, or none when no
%% sampler runs.
sample_stop() ->
    case whereis(gate_probe_sampler) of
        undefined -> none;
        Pid ->
            Ref = monitor(process, Pid),
            Pid ! {stop, self(), Ref},
            receive
                {Ref, Iv, Samples, _N} ->
                    erlang:demonitor(Ref, [flush]),
                    #{interval_ms => Iv, samples => Samples};
                {'DOWN', Ref, _, _, _} -> none
            after 5000 -> exit(Pid, kill), none
            end
    end.
