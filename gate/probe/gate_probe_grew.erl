%% gate/probe/gate_probe_grew.erl: what grew since the before-snapshot, and which
%% test module the leftovers belong to (owners).
%%
%% Called by gate_probe_snapshot's deep after-snapshot with the keeper's before set; every
%% answer is bounded (top N, groups). Part of the probe: see gate_probe.erl.
-module(gate_probe_grew).
-gate_load(always).

-export([what_grew/5, owners/2]).
%% for gate_probe_state: who started a process
-export([owner_of/3]).

%% New persistent_term entries and new atoms looked at at most (beyond, a sample), groups
%% shipped per kind.
-define(MAX_NEW_LOOKED, 100000).
-define(MAX_GROUPS, 20).
%% ETS rows whose refc binaries are measured one by one: a table with more rows
%% is measured on that many and scaled to all of them, the bound being stated here.
-define(ETS_BIN_ROWS, 20000).
%% Terms visited per row or persistent_term value at most (a deep value is cut there).
-define(TERM_BUDGET, 256).

-import(gate_probe_snapshot, [top_add/4, top_list/1, initial_call/1, ets_id/1, pid_text/1,
                              id_text/1, name_text/1, mfa_text/1]).

%% ---- What grew since the before-snapshot ----
%% Computed here from the keeper's before set, bounded: the top N processes by growth of
%% memory, mailbox and refc binary bytes (from the one scan pass), the top N ETS tables by
%% growth in bytes and in rows (created during the run or before), the persistent_term keys
%% and atoms created during the run grouped by their shape, and the ports opened during the
%% run and still open, grouped by name and owner.
what_grew(Before, N, GMem, GMq, GBin) ->
    Owners = spawn_owner_map(),
    Tops = top_list(GMem) ++ top_list(GMq) ++ top_list(GBin),
    Grew = maps:from_list([{Pid, G} || {_, Pid, G} <- Tops]),
    Procs = [Row || {Pid, G} <- maps:to_list(Grew), Row <- [grew_row(Pid, G, Owners)],
                    Row =/= skip],
    {PortsN, Ports} = ports_new(Before, Owners),
    #{grew_procs => Procs,
      grew_ets => ets_growers(Before, N, Owners),
      pterm_new => pterm_new(Before),
      ports_opened => PortsN,
      ports => Ports,
      atoms_new => atoms_new(Before),
      code_new => code_new(Before),
      %% leaks spread thin: many small tables, many monitors or links
      ets_groups_new => ets_groups_new(Before, Owners),
      grew_refs => grew_refs(Procs),
      %% inside the processes that grew: their state's parts, dictionary, mailbox, starter
      inside => gate_probe_state:inside(Procs, Before, [], Owners)}.

%% ---- Leaks spread thin: tables grouped by name and owner, monitors and links ----

%% Monitors, links: a process that holds this many is named with its counts.
-define(MANY_REFS, 50).

%% ETS tables created during the run and still alive, grouped by name and owner (400 small
%% tables leak as much as one large one): [{Name, OwnerPid, OwnerName, OwnerCall,
%% TestModule, Count, Bytes}], most bytes first; the owner and module are an example's.
ets_groups_new(Before, Owners) ->
    W = erlang:system_info(wordsize),
    BeforeEts = maps:get(ets, Before),
    G = lists:foldl(
          fun(T, Acc) ->
                  case catch {ets_id(T), ets:info(T, name), ets:info(T, owner),
                              ets:info(T, memory)} of
                      {Id, Name, Owner, M} when is_atom(Name), is_pid(Owner), is_integer(M) ->
                          case maps:is_key(Id, BeforeEts) of
                              true -> Acc;
                              false ->
                                  maps:update_with({Name, Owner},
                                                   fun({C, B}) -> {C + 1, B + M * W} end,
                                                   {1, M * W}, Acc)
                          end;
                      _ -> Acc
                  end
          end, #{}, ets:all()),
    Rows = [begin
                {ON, OC} = proc_label(Owner),
                {name_text(Name), pid_text(Owner), ON, OC, module_text(Owner, Owners), C, B}
            end || {{Name, Owner}, {C, B}} <- maps:to_list(G), C > 1],
    lists:sublist(lists:reverse(lists:keysort(7, Rows)), ?MAX_GROUPS).

%% The monitors, monitored_by and links of the processes that grew, for those holding
%% ?MANY_REFS or more of one: [{Pid, Monitors, MonitoredBy, Links}]. The rules name a process
%% by them from thousands on (rules/drilldown.c); --repeat pairs the two ends of monitors
%% that grow by tens in every run (rules/repeat.c), hence the lower bar here.
grew_refs(Rows) ->
    lists:filtermap(
      fun(Row) ->
              Pid = list_to_pid(binary_to_list(element(1, Row))),
              case erlang:process_info(Pid, [monitors, monitored_by, links]) of
                  [{monitors, Ms}, {monitored_by, Bs}, {links, Ls}] ->
                      {Nm, Nb, Nl} = {length(Ms), length(Bs), length(Ls)},
                      case max(Nm, max(Nb, Nl)) >= ?MANY_REFS of
                          true -> {true, {element(1, Row), Nm, Nb, Nl}};
                          false -> false
                      end;
                  _ -> false
              end
      end, Rows).

spawn_owner_map() ->
    case application:get_env(gate_probe, spawn_owners) of
        {ok, Map} when is_map(Map) -> Map;
        _ -> #{}
    end.

module_text(P, Owners) when is_pid(P), map_size(Owners) > 0 ->
    case owner_of(P, Owners, 32) of
        none -> <<>>;
        Mod -> name_text(Mod)
    end;
module_text(_, _) -> <<>>.

%% {Pid, Name, InitialCall, CurrentFunction, Ancestor, TestModule, Mem0, Mem, Mq0, Mq,
%%  Bin0, Bin, Born}
grew_row(Pid, {M0, Q0, B0, M, Q, B, Born}, Owners) ->
    case erlang:process_info(Pid, [registered_name, current_function]) of
        [{registered_name, Name}, {current_function, Cur}] ->
            {pid_text(Pid), name_text(Name), call_text(Pid), mfa_text(Cur),
             ancestor_text(Pid), module_text(Pid, Owners), M0, M, Q0, Q, B0, B, Born};
        _ -> skip
    end.

%% The initial call; for a spawned fun (erlang:apply/2 says nothing) the code that spawned
%% it when known ("spawned by ..., waiting in ..."; gate_probe_spawns:fun_label/1), else
%% erlang:apply/2 (the rules then say where it is now).
call_text(P) ->
    MFA = initial_call(P),
    case gate_probe_spawns:code_label(P, MFA) of
        none -> mfa_text(MFA);
        Label -> Label
    end.

%% The nearest named ancestor: proc_lib's '$ancestors' (registered names, or pids that may
%% be registered), else a registered parent or grandparent (init says nothing).
ancestor_text(P) ->
    Ancestors = case erlang:process_info(P, dictionary) of
                    {dictionary, D} ->
                        case lists:keyfind('$ancestors', 1, D) of
                            {_, L} when is_list(L) -> L;
                            _ -> []
                        end;
                    _ -> []
                end,
    case first_named(Ancestors) of
        <<>> -> parent_named(P, 2);
        Name -> Name
    end.

first_named([A | _]) when is_atom(A) -> name_text(A);
first_named([P | Rest]) when is_pid(P) ->
    case erlang:process_info(P, registered_name) of
        {registered_name, N} when is_atom(N), N =/= [] -> name_text(N);
        _ -> first_named(Rest)
    end;
first_named([_ | Rest]) -> first_named(Rest);
first_named([]) -> <<>>.

parent_named(_P, 0) -> <<>>;
parent_named(P, K) ->
    case erlang:process_info(P, parent) of
        {parent, Parent} when is_pid(Parent) ->
            case erlang:process_info(Parent, registered_name) of
                {registered_name, init} -> <<>>;
                {registered_name, N} when is_atom(N), N =/= [] -> name_text(N);
                _ -> parent_named(Parent, K - 1)
            end;
        _ -> <<>>
    end.

%% {Name, Id, OwnerPid, OwnerName, OwnerCall, TestModule, Rows0, Rows, Bytes0, Bytes, Created,
%%  BinBytes}: BinBytes estimates the refc binaries its rows hold (off the table's own memory,
%%  under erlang:memory(binary)), measured on up to ?ETS_BIN_ROWS rows
ets_growers(Before, N, Owners) ->
    W = erlang:system_info(wordsize),
    BeforeEts = maps:get(ets, Before),
    Empty = {N, 0, []},
    {TB, TR} = lists:foldl(
                 fun(T, {AB, AR} = Acc) ->
                         case catch {ets_id(T), ets:info(T, size), ets:info(T, memory)} of
                             {Id, S, M} when is_integer(S), is_integer(M) ->
                                 {S0, B0, Created} = case maps:get(Id, BeforeEts, created) of
                                                         {S1, B1} -> {S1, B1, false};
                                                         created -> {0, 0, true};
                                                         _ -> {S, M * W, false}
                                                     end,
                                 G = {T, Id, S0, S, B0, M * W, Created},
                                 {top_add(M * W - B0, T, G, AB), top_add(S - S0, T, G, AR)};
                             _ -> Acc
                         end
                 end, {Empty, Empty}, ets:all()),
    Gs = maps:from_list([{T, G} || {_, T, G} <- top_list(TB) ++ top_list(TR)]),
    [Row || G <- maps:values(Gs), Row <- [ets_grew_row(G, Owners)], Row =/= skip].

ets_grew_row({T, Id, S0, S, B0, B, Created}, Owners) ->
    case catch {ets:info(T, name), ets:info(T, owner)} of
        {Name, Owner} when is_atom(Name), is_pid(Owner) ->
            {OwnerName, OwnerCall} = proc_label(Owner),
            {name_text(Name), id_text(Id), pid_text(Owner), OwnerName, OwnerCall,
             module_text(Owner, Owners), S0, S, B0, B, Created, ets_bin_bytes(T, S)};
        _ -> skip
    end.

%% What erlang:memory(binary) counts for one refc binary beyond its bytes (its header and the
%% allocator's block): measured here, not assumed, in a fresh process that no GC disturbs, on
%% 200 fresh 100-byte binaries; five times, the median kept, as another process may free or
%% allocate binaries meanwhile (200 gave the figure 2 000 did, 44 bytes on OTP 25, in a third
%% of the time: 0.5 ms against 1.4-4.8). Measured once per snapshot, when a figure first needs
%% it (bin_per/0): a run with no grown table or new persistent_term holding binaries skips it.
bin_per() ->
    case get(gate_probe_bin_per) of
        undefined ->
            Per = bin_overhead(),
            put(gate_probe_bin_per, Per),
            Per;
        Per -> Per
    end.

bin_overhead() ->
    Runs = [in_fresh(fun() ->
                             Proto = binary:copy(<<0:800>>),
                             M0 = erlang:memory(binary),
                             Bs = [binary:copy(Proto) || _ <- lists:seq(1, 200)],
                             M1 = erlang:memory(binary),
                             (M1 - M0) div length(Bs) - byte_size(Proto)
                     end, 0) || _ <- lists:seq(1, 5)],
    max(0, lists:nth(3, lists:sort(Runs))).

%% Fun's value, computed in a fresh process with a heap large enough for a sample of rows
%% (nothing else of the probe's on it); Default when it fails or takes over 10 s.
in_fresh(Fun, Default) ->
    {Pid, Ref} = spawn_opt(fun() -> exit({ok, Fun()}) end,
                           [monitor, {min_heap_size, 1 bsl 17}]),
    receive
        {'DOWN', Ref, process, Pid, {ok, V}} -> V;
        {'DOWN', Ref, process, Pid, _} -> Default
    after 10000 ->
            exit(Pid, kill),
            receive {'DOWN', Ref, process, Pid, _} -> Default end
    end.

%% The bytes erlang:memory(binary) counts for the refc binaries a table's rows reference:
%% the rows (every row up to ?ETS_BIN_ROWS, scaled to all rows beyond) are copied into a
%% fresh process, whose refc binaries process_info(binary) then lists exactly (the small
%% ones too, e.g. a 32-byte binary an append built; one binary referenced by two rows once);
%% 0 for a table this process may not read (private) or an empty one.
ets_bin_bytes(_T, 0) -> 0;
ets_bin_bytes(T, Rows) ->
    case in_fresh(fun() ->
                     %% a private table (another owner's) raises; caught here, as an
                     %% uncaught error would be logged in the suite's output
                     case try ets:select(T, [{'_', [], ['$_']}], ?ETS_BIN_ROWS)
                          catch error:badarg -> '$end_of_table'
                          end of
                         {Objs, _} when Objs =/= [] ->
                             erlang:garbage_collect(),
                             {binary, Bins} = erlang:process_info(self(), binary),
                             Unique = maps:from_list([{Id, S} || {Id, S, _} <- Bins]),
                             {lists:sum(maps:values(Unique)), map_size(Unique), length(Objs)};
                         _ -> none
                     end
             end, none) of
        %% no refc binary among the rows: nothing to measure bin_per/0 for
        {_, 0, _} -> 0;
        {Bytes, Count, Objs} -> (Bytes + Count * bin_per()) * Rows div Objs;
        none -> 0
    end.

%% The refc binaries one term references (over 64 bytes: smaller ones are copied into the
%% term), each as erlang:memory(binary) counts it, visiting at most ?TERM_BUDGET terms.
term_bin_bytes(T) ->
    case refc_bytes(T, {0, 0, ?TERM_BUDGET}) of
        {_, 0, _} -> 0;
        {Sum, Count, _} -> Sum + Count * bin_per()
    end.

%% {Bytes, Count, Budget}: the binaries' bytes and how many
refc_bytes(_, {Sum, N, Budget}) when Budget =< 0 -> {Sum, N, 0};
refc_bytes(B, {Sum, N, Budget}) when is_binary(B), byte_size(B) > 64 ->
    {Sum + binary:referenced_byte_size(B), N + 1, Budget - 1};
refc_bytes(T, {Sum, N, Budget}) when is_tuple(T) ->
    lists:foldl(fun refc_bytes/2, {Sum, N, Budget - 1}, tuple_to_list(T));
refc_bytes([H | T], {Sum, N, Budget}) ->
    refc_bytes(T, refc_bytes(H, {Sum, N, Budget - 1}));
refc_bytes(M, {Sum, N, Budget}) when is_map(M) ->
    refc_bytes(maps:values(M), {Sum, N, Budget - 1});
refc_bytes(_, {Sum, N, Budget}) -> {Sum, N, Budget - 1}.

%% {RegisteredName, Call}: the call is the initial call, or for a spawned fun (which starts
%% in erlang:apply/2 and says nothing) the code that spawned it and where it is now.
proc_label(P) ->
    Name = case erlang:process_info(P, registered_name) of
               {registered_name, N} when is_atom(N), N =/= [] -> name_text(N);
               _ -> <<>>
           end,
    Call = case initial_call(P) of
               {erlang, apply, 2} -> gate_probe_spawns:fun_label(P);
               MFA -> mfa_text(MFA)
           end,
    {Name, Call}.

%% persistent_term entries created during the run, grouped by the shape of their key:
%% [{Shape, Count, Bytes, ExampleKey, BinBytes}], largest count first; BinBytes: the refc
%% binaries the values reference, measured on the first ?MAX_NEW_LOOKED values.
pterm_new(Before) ->
    case maps:get(pterm_keys, Before, none) of
        Keys when is_map(Keys) ->
            W = erlang:system_info(wordsize),
            {Groups, _} = lists:foldl(
                            fun({K, V}, {G, Seen}) ->
                                    case maps:is_key(K, Keys) of
                                        true -> {G, Seen};
                                        false when Seen >= ?MAX_NEW_LOOKED ->
                                            {group_add(key_shape(K), 1, {0, 0}, K, G), Seen};
                                        false ->
                                            Bytes = try erts_debug:flat_size(V) * W
                                                    catch _:_ -> 0 end,
                                            Bin = term_bin_bytes(V),
                                            {group_add(key_shape(K), 1, {Bytes, Bin}, K, G),
                                             Seen + 1}
                                    end
                            end, {#{}, 0}, persistent_term:get()),
            [{S, C, B, E, Bin} || {S, C, {B, Bin}, E} <- groups_top(Groups)];
        _ -> []
    end.

%% B: a byte count, or {Bytes, BinBytes} (persistent_term), summed alike.
group_add(Shape, C, B, Example, G) ->
    maps:update_with(Shape, fun({C0, B0, E}) -> {C0 + C, bytes_add(B0, B), E} end,
                     {C, B, Example}, G).

bytes_add({A, B}, {C, D}) -> {A + C, B + D};
bytes_add(A, C) -> A + C.

groups_top(Groups) ->
    Sorted = lists:reverse(lists:keysort(2, [{S, C, B, example_text(E)}
                                             || {S, {C, B, E}} <- maps:to_list(Groups)])),
    lists:sublist(Sorted, ?MAX_GROUPS).

%% As an Elixir developer writes it: {WhatGrew.Settings, 17}, :user_1, "key".
example_text(A) when is_atom(A) -> name_text(A);
example_text(T) ->
    B = iolist_to_binary(elixir_text(T, 3)),
    case byte_size(B) > 120 of
        true -> <<(binary:part(B, 0, 117))/binary, "...">>;
        false -> B
    end.

elixir_text(A, _) when is_atom(A) ->
    case atom_to_binary(A) of
        <<"Elixir.", Rest/binary>> -> Rest;
        Bin when A =:= true; A =:= false; A =:= nil -> Bin;
        Bin -> [$:, Bin]
    end;
elixir_text(T, D) when is_tuple(T), D > 0 ->
    [${, lists:join(", ", [elixir_text(E, D - 1) || E <- tuple_to_list(T)]), $}];
elixir_text(T, _) -> io_lib:format("~0tp", [T]).

%% A key's shape: digit runs become #, so that user_1 .. user_4000 are one group; a tuple
%% keeps its atoms ({MyApp.Cache, _}); other terms by their type.
key_shape(K) when is_atom(K) -> digits_out(name_text(K));
key_shape(K) when is_binary(K), byte_size(K) =< 120 ->
    case io_lib:printable_unicode_list(unicode:characters_to_list(K)) of
        true -> <<$", (digits_out(K))/binary, $">>;
        false -> <<"binary">>
    end;
key_shape(K) when is_tuple(K), tuple_size(K) > 0 ->
    Els = [case E of
               _ when is_atom(E) -> digits_out(name_text(E));
               _ -> <<"_">>
           end || E <- lists:sublist(tuple_to_list(K), 4)],
    More = case tuple_size(K) > 4 of true -> [<<", ...">>]; false -> [] end,
    iolist_to_binary([${, lists:join(<<", ">>, Els), More, $}]);
key_shape(K) when is_integer(K) -> <<"integer">>;
key_shape(K) when is_reference(K) -> <<"reference">>;
key_shape(K) when is_list(K) -> <<"list">>;
key_shape(_) -> <<"term">>.

%% A number that counts (user_12, item-7, key42), not one inside a word (i18n, Base64): a
%% run of digits becomes # when no ASCII letter comes right before it, or when it ends the
%% name (re's "(?<![A-Za-z0-9])[0-9]+|[0-9]+$", written out: the regex cost 3-4 us a name,
%% and a suite's run makes a thousand atoms or more).
digits_out(B) -> digits_out(B, <<>>, false).

digits_out(<<>>, Acc, _AfterLetter) -> Acc;
digits_out(<<C, _/binary>> = B, Acc, AfterLetter) when C >= $0, C =< $9 ->
    N = digit_run(B, 0),
    <<Run:N/binary, Rest/binary>> = B,
    Out = case AfterLetter andalso Rest =/= <<>> andalso Rest =/= <<"\n">> of
              true -> Run;
              false -> <<"#">>
          end,
    digits_out(Rest, <<Acc/binary, Out/binary>>, false);
digits_out(<<C, Rest/binary>>, Acc, _) ->
    digits_out(Rest, <<Acc/binary, C>>, (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z)).

digit_run(<<C, Rest/binary>>, N) when C >= $0, C =< $9 -> digit_run(Rest, N + 1);
digit_run(_, N) -> N.

%% Atoms created during the run, by shape: atoms are numbered in the order they are made,
%% so those from the before count up are new; each is read by its index (the external
%% format's internal atom reference). At most ?MAX_NEW_LOOKED of them, evenly sampled.
atoms_new(Before) ->
    case maps:get(atoms, Before, none) of
        From when is_integer(From) ->
            To = min(erlang:system_info(atom_count), 1 bsl 24),
            Step = max(1, (To - From) div ?MAX_NEW_LOOKED),
            try
                Groups = atoms_fold(From, To, Step, #{}),
                [{S, C, 0, E} || {S, C, _, E} <- groups_top(Groups)]
            catch _:_ -> []
            end;
        _ -> []
    end.

atoms_fold(I, To, _Step, G) when I >= To -> G;
atoms_fold(I, To, Step, G) ->
    A = binary_to_term(<<131, 75, I:24>>),
    true = is_atom(A),
    atoms_fold(I + Step, To, Step, group_add(digits_out(name_text(A)), Step, 0, A, G)).

%% Modules loaded during the run and still loaded, by where they came from
%% (gate_probe_code:origin/3): disk (an object file), test (compiled from the suite's own
%% files: a script, or a source under the test paths, or loaded while one of them compiled)
%% and created (every other module
%% compiled in memory: Module.create, Code.compile_string, code:load_binary of generated
%% code).
%% #{disk => {N, Bytes, Lits}, test => {N, Bytes, Lits}, created => {N, Bytes, Lits},
%% literals_unread => N, groups => [{Shape, N, Bytes, Example}]}: Bytes their code
%% (erlang:system_info(loaded)), Lits the refc binaries their literals hold
%% (gate_probe_code:literals/2; unread: modules whose object code could not be read), the
%% created ones grouped by shape (CodeLeak.Tpl.T1 .. T1500 are CodeLeak.Tpl.*), most first;
%% none without the before set. A module with no current code (deleted, its old code not yet
%% purged) is not counted.
code_new(Before) ->
    case maps:get(modules, Before, none) of
        Mods when is_map(Mods) ->
            New = [M || M <- erlang:loaded(), not maps:is_key(M, Mods)],
            Sizes = code_sizes(New),
            Dirs = gate_probe_code:suite_dirs(),
            Loads = gate_probe_code:loads(),
            Loaded = [{M, B, gate_probe_code:origin(M, Dirs, Loads)}
                      || M <- New, B <- [maps:get(loaded_name(M), Sizes, 0)], B > 0],
            {Lits, Unread} = gate_probe_code:literals([M || {M, _, _} <- Loaded], Loads),
            Empty = {0, 0, 0},
            {D, T, C, G} = lists:foldl(
                             fun({M, B, O}, {D0, T0, C0, G0}) ->
                                     L = maps:get(M, Lits, 0),
                                     case O of
                                         disk -> {count_add(D0, B, L), T0, C0, G0};
                                         suite -> {D0, count_add(T0, B, L), C0, G0};
                                         created -> {D0, T0, count_add(C0, B, L),
                                                     group_add(module_shape(M), 1, B, M, G0)}
                                     end
                             end, {Empty, Empty, Empty, #{}}, Loaded),
            #{disk => D, test => T, created => C, literals_unread => Unread,
              groups => groups_top(G)};
        _ -> none
    end.

count_add({N, B0, L0}, B, L) -> {N + 1, B0 + B, L0 + L}.

%% A module's shape: its namespace (CodeLeak.Tpl.T12 is CodeLeak.Tpl.*), or, for a name with
%% no namespace, its digit runs as # (tpl_12 is tpl_#).
module_shape(M) ->
    Name = name_text(M),
    case binary:matches(Name, <<".">>) of
        [] -> digits_out(Name);
        Dots ->
            {Last, _} = lists:last(Dots),
            <<(binary:part(Name, 0, Last))/binary, ".*">>
    end.

%% Each module's code bytes, from erlang:system_info(loaded) ("Name Bytes" lines, the name
%% quoted as Erlang writes it: 'Elixir.Enum'), for the modules asked only
code_sizes([]) -> #{};
code_sizes(Mods) ->
    Want = maps:from_keys([loaded_name(M) || M <- Mods], []),
    lists:foldl(fun(Line, Acc) ->
                        case binary:split(Line, <<" ">>, [global, trim_all]) of
                            [Name, Size] when is_map_key(Name, Want) ->
                                try Acc#{Name => binary_to_integer(Size)}
                                catch _:_ -> Acc end;
                            _ -> Acc
                        end
                end, #{}, binary:split(erlang:system_info(loaded), <<"\n">>, [global])).

loaded_name(M) -> iolist_to_binary(io_lib:write_atom(M)).

%% Ports opened during the run and still open: their count, and by name and owner (its
%% registered name, else its initial call) [{Name, OwnerPid, OwnerName, OwnerCall,
%% TestModule, Count, OsPid}], most first; the owner, module and OS pid are an example's.
ports_new(Before, Owners) ->
    case maps:get(ports, Before, none) of
        BeforePorts when is_map(BeforePorts) ->
            New = [P || P <- erlang:ports(), not maps:is_key(P, BeforePorts)],
            Groups = lists:foldl(
                       fun(P, G) ->
                               case {erlang:port_info(P, name), erlang:port_info(P, connected),
                                     erlang:port_info(P, os_pid)} of
                                   {{name, Name}, {connected, Owner}, {os_pid, Os}} ->
                                       {ON, OC} = proc_label(Owner),
                                       Key = {port_name(Name), ON, OC},
                                       maps:update_with(Key, fun({C, E}) -> {C + 1, E} end,
                                                        {1, {Owner, Os}}, G);
                                   _ -> G
                               end
                       end, #{}, New),
            Rows = [{Name, pid_text(Owner), ON, OC, module_text(Owner, Owners), C,
                     case Os of I when is_integer(I) -> I; _ -> 0 end}
                    || {{Name, ON, OC}, {C, {Owner, Os}}} <- maps:to_list(Groups)],
            {length(New), lists:sublist(lists:reverse(lists:keysort(6, Rows)), ?MAX_GROUPS)};
        _ -> {0, []}
    end.

port_name(Name) ->
    B = case unicode:characters_to_binary(Name) of
            Bin when is_binary(Bin) -> Bin;
            _ -> <<"?">>
        end,
    case byte_size(B) > 120 of
        true -> <<(binary:part(B, 0, 117))/binary, "...">>;
        false -> B
    end.

%% Which test module the leftovers belong to, by spawn ancestry: the formatter learnt which
%% processes each test module's process spawned (its tests, through a trace of that process
%% alone); a process born during the run and still alive is walked up its parents
%% (process_info parent, which names a parent even after it died) until one of those. Per
%% module: {Module, Processes, ProcessMemory, BinaryBytesAfterGC, Tables, TableBytes} for the
%% born processes and the ETS tables created during the run that they own. Exact for async
%% modules too; processes started from elsewhere (a supervisor, a pool) are nobody's.
owners(_Born, none) -> [];
owners(Born, Before) ->
    case application:get_env(gate_probe, spawn_owners) of
        {ok, Map} when map_size(Map) > 0 ->
            Acc0 = lists:foldl(
                     fun({P, M, Bin}, Acc) ->
                             owner_add(owner_of(P, Map, 32), {1, M, Bin, 0, 0}, Acc)
                     end, #{}, Born),
            W = erlang:system_info(wordsize),
            BeforeEts = maps:get(ets, Before),
            Acc1 = lists:foldl(
                     fun(T, Acc) ->
                             case catch {ets_id(T), ets:info(T, owner), ets:info(T, memory)} of
                                 {Id, Owner, Mem} when is_pid(Owner), is_integer(Mem) ->
                                     case maps:is_key(Id, BeforeEts) of
                                         true -> Acc;
                                         false -> owner_add(owner_of(Owner, Map, 32),
                                                            {0, 0, 0, 1, Mem * W}, Acc)
                                     end;
                                 _ -> Acc
                             end
                     end, Acc0, ets:all()),
            [{atom_to_binary(Mod), P, M, B, T, TB} || {Mod, {P, M, B, T, TB}} <- maps:to_list(Acc1)];
        _ -> []
    end.

owner_add(none, _, Acc) -> Acc;
owner_add(Mod, {P, M, B, T, TB}, Acc) ->
    maps:update_with(Mod, fun({P0, M0, B0, T0, TB0}) -> {P0 + P, M0 + M, B0 + B, T0 + T, TB0 + TB} end,
                     {P, M, B, T, TB}, Acc).

owner_of(_P, _Map, 0) -> none;
owner_of(P, Map, N) ->
    case Map of
        #{P := Mod} -> Mod;
        _ ->
            case erlang:process_info(P, parent) of
                {parent, Parent} when is_pid(Parent) -> owner_of(Parent, Map, N - 1);
                _ -> none
            end
    end.
