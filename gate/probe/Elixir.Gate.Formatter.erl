%% gate/probe/Elixir.Gate.Formatter.erl: the ExUnit formatter gate adds to mix test.
%%
%% Named 'Elixir.Gate.Formatter' so that `mix test --formatter Gate.Formatter` finds it.
%% It records every finished test (module, name, file, line, time, state, failure text) and
%% at suite_finished hands the records to the process registered as gate_probe_collector
%% (gate_probe_run:run_tests/2). gate_probe_run starts it itself and feeds it ExUnit's events through
%% its hook in ExUnit.EventManager, so the formatters the project configured (ExUnit's CLI
%% formatter, a JUnit formatter...) run as they would under bare mix test; only when the hook
%% cannot be installed does mix test start it with --formatter.
%% In an umbrella every app's ExUnit run is one suite_started..suite_finished; each test is
%% tagged with the app (Mix's current project when the suite started).
%%
%% Attribution, mode from application env gate_probe/attribution (set by run_tests):
%%   module (default): a light snapshot (erlang:memory, process and ETS counts, no GC) at every
%%     module start and finish, shipped as events in order; gate splits the growth of each
%%     interval between the modules running in it (async modules overlap).
%%   test: also a light snapshot at each test's finish (its start is the reading before it in
%%     its module's process: see gate_probe_events:ex_unit_event/1), the delta shipped with the
%%     test's record.
%%   off: nothing of this.
%% The figures are taken synchronously, in the test module's own process, by the hook that
%% gate_probe_events:hook_install/0 puts into ExUnit.EventManager (attribution_sync = true); they
%% reach this process as {gate_module, ...} and {gate_test, ...} casts ahead of ExUnit's own
%% event. Without the hook, the figures are taken when ExUnit's casts arrive here, which is
%% after the runner has moved on: close to the edges, not at them, and the suite says so.
-module('Elixir.Gate.Formatter').
%% loaded only where tests run (see gate_probe.erl)
-gate_load(tests).
-behaviour(gen_server).

-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).
%% for gate_probe_events' ExUnit.EventManager hook
-export([async/1, light/1]).

-define(MAX_MESSAGE, 16384).
%% The cap on tests recorded (gate_max_tests in the start options; gate passes its own figure). Past it,
%% tests are counted as dropped, and gate refuses the run (exit 2) naming cap and count.
-define(MAX_TESTS, 200000).
%% Two per module, and an async module's tests as at most two more per stretch between two
%% edges with figures (see busy_edge/4); past this, module events are dropped (and counted).
-define(MAX_EVENTS, 200000).

init(Opts) ->
    catch register('Elixir.Gate.Formatter', self()),
    %% the module edges' last reading of the processes (gate_probe_events:edge_structs/0)
    %% and the per-test readings' budget (the run's start, the us they took and how many),
    %% gone with this process
    catch ets:new(gate_probe_edges, [named_table, public, set]),
    catch ets:insert(gate_probe_edges, {budget, counters:new(2, [write_concurrency]),
                                        erlang:monotonic_time(microsecond)}),
    Sync = application:get_env(gate_probe, attribution_sync, false) =:= true,
    Mode = case application:get_env(gate_probe, attribution) of
               {ok, M} when M =:= off; M =:= module; M =:= test -> M;
               _ -> module
           end,
    %% The tests' records and the spawns of test module processes are kept out of this
    %% process's heap: a GC of every process (a test tagged with gate limits is measured
    %% between two) would copy them all each time (per-test wall 4.2x bare at 10 000 tests
    %% when every test edge did). Nor in an ETS table: 100 000 records are 70 MB of small
    %% blocks in ets_alloc, whose carriers stayed behind, 99 % empty, when the table died
    %% before the after-snapshot, and the allocator rule failed on gate's own table (one
    %% round in three at 100 000 tests). They are packed by the megabyte into binaries
    %% (term_to_binary), each one block of its own, handed back whole when freed.
    %% Two stores: the tests' records in the order they finished (store; at the suite's end
    %% its chunks go to gate as they are, see suite_finished), and the spawns of test module
    %% processes (spawns; rows {s, Child, Parent} and {x, Child, Test}).
    {ok, #{store => store_new(), spawns => store_new(), count => 0, failed => 0, dropped => 0,
           max => proplists:get_value(gate_max_tests, Opts, ?MAX_TESTS),
           app => current_app(),
           seed => proplists:get_value(seed, Opts, 0),
           module_errors => #{},
           mode => Mode, sync => Sync, events => [], modpids => #{}, nevents => 0, events_dropped => 0,
           test_snaps => #{}}}.

handle_call(_Msg, _From, S) -> {reply, ok, S}.
%% Spawns of a test module's process (traced from its module_started): its tests.
handle_info({trace, Parent, spawn, Child, MFA}, #{spawns := St} = S) ->
    St1 = store_add({s, Child, Parent}, 16, St),
    St2 = case spawned_test(MFA) of
              none -> St1;
              {_, _, File, _} = Test -> store_add({x, Child, Test}, 64 + byte_size(File), St1)
          end,
    {noreply, S#{spawns := St2}};
handle_info(_Msg, S) -> {noreply, S}.

handle_cast({gate_module_pid, Pid, Mod}, #{modpids := MP} = S) ->
    {noreply, S#{modpids := MP#{Pid => Mod}}};
%% From the hook (sync): the edges as they happened.
handle_cast({gate_module, Kind, Mod, Async, Light}, S) ->
    {noreply, add_event({Kind, Mod, Async, Light}, S)};
%% From the hook: the structures at a module's edges (gate_probe_events:edge_structs/0).
handle_cast({gate_structs, start, Mod, St}, S) ->
    Open = maps:get(structs_open, S, #{}),
    {noreply, S#{structs_open => Open#{Mod => St}}};
handle_cast({gate_structs, finish, Mod, St1}, S) ->
    Open = maps:get(structs_open, S, #{}),
    case maps:take(Mod, Open) of
        {St0, Rest} ->
            Done = maps:get(structs, S, []),
            {noreply, S#{structs_open => Rest,
                         structs => [{atom_to_binary(Mod), structs_delta(St0, St1)} | Done]}};
        error -> {noreply, S}
    end;
handle_cast({gate_test, Mod, Name, Start, Finish}, #{mode := test} = S) ->
    Snaps = maps:get(test_snaps, S),
    {noreply, S#{test_snaps := Snaps#{{Mod, Name} => {Start, Finish}}}};
%% Without the hook: figures as ExUnit's casts arrive.
handle_cast({test_started, #{module := Mod, name := Name}}, #{mode := test, sync := false} = S) ->
    Snaps = maps:get(test_snaps, S),
    {noreply, S#{test_snaps := Snaps#{{Mod, Name} => light(false)}}};
handle_cast({suite_started, Opts}, S) when is_list(Opts) ->
    %% an umbrella's apps run each in its own directory
    erase(gate_cwd_prefix),
    {noreply, S#{seed := proplists:get_value(seed, Opts, maps:get(seed, S)),
                 app := current_app()}};
handle_cast({test_finished, Test}, #{count := N, max := Max} = S) when N >= Max ->
    _ = Test,
    {noreply, S#{dropped := maps:get(dropped, S) + 1}};
handle_cast({gate_tag, Mod, Name, Start, Finish, Grew}, S) ->
    Tags = maps:get(tag_snaps, S, #{}),
    {noreply, S#{tag_snaps => Tags#{{Mod, Name} => {Start, Finish, Grew}}}};
handle_cast({test_finished, Test}, #{count := N} = S) ->
    {Delta0, S0} = test_delta(Test, S),
    {Delta, TagExtra, S1} = tag_extra(Test, Delta0, S0),
    Extra = maps:merge(TagExtra, #{app => maps:get(app, S), reason => reason_of(maps:get(state, Test, nil))}),
    {Mod, Name, File, _, _, St, Msg} = Rec = record(Test),
    Row = erlang:append_element(erlang:append_element(Rec, Delta), Extra),
    Bytes = 200 + byte_size(Mod) + byte_size(Name) + byte_size(File) + byte_size(Msg),
    Failed = case St of
                 passed -> 0;
                 skipped -> 0;
                 excluded -> 0;
                 _ -> 1
             end,
    {noreply, S1#{count := N + 1, failed := maps:get(failed, S1) + Failed,
                  store := store_add(Row, Bytes, maps:get(store, S1))}};
handle_cast({module_started, TM}, S) ->
    {noreply, module_event(start, TM, S)};
handle_cast({module_finished, #{state := {failed, Failures}, name := Mod} = TM}, S0) ->
    S = module_event(finish, TM, S0),
    %% setup_all failed: its tests come as {invalid, Module}; keep the reason for them
    Msg = try truncate(iolist_to_binary('Elixir.ExUnit.Formatter':format_test_all_failure(
                                          TM, Failures, 1, 100, fun plain/2)))
          catch _:_ -> <<"setup_all failed">>
          end,
    Errors = maps:get(module_errors, S),
    {noreply, S#{module_errors := Errors#{Mod => {Msg, reason_of({failed, Failures})}}}};
handle_cast({module_finished, TM}, S) ->
    {noreply, module_event(finish, TM, S)};
%% At the suite's end: the records go to the collector still packed (tests_packed, the
%% store's chunks and its last rows packed the same way: gate decodes them), so that 10 000
%% records are not rebuilt on this process's heap, copied to the collector and encoded again
%% for gate (measured: 160 ms of the end of a 10 000-test run, most of it this heap's growth,
%% against 20 ms for bare mix test's whole end). Only a suite where a setup_all failed has its
%% records unpacked here, to give its invalid tests the module's failure (tests).
handle_cast({suite_finished, Times}, S0) ->
    #{store := Store, spawns := Spawns} = S = busy_flush(S0),
    Errors = maps:get(module_errors, S),
    Records = case map_size(Errors) of
                  0 -> #{tests => [], tests_packed => store_packed(Store)};
                  _ -> #{tests => [attach_module_error(T, Errors) || T <- store_rows(Store)],
                         tests_packed => []}
              end,
    Suite = Records#{attribution => maps:get(mode, S),
                     attribution_sync => maps:get(sync, S),
                     failed => maps:get(failed, S),
                     module_events => lists:reverse(maps:get(events, S)),
                     module_events_dropped => maps:get(events_dropped, S),
                     module_structs => lists:reverse(maps:get(structs, S, [])),
                     run_us => time_of(run, Times),
                     load_us => time_of(load, Times),
                     seed => maps:get(seed, S),
                     app => maps:get(app, S),
                     dropped => maps:get(dropped, S)},
    %% for gate_probe_grew:owners/2 in the after-snapshot: module process and its tests -> module
    {Owners, SpawnTests} = spawn_owners(maps:get(modpids, S), Spawns),
    application:set_env(gate_probe, spawn_owners, Owners),
    %% which test each test process ran, for the processes left alive (gate_probe_state)
    application:set_env(gate_probe, spawn_tests, SpawnTests),
    case whereis(gate_probe_collector) of
        undefined -> ok;
        Pid -> Pid ! {gate_suite, Suite}
    end,
    {noreply, S#{count := 0, failed := 0, store := store_new(), spawns := store_new(),
                 events := [], nevents := 0,
                 test_snaps := #{}, busy => #{},
                 structs => [], structs_open => #{},
                 modpids := #{}, dropped := 0, module_errors := #{}}};
handle_cast(_Event, S) ->
    {noreply, S}.

%% ---- The store: rows packed by the megabyte into binaries (see init/1) ----
-define(STORE_CHUNK, 1048576).

store_new() -> {[], 0, []}.

%% Bytes: about what the row takes packed
store_add(Row, Bytes, {Pending, Size, Chunks}) when Size + Bytes >= ?STORE_CHUNK ->
    {[], 0, [term_to_binary(lists:reverse([Row | Pending])) | Chunks]};
store_add(Row, Bytes, {Pending, Size, Chunks}) ->
    {[Row | Pending], Size + Bytes, Chunks}.

%% every row, in the order added
store_rows(Store) ->
    lists:reverse(store_fold(fun(Row, Acc) -> [Row | Acc] end, [], Store)).

%% Fun(Row, Acc) over every row, in the order added, one chunk decoded at a time
store_fold(Fun, Acc0, {Pending, _, Chunks}) ->
    Acc = lists:foldl(fun(C, A) -> lists:foldl(Fun, A, binary_to_term(C)) end, Acc0,
                      lists:reverse(Chunks)),
    lists:foldl(Fun, Acc, lists:reverse(Pending)).

%% the rows as packed chunks, in the order added (the last rows packed too)
store_packed({[], _, Chunks}) -> lists:reverse(Chunks);
store_packed({Pending, _, Chunks}) ->
    lists:reverse([term_to_binary(lists:reverse(Pending)) | Chunks]).

%% The test a test process runs: ExUnit spawns it with a fun whose environment holds the
%% %ExUnit.Test{}; {Module, Name, File, Line} (File relative to the project), or none when
%% the fun says nothing (another ExUnit's runner).
spawned_test({erlang, apply, [Fun, _]}) when is_function(Fun) ->
    case erlang:fun_info(Fun, env) of
        {env, Env} when is_list(Env) ->
            case [T || #{'__struct__' := 'Elixir.ExUnit.Test'} = T <- Env] of
                [#{module := M, name := N, tags := Tags} | _] when is_map(Tags) ->
                    {M, N, rel_file(maps:get(file, Tags, <<>>)), case maps:get(line, Tags, 0) of
                                                                     L when is_integer(L) -> L;
                                                                     _ -> 0
                                                                 end};
                _ -> none
            end;
        _ -> none
    end;
spawned_test(_) -> none.

%% A byte prefix: string:prefix/2 walks both as characters, and was a fifth of this process's
%% time on 5 000 one-line tests (eprof); the directory ends with a slash, so bytes and
%% characters agree on where it ends.
rel_file(F) when is_binary(F) ->
    P = cwd_prefix(),
    N = byte_size(P),
    case F of
        <<P:N/binary, Rel/binary>> -> Rel;
        _ -> F
    end;
rel_file(_) -> <<>>.

%% The project's directory with a trailing slash, read once per suite: file:get_cwd/0 is a
%% call to the file server and a dirty I/O scheduler's NIF, and asked at every test's spawn it
%% cost two thread switches a test (measured: 10 000 getcwd calls on 10 000 one-line tests).
cwd_prefix() ->
    case get(gate_cwd_prefix) of
        undefined ->
            {ok, Cwd} = file:get_cwd(),
            Dir = <<(unicode:characters_to_binary(Cwd))/binary, "/">>,
            put(gate_cwd_prefix, Dir),
            Dir;
        Dir -> Dir
    end.

%% The part of the spawn ancestry that the after-snapshot can still use: {Owners, Tests},
%% Owners mapping every module process and every test process the suite spawned to its test
%% module, Tests a test process to its test ({Module, Name, File, Line}).
%% gate_probe_grew:owner_of/3 walks a living process up its parents to the first pid it
%% knows, and a dead process shows no parent, so a walk passes only through living processes
%% and the first dead one: the pids on those chains are all it can reach. Processes born later
%% descend from one alive now. Kept whole, the maps grow with the tests run (one entry per
%% test, 3 MB at 100 000 tests) and sit in the application env's ETS table until the
%% after-snapshot, which would judge them as the suite's ets growth. So the chains are walked
%% first, and the spawns' store is read a chunk at a time for the pids on them: the rows of
%% the others are garbage at once, never the whole ancestry on this process's heap.
spawn_owners(Modpids, Spawns) ->
    Reach = lists:foldl(fun(P, Acc) -> reach(P, Acc, 32) end, #{}, erlang:processes()),
    {Ss, Xs} = store_fold(fun({s, Child, Parent}, {S, X}) when is_map_key(Child, Reach) ->
                                  case Modpids of
                                      #{Parent := Mod} -> {S#{Child => Mod}, X};
                                      _ -> {S, X}
                                  end;
                             ({x, Child, Test}, {S, X}) when is_map_key(Child, Reach) ->
                                  {S, X#{Child => Test}};
                             (_, Acc) -> Acc
                          end, {#{}, #{}}, Spawns),
    Owners = maps:merge(maps:with(maps:keys(Reach), Modpids), Ss),
    {Owners, maps:with(maps:keys(Owners), Xs)}.

reach(_P, Acc, 0) -> Acc;
reach(P, Acc, _N) when is_map_key(P, Acc) -> Acc;
reach(P, Acc, N) ->
    case erlang:process_info(P, parent) of
        {parent, Parent} when is_pid(Parent) -> reach(Parent, Acc#{P => []}, N - 1);
        _ -> Acc#{P => []}
    end.

%% {Kind, Module, Async, MonotonicUs, MemoryMap | none, ProcessCount, EtsCount}; none for
%% an async test's edge, which carries only its time
module_event(_Kind, _TM, #{sync := true} = S) -> S;
module_event(Kind, #{name := Mod} = TM, S) ->
    add_event({Kind, Mod, async(TM), light(false)}, S);
module_event(_Kind, _TM, S) -> S.

add_event(_, #{mode := off} = S) -> S;
add_event({Kind, Mod, true, {T, none, _, _}}, S) when Kind =:= test_start;
                                                      Kind =:= test_finish ->
    busy_edge(Kind, Mod, T, S);
add_event(E, S) ->
    push_event(E, busy_flush(S)).

push_event(_, #{nevents := N} = S) when N >= ?MAX_EVENTS ->
    S#{events_dropped := maps:get(events_dropped, S) + 1};
push_event({Kind, Mod, Async, {T, Mem, Procs, Ets}}, #{events := Es, nevents := N} = S) ->
    E = {Kind, atom_to_binary(Mod), Async, T, Mem, Procs, Ets},
    S#{events := [E | Es], nevents := N + 1}.

%% An async test's edges carry only a time, from which gate learns how long its module was
%% busy in a test between two edges with figures (rules/attribution.c shares the growth of
%% that stretch by it). Kept one by one they are two events a test, so a suite's events grew
%% with its tests (200 000 for 100 000 tests, half async) and ran into MAX_EVENTS, which then
%% dropped the later modules' edges. Per module the tests run one after another, so the
%% tests that ended since the last edge with figures are held as the start of the first and
%% the sum of their lengths, and handed on, before the next edge with figures, as one test
%% that starts when the first did and lasts that sum: the same busy time in the same stretch
%% (the first start also ends the module's setup_all, as before). A test still running then
%% goes on as its own start edge, and its finish follows as it comes.
%% busy: #{Module => {FirstStart | none, SumUs, none | {StartUs, held | sent}}}
busy_edge(Kind, Mod, T, S) ->
    Busy = maps:get(busy, S, #{}),
    {First, Sum, Open} = maps:get(Mod, Busy, {none, 0, none}),
    case {Kind, Open} of
        {test_start, _} ->
            S#{busy => Busy#{Mod => {First, Sum, {T, held}}}};
        {test_finish, {T0, held}} ->
            F = case First of
                    none -> T0;
                    _ -> First
                end,
            S#{busy => Busy#{Mod => {F, Sum + max(0, T - T0), none}}};
        {test_finish, _} ->
            push_event({test_finish, Mod, true, {T, none, 0, 0}},
                       S#{busy => Busy#{Mod => {First, Sum, none}}})
    end.

busy_flush(S) ->
    Busy = maps:get(busy, S, #{}),
    lists:foldl(fun busy_flush/2, S#{busy => #{}}, maps:to_list(Busy)).

busy_flush({Mod, {First, Sum, Open}}, S0) ->
    S1 = case First of
             none -> S0;
             _ -> push_event({test_finish, Mod, true, {First + Sum, none, 0, 0}},
                             push_event({test_start, Mod, true, {First, none, 0, 0}}, S0))
         end,
    case Open of
        {T0, held} ->
            S2 = push_event({test_start, Mod, true, {T0, none, 0, 0}}, S1),
            S2#{busy := (maps:get(busy, S2))#{Mod => {none, 0, {T0, sent}}}};
        {_, sent} -> S1#{busy := (maps:get(busy, S1))#{Mod => {none, 0, Open}}};
        none -> S1
    end.

%% What grew between a module's edges, structure by structure, as [{Key, Value}]: <<"atoms">>
%% and <<"ports">> counts, <<"ets:NAME">> bytes of the tables of that name, <<"ets_owner:PID">>
%% bytes of the tables created in the window that PID owns, <<"proc:PID">> a process's memory
%% and refc binary bytes; only what grew by ?STRUCT_NOISE bytes or more (any count for atoms
%% and ports), the ?STRUCT_TOP largest structures. The keys are the ones gate's findings name
%% their structures by (rules/culprits.h).
-define(STRUCT_NOISE, 32768).
-define(STRUCT_TOP, 24).
structs_delta({A0, P0, E0, Pr0}, {A1, P1, E1, Pr1}) ->
    {{ByName, ByOwner}, EtsUnread} =
        case {E0, E1} of
            {#{}, #{}} -> {structs_tables(E0, E1), []};
            _ -> {{#{}, #{}}, [{<<"ets_unread">>, 1}]}
        end,
    %% past the probe's process cap the processes were not read: said, so that gate does
    %% not take their absence for no growth
    {Procs, Unread} =
        case {Pr0, Pr1} of
            {#{}, #{}} ->
                {[{<<"proc:", (gate_probe_snapshot:pid_text(P))/binary>>,
                   B - maps:get(P, Pr0, 0)} || {P, B} <- maps:to_list(Pr1)], []};
            _ -> {[], [{<<"procs_unread">>, 1}]}
        end,
    Bytes = [KV || {_, V} = KV <- maps:to_list(ByName) ++ maps:to_list(ByOwner) ++ Procs,
                   V >= ?STRUCT_NOISE],
    Top = lists:sublist(lists:reverse(lists:keysort(2, Bytes)), ?STRUCT_TOP),
    [{<<"atoms">>, A1 - A0} || A1 > A0] ++ [{<<"ports">>, P1 - P0} || P1 > P0] ++ EtsUnread ++
        Unread ++ Top.

%% Tables by name (their growth) and by owner (the bytes of those created in the window).
%% Names and owners are asked here, of the tables that changed (one gone since has nothing
%% left to blame).
structs_tables(E0, E1) ->
    maps:fold(fun(T, {_, B}, {Names, Owners} = Acc) ->
                      {B0, New} = case E0 of
                                      #{T := {_, Bx}} -> {Bx, false};
                                      _ -> {0, true}
                                  end,
                      case B =/= B0 andalso table_of(T) of
                          false -> Acc;
                          none -> Acc;
                          {O, N} ->
                              NK = <<"ets:", (gate_probe_snapshot:name_text(N))/binary>>,
                              Names1 = Names#{NK => maps:get(NK, Names, 0) + B - B0},
                              Owners1 = case New of
                                            true ->
                                                OK = <<"ets_owner:",
                                                       (gate_probe_snapshot:pid_text(O))/binary>>,
                                                Owners#{OK => maps:get(OK, Owners, 0) + B};
                                            false -> Owners
                                        end,
                              {Names1, Owners1}
                      end
              end, {#{}, #{}}, E1).

%% {Owner, Name} of a table, or none when it is gone
table_of(T) ->
    case {ets:info(T, owner), ets:info(T, name)} of
        {O, N} when is_pid(O), is_atom(N) -> {O, N};
        _ -> none
    end.

%% ExUnit 1.14 puts async in every test's tags (from use ExUnit.Case, async: ...). ExUnit
%% 1.18 adds it to the tags only when each test runs; the module says it in
%% Mod:'__ex_unit__'(config) (found by make compat on Elixir 1.18).
async(#{tests := [#{tags := #{async := true}} | _]}) -> true;
async(#{name := Mod}) when is_atom(Mod) ->
    try Mod:'__ex_unit__'(config) of
        #{'async?' := true} -> true;
        _ -> false
    catch
        _:_ -> false
    end;
async(_) -> false.

%% A light snapshot; with GC, a sweep of every process first (no settling pause: per test).
light(GC) ->
    GC andalso gate_probe_snapshot:gc_light(),
    {erlang:monotonic_time(microsecond), less_literals(maps:from_list(erlang:memory())),
     erlang:system_info(process_count), erlang:system_info(ets_count)}.

%% erlang:memory() less the refc bytes of the literals of the modules compiled in memory since
%% the before-snapshot (gate_probe_code:loaded_literals/0), in binary and the rows around it:
%% the binary row sets them aside as code, so no test module's window is charged with them.
less_literals(M) ->
    case gate_probe_code:loaded_literals() of
        0 -> M;
        L -> maps:map(fun(K, V) when K =:= binary; K =:= system; K =:= total -> V - L;
                         (_, V) -> V
                      end, M)
    end.

%% none, or {Async, MemoryDeltaMap, ProcessDelta, EtsDelta} from the light snapshots at the
%% test's start and finish.
test_delta(#{module := Mod, name := Name} = Test, #{mode := test, sync := Sync} = S) ->
    Snaps = maps:get(test_snaps, S),
    case maps:take({Mod, Name}, Snaps) of
        {Edges, Rest} ->
            {{_, M0, P0, E0}, {_, M1, P1, E1}} =
                case Sync of
                    true -> Edges;
                    false -> {Edges, light(false)}
                end,
            D = maps:map(fun(K, V) -> V - maps:get(K, M0, 0) end, M1),
            Async = maps:get(async, maps:get(tags, Test, #{}), false) =:= true,
            {{Async, D, P1 - P0, E1 - E0}, S#{test_snaps := Rest}};
        error -> {none, S}
    end;
test_delta(_, S) -> {none, S}.

%% ---- Tags (gate_probe_events's "Tags" section) ----
%% The test's `gate` tag for gate's rules/tags.c: false, [{Key, Value}] as text, or
%% {invalid, Text}; and for a tagged test measured at its edges, its delta (when --per-test
%% did not measure it already) and what grew in its window.
tag_extra(#{module := Mod, name := Name, tags := #{gate := Spec}} = Test, Delta0, S) ->
    Tags = maps:get(tag_snaps, S, #{}),
    {Edges, Rest} = case maps:take({Mod, Name}, Tags) of
                        error -> {none, Tags};
                        T -> T
                    end,
    Base = #{gate => tag_spec(Spec)},
    case Edges of
        none -> {Delta0, Base, S};
        {{_, M0, P0, E0}, {_, M1, P1, E1}, Grew} ->
            Delta = case Delta0 of
                        none ->
                            D = maps:map(fun(K, V) -> V - maps:get(K, M0, 0) end, M1),
                            Async = maps:get(async, maps:get(tags, Test, #{}), false) =:= true,
                            {Async, D, P1 - P0, E1 - E0};
                        _ -> Delta0
                    end,
            {Delta, Base#{gate_grew => Grew}, S#{tag_snaps => Rest}}
    end;
tag_extra(_, Delta0, S) -> {Delta0, #{}, S}.

tag_spec(false) -> false;
tag_spec(L) when is_list(L) ->
    try [{tag_text(K), tag_text(V)} || {K, V} <- L] of
        KVs -> KVs
    catch _:_ -> {invalid, tag_text(L)}
    end;
tag_spec(Other) -> {invalid, tag_text(Other)}.

tag_text(B) when is_binary(B) -> B;
tag_text(A) when is_atom(A) -> atom_to_binary(A);
tag_text(I) when is_integer(I) -> integer_to_binary(I);
tag_text(F) when is_float(F) -> float_to_binary(F, [short]);
tag_text(X) -> truncate(iolist_to_binary(io_lib:format("~0tp", [X]))).

time_of(Key, Times) when is_map(Times) ->
    case maps:get(Key, Times, nil) of
        I when is_integer(I) -> I;
        _ -> -1
    end;
time_of(_, _) -> -1.

attach_module_error({Mod, Name, File, Line, Time, invalid, <<>>, Delta, Extra}, Errors) ->
    {Msg, Reason} = maps:get(binary_to_atom(Mod), Errors,
                             {<<"setup_all failed">>, <<"setup_all failed">>}),
    {Mod, Name, File, Line, Time, invalid, Msg, Delta,
     Extra#{reason => <<"setup_all failed: ", Reason/binary>>}};
attach_module_error(T, _) -> T.

%% The app whose suite runs: Mix's current project (in an umbrella, the app being tested).
current_app() ->
    try 'Elixir.Mix.Project':config() of
        C when is_list(C) ->
            case proplists:get_value(app, C) of
                A when is_atom(A), A =/= nil -> atom_to_binary(A);
                _ -> <<>>
            end;
        _ -> <<>>
    catch _:_ -> <<>>
    end.

%% The failure's reason, as junit_formatter gives it in message="...": an assertion's own
%% message, else the exception's banner ("** (RuntimeError) boom"); the first failure's.
reason_of({failed, [{Kind, Reason, Stack} | _]}) ->
    Text = try
               case Reason of
                   #{'__struct__' := 'Elixir.ExUnit.AssertionError', message := M}
                     when is_binary(M) -> M;
                   _ -> 'Elixir.Exception':format_banner(Kind, Reason, Stack)
               end
           catch _:_ -> iolist_to_binary(io_lib:format("~0tp", [Reason]))
           end,
    truncate(unicode:characters_to_binary(Text));
reason_of({failed, _}) -> <<"test failed">>;
reason_of({gate_erl, failed, _, Reason}) -> truncate(Reason);
reason_of(_) -> <<>>.

%% {Module, Name, File, Line, TimeUs, State, Message}, all binaries but Line, TimeUs, State;
%% handle_cast appends the memory delta (none when not measured).
record(#{module := Mod, name := Name, state := State, time := Time} = Test) ->
    Tags = maps:get(tags, Test, #{}),
    File = case maps:get(file, Tags, nil) of
               F when is_binary(F) -> F;
               F when is_list(F) -> unicode:characters_to_binary(F);
               _ -> <<>>
           end,
    Line = case maps:get(line, Tags, nil) of
               L when is_integer(L) -> L;
               _ -> 0
           end,
    {St, Msg} = state(State, Test),
    {atom_to_binary(Mod), name_text(Name), File, Line, Time, St, Msg}.

%% ExUnit names a test by an atom; an Erlang runner's record (gate_probe_erl) by its text
name_text(N) when is_binary(N) -> N;
name_text(N) -> atom_to_binary(N).

state(nil, _) -> {passed, <<>>};
%% an Erlang runner's result (gate_probe_eunit, gate_probe_ct), its message made already
state({gate_erl, St, Msg, _Reason}, _) -> {St, truncate(Msg)};
state({failed, Failures}, Test) ->
    Msg = try iolist_to_binary('Elixir.ExUnit.Formatter':format_test_failure(
                                 Test, Failures, 1, 100, fun plain/2))
          catch _:_ -> iolist_to_binary(io_lib:format("~p", [Failures]))
          end,
    {failed, truncate(Msg)};
state({skipped, Reason}, _) -> {skipped, reason(Reason)};
state({excluded, Reason}, _) -> {excluded, reason(Reason)};
state({invalid, _Module}, _) -> {invalid, <<>>};
state(Other, _) -> {failed, truncate(iolist_to_binary(io_lib:format("unknown state ~p", [Other])))}.

reason(R) when is_binary(R) -> truncate(R);
reason(R) -> truncate(iolist_to_binary(io_lib:format("~p", [R]))).

%% The formatter callback of ExUnit.Formatter: no colours, the text as it is.
plain(_Kind, Msg) -> Msg.

truncate(Bin) when byte_size(Bin) > ?MAX_MESSAGE ->
    Cut = binary:part(Bin, 0, ?MAX_MESSAGE),
    <<Cut/binary, "\n[gate: message truncated]">>;
truncate(Bin) -> Bin.
