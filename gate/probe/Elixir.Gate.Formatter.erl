%% gate/probe/Elixir.Gate.Formatter.erl: the ExUnit formatter gate adds to mix test.
%%
%% Named 'Elixir.Gate.Formatter' so that `mix test --formatter Gate.Formatter` finds it.
%% It records every finished test (module, name, file, line, time, state, failure text) and
%% at suite_finished hands the records to the process registered as gate_probe_collector
%% (gate_probe:run_tests/1). ExUnit's own CLI formatter runs beside it, so the console output
%% stays as usual.
-module('Elixir.Gate.Formatter').
-behaviour(gen_server).

-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

-define(MAX_MESSAGE, 16384).
-define(MAX_TESTS, 200000).

init(Opts) ->
    {ok, #{tests => [], count => 0, dropped => 0,
           seed => proplists:get_value(seed, Opts, 0),
           module_errors => #{}}}.

handle_call(_Msg, _From, S) -> {reply, ok, S}.
handle_info(_Msg, S) -> {noreply, S}.

handle_cast({test_finished, Test}, #{count := N} = S) when N >= ?MAX_TESTS ->
    _ = Test,
    {noreply, S#{dropped := maps:get(dropped, S) + 1}};
handle_cast({test_finished, Test}, #{tests := Ts, count := N} = S) ->
    {noreply, S#{tests := [record(Test) | Ts], count := N + 1}};
handle_cast({module_finished, #{state := {failed, Failures}, name := Mod} = TM}, S) ->
    %% setup_all failed: its tests come as {invalid, Module}; keep the reason for them
    Msg = try truncate(iolist_to_binary('Elixir.ExUnit.Formatter':format_test_all_failure(
                                          TM, Failures, 1, 100, fun plain/2)))
          catch _:_ -> <<"setup_all failed">>
          end,
    Errors = maps:get(module_errors, S),
    {noreply, S#{module_errors := Errors#{Mod => Msg}}};
handle_cast({suite_finished, Times}, #{tests := Ts} = S) ->
    Errors = maps:get(module_errors, S),
    Tests = [attach_module_error(T, Errors) || T <- lists:reverse(Ts)],
    Suite = #{tests => Tests,
              run_us => time_of(run, Times),
              load_us => time_of(load, Times),
              seed => maps:get(seed, S),
              dropped => maps:get(dropped, S)},
    case whereis(gate_probe_collector) of
        undefined -> ok;
        Pid -> Pid ! {gate_suite, Suite}
    end,
    {noreply, S#{tests := [], count := 0}};
handle_cast(_Event, S) ->
    {noreply, S}.

time_of(Key, Times) when is_map(Times) ->
    case maps:get(Key, Times, nil) of
        I when is_integer(I) -> I;
        _ -> -1
    end;
time_of(_, _) -> -1.

attach_module_error({Mod, Name, File, Line, Time, invalid, <<>>}, Errors) ->
    {Mod, Name, File, Line, Time, invalid,
     maps:get(binary_to_atom(Mod), Errors, <<"setup_all failed">>)};
attach_module_error(T, _) -> T.

%% {Module, Name, File, Line, TimeUs, State, Message}, all binaries but Line, TimeUs, State.
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
    {atom_to_binary(Mod), atom_to_binary(Name), File, Line, Time, St, Msg}.

state(nil, _) -> {passed, <<>>};
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
