#!/bin/sh
# tests/bench/fine.sh: `make bench`: what the fine level costs, as ratios within one run.
#
# For each project (default: gen_stage and nimble_parsec from $GATE_REALWORLD when there, see
# tests/realworld/lib.sh, and the fine_nif fixture without a leak), copied to a
# temp dir and compiled once, N rounds interleave (the order rotates each round):
#   bare        MIX_ENV=test mix test
#   gate        gate run --json          (every measure of the fine level on)
#   instrument  gate run --instrument --json   (+Muatags true: every allocator tagged)
# and prints the median wall times, gate/bare and instrument/gate, the same for the CPU time
# (user + system of the run and every process it waited for, the node included: GNU time;
# steadier than the wall clock on a shared machine), and each measure's own
# cost as the probe timed it in the node (the JSON's cost_us and edge_cost_us), as a share of
# the gate run's wall time:
#   origins     instrument:allocations(), at the before- and after-snapshot
#   allocators  carriers, their max-ever (the allocated peak), mapped segments, mseg's cache
#   proc        VmRSS/VmHWM of /proc/self/status at the two snapshots
#   edges       VmHWM read and reset at every test module edge (by gate's tracker process,
#               beside the suite: latency, not time the suite waits) and at the edges of a
#               max_peak-tagged test (in the test's process)
# The heap monitor (erlang:system_monitor large_heap) runs in the BEAM's GC and costs nothing
# gate can time; it is inside gate/bare.
#
# usage: [GATE=BINARY] tests/bench/fine.sh [ROUNDS] [PROJECT...]   (default 5 rounds; PROJECT: a folder of
#        $GATE_REALWORLD, or fine_nif). Leaves nothing behind.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
gate=${GATE:-$root/${GATE_BUILD:-build}/gate} # GATE: another binary (a copy, while rebuilding)
. "$root/tests/realworld/lib.sh"
src=$rw_libs
rounds=${1:-5}
[ $# -gt 0 ] && shift
case "$rounds" in
'' | *[!0-9]* | 0) echo "fine bench: error: ROUNDS must be a positive number, got '$rounds'" >&2; exit 2 ;;
esac
[ -x "$gate" ] || { echo "fine bench: error: $gate is missing: run make first" >&2; exit 2; }
if [ $# -gt 0 ]; then
	projects="$*"
else
	projects=""
	for p in gen_stage nimble_parsec; do [ -f "$src/$p/mix.exs" ] && projects="$projects $p"; done
	projects="$projects fine_nif"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-finebench.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export MIX_ENV=test LC_ALL=C
. "$root/tests/bench/stats.sh"
[ -x /usr/bin/time ] || { echo "fine bench: error: /usr/bin/time (GNU time) is missing: apt-get install time" >&2; exit 2; }
cpu="/usr/bin/time -f %U\t%S -o $work/cpu"

# costs JSON: "origins allocators proc edges edge_count" in microseconds, from gate's --json
costs() {
	python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = {"origins": 0, "allocators": 0, "proc": 0}
for side in ("before", "after"):
    f = (d.get(side) or {}).get("fine") or {}
    for k, v in (f.get("cost_us") or {}).items():
        c[k] = c.get(k, 0) + v
p = d.get("peak") or {}
print(c["origins"], c["allocators"], c["proc"], p.get("edge_cost_us", 0), p.get("edges", 0))
EOF
}

# one KIND P D: one run of KIND in D; its wall time (ms) to $work/P.KIND, its costs to
# $work/P.KIND.cost; a run that fails is said (the figures still count: the bench measures)
one() {
	kind=$1 p=$2 d=$3
	t=$(now_ms)
	# the CPU time (user + system) of the run and of every process it waited for (the node):
	# steadier than the wall clock on a shared machine
	case "$kind" in
	bare) (cd "$d" && $cpu mix test >"$work/out" 2>&1) ;;
	gate) $cpu "$gate" run -q -C "$d" --json "$work/run.json" >"$work/out" 2>&1 ;;
	instrument) $cpu "$gate" run -q -C "$d" --instrument --json "$work/run.json" >"$work/out" 2>&1 ;;
	esac
	rc=$?
	echo $(($(now_ms) - t)) >>"$work/$p.$kind"
	tail -n 1 "$work/cpu" | awk '{printf "%d\n", ($1 + $2) * 1000}' >>"$work/$p.$kind.cpu"
	if [ "$rc" -ne 0 ]; then # said, with why (a flaky test of the suite's, or a finding)
		echo "fine bench: $p: $kind exited $rc (counted all the same):" >&2
		grep -E '^gate: |FAIL|[0-9]+ failures?|^  [0-9]+\) test' "$work/out" | head -n 8 | sed 's/^/    /' >&2
	fi
	if [ "$kind" != bare ] && [ -s "$work/run.json" ]; then
		costs "$work/run.json" >>"$work/$p.$kind.cost"
		rm -f "$work/run.json"
	fi
}

printf '%-14s %8s %8s %8s %9s %9s | %-44s\n' project bare_ms gate_ms instr_ms gate/bare instr/gate \
	"fine level's own cost, median ms (% of gate's wall)"
for p in $projects; do
	d="$work/$p"
	if [ "$p" = fine_nif ]; then
		cp -r "$root/tests/fixtures/fine_nif" "$d"
	elif [ -f "$src/$p/mix.exs" ]; then
		cp -r "$src/$p" "$d"
	else
		echo "fine bench: error: no project $p in $src (nor a fixture)" >&2
		exit 2
	fi
	rm -rf "$d/_build" "$d/.gate"
	if ! (cd "$d" && FINE_LEAK=none mix compile >"$work/$p.compile" 2>&1); then
		echo "fine bench: error: $p does not compile:" >&2
		tail -n 20 "$work/$p.compile" >&2
		exit 2
	fi
	: >"$work/$p.bare"
	: >"$work/$p.gate"
	: >"$work/$p.instrument"
	: >"$work/$p.gate.cost"
	: >"$work/$p.instrument.cost"
	i=1
	while [ "$i" -le "$rounds" ]; do
		case $((i % 3)) in
		1) order="bare gate instrument" ;;
		2) order="gate instrument bare" ;;
		0) order="instrument bare gate" ;;
		esac
		for k in $order; do FINE_LEAK=none one "$k" "$p" "$d"; done
		i=$((i + 1))
	done
	b=$(median <"$work/$p.bare")
	g=$(median <"$work/$p.gate")
	n=$(median <"$work/$p.instrument")
	og=$(col "$work/$p.gate.cost" 1)
	al=$(col "$work/$p.gate.cost" 2)
	pr=$(col "$work/$p.gate.cost" 3)
	ed=$(col "$work/$p.gate.cost" 4)
	ne=$(col "$work/$p.gate.cost" 5)
	oi=$(col "$work/$p.instrument.cost" 1)
	cb=$(median <"$work/$p.bare.cpu")
	cg=$(median <"$work/$p.gate.cpu")
	cn=$(median <"$work/$p.instrument.cpu")
	awk -v p="$p" -v b="$b" -v g="$g" -v n="$n" -v og="$og" -v al="$al" -v pr="$pr" \
		-v ed="$ed" -v ne="$ne" -v oi="$oi" -v cb="$cb" -v cg="$cg" -v cn="$cn" 'BEGIN {
		printf "%-14s %8d %8d %8d %8.3fx %8.3fx | origins %.1f (%.2f%%), allocators %.1f (%.2f%%), proc %.2f (%.3f%%), edges %.1f over %d (%.2f%%); origins with --instrument %.1f\n",
			p, b, g, n, g / b, n / g, og / 1000, og / 10 / g, al / 1000, al / 10 / g,
			pr / 1000, pr / 10 / g, ed / 1000, ne, ed / 10 / g, oi / 1000
		printf "%-14s %8d %8d %8d %8.3fx %8.3fx | CPU ms (user + system, the node included)\n",
			p " cpu", cb, cg, cn, cg / cb, cn / cg
	}'
done
echo "fine bench: $rounds rounds per project, bare / gate / gate --instrument interleaved (medians)"
