#!/bin/sh
# tests/bench/snapshot.sh: the cost of `gate snapshot --attach` on big nodes, taken as users take
# it: an Elixir node, several snapshots back to back with no gap, each timed from
# outside as a whole process. Everything is given as ratios within one run (this machine is
# shared: every figure is min-median-max over the rounds, each ratio taken within a round).
# An Elixir node (`elixir --name`, its code compiled in bench_node.erl) with N idle processes
# (10 % holding a 100-byte sub-binary of a 1 kB binary) and 1 000 ETS tables of 100 rows; per
# round, once nothing of a previous gate is left in the node (untimed):
#   (b) the floor: one compiled in-node pass of erlang:garbage_collect/1 + process_info(P,
#       memory) over every process (bench_node:floor_us/0, called with erl_call)
#   (r) recon-style in-node profiling as teams paste it (bench_node:recon_us/0): top
#       processes by memory, binary-leak suspects with GC, ETS breakdown
#   (a) gate snapshot --attach NODE --cookie-file F --json F, RUNS times back to back, each
#       the whole command as a fresh process: connect, probe load, GC + one pass, transfer,
#       decode, probe removal, JSON. Its breakdown, from its progress lines and the JSON:
#       connect (until "attached"), load (until "probe loaded"), in-node GC + scan (gc_us),
#       transfer + decode (the rest until "snapshot decoded"), removal (until "probe
#       removed"), JSON and exit
#   (n) then gate snapshot --attach --no-gc, right after them
#   (v) gate --version, the whole process: what starting a process costs on this machine now
#       (it is part of every (a); a loaded machine makes it tens of ms)
#   (c) gate run's marked deep snapshots, timed inside the node (bench_node:marked_us/0): the
#       before-snapshot (which remembers what exists) and the after-snapshot (what grew)
# Also: how long the node takes to purge gate's copies after the series: in a node of more than
# 2 000 processes the purges wait until no gate has been attached for 2 s (or the same for 60 s);
# they are not part of any snapshot.
# Targets: every (a) <= 1.3x (b) and <= 0.6x (r) at SMALL; (a) at LARGE <= 1.1 x LARGE/SMALL x
# (a) at SMALL (linear); removal <= 20 ms; gate's peak RSS <= 20 MiB. Nothing here is
# asserted: `make bench` prints, people judge.
# usage: tests/bench/snapshot.sh [SMALL] [LARGE] [ROUNDS] [RUNS]   (default 100000 1000000 5 3)
#        tests/bench/snapshot.sh SIZE,SIZE,... [ROUNDS] [RUNS]     (any number of node sizes, e.g.
#                                                                 100000,300000,1000000)
# Each size also gets gate's time per process (median whole run / N, in us) and its ratio to the
# smallest size's: flat (about 1.0) is linear.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
gate="$root/${GATE_BUILD:-build}/gate"
case "${1:-}" in
*,*)
	sizes=$(echo "$1" | tr ',' ' ')
	rounds=${2:-5}
	runs=${3:-3}
	;;
*)
	sizes="${1:-100000} ${2:-1000000}"
	rounds=${3:-5}
	runs=${4:-3}
	;;
esac
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

# clean: waits (untimed, at most 2 minutes) until nothing of a gate is in the node, current or
# old code: the purges gate hands to the node run once no gate has been attached for 2 s
clean() {
	i=0
	while "$erl_call" -name "$name" -a 'erlang loaded []' | grep -q gate_probe && [ $i -lt 1200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# progress FILE TEXT: when gate's progress line starting with TEXT came, in ms ("" if none)
progress() {
	sed -n "s/^gate: \[ *\([0-9.]*\)s\] $2.*/\1/p" "$1" | head -n 1 | awk '{printf "%.0f", $1 * 1000}'
}

measure() { # N: prints per-round figures to stderr; on stdout "a_med b_med rss_max ratio_med"
	n=$1
	rm -f "$work/ready"
	# an Elixir node as users run them; its code compiled (bench_node.erl), -e only calls it
	(cd "$work" && exec elixir --name "$name" --erl "-kernel inet_dist_use_interface {127,0,0,1} +P $((n * 2 + 100000)) -pa $work -pa $probe_dir" \
		-e ":bench_node.start($n, 1000); File.write!(\"ready\", \"ok\"); Process.sleep(:infinity)") >/dev/null 2>&1 &
	node_pid=$!
	echo "$node_pid" >"$work/node.pid"
	i=0
	while [ ! -f "$work/ready" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	[ -f "$work/ready" ] || { echo "bench: node did not start" >&2; exit 1; }
	for f in a a1 an b r c rss conn load scan dec clean json ra rar rr nogc nra purge v; do : >"$work/$f"; done
	r=0
	while [ $r -lt "$rounds" ]; do
		clean
		b=$("$erl_call" -name "$name" -a 'bench_node floor_us []' | tr -d '\r' | awk '{printf "%.0f", $1 / 1000}')
		rc=$("$erl_call" -name "$name" -a 'bench_node recon_us []' | tr -d '\r' | awk '{printf "%.0f", $1 / 1000}')
		echo "$b" >>"$work/b"; echo "$rc" >>"$work/r"
		awk -v a="$rc" -v b="$b" 'BEGIN {printf "%.3f\n", a / b}' >>"$work/rr"
		# RUNS snapshots back to back, then one with --no-gc: nothing in between but the
		# clock readings (the figures are read from their files after the series)
		k=1
		while [ $k -le $((runs + 1)) ]; do
			nogc=""
			[ $k -le "$runs" ] || nogc=--no-gc
			t=$(now_us)
			GATE_PROGRESS_MS=1 "$timer" -f %M -o "$work/rss.$k" "$gate" snapshot --attach "$name" \
				--cookie-file "$work/.erlang.cookie" --json "$work/snap.$k.json" $nogc 2>"$work/progress.$k" ||
				{ echo "bench: gate snapshot failed:" >&2; cat "$work/progress.$k" >&2; exit 1; }
			echo $((($(now_us) - t) / 1000)) >"$work/whole.$k"
			k=$((k + 1))
		done
		k=1
		while [ $k -le $((runs + 1)) ]; do
			a=$(cat "$work/whole.$k")
			cat "$work/rss.$k" >>"$work/rss"
			if [ $k -gt "$runs" ]; then
				echo "$a" >>"$work/nogc"
				awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f\n", a / b}' >>"$work/nra"
			else
				p=$work/progress.$k
				conn=$(progress "$p" attached); load=$(progress "$p" "probe loaded")
				dec=$(progress "$p" "snapshot decoded"); rem=$(progress "$p" "probe removed")
				scan=$(sed -n 's/.*"gc_us": *\([0-9]*\).*/\1/p' "$work/snap.$k.json" | head -n 1 | awk '{printf "%.0f", $1 / 1000}')
				echo "$a" >>"$work/a"
				if [ $k -gt 1 ]; then echo "$a" >>"$work/an"; else echo "$a" >>"$work/a1"; fi
				echo "${conn:-0}" >>"$work/conn"
				echo $((${load:-0} - ${conn:-0})) >>"$work/load"
				echo "${scan:-0}" >>"$work/scan"
				echo $((${dec:-0} - ${load:-0} - ${scan:-0})) >>"$work/dec"
				echo $((${rem:-0} - ${dec:-0})) >>"$work/clean"
				echo $((a - ${rem:-0})) >>"$work/json"
				awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f\n", a / b}' >>"$work/ra"
				awk -v a="$a" -v b="$rc" 'BEGIN {printf "%.3f\n", a / b}' >>"$work/rar"
			fi
			k=$((k + 1))
		done
		t=$(now_us)
		"$gate" --version >/dev/null
		echo $((($(now_us) - t) / 1000)) >>"$work/v"
		# untimed for the snapshots: how long the node takes to purge gate's copies
		t=$(now_us)
		clean
		echo $((($(now_us) - t) / 1000)) >>"$work/purge"
		"$erl_call" -name "$name" -a 'bench_node marked_us []' | tr -d '\r"' |
			awk '{printf "%.0f/%.0f\n", $1 / 1000, $2 / 1000}' >>"$work/c"
		r=$((r + 1))
	done
	kill "$node_pid"; wait "$node_pid" 2>/dev/null || true; node_pid=""; rm -f "$work/node.pid"
	{
		echo "bench: snapshot, $n processes, $rounds rounds of $runs back-to-back runs, ms as min median max:"
		echo "bench:   (b) floor (GC + memory, compiled, in node)  $(stats "$work/b")"
		echo "bench:   (r) recon-style in node                     $(stats "$work/r")   ratio to (b): $(rstats "$work/rr")"
		echo "bench:   (a) gate snapshot --attach, whole command   $(stats "$work/a")   ratio to (b): $(rstats "$work/ra")  (target <= 1.3)"
		echo "bench:                                                 ratio to (r): $(rstats "$work/rar")  (target <= 0.6)"
		echo "bench:       first run of a round                    $(stats "$work/a1")"
		echo "bench:       runs right after another                $(stats "$work/an")"
		echo "bench:       connect                                 $(stats "$work/conn")"
		echo "bench:       probe load                              $(stats "$work/load")"
		echo "bench:       in-node GC + scan (gc_us)               $(stats "$work/scan")"
		echo "bench:       hello + transfer + decode               $(stats "$work/dec")"
		echo "bench:       probe removal (purge left to the node)  $(stats "$work/clean")   (target <= 20)"
		echo "bench:       JSON + exit                             $(stats "$work/json")"
		echo "bench:   (v) gate --version, whole process        $(stats "$work/v")"
		echo "bench:   (n) gate snapshot --attach --no-gc          $(stats "$work/nogc")   ratio to (b): $(rstats "$work/nra")"
		echo "bench:   the node's purge of gate's copies after a round: $(stats "$work/purge") ms (untimed for the snapshots)"
		echo "bench:   (c) gate run's marked deep snapshots before/after (in node): $(tr '\n' ' ' <"$work/c")"
		echo "bench:   gate's peak RSS: $(sort -n "$work/rss" | tail -n 1) kB"
		echo "bench:   every run, in order (rounds of $runs): whole/floor $(awk '{printf "%.2f ", $1}' "$work/ra")"
		echo "bench:                                     whole/recon $(awk '{printf "%.2f ", $1}' "$work/rar")"
		echo "bench:                                     removal ms  $(tr '\n' ' ' <"$work/clean")"
		echo "bench:                                     whole ms    $(tr '\n' ' ' <"$work/a")"
	} >"$work/detail.$n"
	set -- $(stats "$work/a"); am=$2
	set -- $(stats "$work/b"); bm=$2
	set -- $(rstats "$work/ra"); rm=$2
	echo "$am $bm $(sort -n "$work/rss" | tail -n 1) $rm"
}

summary=$work/summary
: >"$summary"
for n in $sizes; do
	echo "$n $(measure "$n")" >>"$summary"
done
for n in $sizes; do cat "$work/detail.$n"; done
# per size: the median ratio to the floor, gate's time per process and its growth against the
# smallest size (linear: the same time per process), the floor's the same way, peak RSS
awk '
NR == 1 { n0 = $1; a0 = $2; b0 = $3 }
{
	printf "bench: snapshot %d processes: gate snapshot --attach / floor = %.2fx (median of every back-to-back run\x27s ratio; target <= 1.3x)\n", $1, $5
	printf "bench: snapshot %d processes: %.2f us per process (%.2fx the %d-process figure; linear = 1.0, target <= 1.1), floor %.2f us (%.2fx); gate peak RSS %.1f MiB (target <= 20)\n", $1, $2 * 1000 / $1, ($2 / $1) / (a0 / n0), n0, $3 * 1000 / $1, ($3 / $1) / (b0 / n0), $4 / 1024
}' "$summary"
