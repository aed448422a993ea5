%% gate/probe/gate_probe_state.erl: inside a process that grew: which part of its state, its
%% process dictionary and its mailbox grew, and who started it.
%%
%% A server's state is read where it lives: a fun is run in the process itself through
%% sys:replace_state/3, walks the state there and sends back only a summary (each top-level
%% part's type, count and flat size), then throws, so the state is neither copied out nor
%% changed (sys answers the throw with an error and the process keeps its state). Only a
%% process waiting in an OTP receive loop (gen_server, gen_statem, gen_event, or hibernating
%% under proc_lib) is asked; any other is said not inspected, with why, without a message
%% sent to it. gate's own processes are never asked.
%%
%% Cost, bounded per snapshot (docs/reading-findings.md states it):
%%   before  every server that waits in its loop, registered ones first, at most
%%           ?BEFORE_MAX of them, all asked at once, ?BEFORE_BUDGET_MS in all; kept by the
%%           keeper
%%   after   the processes the after-snapshot names as growers (what a finding can name)
%%           that grew by ?FLOOR_BYTES (heap or refc binaries held) or ?FLOOR_MSGS, at most
%%           ?AFTER_MAX of them, largest first, ?AFTER_BUDGET_MS in all
%% A process asked must start answering within ?ASK_MS; at the after-snapshot its walk may
%% take what is left of the budget. Flat sizes are taken only in a process whose heap is at
%% most ?FLAT_MAX_WORDS (a larger state is counted, not sized); a mailbox is read only up to
%% ?MAILBOX_MAX messages. Part of the probe: see gate_probe.erl.
-module(gate_probe_state).
-gate_load(always).

-export([before/1, inside/4, started/3, tests_map/0, owners_map/0, test_of/2]).

-define(ASK_MS, 100).
-define(BEFORE_MAX, 2000).
-define(BEFORE_BUDGET_MS, 150).
-define(AFTER_MAX, 8).
-define(AFTER_BUDGET_MS, 500).
-define(FLOOR_BYTES, 262144).
-define(FLOOR_MSGS, 1000).
-define(FLAT_MAX_WORDS, 4194304).
-define(MAILBOX_MAX, 100000).
%% parts shipped per process and kind (state fields, dictionary shapes, mailbox shapes)
-define(PARTS_MAX, 16).
%% a map with at most this many keys, all atoms, is a record-like state: one part per key
-define(FIELDS_MAX, 64).
%% entries of one shape (dictionary keys, messages) sized; the rest take their mean
-define(SIZED_PER_SHAPE, 256).

-import(gate_probe_snapshot, [pid_text/1, name_text/1, mfa_text/1, initial_call/1]).

%% ---- Before: what each server holds, for the processes alive at the before-snapshot ----

%% #{Pid => Summary} for the servers waiting in their loop, within the budget; Skip: gate's
%% own processes. Every server is asked at once, so that one slow to answer (a connection
%% busy connecting, a server woken from hibernation) costs the others nothing: the budget
%% bounds the wait for all of them, not the sum of their answers.
before(Skip) ->
    Deadline = erlang:monotonic_time(millisecond) + ?BEFORE_BUDGET_MS,
    Named = [P || N <- erlang:registered(), P <- [whereis(N)], is_pid(P)],
    NamedSet = maps:from_keys(Named, []),
    Order = Named ++ [P || P <- erlang:processes(), not is_map_key(P, NamedSet)],
    case before_pick(Order, maps:from_keys(Skip, []), Deadline, ?BEFORE_MAX, []) of
        [] -> #{};
        Asked -> before_gather(Asked, Deadline)
    end.

%% [{Pid, Kind}] of the servers to ask, in Order, at most Left, picked before the deadline.
before_pick([], _Skip, _Deadline, _Left, Acc) -> lists:reverse(Acc);
before_pick(_, _Skip, _Deadline, 0, Acc) -> lists:reverse(Acc);
before_pick([P | Rest], Skip, Deadline, Left, Acc) ->
    case erlang:monotonic_time(millisecond) >= Deadline of
        true -> lists:reverse(Acc);
        false ->
            %% askable first: most processes are not servers, and own/1 reads more
            case not is_map_key(P, Skip) andalso askable(P) of
                {yes, Kind} ->
                    case own(P) of
                        false -> before_pick(Rest, Skip, Deadline, Left - 1, [{P, Kind} | Acc]);
                        true -> before_pick(Rest, Skip, Deadline, Left, Acc)
                    end;
                _ -> before_pick(Rest, Skip, Deadline, Left, Acc)
            end
    end.

%% Asks every server from a process of its own, which gathers the summaries until all have
%% answered or the deadline, then exits with them: an answer later than that goes to a
%% process that is gone, and nothing is left in the caller's mailbox.
before_gather(Asked, Deadline) ->
    Ref = make_ref(),
    {C, CRef} = spawn_monitor(fun() -> exit({Ref, gather(Asked, Deadline)}) end),
    receive
        {'DOWN', CRef, process, C, {Ref, Sums}} -> Sums;
        {'DOWN', CRef, process, C, _} -> #{}
    after ?BEFORE_BUDGET_MS + 1000 ->
            exit(C, kill),
            receive {'DOWN', CRef, process, C, _} -> #{} end
    end.

gather(Asked, Deadline) ->
    Me = self(),
    Tag = make_ref(),
    lists:foreach(fun({P, Kind}) -> ask_async(P, Kind, Me, Tag, Deadline) end, Asked),
    gather_wait(length(Asked), Tag, Deadline, #{}).

%% A server's summary comes as {Tag, Pid, Summary}; sys's own answer to the system message
%% ({Tag, Reply}: the walk's throw, as an error) says nothing more.
gather_wait(0, _Tag, _Deadline, Acc) -> Acc;
gather_wait(N, Tag, Deadline, Acc) ->
    receive
        {Tag, P, #{} = Sum} -> gather_wait(N - 1, Tag, Deadline, Acc#{P => Sum});
        {Tag, _P, _NotWalked} -> gather_wait(N - 1, Tag, Deadline, Acc);
        {Tag, _SysReply} -> gather_wait(N, Tag, Deadline, Acc)
    after max(0, Deadline - erlang:monotonic_time(millisecond)) -> Acc
    end.

%% The system message sys:replace_state/3 sends ({system, From, {replace_state, Fun}}),
%% sent without waiting; a gen_event manager's handlers are asked by a worker of their own.
ask_async(P, <<"gen_event">>, Me, Tag, Deadline) ->
    spawn(fun() ->
                  Timeout = max(1, min(?ASK_MS, Deadline - erlang:monotonic_time(millisecond))),
                  Me ! {Tag, P, case handlers(P, Timeout) of
                                    {ok, Sum} -> Sum;
                                    _ -> none
                                end}
          end);
ask_async(P, Kind, Me, Tag, _Deadline) ->
    Label = case Kind of <<"gen_statem">> -> data; _ -> state end,
    Walk = fun(S) ->
                   Me ! {Tag, self(), catch summarise(Label, S)},
                   throw(gate_probe_state_read)
           end,
    P ! {system, {Me, Tag}, {replace_state, Walk}}.

%% ---- After: inside the processes that grew ----

%% Rows: gate_probe_grew's grew_procs rows (pid text first, then figures, Born last); Before:
%% the keeper's set; Owners: spawn ancestry (pid -> test module). One map per process looked
%% at: #{pid, kind, inspected, why, parts, parts_before, started}, parts [{Kind, Where,
%% Type, Unit, Count, Bytes}] (Bytes -1: not sized), parts_before the same or none (not read
%% at the before-snapshot) or born.
inside(Rows, Before, Skip, Owners) ->
    Deadline = erlang:monotonic_time(millisecond) + ?AFTER_BUDGET_MS,
    States = case Before of
                 #{states := S} when is_map(S) -> S;
                 _ -> #{}
             end,
    Chosen = lists:sublist(
               lists:reverse(lists:keysort(1, [{growth(R), R} || R <- Rows, notable(R)])),
               ?AFTER_MAX),
    [inside_one(R, States, Skip, Owners, Deadline) || {_, R} <- Chosen].

%% by its heap or by the refc binaries it holds (a queue of binaries grows its heap little)
growth(R) -> max(element(8, R) - element(7, R), element(12, R) - element(11, R)).

notable(R) ->
    growth(R) >= ?FLOOR_BYTES orelse element(10, R) - element(9, R) >= ?FLOOR_MSGS.

inside_one(R, States, Skip, Owners, Deadline) ->
    PidText = element(1, R),
    P = list_to_pid(binary_to_list(PidText)),
    Born = element(13, R),
    Started = case Born of
                  true -> started(P, Owners, tests_map());
                  false -> #{}
              end,
    Base = #{pid => PidText, started => Started, mailbox_before => element(9, R),
             parts_before => case {Born, maps:get(P, States, none)} of
                                 {true, _} -> born;
                                 {false, none} -> none;
                                 {false, #{} = SB} -> maps:get(parts, fields_named(P, SB))
                             end},
    Left = Deadline - erlang:monotonic_time(millisecond),
    Look = case lists:member(P, Skip) orelse own(P) of
               true -> {no, <<"gate's own process">>};
               false when Left =< 0 ->
                   {no, <<"the snapshot's time budget for state reads was spent">>};
               false -> askable(P)
           end,
    Mailbox = mailbox_parts(P, element(10, R)),
    case Look of
        {yes, Kind} ->
            case ask(P, Kind, min(?ASK_MS, Left), Left) of
                {ok, #{parts := Parts}} ->
                    Base#{kind => Kind, inspected => true, why => <<>>,
                          parts => Parts ++ Mailbox};
                {error, Why} ->
                    Base#{kind => Kind, inspected => false, why => Why, parts => Mailbox}
            end;
        {no, Why} ->
            %% a plain process: its dictionary is read from outside (a copy, bounded)
            Base#{kind => <<"process">>, inspected => false, why => Why,
                  parts => dict_outside(P) ++ Mailbox}
    end.

%% ---- Which processes are asked ----

%% gate's own: the probe's helpers and the formatter
own(P) ->
    case erlang:process_info(P, [registered_name, initial_call]) of
        [{registered_name, N}, {initial_call, {M, _, _}}] ->
            own_name(N) orelse own_name(M) orelse
                case initial_call(P) of
                    {IM, _, _} -> own_name(IM);
                    _ -> false
                end;
        _ -> true
    end.

own_name(A) when is_atom(A) ->
    case atom_to_list(A) of
        "gate_probe" ++ _ -> true;
        "Elixir.Gate.Formatter" ++ _ -> true;
        _ -> false
    end;
own_name(_) -> false.

%% {yes, Kind} for a process waiting in an OTP receive loop; {no, Why} else.
askable(P) ->
    case erlang:process_info(P, [current_function, status]) of
        %% suspended where it waits: a system message would stay unread until resumed
        [{current_function, Cur}, {status, suspended}] ->
            {no, iolist_to_binary(["suspended (erlang:suspend_process/1) in ", mfa_text(Cur),
                                   "; it answers no system message until resumed"])};
        [{current_function, {gen_server, loop, _}}, _] -> {yes, <<"gen_server">>};
        [{current_function, {gen_statem, loop_receive, _}}, _] -> {yes, <<"gen_statem">>};
        [{current_function, {gen_event, fetch_msg, _}}, _] -> {yes, <<"gen_event">>};
        [{current_function, {erlang, hibernate, 3}}, _] ->
            case initial_call(P) of
                {_, _, _} = MFA when MFA =/= {erlang, apply, 2} ->
                    case erlang:process_info(P, dictionary) of
                        {dictionary, D} when is_list(D) ->
                            case lists:keymember('$ancestors', 1, D) of
                                true -> {yes, <<"hibernating server">>};
                                false -> {no, <<"hibernating, not under proc_lib">>}
                            end;
                        _ -> {no, <<"exited">>}
                    end;
                _ -> {no, <<"hibernating, not under proc_lib">>}
            end;
        [{current_function, Cur}, _] -> {no, not_waiting(P, Cur)};
        _ -> {no, <<"exited">>}
    end.

%% Why a process was not asked: a server busy in a callback (an OTP frame under it), or not an
%% OTP server at all.
not_waiting(P, Cur) ->
    Stack = case erlang:process_info(P, current_stacktrace) of
                {current_stacktrace, S} -> S;
                _ -> []
            end,
    Otp = [M || {M, _, _, _} <- Stack, lists:member(M, [gen_server, gen_statem, gen_event])],
    case Otp of
        [M | _] -> iolist_to_binary(["busy in a ", atom_to_binary(M), " callback, now in ",
                                     mfa_text(Cur), " (not asked: it answers no system "
                                     "message until it returns)"]);
        [] -> iolist_to_binary(["not an OTP server (waits in ", mfa_text(Cur),
                                "; it answers no system message)"])
    end.

%% ---- The ask ----

%% {ok, #{parts => Parts}} or {error, Why}, record fields named from the state module's debug
%% info (a file read: done only at the after-snapshot, for the few processes looked inside).
%% Timeout: how long the process may take to start answering; Left: how long its answer
%% may take in all (a large state's walk, on a busy machine, takes longer than the start).
ask(P, Kind, Timeout, Left) ->
    case ask_raw(P, Kind, Timeout, Left) of
        {ok, Sum} -> {ok, fields_named(P, Sum)};
        Error -> Error
    end.

%% The same with a record's fields as {record, Name, Index}. A worker sends the system message
%% sys:replace_state/3 sends and waits for the walk, so that an answer later than that lands
%% in a process that is gone, not in the caller's mailbox.
ask_raw(P, <<"gen_event">>, _Timeout, Left) -> handlers(P, max(1, Left));
ask_raw(P, Kind, Timeout, Left) ->
    Ref = make_ref(),
    Label = case Kind of <<"gen_statem">> -> data; _ -> state end,
    {W, WRef} = spawn_monitor(fun() -> exit({Ref, walk(P, Label, Timeout, Left)}) end),
    receive
        {'DOWN', WRef, process, W, {Ref, Result}} -> Result;
        {'DOWN', WRef, process, W, _} -> {error, <<"its state could not be walked">>}
    after max(Timeout, Left) + 100 ->
            exit(W, kill),
            receive {'DOWN', WRef, process, W, _} -> ok end,
            {error, <<"its state could not be walked within the snapshot's time budget">>}
    end.

%% In the worker: the walk says it started as soon as it runs in the process, then sends the
%% summary.
walk(P, Label, Timeout, Left) ->
    Me = self(),
    Tag = make_ref(),
    Walk = fun(S) ->
                   Me ! {Tag, started},
                   Me ! {Tag, catch summarise(Label, S)},
                   throw(gate_probe_state_read)
           end,
    P ! {system, {Me, Tag}, {replace_state, Walk}},
    Started = erlang:monotonic_time(millisecond),
    receive
        {Tag, started} ->
            receive
                {Tag, #{} = Sum} -> {ok, Sum};
                {Tag, _} -> {error, <<"its state could not be walked">>}
            after max(0, Left - (erlang:monotonic_time(millisecond) - Started)) ->
                    {error, <<"its state's walk did not end within the snapshot's time budget">>}
            end;
        %% sys answered without running the walk (a loop of its own that implements it)
        {Tag, _} -> {error, <<"its state could not be walked">>}
    after Timeout ->
            {error, iolist_to_binary(["did not answer a system message within ",
                                      integer_to_list(Timeout), " ms"])}
    end.

%% A gen_event manager's handlers, counted by module.
handlers(P, Timeout) ->
    case catch gen:call(P, self(), which_handlers, Timeout) of
        {ok, Hs} when is_list(Hs) ->
            G = lists:foldl(fun(H, Acc) ->
                                    M = case H of {Mod, _} -> Mod; Mod -> Mod end,
                                    maps:update_with(M, fun(C) -> C + 1 end, 1, Acc)
                            end, #{}, Hs),
            Parts = [{handlers, elixir_text(M), <<>>, <<"handlers">>, C, -1}
                     || {M, C} <- top(maps:to_list(G), 2)],
            {ok, #{parts => Parts}};
        _ -> {error, iolist_to_binary(["did not answer which_handlers within ",
                                       integer_to_list(Timeout), " ms"])}
    end.

%% Runs inside the asked process: its state's parts and its dictionary by key shape.
summarise(Label, S0) ->
    Sized = case erlang:process_info(self(), total_heap_size) of
                {total_heap_size, H} -> H =< ?FLAT_MAX_WORDS;
                _ -> false
            end,
    S = case {Label, S0} of
            {data, {_StateName, Data}} -> Data;
            _ -> S0
        end,
    #{parts => state_parts(Label, S, Sized) ++ dict_parts(get(), Sized)}.

state_parts(Label, S, Sized) ->
    Parts = case S of
                #{'__struct__' := Name} when is_atom(Name) ->
                    case container(S) of
                        none -> [{field, K, V} || {K, V} <- maps:to_list(S), K =/= '__struct__'];
                        _ -> [{whole, S}]
                    end;
                #{} when map_size(S) =< ?FIELDS_MAX ->
                    case lists:all(fun is_atom/1, maps:keys(S)) of
                        true -> [{key, K, V} || {K, V} <- maps:to_list(S)];
                        false -> [{whole, S}]
                    end;
                _ when is_tuple(S), tuple_size(S) > 1, is_atom(element(1, S)) ->
                    case container(S) of
                        none -> [{record, element(1, S), I, element(I, S)}
                                 || I <- lists:seq(2, min(tuple_size(S), ?FIELDS_MAX))];
                        _ -> [{whole, S}]
                    end;
                _ when is_tuple(S), tuple_size(S) =< 16, tuple_size(S) > 0 ->
                    case container(S) of
                        none -> [{element, I, element(I, S)} || I <- lists:seq(1, tuple_size(S))];
                        _ -> [{whole, S}]
                    end;
                _ -> [{whole, S}]
            end,
    [part(Label, P, Sized) || P <- Parts].

part(Label, {whole, V}, Sized) ->
    {Type, Unit, C} = measure(V),
    {Label, <<>>, Type, Unit, C, size_of(V, Sized)};
part(Label, {field, K, V}, Sized) ->
    {Type, Unit, C} = measure(V),
    {Label, iolist_to_binary(["field ", elixir_text(K)]), Type, Unit, C, size_of(V, Sized)};
part(Label, {key, K, V}, Sized) ->
    {Type, Unit, C} = measure(V),
    {Label, iolist_to_binary(["key ", elixir_text(K)]), Type, Unit, C, size_of(V, Sized)};
part(Label, {record, R, I, V}, Sized) ->
    {Type, Unit, C} = measure(V),
    %% the field's name is looked up outside the process (fields_named/2)
    {Label, {record, R, I}, Type, Unit, C, size_of(V, Sized)};
part(Label, {element, I, V}, Sized) ->
    {Type, Unit, C} = measure(V),
    {Label, iolist_to_binary(["element ", integer_to_list(I)]), Type, Unit, C,
     size_of(V, Sized)}.

size_of(V, true) -> erts_debug:flat_size(V) * erlang:system_info(wordsize);
size_of(_, false) -> -1.

%% The containers people keep in a state, each counted its own way.
container(#{'__struct__' := 'Elixir.MapSet', map := M}) when is_map(M) ->
    {<<"a MapSet">>, <<"members">>, map_size(M)};
container(#{'__struct__' := 'Elixir.MapSet'} = M) ->
    {<<"a MapSet">>, <<"members">>, map_size(M) - 1};
container({In, Out} = Q) when is_list(In), is_list(Out) ->
    case queue:is_queue(Q) of
        true -> {<<"a :queue">>, <<"items">>, queue:len(Q)};
        false -> none
    end;
container({N, T}) when is_integer(N), N >= 0, (T =:= nil orelse
                                               (is_tuple(T) andalso tuple_size(T) =:= 4)) ->
    {<<"a gb_tree">>, <<"entries">>, N};
container(_) -> none.

measure(V) ->
    case container(V) of
        {_, _, _} = C -> C;
        none -> measure1(V)
    end.

measure1(V) when is_map(V) ->
    case V of
        #{'__struct__' := N} when is_atom(N) ->
            {iolist_to_binary(["a ", elixir_text(N), " struct"]), <<"fields">>, map_size(V) - 1};
        _ -> {<<"a map">>, <<"entries">>, map_size(V)}
    end;
measure1(V) when is_list(V) -> {<<"a list">>, <<"elements">>, list_len(V, 0)};
measure1(V) when is_binary(V) -> {<<"a binary">>, <<"bytes">>, byte_size(V)};
measure1(V) when is_tuple(V) -> {<<"a tuple">>, <<"elements">>, tuple_size(V)};
measure1(V) when is_atom(V) -> {<<"an atom">>, <<>>, 0};
measure1(V) when is_number(V) -> {<<"a number">>, <<>>, 0};
measure1(V) when is_pid(V) -> {<<"a pid">>, <<>>, 0};
measure1(V) when is_reference(V) -> {<<"a reference">>, <<>>, 0};
measure1(V) when is_function(V) -> {<<"a fun">>, <<>>, 0};
measure1(_) -> {<<"a term">>, <<>>, 0}.

%% an improper list counts its cells
list_len([_ | T], N) -> list_len(T, N + 1);
list_len(_, N) -> N.

%% The process dictionary, grouped by the shape of its keys; proc_lib's and Elixir's own
%% keys are left out.
dict_parts(D, Sized) ->
    G = lists:foldl(fun({K, _} = KV, Acc) when is_atom(K) ->
                            case atom_to_binary(K) of
                                <<"$", _/binary>> -> Acc;
                                _ -> group_add({atom, K}, KV, Sized, Acc)
                            end;
                       ({K, _} = KV, Acc) -> group_add(shape(K), KV, Sized, Acc);
                       (_, Acc) -> Acc
                    end, #{}, D),
    [{dict, shape_text(S), <<>>, <<"keys">>, C, B} || {S, C, B} <- groups_top(G, ?PARTS_MAX)].

%% Groups by shape, {Count, SizedCount, SizedBytes}: at most ?SIZED_PER_SHAPE of a shape are
%% sized, the others counted (a flat_size call per entry costs more than the rest of the walk
%% together: 60 000 keys took half a second on a loaded machine).
group_add(Key, Term, Sized, Acc) ->
    case Acc of
        #{Key := {C, SC, SB}} when Sized, SC < ?SIZED_PER_SHAPE ->
            Acc#{Key := {C + 1, SC + 1, SB + flat_bytes(Term)}};
        #{Key := {C, SC, SB}} -> Acc#{Key := {C + 1, SC, SB}};
        _ when Sized -> Acc#{Key => {1, 1, flat_bytes(Term)}};
        _ -> Acc#{Key => {1, 0, 0}}
    end.

flat_bytes(T) -> erts_debug:flat_size(T) * erlang:system_info(wordsize).

%% The N largest groups by count, [{Key, Count, Bytes}]: Bytes the sized ones' when all were
%% sized, else their mean times the count; -1 when none was.
groups_top(G, N) ->
    L = [{K, C, if SC =:= 0 -> -1;
                   SC =:= C -> SB;
                   true -> SB * C div SC
                end} || {K, {C, SC, SB}} <- maps:to_list(G)],
    lists:sublist(lists:sort(fun({_, A, _}, {_, B, _}) -> A >= B end, L), N).

%% A plain process's dictionary, copied out (bounded by its heap).
dict_outside(P) ->
    case erlang:process_info(P, total_heap_size) of
        {total_heap_size, H} when H =< ?FLAT_MAX_WORDS ->
            case erlang:process_info(P, dictionary) of
                {dictionary, D} -> dict_parts(D, true);
                _ -> []
            end;
        _ -> []
    end.

%% The mailbox by the shape of its messages: read when it holds at most ?MAILBOX_MAX.
mailbox_parts(_P, Q) when Q =< 0 -> [];
mailbox_parts(_P, Q) when Q > ?MAILBOX_MAX ->
    [{mailbox, <<"not read: too many to copy">>, <<>>, <<"messages">>, Q, -1}];
mailbox_parts(P, _Q) ->
    case erlang:process_info(P, total_heap_size) of
        {total_heap_size, H} when H =< ?FLAT_MAX_WORDS ->
            case erlang:process_info(P, messages) of
                {messages, Ms} ->
                    G = lists:foldl(fun(M, Acc) -> group_add(msg_shape(M), M, true, Acc) end,
                                    #{}, Ms),
                    [{mailbox, shape_text(S), <<>>, <<"messages">>, C, B}
                     || {S, C, B} <- groups_top(G, 4)];
                _ -> []
            end;
        _ -> []
    end.

%% The largest groups by count: [{Key, Count}]
top(L, N) -> lists:sublist(lists:sort(fun({_, A}, {_, B}) -> A >= B end, L), N).

%% A message's shape, as a term shape_text/1 writes as Elixir does: {:DOWN, ...}, :tick
msg_shape(T) when is_tuple(T), tuple_size(T) > 0, is_atom(element(1, T)) ->
    {tuple, [element(1, T)], tuple_size(T) > 1};
msg_shape(T) when is_tuple(T) -> {class, <<"a tuple">>};
msg_shape(A) when is_atom(A) -> {atom, A};
msg_shape(B) when is_binary(B) -> {class, <<"a binary">>};
msg_shape(L) when is_list(L) -> {class, <<"a list">>};
msg_shape(M) when is_map(M) -> {class, <<"a map">>};
msg_shape(_) -> {class, <<"a term">>}.

%% A key's shape: atoms kept, everything else _ ({:session, _}); an atom key is itself.
%% A term, written once per group by shape_text/1 (a text per key costs too much).
shape(K) when is_atom(K) -> {atom, K};
shape(K) when is_tuple(K), tuple_size(K) > 0 ->
    {tuple, [case E of
                 _ when is_atom(E) -> E;
                 _ -> {}
             end || E <- lists:sublist(tuple_to_list(K), 4)], tuple_size(K) > 4};
shape(K) when is_binary(K) -> {class, <<"a binary">>};
shape(K) when is_integer(K) -> {class, <<"an integer">>};
shape(K) when is_reference(K) -> {class, <<"a reference">>};
shape(K) when is_pid(K) -> {class, <<"a pid">>};
shape(_) -> {class, <<"a term">>}.

shape_text({atom, A}) -> elixir_text(A);
shape_text({class, T}) -> T;
shape_text({tuple, Els, More}) ->
    iolist_to_binary([${, lists:join(<<", ">>, [case E of
                                                    {} -> <<"_">>;
                                                    _ -> elixir_text(E)
                                                end || E <- Els]),
                      case More of true -> <<", ...">>; false -> <<>> end, $}]).

%% :session, Foo.Bar, nil
elixir_text(A) when is_atom(A) ->
    case atom_to_binary(A) of
        <<"Elixir.", Rest/binary>> -> Rest;
        B when A =:= nil; A =:= true; A =:= false -> B;
        B -> <<$:, B/binary>>
    end;
elixir_text(I) when is_integer(I) -> integer_to_binary(I);
elixir_text(_) -> <<"_">>.

%% Record fields by name: the state's module (its proc_lib initial call) defines the record
%% in its debug info; without it, the field is "element N".
fields_named(P, #{parts := Parts} = Sum) ->
    Mod = case initial_call(P) of
              {M, _, _} -> M;
              _ -> undefined
          end,
    Sum#{parts => [case Where of
                       {record, R, I} -> setelement(2, Part, record_field(Mod, R, I));
                       _ -> Part
                   end || Part <- Parts, Where <- [element(2, Part)]]}.

record_field(Mod, R, I) ->
    Fields = case get({gate_probe_records, Mod}) of
                 undefined ->
                     F = records_of(Mod),
                     put({gate_probe_records, Mod}, F),
                     F;
                 F -> F
             end,
    case lists:keyfind(R, 1, Fields) of
        {R, Names} when length(Names) >= I - 1 ->
            iolist_to_binary(["field ", atom_to_binary(lists:nth(I - 1, Names)), " of #",
                              atom_to_binary(R), "{}"]);
        _ ->
            iolist_to_binary(["element ", integer_to_list(I), " of {", elixir_text(R),
                              ", ...}"])
    end.

records_of(Mod) ->
    try
        {Mod, Beam, _} = code:get_object_code(Mod),
        {ok, {Mod, [{debug_info, {debug_info_v1, Backend, Data}}]}} =
            beam_lib:chunks(Beam, [debug_info]),
        {ok, Forms} = Backend:debug_info(erlang_v1, Mod, Data, []),
        [{R, [field_name(F) || F <- Fs]} || {attribute, _, record, {R, Fs}} <- Forms]
    catch _:_ -> []
    end.

field_name({record_field, _, {atom, _, N}}) -> N;
field_name({record_field, _, {atom, _, N}, _}) -> N;
field_name({typed_record_field, F, _}) -> field_name(F);
field_name(_) -> '?'.

%% ---- Who started it ----

%% The test that was running when the process (or its first ancestor still known) was born,
%% from spawn ancestry; the code it runs; the process that started it. #{test, file, line,
%% module, code, by}, texts, each <<>> when unknown.
started(P, Owners, Tests) ->
    {Test, File, Line} = case ancestor_value(P, Tests) of
                             {_M, N, F, L} -> {name_text(N), F, L};
                             none -> {<<>>, <<>>, 0}
                         end,
    Module = case ancestor_value(P, Owners) of
                 none -> <<>>;
                 M -> name_text(M)
             end,
    #{test => Test, file => File, line => Line, module => Module,
      code => code_of(P), by => started_by(P)}.

%% The test a born process descends from, {Module, Name}, or none: what born groups are
%% told apart by.
test_of(P, Tests) ->
    case ancestor_value(P, Tests) of
        {M, N, _, _} -> {M, N};
        none -> none
    end.

owners_map() ->
    case application:get_env(gate_probe, spawn_owners) of
        {ok, M} when is_map(M) -> M;
        _ -> #{}
    end.

tests_map() ->
    case application:get_env(gate_probe, spawn_tests) of
        {ok, M} when is_map(M) -> M;
        _ -> #{}
    end.

%% What Map holds for P or its nearest ancestor (spawn ancestry, at most 32 up), or none.
ancestor_value(_P, Map) when map_size(Map) =:= 0 -> none;
ancestor_value(P, Map) -> gate_probe_grew:owner_of(P, Map, 32).

%% The code it was started with: proc_lib's initial call, else the fun it was spawned with
%% when its stack still shows it (the nearest fun frame, with its file and line) or it was
%% seen spawned with it, else <<>>.
code_of(P) ->
    case initial_call(P) of
        {erlang, apply, 2} ->
            case fun_frame(P) of
                <<>> -> seen_fun(P);
                Frame -> Frame
            end;
        {_, _, _} = MFA -> mfa_text(MFA);
        _ -> <<>>
    end.

fun_frame(P) ->
    case erlang:process_info(P, current_stacktrace) of
        {current_stacktrace, Stack} ->
            Funs = [{M, F, A, Loc} || {M, F, A, Loc} <- Stack, is_atom(F),
                                      lists:prefix("-", atom_to_list(F))],
            case lists:reverse(Funs) of
                [{M, F, A, Loc} | _] ->
                    Where = case {proplists:get_value(file, Loc), proplists:get_value(line, Loc)} of
                                {File, Line} when is_list(File), is_integer(Line) ->
                                    [" (", gate_probe_spawns:relative(File), ":",
                                     integer_to_list(Line), ")"];
                                _ -> []
                            end,
                    iolist_to_binary([mfa_text({M, F, arity(A)}), Where]);
                [] -> <<>>
            end;
        _ -> <<>>
    end.

%% The fun it was seen spawned with (gate_probe_spawns), where its object file says it is
%% written; <<>> when not seen.
seen_fun(P) ->
    case gate_probe_spawns:fun_of(P, undefined) of
        {M, F, A} ->
            Where = case gate_probe_spawns:fun_location(M, F) of
                        [{file, File}, {line, Line}] -> [" (", File, ":", integer_to_list(Line), ")"];
                        [{file, File}] -> [" (", File, ")"];
                        [] -> []
                    end,
            unicode:characters_to_binary([mfa_text({M, F, A}), Where]);
        none -> <<>>
    end.

arity(A) when is_integer(A) -> A;
arity(L) when is_list(L) -> length(L);
arity(_) -> 0.

%% The process that started it: proc_lib's first ancestor (a supervisor for children), else
%% its parent, by registered name or initial call; <<>> when gone or a test's own process.
started_by(P) ->
    Parent = case erlang:process_info(P, dictionary) of
                 {dictionary, D} ->
                     case lists:keyfind('$ancestors', 1, D) of
                         {_, [A | _]} -> A;
                         _ -> parent(P)
                     end;
                 _ -> none
             end,
    case Parent of
        A1 when is_atom(A1), A1 =/= none -> name_text(A1);
        Pid when is_pid(Pid) ->
            case erlang:process_info(Pid, registered_name) of
                {registered_name, N} when is_atom(N), N =/= [] -> name_text(N);
                {registered_name, _} ->
                    case initial_call(Pid) of
                        {erlang, apply, 2} -> <<>>;
                        {_, _, _} = MFA -> iolist_to_binary([pid_text(Pid), " ", mfa_text(MFA)]);
                        _ -> <<>>
                    end;
                _ -> <<>>
            end;
        _ -> <<>>
    end.

parent(P) ->
    case erlang:process_info(P, parent) of
        {parent, Parent} when is_pid(Parent) -> Parent;
        _ -> none
    end.
