%% gate/probe/gate_probe_eunit.erl: EUnit inside the node, for a rebar3 project.
%%
%% The modules `rebar3 eunit` tests (each project app's modules, then the modules of its test
%% directory that no app module's tests already cover: eunit runs M_tests with M), one
%% eunit:test/2 call per module, so that the module's edges are read in this process, between
%% two calls, at the very moments its tests begin and end: the test module is what attribution
%% names, as an ExUnit module is. This module is also the EUnit listener of those calls
%% (eunit_listener's callbacks below): it records every test (module, function, description,
%% time, result) and hands it to gate's formatter (Elixir.Gate.Formatter, which serves Erlang
%% runners too: gate_probe_erl), with light readings at each test's edges in --per-test mode.
%% Loaded only where tests run. Part of the probe: see gate_probe.erl.
-module(gate_probe_eunit).
-gate_load(tests).

-export([run/2, test_modules/2]).
%% eunit_listener's callbacks
-export([start/1, init/1, handle_begin/3, handle_end/3, handle_cancel/3, terminate/2]).

-define(F, 'Elixir.Gate.Formatter').

%% What EUnit tests, in order, as [{TestModule, Spec}]: each app module's own tests (Spec: the
%% module, or its test functions [{M, F}] when it has an M_tests module too, which runs next
%% on its own: `eunit:test(M)` would run both in one call, and the test module is what
%% attribution names), then the test directories' other modules that have tests.
test_modules(Apps, TestDirs) ->
    AppMods = lists:append([app_modules(A) || A <- Apps]),
    Own = lists:append([[{M, own_spec(M)} || has_tests(M)] ++
                            [{tests_of(M), tests_of(M)} || has_tests(tests_of(M))]
                        || M <- AppMods]),
    Covered = [tests_of(M) || M <- AppMods],
    Extra = [{M, M} || D <- TestDirs,
                       F <- lists:sort(filelib:wildcard(filename:join(D, "*.beam"))),
                       M <- [list_to_atom(filename:basename(F, ".beam"))],
                       not lists:suffix("_SUITE", atom_to_list(M)),
                       not lists:member(M, Covered), not lists:member(M, AppMods), has_tests(M)],
    Own ++ Extra.

own_spec(M) ->
    case code:ensure_loaded(tests_of(M)) of
        {module, _} -> [{M, F} || {F, 0} <- M:module_info(exports), test_fun(F)];
        _ -> M
    end.

app_modules(App) ->
    _ = application:load(App),
    case application:get_key(App, modules) of
        {ok, Mods} -> Mods;
        undefined -> []
    end.

tests_of(M) -> list_to_atom(atom_to_list(M) ++ "_tests").

%% A test function as EUnit finds one: test/0, NAME_test/0 or NAME_test_/0.
has_tests(M) ->
    case code:ensure_loaded(M) of
        {module, M} -> lists:any(fun({F, 0}) -> test_fun(F);
                                    (_) -> false
                                 end, M:module_info(exports));
        _ -> false
    end.

test_fun(test) -> true;
test_fun(F) ->
    S = atom_to_list(F),
    lists:suffix("_test", S) orelse lists:suffix("_test_", S).

%% Runs EUnit on Mods ([{TestModule, Spec}], see test_modules/2; the formatter started, see
%% gate_probe_erl). Returns how many of them eunit:test/2 said failed.
run(Mods, Opts) ->
    Mode = maps:get(attribution, Opts, module),
    lists:foldl(fun({M, Spec}, Failed) -> Failed + run_module(M, Spec, Mode, Opts) end, 0, Mods).

run_module(M, Spec, Mode, Opts) ->
    edge(start, M, Mode),
    Listener = {?MODULE, #{module => M, mode => Mode, root => maps:get(root, Opts, <<>>),
                           runner => self()}},
    R = try eunit:test(Spec, [{report, Listener}])
        catch C:E:S -> {crashed, {C, E, S}}
        end,
    edge(finish, M, Mode),
    %% the listener's count of the failures it recorded (sent as it terminated, before
    %% eunit:test/2 returned)
    Recorded = receive {gate_eunit_failed, M, N} -> N after 0 -> 0 end,
    case R of
        ok -> 0;
        {crashed, Ex} ->
            %% said as a failing test of the module: never a silent red
            Why = text(["eunit:test crashed: ", eunit_lib:format_exception(Ex, 30)]),
            emit(M, <<"eunit:test">>, 0, 0, failed, Why, Why, none, #{}),
            1;
        _ when Recorded =:= 0 ->
            %% EUnit said error with no test of its failing (a generator that crashed, a
            %% module it could not find): one failing test, as rebar3 fails
            Why = <<"EUnit reported an error that no single test explains; its output above "
                    "says what">>,
            emit(M, <<"eunit">>, 0, 0, failed, Why, Why, none, #{}),
            1;
        _ -> 1
    end.

%% A module edge: a light reading and the structures, in this process, as the ExUnit hook
%% takes them in the test module's process (gate_probe_events).
edge(_, _, off) -> ok;
edge(Kind, M, _) ->
    gen_server:cast(?F, {gate_module, Kind, M, false, ?F:light(false)}),
    gen_server:cast(?F, {gate_structs, Kind, M, gate_probe_events:edge_structs()}).

%% ---- The listener ----

start(Opts) -> eunit_listener:start(?MODULE, [{gate, Opts}]).

init(Opts) -> (proplists:get_value(gate, Opts))#{open => #{}, failed => 0}.

handle_begin(test, Data, #{mode := test, open := Open} = St) ->
    St#{open := Open#{proplists:get_value(id, Data) => ?F:light(false)}};
handle_begin(_, _, St) -> St.

handle_end(test, Data, St) ->
    {Status, Msg, Reason} = case proplists:get_value(status, Data) of
                                ok -> {nil, <<>>, <<>>};
                                {error, Ex} ->
                                    Text = text(eunit_lib:format_exception(Ex, 30)),
                                    {failed, Text, reason(Ex)};
                                {skipped, Why} -> {skipped, text(io_lib:format("~0tp", [Why])), <<>>}
                            end,
    record(Data, Status, Msg, Reason, St);
handle_end(_, _, St) -> St.

%% A test cancelled (a timeout, its process killed) is a failure, as rebar3 counts it; a
%% group whose setup failed is one failure for its tests, which never ran.
handle_cancel(test, Data, St) ->
    Why = cancel_text(proplists:get_value(reason, Data)),
    record(Data, failed, Why, Why, St);
handle_cancel(group, Data, St) ->
    case proplists:get_value(reason, Data) of
        undefined -> St;
        {blame, _} -> St;
        R ->
            Why = cancel_text(R),
            Desc = case proplists:get_value(desc, Data) of
                       D when is_list(D); is_binary(D) -> [" ", D];
                       _ -> ""
                   end,
            Name = text(["setup of group", Desc, " ", id_text(proplists:get_value(id, Data))]),
            emit(maps:get(module, St), Name, 0, 0, failed, Why, Why, none, St),
            St#{failed := maps:get(failed, St) + 1}
    end.

terminate(_, #{runner := R, module := M, failed := N}) ->
    R ! {gate_eunit_failed, M, N},
    ok;
terminate(_, _) -> ok.

cancel_text(undefined) -> <<"skipped">>;
cancel_text(timeout) -> <<"timed out">>;
cancel_text({timeout, _}) -> <<"timed out">>;
cancel_text({startup, R}) -> text(io_lib:format("could not start test process: ~0tP", [R, 30]));
cancel_text({exit, R}) -> text(io_lib:format("unexpected termination of test process: ~0tP", [R, 30]));
cancel_text({abort, R}) -> text(eunit_lib:format_error(R, 30));
cancel_text(R) -> text(io_lib:format("~0tP", [R, 30])).

id_text(Id) when is_list(Id) -> lists:join($., [integer_to_list(I) || I <- Id, is_integer(I)]);
id_text(_) -> "".

record(Data, Status, Msg, Reason, #{open := Open} = St) ->
    Id = proplists:get_value(id, Data),
    {M, Name, Line} = test_name(Data, maps:get(module, St)),
    Time = 1000 * case proplists:get_value(time, Data) of
                      T when is_integer(T) -> T;
                      _ -> 0
                  end,
    Delta = case maps:take(Id, Open) of
                {Start, _} -> {Start, ?F:light(false)};
                error -> none
            end,
    ALine = case Reason of
                <<>> -> Line;
                _ -> assert_line(proplists:get_value(status, Data), Line)
            end,
    emit(M, Name, ALine, Time, Status, Msg, Reason, Delta, St),
    St#{open := maps:remove(Id, Open), failed := maps:get(failed, St) + failed(Status)}.

failed(failed) -> 1;
failed(_) -> 0.

emit(M, Name, Line, Time, Status, Msg, Reason, Delta, St) ->
    case Delta of
        {S0, S1} -> gen_server:cast(?F, {gate_test, M, Name, S0, S1});
        none -> ok
    end,
    State = case Status of
                nil -> nil;
                _ -> {gate_erl, Status, Msg, Reason}
            end,
    gen_server:cast(?F, {test_finished, #{module => M, name => Name, state => State,
                                          time => Time,
                                          tags => #{file => gate_probe_erl:source_file(M, maps:get(root, St, <<>>)), line => Line}}}).

%% {Module, Name, Line}: "fun_test/0" (its line from the module's debug info), a generated
%% test "fun_test_/0 #3 line 12" (the fun's number tells apart the tests of one line), and the
%% description after a colon when the test has one.
test_name(Data, Default) ->
    Line = case proplists:get_value(line, Data, 0) of
               L when is_integer(L) -> L;
               _ -> 0
           end,
    Source = proplists:get_value(source, Data),
    Desc = case proplists:get_value(desc, Data) of
               D when is_list(D), D =/= ""; is_binary(D), D =/= <<>> ->
                   %% a module's only test carries the module's group's description
                   case Source of
                       {M0, _, _} when is_atom(M0) ->
                           case unicode:characters_to_list(D) =:=
                                    lists:flatten(io_lib:format("module '~ts'", [M0])) of
                               true -> "";
                               false -> [": ", D]
                           end;
                       _ -> [": ", D]
                   end;
               _ -> ""
           end,
    case Source of
        {M, F, A} ->
            S = atom_to_list(F),
            case re:run(S, "^-(.+)/([0-9]+)-fun-([0-9]+)-$", [{capture, all_but_first, list}]) of
                {match, [G, GA, N]} ->
                    {M, text([G, "/", GA, " #", N, [[" line ", integer_to_list(Line)] || Line > 0],
                              Desc]), Line};
                nomatch ->
                    L1 = case Line of
                             0 -> fun_line(M, F, A);
                             _ -> Line
                         end,
                    {M, text([S, "/", integer_to_list(A), Desc]), L1}
            end;
        _ -> {Default, text(["test", Desc]), Line}
    end.

%% Where M defines F/A (its debug info, read once a module), else 0.
fun_line(M, F, A) ->
    Lines = case get({gate_lines, M}) of
                undefined ->
                    Ls = try
                             {ok, {_, [{abstract_code, {raw_abstract_v1, Forms}}]}} =
                                 beam_lib:chunks(code:which(M), [abstract_code]),
                             maps:from_list([{{N, Ar}, erl_anno:line(Anno)}
                                             || {function, Anno, N, Ar, _} <- Forms])
                         catch _:_ -> #{}
                         end,
                    put({gate_lines, M}, Ls),
                    Ls;
                Ls -> Ls
            end,
    maps:get({F, A}, Lines, 0).

%% The line of the failed assertion (eunit's macros put it in the error term), else the test's.
assert_line({error, {_, {_, Info}, _}}, Line) when is_list(Info) ->
    case lists:keyfind(line, 1, Info) of
        {line, L} when is_integer(L) -> L;
        _ -> Line
    end;
assert_line(_, Line) -> Line.

%% The failure's reason in one line: an assertion's name and what it compared, else the
%% exception.
reason({error, {Assert, Info}, _}) when is_atom(Assert), is_list(Info) ->
    Parts = [io_lib:format("~ts ~0tP", [K, V, 12]) || {K, V} <- Info,
                                                       lists:member(K, [expected, value, pattern,
                                                                        unexpected_success,
                                                                        unexpected_exception])],
    text([atom_to_list(Assert), " failed", [[": ", lists:join(", ", Parts)] || Parts =/= []]]);
reason({Class, Term, _}) -> text(io_lib:format("~w: ~0tP", [Class, Term, 20]));
reason(Other) -> text(io_lib:format("~0tP", [Other, 20])).

text(IoData) ->
    case unicode:characters_to_binary(IoData) of
        B when is_binary(B) -> gate_probe:truncate(B);
        _ -> gate_probe:truncate(iolist_to_binary(io_lib:format("~tp", [IoData])))
    end.
