# tests/realworld/lib.sh: where real projects live on this machine, and what the harness gives
# any of them to run: a private PostgreSQL, and leak shapes planted without changing a line of
# the project. Sourced (POSIX sh) by tests/bench/realworld.sh, tests/bench/fine.sh and the e2e
# cases that use real projects; it defines functions and two variables, and runs nothing.
#
# Real projects are never part of the repository. They are brought onto the machine by the
# contributor (README, "Real projects") and found here:
#   $GATE_REALWORLD       library suites, one Mix project per folder (default ~/.cache/gate/realworld)
#   $GATE_REALWORLD_APPS  applications, one Mix project per folder, its dependencies compiled
#                         offline from inside it (default ~/.cache/gate/apps)

rw_libs=${GATE_REALWORLD:-${HOME:-/root}/.cache/gate/realworld}
rw_apps=${GATE_REALWORLD_APPS:-${HOME:-/root}/.cache/gate/apps}

# rw_projects DIR: the names of the Mix projects in DIR (folders with a mix.exs), one line each
rw_projects() {
	[ -d "$1" ] || return 0
	for _rw_p in "$1"/*/; do
		[ -f "$_rw_p/mix.exs" ] && basename "$_rw_p"
	done
	return 0
}

# rw_needs_postgres DIR: the Mix project in DIR uses PostgreSQL (postgrex among its dependencies)
rw_needs_postgres() {
	grep -q ':postgrex' "$1/mix.exs" 2>/dev/null || [ -d "$1/deps/postgrex" ]
}

# rw_is_phoenix DIR: the Mix project in DIR is a Phoenix application (its endpoint emits the
# telemetry events gate_plant listens to)
rw_is_phoenix() {
	grep -q ':phoenix[,}]' "$1/mix.exs" 2>/dev/null
}

# pg_bin: the newest installed PostgreSQL server's bin folder, or nothing
pg_bin() {
	for _pg_d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		[ -x "$_pg_d/postgres" ] && { echo "$_pg_d"; return 0; }
	done
	return 1
}

# pg_as CMD...: CMD as the user the cluster runs as (PostgreSQL refuses to run as root: as root,
# the postgres user Debian's package creates, else nobody)
pg_as() {
	if [ "$(id -u)" -ne 0 ]; then
		"$@"
	elif id postgres >/dev/null 2>&1; then
		runuser -u postgres -- "$@"
	else
		runuser -u nobody -- "$@"
	fi
}

# pg_start ENVFILE: a private PostgreSQL cluster, trust authentication, superuser postgres (what
# a generated Phoenix config/test.exs expects, with any password), listening on a Unix socket
# only, in a temp dir of its own: no TCP port, so nothing to collide with another user's server.
# Writes PG_TOP, PGHOST (that dir) and PGPORT (5432, the default the socket's name carries) to
# ENVFILE, for the caller to export: Postgrex takes a PGHOST that is a directory as its socket
# directory, before any hostname the application's configuration gives, so an application
# runs against it unchanged. Returns 1 with the server's log on stderr on failure.
pg_start() {
	_pg_bin=$(pg_bin) || { echo "no PostgreSQL server (apt-get install postgresql; integrations/deps.sh installs it)" >&2; return 1; }
	_pg_top=$(mktemp -d "${TMPDIR:-/tmp}/gate-pg.XXXXXX") || return 1
	chmod 755 "$_pg_top"
	[ "$(id -u)" -ne 0 ] || chown "$(id postgres >/dev/null 2>&1 && echo postgres || echo nobody)" "$_pg_top"
	echo "PG_TOP=$_pg_top" >"$1"
	pg_as "$_pg_bin/initdb" -D "$_pg_top/data" -U postgres --auth=trust -E UTF8 --no-sync >"$_pg_top/initdb.log" 2>&1 ||
		{ cat "$_pg_top/initdb.log" >&2; return 1; }
	if ! pg_as "$_pg_bin/pg_ctl" -D "$_pg_top/data" -l "$_pg_top/server.log" -w -t 60 \
		-o "-c listen_addresses='' -p 5432 -k $_pg_top -c fsync=off -c full_page_writes=off" start >/dev/null 2>&1; then
		cat "$_pg_top/server.log" >&2
		return 1
	fi
	printf 'PGHOST=%s\nPGPORT=5432\n' "$_pg_top" >>"$1"
}

# pg_env ENVFILE: exports the PGHOST and PGPORT pg_start wrote
pg_env() {
	PGHOST=$(sed -n 's/^PGHOST=//p' "$1")
	PGPORT=$(sed -n 's/^PGPORT=//p' "$1")
	export PGHOST PGPORT
}

# pg_stop ENVFILE: stops the cluster pg_start wrote ENVFILE for and removes its data
pg_stop() {
	[ -f "$1" ] || return 0
	_pg_top=$(sed -n 's/^PG_TOP=//p' "$1")
	case "$_pg_top" in */gate-pg.*) ;; *) return 0 ;; esac
	_pg_bin=$(pg_bin) && [ -d "$_pg_top/data" ] && pg_as "$_pg_bin/pg_ctl" -D "$_pg_top/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$_pg_top"
	rm -f "$1"
}

# plant_flags ROOT DIR: compiles ROOT's tests/realworld/plant/gate_plant.erl into DIR and prints
# the ERL_AFLAGS that load and start it in a node (GATE_PLANT in the node's environment chooses
# the shapes)
plant_flags() {
	erlc -o "$2" "$1/tests/realworld/plant/gate_plant.erl" || return 1
	echo "-pa $2 -s gate_plant start"
}
