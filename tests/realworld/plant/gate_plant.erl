%% tests/realworld/plant/gate_plant.erl: leak shapes gate's tests plant in any Phoenix
%% application without changing a line of it, filled by the application's own requests as its
%% own tests make them.
%%
%% The harness compiles this module into a folder of its own and boots the node gate starts
%% with ERL_AFLAGS="-pa DIR -s gate_plant start" and GATE_PLANT=KIND[,KIND...]. start/0 spawns
%% a watcher that waits for the telemetry application (started with the application under
%% test), attaches one handler to [phoenix, endpoint, stop] (Plug.Telemetry in every Phoenix
%% endpoint, run before each response is sent, also under Phoenix.ConnTest and LiveViewTest)
%% and starts the holders the chosen shapes need: processes born during the run and alive at
%% its end, as an application's own children would be. It attaches again when telemetry
%% restarts. Without GATE_PLANT it does nothing, so a node booted with the flags is unchanged.
%%
%% Shapes (GATE_PLANT_SMALL=1 makes each one unit per request, kilobytes per suite):
%%   bodies    a gen_server (GatePlant.BodyKeeper) keeping every response body with the whole
%%             request inspected as text, as a request recorder for debugging might
%%   sessions  a public ETS table `sessions` that gets a row per authenticated request (the
%%             request's current_user assign and session token) and is never emptied
%%   pages     a page cache gen_server (GatePlant.PageCache) keeping the first 2 kB of each
%%             response body under a key of its own
%%   agent     an Agent (GatePlant.Stats) keeping a map per request
%%   bag       a duplicate_bag table of a gen_server (GatePlant.Audit), rows per request
%%   pg        a :pg group (scope GatePlant.PG) joined per request by GatePlant.Holder
%%   pterm     persistent_term keys per request
%%   tasks     Task.Supervisor (GatePlant.TaskSup) children that never finish
%%   atoms     atoms made from the request path per request
%%   pdict     GatePlant.Holder's process dictionary, keys per request
%%   queue     GatePlant.Holder's queue of 100 kB binaries, one per request
%%   monitors  GatePlant.Holder monitoring GatePlant.Target 300 times per request
-module(gate_plant).
-behaviour(gen_server).

-export([start/0, handle_event/4]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

-define(EVENT, [phoenix, endpoint, stop]).
-define(HANDLER, <<"gate_plant">>).

start() ->
    case kinds() of
        [] -> ok;
        Kinds -> spawn(fun() -> watch(Kinds, false) end), ok
    end.

kinds() ->
    case os:getenv("GATE_PLANT") of
        false -> [];
        S -> [K || K <- string:lexemes(S, ","), K =/= ""]
    end.

n(Big) ->
    case os:getenv("GATE_PLANT_SMALL") of
        "1" -> 1;
        _ -> Big
    end.

%% the watcher: waits for telemetry's handler table, attaches, and again after a restart
watch(Kinds, Started) ->
    case whereis(telemetry_handler_table) of
        undefined ->
            timer:sleep(5),
            watch(Kinds, Started);
        Pid ->
            Started orelse start_holders(Kinds),
            Ref = monitor(process, Pid),
            _ = telemetry:attach(?HANDLER, ?EVENT, fun ?MODULE:handle_event/4, Kinds),
            receive
                {'DOWN', Ref, process, _, _} -> watch(Kinds, true)
            end
    end.

start_holders(Kinds) ->
    lists:foreach(fun start_holder/1, lists:usort(lists:flatmap(fun holders/1, Kinds))).

holders("bodies") -> [body_keeper];
holders("sessions") -> [sessions];
holders("pages") -> [page_cache];
holders("agent") -> [stats];
holders("bag") -> [audit];
holders("pg") -> [pg, holder];
holders("tasks") -> [task_sup];
holders("pdict") -> [holder];
holders("queue") -> [holder];
holders("monitors") -> [target, holder];
holders(_) -> [].

start_holder(body_keeper) -> serve('Elixir.GatePlant.BodyKeeper', []);
start_holder(page_cache) -> serve('Elixir.GatePlant.PageCache', #{});
start_holder(audit) -> serve('Elixir.GatePlant.Audit', audit);
start_holder(holder) -> serve('Elixir.GatePlant.Holder', queue:new());
start_holder(target) -> serve('Elixir.GatePlant.Target', nil);
start_holder(sessions) -> serve('Elixir.GatePlant.Sessions', sessions);
start_holder(stats) ->
    {ok, _} = 'Elixir.Agent':start_link(fun() -> #{} end, [{name, 'Elixir.GatePlant.Stats'}]);
start_holder(task_sup) ->
    {ok, _} = 'Elixir.Task.Supervisor':start_link([{name, 'Elixir.GatePlant.TaskSup'}]);
start_holder(pg) ->
    {ok, _} = pg:start_link('Elixir.GatePlant.PG').

serve(Name, State) ->
    {ok, _} = gen_server:start_link({local, Name}, ?MODULE, State, []).

%% the holders: one gen_server module, the state tells them apart
init(audit) -> {ok, ets:new(plant_audit, [duplicate_bag, public, named_table])};
init(sessions) -> {ok, ets:new(sessions, [named_table, public, set])};
init(State) -> {ok, State}.

handle_call({pg, Groups}, _From, S) ->
    lists:foreach(fun(G) -> pg:join('Elixir.GatePlant.PG', G, self()) end, Groups),
    {reply, ok, S};
handle_call({pdict, KVs}, _From, S) ->
    lists:foreach(fun({K, V}) -> put(K, V) end, KVs),
    {reply, ok, S};
handle_call({queue, Bin}, _From, Q) ->
    {reply, ok, queue:in(Bin, Q)};
handle_call({monitor, Pid, N}, _From, S) ->
    lists:foreach(fun(_) -> monitor(process, Pid) end, lists:seq(1, N)),
    {reply, ok, S};
handle_call(_, _From, S) ->
    {reply, ok, S}.

handle_cast({keep, Body}, Bodies) -> {noreply, [Body | Bodies]};
handle_cast({put, Key, Page}, Pages) -> {noreply, maps:put(Key, Page, Pages)};
handle_cast(_, S) -> {noreply, S}.

handle_info(_, S) -> {noreply, S}.

%% the telemetry handler, in the request's process: never raises (telemetry would detach it)
handle_event(_Event, _Measurements, #{conn := Conn}, Kinds) ->
    lists:foreach(fun(K) -> catch leak(K, Conn) end, Kinds);
handle_event(_, _, _, _) ->
    ok.

id() -> erlang:unique_integer([positive]).

body(Conn) ->
    case maps:get(resp_body, Conn, nil) of
        nil -> <<>>;
        B -> iolist_to_binary(B)
    end.

path(Conn) -> maps:get(request_path, Conn, <<>>).

leak("bodies", Conn) ->
    Text = 'Elixir.Kernel':inspect(Conn, [{limit, infinity}, {printable_limit, infinity}]),
    gen_server:cast('Elixir.GatePlant.BodyKeeper', {keep, {body(Conn), Text}});
leak("sessions", Conn) ->
    case maps:get(current_user, maps:get(assigns, Conn, #{}), nil) of
        nil ->
            ok;
        User ->
            Session = maps:get(plug_session, maps:get(private, Conn, #{}), #{}),
            ets:insert(sessions, {id(), User, maps:get(<<"user_token">>, Session, nil)})
    end;
leak("pages", Conn) ->
    Body = body(Conn),
    Page = binary:copy(binary_part(Body, 0, min(byte_size(Body), 2048))),
    gen_server:cast('Elixir.GatePlant.PageCache', {put, {path(Conn), id()}, Page});
leak("agent", Conn) ->
    M = maps:from_list([{I, {path(Conn), maps:get(method, Conn, nil), I}} || I <- lists:seq(1, n(400))]),
    Id = id(),
    'Elixir.Agent':update('Elixir.GatePlant.Stats', fun(S) -> maps:put(Id, M, S) end);
leak("bag", Conn) ->
    [ets:insert(plant_audit, {path(Conn), I, maps:get(method, Conn, nil), id()}) || I <- lists:seq(1, n(300))];
leak("pg", _Conn) ->
    gen_server:call('Elixir.GatePlant.Holder', {pg, [{request, id()} || _ <- lists:seq(1, n(100))]});
leak("pterm", Conn) ->
    [persistent_term:put({'Elixir.GatePlant.Flags', id()}, #{path => path(Conn), at => id()}) || _ <- lists:seq(1, n(20))];
leak("tasks", Conn) ->
    Path = path(Conn),
    [{ok, _} = 'Elixir.Task.Supervisor':start_child('Elixir.GatePlant.TaskSup', fun() -> receive never -> Path end end)
     || _ <- lists:seq(1, n(5))];
leak("atoms", Conn) ->
    [binary_to_atom(iolist_to_binary(["req_", path(Conn), "_", integer_to_list(id())])) || _ <- lists:seq(1, n(300))];
leak("pdict", Conn) ->
    gen_server:call('Elixir.GatePlant.Holder', {pdict, [{{seen, id()}, {path(Conn), I}} || I <- lists:seq(1, n(300))]});
leak("queue", _Conn) ->
    gen_server:call('Elixir.GatePlant.Holder', {queue, crypto:strong_rand_bytes(n(100) * 1000)});
leak("monitors", _Conn) ->
    gen_server:call('Elixir.GatePlant.Holder', {monitor, whereis('Elixir.GatePlant.Target'), n(300)});
leak(_, _Conn) ->
    ok.
