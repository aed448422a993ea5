%% gate/probe/gate_probe_ct.erl: Common Test inside the node, for a rebar3 project.
%%
%% The project's suites (*_SUITE in its test directories, compiled by rebar3) run with
%% ct:run_test/1 as `rebar3 ct` runs them (no auto-compile, logs in _build/test/logs), with
%% this module as a CT hook (the callbacks below): a suite's edges are read where Common Test
%% calls the hook, in the process that runs init_per_suite and end_per_suite, so a suite is
%% what a test module is for attribution; every case is recorded (suite, group, case, time,
%% result) and handed to gate's formatter, as gate_probe_eunit does EUnit's tests. A config
%% function that fails (init_per_suite, init_per_group, end_per_*) is a failing test of its
%% own: its cases were not run, and bare `rebar3 ct` fails too.
%% Loaded only where tests run. Part of the probe: see gate_probe.erl.
-module(gate_probe_ct).
-gate_load(tests).

-export([run/2, suites/1]).
%% the CT hook's callbacks
-export([id/1, init/2, pre_init_per_suite/3, post_init_per_suite/4, pre_end_per_suite/3,
         post_end_per_suite/4, pre_init_per_group/4, post_end_per_group/5,
         pre_init_per_testcase/4, post_end_per_testcase/5, on_tc_fail/4, on_tc_skip/4,
         terminate/1]).

-define(F, 'Elixir.Gate.Formatter').

%% The suites in Dirs: [{Dir, [Suite]}], sorted.
suites(Dirs) ->
    [{D, S} || D <- Dirs,
               S <- [[list_to_atom(filename:basename(F, ".beam"))
                      || F <- lists:sort(filelib:wildcard(filename:join(D, "*_SUITE.beam")))]],
               S =/= []].

%% Runs the suites (Opts: suites [{Dir, [Suite]}], cases, groups, logdir, attribution,
%% root, ct_opts). Returns {ok, Failed} or {error, Text}.
run(Opts, Filter) ->
    Mode = maps:get(attribution, Opts, module),
    Log = maps:get(logdir, Opts),
    ok = filelib:ensure_dir(filename:join(Log, "x")),
    Hook = {?MODULE, #{mode => Mode, root => maps:get(root, Opts, <<>>)}},
    %% rebar.config's ct_opts that Common Test takes (gate_probe_erl:ct_passed/2), the
    %% project's own hooks after gate's
    CtOpts = maps:get(ct_opts, Opts, []),
    Hooks = [Hook | lists:append([H || {ct_hooks, H} <- CtOpts])],
    Own = [O || {K, _} = O <- CtOpts, K =/= ct_hooks],
    Failed = lists:foldl(
               fun({Dir, Suites}, Acc) ->
                       Spec = [{dir, Dir}, {suite, Suites}, {logdir, Log},
                               {auto_compile, false}, {ct_hooks, Hooks}] ++ Own ++ Filter,
                       R = ct:run_test(Spec),
                       Recorded = receive {gate_ct_failed, N} -> N after 0 -> 0 end,
                       case R of
                           {_Ok, F, _} when is_integer(F), F > Recorded ->
                               %% a failure the hook saw no case of: never a silent pass
                               Acc + F + error_case(Dir, {failed_cases_unrecorded, F - Recorded});
                           {_Ok, F, _} when is_integer(F) -> Acc + F;
                           {error, Why} -> Acc + error_case(Dir, Why)
                       end
               end, 0, maps:get(suites, Opts)),
    {ok, Failed}.

%% ct:run_test could not run a directory's suites: one failing test that says why.
error_case(Dir, R) ->
    Why = text(io_lib:format("Common Test could not run the suites in ~ts: ~0tP", [Dir, R, 30])),
    gen_server:cast(?F, {test_finished, #{module => ct, name => <<"ct:run_test">>,
                                          state => {gate_erl, failed, Why, Why}, time => 0,
                                          tags => #{file => <<>>, line => 0}}}),
    1.

%% ---- The hook ----
id(_) -> gate_probe_ct.

init(_Id, Opts) -> {ok, Opts#{suite => none, group => [], pending => none}}.

pre_init_per_suite(Suite, Config, St) ->
    St1 = close_suite(flush(St)),
    edge(start, Suite, St1),
    {Config, St1#{suite := Suite, group := [], t0 => now_us()}}.

post_init_per_suite(_Suite, _Config, Return, St) -> {Return, St}.

pre_end_per_suite(_Suite, Config, St) -> {Config, flush(St)}.

post_end_per_suite(_Suite, _Config, Return, St) -> {Return, close_suite(flush(St))}.

pre_init_per_group(_Suite, Group, Config, #{group := G} = St) ->
    {Config, (flush(St))#{group := [Group | G]}}.

post_end_per_group(_Suite, _Group, _Config, Return, #{group := G} = St) ->
    {Return, (flush(St))#{group := case G of [_ | R] -> R; [] -> [] end}}.

pre_init_per_testcase(_Suite, TC, Config, St) ->
    St1 = flush(St),
    Light = case maps:get(mode, St1) of
                test -> ?F:light(false);
                _ -> none
            end,
    {Config, St1#{tc => {TC, now_us(), Light}}}.

%% The case ended; it passed unless on_tc_fail or on_tc_skip says otherwise next (Common
%% Test calls those after end_per_testcase): held as pending until the hook's next call.
post_end_per_testcase(Suite, TC, _Config, Return, St) ->
    {T0, Light} = case maps:get(tc, St, none) of
                      {TC, T, L} -> {T, L};
                      _ -> {now_us(), none}
                  end,
    Delta = case Light of
                none -> none;
                _ -> {Light, ?F:light(false)}
            end,
    P = #{suite => Suite, name => case_name(TC, St), time => now_us() - T0,
          state => nil, delta => Delta},
    {Return, (flush(St))#{pending := P, tc => none}}.

on_tc_fail(Suite, What, Reason, St) ->
    config_or_case(Suite, What, failed, Reason, St).

on_tc_skip(Suite, What, {How, Reason}, St) ->
    config_or_case(Suite, What, {skipped, How}, Reason, St);
on_tc_skip(Suite, What, Reason, St) ->
    config_or_case(Suite, What, {skipped, tc_user_skip}, Reason, St).

terminate(St) ->
    St1 = close_suite(flush(St)),
    %% how many failures the hook recorded, for the runner to compare with Common Test's count
    case whereis(gate_probe_collector) of
        undefined -> ok;
        C -> C ! {gate_ct_failed, maps:get(failed, St1, 0)}
    end,
    ok.

%% A case's failure or skip: the pending case's when it is that case. A config function that
%% failed (init_per_suite: a failure, not a pass) is one failing test of its own; a case
%% auto-skipped without running is recorded as skipped; end_per_suite skipped (its
%% init_per_suite failed) closes the suite.
config_or_case(Suite, What, How, Reason, #{pending := P} = St) ->
    Fun = case What of
              {F, _} -> F;
              F -> F
          end,
    Name = case_name(What, St),
    case P of
        #{suite := Suite, name := Name} ->
            St#{pending := P#{state := state(How, Reason), line => stack_line(Suite, Reason)}};
        _ ->
            St1 = flush(St),
            St2 = case {How, is_config(Fun)} of
                      {failed, _} ->
                          emit(Suite, Name, stack_line(Suite, Reason), 0,
                               state(failed, Reason), none, St1);
                      {_, true} -> St1;
                      {_, false} -> emit(Suite, Name, 0, state(How, Reason), none, St1)
                  end,
            case Fun of
                end_per_suite -> close_suite(St2);
                _ -> St2
            end
    end.

is_config(F) ->
    lists:member(F, [init_per_suite, end_per_suite, init_per_group, end_per_group]).

state(failed, R) -> {gate_erl, failed, text(io_lib:format("~0tP", [R, 40])), reason(R)};
state({skipped, _}, R) -> {gate_erl, skipped, text(io_lib:format("~0tP", [R, 20])), <<>>}.

reason({failed, {_, Fun, R}}) when is_atom(Fun) -> reason(R);
reason({'EXIT', R}) -> reason(R);
reason({{Why, _Stack}}) -> reason(Why);
reason({Why, [{_, _, _, _} | _]}) -> text(io_lib:format("~0tP", [Why, 16]));
reason(R) -> text(io_lib:format("~0tP", [R, 16])).

flush(#{pending := none} = St) -> St;
flush(#{pending := #{suite := S, name := N, time := T, state := State, delta := D} = P} = St) ->
    emit(S, N, maps:get(line, P, 0), T, State, D, St#{pending := none}).

%% The line in the suite where a failure happened (the first frame of the suite in its
%% stacktrace), else 0: the case's own line is taken then.
stack_line(Suite, Reason) ->
    Frames = stack_frames(Reason, 4),
    case [L || {M, _, _, Info} <- Frames, M =:= Suite, {line, L} <- Info] of
        [L | _] when is_integer(L) -> L;
        _ -> 0
    end.

stack_frames(_, 0) -> [];
stack_frames([{_, _, _, I} | _] = S, _) when is_list(I) -> S;
stack_frames(T, N) when is_tuple(T) ->
    lists:append([stack_frames(E, N - 1) || E <- tuple_to_list(T)]);
stack_frames(_, _) -> [].

emit(Suite, Name, Time, State, Delta, St) -> emit(Suite, Name, 0, Time, State, Delta, St).

emit(Suite, Name, Line0, Time, State, Delta, St0) ->
    St = case State of
             {gate_erl, failed, _, _} -> St0#{failed => maps:get(failed, St0, 0) + 1};
             _ -> St0
         end,
    case Delta of
        {S0, S1} -> gen_server:cast(?F, {gate_test, Suite, Name, S0, S1});
        none -> ok
    end,
    gen_server:cast(?F, {test_finished, #{module => Suite, name => Name, state => State,
                                          time => Time,
                                          tags => #{file => gate_probe_erl:source_file(Suite, maps:get(root, St, <<>>)),
                                                    line => case Line0 of
                                                                0 -> case_line(Suite, Name);
                                                                _ -> Line0
                                                            end}}}),
    St.

close_suite(#{suite := none} = St) -> St;
close_suite(#{suite := Suite} = St) ->
    edge(finish, Suite, St),
    St#{suite := none, group := []}.

edge(Kind, Suite, #{mode := Mode}) when Mode =/= off ->
    gen_server:cast(?F, {gate_module, Kind, Suite, false, ?F:light(false)}),
    gen_server:cast(?F, {gate_structs, Kind, Suite, gate_probe_events:edge_structs()});
edge(_, _, _) -> ok.

%% "case", "group.case" inside groups (outermost first), or the config function's name.
case_name(What, #{group := G}) ->
    {F, Groups} = case What of
                      {Fun, Gr} when is_atom(Gr) ->
                          {Fun, case G of
                                    [Gr | _] -> lists:reverse(G);
                                    _ -> [Gr]
                                end};
                      {Fun, _} -> {Fun, lists:reverse(G)};
                      Fun -> {Fun, lists:reverse(G)}
                  end,
    Fa = case F of
             {init_per_group, N, _} -> list_to_atom("init_per_group " ++ atom_to_list(N));
             {end_per_group, N, _} -> list_to_atom("end_per_group " ++ atom_to_list(N));
             _ when is_atom(F) -> F;
             _ -> list_to_atom(lists:flatten(io_lib:format("~0tp", [F])))
         end,
    text(lists:join(".", [atom_to_list(X) || X <- Groups ++ [Fa], is_atom(X)])).

%% The case's line: where its function is defined in the suite (its debug info), else 0.
case_line(Suite, Name) ->
    Fun = lists:last(binary:split(Name, <<".">>, [global])),
    try
        {ok, {_, [{abstract_code, {raw_abstract_v1, Forms}}]}} =
            beam_lib:chunks(code:which(Suite), [abstract_code]),
        F = binary_to_existing_atom(Fun),
        hd([L || {function, Anno, N, 1, _} <- Forms, N =:= F, L <- [erl_anno:line(Anno)]])
    catch _:_ -> 0
    end.

now_us() -> erlang:monotonic_time(microsecond).

text(IoData) ->
    case unicode:characters_to_binary(IoData) of
        B when is_binary(B) -> gate_probe:truncate(B);
        _ -> gate_probe:truncate(iolist_to_binary(io_lib:format("~tp", [IoData])))
    end.
