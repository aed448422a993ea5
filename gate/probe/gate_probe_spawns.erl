%% gate/probe/gate_probe_spawns.erl: the fun each process spawned during the run was spawned
%% with, and where that fun is written, so that a group of left-alive processes is named by
%% the code that spawned it.
%%
%% A process spawned with a fun (spawn(fun), spawn_link, spawn_monitor, spawn_opt, Elixir's
%% Kernel.spawn) starts in erlang:apply/2 and keeps nothing of the fun once the fun has made
%% a tail call: `spawn(fn -> Process.sleep(:infinity) end)` leaves a process whose initial
%% call is erlang:apply/2 and whose stack is Process.sleep/1 alone. So the spawn is seen as
%% it happens: every spawn with a fun goes through one of three BIFs, erlang:spawn/3,
%% spawn_link/3 and spawn_opt/4, with erlang, apply, [Fun, []]. A meta trace on each, its
%% match spec passing only those calls, hands the fun and then the new pid to the spawns
%% process while the run lasts; it keeps the fun's module and name for each pid and drops
%% those of processes that ended. Meta tracing ignores the processes' trace flags, so it
%% neither sees nor disturbs a suite's own tracing. A meta tracer someone else set on one of
%% these BIFs is left alone (that BIF's spawns are then not seen). Part of the probe: see
%% gate_probe.erl.
%%
%% Where a fun is written: its defining module's object file has, for each function (a fun
%% is the local function '-start_workers/1-fun-0-'), a line instruction before its entry,
%% an index into the module's line table (the "Line" chunk). Read for the few funs a finding
%% names, at the after-snapshot; a module compiled in memory (a test file's) has no object
%% file, and its funs are named without a line.
-module(gate_probe_spawns).
-gate_load(always).

-export([watch_start/0, watch_stop/0, watcher/0, funs/0, fun_of/2, fun_location/2,
         line_table/1, born_key/3, fun_label/1, code_label/2, relative/1]).

-import(gate_probe_snapshot, [name_text/1, mfa_text/1, initial_call/1]).

%% The spawns process drops the entries of ended processes when it holds this many, and
%% then at twice what is left (at least this many).
-define(PRUNE_AT, 4096).

%% The BIFs every spawn with a fun goes through, each with a match spec that passes only a
%% spawn of erlang:apply(Fun, []) and asks for its return (the new pid).
traced() ->
    Ret = [{return_trace}],
    [{{erlang, spawn, 3}, [{[erlang, apply, ['$1', []]], [{is_function, '$1'}], Ret}]},
     {{erlang, spawn_link, 3}, [{[erlang, apply, ['$1', []]], [{is_function, '$1'}], Ret}]},
     {{erlang, spawn_opt, 4}, [{[erlang, apply, ['$1', []], '_'], [{is_function, '$1'}], Ret}]}].

%% ---- The spawns process ----

%% Starts watching the spawns with a fun (a new spawns process, registered; an earlier one
%% is stopped).
watch_start() ->
    watch_stop(),
    Pid = spawn(fun() -> spawns(#{}, #{}, ?PRUNE_AT) end),
    register(gate_probe_spawns, Pid),
    [try erlang:trace_pattern(MFA, MS, [{meta, Pid}]) catch _:_ -> ok end
     || {MFA, MS} <- traced(), erlang:trace_info(MFA, meta) =:= {meta, false}],
    ok.

watch_stop() ->
    gate_probe_code:tracer_stop(gate_probe_spawns, [MFA || {MFA, _} <- traced()]).

%% The spawns process, for the snapshot to leave out of its figures (gate's own); undefined.
%% The light readings at the test edges do not ask it for its memory: process_info on a
%% process busy with a burst of trace messages waits for it, and the per-test readings lost
%% their budget to that wait (attribution_per_test_clean_passes failed 2 runs in 6). What it
%% holds (an entry per live process spawned with a fun, at most 4 096 others) moves with what
%% the module being read spawned, and is small beside the limits.
watcher() -> whereis(gate_probe_spawns).

%% Pending: #{Caller => {Module, FunName, Arity}} of a call whose return is still to come (a
%% caller's call and return messages arrive in order); Funs: #{Pid => {Module, FunName, Arity}}.
%% Meta trace messages carry a timestamp.
spawns(Pending, Funs, Prune) ->
    receive
        {trace_ts, Caller, call, {erlang, _, [erlang, apply, [F, []] | _]}, _}
          when is_function(F) ->
            {module, M} = erlang:fun_info(F, module),
            {name, N} = erlang:fun_info(F, name),
            {arity, A} = erlang:fun_info(F, arity),
            spawns(Pending#{Caller => {M, N, A}}, Funs, Prune);
        {trace_ts, Caller, return_from, _, Ret, _} ->
            %% spawn_opt with monitor returns {Pid, Ref}
            case {maps:take(Caller, Pending), Ret} of
                {{Fun, Pending1}, {Pid, _}} when is_pid(Pid) ->
                    added(Pending1, Funs#{Pid => Fun}, Prune);
                {{Fun, Pending1}, Pid} when is_pid(Pid) ->
                    added(Pending1, Funs#{Pid => Fun}, Prune);
                {{_, Pending1}, _} -> spawns(Pending1, Funs, Prune);
                {error, _} -> spawns(Pending, Funs, Prune)
            end;
        {get, From, Ref} ->
            From ! {Ref, Funs},
            spawns(Pending, Funs, Prune);
        {get, Pids, From, Ref} ->
            From ! {Ref, maps:with(Pids, Funs)},
            spawns(Pending, Funs, Prune);
        stop -> ok;
        _ -> spawns(Pending, Funs, Prune)
    end.

added(Pending, Funs, Prune) when map_size(Funs) < Prune -> spawns(Pending, Funs, Prune);
added(Pending, Funs, _) ->
    Alive = fun(P, _) -> erlang:is_process_alive(P) end,
    Live = maps:filter(Alive, Funs),
    %% a caller whose spawn raised (no return came) and that ended since
    Pending1 = maps:filter(Alive, Pending),
    %% the dropped entries' garbage is not kept until the next collection
    erlang:garbage_collect(),
    spawns(Pending1, Live, max(?PRUNE_AT, 2 * map_size(Live))).

%% #{Pid => {Module, FunName, Arity}} of the processes spawned with a fun since the watch started
%% (a process that ended may still be there); #{} when nothing watches.
funs() -> ask(fun(Ref) -> {get, self(), Ref} end).

%% {Module, FunName, Arity} of the fun the process P was spawned with, or none; Funs: funs/0's
%% map, or undefined to ask the spawns process for P alone. A fun that names no code of the
%% project's is none: one evaluated (erl_eval's closures, as a script's or an .exs file's
%% top level makes), or one whose module is gone (Elixir evaluates test_helper.exs in a
%% module of its own, elixir_compiler_0, removed once done; asking a module that is not
%% loaded would go to the code server, which may be loading it).
fun_of(P, undefined) ->
    fun_of(P, ask(fun(Ref) -> {get, [P], self(), Ref} end));
fun_of(P, Funs) ->
    case maps:get(P, Funs, none) of
        {erl_eval, _, _} -> none;
        {M, _, _} = Fun ->
            case erlang:module_loaded(M) of
                true -> Fun;
                false -> none
            end;
        none -> none
    end.

ask(Msg) ->
    case whereis(gate_probe_spawns) of
        undefined -> #{};
        Pid ->
            Ref = monitor(process, Pid),
            Pid ! Msg(Ref),
            receive
                {Ref, Funs} -> demonitor(Ref, [flush]), Funs;
                {'DOWN', Ref, _, _, _} -> #{}
            after 10000 -> demonitor(Ref, [flush]), #{}
            end
    end.

%% ---- Naming a process by the code that spawned it ----

%% A spawned fun starts in erlang:apply/2, which says nothing: the code that spawned it (the
%% function defining the fun: from the fun's frame in its stack, the fun it was seen spawned
%% with (gate_probe_spawns; Funs: its map), or a proc_lib initial call naming the fun), then
%% where it waits; without any, where it is now. Where: #{{Module, Fun} => Location} of the
%% funs whose location was read from their object files, {Name, Where1}.
born_key(P, Funs, Where) ->
    case erlang:process_info(P, [registered_name, current_function]) of
        [{registered_name, Name}, _] when Name =/= [] -> {name_text(Name), Where};
        [_, {current_function, Cur}] ->
            case initial_call(P) of
                {erlang, apply, 2} ->
                    Seen = case fun_of(P, Funs) of
                               {M, F, A} -> {M, F, A, []};
                               none -> none
                           end,
                    case spawner(P, Seen) of
                        none -> {<<"spawned fun in ", (mfa_text(Cur))/binary>>, Where};
                        Fun -> spawner_text(Fun, Cur, Where)
                    end;
                {M, F, A} = MFA when is_atom(M), is_atom(F), is_integer(A) ->
                    case fun_parent(F) of
                        none -> {mfa_text(MFA), Where};
                        _ -> spawner_text(spawner(P, {M, F, A, []}), Cur, Where)
                    end;
                MFA -> {mfa_text(MFA), Where}
            end;
        _ -> {<<"exited">>, Where}
    end.

%% A process spawned with a fun, named where one process is (a table's owner, a process
%% that grew): "spawned by ..., waiting in ..." as its group would be named, else "spawned
%% fun in" where it is now.
fun_label(P) ->
    case erlang:process_info(P, current_function) of
        {current_function, Cur} ->
            Seen = case fun_of(P, undefined) of
                       {M, F, A} -> {M, F, A, []};
                       none -> none
                   end,
            case spawner(P, Seen) of
                none -> <<"spawned fun in ", (mfa_text(Cur))/binary>>;
                Fun -> element(1, spawner_text(Fun, Cur, #{}))
            end;
        _ -> mfa_text({erlang, apply, 2})
    end.

%% What a process's code is called where one process is named, when it runs a fun: its
%% initial call MFA erlang:apply/2 (fun_label/1), or a fun that proc_lib names (Agent,
%% Task: '-start/1-fun-0-'): "spawned by ..., waiting in ..."; none when neither says more
%% than MFA does.
code_label(P, {erlang, apply, 2}) ->
    case fun_label(P) of
        <<"spawned by ", _/binary>> = L -> L;
        <<"spawned with ", _/binary>> = L -> L;
        _ -> none
    end;
code_label(P, {M, F, A}) when is_atom(M), is_atom(F), is_integer(A) ->
    case {fun_parent(F), erlang:process_info(P, current_function)} of
        {{_, _}, {current_function, Cur}} ->
            element(1, spawner_text(spawner(P, {M, F, A, []}), Cur, #{}));
        _ -> none
    end;
code_label(_, _) -> none.

%% The fun a process runs, {M, F, A, Location}: the outermost fun frame of its stack (where
%% the process is in it: its file and line), else Default.
spawner(P, Default) ->
    case erlang:process_info(P, current_stacktrace) of
        {current_stacktrace, Stack} ->
            case lists:reverse([X || {_, F, _, _} = X <- Stack, fun_parent(F) =/= none]) of
                [{M, F, A, Loc} | _] -> {M, F, A, Loc};
                [] -> Default
            end;
        _ -> Default
    end.

%% The function that defines a fun: '-start_workers/1-fun-0-' -> {start_workers, 1}; none
%% for a name that is no fun's.
fun_parent(F) when is_atom(F) ->
    case re:run(atom_to_list(F), "^-(.+)/([0-9]+)-(?:inlined-)?fun-[0-9]+-$",
                [{capture, all_but_first, list}, unicode]) of
        {match, [Name, Arity]} -> {Name, list_to_integer(Arity)};
        nomatch -> none
    end;
fun_parent(_) -> none.

%% {"spawned by Pool.start_workers/1 (lib/pool.ex:12), waiting in Process:sleep/1", Where1};
%% "waiting in that fun" when it waits in the fun itself; a fun that names a function
%% (Erlang's fun loop/0) is that function: "spawned with worker:loop/0 (src/worker.erl:9)".
%% A fun known without a location (no frame of it in the stack) is located from its
%% module's object file, once per fun.
spawner_text({M, F, A, []}, Cur, Where) ->
    case Where of
        #{{M, F} := Loc} -> spawner_text({M, F, A, Loc}, Cur, Where);
        _ ->
            Loc = fun_location(M, F),
            spawner_text({M, F, A, Loc}, Cur, Where#{{M, F} => Loc})
    end;
spawner_text({M, F, A, Loc}, Cur, Where) ->
    %% a stack frame's file is as the compiler was given it: absolute under rebar3
    Site = case {proplists:get_value(file, Loc), proplists:get_value(line, Loc)} of
               {File, Line} when is_list(File), is_integer(Line) ->
                   [" (", relative(File), ":", integer_to_list(Line), ")"];
               {File, _} when is_list(File) -> [" (", relative(File), ")"];
               _ -> []
           end,
    Text = case fun_parent(F) of
               {Name, Arity} ->
                   Def = case atom_to_binary(M) of
                             <<"Elixir.", Rest/binary>> -> [Rest, $., Name];
                             Erl -> [Erl, $:, Name]
                         end,
                   ["spawned by ", Def, $/, integer_to_list(Arity), Site, ", waiting in ",
                    waits(Cur, {M, F}, <<"that fun">>)];
               %% a fun naming a function (fun loop/0): the process runs that function
               none ->
                   ["spawned with ", mfa_text({M, F, A}), Site, ", waiting in ",
                    waits(Cur, {M, F}, <<"that function">>)]
           end,
    {unicode:characters_to_binary(Text), Where}.

waits({M, F, _}, {M, F}, Same) -> Same;
waits(Cur, _, _) -> mfa_text(Cur).

%% ---- Where a fun is written ----

%% [{file, File}, {line, Line}] of the function F of module M (a fun's own function: its
%% arity is the fun's plus what it closes over), as a stack frame says it, from M's object
%% file; [{file, Source}] when M has no object file or no line for it (a module compiled in
%% memory), [] when M does not say its source either.
fun_location(M, F) ->
    case erlang:module_loaded(M) andalso object_location(M, F) of
        false -> [];
        [] -> source_location(M);
        Loc -> Loc
    end.

object_location(M, F) ->
    try
        File = code:which(M),
        true = is_list(File) andalso filename:extension(File) =:= ".beam",
        {ok, Bin} = file:read_file(File),
        {ok, {_, [{"Line", Chunk}]}} = beam_lib:chunks(Bin, ["Line"]),
        {beam_file, _, _, _, _, Code} = beam_disasm:file(Bin),
        [Is | _] = [Is || {function, N, _, _, Is} <- Code, N =:= F],
        [I | _] = [I || {line, I} <- Is, is_integer(I), I > 0],
        {Lines, Names} = line_table(Chunk),
        {Fi, Line} = lists:nth(I, Lines),
        Source = case Fi of
                     0 -> source_of(M);
                     _ -> relative(unicode:characters_to_list(lists:nth(Fi, Names)))
                 end,
        [{file, Source}, {line, Line}]
    catch _:_ -> []
    end.

%% A module compiled in memory (a test file's) has no object file: its source file alone.
source_location(M) ->
    try [{file, source_of(M)}]
    catch _:_ -> []
    end.

%% A location with file index 0 is in the module's own source (its compile info).
source_of(M) ->
    relative(proplists:get_value(source, M:module_info(compile))).

%% A file name relative to the project's root when under it: a rebar3 project's (set by
%% gate_probe_erl), else the working directory (a Mix node's is the project's).
relative(File) ->
    {ok, Root} = case application:get_env(gate_probe, root) of
                     {ok, R} when is_list(R) -> {ok, R};
                     _ -> file:get_cwd()
                 end,
    case lists:prefix(Root ++ "/", File) of
        true -> lists:nthtail(length(Root) + 1, File);
        false -> File
    end.

%% The "Line" chunk: {[{FileIndex, Line}], [FileName]}: line instruction I (from 1) is the
%% I-th item; a file index 0 is the module's own source, N the N-th name. Each item is a
%% compact term: an integer tagged i (a line, in the current file) or a (the file changes).
line_table(<<_Ver:32, _Bits:32, _Instrs:32, NumLines:32, NumNames:32, Rest/binary>>) ->
    {Lines, Rest1} = line_items(NumLines, Rest, 0, []),
    {Lines, line_names(NumNames, Rest1)}.

line_items(0, Rest, _, Acc) -> {lists:reverse(Acc), Rest};
line_items(N, Bin, F, Acc) ->
    case compact(Bin) of
        {2, Fi, Rest} -> line_items(N, Rest, Fi, Acc);
        {1, L, Rest} -> line_items(N - 1, Rest, F, [{F, L} | Acc])
    end.

line_names(0, _) -> [];
line_names(N, <<Len:16, Name:Len/binary, Rest/binary>>) -> [Name | line_names(N - 1, Rest)].

%% {Tag, Value, Rest}: the compact term encoding of beam_asm (a value below 16 in the byte's
%% high bits; below 2048 in 3 bits and the next byte; else 2 to 8 bytes that follow).
compact(<<B, Rest/binary>>) when B band 8 =:= 0 -> {B band 7, B bsr 4, Rest};
compact(<<B, Nx, Rest/binary>>) when B band 16 =:= 0 ->
    {B band 7, ((B band 2#11100000) bsl 3) bor Nx, Rest};
compact(<<B, Rest/binary>>) when B bsr 5 < 7 ->
    N = (B bsr 5) + 2,
    <<V:N/unit:8, R/binary>> = Rest,
    {B band 7, V, R}.
