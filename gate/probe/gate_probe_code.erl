%% gate/probe/gate_probe_code.erl: the modules loaded during the run, judged by where they
%% come from, and the refc binaries their literals hold.
%%
%% A module's binary literals longer than 64 bytes are refc binaries: they count in
%% erlang:memory(binary) for as long as the module is loaded, and no process, table or term
%% holds them (beam-notes: a module with a 1 MB literal, loaded, is binary +1.0 MB after a GC
%% of every process). A suite whose tests define modules with large literals (schemas, DSLs,
%% fixtures compiled inside test bodies) grows binary by megabytes without a leak. So each
%% module loaded during the run is measured: its literals' refc bytes, read from its object
%% code, and its origin. Part of the probe: see gate_probe.erl.
%%
%% Object code: a module loaded from a file is read from that file at the after-snapshot. A
%% module compiled in memory (Elixir's defmodule, Module.create, Code.compile_string, and
%% Erlang's compile:forms, all of which load with code:load_binary/3) leaves no object code
%% behind: a meta trace on code:load_binary/3 hands each one's binary to the loads process
%% while the run lasts, which measures it and keeps only the figure. Meta tracing ignores the
%% processes' trace flags, so it neither sees nor disturbs a suite's own tracing; a suite that
%% clears every trace pattern (dbg:ctp/0) ends it, and the modules it loads after that are
%% counted as not read.
-module(gate_probe_code).
-gate_load(always).

-export([watch_start/0, watch_stop/0, tracer_stop/2, watcher/0, loads/0, literals/2, origin/3,
         suite_dirs/0, literal_bytes/1, loaded_literals/0]).

%% Terms visited per literal at most (a huge literal term is cut there: its binaries beyond
%% are not counted).
-define(TERM_BUDGET, 5000000).
%% Object files read per after-snapshot at most (the modules loaded from disk during the
%% run); beyond, their literals are not read (said as modules not read).
-define(MAX_FILES, 5000).

%% ---- The loads process ----

%% Starts watching code:load_binary/3 (a new loads process, registered; an earlier one is
%% stopped). A meta tracer someone else set on that function is left alone: nothing is
%% watched then.
watch_start() ->
    watch_stop(),
    case erlang:trace_info({code, load_binary, 3}, meta) of
        {meta, false} ->
            Counter = counters:new(1, [write_concurrency]),
            Pid = spawn(fun() -> loads(#{}, Counter) end),
            register(gate_probe_loads, Pid),
            application:set_env(gate_probe, loaded_literals, Counter),
            try erlang:trace_pattern({code, load_binary, 3}, true, [{meta, Pid}]) of
                _ -> ok
            catch _:_ -> watch_stop()
            end;
        _ -> ok
    end.

watch_stop() ->
    application:unset_env(gate_probe, loaded_literals),
    tracer_stop(gate_probe_loads, [{code, load_binary, 3}]).

%% Stops the registered tracer process Name (the loads process, gate_probe_spawns's): first
%% the meta traces of MFAs that are still its (a suite may have set its own since), then the
%% process, killed if it has not stopped within 5 s.
tracer_stop(Name, MFAs) ->
    case whereis(Name) of
        undefined -> ok;
        Pid ->
            [erlang:trace_pattern(MFA, false, [meta])
             || MFA <- MFAs, erlang:trace_info(MFA, meta) =:= {meta, Pid}],
            Ref = monitor(process, Pid),
            Pid ! stop,
            receive {'DOWN', Ref, _, _, _} -> ok after 5000 -> exit(Pid, kill) end
    end.

%% The loads process, for the snapshot to leave out of its figures (gate's own); undefined.
watcher() -> whereis(gate_probe_loads).

%% The refc bytes of the literals of the modules compiled in memory since the watch started,
%% as measured so far (a module is measured just after its load, by the loads process): the
%% light readings at the test modules' edges take them from binary, so that attribution names
%% the module that grew a structure, not the one that defined a module (0 when nothing
%% watches).
loaded_literals() ->
    case application:get_env(gate_probe, loaded_literals) of
        {ok, Counter} -> counters:get(Counter, 1);
        undefined -> 0
    end.

%% Loads: #{Module => {LiteralBytes, CompilingFile, Loader}} of the last binary loaded under
%% each name; Counter: the sum of every load's literal bytes. Meta trace messages carry a
%% timestamp.
loads(Loads, Counter) ->
    receive
        {trace_ts, Caller, call, {code, load_binary, [M, _, Bin]}, _} when is_atom(M),
                                                                           is_binary(Bin) ->
            File = compiling_file(Caller),
            {L, _} = literal_bytes(Bin),
            counters:add(Counter, 1, L),
            %% the message held the object code: not kept past its measure (a minor
            %% collection: the binary's reference is young, and a suite of 10 000 modules
            %% would pay a full one per module over the whole map)
            erlang:garbage_collect(self(), [{type, minor}]),
            loads(Loads#{M => {L, File, Caller}}, Counter);
        {get, From, Ref} ->
            erlang:garbage_collect(),
            From ! {Ref, Loads, traced()},
            loads(Loads, Counter);
        stop -> ok;
        _ -> loads(Loads, Counter)
    end.

%% The file that the process which loaded a module was compiling: Elixir's parallel compiler
%% (mix test requires the suite's files with it) keeps it in each worker's dictionary. A
%% module a library generates while a test file compiles (a schema's compiled form, made by
%% an @after_compile callback with Module.create, its source the library's) is that file's.
%% Read just after the load, while the worker is still on that file; none when the loader is
%% not a compiler worker (a test running, the application's own code) or has moved on.
compiling_file(Pid) ->
    case erlang:process_info(Pid, dictionary) of
        {dictionary, D} ->
            case lists:keyfind(elixir_compiler_file, 1, D) of
                {_, F} when is_binary(F) -> unicode:characters_to_list(F);
                {_, F} when is_list(F) -> F;
                _ -> none
            end;
        _ -> none
    end.

%% Whether the meta trace is still this process's (a suite may have cleared it).
traced() ->
    erlang:trace_info({code, load_binary, 3}, meta) =:= {meta, self()}.

loads_get() ->
    case whereis(gate_probe_loads) of
        undefined -> {#{}, false};
        Pid ->
            Ref = monitor(process, Pid),
            Pid ! {get, self(), Ref},
            receive
                {Ref, Loads, Traced} -> demonitor(Ref, [flush]), {Loads, Traced};
                {'DOWN', Ref, _, _, _} -> {#{}, false}
            after 10000 -> demonitor(Ref, [flush]), {#{}, false}
            end
    end.

%% ---- The literals of the modules loaded during the run ----

%% What the loads process saw: #{Module => {LiteralBytes, CompilingFile, Loader}} (loads/2).
loads() ->
    {Loads, _} = loads_get(),
    Loads.

%% Mods: modules loaded during the run; Loads: loads(). {#{Module => LiteralBytes}, NotRead}:
%% the refc bytes of each one's literals whose object code was read, and how many could not be
%% (compiled in memory while nothing watched, an object file gone or unreadable, beyond the
%% bound).
literals(Mods, Loads) ->
    lists:foldl(fun(M, {Acc, NotRead}) ->
                        case maps:find(M, Loads) of
                            {ok, {L, _, _}} -> {Acc#{M => L}, NotRead};
                            error ->
                                case file_literals(M, map_size(Acc)) of
                                    {L, _} -> {Acc#{M => L}, NotRead};
                                    none -> {Acc, NotRead + 1}
                                end
                        end
                end, {#{}, 0}, Mods).

file_literals(_, Read) when Read >= ?MAX_FILES -> none;
file_literals(M, _) ->
    case code:which(M) of
        F when is_list(F) ->
            case filename:extension(F) =:= ".beam" andalso file:read_file(F) of
                {ok, Bin} -> literal_bytes(Bin);
                _ -> none
            end;
        _ -> none
    end.

%% {Bytes, Count}: the refc binaries (longer than 64 bytes) of a module's literals, from its
%% object code: the literal chunk (LitT, zlib-compressed behind its size, or stored when that
%% size is 0; LitU, stored) holds each literal in the external term format. Bytes are what
%% erlang:memory(binary) counts for them (allocated/1).
literal_bytes(<<"FOR1", _:32, "BEAM", Chunks/binary>>) ->
    try chunks(Chunks) catch _:_ -> {0, 0} end;
literal_bytes(_) -> {0, 0}.

%% What erlang:memory(binary) counts for a refc binary of Size bytes: its header (flags,
%% reference count, size: three words) and its bytes, rounded up to a word, and the binary
%% allocator's block header (two words). Measured on OTP 25, 20 000 binaries of each size
%% from 65 bytes to 4 kB: exactly that. Schema libraries' literals are thousands of binaries
%% of 65 to 200 bytes, whose headers are a third of them; a figure measured on the node while
%% the suite runs (bin_per/0) moved with the suite's own allocations (absinthe's literals
%% read 1.6 to 2.5 MB on three runs).
allocated(Size) ->
    W = erlang:system_info(wordsize),
    ((Size + 3 * W + W - 1) band -W) + 2 * W.
chunks(<<"LitT", Sz:32, Data:Sz/binary, _/binary>>) ->
    case Data of
        <<0:32, Body/binary>> -> terms(Body);
        %% a table of fewer than 65 bytes holds no refc binary
        <<U:32, _/binary>> when U < 65 -> {0, 0};
        <<_:32, Z/binary>> -> terms(zlib:uncompress(Z))
    end;
chunks(<<"LitU", Sz:32, Data:Sz/binary, _/binary>>) -> terms(Data);
chunks(<<_:4/binary, Sz:32, Rest/binary>>) ->
    Pad = (4 - Sz rem 4) rem 4,
    case Rest of
        <<_:Sz/binary, _:Pad/binary, More/binary>> -> chunks(More);
        _ -> {0, 0}
    end;
chunks(_) -> {0, 0}.

terms(<<N:32, Rest/binary>>) -> terms(N, Rest, {0, 0});
terms(_) -> {0, 0}.

terms(0, _, Acc) -> Acc;
%% an encoded term of 66 bytes or fewer cannot hold a binary of 65
terms(N, <<Sz:32, _:Sz/binary, Rest/binary>>, Acc) when Sz < 67 -> terms(N - 1, Rest, Acc);
terms(N, <<Sz:32, Ext:Sz/binary, Rest/binary>>, {B0, C0}) ->
    {B, C, _} = refc(binary_to_term(Ext), {0, 0, ?TERM_BUDGET}),
    terms(N - 1, Rest, {B0 + B, C0 + C});
terms(_, _, Acc) -> Acc.

refc(_, {_, _, 0} = Acc) -> Acc;
refc(B, {S, C, K}) when is_binary(B), byte_size(B) > 64 ->
    {S + allocated(byte_size(B)), C + 1, K - 1};
refc(T, {S, C, K}) when is_tuple(T) -> refc_list(tuple_to_list(T), {S, C, K - 1});
refc(L, {S, C, K}) when is_list(L) -> refc_list(L, {S, C, K - 1});
refc(M, {S, C, K}) when is_map(M) -> refc_list(maps:values(M), {S, C, K - 1});
refc(_, {S, C, K}) -> {S, C, K - 1}.

refc_list([H | T], Acc) -> refc_list(T, refc(H, Acc));
refc_list(_, Acc) -> Acc.

%% ---- Where a module comes from ----

%% disk: from an object file (the project's, its dependencies', Elixir's, OTP's; a file
%% recompiled for coverage); suite: compiled in memory from the suite's own files (its source
%% is a script, .exs, or lies under the project's test paths: test modules, test_helper.exs,
%% support files required by it, and modules defined inside test bodies, whose source is
%% their test file); created: every other module compiled in memory (the application's
%% Module.create or code:load_binary of generated code, a source outside the test paths, or
%% none). A module loaded while a suite's file compiled (compiling_file/1) is the suite's too,
%% whatever its source, and so is a module a library made for one of the suite's modules as
%% that module compiled: named under it (Schema.Compiled for Schema) and loaded by the same
%% process right after it (an @after_compile callback's Module.create, with the library's
%% source, for a schema a test defines in its body). Dirs: suite_dirs(); Loads: loads().
origin(M, Dirs, Loads) ->
    case code:which(M) of
        F when is_list(F) ->
            case filename:extension(F) of
                ".beam" -> disk;
                _ -> memory_origin(M, Dirs, Loads)
            end;
        cover_compiled -> disk;
        preloaded -> disk;
        _ -> memory_origin(M, Dirs, Loads)
    end.

memory_origin(M, Dirs, Loads) ->
    case suite_made(M, Dirs, Loads, 8) of
        true -> suite;
        false -> created
    end.

suite_made(_, _, _, 0) -> false;
suite_made(M, Dirs, Loads, Depth) ->
    Src = try proplists:get_value(source, erlang:get_module_info(M, compile))
          catch _:_ -> undefined end,
    {Compiling, Loader} = case maps:find(M, Loads) of
                              {ok, {_, F, By}} -> {F, By};
                              error -> {none, none}
                          end,
    suite_file(Src, Dirs) orelse suite_file(Compiling, Dirs) orelse
        case parent(M) of
            {ok, Up} when is_pid(Loader) ->
                case maps:find(Up, Loads) of
                    {ok, {_, _, Loader}} -> suite_made(Up, Dirs, Loads, Depth - 1);
                    _ -> false
                end;
            _ -> false
        end.

%% The module a name is nested under ('Elixir.A.B' for 'Elixir.A.B.Compiled'), when it exists.
parent(M) ->
    Name = atom_to_binary(M),
    case binary:matches(Name, <<".">>) of
        [_, _ | _] = Dots ->
            {Last, _} = lists:last(Dots),
            try {ok, binary_to_existing_atom(binary:part(Name, 0, Last))}
            catch _:_ -> none
            end;
        _ -> none
    end.

suite_file(F, Dirs) when is_list(F) ->
    filename:extension(F) =:= ".exs" orelse under_any(F, Dirs);
suite_file(_, _) -> false.

under_any(Src, Dirs) ->
    S = filename:split(Src),
    lists:any(fun(D) -> lists:prefix(D, S) end, Dirs).

%% The project's test paths as split absolute paths: its test_paths (["test"] by default),
%% and in an umbrella each application's test folder under apps_path. [] outside Mix.
suite_dirs() ->
    try
        Config = 'Elixir.Mix.Project':config(),
        Root = filename:dirname(unicode:characters_to_list('Elixir.Mix.Project':project_file())),
        Paths = [unicode:characters_to_list(P)
                 || P <- proplists:get_value(test_paths, Config, [<<"test">>])],
        Own = [filename:absname(P, Root) || P <- Paths],
        Apps = case proplists:get_value(apps_path, Config) of
                   undefined -> [];
                   nil -> [];
                   A -> [filename:join(D, "test")
                         || D <- filelib:wildcard(filename:join(
                                                    filename:absname(
                                                      unicode:characters_to_list(A), Root),
                                                    "*"))]
               end,
        [filename:split(D) || D <- Own ++ Apps]
    catch _:_ -> []
    end.
