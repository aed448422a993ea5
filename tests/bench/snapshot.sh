#!/bin/sh
# tests/bench/snapshot.sh: the cost of `gate snapshot --attach` on big nodes, as ratios within
# one run. A node with N idle processes (10 % holding a 100-byte sub-binary of a 1 kB binary)
# and 1 000 ETS tables of 100 rows; timed, interleaved:
#   (a) gate snapshot --attach, the whole command from outside the node: connect, probe load,
#       GC + one pass, transfer, decode, probe removal (code:purge scans every process), JSON
#   (a') the same command until the snapshot is decoded (its progress line), without removal
#   (c) gate run's marked deep snapshots, timed inside the node (bench_node:marked_us/0): the
#       before-snapshot (which remembers what exists) and the after-snapshot (what grew)
#   (b) the floor: one compiled in-node pass of erlang:garbage_collect/1 + process_info(P,
#       memory) over every process (bench_node:floor_us/0, called with erl_call)
# Targets: (a) <= 1.3x (b) at 100k; (a) at 1M <= 11x (a) at 100k; gate's peak RSS <= 20 MiB.
# usage: tests/bench/snapshot.sh [SMALL] [LARGE] [ROUNDS]   (default 100000 1000000 3)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
gate="$root/${GATE_BUILD:-build}/gate"
small=${1:-100000}
large=${2:-1000000}
rounds=${3:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-bench-snap.XXXXXX")
probe_dir=${BENCH_PROBE_DIR:-$root/${GATE_BUILD:-build}/probe}
erl_call=$(ls /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | head -n 1)
epmd_pid=""
node_pid=""
cleanup() {
	[ -z "$node_pid" ] || kill "$node_pid" 2>/dev/null || true
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

peak_rss_kb() { # runs "$@" and prints its peak RSS in kB (VmHWM, polled) to fd 3
	"$@" &
	p=$!
	hwm=0
	while kill -0 "$p" 2>/dev/null; do
		v=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$p/status" 2>/dev/null || true)
		[ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
		sleep 0.01
	done
	wait "$p"
	echo "$hwm" >&3
}

measure() { # N: prints "a_ms b_ms rss_kb" medians/max over the rounds
	n=$1
	rm -f "$work/ready"
	(cd "$work" && exec erl -noshell -name "$name" -kernel inet_dist_use_interface '{127,0,0,1}' \
		+P $((n * 2 + 100000)) -pa "$work" -pa "$probe_dir" \
		-eval "bench_node:start($n, 1000), file:write_file(\"ready\", \"ok\")") >/dev/null 2>&1 &
	node_pid=$!
	i=0
	while [ ! -f "$work/ready" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	[ -f "$work/ready" ] || { echo "bench: node did not start"; exit 1; }
	: >"$work/a"; : >"$work/b"; : >"$work/rss"; : >"$work/d"; : >"$work/c"
	r=0
	while [ $r -lt "$rounds" ]; do
		"$erl_call" -name "$name" -a 'bench_node floor_us []' | tr -d '\r' | awk '{print $1 / 1000}' >>"$work/b"
		"$erl_call" -name "$name" -a 'bench_node marked_us []' | tr -d '\r"' |
			awk '{printf "%.0f/%.0f\n", $1 / 1000, $2 / 1000}' >>"$work/c"
		t=$(now_us)
		GATE_PROGRESS_MS=1 peak_rss_kb "$gate" snapshot --attach "$name" --json "$work/snap.json" \
			3>>"$work/rss" 2>"$work/progress"
		echo $((($(now_us) - t) / 1000)) >>"$work/a"
		sed -n 's/^gate: \[ *\([0-9.]*\)s\] snapshot decoded.*/\1/p' "$work/progress" |
			awk '{print $1 * 1000}' >>"$work/d"
		r=$((r + 1))
	done
	kill "$node_pid"; wait "$node_pid" 2>/dev/null || true; node_pid=""
	a=$(sort -n "$work/a" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
	b=$(sort -n "$work/b" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
	d=$(sort -n "$work/d" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
	rss=$(sort -n "$work/rss" | tail -n 1)
	echo "bench: $n processes: (a) whole command ms: $(tr '\n' ' ' <"$work/a")| (a') until decoded ms: $(tr '\n' ' ' <"$work/d")| (b) floor ms: $(tr '\n' ' ' <"$work/b")| (c) marked before/after ms: $(tr '\n' ' ' <"$work/c")| gate peak RSS $rss kB" >&2
	echo "$a $b $rss $d"
}

set -- $(measure "$small")
a1=$1; b1=$2; rss1=$3; d1=$4
set -- $(measure "$large")
a2=$1; b2=$2; rss2=$3; d2=$4
awk -v a1="$a1" -v b1="$b1" -v a2="$a2" -v b2="$b2" -v r1="$rss1" -v r2="$rss2" -v s="$small" -v l="$large" -v d1="$d1" -v d2="$d2" 'BEGIN {
	printf "bench: snapshot %d processes: (a) %.0f ms vs floor (b) %.0f ms = %.2fx (target <= 1.3x); until decoded (a\x27) %.0f ms = %.2fx\n", s, a1, b1, a1 / b1, d1, d1 / b1
	printf "bench: snapshot %d processes: (a) %.0f ms vs floor (b) %.0f ms = %.2fx; until decoded (a\x27) %.0f ms = %.2fx\n", l, a2, b2, a2 / b2, d2, d2 / b2
	printf "bench: snapshot growth %d -> %d processes: %.2fx (target <= 11x)\n", s, l, a2 / a1
	printf "bench: gate peak RSS: %.1f MiB at %d, %.1f MiB at %d processes (target <= 20 MiB)\n", r1 / 1024, s, r2 / 1024, l
}'
