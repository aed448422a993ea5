%% gate/probe/gate_probe.erl: the probe gate loads into the node under test.
%%
%% Loaded with code:load_binary/3 (nothing is written to the node's disk) and purged again at
%% the end. Every exported function is called by gate over RPC and returns plain terms
%% (maps with atom keys, binaries, integers) that gate/probe.c decodes with bounds checks.
%% Work that touches every process is done here, inside the node: one RPC per process from
%% the C side would cost ~65 us each.
-module(gate_probe).

-export([hello/0, prepare/0, snapshot/1, run_tests/1, gc_all/0]).

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

%% One snapshot. Opts: #{gc => boolean()}.
snapshot(Opts) ->
    GcUs = case maps:get(gc, Opts, true) of
               true -> gc_all();
               false -> 0
           end,
    #{memory => maps:from_list(erlang:memory()),
      gc_us => GcUs,
      process_count => erlang:system_info(process_count),
      process_limit => erlang:system_info(process_limit),
      atom_count => erlang:system_info(atom_count),
      atom_limit => erlang:system_info(atom_limit),
      ets_count => erlang:system_info(ets_count),
      port_count => erlang:system_info(port_count),
      taken_at_ms => os:system_time(millisecond),
      otp_release => list_to_binary(erlang:system_info(otp_release))}.

%% Forces a full sweep of every process, lets the freed memory settle, and returns the time
%% it took in microseconds. Asynchronous requests so that the schedulers collect in
%% parallel; a process that exits meanwhile answers false, which is fine.
%% Freed memory does not show in erlang:memory() at once: blocks freed on another scheduler
%% are handed back to their owner later (delayed deallocation), and exiting processes release
%% their heaps asynchronously. Measured here: binary reads 400 kB right after the sweep and
%% 20 kB 50 ms later. So: sweep again after short pauses until total stays within 0.5 %.
gc_all() ->
    T0 = erlang:monotonic_time(microsecond),
    gc_pass(),
    settle(10, erlang:memory(total)),
    erlang:monotonic_time(microsecond) - T0.

settle(0, _Prev) -> ok;
settle(N, Prev) ->
    timer:sleep(20),
    gc_pass(),
    Now = erlang:memory(total),
    case abs(Now - Prev) =< Prev div 200 of
        true -> ok;
        false -> settle(N - 1, Now)
    end.

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
run_tests(Args0) when is_list(Args0) ->
    Args = [unicode:characters_to_binary(A) || A <- Args0],
    catch unregister(gate_probe_collector),
    true = register(gate_probe_collector, self()),
    Formatters = case lists:member(<<"--formatter">>, Args) of
                     true -> [<<"--formatter">>, <<"Gate.Formatter">>];
                     false -> [<<"--formatter">>, <<"Gate.Formatter">>,
                               <<"--formatter">>, <<"ExUnit.CLIFormatter">>]
                 end,
    T0 = erlang:monotonic_time(microsecond),
    Outcome = try
                  'Elixir.Mix.Task':rerun(<<"test">>, Args ++ Formatters),
                  ok
              catch
                  Class:Reason:Stack ->
                      {error, format_error(Class, Reason, Stack)}
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
            {ok, Suite#{wall_us => Wall,
                        error => case Outcome of ok -> <<>>; {error, M} -> M end}}
    end.

flush_collector() ->
    receive {gate_suite, _} -> flush_collector() after 0 -> ok end.

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
