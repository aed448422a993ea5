# tests/realworld/plant/planted_ets_test.exs: a leak make realworld drops into a real library
# suite's test folder (one kind per run): a session table that a process started here owns,
# left running, and that the tests fill and never empty. 20 000 rows, about 4 MB.
defmodule GatePlanted.EtsTest do
  use ExUnit.Case, async: false

  setup_all do
    parent = self()

    owner =
      spawn(fn ->
        :ets.new(:gate_planted_sessions, [:named_table, :public, :set])
        send(parent, :table_ready)
        Process.sleep(:infinity)
      end)

    receive do
      :table_ready -> :ok
    after
      5_000 -> flunk("the planted table's owner #{inspect(owner)} did not start")
    end

    :ok
  end

  for t <- 1..4 do
    test "opens sessions #{t}" do
      for i <- 1..5_000 do
        key = {unquote(t), i}
        :ets.insert(:gate_planted_sessions, {key, Integer.to_string(i * 7919 + unquote(t), 36), String.duplicate("s", 120)})
      end

      assert :ets.info(:gate_planted_sessions, :size) >= 5_000
    end
  end
end
