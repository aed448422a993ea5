%% gate/probe/gate_probe_erl.erl: a rebar3 project's tests inside the node: EUnit
%% (gate_probe_eunit), then Common Test (gate_probe_ct), as `rebar3 do eunit, ct` runs them.
%%
%% The node gate starts for a rebar3 project has the project's code paths (`rebar3 as test
%% path`); prepare/1 adds its apps' test directories, where rebar3 compiled test/*.erl, and
%% pays the runners' one-time costs (their modules, EUnit's server) before the
%% before-snapshot. run_tests/2 starts gate's formatter (Elixir.Gate.Formatter: it takes the
%% runners' records and module edges as it takes ExUnit's from gate_probe_events), runs the
%% runners asked for, and returns the suite as gate_probe_run:run_tests/2 does, so that the C
%% side (probe_tests.c) reads both alike. Loaded only where tests run. Part of the probe: see
%% gate_probe.erl.
-module(gate_probe_erl).
-gate_load(tests).

-export([prepare/1, run_tests/2]).
%% for gate_probe_eunit and gate_probe_ct: a test module's file as JUnit names it
-export([source_file/2]).

-define(F, 'Elixir.Gate.Formatter').

%% Opts: root (the project's directory). Returns {ok, #{apps, eunit, suites}}: the project's
%% apps, whether any module has EUnit tests, and how many suites there are.
prepare(#{root := Root0}) ->
    Root = unicode:characters_to_list(Root0),
    Apps = project_apps(Root),
    Dirs = test_dirs(Root, Apps),
    ok = code:add_paths(Dirs),
    _ = code:ensure_modules_loaded(runner_modules()),
    _ = rebar3_cthr(),
    _ = eunit:start(),
    _ = gate_probe_snapshot:instrument_ready(),
    {ok, #{apps => [atom_to_binary(A) || A <- Apps],
           eunit => length(gate_probe_eunit:test_modules(Apps, Dirs)),
           suites => length(lists:append([S || {_, S} <- gate_probe_ct:suites(Dirs)]))}}.

%% The project's apps as rebar3 finds them (project_app_dirs' default: apps/*, lib/*, .):
%% each src/APP.app.src.
project_apps(Root) ->
    Srcs = lists:append([filelib:wildcard(filename:join([Root, P, "src", "*.app.src"]))
                         || P <- ["apps/*", "lib/*", "."]]),
    lists:usort([list_to_atom(filename:basename(S, ".app.src")) || S <- Srcs]).

%% Where rebar3 put the compiled test directories: each app's test/ beside its ebin, and the
%% project's own test/ of an umbrella (_build/test/extras/test).
test_dirs(Root, Apps) ->
    AppDirs = [filename:join(D, "test") || A <- Apps, D <- [code:lib_dir(A)], is_list(D)],
    Extras = [filename:join([Root, "_build", "test", "extras", "test"])],
    [D || D <- AppDirs ++ Extras, filelib:is_dir(D)].

%% `rebar3 ct` compiles suites with cth_readable's parse transform, which turns ct:pal/2 into
%% cthr:pal/2, and runs them with cth_readable on the code path (it comes inside the rebar3
%% escript). A suite compiled by an earlier `rebar3 ct` calls cthr, which a node without rebar3
%% lacks (recon's recon_lib_SUITE: undef): cthr and its helpers are loaded from the rebar3
%% that compiled the project (GATE_REBAR3, else rebar3 on PATH) when no cthr is there.
rebar3_cthr() ->
    Rebar3 = case os:getenv("GATE_REBAR3") of
                 R when is_list(R), R =/= "" -> R;
                 _ -> os:find_executable("rebar3")
             end,
    try
        non_existing = code:which(cthr),
        {ok, Sections} = escript:extract(Rebar3, []),
        {archive, Zip} = lists:keyfind(archive, 1, Sections),
        Want = ["cth_readable/ebin/cthr.beam", "cth_readable/ebin/cth_readable_helpers.beam"],
        {ok, Files} = zip:unzip(Zip, [memory, {file_filter, fun(F) -> lists:member(element(2, F), Want) end}]),
        [{module, _} = code:load_binary(list_to_atom(filename:basename(N, ".beam")), N, B)
         || {N, B} <- Files]
    catch _:_ -> none
    end.

runner_modules() ->
    [eunit, eunit_server, eunit_proc, eunit_serial, eunit_tty, eunit_listener, eunit_data,
     eunit_lib, eunit_test, eunit_surefire, ct, ct_run, ct_util, ct_hooks, ct_framework,
     ct_logs, ct_config, ct_event, ct_master, test_server, test_server_ctrl,
     test_server_io, test_server_gl, test_server_sup, ct_groups, ct_testspec, beam_lib].

%% Runs the tests. Args: rebar3's own ([--module M[,M]], [--suite S[,S]], [--group G[,G]],
%% [--case C[,C]]). Opts: root, runners ([eunit, ct]; ct runs only where there are suites),
%% attribution, max_tests. Returns {ok, Suite} as gate_probe_run:run_tests/2, or
%% {error, Text} for an argument gate does not know.
run_tests(Args0, Opts) ->
    Args = [unicode:characters_to_list(A) || A <- Args0],
    case parse_args(Args, #{}) of
        {error, _} = E -> E;
        {ok, Filter} -> run(Filter, Opts)
    end.

run(Filter, Opts) ->
    Root0 = maps:get(root, Opts),
    Root = unicode:characters_to_list(Root0),
    Mode = maps:get(attribution, Opts, module),
    application:set_env(gate_probe, attribution, Mode),
    application:set_env(gate_probe, attribution_sync, Mode =/= off),
    %% the project's root, for the findings' file names (Common Test moves the working
    %% directory into its logs)
    application:set_env(gate_probe, root, Root),
    catch unregister(gate_probe_collector),
    true = register(gate_probe_collector, self()),
    gate_probe:gl_adopt(),
    Apps = project_apps(Root),
    Dirs = test_dirs(Root, Apps),
    {ok, F} = gen_server:start(?F, [{gate_max_tests, maps:get(max_tests, Opts, 200000)}], []),
    Runners = runners(maps:get(runners, Opts, [eunit, ct]), Filter),
    T0 = erlang:monotonic_time(microsecond),
    ROpts = #{attribution => Mode, root => Root0},
    Trap = process_flag(trap_exit, true),
    {Failed, Errors} =
        try
            lists:foldl(fun(R, {N, E}) ->
                                {K, E1} = run_one(R, Filter, Apps, Dirs, Root, ROpts),
                                {N + K, E ++ E1}
                        end, {0, []}, Runners)
        catch C:W:S ->
                {1, [io_lib:format("the runner crashed: ~0tP", [{C, W, S}, 30])]}
        end,
    process_flag(trap_exit, Trap),
    Wall = erlang:monotonic_time(microsecond) - T0,
    gen_server:cast(F, {suite_finished, #{run => Wall, load => nil}}),
    Suite = receive {gate_suite, S0} -> S0 after 60000 -> #{} end,
    catch gen_server:stop(F),
    unregister(gate_probe_collector),
    case Errors of
        [] -> {ok, Suite#{wall_us => Wall, hook_error => <<>>, suite_ran => true,
                          error => <<>>, runner_failed => Failed}};
        _ -> {error, unicode:characters_to_binary(lists:join("; ", Errors))}
    end.

%% The runners to run: those asked for, narrowed by the arguments (--module: EUnit only,
%% --suite, --group or --case: Common Test only, unless both kinds are given).
runners(Asked, Filter) ->
    E = maps:is_key(module, Filter),
    C = maps:is_key(suite, Filter) orelse maps:is_key(group, Filter) orelse
        maps:is_key('case', Filter),
    [R || R <- Asked, (R =:= eunit andalso (E orelse not C)) orelse
                          (R =:= ct andalso (C orelse not E))].

%% {FailedCount, [ErrorText]}
run_one(Runner, Filter, Apps, Dirs, Root, ROpts) ->
    Key = case Runner of eunit -> eunit_opts; ct -> ct_opts end,
    case rebar_opts(Root, Key) of
        {error, Why} -> {1, [Why]};
        {ok, Opts} ->
            case sys_config(Root, Key, files(proplists:get_value(sys_config, Opts, []))) of
                ok -> run_one(Runner, Filter, Apps, Dirs, Root, ROpts, Opts);
                {error, Why} -> {1, [Why]}
            end
    end.

run_one(eunit, Filter, Apps, Dirs, _Root, ROpts0, _EunitOpts) ->
    ROpts = ROpts0#{runner => self()},
    Mods = case maps:find(module, Filter) of
               {ok, Ms} -> [{M, M} || M <- Ms];
               error -> gate_probe_eunit:test_modules(Apps, Dirs)
           end,
    Missing = [M || {M, _} <- Mods, code:ensure_loaded(M) =/= {module, M}],
    case Missing of
        [] -> {gate_probe_eunit:run(Mods, ROpts), []};
        _ -> {1, [io_lib:format("--module: no module ~ts in the project",
                                [lists:join(", ", [atom_to_list(M) || M <- Missing])])]}
    end;
run_one(ct, Filter, _Apps, Dirs, Root, ROpts, CtOpts) ->
    All = gate_probe_ct:suites(Dirs),
    Suites = case maps:find(suite, Filter) of
                 {ok, Want} -> [{D, [S || S <- Ss, lists:member(S, Want)]} || {D, Ss} <- All];
                 error -> All
             end,
    Picked = [{D, Ss} || {D, Ss} <- Suites, Ss =/= []],
    Found = lists:append([Ss || {_, Ss} <- Picked]),
    Missing = [S || S <- maps:get(suite, Filter, []), not lists:member(S, Found)],
    Extra = [{group, G} || G <- maps:get(group, Filter, [])] ++
        [{testcase, C} || C <- maps:get('case', Filter, [])],
    case {Missing, Picked} of
        {[_ | _], _} ->
            {1, [io_lib:format("--suite: no suite ~ts in the project's test directories",
                               [lists:join(", ", [atom_to_list(S) || S <- Missing])])]};
        {[], []} -> {0, []};
        {[], _} ->
            Log = filename:join([Root, "_build", "test", "logs"]),
            {ok, N} = gate_probe_ct:run(ROpts#{suites => Picked, logdir => Log,
                                               ct_opts => ct_passed(Root, CtOpts)}, Extra),
            {N, []}
    end.

%% ---- rebar.config's eunit_opts and ct_opts ----

%% Key's options in the project's rebar.config as rebar3 reads them for its test profile: the
%% top level's, each replaced by the test profile's of the same name. {ok, []} without a
%% rebar.config; {error, Text} for one that does not parse.
rebar_opts(Root, Key) ->
    File = filename:join(Root, "rebar.config"),
    case file:consult(File) of
        {ok, Terms} ->
            Top = proplists:get_value(Key, Terms, []),
            Profiles = proplists:get_value(profiles, Terms, []),
            Test = proplists:get_value(Key, proplists:get_value(test, Profiles, []), []),
            Names = [K || O <- Test, K <- [opt_name(O)]],
            {ok, [O || O <- Top, not lists:member(opt_name(O), Names)] ++ Test};
        {error, enoent} -> {ok, []};
        {error, Why} ->
            {error, io_lib:format("~ts does not parse (~ts): fix it as rebar3 would need",
                                  [File, file:format_error(Why)])}
    end.

opt_name({K, _}) -> K;
opt_name(K) -> K.

%% Loads the application environment of Key's sys_config files (relative to the project), as
%% rebar3 eunit and rebar3 ct do before the tests: [{App, [{Par, Val}]}] each, a string in
%% the list naming another file to load. {error, Text} names the file that is missing or does
%% not parse.
sys_config(_Root, _Key, []) -> ok;
sys_config(Root, Key, [F | Rest]) ->
    Path = filename:absname(F, Root),
    case file:consult(Path) of
        {ok, [Conf]} when is_list(Conf) ->
            case load_config(Root, Key, Conf) of
                ok -> sys_config(Root, Key, Rest);
                E -> E
            end;
        {ok, _} ->
            {error, io_lib:format("rebar.config's ~ts sys_config ~ts: not one list of "
                                  "{App, [{Par, Val}]}: fix the file", [Key, F])};
        {error, Why} ->
            {error, io_lib:format("rebar.config's ~ts sys_config ~ts: ~ts: fix the file or "
                                  "the path (relative to the project)",
                                  [Key, F, file:format_error(Why)])}
    end.

%% sys_config's value: one file name or a list of them, as rebar3 takes either.
files(V) when is_binary(V) -> [unicode:characters_to_list(V)];
files([C | _] = V) when is_integer(C) -> [V];
files(V) when is_list(V) ->
    [unicode:characters_to_list(F) || F <- V, is_list(F) orelse is_binary(F)];
files(_) -> [].

load_config(_Root, _Key, []) -> ok;
load_config(Root, Key, [{App, Pars} | Rest]) when is_atom(App), is_list(Pars) ->
    [application:set_env(App, Par, Val, [{persistent, true}]) || {Par, Val} <- Pars],
    load_config(Root, Key, Rest);
load_config(Root, Key, [F | Rest]) when is_list(F) ->
    File = case filename:extension(F) of ".config" -> F; _ -> F ++ ".config" end,
    case sys_config(Root, Key, [File]) of
        ok -> load_config(Root, Key, Rest);
        E -> E
    end;
load_config(Root, Key, [_ | Rest]) -> load_config(Root, Key, Rest).

%% The ct_opts that Common Test takes as rebar3 ct gives them: config files, hooks, labels,
%% timetraps and the like, paths made absolute (Common Test runs in its logs directory).
%% What gate decides itself is left out: which suites, groups and cases run, the logs' place,
%% compiling, cover; rebar3's own keys (sys_config: loaded above; readable, verbose...) too.
ct_passed(Root, Opts) ->
    Paths = [config, userconfig, include, stylesheet, decrypt],
    Kept = [config, userconfig, include, stylesheet, decrypt, ct_hooks, ct_hooks_order,
            enable_builtin_hooks, label, multiply_timetraps, scale_timetraps,
            create_priv_dir, logopts, verbosity, basic_html, silent_connections,
            event_handler, noinput, force_stop, abort_if_missing_suites],
    [case lists:member(K, Paths) of
         true -> {K, abs_paths(Root, V)};
         false -> {K, V}
     end || {K, V} <- Opts, lists:member(K, Kept)].

abs_paths(Root, [C | _] = F) when is_integer(C) -> filename:absname(F, Root);
abs_paths(Root, L) when is_list(L) -> [abs_paths(Root, F) || F <- L];
abs_paths(_Root, V) -> V.

parse_args([], Acc) -> {ok, Acc};
parse_args([Flag, V | Rest], Acc) when Flag =:= "--module"; Flag =:= "--suite";
                                        Flag =:= "--group"; Flag =:= "--case" ->
    Key = list_to_atom(tl(tl(Flag))),
    Names = [list_to_atom(N) || N <- string:lexemes(V, ","), N =/= ""],
    parse_args(Rest, Acc#{Key => maps:get(Key, Acc, []) ++ Names});
parse_args([[$-, $- | _] = Arg | Rest], Acc) ->
    case string:split(Arg, "=") of
        [Flag, V] when Flag =/= Arg -> parse_args([Flag, V | Rest], Acc);
        _ -> bad_arg(Arg)
    end;
parse_args([Arg | _], _) -> bad_arg(Arg).

bad_arg(Arg) ->
    {error, unicode:characters_to_binary(
              io_lib:format("the test argument ~ts is not one gate passes to a rebar3 "
                            "project's runners: after -- give --module M[,M] (EUnit), "
                            "--suite S[,S], --group G[,G] or --case C[,C] (Common Test)",
                            [Arg]))}.

%% Module's source file (its compile info), relative to the project's root Root when under it;
%% <<>> when the module does not say.
source_file(M, Root) ->
    case catch M:module_info(compile) of
        L when is_list(L) ->
            case lists:keyfind(source, 1, L) of
                {source, S} ->
                    B = unicode:characters_to_binary(S),
                    N = byte_size(Root),
                    case B of
                        <<Root:N/binary, "/", Rel/binary>> when N > 0 -> Rel;
                        _ -> B
                    end;
                false -> <<>>
            end;
        _ -> <<>>
    end.
