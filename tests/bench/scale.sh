#!/bin/sh
# tests/bench/scale.sh: `make bench-scale`: gate's cost as a suite grows, as ratios within one
# run (this machine is shared and noisy: no absolute time is asserted).
#
# For each size (BENCH_SCALE_SIZES, default "1000 10000 100000" tests) a synthetic Mix project
# is generated in a temp dir: 100 one-line tests a module (`assert 1 + 1 == 2`), every other
# module `async: true`, no dependency; it is compiled once. Then BENCH_SCALE_ROUNDS rounds
# (default 5; BENCH_SCALE_SMALL_ROUNDS, default 15, for sizes up to BENCH_SCALE_SMALL_MAX, 2 000
# tests: a round there takes 5 s and one round's ratio swings by +-8 % on this machine, where
# gate's fixed cost is 5 %) interleave, the order rotating each round:
#   bare      MIX_ENV=test mix test
#   gate      gate run --json FILE                (the default configuration)
#   pertest   gate run --per-test --json FILE     (sizes up to BENCH_SCALE_PERTEST_MAX, 10 000)
# and it prints per size the medians of:
#   wall          bare and gate (s); gate/bare and pertest/bare as the median over the rounds
#                 of each run against the bare run of its own round (the machine's speed
#                 drifts between rounds here by more than gate costs: a round's own bare run
#                 cancels that out), each round's figure on a line of its own; and gate's
#                 cost in ms (each gate run less its round's bare run: median, quartiles),
#                 which the machine's speed moves less than the ratio;
#   cpu           gate/bare of the CPU time (user + system of the run and of every process it
#                 waited for, the node included: GNU time), per round as the wall's;
#   gate RSS      gate's own peak RSS (VmHWM of gate's process, written at its exit by
#                 tests/bench/hwm.c preloaded into gate alone: GNU time's %M would be the
#                 node's, a child gate waits for) and its bytes per test;
#   junit         the size of gate's JUnit file, and bytes per test;
#   node +gate    the node's memory that gate's probe and hooks add, measured the same way in
#                 both kinds of run: the generated test_helper registers an ExUnit.after_suite
#                 callback that lets the formatters finish, forces GC of every process and
#                 writes erlang:memory() (total, processes_used, ets, binary, code); the gate
#                 run's figures less the bare run's of the same round. This is what the node
#                 holds of gate's when the suite has just finished (the probe's modules, the
#                 hooked ExUnit.EventManager, the tests' records on their way to gate, the
#                 spawn ancestry kept for the after-snapshot): what the after-snapshot would
#                 judge as the suite's unless gate leaves it out;
#   node peak     the node's peak RSS: bare, GNU time's %M of mix test's VM; under gate, the
#                 high-water mark gate reads in the node (the JSON's peak.rss_peak, reset when
#                 the run starts, so the boot and compile are left out of it);
#   verdict       gate's exit codes over the rounds and, for a failure, its failing findings'
#                 first lines (each once);
#   fastest       gate/bare of each kind's fastest run: at 100 000 tests a run takes two and a
#                 half minutes, and this machine's speed moves by 10-25 % within one, between
#                 two runs of a round as much as between rounds; the fastest run of each kind
#                 is the one the machine disturbed least;
#   work          the suite's work in the node, which the machine's speed does not move: the
#                 reductions and the words garbage collected from the test helper (after gate's
#                 before-snapshot) to the suite's end, gate/bare per round, and bare's per test.
# The last lines give gate's peak RSS per test between the smallest and largest size (the
# marginal bytes per test: a linear cost keeps it flat).
#
# usage: [GATE=BINARY] tests/bench/scale.sh     (sizes and rounds from the environment above)
# Leaves nothing behind: the temp dir is removed and a run in progress is stopped on exit.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
gate=${GATE:-$root/${GATE_BUILD:-build}/gate}
sizes=${BENCH_SCALE_SIZES:-1000 10000 100000}
rounds=${BENCH_SCALE_ROUNDS:-5}
smallrounds=${BENCH_SCALE_SMALL_ROUNDS:-15}
smallmax=${BENCH_SCALE_SMALL_MAX:-2000}
ptmax=${BENCH_SCALE_PERTEST_MAX:-10000}
for v in $sizes $rounds $smallrounds $smallmax $ptmax; do
	case "$v" in
	'' | *[!0-9]* | 0) echo "scale bench: error: sizes, rounds and the per-test maximum are positive numbers, got '$v'" >&2; exit 2 ;;
	esac
done
[ -x "$gate" ] || { echo "scale bench: error: $gate is missing: run make first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "scale bench: error: /usr/bin/time (GNU time) is missing: apt-get install time" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-scale.XXXXXX")
child=""
# a run in progress is stopped (gate stops its node on SIGTERM; bare mix test's VM exits)
stop() { [ -n "$child" ] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null; rm -rf "$work"; }
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export MIX_ENV=test LC_ALL=C
${CC:-cc} -shared -fPIC -O2 -o "$work/hwm.so" "$root/tests/bench/hwm.c" ||
	{ echo "scale bench: error: cannot build tests/bench/hwm.c" >&2; exit 2; }
. "$root/tests/bench/stats.sh"

# gen DIR TESTS: the synthetic project, compiled
gen() {
	d=$1
	mkdir -p "$d/lib" "$d/test"
	cat >"$d/mix.exs" <<'EOF'
defmodule Scale.MixProject do
  use Mix.Project
  def project, do: [app: :scale, version: "0.1.0", elixir: "~> 1.14", deps: []]
end
EOF
	echo 'defmodule Scale do def one, do: 1 end' >"$d/lib/scale.ex"
	# the node's memory at the suite's end, written the same way with and without gate: the
	# formatters finish first (gate's casts are asynchronous), then GC of every process and
	# the allocators' delayed frees
	# the suite's work in the node: the reductions and the words garbage collected from here
	# (the test helper, after gate's before-snapshot) to the suite's end, read before the
	# pause and the GC pass
	cat >"$d/test/test_helper.exs" <<'EOF'
{red0, _} = :erlang.statistics(:reductions)
{_, gcw0, _} = :erlang.statistics(:garbage_collection)
ExUnit.start()

if path = System.get_env("SCALE_MEM_FILE") do
  ExUnit.after_suite(fn _ ->
    {red, _} = :erlang.statistics(:reductions)
    {_, gcw, _} = :erlang.statistics(:garbage_collection)
    Process.sleep(200)
    Enum.each(Process.list(), &:erlang.garbage_collect/1)
    Process.sleep(50)
    m = :erlang.memory()
    keys = [:total, :processes_used, :ets, :binary, :code]
    figures = Enum.map(keys, &m[&1]) ++ [red - red0, gcw - gcw0]
    File.write!(path, Enum.map_join(figures, " ", &Integer.to_string/1))
  end)
end
EOF
	awk -v mods=$(($2 / 100)) -v d="$d" 'BEGIN {
		for (m = 1; m <= mods; m++) {
			f = d "/test/m" m "_test.exs"
			printf "defmodule Scale.M%dTest do\n  use ExUnit.Case, async: %s\n", m, (m % 2 ? "false" : "true") >f
			for (t = 1; t <= 100; t++)
				printf "  test \"t %d\", do: assert(1 + 1 == 2)\n", t >f
			print "end" >f
			close(f)
		}
	}'
	(cd "$d" && mix compile >"$work/compile.out" 2>&1) ||
		{ echo "scale bench: error: the generated project does not compile:" >&2; tail -n 20 "$work/compile.out" >&2; exit 2; }
}

# one KIND N D: one run; appends "wall_ms cpu_ms rc hwm_kB junit_B mem(5) node_peak_kB
# reductions gc_words" to $work/N.KIND
one() {
	kind=$1 n=$2 d=$3
	rm -f "$work/cpu" "$work/hwm" "$work/mem" "$work/run.json" "$d/_build/gate/junit.xml"
	t=$(now_ms)
	case "$kind" in
	bare) (cd "$d" && exec /usr/bin/time -f '%U %S %M' -o "$work/cpu" mix test) >"$work/out" 2>&1 &
		;;
	gate) /usr/bin/time -f '%U %S' -o "$work/cpu" env LD_PRELOAD="$work/hwm.so" GATE_BENCH_HWM="$work/hwm" \
		"$gate" run -q -C "$d" --json "$work/run.json" >"$work/out" 2>&1 &
		;;
	pertest) /usr/bin/time -f '%U %S' -o "$work/cpu" env LD_PRELOAD="$work/hwm.so" GATE_BENCH_HWM="$work/hwm" \
		"$gate" run -q -C "$d" --per-test --json "$work/run.json" >"$work/out" 2>&1 &
		;;
	esac
	child=$!
	wait "$child"
	rc=$?
	child=""
	wall=$(($(now_ms) - t))
	cpu=$(tail -n 1 "$work/cpu" 2>/dev/null | awk '{printf "%d", ($1 + $2) * 1000}')
	hwm=$(awk '{print $1}' "$work/hwm" 2>/dev/null)
	junit=$(stat -c %s "$d/_build/gate/junit.xml" 2>/dev/null)
	mem=$(cut -d ' ' -f 1-5 "$work/mem" 2>/dev/null)
	work_=$(cut -d ' ' -f 6-7 "$work/mem" 2>/dev/null)
	if [ "$kind" = bare ]; then
		peak=$(tail -n 1 "$work/cpu" 2>/dev/null | awk '{print $3}')
	else
		peak=$(sed -n 's/.*"rss_peak": *\([0-9]*\).*/\1/p' "$work/run.json" 2>/dev/null | head -n 1)
		peak=$((${peak:-0} / 1024))
	fi
	echo "$wall ${cpu:-0} $rc ${hwm:-0} ${junit:-0} ${mem:-0 0 0 0 0} ${peak:-0} ${work_:-0 0}" >>"$work/$n.$kind"
	if [ "$kind" = bare ]; then
		grep -q "^$n tests, 0 failures" "$work/out" ||
			{ echo "scale bench: $n: bare mix test did not pass $n tests:" >&2; tail -n 5 "$work/out" >&2; }
	elif [ "$rc" -ne 0 ]; then
		# the failing findings' first lines, each once per size
		python3 - "$work/run.json" >>"$work/$n.$kind.fail" <<'EOF' || grep -E '^gate: ' "$work/out" >>"$work/$n.$kind.fail"
import json, sys
d = json.load(open(sys.argv[1]))
for f in d.get("findings") or []:
    if f.get("verdict") == "FAIL":
        print("%s: %s" % (f.get("rule"), (f.get("message") or "").split("\n")[0][:200]))
EOF
	fi
}

printf '%7s %8s %8s %9s %8s %9s %9s %8s %7s %7s %16s %13s  %s\n' tests bare_s gate_s gate/bare cpu_g/b \
	pertest/b gate_rss rss_B/t junit_B/t node+MB "node B/t (p/e/c)" "node_peak_MB" verdict
for n in $sizes; do
	d="$work/p$n"
	gen "$d" "$n"
	export SCALE_MEM_FILE="$work/mem"
	kinds="bare gate"
	[ "$n" -le "$ptmax" ] && kinds="bare gate pertest"
	for k in $kinds; do : >"$work/$n.$k"; done
	nrounds=$rounds
	[ "$n" -le "$smallmax" ] && [ "$smallrounds" -gt "$rounds" ] && nrounds=$smallrounds
	i=1
	while [ "$i" -le "$nrounds" ]; do
		case "$kinds $((i % 3))" in
		*pertest\ 1) order="bare gate pertest" ;;
		*pertest\ 2) order="gate pertest bare" ;;
		*pertest\ 0) order="pertest bare gate" ;;
		*\ 0 | *\ 2) order="gate bare" ;;
		*) order="bare gate" ;;
		esac
		for k in $order; do one "$k" "$n" "$d"; done
		i=$((i + 1))
	done
	unset SCALE_MEM_FILE
	# the node's figures under gate less the bare run's of the same round: per round, then medians
	paste -d ' ' "$work/$n.gate" "$work/$n.bare" | awk '{
		o = NF / 2 # column k of the bare run is $(o + k)
		printf "%d %d %d %d %d\n", $6 - $(o + 6), $7 - $(o + 7), $8 - $(o + 8), $9 - $(o + 9), $10 - $(o + 10)
	}' >"$work/$n.node"
	b=$(col "$work/$n.bare" 1)
	g=$(col "$work/$n.gate" 1)
	# each round's ratios against its own bare run (wall, cpu) and its wall less the bare run's
	# (ms), and their medians
	paste -d ' ' "$work/$n.gate" "$work/$n.bare" |
		awk '{o = NF / 2; printf "%.3f %.3f %d\n", $1 / $(o + 1), $2 / ($(o + 2) > 0 ? $(o + 2) : 1), $1 - $(o + 1)}' \
			>"$work/$n.paired"
	gb=$(col "$work/$n.paired" 1)
	cgb=$(col "$work/$n.paired" 2)
	pb_=0
	if [ -s "$work/$n.pertest" ] 2>/dev/null; then
		paste -d ' ' "$work/$n.pertest" "$work/$n.bare" | awk '{printf "%.3f\n", $1 / $(NF / 2 + 1)}' \
			>"$work/$n.ppaired"
		pb_=$(median <"$work/$n.ppaired")
	fi
	hwm=$(col "$work/$n.gate" 4)
	junit=$(col "$work/$n.gate" 5)
	nt=$(col "$work/$n.node" 1)
	np=$(col "$work/$n.node" 2)
	ne=$(col "$work/$n.node" 3)
	nc=$(col "$work/$n.node" 5)
	pb=$(col "$work/$n.bare" 11)
	pg=$(col "$work/$n.gate" 11)
	rcs=$(awk '{printf "%s%s", sep, $3; sep = ","}' "$work/$n.gate")
	prcs=""
	[ -s "$work/$n.pertest" ] 2>/dev/null && prcs=" per-test $(awk '{printf "%s%s", sep, $3; sep = ","}' "$work/$n.pertest")"
	echo "$n $hwm" >>"$work/rss"
	awk -v n="$n" -v b="$b" -v g="$g" -v gb="$gb" -v cgb="$cgb" -v p="$pb_" -v hwm="$hwm" -v j="$junit" \
		-v nt="$nt" -v np="$np" -v ne="$ne" -v nc="$nc" -v pb="$pb" -v pg="$pg" -v v="exit $rcs$prcs" 'BEGIN {
		pt = p > 0 ? sprintf("%8.3fx", p) : sprintf("%9s", "-")
		printf "%7d %8.1f %8.1f %8.3fx %7.3fx %s %6.1f MB %8.0f %9.0f %7.2f %16s %13s  %s\n",
			n, b / 1000, g / 1000, gb, cgb, pt, hwm / 1000, hwm * 1000 / n, j / n,
			nt / 1e6, sprintf("%.0f (%.0f/%.0f/%.0f)", nt / n, np / n, ne / n, nc / n),
			sprintf("%.0f -> %.0f", pb / 1024, pg / 1024), v
	}'
	for k in gate pertest; do
		[ -s "$work/$n.$k.fail" ] && sort "$work/$n.$k.fail" | uniq -c | sed "s/^/    $k fails: /"
	done
	# each round's gate/bare against its own bare run: see tests/bench/paired.sh for more rounds
	bmin=$(colmin "$work/$n.bare" 1)
	gmin=$(colmin "$work/$n.gate" 1)
	printf '    paired: gate/bare per round %s (median %.3f; of the medians %.3f; of the fastest runs %.3f)\n' \
		"$(cut -d ' ' -f 1 "$work/$n.paired" | tr '\n' ' ' | sed 's/ $//')" "$gb" \
		"$(awk -v b="$b" -v g="$g" 'BEGIN {printf "%.3f", g / b}')" \
		"$(awk -v b="$bmin" -v g="$gmin" 'BEGIN {printf "%.3f", (b > 0 ? g / b : 0)}')"
	# gate's cost in milliseconds, each run less its round's bare run: the fixed part does not
	# move with this machine's speed as the ratio does
	awk -v m="$(col "$work/$n.paired" 3)" -v q1="$(cut -d ' ' -f 3 "$work/$n.paired" | quartile 1)" \
		-v q3="$(cut -d ' ' -f 3 "$work/$n.paired" | quartile 3)" 'BEGIN {
		printf "    paired: gate - bare %+.0f ms (median of the rounds; quartiles %+.0f, %+.0f ms)\n", m, q1, q3
	}'
	# the suite's work in the node, the machine's speed left out: each round's gate/bare of
	# the reductions and of the words garbage collected (test helper to the suite's end)
	paste -d ' ' "$work/$n.gate" "$work/$n.bare" | awk '{
		o = NF / 2
		if ($(o + 12) > 0 && $(o + 13) > 0)
			printf "%.4f %.4f\n", $12 / $(o + 12), $13 / $(o + 13)
	}' >"$work/$n.work"
	[ -s "$work/$n.work" ] &&
		printf '    work in the node (test helper to the suite'"'"'s end), gate/bare: reductions %.4f, words garbage collected %.4f (medians of %s rounds; bare %.0f and %.0f a test)\n' \
			"$(col "$work/$n.work" 1)" "$(col "$work/$n.work" 2)" "$(wc -l <"$work/$n.work")" \
			"$(awk -v r="$(col "$work/$n.bare" 12)" -v n="$n" 'BEGIN {print r / n}')" \
			"$(awk -v r="$(col "$work/$n.bare" 13)" -v n="$n" 'BEGIN {print r / n}')"
	[ -s "$work/$n.ppaired" ] 2>/dev/null &&
		printf '    paired: per-test/bare per round %s\n' "$(tr '\n' ' ' <"$work/$n.ppaired" | sed 's/ $//')"
	echo "    runs (wall ms, cpu ms, exit, gate kB, junit B, node total/processes_used/ets/binary/code B, node peak kB, reductions, words garbage collected):" \
		"bare $(cut -d ' ' -f 1,2,6- "$work/$n.bare" | tr '\n' '|')" \
		"gate $(cut -d ' ' -f 1- "$work/$n.gate" | tr '\n' '|')"
	[ -s "$work/$n.pertest" ] 2>/dev/null && echo "    per-test $(cut -d ' ' -f 1- "$work/$n.pertest" | tr '\n' '|')"
	rm -rf "$d"
done
sort -n "$work/rss" | awk 'NR == 1 {n0 = $1; h0 = $2} {n = $1; h = $2} END {
	if (NR > 1 && n > n0)
		printf "scale bench: gate peak RSS %.1f MB at %d tests, %.1f MB at %d: %.0f bytes per added test\n",
			h0 / 1000, n0, h / 1000, n, (h - h0) * 1000 / (n - n0)
}'
echo "scale bench: $rounds rounds per size ($smallrounds up to $smallmax tests), interleaved (order rotating); ratios are medians of each round's own, per-test up to $ptmax tests"
