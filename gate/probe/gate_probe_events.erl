%% gate/probe/gate_probe_events.erl: ExUnit's events, taken where they happen.
%%
%% The hook put into ExUnit.EventManager for the run: a light snapshot at every
%% module edge, one at each test's finish in per-test mode, the timestamps of async tests, and
%% the tests tagged with gate limits measured on their own; all handed to
%% Elixir.Gate.Formatter ahead of the event they belong to. Loaded only where tests run. Part
%% of the probe: see gate_probe.erl.
-module(gate_probe_events).
-gate_load(tests).

-export([hook_install/0, hook_remove/0, ex_unit_event/1]).
%% the module edges of the Erlang runners (gate_probe_eunit, gate_probe_ct)
-export([edge_structs/0]).

-import(gate_probe_snapshot, [gc_all/0, name_text/1, mfa_text/1]).

%% Attribution needs memory figures taken exactly at the edges of each test module (and test):
%% ExUnit casts its events to formatters, so a formatter sees them late, after the runner has
%% moved on. The hook makes the edges synchronous: ExUnit.EventManager is recompiled from its
%% own debug info with its private notify/2 renamed and wrapped by one that first calls
%% ex_unit_event/1 in the process that reports the event (a test module's process, which
%% runs that module's tests one after another). The original module is loaded back after the
%% suite and by cleanup/0. When anything is not as expected (no debug info, no notify/2, a
%% compile error) the hook is not installed and the formatter falls back to the late figures.
-define(EM, 'Elixir.ExUnit.EventManager').
%% the hook's compiled form kept on disk: bumped when hook_compile/2 changes what it builds
-define(HOOK_CACHE_VSN, 1).

hook_install() ->
    try
        {module, ?EM} = code:ensure_loaded(?EM),
        {?EM, Beam, File} = code:get_object_code(?EM),
        %% this module's name as loaded (module_info/1, not ?MODULE_STRING: a string is a
        %% literal, which the slot renaming of probe_names.c does not rewrite)
        Src = "notify(M, Msg) ->"
              "  try " ++ atom_to_list(module_info(module)) ++
              ":ex_unit_event(Msg) catch _:_ -> ok end,"
              "  '__gate_notify'(M, Msg).",
        Cache = hook_cache_file(Beam, Src),
        Bin = case hook_cached(Cache) of
                  {ok, B} -> B;
                  none -> hook_cache_put(Cache, hook_compile(Beam, Src))
              end,
        true = code:soft_purge(?EM),
        {module, ?EM} = code:load_binary(?EM, File, Bin),
        application:set_env(gate_probe, em_original, {File, Beam}),
        ok
    catch
        Class:Reason -> {error, {Class, Reason}}
    end.

%% ExUnit.EventManager from its own debug info, its notify/2 renamed '__gate_notify' and
%% wrapped by the function in Src.
hook_compile(Beam, Src) ->
    {ok, {?EM, [{debug_info, {debug_info_v1, Backend, Data}}]}} =
        beam_lib:chunks(Beam, [debug_info]),
    {ok, Forms} = Backend:debug_info(erlang_v1, ?EM, Data, []),
    true = lists:keymember(notify, 3, [F || {function, _, _, 2, _} = F <- Forms]),
    {ok, Toks, _} = erl_scan:string(Src),
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
    Bin.

%% The hooked module compiled by an earlier run, kept beside gate's reports in the project's
%% _build/gate: compiling it is 7-12 ms of every run (measured; the node's own ExUnit, so it
%% cannot come with gate). The file's name is a digest of all it depends on: the original
%% module, the wrapper (the probe's name in this slot), the OTP release that compiles it.
%% none: no project here (an attached node outside Mix), or no such file.
hook_cache_file(Beam, Src) ->
    try 'Elixir.Mix.Project':build_path() of
        Build when is_binary(Build) ->
            Key = erlang:md5(term_to_binary({?HOOK_CACHE_VSN, Beam, Src,
                                             erlang:system_info(otp_release)})),
            %% by hand: io_lib:format would load io_lib_format right before the suite (2 ms
            %% measured; nothing in a node that ran no suite yet has formatted)
            Hex = [hex_digit(N) || <<N:4>> <= Key],
            filename:join([unicode:characters_to_list(filename:dirname(Build)), "gate",
                           "ex_unit_hook-" ++ Hex ++ ".beam"]);
        _ -> none
    catch _:_ -> none
    end.

hex_digit(N) when N < 10 -> $0 + N;
hex_digit(N) -> $a + N - 10.

hook_cached(none) -> none;
hook_cached(File) ->
    case file:read_file(File) of
        %% only a file this code wrote is taken: a module of that name (a file cut short
        %% or replaced fails here, and is compiled and written again)
        {ok, Bin} ->
            case catch beam_lib:info(Bin) of
                L when is_list(L) ->
                    case lists:keyfind(module, 1, L) of
                        {module, ?EM} -> {ok, Bin};
                        _ -> none
                    end;
                _ -> none
            end;
        {error, _} -> none
    end.

%% Writes the file whole (a temporary file renamed over it), or not at all: a read-only or
%% remote build directory only costs the next run the compile again. Returns Bin.
hook_cache_put(none, Bin) -> Bin;
hook_cache_put(File, Bin) ->
    Tmp = File ++ "." ++ os:getpid() ++ ".tmp",
    _ = (catch begin
                   ok = filelib:ensure_dir(File),
                   ok = file:write_file(Tmp, Bin),
                   ok = file:rename(Tmp, File)
               end),
    _ = file:delete(Tmp),
    Bin.

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
%% Module edges: a light snapshot (no GC). In per-test mode, one more at each test's finish
%% (and at a module's first test's start): a test's start is the reading before it in its
%% module's process, which runs the module's tests one after another, so a test costs one
%% reading, not two. No GC: a pass over every process at every test edge made --per-test 4.5
%% times bare mix test on 10 000 one-line tests, and a test's process has exited by its
%% finish, so what it left is what outlives it (tables, processes, the binaries they hold),
%% plus garbage of long-lived processes, which rules/attribution.c bounds as for module edges.
%% The delta goes to the formatter ahead of the test_finished event it belongs to.
%% A reading is erlang:memory(), which waits for every scheduler: 40 us on an idle node,
%% 80-140 on a busy one, 116 us a test measured on 5 000 one-line sync tests (about three
%% times what such a test costs bare). So the readings get a budget: a twentieth of the time
%% since the run started (?TEST_SPACING; the formatter keeps the clock and what readings
%% took).
%% Within it every test's finish is read, which covers a suite whose tests are not mostly
%% one-liners; past it, a test's finish is read once the budget allows again, and a window
%% that spans several tests is the last one's when it took nine tenths of it (the tracker's
%% rule for peaks, gate_probe_alloc), otherwise nobody's: those tests have no figures of
%% their own, and their growth is still their module's (module edges are always read).
-define(TEST_SPACING, 20).
%% the formatter's table: the per-test readings' budget, the module edges' last reading
-define(EDGE_TAB, gate_probe_edges).
ex_unit_event(Msg) ->
    case application:get_env(gate_probe, attribution) of
        {ok, off} -> ok;
        _ -> ex_unit_edge(Msg)
    end,
    tag_edge(Msg), %% see "Tags" below
    %% the peak's windows (gate_probe_alloc, loaded in every session)
    catch gate_probe_alloc:ex_unit_event(Msg),
    %% gate's formatter is not among ExUnit's: the hook hands it every event (the
    %% hook is installed only when run_tests started the formatter itself) but a test's
    %% start, which only a formatter without the hook reads figures at
    case Msg of
        {test_started, _} -> ok;
        _ -> formatter_cast(Msg)
    end.

ex_unit_edge({module_started, #{name := Mod} = TM}) ->
    erase(gate_test_last),
    formatter_cast({gate_module, start, Mod, 'Elixir.Gate.Formatter':async(TM),
                    'Elixir.Gate.Formatter':light(false)}),
    formatter_cast({gate_structs, start, Mod, edge_structs()}),
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
                    'Elixir.Gate.Formatter':light(false)}),
    formatter_cast({gate_structs, finish, Mod, edge_structs()});
ex_unit_edge({test_started, #{module := Mod} = Test}) ->
    async_test_edge(test_start, Test),
    %% the module's first test: its start is read here, so that setup_all's growth (between
    %% the module's own edge and this one) is nobody's test
    case application:get_env(gate_probe, attribution) of
        {ok, test} ->
            case get(gate_test_last) of
                undefined -> put(gate_test_last, test_reading(Mod));
                _ -> ok
            end,
            put(gate_test_at, erlang:monotonic_time(microsecond));
        _ -> ok
    end;
ex_unit_edge({test_finished, #{module := Mod, name := Name, state := State} = Test}) ->
    async_test_edge(test_finish, Test),
    case application:get_env(gate_probe, attribution) of
        %% excluded and skipped tests did not run: no figures for them, and no reading
        {ok, test} when is_tuple(State), (element(1, State) =:= excluded orelse
                                          element(1, State) =:= skipped) -> ok;
        {ok, test} ->
            case get(gate_test_last) of
                {Mod, {At0, _, _, _} = Start, Shared} ->
                    Now = erlang:monotonic_time(microsecond),
                    case test_budget(Now) of
                        true ->
                            {Mod, Finish, _} = Last = test_reading(Mod),
                            put(gate_test_last, Last),
                            TestAt = case get(gate_test_at) of
                                         T when is_integer(T) -> T;
                                         _ -> At0
                                     end,
                            case Shared =:= 0 orelse (Now - TestAt) * 10 >= (Now - At0) * 9 of
                                true -> formatter_cast({gate_test, Mod, Name, Start, Finish});
                                false -> ok
                            end;
                        false ->
                            put(gate_test_last, {Mod, Start, Shared + 1})
                    end;
                _ -> ok
            end;
        _ -> ok
    end;
ex_unit_edge(_) -> ok.

%% {Mod, Reading, Tests}: a light reading, and how many tests finished unread since; what it
%% took is added to the budget's account.
test_reading(Mod) ->
    T0 = erlang:monotonic_time(microsecond),
    L = 'Elixir.Gate.Formatter':light(false),
    case test_budget_ref() of
        {Ref, _} ->
            counters:add(Ref, 1, erlang:monotonic_time(microsecond) - T0),
            counters:add(Ref, 2, 1);
        none -> ok
    end,
    {Mod, L, 0}.

%% Whether one more reading keeps them within their share of the run's time so far (at their
%% average cost); true without the formatter's account.
test_budget(Now) ->
    case test_budget_ref() of
        {Ref, Started} ->
            Spent = counters:get(Ref, 1),
            Next = case counters:get(Ref, 2) of
                       0 -> 0;
                       N -> Spent div N
                   end,
            (Spent + Next) * ?TEST_SPACING =< Now - Started;
        none -> true
    end.

%% The account ({Counters, StartedUs} from the formatter's table), looked up once a module.
test_budget_ref() ->
    case get(gate_test_budget) of
        undefined ->
            B = case catch ets:lookup(?EDGE_TAB, budget) of
                    [{budget, Ref, Started}] -> {Ref, Started};
                    _ -> none
                end,
            put(gate_test_budget, B),
            B;
        B -> B
    end.

%% Async modules run side by side: the times of their tests' edges tell gate how long each
%% was busy in a test between two module edges, and the growth of that stretch is shared
%% in proportion. Only a timestamp: erlang:memory() waits for every scheduler and cost
%% ~150 us an edge on a busy node (measured: 2 000 small tests, +7.5 % wall time).
async_test_edge(Kind, #{module := Mod, tags := #{async := true}}) ->
    formatter_cast({gate_module, Kind, Mod, true,
                    {erlang:monotonic_time(microsecond), none, 0, 0}});
async_test_edge(_, _) -> ok.

%% ---- The structures at a module's edges ----
%% A category's growth between a module's edges is no evidence that the module grew one
%% structure in it: a quiet process's garbage, a neighbour's cache, anything of the same
%% category counts too. So each module edge also reads the structures themselves: the atom
%% and port counts, every table's rows and bytes, and every process's memory and refc binary
%% bytes (no GC: a structure's own garbage is small beside a leak, and no other structure's
%% counts). Both edges: between one module's finish and the next one's start a server still
%% works through the casts the first one sent it, and compared with the last finish's
%% reading that growth went to the next module (e2e fairblame_spread: one module's journal
%% entries counted in its neighbour's window). Owners and names are asked in the formatter,
%% for the tables that changed. The formatter keeps, per module, what grew between its edges
%% (Elixir.Gate.Formatter:structs_delta/2). Past ?EDGE_MAX_PROCS processes or
%% ?EDGE_MAX_TABLES tables those are not read, and their structures have no edge evidence
%% (gate then names no culprit from them).
%%
%% A reading is on the module's own path (its first test waits for it), so it is kept cheap.
%% A process's memory and binaries are asked of the process itself (process_info sends it a
%% signal and waits for its answer: 2 us when it is idle, a time slice when it is busy:
%% 2.5 ms a module start measured on a sync suite of one-line tests), and erlang:processes()
%% walks the whole process table (0.1-0.2 ms). So the last reading is kept (in the
%% formatter's table ?EDGE_TAB, with each process's reduction count): a process whose
%% reductions did not move since has not run, and its memory and binaries are the ones read
%% then (its reductions are read under its lock, without a signal); and when the processes
%% known then that are still alive are as many as the node has, no listing is needed.
%% Answering the signal that asked for its memory costs a process one reduction, counted
%% when it is next scheduled out: read right after the answer, its reductions still lack it
%% as often as not (10 000 one-line tests: at nearly every edge every idle process was one
%% reduction on, and was read again, 71 signals an edge). So a process one reduction on is
%% unchanged: no process grows anything in one reduction.
%% Two kinds of process are not read at all, the same at every edge. gate's own (the
%% formatter, the tracker, the keeper, the watchdog, the sampler): they are not the suite's,
%% and the formatter is busy with every event. And the compiler's: mix test loads the
%% suite's test files while the first modules run, and Kernel.ParallelCompiler's workers
%% (and the processes they compile modules in, all with elixir_compiler_info in their
%% dictionaries) are running or waiting for their siblings at the edges of those modules. A
%% busy process answers at its next time slice, and every test file loaded purges a module,
%% which costs every process a few reductions, so each of them was read again at every other
%% edge (10 000 one-line tests: the edges while the files load took 5 times as long as the
%% later ones). What a compiler's process holds is the compiler's and goes with it when the
%% file is compiled; the code it loads is judged on its own (Code). A process is told to be
%% one by its dictionary, read once, with its first reading: it stays skipped until it
%% exits.
-define(EDGE_MAX_PROCS, 5000).
-define(EDGE_MAX_TABLES, 5000).

%% {AtomCount, PortCount, #{Tid => {Rows, Bytes}} | none, #{Pid => Bytes} | none}
edge_structs() ->
    Tab = ets:whereis(?EDGE_TAB),
    Ets = case erlang:system_info(ets_count) =< ?EDGE_MAX_TABLES of
              true -> table_sizes(Tab);
              false -> none
          end,
    Count = erlang:system_info(process_count),
    Procs = case Count =< ?EDGE_MAX_PROCS of
                true ->
                    Read = edge_procs(Count, Tab),
                    maps:fold(fun(P, {_, B}, Acc) when P =/= self() -> Acc#{P => B};
                                 (_, _, Acc) -> Acc
                              end, #{}, Read);
                false -> none
            end,
    {erlang:system_info(atom_count), erlang:system_info(port_count), Ets, Procs}.

%% #{Tid => {Rows, Bytes}} of every table but gate's own (Tab, ?EDGE_TAB). ets:all() asks
%% every scheduler for its tables and waits for them all (0.2-0.4 ms on a busy node: a
%% quarter of an edge's reading while the test files load), so the tables read at the last
%% edge are kept in Tab: when those still there and gate's are as many as the node has, there
%% is no other, and no listing is needed.
table_sizes(Tab) ->
    W = erlang:system_info(wordsize),
    Count = erlang:system_info(ets_count),
    Last = case Tab =/= undefined andalso catch ets:lookup(Tab, tables) of
               [{tables, L}] when is_list(L) -> L;
               _ -> []
           end,
    Known = table_rows(Last, Tab, W),
    Read = case Tab =/= undefined andalso length(Known) + 1 =:= Count of
               true -> Known;
               false -> table_rows(ets:all(), Tab, W)
           end,
    _ = Tab =/= undefined andalso (catch ets:insert(Tab, {tables, [T || {T, _} <- Read]})),
    maps:from_list(Read).

%% (ets:all() names a named table by its name: gate's is left out by both)
table_rows(Tables, Tab, W) ->
    [{T, {R, M * W}} || T <- Tables, T =/= Tab, T =/= ?EDGE_TAB, R <- [ets:info(T, size)],
                        is_integer(R), M <- [ets:info(T, memory)], is_integer(M)].

%% #{Pid => {Reductions, Bytes} | skip} of every process (self() among them; gate's own and
%% the compiler's skipped).
edge_procs(Count, Tab) ->
    Last = case Tab =/= undefined andalso catch ets:lookup(Tab, procs) of
               [{procs, L}] when is_map(L) -> L;
               _ -> #{}
           end,
    Known = maps:fold(fun(P, skip, Acc) ->
                              case erlang:is_process_alive(P) of
                                  true -> Acc#{P => skip};
                                  false -> Acc
                              end;
                         (P, {R0, _} = V, Acc) ->
                              case erlang:process_info(P, reductions) of
                                  {reductions, R} when R - R0 =< 1 -> Acc#{P => V};
                                  {reductions, _} -> edge_proc(P, Acc);
                                  undefined -> Acc
                              end
                      end, #{}, Last),
    Known1 = case is_map_key(self(), Known) of
                 true -> Known;
                 false -> edge_proc(self(), Known)
             end,
    Read = case map_size(Known1) =:= Count of
               true -> Known1;
               false ->
                   Own = [P || N <- ['Elixir.Gate.Formatter', gate_probe_alloc, gate_probe_keeper,
                                     gate_probe_watchdog, gate_probe_sampler],
                               P <- [whereis(N)], is_pid(P)],
                   lists:foldl(fun(P, Acc) ->
                                       case Known1 of
                                           #{P := V} -> Acc#{P => V};
                                           _ -> edge_new(P, Own, Acc)
                                       end
                               end, #{}, erlang:processes())
           end,
    _ = Tab =/= undefined andalso (catch ets:insert(Tab, {procs, Read})),
    Read.

%% A process not seen at the last edge: skipped when it is gate's or the compiler's, read
%% otherwise (its dictionary with its figures, in the same signal).
edge_new(P, Own, Acc) ->
    case lists:member(P, Own) of
        true -> Acc#{P => skip};
        false ->
            case erlang:process_info(P, [reductions, memory, binary, dictionary]) of
                [{reductions, R}, {memory, M}, {binary, Bins}, {dictionary, D}] ->
                    case lists:keymember(elixir_compiler_info, 1, D) of
                        true -> Acc#{P => skip};
                        false -> Acc#{P => {R, proc_bytes(M, Bins)}}
                    end;
                _ -> Acc
            end
    end.

%% A process's memory and refc binary bytes, with the reductions they were read at (one
%% process_info: the three at one moment; the answer's own reduction is allowed for by
%% edge_procs/2).
edge_proc(P, Acc) ->
    case erlang:process_info(P, [reductions, memory, binary]) of
        [{reductions, R}, {memory, M}, {binary, Bins}] -> Acc#{P => {R, proc_bytes(M, Bins)}};
        _ -> Acc
    end.

%% ---- Tags: limits where tests are written ----
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
    Ets = table_sizes(ets:whereis(?EDGE_TAB)),
    Procs = maps:from_list([{P, B} || P <- erlang:processes(), B <- [tag_proc_bytes(P)],
                                      is_integer(B)]),
    {Ets, Procs}.

tag_proc_bytes(P) ->
    case erlang:process_info(P, [memory, binary]) of
        [{memory, M}, {binary, Bins}] -> proc_bytes(M, Bins);
        _ -> undefined
    end.

%% A process's memory and the refc binaries it holds.
proc_bytes(Memory, Bins) -> Memory + lists:sum([S || {_, S, _} <- Bins]).

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
