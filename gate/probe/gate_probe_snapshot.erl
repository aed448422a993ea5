%% gate/probe/gate_probe_snapshot.erl: one snapshot of the node, taken inside it.
%%
%% erlang:memory() and the counts; deep, one pass over every process (a GC each, recon's
%% bin_leak), the top N of each ranking, the processes born since the before-snapshot, the
%% ETS tables and the allocators. The keeper process holds what existed at the
%% before-snapshot; gate_probe_grew compares the after-snapshot with it. Part of the probe:
%% see gate_probe.erl.
-module(gate_probe_snapshot).
-gate_load(always).

-export([snapshot/1, keeper_stop/0, gc_all/0, gc_light/0, instrument_ready/0]).
%% for gate_probe_grew and gate_probe_events
-export([top_add/4, top_list/1, initial_call/1, ets_id/1, pid_text/1, id_text/1,
         name_text/1, mfa_text/1]).

%% persistent_term keys remembered at most for what grew
-define(MAX_PTERM_KEYS, 200000).

%% One snapshot. Opts (all optional):
%%   gc    => boolean(): force GC of every process first (default true)
%%   deep  => boolean(): also processes, ETS tables and allocators (default false)
%%   top   => integer(): how many processes per ranking leave the node (default 20)
%%   ets_cap => integer(): most ETS tables shipped, largest first (default 10000)
%%   mark  => none | before | after: before remembers which processes and tables exist now
%%            (in a keeper process); after reports those born since (default none)
%%   bin_leak => boolean(): with gc, also each process's refc binaries before its GC
%%            (recon's bin_leak: what the GC freed), one more call per process, about 1.5x
%%            the pass (default true); false ships undefined for the
%%            before-GC figures (gate decodes -1: not measured)
%% Everything is collected in one pass over the processes; only the top N of each ranking
%% and the born groups leave the node, so a node with 1M processes ships a few kB.
%%   settle_ms => integer(): wait at most this long for the input buffers ports keep
%%            until their next read (see "Settling" below); 0: no wait (default)
%%   keep_peak => boolean(): a deep after-snapshot between --repeat's runs leaves the peak
%%            tracker (gate_probe_alloc) running to the last one (default false)
snapshot(Opts) ->
    MaxMs = maps:get(settle_ms, Opts, 0),
    Floor = maps:get(settle_floor, Opts, 1000000),
    Deadline = erlang:monotonic_time(millisecond) + MaxMs,
    %% the calibration's binary (512 kB) is garbage of this process by the snapshot's GC
    MaxMs > 0 andalso precalibrate(),
    settled_snapshot(Opts, MaxMs, Floor, Deadline, 0).

%% Connections made at the application's start get their buffers asynchronously (a pool
%% connects after start returns): buffers that appeared while the snapshot was taken may be in
%% its figures. The sockets' buffers are set aside at the snapshot's own moment (account/1);
%% what no socket explains is checked again after it, and the snapshot taken again, settled,
%% while the bound lasts; the reply counts the retakes.
settled_snapshot(Opts, MaxMs, Floor, Deadline, Retakes) ->
    settled_snapshot(Opts, MaxMs, Floor, Deadline, Retakes, #{}).

%% Waited: what an earlier try's wait saw, kept when a retake had no time left to wait
settled_snapshot(Opts, MaxMs, Floor, Deadline, Retakes, Waited) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    Eligible = eligible_ports(maps:get(mark, Opts, none)),
    Settled = case settle_ports(case Retakes of 0 -> MaxMs; _ -> Left end, Floor, Eligible) of
                  #{settle_binary_before := _} = W -> W;
                  Other -> maps:merge(Other, Waited)
              end,
    Snap0 = snapshot1(Opts, Settled, case MaxMs > 0 of true -> Eligible; false -> none end),
    Snap = case Retakes of
               0 -> Snap0;
               _ -> Snap0#{settle_retakes => Retakes}
           end,
    case MaxMs > 0 andalso Deadline - erlang:monotonic_time(millisecond) > 0 andalso
        over_floor(unexplained(account(Eligible)), Floor) of
        true -> settled_snapshot(Opts, MaxMs, Floor, Deadline, Retakes + 1, Settled);
        false -> Snap
    end.

over_floor(B, Floor) -> is_integer(B) andalso B > Floor.

%% Which sockets' input buffers a snapshot may set aside: at a before-snapshot every open
%% one (the application's own connections, whose buffers go at their next read); at an
%% after-snapshot only those that were open at the before-snapshot (the keeper's ports), so
%% a test that leaves a new socket holding a buffer still shows as growth.
%% The after-snapshot sets aside at most what the before-snapshot did: the judged growth is
%% then never less than the measured one (a socket born during the run whose buffer has the
%% size of an old one's cannot be told from it; the cap keeps it from hiding growth).
eligible_ports('after') ->
    case {keeper_part(ports), keeper_part(set_aside)} of
        {Ports, Cap} when is_map(Ports), is_integer(Cap) -> {Ports, Cap};
        _ -> {#{}, 0}
    end;
eligible_ports(_) -> all.

keeper_part(Key) ->
    case whereis(gate_probe_keeper) of
        undefined -> none;
        Pid ->
            Ref = make_ref(),
            Pid ! {get, Key, self(), Ref},
            receive {Ref, V} -> V after 10000 -> none end
    end.

snapshot1(Opts, Settled, Eligible) ->
    T0 = erlang:monotonic_time(microsecond),
    GC = maps:get(gc, Opts, true),
    Deep = maps:get(deep, Opts, false),
    Mark = maps:get(mark, Opts, none),
    Before = case Mark of
                 'after' -> keeper_get();
                 _ -> none
             end,
    Keeper = whereis(gate_probe_keeper),
    %% skip: gate's own helpers on this node (cluster mode), not to be measured
    Skip = lists:usort([P || P <- [self(), Keeper, whereis(gate_probe_watchdog),
                                   gate_probe_code:watcher(), gate_probe_spawns:watcher()
                                   | maps:get(skip, Opts, [])],
                             is_pid(P),
                             node(P) =:= node()]),
    %% a deep before-snapshot's servers' states are summarised while the rest is taken (the
    %% servers answer on their own schedulers, 3-6 ms on a small node, while this process
    %% scans, collects and waits for the memory to settle)
    States = case Mark =:= before andalso Deep of
                 true -> states_start(Skip);
                 false -> none
             end,
    Scan0 = case Deep of
                true -> deep_scan(scan_gc(GC, maps:get(bin_leak, Opts, true)),
                                  maps:get(top, Opts, 20), Skip, Before,
                                  maps:get(ets_cap, Opts, 10000), Mark =:= before);
                false ->
                    GC andalso gc_pass(),
                    #{}
            end,
    %% the per-process figures of a before-snapshot stay in the node, with the keeper
    {Figs, Scan} = case maps:take(keeper_figs, Scan0) of
                       error -> {#{}, Scan0};
                       {F, S} -> {F, S}
                   end,
    %% each server summarised its state in its own heap: that garbage is collected before
    %% the memory is read, and the summaries are in, so that nothing moves it while it settles
    %% (read after the settle, the walks still under way cost it two or three more pauses)
    StatesDone = states_join(States),
    GC andalso gc_some(maps:keys(StatesDone)),
    GC andalso erlang:garbage_collect(),
    GC andalso settle_quietly(),
    GcUs = case GC of
               true -> erlang:monotonic_time(microsecond) - T0;
               false -> 0
           end,
    {Mem0, Overhead, Aside} = memory_set_aside(Keeper, Eligible),
    Mem = maps:merge(Mem0, maps:with([binary, system, total], Aside)),
    Allocs = case Deep of
                 true -> allocators();
                 false -> []
             end,
    Mark =:= before andalso keeper_start(Figs, maps:get(bytes, maps:get(reply, Aside, #{}), 0),
                                         StatesDone),
    PT = case Deep of
             true -> persistent_term_memory();
             false -> #{}
         end,
    maps:merge(maps:merge(maps:merge(PT, Settled), maps:get(reply, Aside, #{})),
               Scan#{memory => Mem,
          probe_overhead => Overhead,
          allocs => Allocs,
          gc_us => GcUs,
          process_count => erlang:system_info(process_count) - length(Skip) + 1,
          process_limit => erlang:system_info(process_limit),
          atom_count => erlang:system_info(atom_count),
          atom_limit => erlang:system_info(atom_limit),
          ets_count => erlang:system_info(ets_count),
          ets_limit => erlang:system_info(ets_limit),
          port_count => erlang:system_info(port_count),
          port_limit => erlang:system_info(port_limit),
          word_size => erlang:system_info(wordsize),
          schedulers => erlang:system_info(schedulers),
          node => atom_to_binary(node()),
          taken_at_ms => os:system_time(millisecond),
          otp_release => list_to_binary(erlang:system_info(otp_release))}).

%% ---- Settling: the input buffers ports keep until their next read ----
%% Measured in a Phoenix + Ecto node: starting the application left +39.4 MB in
%% erlang:memory(binary) that no process held after a full GC. instrument:allocations() tags
%% them {tcp_inet, drv_binary}: the inet driver's input buffer of each of the Repo's 10
%% Postgrex connections, one block of the socket's `buffer` option each (Postgrex raises it
%% to max(sndbuf, recbuf), 3.9 MB here). A passive socket keeps the buffer of its last read
%% until its next one; DBConnection's idle ping (every idle_interval, 1 s by default) is
%% that read, so they went 1-2 s after the connections were made (idle_interval 5 s: 10 s).
%% A before-snapshot taken right after the application started counted them, and their
%% release during the suite hid real growth in binary.
%%
%% Waiting for that read cost 1.7-2.4 s per run. So the buffers are accounted instead
%% (account/1): each open inet socket's `buffer` option is exact (inet:getopts, a port
%% control call that neither reads nor changes the socket), and each such buffer is one
%% binary_alloc block of that size plus a fixed header (measured: a read pending on a socket
%% with buffer B adds B + 48 bytes to erlang:memory(binary) on OTP 25, B + 64 on OTP 27,
%% x86-64, B from 100 kB to 8 MB; calibration/1 measures it in the node).
%% instrument:allocations() gives, per driver, how many drv_binary blocks lie in each
%% doubling size class; in a class with k blocks and n
%% eligible sockets whose buffer falls in it, min(k, n) blocks are those buffers: their size
%% is exact when those sockets share one size (a pool's do), else the smallest min(k, n)
%% are counted (a lower bound, said so). The snapshot judges binary, system and total less
%% these bytes and says how much it set aside. What no socket explains (another driver's
%% binaries, more blocks than sockets) is still waited for, polling every 20 ms, at most
%% MaxMs, until it is at most Floor bytes (counted at its size class's lower bound).
-define(INET_DRIVERS, ["tcp_inet", "udp_inet", "sctp_inet"]).

settle_ports(MaxMs, _Floor, _Eligible) when not is_integer(MaxMs); MaxMs =< 0 -> #{};
settle_ports(MaxMs, Floor, Eligible) ->
    T0 = erlang:monotonic_time(microsecond),
    Bin0 = erlang:memory(binary),
    case unexplained(account(Eligible)) of
        unknown -> #{};
        First when First =< Floor -> #{settle_us => 0, settle_port_buffers => First,
                                       settle_port_buffers_left => First};
        First ->
            Left = settle_loop(Floor, T0 + MaxMs * 1000, Eligible),
            %% exact: erlang:memory(binary) before and after the wait
            #{settle_us => erlang:monotonic_time(microsecond) - T0,
              settle_port_buffers => First, settle_port_buffers_left => Left,
              settle_floor => Floor,
              settle_binary_before => Bin0, settle_binary_after => erlang:memory(binary)}
    end.

settle_loop(Floor, Deadline, Eligible) ->
    pause(20),
    case unexplained(account(Eligible)) of
        B when is_integer(B), B =< Floor -> B;
        B ->
            case erlang:monotonic_time(microsecond) >= Deadline of
                true when B =:= unknown -> 0;
                true -> B;
                false -> settle_loop(Floor, Deadline, Eligible)
            end
    end.

unexplained(#{unexplained := U}) -> U;
unexplained(_) -> unknown.

%% erlang:memory() less the keeper and less the sockets' buffers (when Eligible is not none),
%% read between two accounts that agree, so that a buffer allocated or freed meanwhile is
%% not set aside from figures that did not count it (at most 3 tries; then the smaller).
memory_set_aside(Keeper, none) ->
    {Mem, Overhead} = memory_less_keeper(Keeper),
    {Mem, Overhead, #{}};
memory_set_aside(Keeper, Eligible) ->
    memory_set_aside(Keeper, Eligible, account(Eligible), 3).

memory_set_aside(Keeper, Eligible, A1, Tries) ->
    {Mem, Overhead} = memory_less_keeper(Keeper),
    A2 = account(Eligible),
    case {A1, A2} of
        {#{hists := H}, #{hists := H}} -> {Mem, Overhead, set_aside(Mem, A2)};
        {#{}, #{}} when Tries > 1 -> memory_set_aside(Keeper, Eligible, A2, Tries - 1);
        {#{bytes := B1}, #{bytes := B2}} when B1 < B2 -> {Mem, Overhead, set_aside(Mem, A1)};
        {_, #{}} -> {Mem, Overhead, set_aside(Mem, A2)};
        _ -> {Mem, Overhead, #{}}
    end.

set_aside(#{binary := Bin, system := Sys, total := Tot}, #{bytes := B0, sockets := N,
                                                         exact := Exact}) ->
    B = min(B0, Bin),
    Reply = #{set_aside_bytes => B, set_aside_sockets => N, set_aside_exact => Exact,
              set_aside_binary_raw => Bin},
    #{binary => Bin - B, system => max(0, Sys - B), total => max(0, Tot - B),
      reply => Reply};
set_aside(_, _) -> #{}.

%% The port drivers' binaries (blocks of type drv_binary, any origin but the emulator's
%% own) and which of them are eligible sockets' input buffers: #{bytes, sockets, exact}
%% set aside, unexplained (the rest, at its classes' lower bound), hists (what was seen);
%% unknown when the node's instrument module cannot say (tools not installed: nothing is
%% set aside, nothing waited for).
account({Ports, Cap}) ->
    case account(Ports) of
        #{bytes := B, unexplained := U} = A when B > Cap ->
            %% what the cap leaves out is unexplained: waited for like another driver's
            A#{bytes => Cap, exact => false, unexplained => U + B - Cap};
        A -> A
    end;
account(Eligible) ->
    try account1(Eligible)
    catch _:_ -> unknown
    end.

account1(Eligible) ->
    case instrument_ready() andalso instrument:allocations(#{allocator_types => [binary_alloc]}) of
        {ok, {Start, _Unscanned, ByOrigin}} ->
            Hists = lists:sort([{O, H} || {O, Types} <- maps:to_list(ByOrigin), O =/= system,
                                          {drv_binary, H} <- maps:to_list(Types)]),
            Inet = [O || {O, _} <- Hists, lists:member(atom_to_list(O), ?INET_DRIVERS)],
            Socks = case Inet of
                        [] -> [];
                        _ -> inet_buffers(Eligible)
                    end,
            {Shift, Hdr} = case Socks of
                               [] -> {0, 0};
                               _ -> calibration(Start)
                           end,
            lists:foldl(fun({O, H}, Acc) ->
                                Sizes = [S + Hdr || {O2, S} <- Socks, O2 =:= O],
                                account_origin(tuple_to_list(H), -Shift, Start, Sizes, Acc)
                        end,
                        #{bytes => 0, sockets => 0, exact => true, unexplained => 0,
                          hists => Hists}, Hists);
        _ -> unknown
    end.

account_origin([], _K, _Start, _Sizes, Acc) -> Acc;
account_origin([0 | T], K, Start, Sizes, Acc) -> account_origin(T, K + 1, Start, Sizes, Acc);
account_origin([Blocks | T], K, Start, Sizes, Acc) ->
    Last = T =:= [],
    InClass = lists:sort([S || S <- Sizes, size_class(S, Start, Last, K)]),
    N = min(Blocks, length(InClass)),
    Taken = lists:sublist(InClass, N),
    #{bytes := B, sockets := Ns, exact := E, unexplained := U} = Acc,
    Same = lists:usort(InClass) =:= lists:usort(Taken),
    account_origin(T, K + 1, Start, Sizes,
                   Acc#{bytes => B + lists:sum(Taken), sockets => Ns + N,
                        exact => E andalso (N =:= 0 orelse Same),
                        unexplained => U + (Blocks - N) * class_low(K, Start)}).

%% Histograms count blocks per doubling class: class K >= 1 holds sizes from Start bsl K to
%% Start bsl (K + 1) (measured: buffers of 100 048, 1 048 624 and 3 939 888 bytes in
%% classes 9, 13 and 14 with Start 128), class 0 everything smaller, the last class
%% everything larger.
size_class(S, Start, Last, K) ->
    C = case S div Start of
            Q when Q < 2 -> min(0, K);
            Q -> floor_log2(Q)
        end,
    C =:= K orelse (Last andalso C > K).

floor_log2(Q) -> floor_log2(Q, 0).
floor_log2(1, N) -> N;
floor_log2(Q, N) -> floor_log2(Q bsr 1, N + 1).

class_low(K, _Start) when K =< 0 -> 0;
class_low(K, Start) -> Start bsl K.

%% What differs between releases, measured once per snapshot call (kept in the calling RPC
%% process's dictionary, which goes with it): the histogram's class of a size (OTP 25 puts
%% Start bsl K in class K, OTP 27 in class K + 1: Shift) and a driver binary's header (OTP
%% 25: 48 bytes, OTP 27: 64; one word more than an emulator binary's, 40 and 56, measured
%% with gen_tcp and binary:copy). An emulator binary of Start bsl 12 bytes is made and
%% where it lands read; the smallest of three tries counts (other allocations meanwhile only
%% add). Unmeasurable (another release's layout): the sockets are not set aside
%% (calibration throws, account/1 answers unknown and the wait stands).
calibration(Start) ->
    case get(gate_probe_bin_calibration) of
        {Start, Shift, Hdr} -> {Shift, Hdr};
        _ ->
            Tries = [calibrate(Start) || _ <- [1, 2, 3]],
            case lists:usort([Sh || {Sh, _} <- Tries, is_integer(Sh)]) of
                [Shift] when Shift =:= 0; Shift =:= 1 ->
                    Hdr = lists:min([H || {_, H} <- Tries, is_integer(H)]) +
                        erlang:system_info(wordsize),
                    put(gate_probe_bin_calibration, {Start, Shift, Hdr}),
                    {Shift, Hdr};
                _ -> throw(uncalibrated)
            end
    end.

%% Calibrates ahead, where an inet driver holds binaries (account/1 calibrates on demand
%% otherwise). instrument:allocations/1 costs 1.5-2 ms: a node with no inet port open, whose
%% drivers then hold no buffer, is not asked.
precalibrate() ->
    try
        case inet_ports(all) =/= [] andalso instrument_ready() andalso
            instrument:allocations(#{allocator_types => [binary_alloc]}) of
            {ok, {Start, _, ByOrigin}} ->
                %% only where an inet driver has binaries: a node without costs one call
                lists:any(fun(D) -> is_map_key(list_to_atom(D), ByOrigin) end, ?INET_DRIVERS)
                    andalso calibration(Start);
            _ -> ok
        end
    catch _:_ -> ok
    end,
    true.

calibrate(Start) ->
    Size = Start bsl 12,
    H0 = system_hist(),
    M0 = erlang:memory(binary),
    B = binary:copy(<<1>>, Size),
    M1 = erlang:memory(binary),
    H1 = system_hist(),
    Grew = [I || {I, X, Y} <- lists:zip3(lists:seq(0, tuple_size(H0) - 1),
                                         tuple_to_list(H0), tuple_to_list(H1)), Y > X],
    Size = byte_size(B),
    Shift = case Grew of
                [I] -> I - 12;
                _ -> none
            end,
    case M1 - M0 - Size of
        Hdr when Hdr >= 0, Hdr < 1024 -> {Shift, Hdr};
        _ -> {Shift, none}
    end.

system_hist() ->
    {ok, {_, _, By}} = instrument:allocations(#{allocator_types => [binary_alloc]}),
    maps:get(binary, maps:get(system, By)).

%% The `buffer` option of each eligible inet socket: [{Driver, Bytes}].
inet_buffers(Eligible) ->
    [{list_to_atom(Name), B} || {P, Name} <- inet_ports(Eligible),
                                {ok, [{buffer, B}]} <- [catch inet:getopts(P, [buffer])]].

%% [{Port, DriverName}] of the open inet sockets among Eligible (all, or a map of ports).
inet_ports(Eligible) ->
    [{P, Name} || P <- erlang:ports(), Eligible =:= all orelse is_map_key(P, Eligible),
                  {name, Name} <- [erlang:port_info(P, name)], lists:member(Name, ?INET_DRIVERS)].

%% Whether OTP's instrument module can be called. Mix from Elixir 1.15 on prunes the code path
%% to the project's applications, so instrument (tools before OTP 26, runtime_tools from
%% OTP 26) is on disk but not in the path: it is loaded from the OTP installation itself, by
%% its absolute name, without adding anything to the path.
instrument_ready() ->
    case code:ensure_loaded(instrument) of
        {module, instrument} -> true;
        _ ->
            Beams = lists:sort(
                      fun(A, B) -> A >= B end,
                      [F || App <- ["runtime_tools-*", "tools-*"],
                            F <- filelib:wildcard(filename:join([code:root_dir(), "lib", App,
                                                                 "ebin", "instrument.beam"]))]),
            lists:any(fun(F) ->
                              code:load_abs(filename:rootname(F)) =:= {module, instrument}
                      end, Beams)
    end.


%% The bytes of persistent_term's values: they live in the literal area (literal_alloc) like
%% the constants of loaded modules, so the rules tell one from the other with this figure.
persistent_term_memory() ->
    try persistent_term:info() of
        #{memory := M} when is_integer(M), M >= 0 -> #{persistent_term_memory => M};
        _ -> #{}
    catch _:_ -> #{}
    end.

%% erlang:memory() without the heaps of the keeper process (it holds the before set) and the
%% loads process (gate_probe_code: the literals of the modules loaded since), so that gate
%% does not measure itself.
memory_less_keeper(Keeper) ->
    M = maps:from_list(erlang:memory()),
    K = lists:sum([B || P <- [Keeper, gate_probe_code:watcher(), gate_probe_spawns:watcher()],
                        is_pid(P),
                        {memory, B} <- [erlang:process_info(P, memory)]]),
    Less = fun(Key, Map) -> maps:update_with(Key, fun(V) -> max(0, V - K) end, Map) end,
    {lists:foldl(Less, M, [total, processes, processes_used]), K}.

%% The keeper remembers what existed at the before-snapshot, so that the after-snapshot can
%% tell what grew: per process its memory, mailbox and refc binary bytes (Figs, from the
%% deep scan: M, or {M, Q, B} when it has a mailbox or binaries; [] for a process the scan
%% did not see), per ETS table {Rows, Bytes}, persistent_term:info() and its keys, the open
%% ports, the loaded modules and the atom count.
%% SetAside: the sockets' input buffers the before-snapshot set aside, the most an
%% after-snapshot may set aside. States: the servers' summarised states (states_join/1),
%% #{} for a snapshot that is not deep.
keeper_start(Figs, SetAside, States) ->
    keeper_stop(),
    W = erlang:system_info(wordsize),
    PTerm = persistent_term:info(),
    %% keys only (values are not copied); a node with a huge number of terms is not diffed
    PTermKeys = case maps:get(count, PTerm, 0) =< ?MAX_PTERM_KEYS of
                    true -> maps:from_keys([K || {K, _} <- persistent_term:get()], []);
                    false -> none
                end,
    %% with the scan's figures, only the processes born since the scan are added
    Pids = case map_size(Figs) of
               0 -> maps:from_keys(erlang:processes(), []);
               _ -> lists:foldl(fun(P, M) when is_map_key(P, M) -> M;
                                   (P, M) -> M#{P => []}
                                end, Figs, erlang:processes())
           end,
    Set = #{pids => Pids,
            ets => maps:from_list([{ets_id(T), ets_fig(T, W)} || T <- ets:all()]),
            pterm => PTerm,
            pterm_keys => PTermKeys,
            ports => maps:from_keys(erlang:ports(), []),
            modules => maps:from_keys(erlang:loaded(), []),
            set_aside => SetAside,
            states => States,
            atoms => erlang:system_info(atom_count)},
    Pid = spawn(fun() -> keeper(Set) end),
    register(gate_probe_keeper, Pid),
    %% the literals of the modules compiled in memory from now on, and the funs spawned
    gate_probe_code:watch_start(),
    gate_probe_spawns:watch_start().

%% gate_probe_state:before(Skip) (gate's processes not asked) in a process of its own; its
%% time is bounded there.
states_start(Skip) ->
    Ref = make_ref(),
    {Pid, MRef} = spawn_monitor(fun() -> exit({Ref, gate_probe_state:before(Skip)}) end),
    {Ref, Pid, MRef}.

states_join(none) -> #{};
states_join({Ref, Pid, MRef}) ->
    receive
        {'DOWN', MRef, process, Pid, {Ref, States}} -> States;
        {'DOWN', MRef, process, Pid, _} -> #{}
    end.

keeper(Set) ->
    receive
        {get, From, Ref} -> From ! {Ref, Set}, keeper(Set);
        %% one part only (settling's ports and cap), without copying the processes' figures
        {get, Key, From, Ref} -> From ! {Ref, maps:get(Key, Set, none)}, keeper(Set);
        stop -> ok
    end.

keeper_get() ->
    case whereis(gate_probe_keeper) of
        undefined -> none;
        Pid ->
            Ref = make_ref(),
            Pid ! {get, self(), Ref},
            receive {Ref, Set} -> Set after 10000 -> none end
    end.

keeper_stop() ->
    gate_probe_code:watch_stop(),
    gate_probe_spawns:watch_stop(),
    case whereis(gate_probe_keeper) of
        undefined -> ok;
        Pid ->
            Ref = monitor(process, Pid),
            Pid ! stop,
            receive {'DOWN', Ref, _, _, _} -> ok after 5000 -> exit(Pid, kill) end
    end.

%% What the keeper keeps of a table: {Rows, Bytes}, [] when it went away meanwhile.
ets_fig(T, W) ->
    case catch {ets:info(T, size), ets:info(T, memory)} of
        {S, M} when is_integer(S), is_integer(M) -> {S, M * W};
        _ -> []
    end.

%% How the pass treats each process: leak: its refc binaries, a GC, then memory, mailbox and
%% binaries again in one call (recon's bin_leak: what the GC freed); true: the GC and the one
%% call (two signals per process, as a bare GC pass); false: the one call.
scan_gc(true, true) -> leak;
scan_gc(GC, _) -> GC.

%% The single pass: for each process, its refc binaries, a GC, then memory, mailbox and its
%% binaries again (recon's bin_leak: what the GC freed). Kept: the top N by memory, mailbox,
%% binary bytes after GC and binary bytes freed, and (after a before mark) the born ones.
deep_scan(GC, N, Skip, Before, EtsCap, Collect) ->
    BeforePids = case Before of none -> none; _ -> maps:get(pids, Before) end,
    {TMem, TMq, TBin, TFreed, Born, BornN, BornMem, GMem, GMq, GBin, Figs} =
        parallel_scan(erlang:processes(), GC, N, Skip, BeforePids, Collect),
    Tops = top_list(TMem) ++ top_list(TMq) ++ top_list(TBin) ++ top_list(TFreed),
    Nums = maps:from_list([{Pid, X} || {_, Pid, X} <- Tops]),
    Procs = [Row || Pid <- lists:usort(maps:keys(Nums)),
                    Row <- [proc_row(Pid, maps:get(Pid, Nums),
                                     BeforePids =/= none andalso
                                         not maps:is_key(Pid, BeforePids))],
                    Row =/= skip],
    Ets = ets_rows(Before, EtsCap),
    PTerm = persistent_term:info(),
    Scan = #{procs => Procs,
             born_count => BornN,
             born_memory => BornMem,
             born => born_groups(Born),
             ets => Ets,
             owners => gate_probe_grew:owners(Born, Before),
             pterm_count => maps:get(count, PTerm, 0),
             pterm_memory => maps:get(memory, PTerm, 0)},
    case Collect of
        true -> Scan#{keeper_figs => maps:from_list(Figs)};
        false when Before =:= none -> Scan;
        false -> maps:merge(Scan, gate_probe_grew:what_grew(Before, N, GMem, GMq, GBin))
    end.

%% The pass is split over one worker per scheduler: each scans an interleaved share of the
%% processes and keeps its own top N; the shares are merged here.
parallel_scan(Pids, GC, N, Skip, BeforePids, Collect) ->
    W = max(1, erlang:system_info(schedulers_online)),
    Shares = deal(Pids, W),
    Self = self(),
    Workers = [spawn_monitor(fun() ->
                                     Empty = {N, 0, []},
                                     Acc0 = {Empty, Empty, Empty, Empty, [], 0, 0,
                                             Empty, Empty, Empty, []},
                                     R = lists:foldl(fun(P, A) ->
                                                             scan_one(P, GC, Skip, BeforePids,
                                                                      Collect, A)
                                                     end, Acc0, Share),
                                     Self ! {self(), R}
                             end) || Share <- Shares],
    Results = [receive
                   {Pid, R} -> erlang:demonitor(Ref, [flush]), R;
                   {'DOWN', Ref, process, Pid, Why} -> exit({scan_worker, Why})
               end || {Pid, Ref} <- Workers],
    lists:foldl(fun merge_scan/2, hd(Results), tl(Results)).

deal(L, 1) -> [L];
deal(L, W) -> deal(L, W, list_to_tuple(lists:duplicate(W, [])), 1).
deal([], _W, T, _I) -> tuple_to_list(T);
deal([P | Rest], W, T, I) ->
    deal(Rest, W, setelement(I, T, [P | element(I, T)]), I rem W + 1).

merge_scan({A1, A2, A3, A4, B, BN, BM, G1, G2, G3, F},
           {C1, C2, C3, C4, D, DN, DM, H1, H2, H3, E}) ->
    {top_merge(A1, C1), top_merge(A2, C2), top_merge(A3, C3), top_merge(A4, C4),
     B ++ D, BN + DN, BM + DM, top_merge(G1, H1), top_merge(G2, H2), top_merge(G3, H3),
     F ++ E}.

top_merge(T, {_, _, L}) ->
    lists:foldl(fun({V, P, X}, Acc) -> top_add(V, P, X, Acc) end, T, L).

scan_one(P, _GC, _Skip, _BeforePids, _Collect, Acc) when not is_pid(P) -> Acc;
scan_one(P, GC, Skip, BeforePids, Collect, Acc) ->
    case lists:member(P, Skip) of
        true -> Acc;
        false when GC =/= leak -> scan_proc(P, GC, BeforePids, Collect, none, Acc);
        false ->
            case erlang:process_info(P, binary) of
                {binary, B0} -> scan_proc(P, GC, BeforePids, Collect, bin_sum(B0), Acc);
                undefined -> Acc
            end
    end.

scan_proc(P, GC, BeforePids, Collect, Pre,
          {TMem, TMq, TBin, TFreed, Born, BornN, BornMem, GMem, GMq, GBin, Figs} = Acc) ->
    GC =/= false andalso erlang:garbage_collect(P),
    case erlang:process_info(P, [memory, message_queue_len, binary]) of
        [{memory, M}, {message_queue_len, Q}, {binary, B1}] ->
            {R1, S1} = bin_sum(B1),
            {R0, S0} = case Pre of
                           none when GC =:= false -> {R1, S1};
                           none -> {undefined, undefined};
                           _ -> Pre
                       end,
            X = {M, Q, R1, S1, R0, S0},
            %% one look-up: born, or its figures at the before-snapshot
            Was = case BeforePids of
                      none -> none;
                      _ -> maps:get(P, BeforePids, born)
                  end,
            IsBorn = Was =:= born,
            %% growth since the before-snapshot: from 0 for the born
            {GMem1, GMq1, GBin1} =
                case was_fig(Was) of
                    {WasM, WasQ, WasB} ->
                        G = {WasM, WasQ, WasB, M, Q, S1, IsBorn},
                        {top_add(M - WasM, P, G, GMem), top_add(Q - WasQ, P, G, GMq),
                         top_add(S1 - WasB, P, G, GBin)};
                    _ -> {GMem, GMq, GBin}
                end,
            {top_add(M, P, X, TMem), top_add(Q, P, X, TMq), top_add(S1, P, X, TBin),
             case is_integer(S0) of
                 true -> top_add(S0 - S1, P, X, TFreed);
                 false -> TFreed
             end,
             case IsBorn of true -> [{P, M, S1} | Born]; false -> Born end,
             case IsBorn of true -> BornN + 1; false -> BornN end,
             case IsBorn of true -> BornMem + M; false -> BornMem end,
             GMem1, GMq1, GBin1,
             case Collect of
                 true when Q =:= 0, S1 =:= 0 -> [{P, M} | Figs];
                 true -> [{P, {M, Q, S1}} | Figs];
                 false -> Figs
             end};
        _ -> Acc
    end.

%% A process's figures at the before-snapshot as the keeper holds them; born: from zero;
%% none when the scan did not see it.
was_fig(born) -> {0, 0, 0};
was_fig(M) when is_integer(M) -> {M, 0, 0};
was_fig({_, _, _} = F) -> F;
was_fig(_) -> none.

bin_sum(Bins) -> lists:foldl(fun({_, Size, _}, {R, S}) -> {R + 1, S + Size} end, {0, 0}, Bins).

%% A bounded top-N: {N, Count, AscendingList}; an item enters only when it beats the least.
top_add(V, _P, _X, T) when V =< 0 -> T;
top_add(V, P, X, {N, C, L}) when C < N -> {N, C + 1, lists:keymerge(1, L, [{V, P, X}])};
top_add(V, P, X, {N, C, [{Min, _, _} | Rest]}) when V > Min ->
    {N, C, lists:keymerge(1, Rest, [{V, P, X}])};
top_add(_, _, _, T) -> T.

top_list({_, _, L}) -> L.

proc_row(Pid, {M, Q, R1, S1, R0, S0}, Born) ->
    case erlang:process_info(Pid, [registered_name, current_function, heap_size,
                                   total_heap_size]) of
        undefined -> skip;
        [{registered_name, Name}, {current_function, Cur}, {heap_size, H},
         {total_heap_size, TH}] ->
            W = erlang:system_info(wordsize),
            {pid_text(Pid), name_text(Name), mfa_text(initial_call(Pid)), mfa_text(Cur),
             M, H * W, TH * W, Q, R1, S1, R0, S0, Born}
    end.

%% Born processes grouped by registered name or (proc_lib-translated) initial call, and by
%% the test that started them (spawn ancestry, for at most ?STARTER_WALKS of them: beyond, by
%% the name or call alone); each group with its example's starter (gate_probe_state:started/3).
-define(STARTER_WALKS, 20000).
born_groups(Born) ->
    Tests = case length(Born) =< ?STARTER_WALKS of
                true -> gate_probe_state:tests_map();
                false -> #{}
            end,
    Funs = gate_probe_spawns:funs(),
    {Groups, _} = lists:foldl(
                    fun({P, M, _}, {G, Where}) ->
                            {Name, Where1} = gate_probe_spawns:born_key(P, Funs, Where),
                            Key = {gate_probe_state:test_of(P, Tests), Name},
                            {maps:update_with(Key, fun({C, Mem, Ex}) -> {C + 1, Mem + M, Ex} end,
                                              {1, M, P}, G), Where1}
                    end, {#{}, #{}}, Born),
    Sorted = lists:reverse(lists:keysort(3, [{K, C, Mem, Ex} || {{_, K}, {C, Mem, Ex}} <-
                                                                  maps:to_list(Groups)])),
    Owners = gate_probe_state:owners_map(),
    [{K, C, Mem, pid_text(Ex), gate_probe_state:started(Ex, Owners, Tests)}
     || {K, C, Mem, Ex} <- lists:sublist(Sorted, 50)].

%% proc_lib's translated initial call ('$initial_call' in the dictionary: the gen_server
%% callback module's init/1 rather than proc_lib:init_p/5), else the raw one.
initial_call(P) ->
    case erlang:process_info(P, dictionary) of
        {dictionary, D} ->
            case lists:keyfind('$initial_call', 1, D) of
                {_, {M, F, A}} when is_atom(M) -> {M, F, A};
                _ -> raw_initial_call(P)
            end;
        _ -> undefined
    end.

raw_initial_call(P) ->
    case erlang:process_info(P, initial_call) of
        {initial_call, MFA} -> MFA;
        _ -> undefined
    end.

%% ETS tables, largest first, at most Cap of them.
ets_rows(Before, Cap) ->
    W = erlang:system_info(wordsize),
    BeforeEts = case Before of none -> none; _ -> maps:get(ets, Before) end,
    %% one ets:info/1 per table, and each owner's name asked once, however many tables it owns
    {Rows, _} = lists:foldl(fun(T, {Acc, Names}) ->
                                    case ets_row1(T, W, BeforeEts, Names) of
                                        {skip, Names1} -> {Acc, Names1};
                                        {Row, Names1} -> {[Row | Acc], Names1}
                                    end
                            end, {[], #{}}, ets:all()),
    lists:sublist(lists:reverse(lists:keysort(7, lists:reverse(Rows))), Cap).

ets_row1(T, W, BeforeEts, Names) ->
    case catch ets:info(T) of
        Info when is_list(Info) ->
            Get = fun(K) -> case lists:keyfind(K, 1, Info) of {_, V} -> V; false -> undefined end end,
            Id = case Get(id) of
                     I when I =/= undefined, not is_tuple(I) -> I;
                     _ -> T
                 end,
            Owner = Get(owner),
            {OwnerName, Names1} =
                case Names of
                    #{Owner := ON} -> {ON, Names};
                    _ ->
                        ON = case erlang:process_info(Owner, registered_name) of
                                 {registered_name, N} when N =/= [] -> name_text(N);
                                 _ -> <<>>
                             end,
                        {ON, Names#{Owner => ON}}
                end,
            Mem = Get(memory),
            Size = Get(size),
            case is_integer(Mem) andalso is_integer(Size) of
                true ->
                    {{name_text(Get(name)), id_text(Id), Get(named_table) =:= true,
                      atom_to_binary(Get(type)), atom_to_binary(Get(protection)),
                      Size, Mem * W, pid_text(Owner), OwnerName,
                      BeforeEts =/= none andalso not maps:is_key(Id, BeforeEts)}, Names1};
                false -> {skip, Names1}
            end;
        _ -> {skip, Names}
    end.

ets_id(T) ->
    case catch ets:info(T, id) of
        Id when Id =/= undefined, not is_tuple(Id) -> Id;
        _ -> T
    end.

%% Per allocator type, summed over instances and over mbcs, sbcs and mbcs_pool: bytes in
%% carriers and in blocks. OTP 23 changed the block format to one entry per block type;
%% both are read.
allocators() ->
    Types = try erlang:system_info(alloc_util_allocators) catch _:_ -> [] end,
    [{atom_to_binary(T), C, B} || T <- Types, {C, B} <- [alloc_usage(T)]].

alloc_usage(Type) ->
    Instances = case catch erlang:system_info({allocator, Type}) of
                    L when is_list(L) -> L;
                    _ -> []
                end,
    lists:foldl(
      fun({instance, _, Info}, Acc) when is_list(Info) ->
              lists:foldl(fun(K, {C, B}) ->
                                  case lists:keyfind(K, 1, Info) of
                                      {K, Props} when is_list(Props) ->
                                          {C + carriers_size(Props), B + blocks_size(Props)};
                                      _ -> {C, B}
                                  end
                          end, Acc, [mbcs, sbcs, mbcs_pool]);
         (_, Acc) -> Acc
      end, {0, 0}, Instances).

carriers_size(Props) ->
    case lists:keyfind(carriers_size, 1, Props) of
        {carriers_size, Cur, _, _} -> Cur;
        {carriers_size, Cur} -> Cur;
        _ -> 0
    end.

blocks_size(Props) ->
    case lists:keyfind(blocks_size, 1, Props) of
        {blocks_size, Cur, _, _} -> Cur;                        % before OTP 23
        {blocks_size, Cur} -> Cur;
        false ->
            case lists:keyfind(blocks, 1, Props) of
                {blocks, PerType} when is_list(PerType) ->      % OTP 23 and later
                    lists:sum([S || {_, L} <- PerType, is_list(L),
                                    {size, S} <- [size_of(L)]]);
                _ -> 0
            end
    end.

size_of(L) ->
    case lists:keyfind(size, 1, L) of
        {size, S, _, _} -> {size, S};
        {size, S} -> {size, S};
        _ -> {size, 0}
    end.

pid_text(P) when is_pid(P) -> list_to_binary(pid_to_list(P));
pid_text(P) when is_port(P) -> list_to_binary(erlang:port_to_list(P));
pid_text(_) -> <<>>.

id_text(Id) when is_atom(Id) -> name_text(Id);
id_text(Id) when is_reference(Id) -> list_to_binary(erlang:ref_to_list(Id));
id_text(Id) -> iolist_to_binary(io_lib:format("~p", [Id])).

%% Names as an Elixir developer writes them: 'Elixir.Foo.Bar' is Foo.Bar.
name_text([]) -> <<>>;
name_text(A) when is_atom(A) ->
    case atom_to_binary(A) of
        <<"Elixir.", Rest/binary>> -> Rest;
        B -> B
    end;
name_text(_) -> <<>>.

mfa_text({M, F, A}) when is_atom(M), is_atom(F), is_integer(A) ->
    iolist_to_binary([name_text(M), $:, atom_to_binary(F), $/, integer_to_binary(A)]);
mfa_text(_) -> <<"unknown">>.

%% Forces a full sweep of every process, lets the freed memory settle, and returns the time
%% it took in microseconds.
gc_all() ->
    T0 = erlang:monotonic_time(microsecond),
    gc_pass(),
    settle(10, erlang:memory(total)),
    erlang:monotonic_time(microsecond) - T0.

%% One sweep without the settling pause: the formatter's per-test snapshots.
gc_light() -> gc_pass().

%% Freed memory does not show in erlang:memory() at once: blocks freed on another scheduler
%% are handed back to their owner later (delayed deallocation), and exiting processes release
%% their heaps asynchronously. Measured here: binary read 400 kB right after the sweep and
%% 20 kB 50 ms later, with no further GC. So: pause and read again until total stays within
%% 0.5 %, at most 10 times.
%% settle/2's bound as a rate, read twenty times as often: total may move at most 0.5 % per
%% 20 ms (0.025 % per ms, over the time each pause really took), read every millisecond, at
%% most 200 pauses. It stops at the first step where the drift is that slow, rather than at
%% the next multiple of 20 ms. Measured after the GC of a node that runs a 1 000-test suite:
%% the first reading moves by 150-230 kB (the freed heaps coming back) and the next by 96
%% bytes, whether the pause is 1 ms or 2; a 2 ms pause takes 2.5-3.1 ms and a 1 ms one
%% 1.4-2.0 ms, so the settle takes 1.7-4 ms instead of 5-9 (twice per gate run). The pauses
%% are receive timeouts, not timer:sleep/1: loading the timer module during a
%% before-snapshot's settle moved code by 23 kB, which cost two more pauses.
%% The readings are taken by a fresh process of its own that collects its own garbage before
%% each: this process's heap (the scan's figures) would move by 100 kB and more between two
%% readings on its own (the readings themselves), which cost two or three pauses of every
%% snapshot; the fresh one's stays put, as this one does while it waits.
settle_quietly() ->
    {Pid, Ref} = spawn_monitor(fun() ->
                                       settle_rate(200, quiet_total(),
                                                   erlang:monotonic_time(microsecond))
                               end),
    receive {'DOWN', Ref, process, Pid, _} -> ok end.

quiet_total() ->
    erlang:garbage_collect(),
    erlang:memory(total).

settle_rate(0, _Prev, _T0) -> ok;
settle_rate(N, Prev, T0) ->
    pause(1),
    Now = quiet_total(),
    T = erlang:monotonic_time(microsecond),
    case abs(Now - Prev) =< Prev * (T - T0) div 4000000 of
        true -> ok;
        false -> settle_rate(N - 1, Now, T)
    end.

settle(0, _Prev) -> ok;
settle(N, Prev) ->
    pause(20),
    Now = erlang:memory(total),
    case abs(Now - Prev) =< Prev div 200 of
        true -> ok;
        false -> settle(N - 1, Now)
    end.

pause(Ms) -> receive after Ms -> ok end.

%% One sweep: asynchronous requests, so that the schedulers collect in parallel; a process
%% that exits meanwhile answers false, which is fine.
gc_pass() ->
    Self = self(),
    gc_some([P || P <- erlang:processes(), P =/= Self]),
    erlang:garbage_collect(),
    ok.

gc_some(Pids) ->
    Refs = [begin
                Ref = make_ref(),
                erlang:garbage_collect(P, [{async, Ref}]),
                Ref
            end || P <- Pids],
    [receive {garbage_collect, R, _} -> ok end || R <- Refs],
    ok.
