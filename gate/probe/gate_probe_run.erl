%% gate/probe/gate_probe_run.erl: runs the project's suite with mix test inside the node.
%%
%% ExUnit's one-time costs paid before the before-snapshot (prepare/0), the `test` alias's
%% preparation (run_prep/2), the run itself with mix test's exit status and Mix's own words
%% for it, and the reset between two runs of --repeat. Loaded only
%% where tests run. Part of the probe: see gate_probe.erl.
-module(gate_probe_run).
-gate_load(tests).

-export([preload/0, prepare/0, run_tests/1, run_tests/2, run_prep/2, repeat_mark/0, repeat_reset/0]).

-import(gate_probe, [gl_adopt/0, truncate/1]).
-import(gate_probe_events, [hook_install/0, hook_remove/0]).

%% Pays the one-time costs of running a suite before the before-snapshot, so that they are
%% not counted as growth: ExUnit's application (its server, event manager, on-exit handler,
%% capture server and tables) and the modules mix test and our formatter use.
prepare() ->
    %% what the bootstrap loads is loaded before the before-snapshot, never after it
    boot_preload_wait(),
    {ok, _} = application:ensure_all_started(ex_unit),
    _ = code:ensure_modules_loaded(mix_test_modules()),
    ok.

%% Returns once the bootstrap's loading of what mix test loads (gate_boot_preload, see
%% preload/0) is over; at once when there is none.
boot_preload_wait() ->
    case whereis(gate_boot_preload) of
        P when is_pid(P) ->
            Ref = erlang:monitor(process, P),
            receive {'DOWN', Ref, process, P, _} -> ok end;
        _ -> ok
    end.

%% Loads the modules of prepare/0 in a process of its own and returns at once: a node gate
%% started is asked while Mix still compiles and starts the project, so that the loading
%% (about 20 ms, which bare mix test pays too) runs meanwhile. code:ensure_modules_loaded/1
%% reads and prepares them in that process and only commits them through code_server, which
%% Mix's own loading keeps busy; a module that is not there (an older Elixir's) is skipped.
%% prepare/0 loads what is not loaded yet by then. OTP's instrument module, which the
%% before-snapshot reads the allocations with, is loaded then too (2-7 ms of that snapshot
%% otherwise). When the bootstrap is still loading what mix test loads (gate_boot_preload,
%% gate/probe/boot_modules.h: most of these modules among them), this waits for it first:
%% read and prepared in both processes at once, a module would cost twice.
preload() ->
    _ = spawn(fun() ->
                      boot_preload_wait(),
                      _ = code:ensure_modules_loaded(mix_test_modules()),
                      gate_probe_snapshot:instrument_ready()
              end),
    ok.

mix_test_modules() ->
    ['Elixir.Mix.Tasks.Test', 'Elixir.Mix.Compilers.Test', 'Elixir.ExUnit',
     'Elixir.ExUnit.Runner', 'Elixir.ExUnit.CLIFormatter', 'Elixir.ExUnit.Formatter',
     'Elixir.ExUnit.EventManager', 'Elixir.ExUnit.Filters', 'Elixir.ExUnit.Case',
     'Elixir.ExUnit.Callbacks', 'Elixir.ExUnit.Assertions', 'Elixir.ExUnit.DocTest',
     'Elixir.ExUnit.Diff', 'Elixir.ExUnit.RunnerStats', 'Elixir.ExUnit.OnExitHandler',
     'Elixir.Kernel.ParallelCompiler', 'Elixir.IO.ANSI', 'Elixir.Inspect.Algebra',
     'Elixir.Code.Formatter', 'Elixir.Code.Normalizer', 'Elixir.Module.ParallelChecker',
     'Elixir.Kernel.ErrorHandler', 'elixir_erl', 'elixir_erl_pass', 'elixir_module',
     'elixir_expand', 'elixir_clauses', 'elixir_env', 'compile', 'beam_asm', 'v3_core',
     'sys_core_fold', 'beam_ssa_opt', 'beam_validator', 'erl_lint', timer,
     %% what ExUnit's start, the before-snapshot (sys: the servers' states) and a suite
     %% loaded on first use in a node gate started, 1-2 ms each (listed by comparing the
     %% loaded modules around each step of a 1 000-test run)
     'Elixir.ExUnit.Server', 'Elixir.ExUnit.CaptureServer', sys, 'Elixir.ExUnit.TestModule',
     'Elixir.ExUnit.FailuresManifest', 'Elixir.DynamicSupervisor',
     'Elixir.System.SignalHandler', 'Elixir.Mix.Shell', 'Elixir.Mix.Shell.IO',
     'Elixir.Module.Types.Of', elixir_import, elixir_map].

%% Runs the project's suite with mix test in this node and returns what our ExUnit formatter
%% recorded, and what `mix test` would have exited with. mix test signals most of
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
    %% Under bare mix test the suite runs in the CLI's process, and a process linked to it that
    %% dies (ExUnit's runner task when an ExUnit.after_suite callback raises, a server the
    %% test helper start_link'ed) takes the VM down with status 1. Here the exit signal would
    %% kill this process and its reply with it, and gate would wait for the suite until its
    %% timeout: exits are trapped for the run instead, and the first abnormal one is the
    %% task's failure.
    Trap = process_flag(trap_exit, true),
    {Status0a, Raised0} = try
                              run_test_task(Args ++ Extra),
                              {0, <<>>}
                          catch
                              %% an exit caught here when a linked process died is the
                              %% Task.await of ExUnit's runner: the death says more
                              exit:Reason:Stack when Reason =/= normal, Reason =/= shutdown ->
                                  case task_status(exit, Reason, Stack) of
                                      {0, _} = Ok -> Ok;
                                      {N, Text} -> {N, {exit, Text}}
                                  end;
                              Class:Reason:Stack -> task_status(Class, Reason, Stack)
                          after
                              hook_remove()
                          end,
    process_flag(trap_exit, Trap),
    {Status0, Raised} = linked_exits(Status0a, Raised0),
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
    Failed = maps:get(failed, Suite),
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

%% Before the before-snapshot: what `mix test` does ahead of the suite and gate
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
        %% System.argv() as `mix test ARGS` leaves it (Mix's CLI does not touch it), where
        %% the node's `mix run -e` boot left it empty: a test_helper may read it
        maps:get(start, Opts, false) andalso 'Elixir.System':argv([<<"test">> | Args]),
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

%% The exit signals trapped during the run ({'EXIT', Pid, Reason} in the mailbox): the first
%% abnormal one fails a run that had not failed already (its task's own failure says more).
%% A run that ended by an exit ({exit, Text}) takes the death's text, if one came.
linked_exits(Status, Raised) ->
    receive
        {'EXIT', _Pid, R} when R =:= normal; R =:= shutdown; element(1, R) =:= shutdown ->
            linked_exits(Status, Raised);
        {'EXIT', Pid, R} when Status =:= 0; is_tuple(Raised) ->
            Text = case R of
                       %% an Elixir process that raised
                       {#{'__exception__' := true} = E, St} when is_list(St) ->
                           format_error(error, E, St);
                       _ -> format_error(exit, R, [])
                   end,
            linked_exits(max(Status, 1),
                         iolist_to_binary(["a process linked to the test run (",
                                           pid_to_list(Pid), ") exited: ", Text]));
        {'EXIT', _Pid, _} ->
            linked_exits(Status, Raised)
    after 0 ->
            case Raised of
                {exit, Text} -> {Status, Text};
                _ -> {Status, Raised}
            end
    end.

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
    #{tests => [], tests_packed => [], failed => 0,
      attribution => application:get_env(gate_probe, attribution, module),
      attribution_sync => false, module_events => [], module_events_dropped => 0,
      run_us => -1, load_us => -1, seed => 0, dropped => 0};
merge_suites([S]) -> S;
merge_suites([S | Rest]) ->
    lists:foldl(fun(B, A) ->
                        (merge_tests(A, B))#{
                           failed := maps:get(failed, A) + maps:get(failed, B),
                           module_events := maps:get(module_events, A) ++
                               maps:get(module_events, B),
                           module_events_dropped := maps:get(module_events_dropped, A) +
                               maps:get(module_events_dropped, B),
                           run_us := add_us(maps:get(run_us, A), maps:get(run_us, B)),
                           load_us := add_us(maps:get(load_us, A), maps:get(load_us, B)),
                           dropped := maps:get(dropped, A) + maps:get(dropped, B)}
                end, S, Rest).

%% The records of A then B's: still packed when both are (the formatter unpacks a suite's
%% only when a setup_all failed in it), else unpacked, in that order.
merge_tests(#{tests := [], tests_packed := PA} = A, #{tests := [], tests_packed := PB}) ->
    A#{tests_packed := PA ++ PB};
merge_tests(A, B) ->
    A#{tests := unpacked(A) ++ unpacked(B), tests_packed := []}.

unpacked(#{tests := Tests, tests_packed := Packed}) ->
    Tests ++ lists:append([binary_to_term(C) || C <- Packed]).

add_us(A, B) when A >= 0, B >= 0 -> A + B;
add_us(A, B) -> max(A, B).

format_error(Class, Reason, Stack) ->
    Text = try 'Elixir.Exception':format(Class, Reason, Stack)
           catch _:_ -> io_lib:format("~p:~p", [Class, Reason])
           end,
    truncate(unicode:characters_to_binary(Text)).

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
%% code, which the purge of the probe's modules does not touch) that waits for the tee to go down.
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
    Guard = spawn(erlang, apply, [Fun, [Tee, Real]]),
    %% not the suite's: stopping an attached suite kills the processes of its group leader,
    %% the tee among them, and the guard must outlive the tee to put the name back
    case whereis(user) of
        U when is_pid(U) -> group_leader(U, Guard);
        _ -> ok
    end,
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
            %% standard_error: everything (the compiler's warnings too); the group
            %% leader: the watched processes only (not the tests' and formatters' output)
            Keep = Name =/= none orelse lists:member(From, Watched),
            Keep orelse bypass(From, Real),
            Real ! Msg,
            Buf1 = case Keep of
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

%% A process whose text is not kept (a formatter printing a dot a test, a test's own output)
%% gets the real group leader back at its first request, so that the rest of its output does
%% not pass through this one: a hop and a wake-up of this process for every line, 10 000 on
%% 10 000 one-line tests. Done while it waits for this request's reply (an io request is a
%% call), so it is not setting a group leader of its own meanwhile (capture_io); only when this
%% process is still its group leader (not one that sent here by pid), and only when the real
%% one is the node's user: attached, the suite's group leader is the watchdog's, and an
%% interrupted run's processes are found by it being theirs (gate_probe:stop_suite/1).
bypass(From, Real) when is_pid(From), node(From) =:= node() ->
    Real =:= whereis(user) andalso bypass_now(From, Real);
bypass(_, _) -> ok.

bypass_now(From, Real) ->
    case erlang:process_info(From, group_leader) of
        {group_leader, Me} when Me =:= self() -> group_leader(Real, From);
        _ -> ok
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
        %% none on a fresh node: asking each loaded module its source (1 600 of them after
        %% the boot) would cost 3-6 ms of every run for nothing
        Files =/= [] andalso
            begin
                Mods = [M || {M, _} <- code:all_loaded(), lists:member(source_of(M), Files)],
                [begin code:delete(M), code:purge(M) end || M <- Mods],
                'Elixir.Code':unrequire_files(Files)
            end
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

%% ---- Repeated runs (gate run --repeat) ----
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
    case mix_node() of
        true -> application:set_env(gate_probe, repeat_required, 'Elixir.Code':required_files());
        false -> ok
    end,
    ok.

%% A node without Elixir (a rebar3 project's, gate_probe_erl) has no test files to forget: its
%% runners load compiled modules, and Common Test puts the working directory back itself.
repeat_reset() ->
    case mix_node() of
        true -> repeat_reset_mix();
        false -> 0
    end.

mix_node() -> code:is_loaded('Elixir.Mix.Project') =/= false.

repeat_reset_mix() ->
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
