%% tests/bench/bench_node.erl: the node `make bench` snapshots: N idle processes (10 % holding
%% a 100-byte sub-binary of a 1 kB binary) and T ETS tables of 100 rows, plus the floor a
%% snapshot is measured against: one compiled pass of erlang:garbage_collect/1 +
%% process_info(P, memory) over every process.
-module(bench_node).
-export([start/2, floor/0, floor_us/0, marked_us/0, recon_us/0]).

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
    %% untimed: the node without gate_probe again, as gate snapshot --attach finds it (else its
    %% load makes this copy old code, and its removal waits for the purge of it)
    _ = [code:F(M) || {M, _} <- code:all_loaded(), lists:prefix("gate_probe", atom_to_list(M)),
                      F <- [purge, delete, purge]],
    lists:flatten(io_lib:format("~b ~b", [T1 - T0, T2 - T1])).

%% recon-style in-node profiling as teams paste it today, timed: the top processes by memory
%% (recon:proc_count(memory, 10): process_info of every process with its name and calls),
%% the binary-leak suspects (recon:bin_leak(10): refc binaries of every process, a GC of each,
%% its binaries again), and the ETS breakdown (name, size, memory of every table). Sequential
%% as recon is. Microseconds.
recon_us() ->
    T0 = erlang:monotonic_time(microsecond),
    Top = fun(L) -> lists:sublist(lists:reverse(lists:keysort(1, L)), 10) end,
    _ = Top([{M, P, I} || P <- erlang:processes(),
                         [{memory, M} | _] = I0 <- [erlang:process_info(P, [memory,
                             registered_name, current_function, initial_call])],
                         I <- [I0]]),
    Bins = fun(P) -> case erlang:process_info(P, binary) of
                         {binary, B} -> length(B);
                         undefined -> 0
                     end
           end,
    _ = Top([{B0 - Bins(P), P, B0} || P <- erlang:processes(),
                                      B0 <- [Bins(P)], erlang:garbage_collect(P)]),
    _ = Top([{ets:info(T, memory), ets:info(T, name), ets:info(T, size), T} || T <- ets:all()]),
    erlang:monotonic_time(microsecond) - T0.
