%% integrations/rebar3/src/rebar3_gate_installer.erl: which gate `rebar3 gate` runs, and its
%% install: gate-VERSION-TARGET and its .sha256 downloaded (httpc; https verified against the
%% system's CA certificates), the checksum and the binary's --version checked, then moved into
%% _build/gate-VERSION whole. Every refusal leaves nothing installed and names the URL. The
%% project's rebar.config sets {gate, [{version, V}, {base_url, U}, {path, P}]}, all optional.
-module(rebar3_gate_installer).

-export([binary/2, install/2, target/0, expected_sha256/3, release_url/3]).

-define(BASE_URL, "https://github.com/YOUR-ORG/gate/releases/download/v$version").

%% The gate to run: path's as it is (its version checked when one is pinned), else the
%% installed release, installed first when it is missing. {ok, Path} | {error, Text}.
binary(Config, Root) ->
    case proplists:get_value(path, Config) of
        undefined ->
            case install(Config, Root) of
                {ok, Path, "installed" ++ _ = How} ->
                    io:format("gate: ~ts: ~ts~n", [How, Path]),
                    {ok, Path};
                {ok, Path, _} -> {ok, Path};
                E -> E
            end;
        Path ->
            case {proplists:get_value(version, Config), binary_version(Path)} of
                {_, {error, Why}} ->
                    {error, io_lib:format("{gate, [{path, ~tp}]} does not run: ~ts", [Path, Why])};
                {undefined, _} -> {ok, Path};
                {V, {ok, V}} -> {ok, Path};
                {V, {ok, Other}} ->
                    {error, io_lib:format("{gate, [{version, ~tp}]}, but {path, ~tp} is gate ~ts",
                                          [V, Path, Other])}
            end
    end.

version(Config) ->
    case proplists:get_value(version, Config) of
        undefined ->
            {ok, V} = application:get_key(rebar3_gate, vsn),
            V;
        V -> V
    end.

%% Installs the release (nothing when it is there). {ok, Path, How} | {error, Text}.
install(Config, Root) ->
    Version = version(Config),
    Dir = filename:join([Root, "_build", "gate-" ++ Version]),
    Bin = filename:join(Dir, "gate"),
    case binary_version(Bin) of
        {ok, Version} -> {ok, Bin, "gate " ++ Version ++ " is already installed"};
        _ ->
            Base = proplists:get_value(base_url, Config, ?BASE_URL),
            case target() of
                {ok, Target} -> install(Version, Target, Base, Root, Dir);
                E -> E
            end
    end.

install(Version, Target, Base, Root, Dir) ->
    Name = "gate-" ++ Version ++ "-" ++ Target,
    Url = release_url(Base, Version, Name),
    io:format("gate: gate ~ts is not installed yet: installing it from ~ts~n", [Version, Url]),
    maybe_ok([fun() -> fetch(Url) end,
              fun(Body) -> {ok, {Body, fetch_checksum(Url ++ ".sha256")}} end,
              fun({_, {error, _} = E}) -> E;
                 ({Body, {ok, Sums}}) ->
                      case expected_sha256(Sums, Name, Url ++ ".sha256") of
                          {ok, Want} -> verify(Body, Want, Url);
                          E -> E
                      end
              end,
              fun(Body) -> place(Body, Version, Root, Dir, Url) end]).

maybe_ok([F | Rest]) -> maybe_ok(Rest, F()).
maybe_ok([], R) -> R;
maybe_ok(_, {error, _} = E) -> E;
maybe_ok([F | Rest], {ok, V}) -> maybe_ok(Rest, F(V)).

%% linux-x86_64, linux-aarch64: the targets release binaries exist for
target() ->
    Arch = erlang:system_info(system_architecture),
    case {os:type(), string:split(Arch, "-")} of
        {{unix, linux}, [Cpu | _]} when Cpu =:= "x86_64"; Cpu =:= "aarch64" ->
            {ok, "linux-" ++ Cpu};
        _ ->
            {error, io_lib:format("no gate release binary for ~ts: build gate from source "
                                  "(make in gate's repository) and set {gate, [{path, "
                                  "\"/path/to/gate\"}]} in rebar.config", [Arch])}
    end.

%% The base URL with $version replaced, then /NAME
release_url(Base, Version, Name) ->
    B = string:replace(Base, "$version", Version, all),
    string:trim(lists:flatten(B), trailing, "/") ++ "/" ++ Name.

%% The SHA-256 for Name in a file of sha256sum's format ("HEX  NAME" or "HEX *NAME")
expected_sha256(Text, Name, Where) ->
    Lines = string:lexemes(unicode:characters_to_list(Text), "\r\n"),
    Hits = [string:lowercase(Hex) || L <- Lines,
                                     {match, [Hex, N]} <- [re:run(L, "^([0-9a-fA-F]{64}) [ *]?(.+?)\\s*$",
                                                                  [{capture, all_but_first, list}])],
                                     N =:= Name],
    case Hits of
        [H | _] -> {ok, H};
        [] -> {error, io_lib:format("~ts has no sha256sum line for ~ts (expected \"<64 hex "
                                    "digits>  ~ts\"): nothing installed", [Where, Name, Name])}
    end.

verify(Body, Want, Url) ->
    Got = string:lowercase(binary:encode_hex(crypto:hash(sha256, Body))),
    case binary_to_list(Got) of
        Want -> {ok, Body};
        G -> {error, io_lib:format("checksum mismatch for ~ts: its .sha256 says ~ts, the download "
                                   "is ~ts (~b bytes): nothing installed",
                                   [Url, Want, G, byte_size(Body)])}
    end.

%% Written beside its final place, run, then renamed into it: an interrupted or refused install
%% leaves no _build/gate-VERSION behind.
place(Body, Version, Root, Dir, Url) ->
    Tmp = filename:join([Root, "_build",
                         ".gate-" ++ Version ++ "." ++ integer_to_list(erlang:unique_integer([positive]))]),
    Bin = filename:join(Tmp, "gate"),
    R = try
            ok = filelib:ensure_dir(Bin),
            ok = file:write_file(Bin, Body),
            ok = file:change_mode(Bin, 8#755),
            case binary_version(Bin) of
                {ok, Version} ->
                    _ = file:del_dir_r(Dir),
                    ok = file:rename(Tmp, Dir),
                    {ok, filename:join(Dir, "gate"),
                     "installed gate " ++ Version ++ " (sha256 verified)"};
                {ok, Other} ->
                    {error, io_lib:format("~ts is gate ~ts, not ~ts (its --version): nothing "
                                          "installed; check {gate, [{version, ...}, {base_url, "
                                          "...}]} in rebar.config", [Url, Other, Version])};
                {error, Why} ->
                    {error, io_lib:format("the binary downloaded from ~ts does not run here: "
                                          "~ts: nothing installed", [Url, Why])}
            end
        catch _:E -> {error, io_lib:format("cannot install into ~ts: ~tp", [Dir, E])}
        end,
    _ = file:del_dir_r(Tmp),
    R.

%% "gate X.Y.Z", the first line of `gate --version`
binary_version(Bin) ->
    case filelib:is_regular(Bin) of
        false -> {error, "no such file"};
        true ->
            Port = open_port({spawn_executable, Bin},
                             [{args, ["--version"]}, exit_status, stderr_to_stdout, binary]),
            case collect(Port, <<>>) of
                {0, Out} ->
                    case re:run(Out, "^gate ([^\\s]+)", [{capture, all_but_first, list}]) of
                        {match, [V]} -> {ok, V};
                        nomatch -> {error, "its --version does not say \"gate X.Y.Z\""}
                    end;
                {S, _} -> {error, io_lib:format("its --version exited with status ~b", [S])}
            end
    end.

collect(Port, Acc) ->
    receive
        {Port, {data, D}} -> collect(Port, <<Acc/binary, D/binary>>);
        {Port, {exit_status, S}} -> {S, Acc}
    after 30000 -> {1, Acc}
    end.

fetch_checksum(Url) ->
    case fetch(Url) of
        {ok, _} = Ok -> Ok;
        {error, Msg} ->
            {error, [Msg, "; without its .sha256 the download cannot be verified: nothing "
                     "installed (publish the .sha256 beside the binary, as make release writes it)"]}
    end.

%% GETs Url whole: {ok, Body} | {error, Text naming the URL}
fetch(Url) ->
    {ok, _} = application:ensure_all_started(inets),
    {ok, _} = application:ensure_all_started(ssl),
    Opts = [{timeout, 300000}, {connect_timeout, 30000}, {autoredirect, true}] ++
        case Url of
            "https:" ++ _ -> [{ssl, ssl_options(Url)}];
            _ -> []
        end,
    case httpc:request(get, {Url, []}, Opts, [{body_format, binary}]) of
        {ok, {{_, 200, _}, _, Body}} -> {ok, Body};
        {ok, {{_, Status, Reason}, _, _}} ->
            {error, io_lib:format("cannot download ~ts: the server answered ~b ~ts~ts",
                                  [Url, Status, Reason,
                                   case Status of
                                       404 -> " (is there a release for this version and "
                                              "target? check {gate, [{version, ...}, "
                                              "{base_url, ...}]} in rebar.config)";
                                       _ -> ""
                                   end])};
        {error, Reason} ->
            {error, io_lib:format("cannot download ~ts: ~ts; without a network, set {gate, "
                                  "[{path, \"/path/to/gate\"}]} in rebar.config, or base_url "
                                  "to a mirror you can reach", [Url, explain(Reason)])}
    end.

explain({failed_connect, Details}) ->
    case lists:keyfind(inet, 1, Details) of
        {inet, _, econnrefused} -> "connection refused";
        {inet, _, nxdomain} -> "host not found (no DNS, or no network)";
        {inet, _, timeout} -> "connection timed out";
        {inet, _, Other} -> io_lib:format("cannot connect (~tp)", [Other]);
        _ -> io_lib:format("cannot connect (~tp)", [Details])
    end;
explain(Other) -> io_lib:format("~tp", [Other]).

ssl_options(Url) ->
    #{host := Host} = uri_string:parse(Url),
    [{verify, verify_peer}, {cacerts, public_key:cacerts_get()},
     {server_name_indication, Host}, {depth, 4},
     {customize_hostname_check, [{match_fun, public_key:pkix_verify_hostname_match_fun(https)}]}].
