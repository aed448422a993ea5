%% tests/realworld/plant/erl/gate_planted_state_tests.erl: a leak `make realworld` drops into
%% a real rebar3 project's test folder (one kind per run), the EUnit twin of
%% planted_state_test.exs: a cache server started here and left running, which keeps every
%% entry its tests give it. 20 000 entries, about 4 MB in its state.
-module(gate_planted_state_tests).
-behaviour(gen_server).
-include_lib("eunit/include/eunit.hrl").
-export([init/1, handle_call/3, handle_cast/2]).

cache_test_() ->
    {setup, fun() -> {ok, _} = gen_server:start({local, gate_planted_cache}, ?MODULE, #{}, [])
            end,
     fun(_) -> ok end,
     [{"caches results " ++ integer_to_list(T), fun() -> fill(T) end} || T <- lists:seq(1, 4)]}.

fill(T) ->
    [gen_server:call(gate_planted_cache,
                     {put, {T, I}, iolist_to_binary(
                                     [lists:duplicate(20, integer_to_list(I)),
                                      integer_to_list(erlang:unique_integer([positive]), 16)])})
     || I <- lists:seq(1, 5000)],
    ?assert(gen_server:call(gate_planted_cache, size) >= 5000).

init(S) -> {ok, S}.
handle_call({put, K, V}, _From, S) -> {reply, ok, S#{K => V}};
handle_call(size, _From, S) -> {reply, map_size(S), S}.
handle_cast(_, S) -> {noreply, S}.
