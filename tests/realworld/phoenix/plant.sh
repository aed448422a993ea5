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
case "$kind" in bodies | sessions | pages) ;;
*) echo "plant.sh: error: KIND must be bodies, sessions or pages, got '$kind'" >&2; exit 2 ;;
esac
lib="$app/lib"
mkdir -p "$lib/todo_trek/plant"

# a child of the application's supervisor, before the endpoint
add_child() {
	perl -0pi -e "s/(\{Finch, name: TodoTrek.Finch\},\n)/\$1      $1,\n/" "$lib/todo_trek/application.ex"
	grep -q "$1" "$lib/todo_trek/application.ex" || { echo "plant.sh: error: could not add $1 to the application's children" >&2; exit 2; }
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
esac
echo "plant.sh: $kind planted in $app"
