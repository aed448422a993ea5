%% gate/probe/gate_probe.erl: the probe gate loads into the node under test.
%%
%% Loaded with code:load_binary/3 (nothing is written to the node's disk) and purged again at
%% the end. Every exported function is called by gate over RPC and returns plain terms
%% (maps with atom keys, binaries, integers) that gate/probe.c decodes with bounds checks.
%% Work that touches every process is done here, inside the node: one RPC per process from
%% the C side would cost ~65 us each.
-module(gate_probe).

-export([hello/0, prepare/0, snapshot/1, run_tests/1, run_tests/2, run_prep/2, gc_all/0, gc_light/0,
         cleanup/0, ex_unit_event/1, hook_install/0, hook_remove/0]).
%% cluster mode: gate talks to one node, which reaches the others (see the end of the file)
-export([cluster_nodes/0, cluster_load/3, cluster_snapshot/3, cluster_unload/3, watch/1]).
%% sampling during a run (gate run --sample, issue 14; see the section near the end)
-export([sample_start/2, sample_stop/0]).
%% gate run --repeat: the node made ready for the next run of the suite (issue 14)
-export([repeat_mark/0, repeat_reset/0]).
%% the watchdog starts in the very call that loads this module (see the end of the file)
-on_load(on_load/0).

%% Largest failure message shipped back per test; ExUnit messages above that are cut.
-define(MAX_MESSAGE, 16384).
%% What grew (issue 13): persistent_term keys remembered at most, new entries and new atoms
%% looked at at most (beyond, a sample), groups shipped per kind.
-define(MAX_PTERM_KEYS, 200000).
-define(MAX_NEW_LOOKED, 100000).
-define(MAX_GROUPS, 20).
%% ETS rows looked at to estimate the refc binaries a growing table holds.
-define(ETS_SAMPLE, 100).

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
%%   bin_leak => boolean(): with gc, also each process's refc binaries before its GC
%%            (recon's bin_leak: what the GC freed), one more call per process, about 1.5x
%%            the pass (default true); false ships undefined for the
%%            before-GC figures (gate decodes -1: not measured)
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
    Scan0 = case Deep of
                true -> deep_scan(scan_gc(GC, maps:get(bin_leak, Opts, true)),
                                  maps:get(top, Opts, 20), Skip, Before,
                                  maps:get(ets_cap, Opts, 10000), Mark =:= before);
                false ->
                    GC andalso gc_pass(),
                    #{}
            end,
    %% the per-process figures of a before-snapshot stay in the node, with the keeper
    {Figs, Scan} = case maps:take(keeper_figs, Scan0) of
                       error -> {#{}, Scan0};
                       {F, S} -> {F, S}
                   end,
    GC andalso erlang:garbage_collect(),
    GC andalso settle_rate(40, erlang:memory(total)),
    GcUs = case GC of
               true -> erlang:monotonic_time(microsecond) - T0;
               false -> 0
           end,
    {Mem, Overhead} = memory_less_keeper(Keeper),
    Allocs = case Deep of
                 true -> allocators();
                 false -> []
             end,
    Mark =:= before andalso keeper_start(Figs),
    PT = case Deep of
             true -> persistent_term_memory();
             false -> #{}
         end,
    maps:merge(PT, Scan#{memory => Mem,
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
          otp_release => list_to_binary(erlang:system_info(otp_release))}).

%% The bytes of persistent_term's values: they live in the literal area (literal_alloc) like
%% the constants of loaded modules, so the rules tell one from the other with this figure.
persistent_term_memory() ->
    try persistent_term:info() of
        #{memory := M} when is_integer(M), M >= 0 -> #{persistent_term_memory => M};
        _ -> #{}
    catch _:_ -> #{}
    end.

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

%% The keeper remembers what existed at the before-snapshot, so that the after-snapshot can
%% tell what grew: per process its memory, mailbox and refc binary bytes (Figs, from the
%% deep scan: M, or {M, Q, B} when it has a mailbox or binaries; [] for a process the scan
%% did not see), per ETS table {Rows, Bytes}, persistent_term:info() and its keys, the open
%% ports and the atom count.
keeper_start(Figs) ->
    keeper_stop(),
    W = erlang:system_info(wordsize),
    PTerm = persistent_term:info(),
    %% keys only (values are not copied); a node with a huge number of terms is not diffed
    PTermKeys = case maps:get(count, PTerm, 0) =< ?MAX_PTERM_KEYS of
                    true -> maps:from_keys([K || {K, _} <- persistent_term:get()], []);
                    false -> none
                end,
    %% with the scan's figures, only the processes born since the scan are added
    Pids = case map_size(Figs) of
               0 -> maps:from_keys(erlang:processes(), []);
               _ -> lists:foldl(fun(P, M) when is_map_key(P, M) -> M;
                                   (P, M) -> M#{P => []}
                                end, Figs, erlang:processes())
           end,
    Set = #{pids => Pids,
            ets => maps:from_list([{ets_id(T), ets_fig(T, W)} || T <- ets:all()]),
            pterm => PTerm,
            pterm_keys => PTermKeys,
            ports => maps:from_keys(erlang:ports(), []),
            atoms => erlang:system_info(atom_count)},
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
    sample_stop(),
    hook_remove(),
    %% an attached node keeps running: none of gate's settings may stay in it
    [application:unset_env(gate_probe, K) || K <- [spawn_owners, attribution, attribution_sync,
                                                   repeat_required]],
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

%% How the pass treats each process: leak: its refc binaries, a GC, then memory, mailbox and
%% binaries again in one call (recon's bin_leak: what the GC freed); true: the GC and the one
%% call (two signals per process, as the floor: issue 15); false: the one call.
scan_gc(true, true) -> leak;
scan_gc(GC, _) -> GC.

%% The single pass: for each process, its refc binaries, a GC, then memory, mailbox and its
%% binaries again (recon's bin_leak: what the GC freed). Kept: the top N by memory, mailbox,
%% binary bytes after GC and binary bytes freed, and (after a before mark) the born ones.
deep_scan(GC, N, Skip, Before, EtsCap, Collect) ->
    BeforePids = case Before of none -> none; _ -> maps:get(pids, Before) end,
    {TMem, TMq, TBin, TFreed, Born, BornN, BornMem, GMem, GMq, GBin, Figs} =
        parallel_scan(erlang:processes(), GC, N, Skip, BeforePids, Collect),
    Tops = top_list(TMem) ++ top_list(TMq) ++ top_list(TBin) ++ top_list(TFreed),
    Nums = maps:from_list([{Pid, X} || {_, Pid, X} <- Tops]),
    Procs = [Row || Pid <- lists:usort(maps:keys(Nums)),
                    Row <- [proc_row(Pid, maps:get(Pid, Nums),
                                     BeforePids =/= none andalso
                                         not maps:is_key(Pid, BeforePids))],
                    Row =/= skip],
    Ets = ets_rows(Before, EtsCap),
    PTerm = persistent_term:info(),
    Scan = #{procs => Procs,
             born_count => BornN,
             born_memory => BornMem,
             born => born_groups(Born),
             ets => Ets,
             owners => owners(Born, Before),
             pterm_count => maps:get(count, PTerm, 0),
             pterm_memory => maps:get(memory, PTerm, 0)},
    case Collect of
        true -> Scan#{keeper_figs => maps:from_list(Figs)};
        false when Before =:= none -> Scan;
        false -> maps:merge(Scan, what_grew(Before, N, GMem, GMq, GBin))
    end.

%% ---- What grew since the before-snapshot (issue 13) ----
%% Computed here from the keeper's before set, bounded: the top N processes by growth of
%% memory, mailbox and refc binary bytes (from the one scan pass), the top N ETS tables by
%% growth in bytes and in rows (created during the run or before), the persistent_term keys
%% and atoms created during the run grouped by their shape, and the ports opened during the
%% run and still open, grouped by name and owner.
what_grew(Before, N, GMem, GMq, GBin) ->
    Owners = spawn_owner_map(),
    Tops = top_list(GMem) ++ top_list(GMq) ++ top_list(GBin),
    Grew = maps:from_list([{Pid, G} || {_, Pid, G} <- Tops]),
    Procs = [Row || {Pid, G} <- maps:to_list(Grew), Row <- [grew_row(Pid, G, Owners)],
                    Row =/= skip],
    {PortsN, Ports} = ports_new(Before, Owners),
    #{grew_procs => Procs,
      grew_ets => ets_growers(Before, N, Owners),
      pterm_new => pterm_new(Before),
      ports_opened => PortsN,
      ports => Ports,
      atoms_new => atoms_new(Before)}.

spawn_owner_map() ->
    case application:get_env(gate_probe, spawn_owners) of
        {ok, Map} when is_map(Map) -> Map;
        _ -> #{}
    end.

module_text(P, Owners) when is_pid(P), map_size(Owners) > 0 ->
    case owner_of(P, Owners, 32) of
        none -> <<>>;
        Mod -> name_text(Mod)
    end;
module_text(_, _) -> <<>>.

%% {Pid, Name, InitialCall, CurrentFunction, Ancestor, TestModule, Mem0, Mem, Mq0, Mq,
%%  Bin0, Bin, Born}
grew_row(Pid, {M0, Q0, B0, M, Q, B, Born}, Owners) ->
    case erlang:process_info(Pid, [registered_name, current_function]) of
        [{registered_name, Name}, {current_function, Cur}] ->
            {pid_text(Pid), name_text(Name), mfa_text(initial_call(Pid)), mfa_text(Cur),
             ancestor_text(Pid), module_text(Pid, Owners), M0, M, Q0, Q, B0, B, Born};
        _ -> skip
    end.

%% The nearest named ancestor: proc_lib's '$ancestors' (registered names, or pids that may
%% be registered), else a registered parent or grandparent (init says nothing).
ancestor_text(P) ->
    Ancestors = case erlang:process_info(P, dictionary) of
                    {dictionary, D} ->
                        case lists:keyfind('$ancestors', 1, D) of
                            {_, L} when is_list(L) -> L;
                            _ -> []
                        end;
                    _ -> []
                end,
    case first_named(Ancestors) of
        <<>> -> parent_named(P, 2);
        Name -> Name
    end.

first_named([A | _]) when is_atom(A) -> name_text(A);
first_named([P | Rest]) when is_pid(P) ->
    case erlang:process_info(P, registered_name) of
        {registered_name, N} when is_atom(N), N =/= [] -> name_text(N);
        _ -> first_named(Rest)
    end;
first_named([_ | Rest]) -> first_named(Rest);
first_named([]) -> <<>>.

parent_named(_P, 0) -> <<>>;
parent_named(P, K) ->
    case erlang:process_info(P, parent) of
        {parent, Parent} when is_pid(Parent) ->
            case erlang:process_info(Parent, registered_name) of
                {registered_name, init} -> <<>>;
                {registered_name, N} when is_atom(N), N =/= [] -> name_text(N);
                _ -> parent_named(Parent, K - 1)
            end;
        _ -> <<>>
    end.

%% What the keeper keeps of a table: {Rows, Bytes}, [] when it went away meanwhile.
ets_fig(T, W) ->
    case catch {ets:info(T, size), ets:info(T, memory)} of
        {S, M} when is_integer(S), is_integer(M) -> {S, M * W};
        _ -> []
    end.

%% {Name, Id, OwnerPid, OwnerName, OwnerCall, TestModule, Rows0, Rows, Bytes0, Bytes, Created,
%%  BinBytes}: BinBytes estimates the refc binaries its rows hold (off the table's own memory,
%%  under erlang:memory(binary)) from a sample of ?ETS_SAMPLE rows
ets_growers(Before, N, Owners) ->
    W = erlang:system_info(wordsize),
    BeforeEts = maps:get(ets, Before),
    Empty = {N, 0, []},
    {TB, TR} = lists:foldl(
                 fun(T, {AB, AR} = Acc) ->
                         case catch {ets_id(T), ets:info(T, size), ets:info(T, memory)} of
                             {Id, S, M} when is_integer(S), is_integer(M) ->
                                 {S0, B0, Created} = case maps:get(Id, BeforeEts, created) of
                                                         {S1, B1} -> {S1, B1, false};
                                                         created -> {0, 0, true};
                                                         _ -> {S, M * W, false}
                                                     end,
                                 G = {T, Id, S0, S, B0, M * W, Created},
                                 {top_add(M * W - B0, T, G, AB), top_add(S - S0, T, G, AR)};
                             _ -> Acc
                         end
                 end, {Empty, Empty}, ets:all()),
    Gs = maps:from_list([{T, G} || {_, T, G} <- top_list(TB) ++ top_list(TR)]),
    [Row || G <- maps:values(Gs), Row <- [ets_grew_row(G, Owners)], Row =/= skip].

ets_grew_row({T, Id, S0, S, B0, B, Created}, Owners) ->
    case catch {ets:info(T, name), ets:info(T, owner)} of
        {Name, Owner} when is_atom(Name), is_pid(Owner) ->
            {OwnerName, OwnerCall} = proc_label(Owner),
            {name_text(Name), id_text(Id), pid_text(Owner), OwnerName, OwnerCall,
             module_text(Owner, Owners), S0, S, B0, B, Created, ets_bin_estimate(T, S)};
        _ -> skip
    end.

%% The refc binary bytes of a sample of rows, scaled to all of them; 0 for a table this
%% process may not read (private) or an empty one.
ets_bin_estimate(_T, 0) -> 0;
ets_bin_estimate(T, Rows) ->
    try ets:select(T, [{'_', [], ['$_']}], ?ETS_SAMPLE) of
        {Objs, _} when Objs =/= [] ->
            {Sum, _} = lists:foldl(fun refc_bytes/2, {0, ?ETS_SAMPLE * 64}, Objs),
            Sum * Rows div length(Objs);
        _ -> 0
    catch _:_ -> 0
    end.

%% Bytes of the refc binaries (over 64 bytes: the rest are copied into the row) in a term,
%% visiting at most Budget terms.
refc_bytes(_, {Sum, Budget}) when Budget =< 0 -> {Sum, 0};
refc_bytes(B, {Sum, Budget}) when is_binary(B), byte_size(B) > 64 ->
    {Sum + binary:referenced_byte_size(B), Budget - 1};
refc_bytes(T, {Sum, Budget}) when is_tuple(T) ->
    lists:foldl(fun refc_bytes/2, {Sum, Budget - 1}, tuple_to_list(T));
refc_bytes([H | T], {Sum, Budget}) -> refc_bytes(T, refc_bytes(H, {Sum, Budget - 1}));
refc_bytes(M, {Sum, Budget}) when is_map(M) ->
    refc_bytes(maps:values(M), {Sum, Budget - 1});
refc_bytes(_, {Sum, Budget}) -> {Sum, Budget - 1}.

%% {RegisteredName, Call}: the call is the initial call, or for a spawned fun (which starts
%% in erlang:apply/2 and says nothing) where it is now.
proc_label(P) ->
    Name = case erlang:process_info(P, registered_name) of
               {registered_name, N} when is_atom(N), N =/= [] -> name_text(N);
               _ -> <<>>
           end,
    Call = case initial_call(P) of
               {erlang, apply, 2} ->
                   case erlang:process_info(P, current_function) of
                       {current_function, Cur} -> <<"spawned fun in ", (mfa_text(Cur))/binary>>;
                       _ -> mfa_text({erlang, apply, 2})
                   end;
               MFA -> mfa_text(MFA)
           end,
    {Name, Call}.

%% persistent_term entries created during the run, grouped by the shape of their key:
%% [{Shape, Count, Bytes, ExampleKey}], largest count first.
pterm_new(Before) ->
    case maps:get(pterm_keys, Before, none) of
        Keys when is_map(Keys) ->
            W = erlang:system_info(wordsize),
            {Groups, _} = lists:foldl(
                            fun({K, V}, {G, Seen}) ->
                                    case maps:is_key(K, Keys) of
                                        true -> {G, Seen};
                                        false when Seen >= ?MAX_NEW_LOOKED ->
                                            {group_add(key_shape(K), 1, 0, K, G), Seen};
                                        false ->
                                            Bytes = try erts_debug:flat_size(V) * W
                                                    catch _:_ -> 0 end,
                                            {group_add(key_shape(K), 1, Bytes, K, G), Seen + 1}
                                    end
                            end, {#{}, 0}, persistent_term:get()),
            groups_top(Groups);
        _ -> []
    end.

group_add(Shape, C, B, Example, G) ->
    maps:update_with(Shape, fun({C0, B0, E}) -> {C0 + C, B0 + B, E} end,
                     {C, B, Example}, G).

groups_top(Groups) ->
    Sorted = lists:reverse(lists:keysort(2, [{S, C, B, example_text(E)}
                                             || {S, {C, B, E}} <- maps:to_list(Groups)])),
    lists:sublist(Sorted, ?MAX_GROUPS).

%% As an Elixir developer writes it: {WhatGrew.Settings, 17}, :user_1, "key".
example_text(A) when is_atom(A) -> name_text(A);
example_text(T) ->
    B = iolist_to_binary(elixir_text(T, 3)),
    case byte_size(B) > 120 of
        true -> <<(binary:part(B, 0, 117))/binary, "...">>;
        false -> B
    end.

elixir_text(A, _) when is_atom(A) ->
    case atom_to_binary(A) of
        <<"Elixir.", Rest/binary>> -> Rest;
        Bin when A =:= true; A =:= false; A =:= nil -> Bin;
        Bin -> [$:, Bin]
    end;
elixir_text(T, D) when is_tuple(T), D > 0 ->
    [${, lists:join(", ", [elixir_text(E, D - 1) || E <- tuple_to_list(T)]), $}];
elixir_text(T, _) -> io_lib:format("~0tp", [T]).

%% A key's shape: digit runs become #, so that user_1 .. user_4000 are one group; a tuple
%% keeps its atoms ({MyApp.Cache, _}); other terms by their type.
key_shape(K) when is_atom(K) -> digits_out(name_text(K));
key_shape(K) when is_binary(K), byte_size(K) =< 120 ->
    case io_lib:printable_unicode_list(unicode:characters_to_list(K)) of
        true -> <<$", (digits_out(K))/binary, $">>;
        false -> <<"binary">>
    end;
key_shape(K) when is_tuple(K), tuple_size(K) > 0 ->
    Els = [case E of
               _ when is_atom(E) -> digits_out(name_text(E));
               _ -> <<"_">>
           end || E <- lists:sublist(tuple_to_list(K), 4)],
    More = case tuple_size(K) > 4 of true -> [<<", ...">>]; false -> [] end,
    iolist_to_binary([${, lists:join(<<", ">>, Els), More, $}]);
key_shape(K) when is_integer(K) -> <<"integer">>;
key_shape(K) when is_reference(K) -> <<"reference">>;
key_shape(K) when is_list(K) -> <<"list">>;
key_shape(_) -> <<"term">>.

%% A number that counts (user_12, item-7, key42), not one inside a word (i18n, Base64).
digits_out(B) ->
    re:replace(B, "(?<![A-Za-z0-9])[0-9]+|[0-9]+$", "#", [global, {return, binary}, unicode]).

%% Atoms created during the run, by shape: atoms are numbered in the order they are made,
%% so those from the before count up are new; each is read by its index (the external
%% format's internal atom reference). At most ?MAX_NEW_LOOKED of them, evenly sampled.
atoms_new(Before) ->
    case maps:get(atoms, Before, none) of
        From when is_integer(From) ->
            To = min(erlang:system_info(atom_count), 1 bsl 24),
            Step = max(1, (To - From) div ?MAX_NEW_LOOKED),
            try
                Groups = atoms_fold(From, To, Step, #{}),
                [{S, C, 0, E} || {S, C, _, E} <- groups_top(Groups)]
            catch _:_ -> []
            end;
        _ -> []
    end.

atoms_fold(I, To, _Step, G) when I >= To -> G;
atoms_fold(I, To, Step, G) ->
    A = binary_to_term(<<131, 75, I:24>>),
    true = is_atom(A),
    atoms_fold(I + Step, To, Step, group_add(digits_out(name_text(A)), Step, 0, A, G)).

%% Ports opened during the run and still open: their count, and by name and owner (its
%% registered name, else its initial call) [{Name, OwnerPid, OwnerName, OwnerCall,
%% TestModule, Count, OsPid}], most first; the owner, module and OS pid are an example's.
ports_new(Before, Owners) ->
    case maps:get(ports, Before, none) of
        BeforePorts when is_map(BeforePorts) ->
            New = [P || P <- erlang:ports(), not maps:is_key(P, BeforePorts)],
            Groups = lists:foldl(
                       fun(P, G) ->
                               case {erlang:port_info(P, name), erlang:port_info(P, connected),
                                     erlang:port_info(P, os_pid)} of
                                   {{name, Name}, {connected, Owner}, {os_pid, Os}} ->
                                       {ON, OC} = proc_label(Owner),
                                       Key = {port_name(Name), ON, OC},
                                       maps:update_with(Key, fun({C, E}) -> {C + 1, E} end,
                                                        {1, {Owner, Os}}, G);
                                   _ -> G
                               end
                       end, #{}, New),
            Rows = [{Name, pid_text(Owner), ON, OC, module_text(Owner, Owners), C,
                     case Os of I when is_integer(I) -> I; _ -> 0 end}
                    || {{Name, ON, OC}, {C, {Owner, Os}}} <- maps:to_list(Groups)],
            {length(New), lists:sublist(lists:reverse(lists:keysort(6, Rows)), ?MAX_GROUPS)};
        _ -> {0, []}
    end.

port_name(Name) ->
    B = case unicode:characters_to_binary(Name) of
            Bin when is_binary(Bin) -> Bin;
            _ -> <<"?">>
        end,
    case byte_size(B) > 120 of
        true -> <<(binary:part(B, 0, 117))/binary, "...">>;
        false -> B
    end.

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
parallel_scan(Pids, GC, N, Skip, BeforePids, Collect) ->
    W = max(1, erlang:system_info(schedulers_online)),
    Shares = deal(Pids, W),
    Self = self(),
    Workers = [spawn_monitor(fun() ->
                                     Empty = {N, 0, []},
                                     Acc0 = {Empty, Empty, Empty, Empty, [], 0, 0,
                                             Empty, Empty, Empty, []},
                                     R = lists:foldl(fun(P, A) ->
                                                             scan_one(P, GC, Skip, BeforePids,
                                                                      Collect, A)
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

merge_scan({A1, A2, A3, A4, B, BN, BM, G1, G2, G3, F},
           {C1, C2, C3, C4, D, DN, DM, H1, H2, H3, E}) ->
    {top_merge(A1, C1), top_merge(A2, C2), top_merge(A3, C3), top_merge(A4, C4),
     B ++ D, BN + DN, BM + DM, top_merge(G1, H1), top_merge(G2, H2), top_merge(G3, H3),
     F ++ E}.

top_merge(T, {_, _, L}) ->
    lists:foldl(fun({V, P, X}, Acc) -> top_add(V, P, X, Acc) end, T, L).

scan_one(P, _GC, _Skip, _BeforePids, _Collect, Acc) when not is_pid(P) -> Acc;
scan_one(P, GC, Skip, BeforePids, Collect, Acc) ->
    case lists:member(P, Skip) of
        true -> Acc;
        false when GC =/= leak -> scan_proc(P, GC, BeforePids, Collect, none, Acc);
        false ->
            case erlang:process_info(P, binary) of
                {binary, B0} -> scan_proc(P, GC, BeforePids, Collect, bin_sum(B0), Acc);
                undefined -> Acc
            end
    end.

scan_proc(P, GC, BeforePids, Collect, Pre,
          {TMem, TMq, TBin, TFreed, Born, BornN, BornMem, GMem, GMq, GBin, Figs} = Acc) ->
    GC =/= false andalso erlang:garbage_collect(P),
    case erlang:process_info(P, [memory, message_queue_len, binary]) of
        [{memory, M}, {message_queue_len, Q}, {binary, B1}] ->
            {R1, S1} = bin_sum(B1),
            {R0, S0} = case Pre of
                           none when GC =:= false -> {R1, S1};
                           none -> {undefined, undefined};
                           _ -> Pre
                       end,
            X = {M, Q, R1, S1, R0, S0},
            %% one look-up: born, or its figures at the before-snapshot
            Was = case BeforePids of
                      none -> none;
                      _ -> maps:get(P, BeforePids, born)
                  end,
            IsBorn = Was =:= born,
            %% growth since the before-snapshot (issue 13): from 0 for the born
            {GMem1, GMq1, GBin1} =
                case was_fig(Was) of
                    {WasM, WasQ, WasB} ->
                        G = {WasM, WasQ, WasB, M, Q, S1, IsBorn},
                        {top_add(M - WasM, P, G, GMem), top_add(Q - WasQ, P, G, GMq),
                         top_add(S1 - WasB, P, G, GBin)};
                    _ -> {GMem, GMq, GBin}
                end,
            {top_add(M, P, X, TMem), top_add(Q, P, X, TMq), top_add(S1, P, X, TBin),
             case is_integer(S0) of
                 true -> top_add(S0 - S1, P, X, TFreed);
                 false -> TFreed
             end,
             case IsBorn of true -> [{P, M, S1} | Born]; false -> Born end,
             case IsBorn of true -> BornN + 1; false -> BornN end,
             case IsBorn of true -> BornMem + M; false -> BornMem end,
             GMem1, GMq1, GBin1,
             case Collect of
                 true when Q =:= 0, S1 =:= 0 -> [{P, M} | Figs];
                 true -> [{P, {M, Q, S1}} | Figs];
                 false -> Figs
             end};
        _ -> Acc
    end.

%% A process's figures at the before-snapshot as the keeper holds them; born: from zero;
%% none when the scan did not see it.
was_fig(born) -> {0, 0, 0};
was_fig(M) when is_integer(M) -> {M, 0, 0};
was_fig({_, _, _} = F) -> F;
was_fig(_) -> none.

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
    %% one ets:info/1 per table, and each owner's name asked once (issue 15)
    {Rows, _} = lists:foldl(fun(T, {Acc, Names}) ->
                                    case ets_row1(T, W, BeforeEts, Names) of
                                        {skip, Names1} -> {Acc, Names1};
                                        {Row, Names1} -> {[Row | Acc], Names1}
                                    end
                            end, {[], #{}}, ets:all()),
    lists:sublist(lists:reverse(lists:keysort(7, lists:reverse(Rows))), Cap).

ets_row1(T, W, BeforeEts, Names) ->
    case catch ets:info(T) of
        Info when is_list(Info) ->
            Get = fun(K) -> case lists:keyfind(K, 1, Info) of {_, V} -> V; false -> undefined end end,
            Id = case Get(id) of
                     I when I =/= undefined, not is_tuple(I) -> I;
                     _ -> T
                 end,
            Owner = Get(owner),
            {OwnerName, Names1} =
                case Names of
                    #{Owner := ON} -> {ON, Names};
                    _ ->
                        ON = case erlang:process_info(Owner, registered_name) of
                                 {registered_name, N} when N =/= [] -> name_text(N);
                                 _ -> <<>>
                             end,
                        {ON, Names#{Owner => ON}}
                end,
            Mem = Get(memory),
            Size = Get(size),
            case is_integer(Mem) andalso is_integer(Size) of
                true ->
                    {{name_text(Get(name)), id_text(Id), Get(named_table) =:= true,
                      atom_to_binary(Get(type)), atom_to_binary(Get(protection)),
                      Size, Mem * W, pid_text(Owner), OwnerName,
                      BeforeEts =/= none andalso not maps:is_key(Id, BeforeEts)}, Names1};
                false -> {skip, Names1}
            end;
        _ -> {skip, Names}
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
%% settle/2's bound as a rate, read four times as often (issue 15): at most 0.125 % of total
%% per 5 ms pause (0.5 % per 20 ms), at most 40 pauses. It stops at the first 5 ms step where
%% the drift is that slow, rather than at the next multiple of 20 ms: 5-10 ms after a GC of a
%% node that runs a suite, instead of 20-40 (twice per gate run).
settle_rate(0, _Prev) -> ok;
settle_rate(N, Prev) ->
    timer:sleep(5),
    Now = erlang:memory(total),
    case abs(Now - Prev) =< Prev div 800 of
        true -> ok;
        false -> settle_rate(N - 1, Now)
    end.

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
%% recorded, and what `mix test` would have exited with (issue 18). mix test signals most of
%% its failures through System.at_exit hooks that exit({shutdown, N}) (failed tests: the
%% exit status, 2 by default; a coverage threshold: 3; --only matching nothing: 1), some by
%% exit({shutdown, 1}) straight from the task (--warnings-as-errors, a test file that does not
%% compile) and others by raising Mix.Error. Elixir's CLI (Kernel.CLI.exec_fun/2, at_exit/1)
%% turns those into the VM's exit status; run_tests does the same in this node: the task's own
%% exit or exception gives the first status, then the at_exit hooks the run registered are run
%% (and removed) in the CLI's order, each able to change it. Hooks registered before the run
%% are kept aside and put back. What the task and its hooks print themselves (Mix's own words:
%% "** (Mix) ...", "ERROR! ... --warnings-as-errors", a coverage verdict) is captured beside
%% the console, for the reason.
run_tests(Args) -> run_tests(Args, #{}).

%% Opts: attribution => off | module | test (default module; see Elixir.Gate.Formatter),
%%       max_tests => the formatter's cap.
run_tests(Args0, Opts) when is_list(Args0), is_map(Opts) ->
    Mode = maps:get(attribution, Opts, module),
    application:set_env(gate_probe, attribution, Mode),
    Args = [unicode:characters_to_binary(A) || A <- Args0],
    catch unregister(gate_probe_collector),
    true = register(gate_probe_collector, self()),
    forget_test_files(),
    gl_adopt(),
    %% an attached node keeps its ExUnit configuration from run to run otherwise
    ExUnitEnv = application:get_all_env(ex_unit),
    {Hooked, HookError} = case hook_install() of
                              ok -> {true, <<>>};
                              {error, HookWhy} ->
                                  {false, truncate(iolist_to_binary(io_lib:format("~0p", [HookWhy])))}
                          end,
    application:set_env(gate_probe, attribution_sync, Hooked andalso Mode =/= off),
    %% hooked: our formatter gets ExUnit's events from the hook and the project's formatters
    %% stay as configured; otherwise mix test has to start it (and --formatter replaces them)
    {Formatter, Extra} =
        case Hooked of
            true ->
                {ok, F} = gen_server:start('Elixir.Gate.Formatter',
                                           [{gate_max_tests, maps:get(max_tests, Opts, 200000)}],
                                           []),
                {F, []};
            false ->
                {none, case lists:member(<<"--formatter">>, Args) of
                           true -> [<<"--formatter">>, <<"Gate.Formatter">>];
                           false -> [<<"--formatter">>, <<"Gate.Formatter">>,
                                     <<"--formatter">>, <<"ExUnit.CLIFormatter">>]
                       end}
        end,
    %% gate's prepare/0 started ExUnit in a node gate booted: whether the suite starts it too
    %% (ExUnit.start/0,1 called), as it must under bare mix test, is counted
    MustStart = maps:get(ex_unit_by_gate, Opts, false) =:= true andalso
        not required_by_project(ex_unit) andalso start_count(true),
    Capture = capture_start(),
    Kept = elixir_config:get_and_put(at_exit, []),
    T0 = erlang:monotonic_time(microsecond),
    {Status0, Raised} = try
                            run_test_task(Args ++ Extra),
                            {0, <<>>}
                        catch
                            Class:Reason:Stack -> task_status(Class, Reason, Stack)
                        after
                            hook_remove()
                        end,
    {Status1, HookRaised0} = at_exit_run(Status0, <<>>, Capture),
    {Status, HookRaised} =
        case MustStart andalso start_count(false) =:= 0 of
            true when Status1 =:= 0 ->
                {1, <<HookRaised0/binary, "ExUnit was never started: no test_helper.exs called "
                      "ExUnit.start() (gate starts ExUnit itself, but bare `mix test` fails "
                      "with \"no process\" for ExUnit.Server); add ExUnit.start() to "
                      "test/test_helper.exs">>};
            _ -> {Status1, HookRaised0}
        end,
    elixir_config:update(at_exit, fun(New) -> New ++ Kept end),
    Wall = erlang:monotonic_time(microsecond) - T0,
    Words = capture_stop(Capture),
    is_pid(Formatter) andalso (catch gen_server:stop(Formatter)),
    restore_env(ex_unit, ExUnitEnv),
    unregister(gate_probe_collector),
    Suites = collect_suites([]),
    Suite = merge_suites(Suites),
    Failed = length([T || T <- maps:get(tests, Suite), element(6, T) =/= passed,
                          element(6, T) =/= skipped, element(6, T) =/= excluded]),
    {Why, Explained} = exit_reason(Status, Failed, <<Raised/binary, HookRaised/binary>>, Words),
    {ok, Suite#{wall_us => Wall, hook_error => HookError,
                suite_ran => Suites =/= [],
                exit_status => Status, exit_reason => Why, exit_explained => Explained,
                partition => partition(Args),
                error => case Raised of <<>> -> <<>>; _ -> Raised end}}.

%% Counts calls of ExUnit.start/0,1 (call_count: every process, no trace flags) while on;
%% start_count(false) stops counting and returns the count.
-spec start_count(boolean()) -> boolean() | non_neg_integer().
start_count(true) ->
    %% true when counting (ExUnit is loaded and has start/0,1)
    erlang:trace_pattern({'Elixir.ExUnit', start, '_'}, true, [call_count]) > 0;
start_count(false) ->
    N = lists:sum([case erlang:trace_info({'Elixir.ExUnit', start, A}, call_count) of
                       {call_count, C} when is_integer(C) -> C;
                       _ -> 0
                   end || A <- [0, 1]]),
    _ = erlang:trace_pattern({'Elixir.ExUnit', start, '_'}, false, [call_count]),
    N.

%% App is among the applications the project's apps need (app.start then started it, under
%% bare mix test too).
required_by_project(App) ->
    Apps = try 'Elixir.Mix.Project':config() of
               C when is_list(C) ->
                   case proplists:get_value(app, C) of
                       A when is_atom(A), A =/= nil -> [A];
                       _ -> [binary_to_atom(N) || N <- umbrella_apps()]
                   end;
               _ -> []
           catch _:_ -> []
           end,
    lists:member(App, needs(Apps, [])).

umbrella_apps() ->
    try [atom_to_binary(maps:get(app, D)) || D <- 'Elixir.Mix.Dep.Umbrella':cached()]
    catch _:_ -> []
    end.

needs([], Seen) -> Seen;
needs([A | Rest], Seen) ->
    case lists:member(A, Seen) of
        true -> needs(Rest, Seen);
        false ->
            Deps = case application:get_key(A, applications) of
                       {ok, L} -> L;
                       undefined -> []
                   end ++ case application:get_key(A, included_applications) of
                              {ok, I} -> I;
                              undefined -> []
                          end,
            needs(Deps ++ Rest, [A | Seen])
    end.

%% The test task as `mix test ARGS` runs it: a `test` alias whose preparation run_prep/2 ran
%% already goes on from its test step; any other alias runs whole (Mix.Task.rerun/2).
run_test_task(Args) ->
    case split_alias(test_alias()) of
        {_, [Step | After]} ->
            Proj = 'Elixir.Mix.Project':get(),
            'Elixir.Mix.Task':reenable(<<"test">>),
            'Elixir.Mix.TasksServer':put({alias, <<"test">>, Proj}),
            [<<"test">> | StepArgs] = 'Elixir.OptionParser':split(Step),
            'Elixir.Mix.Task':run(<<"test">>, StepArgs ++ Args),
            [alias_step(S) || S <- After],
            'Elixir.Mix.TasksServer':put({task, <<"test">>, Proj}),
            ok;
        _ ->
            'Elixir.Mix.Task':rerun(<<"test">>, Args)
    end.

%% Before the before-snapshot (issue 18): what `mix test` does ahead of the suite and gate
%% can tell apart. The steps of a `test` alias before its "test" step (e.g. "ecto.create
%% --quiet", "ecto.migrate"), as Mix runs them (no arguments: Mix gives those to the last
%% step only); then, in a node gate started (Opts start => true, the node booted with
%% `mix run --no-start`), the project's applications, as mix test's own app.start would,
%% unless --no-start is given (on the command line or in the alias's test step).
%% Returns ok | {error, Text}.
run_prep(Args0, Opts) when is_list(Args0), is_map(Opts) ->
    Args = [unicode:characters_to_binary(A) || A <- Args0],
    try
        {Prep, Rest} = split_alias(test_alias()),
        [alias_step(S) || S <- Prep],
        StepArgs = case Rest of
                       [Step | _] -> tl('Elixir.OptionParser':split(Step));
                       [] -> []
                   end,
        TestArgs = StepArgs ++ Args,
        case maps:get(start, Opts, false) andalso not lists:member(<<"--no-start">>, TestArgs) of
            true ->
                'Elixir.Mix.Task':reenable(<<"app.start">>),
                'Elixir.Mix.Task':run(<<"app.start">>, TestArgs);
            false -> ok
        end,
        {ok, #{prep_steps => length(Prep), alias => Rest =/= []}}
    catch
        Class:Reason:Stack ->
            {Status, Text} = task_status(Class, Reason, Stack),
            {error, iolist_to_binary(io_lib:format("exit status ~b: ~ts", [Status, Text]))}
    end.

test_alias() ->
    Aliases = case 'Elixir.Mix.Project':config() of
                  C when is_list(C) -> proplists:get_value(aliases, C, []);
                  _ -> []
              end,
    case Aliases of
        L when is_list(L) -> proplists:get_value(test, L);
        _ -> undefined
    end.

%% A list alias with a "test" step: {StepsBefore, [TestStep | StepsAfter]}; anything else
%% (no alias, a function, no "test" step in it): {[], []}, and mix test runs it whole.
split_alias(S) when is_binary(S) -> split_alias([S]);
split_alias(L) when is_list(L) ->
    IsTest = fun(S) when is_binary(S) ->
                     case catch 'Elixir.OptionParser':split(S) of
                         [<<"test">> | _] -> true;
                         _ -> false
                     end;
                (_) -> false
             end,
    case lists:splitwith(fun(S) -> not IsTest(S) end, L) of
        {Before, [_ | _] = Rest} -> {Before, Rest};
        _ -> {[], []}
    end;
split_alias(_) -> {[], []}.

alias_step(S) when is_binary(S) ->
    [Task | A] = 'Elixir.OptionParser':split(S),
    %% as in a fresh `mix test`, also in a node where the step ran before (attached)
    'Elixir.Mix.Task':reenable(Task),
    'Elixir.Mix.Task':run(Task, A);
alias_step(F) when is_function(F, 1) -> F([]);
alias_step(Other) ->
    'Elixir.Mix':raise(iolist_to_binary(io_lib:format("Invalid Mix alias format: ~0tp",
                                                      [Other]))).

%% The status and text Elixir's CLI and Mix's give a task that ended by exit or exception.
task_status(exit, {shutdown, N}, _) when is_integer(N) -> {N, <<>>};
task_status(exit, R, _) when R =:= normal; R =:= shutdown -> {0, <<>>};
task_status(exit, {shutdown, _}, _) -> {0, <<>>};
task_status(error, #{'__exception__' := true, '__struct__' := Mod, mix := M} = E, _)
  when M =:= true; is_integer(M) ->
    Msg = try 'Elixir.Exception':message(E) catch _:_ -> <<"(no message)">> end,
    [First | _] = binary:split(atom_to_binary(Mod), <<".">>, [global]) -- [<<"Elixir">>],
    {case M of true -> 1; _ -> M end,
     truncate(unicode:characters_to_binary(["** (", First, ") ", Msg]))};
task_status(Class, Reason, Stack) ->
    {1, format_error(Class, Reason, Stack)}.

%% Runs the at_exit hooks registered since the run started, as Kernel.CLI.at_exit/1 does:
%% each in a process of its own, given the status so far; exit({shutdown, N}) sets it, a crash
%% sets 1; hooks that hooks register run after them.
at_exit_run(Status, Text, Capture) ->
    case elixir_config:get_and_put(at_exit, []) of
        [] -> {Status, Text};
        Hooks ->
            {S, T} = lists:foldl(fun(H, Acc) -> at_exit_one(H, Acc, Capture) end,
                                 {Status, Text}, Hooks),
            at_exit_run(S, T, Capture)
    end.

at_exit_one(Hook, {Status, Text}, Capture) ->
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() ->
                                       receive go -> ok end,
                                       R = try Hook(Status), same
                                           catch C:E:St -> task_status(C, E, St)
                                           end,
                                       Self ! {self(), gate_hook, R}
                               end),
    capture_watch(Capture, Pid),
    Pid ! go,
    receive
        {Pid, gate_hook, same} -> erlang:demonitor(Ref, [flush]), {Status, Text};
        {Pid, gate_hook, {0, _}} -> erlang:demonitor(Ref, [flush]), {Status, Text};
        {Pid, gate_hook, {N, T}} -> erlang:demonitor(Ref, [flush]), {N, <<Text/binary, T/binary>>};
        {'DOWN', Ref, _, _, Why} ->
            {1, <<Text/binary, (truncate(iolist_to_binary(io_lib:format("an at_exit hook "
                                                                        "died: ~0tp", [Why]))))/binary>>}
    end.

%% Mix's own words for a non-zero status: the failed tests, what was raised, and what the
%% task and its hooks printed (the tail).
exit_reason(0, _, _, _) -> {<<>>, true};
exit_reason(Status, Failed, Raised, Words) ->
    Verdict = with_headline(Words),
    %% Mix's own verdict line among what it printed (a coverage threshold after failed tests)
    Marked = Verdict =/= <<>> andalso has_verdict_line(Words),
    Parts = [case Failed of
                 0 -> <<>>;
                 1 -> <<"1 test failed">>;
                 _ -> iolist_to_binary(io_lib:format("~b tests failed", [Failed]))
             end,
             Raised,
             case Failed =:= 0 orelse Marked of
                 true -> Verdict;
                 false -> <<>>
             end],
    %% explained: the failed tests are the whole reason (the JUnit has them already)
    Explained = Failed > 0 andalso Raised =:= <<>> andalso not Marked,
    case [P || P <- Parts, P =/= <<>>] of
        [] -> {iolist_to_binary(io_lib:format("mix test would exit with status ~b "
                                              "(it printed no reason)", [Status])), false};
        Ps -> {truncate(iolist_to_binary(lists:join(<<"\n">>, Ps))), Explained}
    end.

-define(VERDICT_LINES, [<<"ERROR!">>, <<"** (">>, <<"Coverage test failed">>,
                        <<"The --only option">>, <<"Paths given to">>,
                        <<"== Compilation error">>]).

has_verdict_line(Words) ->
    lists:any(fun(L) -> is_verdict_line(L) end, binary:split(Words, [<<"\n">>], [global])).

is_verdict_line(L) ->
    T = string:trim(L),
    lists:any(fun(P) -> string:prefix(T, P) =/= nomatch end, ?VERDICT_LINES).

%% The line of what Mix printed that says why, first (JUnit's message= is one line): the last
%% of Mix's own verdict lines, else the last line; then everything it printed.
with_headline(<<>>) -> <<>>;
with_headline(Words) ->
    Lines = [L || L <- binary:split(Words, [<<"\n">>, <<"\r">>], [global]),
                  string:trim(L) =/= <<>>],
    Marked = [L || L <- Lines, is_verdict_line(L)],
    Head0 = string:trim(case {Marked, Lines} of
                            {[_ | _], _} -> lists:last(Marked);
                            {[], [_ | _]} -> lists:last(Lines);
                            _ -> <<>>
                        end),
    %% "Coverage test failed, threshold not met:" is followed by its figures: joined to it
    Head = case binary:last(<<" ", Head0/binary>>) of
               $: ->
                   All = binary:split(Words, [<<"\n">>, <<"\r">>], [global]),
                   After = tl(lists:dropwhile(fun(L) -> string:trim(L) =/= Head0 end,
                                              All ++ [<<>>])),
                   Next = lists:takewhile(fun(L) -> string:trim(L) =/= <<>> end,
                                          lists:dropwhile(fun(L) -> string:trim(L) =:= <<>> end,
                                                          After)),
                   iolist_to_binary([Head0, " ",
                                     lists:join(<<", ">>, [re:replace(string:trim(L), <<"\\s+">>,
                                                                      <<" ">>, [global])
                                                           || L <- Next])]);
               _ -> Head0
           end,
    case Head =:= string:trim(Words) of
        true -> Head;
        false -> <<Head/binary, "\n\n", Words/binary>>
    end.

%% --partitions N with MIX_TEST_PARTITION: the partition this run is (0: not partitioned).
partition(Args) ->
    Parts = case lists:dropwhile(fun(A) -> A =/= <<"--partitions">> end, Args) of
                [_, N | _] -> (catch binary_to_integer(N));
                _ -> case [A || <<"--partitions=", A/binary>> <- Args] of
                         [N | _] -> (catch binary_to_integer(N));
                         [] -> 0
                     end
            end,
    case is_integer(Parts) andalso Parts > 1 of
        true ->
            case catch list_to_integer(os:getenv("MIX_TEST_PARTITION", "")) of
                P when is_integer(P) -> P;
                _ -> 0
            end;
        false -> 0
    end.

restore_env(App, Env) ->
    [application:unset_env(App, K) || {K, _} <- application:get_all_env(App),
                                     not lists:keymember(K, 1, Env)],
    [application:set_env(App, K, V) || {K, V} <- Env],
    ok.

%% Every suite the run reported: one, or one per app of an umbrella.
collect_suites(Acc) ->
    receive {gate_suite, S} -> collect_suites([S | Acc])
    after 0 -> lists:reverse(Acc)
    end.

merge_suites([]) ->
    #{tests => [], attribution => application:get_env(gate_probe, attribution, module),
      attribution_sync => false, module_events => [], module_events_dropped => 0,
      run_us => -1, load_us => -1, seed => 0, dropped => 0};
merge_suites([S]) -> S;
merge_suites([S | Rest]) ->
    lists:foldl(fun(B, A) ->
                        A#{tests := maps:get(tests, A) ++ maps:get(tests, B),
                           module_events := maps:get(module_events, A) ++
                               maps:get(module_events, B),
                           module_events_dropped := maps:get(module_events_dropped, A) +
                               maps:get(module_events_dropped, B),
                           run_us := add_us(maps:get(run_us, A), maps:get(run_us, B)),
                           load_us := add_us(maps:get(load_us, A), maps:get(load_us, B)),
                           dropped := maps:get(dropped, A) + maps:get(dropped, B)}
                end, S, Rest).

add_us(A, B) when A >= 0, B >= 0 -> A + B;
add_us(A, B) -> max(A, B).

%% ---- What the test task and its hooks print themselves ----
%% Two small io servers sit in front of the real ones for the run: one is the group leader of
%% the process running the task (so of everything it spawns), the other takes the registered
%% name standard_error. Each forwards every request unchanged to the real server and keeps the
%% last 4 kB of text: on stdout what the watched processes (the runner, the at_exit hooks)
%% wrote, on stderr everything (Mix's errors and the compiler's warnings go there).
%% They restore what they replaced when the run ends or the runner dies.
-define(CAPTURE_MAX, 4096).

capture_start() ->
    Self = self(),
    GL = group_leader(),
    Out = spawn(fun() -> capture_init(Self, GL, none) end),
    group_leader(Out, Self),
    Err = case whereis(standard_error) of
              undefined -> none;
              E ->
                  Tee = spawn(fun() -> capture_init(Self, E, standard_error) end),
                  %% swapped in one step each; a write between the two goes to the real one
                  catch unregister(standard_error),
                  case catch register(standard_error, Tee) of
                      true -> stderr_guard(Tee, E), Tee;
                      _ -> catch register(standard_error, E), exit(Tee, kill), none
                  end
          end,
    {Out, GL, Err}.

%% Should the tee die without putting the real standard_error back (killed by the purge of
%% this module when gate goes away mid-run), a guard does it: an interpreted fun (erl_eval's
%% code, which the purge of gate_probe does not touch) that waits for the tee to go down.
stderr_guard(Tee, Real) ->
    Src = "fun(Tee, Real) -> Ref = erlang:monitor(process, Tee),"
          "  receive {'DOWN', Ref, _, _, _} ->"
          "    case erlang:whereis(standard_error) of"
          "      undefined -> catch erlang:register(standard_error, Real), ok;"
          "      _ -> ok"
          "    end"
          "  end end.",
    {ok, Toks, _} = erl_scan:string(Src),
    {ok, [Expr]} = erl_parse:parse_exprs(Toks),
    {value, Fun, _} = erl_eval:expr(Expr, []),
    spawn(erlang, apply, [Fun, [Tee, Real]]),
    ok.

capture_watch({Out, _, Err}, Pid) ->
    [T ! {gate_watch, Pid} || T <- [Out, Err], is_pid(T)],
    ok.

capture_stop({Out, GL, Err}) ->
    group_leader(GL, self()),
    %% what the suite left running must not keep a group leader that is about to go
    [catch group_leader(GL, P) || P <- processes(),
                                  process_info(P, group_leader) =:= {group_leader, Out}],
    Texts = [capture_end(T) || T <- [Out, Err], is_pid(T)],
    strip_ansi(iolist_to_binary(lists:join(<<"\n">>, [T || T <- Texts, T =/= <<>>]))).

capture_end(Tee) ->
    Ref = monitor(process, Tee),
    Tee ! {gate_stop, self()},
    receive
        {Tee, gate_text, Text} -> erlang:demonitor(Ref, [flush]), Text;
        {'DOWN', Ref, _, _, _} -> <<>>
    after 5000 -> exit(Tee, kill), <<>>
    end.

capture_init(Owner, Real, Name) ->
    process_flag(trap_exit, true),
    link(Owner),
    capture_loop(Owner, Real, Name, [Owner], <<>>).

capture_loop(Owner, Real, Name, Watched, Buf) ->
    receive
        {io_request, From, _ReplyAs, Req} = Msg ->
            Real ! Msg,
            %% standard_error: everything (the compiler's warnings too); the group
            %% leader: the watched processes only (not the tests' and formatters' output)
            Buf1 = case Name =/= none orelse lists:member(From, Watched) of
                       true -> keep_tail(<<Buf/binary, (req_text(Req))/binary>>);
                       false -> Buf
                   end,
            capture_loop(Owner, Real, Name, Watched, Buf1);
        {gate_watch, Pid} ->
            capture_loop(Owner, Real, Name, [Pid | Watched], Buf);
        {gate_stop, From} ->
            capture_restore(Real, Name),
            From ! {self(), gate_text, Buf};
        {'EXIT', Owner, _} ->
            capture_restore(Real, Name);
        _ ->
            capture_loop(Owner, Real, Name, Watched, Buf)
    end.

capture_restore(_Real, none) -> ok;
capture_restore(Real, Name) ->
    case whereis(Name) =:= self() of
        true -> catch unregister(Name), catch register(Name, Real);
        false -> ok
    end.

req_text({put_chars, Enc, Chars}) -> chars_text(Enc, Chars);
req_text({put_chars, Chars}) -> chars_text(latin1, Chars);
req_text({put_chars, Enc, M, F, A}) -> (catch chars_text(Enc, apply(M, F, A)));
req_text({requests, Reqs}) -> iolist_to_binary([req_text(R) || R <- Reqs]);
req_text(_) -> <<>>.

chars_text(Enc, Chars) ->
    case catch unicode:characters_to_binary(Chars, Enc) of
        B when is_binary(B) -> B;
        _ -> <<>>
    end.

keep_tail(B) when byte_size(B) > ?CAPTURE_MAX ->
    binary:part(B, byte_size(B) - ?CAPTURE_MAX, ?CAPTURE_MAX);
keep_tail(B) -> B.

strip_ansi(B) ->
    T = re:replace(B, <<"\e\\[[0-9;]*[A-Za-z]">>, <<>>, [global, {return, binary}, unicode]),
    string:trim(T).

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
ex_unit_event(Msg) ->
    case application:get_env(gate_probe, attribution) of
        {ok, off} -> ok;
        _ -> ex_unit_edge(Msg)
    end,
    tag_edge(Msg), %% issue 19: see "Tags" below
    %% gate's formatter is not among ExUnit's (issue 18): the hook hands it every event (the
    %% hook is installed only when run_tests started the formatter itself)
    formatter_cast(Msg).

ex_unit_edge({module_started, #{name := Mod} = TM}) ->
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
ex_unit_edge({module_finished, #{name := Mod} = TM}) ->
    formatter_cast({gate_module, finish, Mod, 'Elixir.Gate.Formatter':async(TM),
                    'Elixir.Gate.Formatter':light(false)});
ex_unit_edge({test_started, #{module := Mod, name := Name} = Test}) ->
    async_test_edge(test_start, Test),
    case application:get_env(gate_probe, attribution) of
        {ok, test} -> put({gate_test, Mod, Name}, 'Elixir.Gate.Formatter':light(true));
        _ -> ok
    end;
ex_unit_edge({test_finished, #{module := Mod, name := Name, state := State} = Test}) ->
    async_test_edge(test_finish, Test),
    case erase({gate_test, Mod, Name}) of
        undefined -> ok;
        %% excluded and skipped tests did not run: no figures for them
        _ when element(1, State) =:= excluded; element(1, State) =:= skipped -> ok;
        Start -> formatter_cast({gate_test, Mod, Name, Start,
                                 'Elixir.Gate.Formatter':light(true)})
    end;
ex_unit_edge(_) -> ok.

%% Async modules run side by side: the times of their tests' edges tell gate how long each
%% was busy in a test between two module edges, and the growth of that stretch is shared
%% in proportion. Only a timestamp: erlang:memory() waits for every scheduler and cost
%% ~150 us an edge on a busy node (measured: 2 000 small tests, +7.5 % wall time).
async_test_edge(Kind, #{module := Mod, tags := #{async := true}}) ->
    formatter_cast({gate_module, Kind, Mod, true,
                    {erlang:monotonic_time(microsecond), none, 0, 0}});
async_test_edge(_, _) -> ok.

%% ---- Tags: limits where tests are written (issue 19) ----
%% A test tagged `gate: [max_growth: "1 MB", ...]` (@tag, or @moduletag for a module's tests)
%% is measured on its own: a GC'd snapshot at its start and finish (as --per-test takes for
%% every test), taken here in the module's process, which reports both edges; and what grew
%% in that window: ETS tables by bytes and processes by memory plus refc binaries, compared
%% in the node. Untagged tests cost nothing. `gate: false` (an exemption) is not measured.
%% The formatter receives {gate_tag, Mod, Name, Start, Finish, Grew} ahead of test_finished.
%% A structure that grew less than this is not named (a formatter's mailbox, a timer).
-define(TAG_NOISE, 65536).

tag_measured(#{tags := #{gate := L}}) when is_list(L), L =/= [] -> true;
tag_measured(_) -> false.

tag_edge({test_started, #{module := Mod, name := Name} = Test}) ->
    case tag_measured(Test) of
        true ->
            Snap = tag_light(),
            put({gate_tag, Mod, Name}, {Snap, tag_structs()});
        false -> ok
    end;
tag_edge({test_finished, #{module := Mod, name := Name, state := State}}) ->
    case erase({gate_tag, Mod, Name}) of
        undefined -> ok;
        _ when is_tuple(State), (element(1, State) =:= excluded orelse
                                 element(1, State) =:= skipped) -> ok;
        {Start, Structs} ->
            Finish = tag_light(),
            formatter_cast({gate_tag, Mod, Name, Start, Finish, tag_grew(Structs)})
    end;
tag_edge(_) -> ok.

%% A GC'd light snapshot that lets freed memory settle first (gc_all/0): the test's process
%% has just exited and its heap is released asynchronously (without the pause, a test that
%% built a 2 MB list and dropped it read +2.4 MB processes_used at its finish).
tag_light() ->
    _ = gc_all(),
    'Elixir.Gate.Formatter':light(false).

%% {#{Tid => {Rows, Bytes}}, #{Pid => Bytes}}: every table's size, every process's memory and
%% refc binary bytes (after the GC light(true) just did).
tag_structs() ->
    W = erlang:system_info(wordsize),
    Ets = maps:from_list([{T, {R, M * W}} || T <- ets:all(),
                                            R <- [ets:info(T, size)], is_integer(R),
                                            M <- [ets:info(T, memory)], is_integer(M)]),
    Procs = maps:from_list([{P, B} || P <- erlang:processes(), B <- [tag_proc_bytes(P)],
                                      is_integer(B)]),
    {Ets, Procs}.

tag_proc_bytes(P) ->
    case erlang:process_info(P, [memory, binary]) of
        [{memory, M}, {binary, Bins}] ->
            M + lists:sum([S || {_, S, _} <- Bins]);
        _ -> undefined
    end.

%% The structures that grew most in the window, largest first (at most one table and one
%% process): [{ets, Name, Owner, RowsDelta, BytesDelta} | {process, Pid, Label, BytesDelta}].
tag_grew({Ets0, Procs0}) ->
    {Ets1, Procs1} = tag_structs(),
    Tables = lists:reverse(lists:keysort(5,
               [{ets, tag_table_name(T), tag_owner(T), R - R0, B - B0}
                || {T, {R, B}} <- maps:to_list(Ets1),
                   {R0, B0} <- [maps:get(T, Ets0, {0, 0})], B - B0 >= ?TAG_NOISE])),
    Procs = lists:reverse(lists:keysort(4,
               [{process, list_to_binary(pid_to_list(P)), tag_proc_label(P), B - B0}
                || {P, B} <- maps:to_list(Procs1), P =/= self(),
                   P =/= whereis('Elixir.Gate.Formatter'),
                   B0 <- [maps:get(P, Procs0, 0)], B - B0 >= ?TAG_NOISE])),
    lists:sort(fun(A, B) -> tag_bytes(A) >= tag_bytes(B) end,
               lists:sublist(Tables, 1) ++ lists:sublist(Procs, 1)).

tag_bytes({ets, _, _, _, B}) -> B;
tag_bytes({process, _, _, B}) -> B.

tag_table_name(T) ->
    case ets:info(T, name) of
        N when is_atom(N) -> name_text(N);
        _ -> <<"unnamed">>
    end.

tag_owner(T) ->
    case ets:info(T, owner) of
        P when is_pid(P) -> tag_proc_label(P);
        _ -> <<>>
    end.

tag_proc_label(P) ->
    case erlang:process_info(P, registered_name) of
        {registered_name, N} when is_atom(N) -> name_text(N);
        _ ->
            case erlang:process_info(P, initial_call) of
                {initial_call, {proc_lib, init_p, 5}} ->
                    mfa_text(proc_lib:translate_initial_call(P));
                {initial_call, MFA} -> mfa_text(MFA);
                _ -> <<>>
            end
    end.

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
    %% the last purge (a scan of every process) is left to each node (issue 15)
    [erpc:multicall(Others, Mod, F, A, Timeout)
     || M <- Mods, A0 <- [[binary_to_atom(M)]],
        {Mod, F, A} <- [{code, purge, A0}, {code, delete, A0}, {erlang, spawn, [code, purge, A0]}]],
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

%% ---- Sampling during a run (gate run --sample, issue 14) ----
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

%% ---- Repeated runs (gate run --repeat, issue 14) ----
%% Before runs 2..N the node gets back the working directory mix test had in run 1, the
%% project's: a test that cd'd into a directory it then removed leaves the node without one,
%% and the next mix test could not even start. (Mix's invoked tasks are left as they are:
%% clearing them makes the rerun start the applications and Logger's configuration again,
%% which broke gen_stage's capture_log tests.)
%% And a file whose Code.require_file raised (a test of compile errors: nimble_parsec's)
%% stays "being required" in Elixir's code server (1.14), so that requiring it again in the
%% next run waits forever. Between two runs no test runs: an entry still pending with nobody
%% waiting for it, on two reads 300 ms apart, is such a leftover and is dropped. Returns how
%% many.
%% Files required during a run that were not before run 1 (repeat_mark/0), such as a file a
%% test compiles with Code.require_file into a temp dir, are forgotten with the modules they
%% defined, as gate forgets the test files: a fresh node would require them again.
%% And Elixir's compiler modules (elixir_compiler_N, which ran the top-level code of the
%% required test files) are purged: they keep their literals, and each run added ~1.2 MB of
%% literal_alloc (`system`) on gen_stage until they were (measured: +1.2 MB per run before,
%% +0 after).
repeat_mark() ->
    application:set_env(gate_probe, repeat_required, 'Elixir.Code':required_files()),
    ok.

repeat_reset() ->
    Dir = filename:dirname(unicode:characters_to_list('Elixir.Mix.Project':project_file())),
    ok = file:set_cwd(Dir),
    case application:get_env(gate_probe, repeat_required) of
        {ok, Before} ->
            New = 'Elixir.Code':required_files() -- Before,
            Mods = [M || {M, _} <- code:all_loaded(), lists:member(source_of(M), New)],
            [begin code:delete(M), code:purge(M) end || M <- Mods],
            'Elixir.Code':unrequire_files(New);
        undefined -> ok
    end,
    catch gen_server:call(elixir_code_server, purge_compiler_modules, 10000),
    Stale = case pending_requires() of
                [] -> [];
                P1 -> timer:sleep(300), [F || F <- pending_requires(), lists:member(F, P1)]
            end,
    Stale =/= [] andalso 'Elixir.Code':unrequire_files(Stale),
    length(Stale).

%% Files acquired by a Code.require_file that never finished, nobody queued behind it.
pending_requires() ->
    try sys:get_state(elixir_code_server, 5000) of
        State when is_tuple(State), tuple_size(State) >= 2, is_map(element(2, State)) ->
            [F || {F, []} <- maps:to_list(element(2, State))];
        _ -> []
    catch _:_ -> []
    end.
