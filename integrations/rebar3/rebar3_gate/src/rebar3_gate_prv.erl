%% integrations/rebar3/src/rebar3_gate_prv.erl: `rebar3 gate`: runs gate on the project and exits
%% with gate's exit code (0 passed, 1 a memory rule or a test failed, 2 gate could not run), as
%% `mix gate` does. `rebar3 gate` is `gate run`; what follows rebar3's own `--` is gate's:
%% options are gate run's (`rebar3 gate -- -q -- --module m`: gate run -q, the test arguments
%% after gate's --), a command word is gate's own command (`rebar3 gate explain ets`, or
%% `rebar3 gate -- config init`); `rebar3 gate install` only installs. Which gate: the
%% project's rebar.config {gate, [{path, "/usr/local/bin/gate"}]} as it is, else the release
%% binary for this machine under _build/gate-VERSION, downloaded and verified by
%% rebar3_gate_installer the first time.
-module(rebar3_gate_prv).

-export([init/1, do/1, format_error/1]).

init(State) ->
    Provider = providers:create([{name, gate},
                                 {module, ?MODULE},
                                 {bare, true},
                                 {deps, []},
                                 {example, "rebar3 gate -- --module my_mod"},
                                 {opts, []},
                                 {short_desc, "Run gate, the memory quality gate, on the tests."},
                                 {desc, "Runs gate on the project's EUnit and Common Test "
                                        "suites and exits with gate's exit code: 0 passed, "
                                        "1 a memory rule or a test failed, 2 gate could not "
                                        "run. `rebar3 gate install` installs the release "
                                        "binary only; `rebar3 gate CMD ...` runs gate CMD."}]),
    {ok, rebar_state:add_provider(State, Provider)}.

do(State) ->
    Args = rebar_state:command_args(State),
    Config = rebar_state:get(State, gate, []),
    Root = rebar_dir:root_dir(State),
    case Args of
        ["install" | _] ->
            case rebar3_gate_installer:install(Config, Root) of
                {ok, Path, How} ->
                    io:format("gate: ~ts: ~ts~n", [How, Path]),
                    {ok, State};
                {error, Msg} -> fail(Msg)
            end;
        _ ->
            case rebar3_gate_installer:binary(Config, Root) of
                {ok, Bin} -> erlang:halt(run(Bin, gate_args(Args), Root));
                {error, Msg} -> fail(Msg)
            end
    end.

%% "gate: error: ..." and exit 2, as gate says it cannot run
fail(Msg) ->
    io:format(standard_error, "gate: error: ~ts~n", [Msg]),
    erlang:halt(2).

format_error(Reason) -> io_lib:format("~tp", [Reason]).

%% gate's arguments: nothing or options (and -- ARGS) are gate run's; a command word is gate's
gate_args(["--" | Args]) -> gate_args(Args);
gate_args([]) -> ["run"];
gate_args([[$- | _] | _] = Args) -> ["run" | Args];
gate_args(Args) -> Args.

%% Runs gate in the project with the terminal it has (nouse_stdio: gate's stdin, stdout and
%% stderr are this VM's), and returns its exit status. GATE_EXIT_WITH_PARENT: should this VM
%% be halted (Ctrl-C), the kernel sends gate SIGTERM, and gate stops its node before it exits.
run(Bin, Args, Root) ->
    Port = open_port({spawn_executable, Bin},
                     [{args, Args}, {cd, Root}, exit_status, nouse_stdio,
                      {env, [{"GATE_EXIT_WITH_PARENT", "1"}]}]),
    receive {Port, {exit_status, S}} -> S end.
