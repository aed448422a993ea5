#!/bin/sh
# tests/bench/realworld_erl.sh: `make realworld`'s Erlang half: gate's defaults on real rebar3
# projects with their own EUnit tests and Common Test suites, no leak planted. They live on
# this machine, never in the repository: one rebar3 project per folder of $GATE_REALWORLD_ERL
# (default ~/.cache/gate/realworld-erl; CONTRIBUTING.md, "Real projects"). Without any, one
# line says so and the check passes.
#
# Each project is copied to a temp dir; then, N rounds interleaved, a bare
# `rebar3 do eunit, ct` and a `gate run` (default config, a fresh node each time). Per project
# it prints the tests gate recorded, gate's exit codes, and:
#   false alarms  gate exited 1 while the bare run of that round passed and no test failed
#                 under gate. Any false alarm fails the check.
#   test fails    rounds where a test failed (bare or under gate); gate must fail those runs:
#                 a run gate passed with a failed test fails the check.
#   errors        gate exited 2 (or anything but 0/1). Any error fails the check.
#   median wall   bare vs gate (ms) and their ratio (this machine is shared: informative).
#
# Planted leaks at size, as tests/bench/realworld.sh plants them in Mix suites: in each project
# of REALWORLD_PLANT_MIN_TESTS tests or more (1 000 by default), one more `gate run` per kind
# in REALWORLD_PLANT ("ets state procs" by default; "rotate": one kind per large project, in
# turn; "" none) on a copy with tests/realworld/plant/erl/gate_planted_KIND*.erl in its test
# folder: a table an EUnit module fills, a server an EUnit module feeds, processes a Common
# Test suite leaves. Each must fail as exactly one finding that names the structure and the
# module or suite as its culprit, and end with the reproduce line that selects it.
# usage: tests/bench/realworld_erl.sh [ROUNDS]   (default 3; also $REALWORLD_ROUNDS)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
gate="$root/${GATE_BUILD:-build}/gate"
src=${GATE_REALWORLD_ERL:-${HOME:-/root}/.cache/gate/realworld-erl}
rounds=${1:-${REALWORLD_ROUNDS:-3}}
case "$rounds" in
'' | *[!0-9]* | 0) echo "realworld-erl: error: ROUNDS must be a positive number, got '$rounds'" >&2; exit 2 ;;
esac
[ -x "$gate" ] || { echo "realworld-erl: error: $gate is missing: run make first" >&2; exit 2; }
projects=""
for d in "$src"/*/; do
	[ -f "$d/rebar.config" ] && projects="$projects $(basename "$d")"
done
if [ -z "$projects" ]; then
	echo "realworld-erl: ok: skipped, no rebar3 project in $src (GATE_REALWORLD_ERL; CONTRIBUTING.md: Real projects)"
	exit 0
fi
command -v rebar3 >/dev/null 2>&1 || { echo "realworld-erl: error: no rebar3 on PATH (make deps)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-realworld-erl.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export LC_ALL=C
limit=${REALWORLD_TIMEOUT:-900}
. "$root/tests/bench/stats.sh"
. "$root/tests/realworld/lib.sh"
table="$work/table"
printf '%-14s %6s %-12s %6s %6s %6s %9s %9s %6s\n' project tests "gate exits" false tests errors "bare ms" "gate ms" ratio >"$table"
printf '%-14s %6s %-12s %6s %6s %6s %9s %9s %6s\n' "" "" "" alarms failed "" median median "" >>"$table"
bad=0

# planted P D N: the planted runs of project P (copied in D, N tests under gate)
planted() {
	p=$1
	d=$2
	n=$3
	rw_plant_kinds "$n"
	for kind in $rw_kinds; do
		case "$kind" in
		ets) name="ETS table gate_planted_sessions" culprit=gate_planted_ets_tests sel="--module" ;;
		state) name="process gate_planted_cache" culprit=gate_planted_state_tests sel="--module" ;;
		procs) name="processes born during the run" culprit=gate_planted_procs_SUITE sel="--suite" ;;
		*)
			echo "realworld-erl: error: REALWORLD_PLANT names $kind, which is none of ets, state, procs" >&2
			bad=1
			continue
			;;
		esac
		# a copy of its own: rebar3 keeps the object files of test modules it no longer sees
		pd="$work/$p.planted"
		rm -rf "$pd"
		cp -r "$d" "$pd"
		mkdir -p "$pd/test"
		cp "$root/tests/realworld/plant/erl/$culprit.erl" "$pd/test/"
		timeout "$limit" "$gate" run -q -C "$pd" --json "$work/planted.json" >"$work/gate.out" 2>&1
		grc=$?
		rm -rf "$pd"
		rw_plant_check realworld-erl "$kind" "$p" "$grc" "$work/planted.json" "$work/gate.out" \
			"-- $sel $culprit" "$name" "likely culprit: $culprit" "reproduce: gate run -C " || bad=1
	done
}

for p in $projects; do
	d="$work/$p"
	cp -r "$src/$p" "$d"
	(cd "$d" && timeout "$limit" rebar3 as test compile >/dev/null 2>&1)
	: >"$work/$p.bare"
	: >"$work/$p.gate"
	exits="" tests="?" alarms=0 tfail=0 errors=0
	i=1
	while [ "$i" -le "$rounds" ]; do
		t=$(now_ms)
		(cd "$d" && timeout "$limit" rebar3 do eunit, ct >"$work/bare.out" 2>&1)
		brc=$?
		echo $(($(now_ms) - t)) >>"$work/$p.bare"
		t=$(now_ms)
		timeout "$limit" "$gate" run -q -C "$d" >"$work/gate.out" 2>&1
		grc=$?
		echo $(($(now_ms) - t)) >>"$work/$p.gate"
		exits="$exits$grc"
		gline=$(grep -E '^[0-9]+ tests?: [0-9]+ passed, [0-9]+ failed' "$work/gate.out" | tail -n 1)
		gtests=$(printf '%s\n' "$gline" | sed -n 's/^\([0-9][0-9]*\) test.*/\1/p')
		gfail=$(printf '%s\n' "$gline" | sed -n 's/.* passed, \([0-9][0-9]*\) failed.*/\1/p')
		[ -n "$gtests" ] && tests=$gtests
		what=""
		if [ "$grc" -ne 0 ] && [ "$grc" -ne 1 ]; then
			errors=$((errors + 1))
			what="error: gate exited $grc: $(grep 'gate: error' "$work/gate.out" | head -n 1 | cut -c1-300)"
		elif [ "${gfail:-0}" -gt 0 ] || [ "$brc" -ne 0 ]; then
			tfail=$((tfail + 1))
			what="a test failed (bare exit $brc, under gate ${gfail:-0} failed)"
			if [ "${gfail:-0}" -gt 0 ] && [ "$grc" -eq 0 ]; then
				errors=$((errors + 1))
				what="gate PASSED although ${gfail} test(s) failed under it"
			fi
		elif [ "$grc" -eq 1 ]; then
			alarms=$((alarms + 1))
			what="FALSE ALARM: $(grep -A2 '^Failed' "$work/gate.out" | head -n 3 | tr '\n' ' ' | cut -c1-300)"
		fi
		[ -z "$what" ] || echo "realworld-erl: $p round $i: bare exit $brc, gate exit $grc: $what"
		i=$((i + 1))
	done
	bm=$(median <"$work/$p.bare")
	gm=$(median <"$work/$p.gate")
	ratio=$(awk -v b="$bm" -v g="$gm" 'BEGIN { if (b > 0) printf "%.2f", g / b; else print "-" }')
	printf '%-14s %6s %-12s %6s %6s %6s %9s %9s %6s\n' "$p" "$tests" "$exits" "$alarms" "$tfail" "$errors" "$bm" "$gm" "${ratio}x" >>"$table"
	[ "$alarms" -eq 0 ] && [ "$errors" -eq 0 ] && [ $((tfail * 2)) -le "$rounds" ] || bad=1
	planted "$p" "$d" "$tests"
done
cat "$table"
if [ "$bad" -ne 0 ]; then
	echo "realworld-erl: FAILED (a false alarm, an error, or tests failing in most rounds)"
	exit 1
fi
echo "realworld-erl: ok ($rounds rounds, $(echo $projects | wc -w) projects)"
