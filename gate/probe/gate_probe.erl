%% gate/probe/gate_probe.erl: the probe gate loads into the node under test.
%%
%% Loaded with code:load_binary/3 (nothing is written to the node's disk) and purged again at
%% the end. Every exported function is called by gate over RPC and returns plain terms
%% (maps with atom keys, binaries, integers) that gate/probe.c decodes with bounds checks.
%% Work that touches every process is done here, inside the node: one RPC per process from
%% the C side would cost ~65 us each.
-module(gate_probe).

-export([hello/0, prepare/0, snapshot/1, run_tests/1, run_tests/2, gc_all/0, gc_light/0,
         cleanup/0, ex_unit_event/1, hook_install/0, hook_remove/0]).
%% cluster mode: gate talks to one node, which reaches the others (see the end of the file)
-export([cluster_nodes/0, cluster_load/3, cluster_snapshot/3, cluster_unload/3, watch/1]).
%% the watchdog starts in the very call that loads this module (see the end of the file)
-on_load(on_load/0).

%% Largest failure message shipped back per test; ExUnit messages above that are cut.
-define(MAX_MESSAGE, 16384).

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

%% Pays the one-time costs of running a suite before the before-snapshot, so that they are
%% not counted as growth: ExUnit's application (its server, event manager, on-exit handler,
%% capture server and tables) and the modules mix test and our formatter use.
prepare() ->
    {ok, _} = application:ensure_all_started(ex_unit),
    Mods = ['Elixir.Mix.Tasks.Test', 'Elixir.Mix.Compilers.Test', 'Elixir.ExUnit',
            'Elixir.ExUnit.Runner', 'Elixir.ExUnit.CLIFormatter', 'Elixir.ExUnit.Formatter',
            'Elixir.ExUnit.EventManager', 'Elixir.ExUnit.Filters', 'Elixir.ExUnit.Case',
            'Elixir.ExUnit.Callbacks', 'Elixir.ExUnit.Assertions', 'Elixir.ExUnit.DocTest',
            'Elixir.ExUnit.Diff', 'Elixir.ExUnit.RunnerStats', 'Elixir.ExUnit.OnExitHandler',
            'Elixir.Kernel.ParallelCompiler', 'Elixir.IO.ANSI', 'Elixir.Inspect.Algebra',
            'Elixir.Code.Formatter', 'Elixir.Code.Normalizer', 'Elixir.Module.ParallelChecker',
            'Elixir.Kernel.ErrorHandler', 'elixir_erl', 'elixir_erl_pass', 'elixir_module',
            'elixir_expand', 'elixir_clauses', 'elixir_env', 'compile', 'beam_asm', 'v3_core',
            'sys_core_fold', 'beam_ssa_opt', 'beam_validator', 'erl_lint'],
    [code:ensure_loaded(M) || M <- Mods],
    ok.

%% One snapshot. Opts (all optional):
%%   gc    => boolean(): force GC of every process first (default true)
%%   deep  => boolean(): also processes, ETS tables and allocators (default false)
%%   top   => integer(): how many processes per ranking leave the node (default 20)
%%   ets_cap => integer(): most ETS tables shipped, largest first (default 10000)
%%   mark  => none | before | after: before remembers which processes and tables exist now
%%            (in a keeper process); after reports those born since (default none)
%% Everything is collected in one pass over the processes; only the top N of each ranking
%% and the born groups leave the node, so a node with 1M processes ships a few kB.
snapshot(Opts) ->
    T0 = erlang:monotonic_time(microsecond),
    GC = maps:get(gc, Opts, true),
    Deep = maps:get(deep, Opts, false),
    Mark = maps:get(mark, Opts, none),
    Before = case Mark of
                 'after' -> keeper_get();
                 _ -> none
             end,
    Keeper = whereis(gate_probe_keeper),
    %% skip: gate's own helpers on this node (cluster mode), not to be measured
    Skip = lists:usort([P || P <- [self(), Keeper, whereis(gate_probe_watchdog)
                                   | maps:get(skip, Opts, [])], is_pid(P),
                             node(P) =:= node()]),
    Scan = case Deep of
               true -> deep_scan(GC, maps:get(top, Opts, 20), Skip, Before,
                                 maps:get(ets_cap, Opts, 10000));
               false ->
                   GC andalso gc_pass(),
                   #{}
           end,
    GC andalso erlang:garbage_collect(),
    GC andalso settle(10, erlang:memory(total)),
    GcUs = case GC of
               true -> erlang:monotonic_time(microsecond) - T0;
               false -> 0
           end,
    {Mem, Overhead} = memory_less_keeper(Keeper),
    Allocs = case Deep of
                 true -> allocators();
                 false -> []
             end,
    Mark =:= before andalso keeper_start(),
    Scan#{memory => Mem,
          probe_overhead => Overhead,
          allocs => Allocs,
          gc_us => GcUs,
          process_count => erlang:system_info(process_count) - length(Skip) + 1,
          process_limit => erlang:system_info(process_limit),
          atom_count => erlang:system_info(atom_count),
          atom_limit => erlang:system_info(atom_limit),
          ets_count => erlang:system_info(ets_count),
          ets_limit => erlang:system_info(ets_limit),
          port_count => erlang:system_info(port_count),
          port_limit => erlang:system_info(port_limit),
          word_size => erlang:system_info(wordsize),
          schedulers => erlang:system_info(schedulers),
          node => atom_to_binary(node()),
          taken_at_ms => os:system_time(millisecond),
          otp_release => list_to_binary(erlang:system_info(otp_release))}.

%% erlang:memory() without the keeper process's own heap (it holds the before set), so that
%% gate does not measure itself.
memory_less_keeper(Keeper) ->
    M = maps:from_list(erlang:memory()),
    K = case is_pid(Keeper) andalso erlang:process_info(Keeper, memory) of
            {memory, B} -> B;
            _ -> 0
        end,
    Less = fun(Key, Map) -> maps:update_with(Key, fun(V) -> max(0, V - K) end, Map) end,
    {lists:foldl(Less, M, [total, processes, processes_used]), K}.

%% The keeper remembers the processes and ETS tables alive at the before-snapshot.
keeper_start() ->
    keeper_stop(),
    Set = #{pids => maps:from_keys(erlang:processes(), []),
            ets => maps:from_keys([ets_id(T) || T <- ets:all()], [])},
    Pid = spawn(fun() -> keeper(Set) end),
    register(gate_probe_keeper, Pid),
    ok.

keeper(Set) ->
    receive
        {get, From, Ref} -> From ! {Ref, Set}, keeper(Set);
        stop -> ok
    end.

keeper_get() ->
    case whereis(gate_probe_keeper) of
        undefined -> none;
        Pid ->
            Ref = make_ref(),
            Pid ! {get, self(), Ref},
            receive {Ref, Set} -> Set after 10000 -> none end
    end.

keeper_stop() ->
    case whereis(gate_probe_keeper) of
        undefined -> ok;
        Pid ->
            Ref = monitor(process, Pid),
            Pid ! stop,
            receive {'DOWN', Ref, _, _, _} -> ok after 5000 -> exit(Pid, kill) end
    end.

%% Called by gate before it removes the probe. A suite still running (gate was interrupted
%% or timed out) is stopped with the process that runs it.
cleanup() ->
    watch_stop(),
    hook_remove(),
    %% an attached node keeps running: none of gate's settings may stay in it
    [application:unset_env(gate_probe, K) || K <- [spawn_owners, attribution, attribution_sync]],
    keeper_stop(),
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

%% The single pass: for each process, its refc binaries, a GC, then memory, mailbox and its
%% binaries again (recon's bin_leak: what the GC freed). Kept: the top N by memory, mailbox,
%% binary bytes after GC and binary bytes freed, and (after a before mark) the born ones.
deep_scan(GC, N, Skip, Before, EtsCap) ->
    BeforePids = case Before of none -> none; _ -> maps:get(pids, Before) end,
    {TMem, TMq, TBin, TFreed, Born, BornN, BornMem} =
        parallel_scan(erlang:processes(), GC, N, Skip, BeforePids),
    Tops = top_list(TMem) ++ top_list(TMq) ++ top_list(TBin) ++ top_list(TFreed),
    Nums = maps:from_list([{Pid, X} || {_, Pid, X} <- Tops]),
    Procs = [Row || Pid <- lists:usort(maps:keys(Nums)),
                    Row <- [proc_row(Pid, maps:get(Pid, Nums),
                                     BeforePids =/= none andalso
                                         not maps:is_key(Pid, BeforePids))],
                    Row =/= skip],
    Ets = ets_rows(Before, EtsCap),
    #{procs => Procs,
      born_count => BornN,
      born_memory => BornMem,
      born => born_groups(Born),
      ets => Ets,
      owners => owners(Born, Before)}.

%% Which test module the leftovers belong to, by spawn ancestry: the formatter learnt which
%% processes each test module's process spawned (its tests, through a trace of that process
%% alone); a process born during the run and still alive is walked up its parents
%% (process_info parent, which names a parent even after it died) until one of those. Per
%% module: {Module, Processes, ProcessMemory, BinaryBytesAfterGC, Tables, TableBytes} for the
%% born processes and the ETS tables created during the run that they own. Exact for async
%% modules too; processes started from elsewhere (a supervisor, a pool) are nobody's.
owners(_Born, none) -> [];
owners(Born, Before) ->
    case application:get_env(gate_probe, spawn_owners) of
        {ok, Map} when map_size(Map) > 0 ->
            Acc0 = lists:foldl(
                     fun({P, M, Bin}, Acc) ->
                             owner_add(owner_of(P, Map, 32), {1, M, Bin, 0, 0}, Acc)
                     end, #{}, Born),
            W = erlang:system_info(wordsize),
            BeforeEts = maps:get(ets, Before),
            Acc1 = lists:foldl(
                     fun(T, Acc) ->
                             case catch {ets_id(T), ets:info(T, owner), ets:info(T, memory)} of
                                 {Id, Owner, Mem} when is_pid(Owner), is_integer(Mem) ->
                                     case maps:is_key(Id, BeforeEts) of
                                         true -> Acc;
                                         false -> owner_add(owner_of(Owner, Map, 32),
                                                            {0, 0, 0, 1, Mem * W}, Acc)
                                     end;
                                 _ -> Acc
                             end
                     end, Acc0, ets:all()),
            [{atom_to_binary(Mod), P, M, B, T, TB} || {Mod, {P, M, B, T, TB}} <- maps:to_list(Acc1)];
        _ -> []
    end.

owner_add(none, _, Acc) -> Acc;
owner_add(Mod, {P, M, B, T, TB}, Acc) ->
    maps:update_with(Mod, fun({P0, M0, B0, T0, TB0}) -> {P0 + P, M0 + M, B0 + B, T0 + T, TB0 + TB} end,
                     {P, M, B, T, TB}, Acc).

owner_of(_P, _Map, 0) -> none;
owner_of(P, Map, N) ->
    case Map of
        #{P := Mod} -> Mod;
        _ ->
            case erlang:process_info(P, parent) of
                {parent, Parent} when is_pid(Parent) -> owner_of(Parent, Map, N - 1);
                _ -> none
            end
    end.

%% The pass is split over one worker per scheduler: each scans an interleaved share of the
%% processes and keeps its own top N; the shares are merged here.
parallel_scan(Pids, GC, N, Skip, BeforePids) ->
    W = max(1, erlang:system_info(schedulers_online)),
    Shares = deal(Pids, W),
    Self = self(),
    Workers = [spawn_monitor(fun() ->
                                     Empty = {N, 0, []},
                                     Acc0 = {Empty, Empty, Empty, Empty, [], 0, 0},
                                     R = lists:foldl(fun(P, A) ->
                                                             scan_one(P, GC, Skip, BeforePids, A)
                                                     end, Acc0, Share),
                                     Self ! {self(), R}
                             end) || Share <- Shares],
    Results = [receive
                   {Pid, R} -> erlang:demonitor(Ref, [flush]), R;
                   {'DOWN', Ref, process, Pid, Why} -> exit({scan_worker, Why})
               end || {Pid, Ref} <- Workers],
    lists:foldl(fun merge_scan/2, hd(Results), tl(Results)).

deal(L, 1) -> [L];
deal(L, W) -> deal(L, W, list_to_tuple(lists:duplicate(W, [])), 1).
deal([], _W, T, _I) -> tuple_to_list(T);
deal([P | Rest], W, T, I) ->
    deal(Rest, W, setelement(I, T, [P | element(I, T)]), I rem W + 1).

merge_scan({A1, A2, A3, A4, B, BN, BM}, {C1, C2, C3, C4, D, DN, DM}) ->
    {top_merge(A1, C1), top_merge(A2, C2), top_merge(A3, C3), top_merge(A4, C4),
     B ++ D, BN + DN, BM + DM}.

top_merge(T, {_, _, L}) ->
    lists:foldl(fun({V, P, X}, Acc) -> top_add(V, P, X, Acc) end, T, L).

scan_one(P, _GC, _Skip, _BeforePids, Acc) when not is_pid(P) -> Acc;
scan_one(P, GC, Skip, BeforePids, {TMem, TMq, TBin, TFreed, Born, BornN, BornMem} = Acc) ->
    case lists:member(P, Skip) orelse erlang:process_info(P, binary) of
        true -> Acc;
        undefined -> Acc;
        {binary, B0} ->
            {R0, S0} = bin_sum(B0),
            GC andalso erlang:garbage_collect(P),
            case erlang:process_info(P, [memory, message_queue_len, binary]) of
                [{memory, M}, {message_queue_len, Q}, {binary, B1}] ->
                    {R1, S1} = bin_sum(B1),
                    X = {M, Q, R1, S1, R0, S0},
                    IsBorn = BeforePids =/= none andalso not maps:is_key(P, BeforePids),
                    {top_add(M, P, X, TMem), top_add(Q, P, X, TMq), top_add(S1, P, X, TBin),
                     top_add(S0 - S1, P, X, TFreed),
                     case IsBorn of true -> [{P, M, S1} | Born]; false -> Born end,
                     case IsBorn of true -> BornN + 1; false -> BornN end,
                     case IsBorn of true -> BornMem + M; false -> BornMem end};
                _ -> Acc
            end
    end.

bin_sum(Bins) -> lists:foldl(fun({_, Size, _}, {R, S}) -> {R + 1, S + Size} end, {0, 0}, Bins).

%% A bounded top-N: {N, Count, AscendingList}; an item enters only when it beats the least.
top_add(V, _P, _X, T) when V =< 0 -> T;
top_add(V, P, X, {N, C, L}) when C < N -> {N, C + 1, lists:keymerge(1, L, [{V, P, X}])};
top_add(V, P, X, {N, C, [{Min, _, _} | Rest]}) when V > Min ->
    {N, C, lists:keymerge(1, Rest, [{V, P, X}])};
top_add(_, _, _, T) -> T.

top_list({_, _, L}) -> L.

proc_row(Pid, {M, Q, R1, S1, R0, S0}, Born) ->
    case erlang:process_info(Pid, [registered_name, current_function, heap_size,
                                   total_heap_size]) of
        undefined -> skip;
        [{registered_name, Name}, {current_function, Cur}, {heap_size, H},
         {total_heap_size, TH}] ->
            W = erlang:system_info(wordsize),
            {pid_text(Pid), name_text(Name), mfa_text(initial_call(Pid)), mfa_text(Cur),
             M, H * W, TH * W, Q, R1, S1, R0, S0, Born}
    end.

%% Born processes grouped by registered name or (proc_lib-translated) initial call.
born_groups(Born) ->
    Groups = lists:foldl(
               fun({P, M, _}, G) ->
                       Key = born_key(P),
                       maps:update_with(Key, fun({C, Mem, Ex}) -> {C + 1, Mem + M, Ex} end,
                                        {1, M, pid_text(P)}, G)
               end, #{}, Born),
    Sorted = lists:reverse(lists:keysort(3, [{K, C, Mem, Ex} || {K, {C, Mem, Ex}} <-
                                                                  maps:to_list(Groups)])),
    lists:sublist(Sorted, 50).

%% A spawned fun starts in erlang:apply/2, which says nothing: add where it is now.
born_key(P) ->
    case erlang:process_info(P, [registered_name, current_function]) of
        [{registered_name, Name}, _] when Name =/= [] -> name_text(Name);
        [_, {current_function, Cur}] ->
            case initial_call(P) of
                {erlang, apply, 2} ->
                    <<"spawned fun in ", (mfa_text(Cur))/binary>>;
                MFA -> mfa_text(MFA)
            end;
        _ -> <<"exited">>
    end.

%% proc_lib's translated initial call ('$initial_call' in the dictionary: the gen_server
%% callback module's init/1 rather than proc_lib:init_p/5), else the raw one.
initial_call(P) ->
    case erlang:process_info(P, dictionary) of
        {dictionary, D} ->
            case lists:keyfind('$initial_call', 1, D) of
                {_, {M, F, A}} when is_atom(M) -> {M, F, A};
                _ -> raw_initial_call(P)
            end;
        _ -> undefined
    end.

raw_initial_call(P) ->
    case erlang:process_info(P, initial_call) of
        {initial_call, MFA} -> MFA;
        _ -> undefined
    end.

%% ETS tables, largest first, at most Cap of them.
ets_rows(Before, Cap) ->
    W = erlang:system_info(wordsize),
    BeforeEts = case Before of none -> none; _ -> maps:get(ets, Before) end,
    Rows = [Row || T <- ets:all(), Row <- [ets_row(T, W, BeforeEts)], Row =/= skip],
    lists:sublist(lists:reverse(lists:keysort(7, Rows)), Cap).

ets_row(T, W, BeforeEts) ->
    try
        Id = ets_id(T),
        Name = ets:info(T, name),
        Owner = ets:info(T, owner),
        Size = ets:info(T, size),
        Mem = ets:info(T, memory),
        is_integer(Mem) orelse throw(gone),
        OwnerName = case erlang:process_info(Owner, registered_name) of
                        {registered_name, N} when N =/= [] -> name_text(N);
                        _ -> <<>>
                    end,
        {name_text(Name), id_text(Id), ets:info(T, named_table) =:= true,
         atom_to_binary(ets:info(T, type)), atom_to_binary(ets:info(T, protection)),
         Size, Mem * W, pid_text(Owner), OwnerName,
         BeforeEts =/= none andalso not maps:is_key(Id, BeforeEts)}
    catch _:_ -> skip
    end.

ets_id(T) ->
    case catch ets:info(T, id) of
        Id when Id =/= undefined, not is_tuple(Id) -> Id;
        _ -> T
    end.

%% Per allocator type, summed over instances and over mbcs, sbcs and mbcs_pool: bytes in
%% carriers and in blocks. OTP 23 changed the block format to one entry per block type;
%% both are read.
allocators() ->
    Types = try erlang:system_info(alloc_util_allocators) catch _:_ -> [] end,
    [{atom_to_binary(T), C, B} || T <- Types, {C, B} <- [alloc_usage(T)]].

alloc_usage(Type) ->
    Instances = case catch erlang:system_info({allocator, Type}) of
                    L when is_list(L) -> L;
                    _ -> []
                end,
    lists:foldl(
      fun({instance, _, Info}, Acc) when is_list(Info) ->
              lists:foldl(fun(K, {C, B}) ->
                                  case lists:keyfind(K, 1, Info) of
                                      {K, Props} when is_list(Props) ->
                                          {C + carriers_size(Props), B + blocks_size(Props)};
                                      _ -> {C, B}
                                  end
                          end, Acc, [mbcs, sbcs, mbcs_pool]);
         (_, Acc) -> Acc
      end, {0, 0}, Instances).

carriers_size(Props) ->
    case lists:keyfind(carriers_size, 1, Props) of
        {carriers_size, Cur, _, _} -> Cur;
        {carriers_size, Cur} -> Cur;
        _ -> 0
    end.

blocks_size(Props) ->
    case lists:keyfind(blocks_size, 1, Props) of
        {blocks_size, Cur, _, _} -> Cur;                        % before OTP 23
        {blocks_size, Cur} -> Cur;
        false ->
            case lists:keyfind(blocks, 1, Props) of
                {blocks, PerType} when is_list(PerType) ->      % OTP 23 and later
                    lists:sum([S || {_, L} <- PerType, is_list(L),
                                    {size, S} <- [size_of(L)]]);
                _ -> 0
            end
    end.

size_of(L) ->
    case lists:keyfind(size, 1, L) of
        {size, S, _, _} -> {size, S};
        {size, S} -> {size, S};
        _ -> {size, 0}
    end.

pid_text(P) when is_pid(P) -> list_to_binary(pid_to_list(P));
pid_text(P) when is_port(P) -> list_to_binary(erlang:port_to_list(P));
pid_text(_) -> <<>>.

id_text(Id) when is_atom(Id) -> name_text(Id);
id_text(Id) when is_reference(Id) -> list_to_binary(erlang:ref_to_list(Id));
id_text(Id) -> iolist_to_binary(io_lib:format("~p", [Id])).

%% Names as an Elixir developer writes them: 'Elixir.Foo.Bar' is Foo.Bar.
name_text([]) -> <<>>;
name_text(A) when is_atom(A) ->
    case atom_to_binary(A) of
        <<"Elixir.", Rest/binary>> -> Rest;
        B -> B
    end;
name_text(_) -> <<>>.

mfa_text({M, F, A}) when is_atom(M), is_atom(F), is_integer(A) ->
    iolist_to_binary([name_text(M), $:, atom_to_binary(F), $/, integer_to_binary(A)]);
mfa_text(_) -> <<"unknown">>.

%% Forces a full sweep of every process, lets the freed memory settle, and returns the time
%% it took in microseconds.
gc_all() ->
    T0 = erlang:monotonic_time(microsecond),
    gc_pass(),
    settle(10, erlang:memory(total)),
    erlang:monotonic_time(microsecond) - T0.

%% One sweep without the settling pause: the formatter's per-test snapshots.
gc_light() -> gc_pass().

%% Freed memory does not show in erlang:memory() at once: blocks freed on another scheduler
%% are handed back to their owner later (delayed deallocation), and exiting processes release
%% their heaps asynchronously. Measured here: binary read 400 kB right after the sweep and
%% 20 kB 50 ms later, with no further GC. So: pause and read again until total stays within
%% 0.5 %, at most 10 times.
settle(0, _Prev) -> ok;
settle(N, Prev) ->
    timer:sleep(20),
    Now = erlang:memory(total),
    case abs(Now - Prev) =< Prev div 200 of
        true -> ok;
        false -> settle(N - 1, Now)
    end.

%% One sweep: asynchronous requests, so that the schedulers collect in parallel; a process
%% that exits meanwhile answers false, which is fine.
gc_pass() ->
    Self = self(),
    Refs = [begin
                Ref = make_ref(),
                erlang:garbage_collect(P, [{async, Ref}]),
                Ref
            end || P <- erlang:processes(), P =/= Self],
    erlang:garbage_collect(),
    [receive {garbage_collect, R, _} -> ok end || R <- Refs],
    ok.

%% Runs the project's suite with mix test in this node and returns what our ExUnit formatter
%% recorded. Mix.Task.run/2 returns ok even when tests fail (mix test only registers an
%% at_exit hook), so the verdict comes from the formatter, never from the return value.
run_tests(Args) -> run_tests(Args, #{}).

%% Opts: attribution => off | module | test (default module; see Elixir.Gate.Formatter).
run_tests(Args0, Opts) when is_list(Args0), is_map(Opts) ->
    application:set_env(gate_probe, attribution, maps:get(attribution, Opts, module)),
    Args = [unicode:characters_to_binary(A) || A <- Args0],
    catch unregister(gate_probe_collector),
    true = register(gate_probe_collector, self()),
    Formatters = case lists:member(<<"--formatter">>, Args) of
                     true -> [<<"--formatter">>, <<"Gate.Formatter">>];
                     false -> [<<"--formatter">>, <<"Gate.Formatter">>,
                               <<"--formatter">>, <<"ExUnit.CLIFormatter">>]
                 end,
    forget_test_files(),
    gl_adopt(),
    {Sync, HookError} = case maps:get(attribution, Opts, module) of
                            off -> {false, <<>>};
                            _ ->
                                case hook_install() of
                                    ok -> {true, <<>>};
                                    {error, Why} ->
                                        {false, truncate(iolist_to_binary(
                                                           io_lib:format("~0p", [Why])))}
                                end
                        end,
    application:set_env(gate_probe, attribution_sync, Sync),
    T0 = erlang:monotonic_time(microsecond),
    Outcome = try
                  'Elixir.Mix.Task':rerun(<<"test">>, Args ++ Formatters),
                  ok
              catch
                  Class:Reason:Stack ->
                      {error, format_error(Class, Reason, Stack)}
              after
                  hook_remove()
              end,
    Wall = erlang:monotonic_time(microsecond) - T0,
    unregister(gate_probe_collector),
    Suite = receive
                {gate_suite, S} -> S
            after 0 -> none
            end,
    flush_collector(),
    case {Outcome, Suite} of
        {ok, none} ->
            {error, <<"mix test returned without running a suite (ExUnit reported no "
                      "suite_finished): check that the project has a test/ directory with "
                      "test_helper.exs">>};
        {{error, Msg}, none} -> {error, Msg};
        {_, _} ->
            {ok, Suite#{wall_us => Wall, hook_error => HookError,
                        error => case Outcome of ok -> <<>>; {error, M} -> M end}}
    end.

%% A node that ran the suite before (gate attached to it again, or mix test ran there by
%% hand) has the test files marked as required, and Mix would skip them: no tests. So the
%% project's required .exs files are forgotten first, and the modules they defined removed,
%% so that the suite compiles and runs as on a fresh node.
forget_test_files() ->
    try
        Dir = filename:dirname(unicode:characters_to_list('Elixir.Mix.Project':project_file())),
        Files = [F || F <- 'Elixir.Code':required_files(),
                      lists:prefix(Dir ++ "/", unicode:characters_to_list(F)),
                      filename:extension(unicode:characters_to_list(F)) =:= ".exs"],
        Mods = [M || {M, _} <- code:all_loaded(), lists:member(source_of(M), Files)],
        [begin code:delete(M), code:purge(M) end || M <- Mods],
        'Elixir.Code':unrequire_files(Files)
    catch _:_ -> ok
    end.

source_of(M) ->
    case catch M:module_info(compile) of
        L when is_list(L) ->
            case lists:keyfind(source, 1, L) of
                {source, S} -> unicode:characters_to_binary(S);
                false -> none
            end;
        _ -> none
    end.

flush_collector() ->
    receive {gate_suite, _} -> flush_collector() after 0 -> ok end.

%% Attribution needs memory figures taken exactly at the edges of each test module (and test):
%% ExUnit casts its events to formatters, so a formatter sees them late, after the runner has
%% moved on. The hook makes the edges synchronous: ExUnit.EventManager is recompiled from its
%% own debug info with its private notify/2 renamed and wrapped by one that first calls
%% ex_unit_event/1 in the process that reports the event (a test module's process, which
%% runs that module's tests one after another). The original module is loaded back after the
%% suite and by cleanup/0. When anything is not as expected (no debug info, no notify/2, a
%% compile error) the hook is not installed and the formatter falls back to the late figures.
-define(EM, 'Elixir.ExUnit.EventManager').

hook_install() ->
    try
        {module, ?EM} = code:ensure_loaded(?EM),
        {?EM, Beam, File} = code:get_object_code(?EM),
        {ok, {?EM, [{debug_info, {debug_info_v1, Backend, Data}}]}} =
            beam_lib:chunks(Beam, [debug_info]),
        {ok, Forms} = Backend:debug_info(erlang_v1, ?EM, Data, []),
        true = lists:keymember(notify, 3, [F || {function, _, _, 2, _} = F <- Forms]),
        {ok, Toks, _} = erl_scan:string(
                          "notify(M, Msg) ->"
                          "  try gate_probe:ex_unit_event(Msg) catch _:_ -> ok end,"
                          "  '__gate_notify'(M, Msg)."),
        {ok, Wrapper} = erl_parse:parse_form(Toks),
        Renamed = [case F of
                       {function, L, notify, 2, Cs} -> {function, L, '__gate_notify', 2, Cs};
                       _ -> F
                   end || F <- Forms],
        %% Elixir's debug info has no eof form; an Erlang module's would
        Hooked = case lists:last(Renamed) of
                     {eof, _} = Eof -> lists:droplast(Renamed) ++ [Wrapper, Eof];
                     _ -> Renamed ++ [Wrapper]
                 end,
        %% without the optimisation passes: 5 ms instead of 12 (measured), and this module
        %% only forwards events
        {ok, ?EM, Bin} = compile:forms(Hooked, [binary, return_errors, no_spawn_compiler_process,
                                                no_ssa_opt, no_bool_opt, no_module_opt,
                                                no_type_opt]),
        true = code:soft_purge(?EM),
        {module, ?EM} = code:load_binary(?EM, File, Bin),
        application:set_env(gate_probe, em_original, {File, Beam}),
        ok
    catch
        Class:Reason -> {error, {Class, Reason}}
    end.

hook_remove() ->
    case application:get_env(gate_probe, em_original) of
        {ok, {File, Beam}} ->
            application:unset_env(gate_probe, em_original),
            catch code:soft_purge(?EM),
            catch code:load_binary(?EM, File, Beam),
            catch code:soft_purge(?EM),
            ok;
        undefined -> ok
    end.

%% Called by the hooked notify/2 in the process reporting the event, before ExUnit casts it
%% to the formatters; what it sends to the formatter therefore arrives before the event.
%% Module edges: a light snapshot (no GC). Test edges, in per-test mode: a GC'd one; the
%% delta goes to the formatter ahead of the test_finished event it belongs to.
ex_unit_event({module_started, #{name := Mod} = TM}) ->
    formatter_cast({gate_module, start, Mod, 'Elixir.Gate.Formatter':async(TM),
                    'Elixir.Gate.Formatter':light(false)}),
    %% the processes this module's process spawns (its tests) are the module's: see owners/2
    case whereis('Elixir.Gate.Formatter') of
        undefined -> ok;
        F ->
            gen_server:cast(F, {gate_module_pid, self(), Mod}),
            catch erlang:trace(self(), true, [procs, {tracer, F}])
    end,
    ok;
ex_unit_event({module_finished, #{name := Mod} = TM}) ->
    formatter_cast({gate_module, finish, Mod, 'Elixir.Gate.Formatter':async(TM),
                    'Elixir.Gate.Formatter':light(false)});
ex_unit_event({test_started, #{module := Mod, name := Name} = Test}) ->
    async_test_edge(test_start, Test),
    case application:get_env(gate_probe, attribution) of
        {ok, test} -> put({gate_test, Mod, Name}, 'Elixir.Gate.Formatter':light(true));
        _ -> ok
    end;
ex_unit_event({test_finished, #{module := Mod, name := Name, state := State} = Test}) ->
    async_test_edge(test_finish, Test),
    case erase({gate_test, Mod, Name}) of
        undefined -> ok;
        %% excluded and skipped tests did not run: no figures for them
        _ when element(1, State) =:= excluded; element(1, State) =:= skipped -> ok;
        Start -> formatter_cast({gate_test, Mod, Name, Start,
                                 'Elixir.Gate.Formatter':light(true)})
    end;
ex_unit_event(_) -> ok.

%% Async modules run side by side: the times of their tests' edges tell gate how long each
%% was busy in a test between two module edges, and the growth of that stretch is shared
%% in proportion. Only a timestamp: erlang:memory() waits for every scheduler and cost
%% ~150 us an edge on a busy node (measured: 2 000 small tests, +7.5 % wall time).
async_test_edge(Kind, #{module := Mod, tags := #{async := true}}) ->
    formatter_cast({gate_module, Kind, Mod, true,
                    {erlang:monotonic_time(microsecond), none, 0, 0}});
async_test_edge(_, _) -> ok.

formatter_cast(Msg) ->
    case whereis('Elixir.Gate.Formatter') of
        undefined -> ok;
        Pid -> gen_server:cast(Pid, Msg)
    end.

format_error(Class, Reason, Stack) ->
    Text = try 'Elixir.Exception':format(Class, Reason, Stack)
           catch _:_ -> io_lib:format("~p:~p", [Class, Reason])
           end,
    truncate(unicode:characters_to_binary(Text)).

truncate(Bin) when byte_size(Bin) > ?MAX_MESSAGE ->
    Cut = binary:part(Bin, 0, ?MAX_MESSAGE),
    <<Cut/binary, "\n[gate: message truncated]">>;
truncate(Bin) -> Bin.

app_vsn(App) ->
    case lists:keyfind(App, 1, application:loaded_applications()) of
        {App, _, Vsn} -> list_to_binary(Vsn);
        false -> <<>>
    end.

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
    _ = erpc:multicall(Others, gate_probe, cleanup, [], Timeout),
    [erpc:multicall(Others, code, F, [binary_to_atom(M)], Timeout)
     || M <- Mods, F <- [purge, delete, purge]],
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

%% Runs in the watchdog, which runs this module's code: it deletes the modules (so that
%% the code it runs becomes old) and leaves the purge, which kills it, to a process of
%% code's own.
self_remove() ->
    catch unregister(gate_probe_watchdog),
    catch cleanup(),
    Mods = [M || M <- [gate_probe, 'Elixir.Gate.Formatter'], code:is_loaded(M) =/= false],
    [code:delete(M) || M <- Mods],
    [spawn(code, purge, [M]) || M <- Mods],
    ok.
