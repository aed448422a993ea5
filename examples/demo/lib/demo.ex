defmodule Demo.Application do
  @moduledoc false
  use Application

  def start(_type, _args) do
    children = [Demo.Sessions, {Task.Supervisor, name: Demo.TaskSup}]
    Supervisor.start_link(children, strategy: :one_for_one, name: Demo.Supervisor)
  end
end

defmodule Demo.Sessions do
  @moduledoc """
  Session tokens in a public ETS table. `expire/0` drops old sessions; forgetting to call it
  is the leak the demo plants.
  """
  use GenServer

  def start_link(_), do: GenServer.start_link(__MODULE__, [], name: __MODULE__)

  def open(user) do
    token = Base.encode16(:crypto.strong_rand_bytes(16))
    :ets.insert(:demo_sessions, {token, user, System.monotonic_time(), String.duplicate(" ", 400)})
    token
  end

  def lookup(token) do
    case :ets.lookup(:demo_sessions, token) do
      [{^token, user, _, _}] -> {:ok, user}
      [] -> :error
    end
  end

  def close(token), do: :ets.delete(:demo_sessions, token)
  def count, do: :ets.info(:demo_sessions, :size)

  @impl true
  def init(_) do
    :ets.new(:demo_sessions, [:named_table, :public, :set, read_concurrency: true])
    {:ok, nil}
  end
end

defmodule Demo.Pricing do
  @moduledoc "Plain functions: no state, nothing to leak."
  def total(items), do: items |> Enum.map(fn {price, qty} -> price * qty end) |> Enum.sum()
  def discount(total, pct) when pct in 0..100, do: total - div(total * pct, 100)
end
