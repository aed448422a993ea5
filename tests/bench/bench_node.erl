%% tests/bench/bench_node.erl: the node `make bench` snapshots: N idle processes (10 % holding
%% a 100-byte sub-binary of a 1 kB binary) and T ETS tables of 100 rows, plus the floor a
%% snapshot is measured against: one compiled pass of erlang:garbage_collect/1 +
%% process_info(P, memory) over every process.
-module(bench_node).
-export([start/2, floor/0, floor_us/0, marked_us/0]).

start(N, Tables) ->
    Parent = self(),
    Holder = spawn(fun() -> hold(Parent, N, Tables) end),
    receive {Holder, ready} -> ok end,
    register(bench_holder, Holder),
    ok.

hold(Parent, N, Tables) ->
    _ = [spawn(fun() -> idle(I) end) || I <- lists:seq(1, N)],
    _ = [begin
             T = ets:new(bench_table, [set, public]),
             ets:insert(T, [{K, K * 2} || K <- lists:seq(1, 100)]),
             T
         end || _ <- lists:seq(1, Tables)],
    Parent ! {self(), ready},
    receive stop -> ok end.

idle(I) when I rem 10 =:= 0 ->
    Big = binary:copy(<<I:8>>, 1000),
    Part = binary:part(Big, 0, 100),
    receive stop -> Part end;
idle(_) ->
    receive stop -> ok end.

floor() ->
    io:format("~p~n", [floor_us()]).

floor_us() ->
    T0 = erlang:monotonic_time(microsecond),
    _ = [begin erlang:garbage_collect(P), erlang:process_info(P, memory) end
         || P <- erlang:processes()],
    erlang:monotonic_time(microsecond) - T0.

%% The probe's marked deep snapshots as gate run takes them (GC, deep, before then after),
%% timed inside the node: "BeforeUs AfterUs". Needs gate_probe on the code path.
marked_us() ->
    Opts = #{gc => true, deep => true},
    T0 = erlang:monotonic_time(microsecond),
    _ = gate_probe:snapshot(Opts#{mark => before}),
    T1 = erlang:monotonic_time(microsecond),
    _ = gate_probe:snapshot(Opts#{mark => 'after'}),
    T2 = erlang:monotonic_time(microsecond),
    gate_probe:cleanup(),
    lists:flatten(io_lib:format("~b ~b", [T1 - T0, T2 - T1])).
