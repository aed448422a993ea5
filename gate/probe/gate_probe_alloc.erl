%% gate/probe/gate_probe_alloc.erl: the fine level: the node's OS memory (RSS and
%% its high-water mark), what the BEAM's allocators hold in carriers, allocations by origin,
%% and the run's peak: which test module (or test) it happened in, and which processes'
%% heaps grew large.
%%
%% Wraps every deep snapshot (gate_probe:snapshot/1 calls around/2):
%%   - fine figures: VmRSS / VmHWM of /proc/self/status (read inside the node, so it works
%%     for a node gate started, an attached node and a node in a chroot with /proc mounted),
%%     the allocators' carriers (recon_alloc:memory(allocated)'s sum), the mseg segment cache
%%     and instrument:allocations() (block counts per {Origin, Type}: driver_alloc and
%%     binary_alloc tag their blocks with the NIF module, driver or `system` by default);
%%   - at the before-mark, the tracker starts: it resets VmHWM (/proc/self/clear_refs, "5"),
%%     watches large heaps with erlang:system_monitor/2 unless the suite has its own monitor,
%%     and takes one VmHWM reading at each ExUnit module edge (and each test's finish with
%%     --per-test), so each stretch between two edges has its own peak;
%%   - at the after-mark, before the after-snapshot's GC pass, the tracker stops and hands
%%     back the run's peak, the largest windows and the largest heaps, and the RSS growth
%%     of each test module (test, with --per-test) between its edges.
%% Part of the probe: see gate_probe.erl.
-module(gate_probe_alloc).
-gate_load(always).

-export([around/2, ex_unit_event/1, cleanup/0]).
%% the tracker's loop (spawned)
-export([tracker_init/2]).

-define(TRACKER, gate_probe_alloc).
%% a test module's process: the test it runs, in its dictionary (see edge_event/2)
-define(CURRENT, gate_alloc_test).
%% a test's finish is read when the last reading is older than this many times its cost: the
%% tracker reads a tenth of the time at most
-define(READ_SPACING, 10).
%% largest windows and heaps shipped back
-define(MAX_WINDOWS, 5).
-define(MAX_HEAPS, 10).
%% heaps watched by default (bytes) when no [process] max_heap is set: the run's largest
%% heaps are reported as context from this size on
-define(HEAP_WATCH, 64000000).

%% ---- The snapshot wrapper ----

%% Snap: gate_probe_snapshot:snapshot/1. Opts as for it, plus (from gate):
%%   heap_watch => bytes: the heap size the system monitor reports from
around(Opts, Snap) ->
    Mark = maps:get(mark, Opts, none),
    Deep = maps:get(deep, Opts, false),
    %% the peak is read before the after-snapshot's own GC pass can raise it
    %% (keep_peak: a snapshot between --repeat's runs; the tracker goes on to the last one)
    Peak = case {Deep, Mark, maps:get(keep_peak, Opts, false)} of
               {true, 'after', false} -> tracker_stop();
               _ -> undefined
           end,
    Skip = [P || P <- [whereis(?TRACKER)], is_pid(P)],
    Reply = Snap(Opts#{skip => Skip ++ maps:get(skip, Opts, [])}),
    case Deep of
        false -> Reply;
        true ->
            Fine0 = fine(),
            Fine = case Peak of
                       undefined -> Fine0;
                       #{} -> Fine0#{peak => Peak}
                   end,
            Mark =:= before andalso tracker_start(Opts, Fine),
            Reply#{fine => Fine}
    end.

%% RSS, high-water mark, carriers, what the BEAM mapped, the segment cache, allocations by
%% origin.
%% Each part's cost (microseconds) goes with it: tests/bench/fine.sh reports it as a share of
%% the run.
fine() ->
    {ProcUs, Os} = timer:tc(fun() ->
                                    case proc_status() of
                                        {ok, Rss, Hwm} -> #{rss => Rss, hwm => Hwm};
                                        {error, Why} -> #{no_rss => Why}
                                    end
                            end),
    {AllocUs, Alloc} = timer:tc(fun() ->
                                        {Allocated, AllocatedMax} = allocated(),
                                        #{allocated => Allocated,
                                          allocated_max => AllocatedMax,
                                          mapped => mapped(),
                                          cached_segments => cached_segments()}
                                end),
    {OriginsUs, Origins} = timer:tc(fun origins/0),
    maps:merge(Os, maps:merge(Alloc#{cost_proc_us => ProcUs, cost_allocators_us => AllocUs,
                                     cost_origins_us => OriginsUs},
                              Origins)).

%% VmRSS and VmHWM of this node's OS process, in bytes.
proc_status() ->
    case read_status() of
        {ok, B} ->
            case status_figures(B) of
                {ok, _, _} = Figures -> Figures;
                error -> {error, <<"/proc/self/status has no VmRSS or VmHWM line">>}
            end;
        {error, Why} ->
            {error, iolist_to_binary(io_lib:format("cannot read /proc/self/status in the node "
                                                   "(~p): not Linux, or /proc is not mounted",
                                                   [Why]))}
    end.

%% Read raw, in the calling process: file:read_file/1 goes through the node's file server,
%% and a reading at a test module's edge then waits behind whatever the suite asks of it
%% (tests/bench/fine.sh measured 10 ms an edge on gen_stage that way). /proc files report no
%% size, so they are read up to a bound (status is about 1.5 kB); should the raw read give
%% nothing, file:read_file/1 reads them to their end.
read_status() ->
    case file:open("/proc/self/status", [raw, read, binary]) of
        {ok, F} ->
            R = file:read(F, 65536),
            _ = file:close(F),
            case R of
                {ok, B} when byte_size(B) > 0 -> {ok, B};
                _ -> read_status_served()
            end;
        {error, _} = E -> E
    end.

read_status_served() ->
    case file:read_file("/proc/self/status") of
        {ok, B} when byte_size(B) > 0 -> {ok, B};
        {ok, _} -> {error, eof};
        {error, _} = E -> E
    end.

%% {ok, Rss, Hwm} in bytes from the text of /proc/self/status, or error.
status_figures(B) ->
    case {status_kb(B, <<"VmRSS:">>), status_kb(B, <<"VmHWM:">>)} of
        {R, H} when is_integer(R), is_integer(H) -> {ok, R * 1024, H * 1024};
        _ -> error
    end.

status_kb(B, Key) ->
    case binary:match(B, Key) of
        {At, Len} ->
            Rest = binary:part(B, At + Len, byte_size(B) - At - Len),
            [Line | _] = binary:split(Rest, <<"\n">>),
            Digits = << <<C>> || <<C>> <= Line, C >= $0, C =< $9 >>,
            case Digits of
                <<>> -> undefined;
                _ -> binary_to_integer(Digits)
            end;
        nomatch -> undefined
    end.

%% Resets VmHWM to the current RSS. ok, or {error, Text}.
hwm_reset() ->
    case file:open("/proc/self/clear_refs", [raw, write, binary]) of
        {ok, F} ->
            R = file:write(F, <<"5">>),
            _ = file:close(F),
            case R of
                ok -> ok;
                {error, W} -> {error, hwm_why(W)}
            end;
        {error, W} -> {error, hwm_why(W)}
    end.

hwm_why(W) ->
    iolist_to_binary(io_lib:format("/proc/self/clear_refs refused (~p): the high-water mark "
                                   "could not be reset, so it is the node's peak since it "
                                   "started", [W])).

%% recon_alloc:memory(allocated): the carriers of every alloc_util allocator (mbcs, sbcs and
%% the carrier pool), in bytes; and the allocated peak's bound: the sum of each instance's
%% highest carriers size since the node started (the 4th figure of carriers_size, "max ever").
%% The 3rd figure ("max since the last call") is not used: any erlang:memory() call, by
%% anyone, resets it. The instances peak at different moments, so the sum is an upper bound
%% of the carriers held at any one moment; the pool keeps no maximum and counts as read.
allocated() ->
    Types = try erlang:system_info(alloc_util_allocators) catch _:_ -> [] end,
    Pairs = [carriers(I) || T <- Types,
                            Is <- [catch erlang:system_info({allocator, T})], is_list(Is),
                            {instance, _, I} <- Is, is_list(I)],
    {lists:sum([C || {C, _} <- Pairs]), lists:sum([M || {_, M} <- Pairs])}.

carriers(Info) ->
    Sizes = [carriers_size(Props) || K <- [mbcs, sbcs, mbcs_pool],
                                     {K2, Props} <- [lists:keyfind(K, 1, Info)], K2 =:= K,
                                     is_list(Props)],
    {lists:sum([C || {C, _} <- Sizes]), lists:sum([M || {_, M} <- Sizes])}.

carriers_size(Props) ->
    case lists:keyfind(carriers_size, 1, Props) of
        {carriers_size, Cur, _, Max} when is_integer(Max) -> {Cur, max(Cur, Max)};
        {carriers_size, Cur} -> {Cur, Cur};
        _ -> {0, 0}
    end.

%% Segments mseg_alloc keeps mapped after their carriers were freed (its cache): resident,
%% yet in no allocator's carriers. Only a count: the figures give no bytes for them.
cached_segments() ->
    Is = case catch erlang:system_info({allocator, mseg_alloc}) of
             L when is_list(L) -> L;
             _ -> []
         end,
    lists:sum([N || {instance, _, I} <- Is, is_list(I),
                    {memkind, M} <- [lists:keyfind(memkind, 1, I)], is_list(M),
                    {status, S} <- [lists:keyfind(status, 1, M)], is_list(S),
                    {cached_segments, N} <- [lists:keyfind(cached_segments, 1, S)],
                    is_integer(N)]).

%% instrument:allocations(): block counts per {Origin, Type} in doubling size buckets from
%% hist_start. instrument is in tools before OTP 26 and in runtime_tools from OTP 26; both
%% take the same call and give the same reply (OTP 26's per_process flags are not asked for).
origins() ->
    case gate_probe_snapshot:instrument_ready() of
        true ->
            try instrument:allocations() of
                {ok, {Start, _Unscanned, ByOrigin}} when is_map(ByOrigin) ->
                    #{hist_start => Start,
                      origins => [{origin_text(O), atom_text(T), H}
                                  || {O, Types} <- maps:to_list(ByOrigin), is_map(Types),
                                     {T, H} <- maps:to_list(Types), is_tuple(H)]};
                {error, Why} ->
                    #{no_origins => iolist_to_binary(io_lib:format(
                                      "instrument:allocations() said ~p", [Why]))};
                Other ->
                    #{no_origins => iolist_to_binary(io_lib:format(
                                      "instrument:allocations() gave ~P", [Other, 8]))}
            catch C:E ->
                    #{no_origins => iolist_to_binary(io_lib:format(
                                      "instrument:allocations() failed: ~p:~P", [C, E, 8]))}
            end;
        _ ->
            #{no_origins => <<"the instrument module is not in the node's code path "
                              "(tools before OTP 26, runtime_tools from OTP 26)">>}
    end.

origin_text(A) when is_atom(A) -> atom_to_binary(A);
origin_text(O) -> iolist_to_binary(io_lib:format("~0p", [O])).

atom_text(A) when is_atom(A) -> atom_to_binary(A);
atom_text(O) -> origin_text(O).

%% What the BEAM holds from the OS: every segment its mmappers have mapped (erts_mmap: the
%% carriers mseg created, and the segments mseg still caches after their carriers were freed,
%% resident yet in no allocator's carriers: a transient 200 MB list leaves them for seconds)
%% plus the carriers taken with malloc (sys_alloc_carriers_size). RSS beyond this is memory
%% the BEAM's allocators never handed out: a NIF's malloc, a driver's, a C library's.
mapped() ->
    Mm = case catch erlang:system_info({allocator, erts_mmap}) of
             L when is_list(L) ->
                 lists:sum([U || {_, Info} <- L, is_list(Info), Part <- [os, supercarrier],
                                 {P2, PInfo} <- [lists:keyfind(Part, 1, Info)], P2 =:= Part,
                                 is_list(PInfo), {sizes, Sz} <- [lists:keyfind(sizes, 1, PInfo)],
                                 is_list(Sz), {used, U} <- [lists:keyfind(used, 1, Sz)],
                                 is_integer(U)]);
             _ -> 0
         end,
    Types = try erlang:system_info(alloc_util_allocators) catch _:_ -> [] end,
    Sys = lists:sum([sys_carriers(I) || T <- Types,
                                        Is <- [catch erlang:system_info({allocator, T})],
                                        is_list(Is), {instance, _, I} <- Is, is_list(I)]),
    Mm + Sys.

sys_carriers(Info) ->
    lists:sum([C || K <- [mbcs, sbcs],
                    {K2, Props} <- [lists:keyfind(K, 1, Info)], K2 =:= K, is_list(Props),
                    C <- [case lists:keyfind(sys_alloc_carriers_size, 1, Props) of
                              {_, Cur} when is_integer(Cur) -> Cur;
                              {_, Cur, _, _} when is_integer(Cur) -> Cur;
                              _ -> 0
                          end]]).

%% ---- The tracker: the run's peak ----

tracker_start(Opts, Fine) ->
    tracker_kill(),
    Self = self(),
    Pid = spawn(?MODULE, tracker_init, [Self, {Opts, Fine}]),
    receive {Pid, started} -> ok
    after 5000 -> ok
    end.

tracker_init(Parent, {Opts, Fine}) ->
    catch register(?TRACKER, self()),
    W = erlang:system_info(wordsize),
    Watch = case maps:get(heap_watch, Opts, 0) of
                N when is_integer(N), N > 0 -> N;
                _ -> ?HEAP_WATCH
            end,
    Monitor = case erlang:system_monitor() of
                  undefined ->
                      _ = erlang:system_monitor(self(), [{large_heap, max(1, Watch div W)}]),
                      gate;
                  {Other, _} -> {suite, Other}
              end,
    Reset = case maps:is_key(rss, Fine) of
                true -> hwm_reset();
                false -> {error, maps:get(no_rss, Fine, <<>>)}
            end,
    %% the files the tracker reads at every edge, opened once: an open and a close each
    %% time doubled a reading's cost (the descriptors close when the tracker exits)
    put(gate_proc_files, proc_files()),
    Parent ! {self(), started},
    tracker_loop(#{w => W, watch => Watch, monitor => Monitor, reset => Reset,
                   rss_before => maps:get(rss, Fine, undefined),
                   allocated_before => maps:get(allocated, Fine, 0),
                   allocated_max_before => maps:get(allocated_max, Fine, undefined),
                   running => [], window => [], window_rss => maps:get(rss, Fine, 0),
                   windows => [], heaps => #{}, started => #{}, grew => [], max_hwm => 0,
                   last => none, test_peaks => [], edge_us => 0, edges => 0,
                   modpids => #{}}).

tracker_loop(S) ->
    receive
        {monitor, Pid, large_heap, Info} -> tracker_loop(heap_seen(S, Pid, Info));
        {edge, finish, {test, _, _} = What, read, {at, T0, At}} ->
            %% a test's finish (--per-test): when more edges wait, the window goes on to the
            %% next reading instead (a tracker behind the suite would only fall further);
            %% likewise when the last reading is younger than ?READ_SPACING times what it
            %% cost: reading /proc/self/status takes the kernel's locks on the node's memory
            %% map, which every scheduler allocating waits for (measured: 70 us a test on
            %% 5 000 one-line sync tests, most of --per-test's cost). A window then spans
            %% several short tests, and names them all.
            Now = erlang:monotonic_time(microsecond),
            Due = case S of
                      %% (monotonic time may be negative: no figure stands for "never")
                      #{read_at := LastAt, read_us := LastUs} ->
                          Now - LastAt >= ?READ_SPACING * LastUs;
                      _ -> true
                  end,
            {Us, Reading} = case erlang:process_info(self(), message_queue_len) of
                                {message_queue_len, 0} when Due -> timer:tc(fun tracker_reading/0);
                                _ -> {0, none}
                            end,
            %% the test ran in the window its finish closes (no start message came)
            S0 = S#{window => window_add(What, maps:get(window, S))},
            S1 = case Reading of
                     none -> S0;
                     _ ->
                         (one_test_window(S0, What, At - T0, At))#{read_at => Now, read_us => Us,
                                                                    window_at => At}
                 end,
            tracker_loop(edge_read(S1, finish, What, Reading, Us));
        {edge, start, {module, _} = What, read, Pid} ->
            %% a module edge: read here, beside the suite (see edge_event/2)
            {Us, Reading} = timer:tc(fun tracker_reading/0),
            S1 = S#{modpids => (maps:get(modpids, S))#{Pid => What},
                    window_at => erlang:monotonic_time(microsecond)},
            tracker_loop(edge_read(S1, start, What, Reading, Us));
        {edge, finish, {module, _} = What, read, Ran} ->
            {Us, Reading} = timer:tc(fun tracker_reading/0),
            S1 = S#{modpids => maps:filter(fun(_, W) -> W =/= What end, maps:get(modpids, S)),
                    window_at => erlang:monotonic_time(microsecond)},
            tracker_loop(edge_read(module_ran(S1, What, Ran), finish, What, Reading, Us));
        {edge, Kind, What, Reading, Us} ->
            S1 = case Reading of
                     none -> S;
                     _ -> S#{window_at => erlang:monotonic_time(microsecond)}
                 end,
            tracker_loop(edge_read(S1, Kind, What, Reading, Us));
        {stop, From, Ref} ->
            Hwm = case proc_status() of
                      {ok, R, H} -> {R, H};
                      _ -> undefined
                  end,
            S1 = close_window(S, Hwm),
            Theirs = case erlang:system_monitor() of
                         {Me, _} when Me =:= self() ->
                             _ = erlang:system_monitor(undefined),
                             undefined;
                         {P, _} -> P;
                         undefined -> undefined
                     end,
            %% read here, before the after-snapshot's GC pass can raise it
            {_, AMax} = allocated(),
            From ! {Ref, (report(S1, Hwm, Theirs))#{allocated_max => AMax}};
        _ -> tracker_loop(S)
    end.

%% An edge and its reading (none: not read), with what reading it cost.
edge_read(#{edge_us := E, edges := N} = S, Kind, What, Reading, Us) ->
    Read = case Reading of
               none -> 0;
               _ -> 1
           end,
    edge(S#{edge_us => E + Us, edges => N + Read}, Kind, What, Reading).

%% {Rss, Hwm} read at an edge closes the window that ran since the last reading: its peak is
%% Hwm (the high-water mark was reset at the last reading). The windows kept are those whose
%% peak rose most above their start: after a transient peak RSS stays high for a while (mseg's
%% cache), and the windows that follow only inherit it. The run's peak is the highest of all.
close_window(#{reset := ok, window := Win, window_rss := Rss0, windows := Ws,
               max_hwm := Max} = S, {Rss, Hwm}) ->
    Ws1 = lists:sublist(lists:reverse(lists:keysort(4, [{Hwm, Rss0, lists:reverse(Win),
                                                         Hwm - Rss0} | Ws])),
                        ?MAX_WINDOWS),
    S#{windows => Ws1, window_rss => Rss, max_hwm => max(Max, Hwm)};
close_window(S, _) -> S.

edge(#{running := Run} = S0, Kind, What, Reading) ->
    S = last_reading(rss_edge(test_peak(S0, Kind, What, Reading), Kind, What, Reading),
                     Kind, What, Reading),
    Run1 = case Kind of
               start -> [What | Run];
               finish -> lists:delete(What, Run)
           end,
    case Reading of
        %% a reading at a finish closes the window of what finished: the next one holds
        %% what still runs
        {_, _} when Kind =:= finish -> (close_window(S, Reading))#{window => Run1,
                                                                   running => Run1};
        {_, _} -> (close_window(S, Reading))#{window => [What | Run], running => Run1};
        none -> S#{running => Run1, window => window_add(What, maps:get(window, S))}
    end.

%% What ran in the window so far, once each, the last 50
window_add(What, Win) ->
    case lists:member(What, Win) of
        true -> Win;
        false -> lists:sublist([What | Win], 50)
    end.

%% A test read at its start and finish: its peak (the high-water mark read at its finish, reset
%% at its start) and its RSS at the start. Clean when no other edge was read in between (a
%% sync test; an async one shares its window with its neighbours).
test_peak(#{last := {start, What, R0}, test_peaks := Tp} = S, finish, {test, _, _} = What,
          {_, H}) ->
    S#{test_peaks => lists:sublist([{What, H, R0, true} | Tp], 1000)};
test_peak(#{started := St, test_peaks := Tp} = S, finish, {test, _, _} = What, {_, H}) ->
    case maps:find(What, St) of
        {ok, R0} -> S#{test_peaks => lists:sublist([{What, H, R0, false} | Tp], 1000)};
        error -> S
    end;
test_peak(S, _, _, _) -> S.

last_reading(S, Kind, What, {R, _}) -> S#{last => {Kind, What, R}};
last_reading(S, _, _, none) -> S.

%% RSS growth between a module's (or test's) start and finish readings: where memory outside
%% the allocators grew (a sync module ran alone; async ones overlap and share the blame).
rss_edge(#{started := St} = S, start, What, {R, _}) -> S#{started => St#{What => R}};
rss_edge(#{started := St, grew := G} = S, finish, What, {R, _}) ->
    case maps:take(What, St) of
        {R0, St1} when R > R0 ->
            S#{started => St1,
               grew => lists:sublist(lists:reverse(lists:keysort(2, [{What, R - R0} | G])),
                                     ?MAX_WINDOWS)};
        {_, St1} -> S#{started => St1};
        error -> rss_window(S, What, R)
    end;
rss_edge(S, _, _, _) -> S.

%% A test read at its finish only (--per-test): it grew RSS by what its window did when it is
%% the only test of the window (a sync test; async ones share theirs).
rss_window(#{window := Win, window_rss := R0, grew := G} = S, {test, _, _} = What, R)
  when R > R0 ->
    case [T || {test, _, _} = T <- Win] of
        [What] -> S#{grew => lists:sublist(lists:reverse(lists:keysort(2, [{What, R - R0} | G])),
                                           ?MAX_WINDOWS)};
        _ -> S
    end;
rss_window(S, _, _) -> S.

%% A window closing at a test's finish that spans several tests (the ones before were not
%% read: see ?READ_SPACING) is that test's alone when the others took under a tenth of it:
%% they are all shorter than the spacing, the peak a test builds takes time.
one_test_window(#{window := Win} = S, Last, Dur, At) ->
    Span = At - maps:get(window_at, S, At),
    case [T || {test, _, _} = T <- Win] of
        [_, _ | _] when Span > 0, Dur * 10 >= Span * 9 ->
            S#{window => [Last | [W || W <- Win, element(1, W) =/= test]]};
        _ -> S
    end.

%% A module finished: when the window closing now held that module alone and it ran one
%% test, the window names the test (its tests' edges were not sent: see edge_event/2).
module_ran(#{window := Win} = S, What, {Last, 1}) when Win =:= [What] ->
    case Last of
        {test, _, _} -> S#{window => [Last | Win]};
        _ -> S
    end;
module_ran(S, _, _) -> S.

heap_seen(#{w := W, heaps := Hs, running := Run} = S, Pid, Info) when is_list(Info) ->
    Words = lists:sum([V || {K, V} <- Info, is_integer(V),
                            K =:= heap_block_size orelse K =:= old_heap_block_size]),
    Bytes = Words * W,
    Hs1 = case maps:get(Pid, Hs, undefined) of
              {B0, _, _} when B0 >= Bytes -> Hs;
              _ ->
                  ModPids = maps:get(modpids, S),
                  Tests = case [T || {test, _, _} = T <- Run] of
                              [] ->
                                  case heap_test(Pid, ModPids, 32) of
                                      [] -> lists:append([module_test(P) || P <- maps:keys(ModPids)]);
                                      Own -> Own
                                  end;
                              Ts -> Ts
                          end,
                  Hs#{Pid => {Bytes, label(Pid), Tests}}
          end,
    S#{heaps => cap_heaps(Hs1)};
heap_seen(S, _, _) -> S.

%% The test a process grew its heap in, when the tests' edges were not sent: up its parents
%% to a test module's process, whose dictionary holds the test it runs (a test's process and
%% what it spawned: the module waits for the test to end before the next one).
%% Else (a server the application started grew it), the tests running then.
heap_test(_Pid, _ModPids, 0) -> [];
heap_test(Pid, ModPids, _N) when is_map_key(Pid, ModPids) -> module_test(Pid);
heap_test(Pid, ModPids, N) ->
    case erlang:process_info(Pid, parent) of
        {parent, P} when is_pid(P) -> heap_test(P, ModPids, N - 1);
        _ -> []
    end.

cap_heaps(Hs) when map_size(Hs) =< 4 * ?MAX_HEAPS -> Hs;
cap_heaps(Hs) ->
    maps:from_list(lists:sublist(lists:reverse(lists:keysort(2, [{P, V} || {P, V} <- maps:to_list(Hs)])),
                                 2 * ?MAX_HEAPS)).

label(Pid) ->
    case erlang:process_info(Pid, registered_name) of
        {registered_name, N} when is_atom(N) -> atom_to_binary(N);
        _ ->
            case catch proc_lib:translate_initial_call(Pid) of
                {M, F, A} = MFA when is_atom(M), is_atom(F), is_integer(A) ->
                    case test_process(Pid, MFA) of
                        true -> <<"the test's own process">>;
                        false -> iolist_to_binary([atom_to_binary(M), $:, atom_to_binary(F),
                                                   $/, integer_to_binary(A)])
                    end;
                _ -> <<>>
            end
    end.

%% ExUnit registers each test's process with its on_exit handler (an ETS table keyed by pid);
%% its initial call says nothing (a fun).
test_process(Pid, MFA) when MFA =:= {proc_lib, init_p, 5}; MFA =:= {erlang, apply, 2} ->
    try ets:member('Elixir.ExUnit.OnExitHandler', Pid)
    catch _:_ -> false
    end;
test_process(_, _) -> false.

report(#{reset := Reset, windows := Ws, heaps := Hs, monitor := Mon, watch := Watch,
         rss_before := Rss0, allocated_before := A0, grew := G, max_hwm := Max,
         test_peaks := Tp} = S, Hwm, Theirs) ->
    Base = #{rss_before => Rss0, allocated_before => A0, heap_watch => Watch,
             allocated_max_before => maps:get(allocated_max_before, S),
             edge_us => maps:get(edge_us, S), edges => maps:get(edges, S),
             test_peaks => [#{what => test_text(W), peak => H, start_rss => R0, clean => C}
                            || {W, H, R0, C} <- Tp],
             rss_grew => [#{what => test_text(W), bytes => B} || {W, B} <- G],
             windows => [#{peak => P, start_rss => R, modules => whats(module, Win),
                           tests => whats(test, Win)} || {P, R, Win, _} <- Ws],
             heaps => [#{pid => list_to_binary(pid_to_list(P)), label => L, bytes => B,
                         tests => [test_text(T) || T <- Tests]}
                       || {P, {B, L, Tests}} <- lists:sublist(
                                                   lists:reverse(lists:keysort(2, maps:to_list(Hs))),
                                                   ?MAX_HEAPS)],
             monitor => monitor_text(Mon, Theirs)},
    %% the run's peak: the highest of every window's (each read since the reset at its start)
    case {Reset, Hwm} of
        {ok, {_, H}} -> Base#{hwm => max(H, Max), hwm_reset => true};
        {{error, Why}, {_, H}} -> Base#{hwm => H, hwm_reset => false, hwm_note => Why};
        {{error, Why}, _} -> Base#{hwm_note => Why};
        {ok, _} -> Base#{hwm_note => <<"/proc/self/status could not be read at the end">>}
    end.

whats(Kind, Win) -> [test_text(X) || X <- Win, element(1, X) =:= Kind].

test_text({module, M}) -> atom_text(M);
test_text({test, M, N}) -> iolist_to_binary([atom_text(M), $\t, atom_text(N)]).

monitor_text(gate, undefined) -> <<"gate">>;
monitor_text(gate, P) ->
    iolist_to_binary(["replaced during the run by ", pid_to_list(P),
                      "'s: heaps seen after that are not named"]);
monitor_text({suite, P}, _) ->
    iolist_to_binary(["the node's own system monitor ", pid_to_list(P),
                      " was kept: gate watched no heaps (a node has one system monitor)"]).

tracker_stop() ->
    case whereis(?TRACKER) of
        undefined -> #{hwm_note => <<"the peak was not tracked (no before-snapshot)">>};
        Pid ->
            Ref = erlang:monitor(process, Pid),
            Pid ! {stop, self(), Ref},
            receive
                {Ref, Report} -> erlang:demonitor(Ref, [flush]), Report;
                {'DOWN', Ref, process, Pid, Why} ->
                    #{hwm_note => iolist_to_binary(io_lib:format("the peak tracker died: ~P",
                                                                 [Why, 8]))}
            after 10000 ->
                    tracker_kill(),
                    #{hwm_note => <<"the peak tracker did not answer">>}
            end
    end.

tracker_kill() ->
    case whereis(?TRACKER) of
        undefined -> ok;
        Pid ->
            case erlang:system_monitor() of
                {Pid, _} -> _ = erlang:system_monitor(undefined);
                _ -> ok
            end,
            %% wait for it to be gone: exit/2 is asynchronous, and a tracker started next
            %% could not register while the old one holds the name, so it would run
            %% unnamed, never skipped by a snapshot nor stopped (under --repeat it was
            %% counted among the processes born and left alive)
            Ref = erlang:monitor(process, Pid),
            exit(Pid, kill),
            receive {'DOWN', Ref, process, Pid, _} -> ok
            after 5000 -> erlang:demonitor(Ref, [flush]), ok
            end
    end.

cleanup() -> tracker_kill().

%% ---- ExUnit's edges (called by gate_probe_events' hook in the reporting process) ----
%% A module edge (and a test edge with --per-test) reads VmHWM and resets it, here, at the
%% edge; the tracker learns what runs from every edge (a message, no reading).
ex_unit_event(Msg) ->
    case whereis(?TRACKER) of
        undefined -> ok;
        T -> edge_event(T, Msg)
    end.

%% A module edge is read by the tracker, not here: this is the test module's own process, and
%% under load (two processes building lists on a 2-core machine) a /proc read or reset took
%% 7-14 ms, which the module would wait too. The tracker reads
%% it a few microseconds later, in the order the edges came. A test's edges (--per-test, a
%% max_peak tag: opt-in) are read here, so that the test's window starts before it runs.
%% Any other test's edges are not sent: the module's process notes its test in its own
%% dictionary (?CURRENT), where the tracker looks when a heap grows large, and the module's
%% finish says how many tests it ran and the last one. Two messages a test to the tracker,
%% and waking it for each, cost about a sixth of gate's time over bare mix test on 5 000
%% one-line sync tests (measured). With --per-test a test's finish is sent with its start's
%% time: a start message waiting behind a finish made the tracker take itself for behind
%% the suite and skip the finish's reading.
edge_event(T, {module_started, #{name := M}}) ->
    put(?CURRENT, {none, 0}),
    T ! {edge, start, {module, M}, read, self()};
edge_event(T, {module_finished, #{name := M}}) ->
    T ! {edge, finish, {module, M}, read, current()};
edge_event(T, {test_started, #{module := M, name := N} = Test}) ->
    {_, Ran} = current(),
    put(?CURRENT, {{test, M, N}, Ran + 1}),
    case {max_peak_tagged(Test), application:get_env(gate_probe, attribution)} of
        {false, {ok, test}} -> put(gate_alloc_test_at, erlang:monotonic_time(microsecond));
        {false, _} -> ok;
        {true, _} -> edge_send(T, start, {test, M, N}, fun() -> tagged_reading(Test) end)
    end;
edge_event(T, {test_finished, #{module := M, name := N} = Test}) ->
    {_, Ran} = current(),
    put(?CURRENT, {none, Ran}),
    case {max_peak_tagged(Test), application:get_env(gate_probe, attribution)} of
        {false, {ok, test}} ->
            Now = erlang:monotonic_time(microsecond),
            T0 = case get(gate_alloc_test_at) of
                     At when is_integer(At) -> At;
                     _ -> Now
                 end,
            T ! {edge, finish, {test, M, N}, read, {at, T0, Now}};
        {false, _} -> ok;
        {true, _} -> edge_send(T, finish, {test, M, N}, fun() -> tagged_reading(Test) end)
    end;
edge_event(_, _) -> ok.

%% [Test] a test module's process runs now, or []
module_test(Pid) ->
    case erlang:process_info(Pid, dictionary) of
        {dictionary, D} ->
            case lists:keyfind(?CURRENT, 1, D) of
                {_, {{test, _, _} = T, _}} -> [T];
                _ -> []
            end;
        _ -> []
    end.

%% {RunningTest | none, TestsStarted} of this module's process
current() ->
    case get(?CURRENT) of
        {_, N} = C when is_integer(N) -> C;
        _ -> {none, 0}
    end.

%% The reading's cost (microseconds) goes with it, summed by the tracker.
edge_send(T, Kind, What, Read) ->
    {Us, Reading} = timer:tc(Read),
    T ! {edge, Kind, What, Reading, Us}.

%% A test tagged `gate: [max_peak: ...]` is read at both edges, here: its window is its own.
%% With --per-test, every other test is read by the tracker at its finish (the reading before
%% it is its start): reading and resetting at both edges in the test's process cost 0.1 to
%% 2 ms an edge, most of --per-test's cost on a suite of one-line tests.
tagged_reading(Test) ->
    case max_peak_tagged(Test) of
        true -> reading();
        false -> none
    end.

max_peak_tagged(#{tags := #{gate := L}}) when is_list(L) -> lists:keymember(max_peak, 1, L);
max_peak_tagged(_) -> false.

%% The tracker's reading: reading/0 on the files it keeps open (pread and pwrite, no open
%% and close); reading/0 itself when they could not be opened.
tracker_reading() ->
    case get(gate_proc_files) of
        {Status, Clear} ->
            case file:pread(Status, 0, 65536) of
                {ok, B} when byte_size(B) > 0 ->
                    case status_figures(B) of
                        {ok, R, H} ->
                            case file:pwrite(Clear, 0, <<"5">>) of
                                ok -> {R, H};
                                _ -> none
                            end;
                        error -> none
                    end;
                _ -> reading()
            end;
        _ -> reading()
    end.

proc_files() ->
    case {file:open("/proc/self/status", [raw, read, binary]),
          file:open("/proc/self/clear_refs", [raw, write, binary])} of
        {{ok, S}, {ok, C}} -> {S, C};
        {A, B} ->
            [file:close(F) || {ok, F} <- [A, B]],
            none
    end.

%% {Rss, Hwm} since the last reset, then reset; none when the mark cannot be reset.
reading() ->
    case proc_status() of
        {ok, R, H} ->
            case hwm_reset() of
                ok -> {R, H};
                _ -> none
            end;
        _ -> none
    end.
