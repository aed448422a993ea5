# tests/realworld/plant/planted_state_test.exs: a leak make realworld drops into a real library
# suite's test folder (one kind per run): a cache server started here and left running, which
# keeps every entry its tests give it. 20 000 entries, about 4 MB in its state.
defmodule GatePlanted.StateTest do
  use ExUnit.Case, async: false

  setup_all do
    {:ok, _} = Agent.start(fn -> %{} end, name: :gate_planted_cache)
    :ok
  end

  for t <- 1..4 do
    test "caches results #{t}" do
      for i <- 1..5_000 do
        value = String.duplicate(Integer.to_string(i), 20) <> Integer.to_string(:erlang.unique_integer([:positive]), 16)
        Agent.update(:gate_planted_cache, &Map.put(&1, {unquote(t), i}, value))
      end

      assert map_size(Agent.get(:gate_planted_cache, & &1)) >= 5_000
    end
  end
end
