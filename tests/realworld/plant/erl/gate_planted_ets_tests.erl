%% tests/realworld/plant/erl/gate_planted_ets_tests.erl: a leak `make realworld` drops into a
%% real rebar3 project's test folder (one kind per run), the EUnit twin of
%% planted_ets_test.exs: a session table that a process started here owns, left running, and
%% that the tests fill and never empty. 20 000 rows, about 4 MB.
-module(gate_planted_ets_tests).
-include_lib("eunit/include/eunit.hrl").

sessions_test_() ->
    {setup, fun owner/0, fun(_) -> ok end,
     [{"opens sessions " ++ integer_to_list(T), fun() -> open(T) end} || T <- lists:seq(1, 4)]}.

owner() ->
    Parent = self(),
    Pid = spawn(fun() ->
                        ets:new(gate_planted_sessions, [named_table, public, set]),
                        Parent ! table_ready,
                        receive stop -> ok end
                end),
    receive table_ready -> Pid after 5000 -> error({no_table_owner, Pid}) end.

open(T) ->
    [ets:insert(gate_planted_sessions,
                {{T, I}, integer_to_binary(I * 7919 + T, 36), binary:copy(<<"s">>, 120)})
     || I <- lists:seq(1, 5000)],
    ?assert(ets:info(gate_planted_sessions, size) >= 5000).
