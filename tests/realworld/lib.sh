# tests/realworld/lib.sh: where real projects live on this machine, and what the harness gives
# any of them to run: a private PostgreSQL, and leak shapes planted without changing a line of
# the project. Sourced (POSIX sh) by tests/bench/realworld.sh, tests/bench/fine.sh and the e2e
# cases that use real projects; it defines functions and three variables, and runs nothing.
#
# Real projects are never part of the repository. They are brought onto the machine by the
# contributor (CONTRIBUTING.md, "Real projects") and found here:
#   $GATE_REALWORLD       library suites, one Mix project per folder (default ~/.cache/gate/realworld)
#   $GATE_REALWORLD_APPS  applications, one Mix project per folder, its dependencies compiled
#                         offline from inside it (default ~/.cache/gate/apps)

rw_libs=${GATE_REALWORLD:-${HOME:-/root}/.cache/gate/realworld}
rw_apps=${GATE_REALWORLD_APPS:-${HOME:-/root}/.cache/gate/apps}

# rw_plant_kinds N: sets rw_kinds to the leak kinds to plant in a project of N tests:
# REALWORLD_PLANT ("ets state procs" by default; "" none; "rotate": one kind per project, in
# turn, rw_plant_turn counting) when N is REALWORLD_PLANT_MIN_TESTS (1 000) or more, else none.
rw_plant_turn=0
rw_plant_kinds() {
	rw_kinds=""
	case "$1" in '' | *[!0-9]*) return 0 ;; esac
	[ "$1" -ge "${REALWORLD_PLANT_MIN_TESTS:-1000}" ] || return 0
	rw_kinds=${REALWORLD_PLANT-ets state procs}
	if [ "$rw_kinds" = rotate ]; then
		case $((rw_plant_turn % 3)) in 0) rw_kinds=ets ;; 1) rw_kinds=state ;; *) rw_kinds=procs ;; esac
		rw_plant_turn=$((rw_plant_turn + 1))
	fi
}

# rw_plant_check TAG KIND P GRC JSON OUT ENDS WANT...: whether gate's run on project P with
# the leak KIND planted (its exit GRC, its --json in JSON, its output in OUT) failed as
# exactly one finding that says every WANT (an empty one is skipped) and, when ENDS is not
# empty, ends with ENDS. Prints "TAG: planted KIND in P: caught, 1 finding: ..." or
# "... NOT caught as one finding ..." with what it saw; returns 0, or 1 when not caught.
rw_plant_check() {
	_rw_tag=$1 _rw_kind=$2 _rw_p=$3 _rw_grc=$4 _rw_json=$5 _rw_out=$6 _rw_ends=$7
	shift 7
	_rw_said=$(python3 - "$_rw_json" "$_rw_ends" "$@" 2>&1 <<'PY'
import json, sys
path, ends = sys.argv[1:3]
d = json.load(open(path))
failed = [f for f in d["findings"] if f.get("verdict") == "FAIL"]
if len(failed) != 1:
    print("%d failing findings, expected 1: %s" % (len(failed), " | ".join(f["message"][:90] for f in failed)))
    sys.exit(1)
m = failed[0]["message"]
for want in sys.argv[3:]:
    if want and want not in m:
        print("the finding does not say %s: %s" % (want, m[:200]))
        sys.exit(1)
if ends and not m.endswith(ends):
    print("the finding does not end with %s: %s" % (ends, m[-120:]))
    sys.exit(1)
print(m[:110].replace("\n", " "))
PY
)
	_rw_vrc=$?
	if [ "$_rw_grc" -eq 1 ] && [ "$_rw_vrc" -eq 0 ]; then
		echo "$_rw_tag: planted $_rw_kind in $_rw_p: caught, 1 finding: $_rw_said"
		return 0
	fi
	echo "$_rw_tag: planted $_rw_kind in $_rw_p: NOT caught as one finding (gate exit $_rw_grc): $_rw_said"
	grep -E 'FAIL|error' "$_rw_out" | head -n 8 | sed 's/^/    /'
	return 1
}

# rw_projects DIR: the names of the Mix projects in DIR (folders with a mix.exs), one line each
rw_projects() {
	[ -d "$1" ] || return 0
	for _rw_p in "$1"/*/; do
		[ -f "$_rw_p/mix.exs" ] && basename "$_rw_p"
	done
	return 0
}

# rw_copies DIR N: N-1 more copies of each test file of the Mix project in DIR (a suite N times
# its size, as an application's), each copy's modules renamed: every module a test file
# defines at its top level, Name, is Name.CopyK in copy K, everywhere in that copy. The copies
# run as sync modules (`async: true` becomes `async: false`): a test's literal names (a
# registered atom, a :global name) and its captured log are the same in every copy, so async
# copies running side by side broke each other's tests (gen_stage x10: 6 of 2 120 failed)
rw_copies() {
	[ "${2:-1}" -gt 1 ] || return 0
	find "$1/test" -name '*_test.exs' | while read -r f; do
		names=$(sed -n 's/^defmodule \([A-Za-z0-9_.]*\) do.*/\1/p' "$f")
		k=2
		while [ "$k" -le "$2" ]; do
			RW_NAMES="$names" RW_K="$k" perl -pe 'BEGIN { @n = split /\s+/, $ENV{RW_NAMES}; $k = $ENV{RW_K} }
				for my $n (@n) { s/(?<![\w.])\Q$n\E(?![\w])/$n.Copy$k/g } s/\basync:\s*true\b/async: false/g' <"$f" >"${f%_test.exs}_copy${k}_test.exs"
			k=$((k + 1))
		done
	done
}

# rw_copy_app DIR TO: a copy of the application in DIR at TO (a new path), with what its folder
# holds (its dependencies, and a _build compiled there, which saves minutes), its compiled
# Erlang sources told where they now are. Mix 1.14's manifest of compiled Erlang sources
# (_build/ENV/lib/APP/.mix/compile.erlang) names each .beam by its absolute path: a copy's
# `mix compile` took the original's as stale, deleted them (in DIR: todo_trek lost 15), and
# recompiled every module depending on them (94 files, 39 s on 2 busy cores, against 7 s). The
# copy's manifests get TO for DIR; their times are kept, so Mix sees nothing stale.
rw_copy_app() {
	cp -a "$1" "$2" || return 1
	_rw_from=$(cd "$1" && pwd -P) && _rw_to=$(cd "$2" && pwd -P) || return 1
	erl -noshell -eval '
		[From, To, Dir] = init:get_plain_arguments(),
		F = list_to_binary(From ++ "/"), T = list_to_binary(To ++ "/"), N = byte_size(F),
		Re = fun Re(<<P:N/binary, R/binary>>) when P =:= F -> <<T/binary, R/binary>>;
			Re(X) when is_list(X) -> [Re(E) || E <- X];
			Re(X) when is_tuple(X) -> list_to_tuple(Re(tuple_to_list(X)));
			Re(X) -> X end,
		Rebase = fun(M) -> {ok, I} = file:read_file_info(M), {ok, B} = file:read_file(M),
			ok = file:write_file(M, term_to_binary(Re(binary_to_term(B)))),
			ok = file:write_file_info(M, I) end,
		try lists:foreach(Rebase, filelib:wildcard(Dir ++ "/_build/*/lib/*/.mix/compile.erlang")) of
			ok -> halt(0)
		catch C:E -> io:format(standard_error, "rw_copy_app: ~p:~p~n", [C, E]), halt(1) end.' \
		-extra "$_rw_from" "$_rw_to" "$2"
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

# pg_as_prefix: the words that run a command as the user the cluster runs as (PostgreSQL
# refuses to run as root: as root, the postgres user Debian's package creates, else nobody)
pg_as_prefix() {
	if [ "$(id -u)" -ne 0 ]; then
		:
	elif id postgres >/dev/null 2>&1; then
		echo "runuser -u postgres --"
	else
		echo "runuser -u nobody --"
	fi
}

# pg_as CMD...: CMD as that user
pg_as() {
	# shellcheck disable=SC2046 # the prefix is words
	$(pg_as_prefix) "$@"
}

# pg_start ENVFILE: a private PostgreSQL cluster, trust authentication, superuser postgres (what
# a generated Phoenix config/test.exs expects, with any password), where an application finds
# it unchanged, in a temp dir of its own (PG_TOP). As root, in a network namespace of its own
# (PG_NETNS): the server listens on 127.0.0.1:5432 there, which is localhost's default port
# for Postgrex, and no other user's server or port can collide with it; whatever must reach it
# runs in that namespace (pg_wrap). Without the rights for one, on a Unix socket only
# (PGHOST, that dir): Postgrex takes a PGHOST that is a directory as its socket directory,
# before the configuration's hostname. ENVFILE gets PG_TOP, PG_NETNS or PGHOST, and PGPORT.
# Returns 1 with the server's log on stderr on failure.
pg_start() {
	_pg_bin=$(pg_bin) || { echo "no PostgreSQL server (apt-get install postgresql; integrations/deps.sh installs it)" >&2; return 1; }
	_pg_top=$(mktemp -d "${TMPDIR:-/tmp}/gate-pg.XXXXXX") || return 1
	chmod 755 "$_pg_top"
	[ "$(id -u)" -ne 0 ] || chown "$(id postgres >/dev/null 2>&1 && echo postgres || echo nobody)" "$_pg_top"
	echo "PG_TOP=$_pg_top" >"$1"
	pg_as "$_pg_bin/initdb" -D "$_pg_top/data" -U postgres --auth=trust -E UTF8 --no-sync >"$_pg_top/initdb.log" 2>&1 ||
		{ cat "$_pg_top/initdb.log" >&2; return 1; }
	_pg_ns="$_pg_top/netns"
	_pg_in=""
	_pg_listen="''"
	if [ "$(id -u)" -eq 0 ] && : >"$_pg_ns" && unshare --net="$_pg_ns" true 2>/dev/null &&
		nsenter --net="$_pg_ns" ip link set lo up 2>/dev/null; then
		echo "PG_NETNS=$_pg_ns" >>"$1"
		_pg_in="nsenter --net=$_pg_ns"
		_pg_listen=127.0.0.1
	else
		rm -f "$_pg_ns"
		echo "PGHOST=$_pg_top" >>"$1"
	fi
	echo "PGPORT=5432" >>"$1"
	# shellcheck disable=SC2046 # the prefixes are words
	if ! $_pg_in $(pg_as_prefix) "$_pg_bin/pg_ctl" -D "$_pg_top/data" -l "$_pg_top/server.log" -w -t 60 \
		-o "-c listen_addresses=$_pg_listen -p 5432 -k $_pg_top -c fsync=off -c full_page_writes=off" start >/dev/null 2>&1; then
		cat "$_pg_top/server.log" >&2
		return 1
	fi
}

# pg_env ENVFILE: exports what pg_start wrote for the applications (PGHOST without a network
# namespace, PGPORT)
pg_env() {
	PGPORT=$(sed -n 's/^PGPORT=//p' "$1")
	export PGPORT
	if grep -q '^PGHOST=' "$1"; then
		PGHOST=$(sed -n 's/^PGHOST=//p' "$1")
		export PGHOST
	fi
}

# pg_wrap ENVFILE: the command prefix that runs a command where the cluster is reachable
# ("nsenter --net=..." in its network namespace; nothing without one)
pg_wrap() {
	_pg_ns=$(sed -n 's/^PG_NETNS=//p' "$1" 2>/dev/null)
	[ -z "$_pg_ns" ] || echo "nsenter --net=$_pg_ns"
}

# pg_stop ENVFILE: stops the cluster pg_start wrote ENVFILE for, leaves its namespace and
# removes its data
pg_stop() {
	[ -f "$1" ] || return 0
	_pg_top=$(sed -n 's/^PG_TOP=//p' "$1")
	case "$_pg_top" in */gate-pg.*) ;; *) return 0 ;; esac
	_pg_bin=$(pg_bin) && [ -d "$_pg_top/data" ] && pg_as "$_pg_bin/pg_ctl" -D "$_pg_top/data" -m immediate -w stop >/dev/null 2>&1
	[ ! -e "$_pg_top/netns" ] || umount "$_pg_top/netns" 2>/dev/null
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
