#!/bin/sh
# tests/bench/snapshot.sh: the cost of `gate snapshot --attach` on big nodes, as ratios within
# one run (this machine is shared: every figure is given as min-median-max over the rounds,
# and each ratio is taken within a round, the measures of a round run back to back).
# A node with N idle processes (10 % holding a 100-byte sub-binary of a 1 kB binary) and
# 1 000 ETS tables of 100 rows; per round, interleaved:
#   (b) the floor: one compiled in-node pass of erlang:garbage_collect/1 + process_info(P,
#       memory) over every process (bench_node:floor_us/0, called with erl_call)
#   (r) recon-style in-node profiling as teams paste it (bench_node:recon_us/0): top
#       processes by memory, binary-leak suspects with GC, ETS breakdown
#   (a) gate snapshot --attach NODE --json F, the whole command as a fresh process: connect,
#       probe load, GC + one pass, transfer, decode, probe removal, JSON. Its breakdown, from
#       its progress lines and the JSON: connect (until "attached"), in-node GC + scan
#       (gc_us), load + transfer + decode (the rest until "snapshot decoded"), clean-up and
#       JSON (after it, until the process ended)
#   (c) gate run's marked deep snapshots, timed inside the node (bench_node:marked_us/0): the
#       before-snapshot (which remembers what exists) and the after-snapshot (what grew)
# Targets: (a) <= 1.3x (b) at SMALL; (a) at LARGE <= 1.1 x LARGE/SMALL x (a) at SMALL (linear);
# gate's peak RSS <= 20 MiB. Nothing here is asserted: `make bench` prints, people judge.
# usage: tests/bench/snapshot.sh [SMALL] [LARGE] [ROUNDS]   (default 100000 1000000 5)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
gate="$root/${GATE_BUILD:-build}/gate"
small=${1:-100000}
large=${2:-1000000}
rounds=${3:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-bench-snap.XXXXXX")
probe_dir=${BENCH_PROBE_DIR:-$root/${GATE_BUILD:-build}/probe}
erl_call=$(ls /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | head -n 1)
epmd_pid=""
node_pid=""
cleanup() {
	# measure runs in a command substitution (a subshell): its node's pid is in a file
	[ -f "$work/node.pid" ] && node_pid=$(cat "$work/node.pid")
	[ -z "$node_pid" ] || kill -9 "$node_pid" 2>/dev/null || true
	[ -z "$epmd_pid" ] || kill "$epmd_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
erlc -o "$work" "$root/tests/bench/bench_node.erl"
# a private epmd on a free port, and a private HOME holding the cookie: nothing on a command
# line, nothing shared with other nodes on this machine
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + $$ % 30000)))
export ERL_EPMD_PORT=$port HOME="$work"
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$work/.erlang.cookie"
chmod 400 "$work/.erlang.cookie"
epmd -port "$port" -address 127.0.0.1 &
epmd_pid=$!
sleep 0.3
name="bench_$$@127.0.0.1"

now_us() { date +%s%6N; }

# gate's peak RSS in kB: GNU time's maximum resident set size (no polling on a busy machine)
timer=/usr/bin/time
[ -x "$timer" ] || { echo "bench: needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 2; }

# stats FILE: "min median max" of the numbers in FILE
stats() { sort -n "$1" | awk '{v[NR]=$1} END {printf "%.0f %.0f %.0f", v[1], v[int((NR+1)/2)], v[NR]}'; }
# rstats FILE: "min median max" of the ratios in FILE, two decimals
rstats() { sort -n "$1" | awk '{v[NR]=$1} END {printf "%.2f %.2f %.2f", v[1], v[int((NR+1)/2)], v[NR]}'; }

measure() { # N: prints per-round figures to stderr; on stdout "a_med b_med rss_max ratio_med"
	n=$1
	rm -f "$work/ready"
	(cd "$work" && exec erl -noshell -name "$name" -kernel inet_dist_use_interface '{127,0,0,1}' \
		+P $((n * 2 + 100000)) -pa "$work" -pa "$probe_dir" \
		-eval "bench_node:start($n, 1000), file:write_file(\"ready\", \"ok\")") >/dev/null 2>&1 &
	node_pid=$!
	echo "$node_pid" >"$work/node.pid"
	i=0
	while [ ! -f "$work/ready" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	[ -f "$work/ready" ] || { echo "bench: node did not start" >&2; exit 1; }
	for f in a b r c rss conn scan load clean json ra rr; do : >"$work/$f"; done
	r=0
	while [ $r -lt "$rounds" ]; do
		b=$("$erl_call" -name "$name" -a 'bench_node floor_us []' | tr -d '\r' | awk '{printf "%.0f", $1 / 1000}')
		t=$(now_us)
		GATE_PROGRESS_MS=1 "$timer" -f %M -o "$work/rss1" "$gate" snapshot --attach "$name" \
			--json "$work/snap.json" 2>"$work/progress" ||
			{ echo "bench: gate snapshot failed:" >&2; cat "$work/progress" >&2; exit 1; }
		cat "$work/rss1" >>"$work/rss"
		a=$((($(now_us) - t) / 1000))
		# untimed: the purge gate left to the node ends before anything else is measured
		i=0
		while [ "$("$erl_call" -name "$name" -a 'erlang check_old_code [gate_probe]')" != false ] &&
			[ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
		rc=$("$erl_call" -name "$name" -a 'bench_node recon_us []' | tr -d '\r' | awk '{printf "%.0f", $1 / 1000}')
		"$erl_call" -name "$name" -a 'bench_node marked_us []' | tr -d '\r"' |
			awk '{printf "%.0f/%.0f\n", $1 / 1000, $2 / 1000}' >>"$work/c"
		conn=$(sed -n 's/^gate: \[ *\([0-9.]*\)s\] attached to node.*/\1/p' "$work/progress" | awk '{printf "%.0f", $1 * 1000}')
		dec=$(sed -n 's/^gate: \[ *\([0-9.]*\)s\] snapshot decoded.*/\1/p' "$work/progress" | awk '{printf "%.0f", $1 * 1000}')
		scan=$(sed -n 's/.*"gc_us": *\([0-9]*\).*/\1/p' "$work/snap.json" | head -n 1 | awk '{printf "%.0f", $1 / 1000}')
		echo "$a" >>"$work/a"; echo "$b" >>"$work/b"; echo "$rc" >>"$work/r"
		echo "${conn:-0}" >>"$work/conn"; echo "${scan:-0}" >>"$work/scan"
		echo $((${dec:-0} - ${conn:-0} - ${scan:-0})) >>"$work/load"
		rem=$(sed -n 's/^gate: \[ *\([0-9.]*\)s\] probe removed.*/\1/p' "$work/progress" | awk '{printf "%.0f", $1 * 1000}')
		echo $((${rem:-0} - ${dec:-0})) >>"$work/clean"
		echo $((a - ${rem:-0})) >>"$work/json"
		awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f\n", a / b}' >>"$work/ra"
		awk -v a="$rc" -v b="$b" 'BEGIN {printf "%.3f\n", a / b}' >>"$work/rr"
		r=$((r + 1))
	done
	kill "$node_pid"; wait "$node_pid" 2>/dev/null || true; node_pid=""; rm -f "$work/node.pid"
	{
		echo "bench: snapshot, $n processes, $rounds rounds, ms as min median max:"
		echo "bench:   (b) floor (GC + memory, compiled, in node)  $(stats "$work/b")"
		echo "bench:   (r) recon-style in node                     $(stats "$work/r")   ratio to (b): $(rstats "$work/rr")"
		echo "bench:   (a) gate snapshot --attach, whole command   $(stats "$work/a")   ratio to (b): $(rstats "$work/ra")  (target <= 1.3)"
		echo "bench:       connect                                 $(stats "$work/conn")"
		echo "bench:       in-node GC + scan (gc_us)               $(stats "$work/scan")"
		echo "bench:       load + hello + transfer + decode        $(stats "$work/load")"
		echo "bench:       probe removal (purge left to the node)  $(stats "$work/clean")"
		echo "bench:       JSON + exit (and process start)         $(stats "$work/json")"
		echo "bench:   (c) gate run's marked deep snapshots before/after (in node): $(tr '\n' ' ' <"$work/c")"
		echo "bench:   gate's peak RSS: $(sort -n "$work/rss" | tail -n 1) kB"
	} >"$work/detail.$n"
	set -- $(stats "$work/a"); am=$2
	set -- $(stats "$work/b"); bm=$2
	set -- $(rstats "$work/ra"); rm=$2
	echo "$am $bm $(sort -n "$work/rss" | tail -n 1) $rm"
}

set -- $(measure "$small")
a1=$1; b1=$2; rss1=$3; q1=$4
set -- $(measure "$large")
a2=$1; b2=$2; rss2=$3; q2=$4
cat "$work/detail.$small" "$work/detail.$large"
awk -v a1="$a1" -v b1="$b1" -v a2="$a2" -v b2="$b2" -v r1="$rss1" -v r2="$rss2" -v s="$small" -v l="$large" -v q1="$q1" -v q2="$q2" 'BEGIN {
	printf "bench: snapshot %d processes: gate snapshot --attach / floor = %.2fx (median of the rounds\x27 ratios; target <= 1.3x)\n", s, q1
	printf "bench: snapshot %d processes: gate snapshot --attach / floor = %.2fx\n", l, q2
	printf "bench: snapshot growth %d -> %d processes: %.2fx for %.1fx the processes (target: linear, <= %.1fx); floor %.2fx\n", s, l, a2 / a1, l / s, 1.1 * l / s, b2 / b1
	printf "bench: gate peak RSS: %.1f MiB at %d, %.1f MiB at %d processes (target <= 20 MiB)\n", r1 / 1024, s, r2 / 1024, l
}'
