# tests/realworld/plant/planted_procs_test.exs: a leak make realworld drops into a real library
# suite's test folder (one kind per run): workers spawned by the tests that wait forever and
# are never stopped. 3 000 processes.
defmodule GatePlanted.ProcsTest do
  use ExUnit.Case, async: false

  for t <- 1..3 do
    test "starts workers #{t}" do
      pids = for _ <- 1..1_000, do: spawn(fn -> Process.sleep(:infinity) end)
      assert length(pids) == 1_000
    end
  end
end
