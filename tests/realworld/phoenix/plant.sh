#!/bin/sh
# tests/realworld/phoenix/plant.sh: plants one leak of issue 31 in a COPY of the Phoenix app
# (todo_trek, ../shared/apps) that setup.sh made: code of the app's own, filled by the app's
# own requests as its existing 134 tests make them. Never run it on ../shared (read-only).
#
# usage: plant.sh APP_DIR KIND     (APP_DIR: the todo_trek copy; KIND one of)
#   bodies    a plug in the endpoint casts every response body, with the request inspected
#             as text, to a GenServer that keeps them all (TodoTrek.Plant.BodyKeeper), as a
#             request recorder for debugging might: megabytes by the end of the suite, refc
#             binaries while erlang:memory(binary) as a whole shrinks (the ports' buffers)
#   sessions  an ETS session cache (table `sessions`, public, created by the application)
#             that fetch_current_user fills on every authenticated request (a row with the
#             user and its token) and nothing empties: kilobytes per suite
#   pages     a page cache GenServer (TodoTrek.Plant.PageCache) in the :browser pipeline
#             keeping the first 2 kB of each response body under a new key: about 0.2 MB
#             per suite
#   shapes    issue 25/31's audit: leak shapes chosen at run time, filled per request by a plug
#             in the endpoint: GATE_LEAK=KIND[,KIND...] with KIND agent (an Agent keeping a
#             map per request), bag (a duplicate_bag table of a supervised GenServer), pg (a
#             :pg group joined per request), pterm (persistent_term keys per request), tasks
#             (Task.Supervisor children that never finish), atoms (String.to_atom on the
#             path), pdict (a GenServer's process dictionary), queue (a GenServer's queue of
#             100 kB refc binaries), monitors (a GenServer monitoring one target 300 times
#             per request); GATE_LEAK_SMALL=1 makes each one unit per request (kB per
#             suite, for --repeat). Unset, the app is unchanged but for six idle children.
# The copy must then be compiled again (mix compile, MIX_ENV=test). Exit 2 on bad usage.
set -eu
app=${1:-}
kind=${2:-}
if [ -z "$app" ] || [ ! -f "$app/mix.exs" ] || [ ! -f "$app/lib/todo_trek/application.ex" ]; then
	echo "plant.sh: error: '$app' is not a copy of todo_trek (no mix.exs or lib/todo_trek/application.ex): give the app dir setup.sh made" >&2
	exit 2
fi
case "$app" in
*/shared/apps/*) echo "plant.sh: error: $app is the shared read-only copy: plant in a copy (setup.sh DIR)" >&2; exit 2 ;;
esac
case "$kind" in bodies | sessions | pages | shapes) ;;
*) echo "plant.sh: error: KIND must be bodies, sessions, pages or shapes, got '$kind'" >&2; exit 2 ;;
esac
lib="$app/lib"
mkdir -p "$lib/todo_trek/plant"

# a child of the application's supervisor, before the endpoint
add_child() {
	perl -0pi -e "s/(\{Finch, name: TodoTrek.Finch\},\n)/\$1      $1,\n/" "$lib/todo_trek/application.ex"
	grep -qF "$1" "$lib/todo_trek/application.ex" || { echo "plant.sh: error: could not add $1 to the application's children" >&2; exit 2; }
}

case "$kind" in
bodies)
	cat >"$lib/todo_trek/plant/body_keeper.ex" <<'EX'
defmodule TodoTrek.Plant.BodyKeeper do
  # planted by gate's tests (issue 31): keeps every response body, forever
  use GenServer
  def start_link(_), do: GenServer.start_link(__MODULE__, [], name: __MODULE__)
  def keep(body), do: GenServer.cast(__MODULE__, {:keep, body})
  @impl true
  def init(bodies), do: {:ok, bodies}
  @impl true
  def handle_cast({:keep, body}, bodies), do: {:noreply, [body | bodies]}
end

defmodule TodoTrekWeb.Plant.KeepBodies do
  # planted: a plug that hands each response body to the keeper
  import Plug.Conn
  def init(opts), do: opts
  def call(conn, _opts) do
    register_before_send(conn, fn conn ->
      body = IO.iodata_to_binary(conn.resp_body || "")
      # with the whole request as text, as a request recorder for debugging might
      TodoTrek.Plant.BodyKeeper.keep({body, inspect(conn, limit: :infinity, printable_limit: :infinity)})
      conn
    end)
  end
end
EX
	add_child TodoTrek.Plant.BodyKeeper
	perl -0pi -e 's/(  plug TodoTrekWeb.Router\n)/  plug TodoTrekWeb.Plant.KeepBodies\n$1/' "$lib/todo_trek_web/endpoint.ex"
	grep -q "Plant.KeepBodies" "$lib/todo_trek_web/endpoint.ex"
	;;
sessions)
	perl -0pi -e 's/(  def start\(_type, _args\) do\n)/$1    :ets.new(:sessions, [:named_table, :public, :set])\n/' "$lib/todo_trek/application.ex"
	grep -q ":ets.new(:sessions" "$lib/todo_trek/application.ex"
	perl -0pi -e 's/(    user = user_token && Accounts.get_user_by_session_token\(user_token\)\n)/$1    if user, do: :ets.insert(:sessions, {System.unique_integer([:positive]), user, user_token})\n/' "$lib/todo_trek_web/user_auth.ex"
	grep -q ":ets.insert(:sessions" "$lib/todo_trek_web/user_auth.ex"
	;;
pages)
	cat >"$lib/todo_trek/plant/page_cache.ex" <<'EX'
defmodule TodoTrek.Plant.PageCache do
  # planted by gate's tests (issue 31): a page cache nobody evicts
  use GenServer
  def start_link(_), do: GenServer.start_link(__MODULE__, %{}, name: __MODULE__)
  def put(key, page), do: GenServer.cast(__MODULE__, {:put, key, page})
  @impl true
  def init(pages), do: {:ok, pages}
  @impl true
  def handle_cast({:put, key, page}, pages), do: {:noreply, Map.put(pages, key, page)}
end

defmodule TodoTrekWeb.Plant.CachePages do
  # planted: the first 2 kB of each page, under a key of its own
  import Plug.Conn
  def init(opts), do: opts
  def call(conn, _opts) do
    register_before_send(conn, fn conn ->
      body = IO.iodata_to_binary(conn.resp_body || "")
      page = :binary.copy(binary_part(body, 0, min(byte_size(body), 2048)))
      TodoTrek.Plant.PageCache.put({conn.request_path, System.unique_integer([:positive])}, page)
      conn
    end)
  end
end
EX
	add_child TodoTrek.Plant.PageCache
	perl -0pi -e 's/(    plug :fetch_current_user\n)/$1    plug TodoTrekWeb.Plant.CachePages\n/' "$lib/todo_trek_web/router.ex"
	grep -q "Plant.CachePages" "$lib/todo_trek_web/router.ex"
	;;
shapes)
	cat >"$lib/todo_trek/plant/leaks.ex" <<'EX'
defmodule TodoTrek.Plant do
  # planted by the a25 audit: one leak shape per GATE_LEAK value, filled per request by the
  # endpoint plug below; GATE_LEAK_SMALL=1 makes each a few units per request (kB per suite)
  def kind, do: System.get_env("GATE_LEAK", "")
  def n(big), do: if(System.get_env("GATE_LEAK_SMALL") == "1", do: 1, else: big)
end

defmodule TodoTrek.Plant.Stats do
  # an Agent accumulating a map per request
  use Agent
  def start_link(_), do: Agent.start_link(fn -> %{} end, name: __MODULE__)
  def add(id, m), do: Agent.update(__MODULE__, &Map.put(&1, id, m))
end

defmodule TodoTrek.Plant.Audit do
  # a supervised GenServer owning a duplicate_bag table that rows are added to per request
  use GenServer
  def start_link(_), do: GenServer.start_link(__MODULE__, nil, name: __MODULE__)
  def init(_), do: {:ok, :ets.new(:plant_audit, [:duplicate_bag, :public, :named_table])}
end

defmodule TodoTrek.Plant.Holder do
  # a long-lived GenServer: joins :pg groups, process dictionary, a queue of binaries, monitors
  use GenServer
  def start_link(_), do: GenServer.start_link(__MODULE__, nil, name: __MODULE__)
  def init(_), do: {:ok, :queue.new()}
  def handle_call({:pg, groups}, _from, q) do
    Enum.each(groups, &:pg.join(TodoTrek.Plant.PG, &1, self()))
    {:reply, :ok, q}
  end
  def handle_call({:pdict, kvs}, _from, q) do
    Enum.each(kvs, fn {k, v} -> Process.put(k, v) end)
    {:reply, :ok, q}
  end
  def handle_call({:queue, bin}, _from, q), do: {:reply, :ok, :queue.in(bin, q)}
  def handle_call({:monitor, pid, n}, _from, q) do
    for _ <- 1..n, do: Process.monitor(pid)
    {:reply, :ok, q}
  end
end

defmodule TodoTrek.Plant.Target do
  # the process at the other end of the monitors
  use GenServer
  def start_link(_), do: GenServer.start_link(__MODULE__, nil, name: __MODULE__)
  def init(_), do: {:ok, nil}
end

defmodule TodoTrekWeb.Plant.Leak do
  alias TodoTrek.Plant
  def init(opts), do: opts
  def call(conn, _opts) do
    for k <- String.split(Plant.kind(), ","), do: leak(k, conn)
    conn
  end

  defp id, do: System.unique_integer([:positive])

  defp leak("agent", conn) do
    m = Map.new(1..Plant.n(400), fn i -> {i, {conn.request_path, conn.method, i}} end)
    Plant.Stats.add(id(), m)
  end

  defp leak("bag", conn) do
    for i <- 1..Plant.n(300), do: :ets.insert(:plant_audit, {conn.request_path, i, conn.method, id()})
  end

  defp leak("pg", _conn) do
    GenServer.call(Plant.Holder, {:pg, for(_ <- 1..Plant.n(100), do: {:request, id()})})
  end

  defp leak("pterm", conn) do
    for _ <- 1..Plant.n(20), do: :persistent_term.put({Plant.Flags, id()}, %{path: conn.request_path, at: id()})
  end

  defp leak("tasks", conn) do
    for _ <- 1..Plant.n(5) do
      Task.Supervisor.start_child(Plant.TaskSup, fn ->
        path = conn.request_path
        receive do
          :never -> path
        end
      end)
    end
  end

  defp leak("atoms", conn) do
    for _ <- 1..Plant.n(300), do: String.to_atom("req_#{conn.request_path}_#{id()}")
  end

  defp leak("pdict", conn) do
    GenServer.call(Plant.Holder, {:pdict, for(i <- 1..Plant.n(300), do: {{:seen, id()}, {conn.request_path, i}})})
  end

  defp leak("queue", _conn) do
    GenServer.call(Plant.Holder, {:queue, :crypto.strong_rand_bytes(Plant.n(100) * 1000)})
  end

  defp leak("monitors", _conn) do
    GenServer.call(Plant.Holder, {:monitor, Process.whereis(Plant.Target), Plant.n(300)})
  end

  defp leak(_, _conn), do: :ok
end
EX
	for c in TodoTrek.Plant.Stats TodoTrek.Plant.Audit "%{id: :pg_plant, start: {:pg, :start_link, [TodoTrek.Plant.PG]}}" \
		TodoTrek.Plant.Target TodoTrek.Plant.Holder "{Task.Supervisor, name: TodoTrek.Plant.TaskSup}"; do
		add_child "$c"
	done
	perl -0pi -e 's/(  plug TodoTrekWeb.Router\n)/  plug TodoTrekWeb.Plant.Leak\n$1/' "$lib/todo_trek_web/endpoint.ex"
	grep -q "Plant.Leak" "$lib/todo_trek_web/endpoint.ex"
	;;
esac
echo "plant.sh: $kind planted in $app"
