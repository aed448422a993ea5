%% integrations/rebar3/src/rebar3_gate.erl: the plugin's entry: its providers.
-module(rebar3_gate).

-export([init/1]).

init(State) ->
    {ok, State1} = rebar3_gate_prv:init(State),
    {ok, State1}.
