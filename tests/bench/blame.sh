#!/bin/bash
# tests/bench/blame.sh: whom gate blames for a leak that an application's own request
# handling fills in every test. Each Phoenix application of $GATE_REALWORLD_APPS
# (tests/realworld/lib.sh) is copied, compiled once and run N times under `gate run` with a
# leak shape of tests/realworld/plant/gate_plant.erl (GATE_PLANT, default bodies), with
# GITHUB_ACTIONS=true; a private PostgreSQL when it uses postgrex. Per run it prints the
# exit code, the failing testcases, the ::error annotations and how many of them are placed
# on a test file (file=), and the blame each failure gives ("likely culprit: M", "spread over
# N test modules", "no test stands out"); then the tally of blames. Such a leak is spread
# over the suite: a run that names one module, or places an annotation on a test file, is
# suspect. Nothing is left behind.
#
# usage: tests/bench/blame.sh [RUNS] [SHAPE] [GATE]   (default 20 runs, bodies, build/gate)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${1:-20}
SHAPE=${2:-bodies}
GATE=${3:-$ROOT/build/gate}
. "$ROOT/tests/realworld/lib.sh"
top=$(mktemp -d "${TMPDIR:-/tmp}/gate-blame.XXXXXX")
trap 'pg_stop "$top/pg.env"; rm -rf "$top"' EXIT

one_app() { # DIR
	local name i rc j nf na nfile blame flags wrap=""
	name=$(basename "$1")
	rm -rf "$top/app" "$top/plant"
	rw_copy_app "$1" "$top/app" || { echo "blame: cannot copy $1" >&2; return 1; }
	rm -rf "$top/app/.gate" "$top/app/_build/gate"
	mkdir "$top/plant"
	flags=$(plant_flags "$ROOT" "$top/plant") || { echo "blame: gate_plant.erl does not compile"; return 1; }
	if rw_needs_postgres "$top/app"; then
		pg_start "$top/pg.env" 2>"$top/pg.err" || { echo "blame: $name: PostgreSQL did not start: $(tail -n 3 "$top/pg.err")"; return 1; }
		pg_env "$top/pg.env"
		wrap=$(pg_wrap "$top/pg.env")
	fi
	(cd "$top/app" && MIX_ENV=test mix compile >"$top/compile.log" 2>&1) ||
		{ echo "blame: $name does not compile: $(tail -n 3 "$top/compile.log")"; return 1; }
	echo "blame: $name, GATE_PLANT=$SHAPE, $RUNS runs"
	for i in $(seq 1 "$RUNS"); do
		# shellcheck disable=SC2086 # wrap is a command prefix
		GITHUB_ACTIONS=true GITHUB_WORKSPACE="$top/app" GATE_PLANT=$SHAPE ERL_AFLAGS="$flags" \
			timeout 300 $wrap "$GATE" run -C "$top/app" >"$top/out" 2>"$top/err"
		rc=$?
		j="$top/app/_build/gate/junit.xml"
		nf=$(grep -c '<failure ' "$j" 2>/dev/null)
		na=$(grep -c '^::error' "$top/out")
		nfile=$(grep -c '^::error file=' "$top/out")
		blame=$(grep -o '<failure message="[^"]*"' "$j" 2>/dev/null |
			grep -o 'likely culprit: [^ (]*\|spread over [0-9]* test modules\|async test modules running side by side\|no test stands out' |
			head -n 1)
		echo "  run $i: exit $rc, $nf failing, $na annotations, $nfile on a test file, ${blame:-no blame}"
		echo "${blame:-no blame}" >>"$top/tally"
	done
	echo "blame: $name tally:"
	sort "$top/tally" | uniq -c | sed 's/^/  /'
	rm -f "$top/tally"
	pg_stop "$top/pg.env"
	unset PGHOST PGPORT
}

n=0
for p in $(rw_projects "$rw_apps"); do
	rw_is_phoenix "$rw_apps/$p" || continue
	n=$((n + 1))
	one_app "$rw_apps/$p" || exit 1
done
[ "$n" -gt 0 ] || echo "blame: no Phoenix application in $rw_apps (GATE_REALWORLD_APPS; CONTRIBUTING.md: Real projects): nothing to run"
