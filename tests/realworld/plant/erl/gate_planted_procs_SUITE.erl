%% tests/realworld/plant/erl/gate_planted_procs_SUITE.erl: a leak `make realworld` drops into
%% a real rebar3 project's test folder (one kind per run), the Common Test twin of
%% planted_procs_test.exs: workers spawned by the cases that wait forever and are never
%% stopped. 3 000 processes.
-module(gate_planted_procs_SUITE).
-export([all/0, starts_workers_1/1, starts_workers_2/1, starts_workers_3/1]).

all() -> [starts_workers_1, starts_workers_2, starts_workers_3].

starts_workers_1(_Config) -> start(1000).
starts_workers_2(_Config) -> start(1000).
starts_workers_3(_Config) -> start(1000).

start(N) ->
    Pids = [spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, N)],
    N = length(Pids),
    ok.
