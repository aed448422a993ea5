#!/usr/bin/env bash
# tests/bench/soak.sh: a week of `gate watch` in a quarter of an hour: gate watch --reconnect
# at the shortest interval it takes (10ms) against a plain node for SAMPLES samples (default
# 100 000), the node stalled (SIGSTOP for 3 s, then SIGCONT) at 30 %, dropping gate's
# connection (erlang:disconnect_node from the node's side) at 45 % and restarted (killed, back
# under the same name 2 s later) at 70 %. Prints gate's RSS (VmRSS) and open descriptors at
# sample 1 000, at the middle and near the end (the last figures are taken 300 samples before
# it: gate exits at its --count), the wall time, the reconnects, and checks the JSON Lines.
# Then the same under valgrind memcheck for VG_SAMPLES samples (default 2 000): no definite
# leak and no memory error may be reported.
#
# A lost sample: a sample number from 1 to SAMPLES that has no complete JSON line. With
# --reconnect every sample gate takes is a line, whatever became of it: the node's figures,
# a skipped sample ("error": a timeout while the node is stalled) or, while the node is away,
# "error" with "connected": false (gate connects again at each next sample). So the lines must
# be exactly samples 1..SAMPLES, in order, each once. Samples stay on the grid start + k x
# interval: those that fall due while gate waits on a stalled node are taken at once after it,
# not dropped.
#
# The 10ms floor of --interval is a parse bound, not what limits the rate: a light sample over
# distribution takes a few ms, so 100 000 samples at 10ms take about 17 minutes here.
#
#   bash tests/bench/soak.sh [SAMPLES] [VG_SAMPLES]      (make bench-soak; not in make test)
# Exit 1 when a sample is lost, gate exits 2, a reconnect is missing, RSS grows by more than
# 1 MB from sample 1 000 to the end, descriptors change, or valgrind reports a leak.
set -u
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
gate=$root/${GATE_BUILD:-build}/gate
samples=${1:-100000}
vg_samples=${2:-2000}
w=$(mktemp -d "${TMPDIR:-/tmp}/gate-soak.XXXXXX")
epmd_pid=""
node_pid=""
gate_pid=""
bad=0

cleanup() {
	local p
	for p in $gate_pid $node_pid; do
		kill -CONT "$p" 2>/dev/null
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "$epmd_pid" ] && kill "$epmd_pid" 2>/dev/null && wait "$epmd_pid" 2>/dev/null
	rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "soak: $*"; }
fail() {
	echo "soak: FAIL: $*"
	bad=1
}

[ -x "$gate" ] || { say "$gate is not built (make)"; exit 2; }

# a private epmd on a random port (another one when taken), a cookie of our own
for try in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 30000))
	(exec epmd -port "$port" -address 127.0.0.1) >/dev/null 2>&1 &
	epmd_pid=$!
	for i in $(seq 1 50); do
		ERL_EPMD_PORT=$port epmd -port "$port" -names >/dev/null 2>&1 && break 2
		kill -0 "$epmd_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$epmd_pid" 2>/dev/null
	wait "$epmd_pid" 2>/dev/null
	epmd_pid=""
done
[ -n "$epmd_pid" ] || { say "no private epmd would start"; exit 2; }
export ERL_EPMD_PORT=$port
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$w/cookie"
chmod 400 "$w/cookie"
node=soak$RANDOM$RANDOM@127.0.0.1

# The node: every 50 ms it looks for the file "drop" and then disconnects every hidden node
# (gate); it halts by itself after an hour, should this script die.
cat >"$w/soak_node.erl" <<'EOF'
-module(soak_node).
-export([main/1]).
main([Drop]) ->
    spawn(fun() -> timer:sleep(3600000), halt() end),
    loop(Drop).
loop(Drop) ->
    timer:sleep(50),
    case file:delete(Drop) of
        ok -> [erlang:disconnect_node(N) || N <- nodes(hidden)];
        _ -> ok
    end,
    loop(Drop).
EOF
erlc -o "$w" "$w/soak_node.erl" || exit 2

node_start() {
	(exec erl -noshell -noinput -name "$node" -setcookie "$(cat "$w/cookie")" -pa "$w" \
		-run soak_node main "$w/drop") >>"$w/node.log" 2>&1 &
	node_pid=$!
	for i in $(seq 1 100); do
		epmd -port "$port" -names 2>/dev/null | grep -q "name ${node%@*} " && return 0
		sleep 0.1
	done
	say "the node did not start: $(tail -n 3 "$w/node.log")"
	exit 2
}

node_stop() {
	kill -KILL "$node_pid" 2>/dev/null
	wait "$node_pid" 2>/dev/null
}

lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }

# figures LABEL: gate's RSS and descriptors now, as "LABEL sample N: RSS kB, F fds"
figures() {
	local rss fds n
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$gate_pid/status" 2>/dev/null)
	fds=$(ls "/proc/$gate_pid/fd" 2>/dev/null | wc -l)
	n=$(lines "$out")
	echo "$1 $n ${rss:-0} $fds"
}

# soak N TIMEOUT [WRAP...]: one series of N samples with the three disruptions; sets out, the
# figures (fig_first, fig_mid, fig_end: "LABEL SAMPLE RSS_KB FDS"), gate_rc and the wall time
soak() {
	local n=$1 timeout=$2
	shift 2
	out=$w/watch.$n.jsonl
	err=$w/watch.$n.err
	fig_first="" fig_mid="" fig_end=""
	local t0 stalled=0 dropped=0 restarted=0 cur
	node_start
	t0=$(date +%s)
	"$@" "$gate" watch --attach "$node" --cookie-file "$w/cookie" --interval 10ms \
		--count "$n" --timeout "$timeout" --reconnect -q --out "$out" 2>"$err" &
	gate_pid=$!
	while kill -0 "$gate_pid" 2>/dev/null; do
		cur=$(lines "$out")
		[ -z "$fig_first" ] && [ "$cur" -ge 1000 ] && fig_first=$(figures first)
		[ -z "$fig_mid" ] && [ "$cur" -ge $((n / 2)) ] && fig_mid=$(figures middle)
		[ -z "$fig_end" ] && [ "$cur" -ge $((n - 300)) ] && fig_end=$(figures end)
		if [ "$stalled" = 0 ] && [ "$cur" -ge $((n * 30 / 100)) ]; then
			stalled=1
			kill -STOP "$node_pid"
			sleep 3
			kill -CONT "$node_pid"
		fi
		if [ "$dropped" = 0 ] && [ "$cur" -ge $((n * 45 / 100)) ]; then
			dropped=1
			: >"$w/drop"
		fi
		if [ "$restarted" = 0 ] && [ "$cur" -ge $((n * 70 / 100)) ]; then
			restarted=1
			node_stop
			sleep 2
			node_start
		fi
		sleep 0.05
	done
	wait "$gate_pid"
	gate_rc=$?
	gate_pid=""
	wall=$(($(date +%s) - t0))
	node_stop
}

# check_lines N: the JSON Lines are samples 1..N, in order, each once and whole
check_lines() {
	python3 - "$out" "$1" <<'EOF'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
seen, bad, errors, down, prev, order = set(), 0, 0, 0, 0, True
for raw in open(path, encoding="utf-8", errors="replace"):
    try:
        d = json.loads(raw)
        k = d["sample"]
    except Exception:
        bad += 1
        continue
    order &= k == prev + 1
    prev = k
    seen.add(k)
    errors += "error" in d
    down += d.get("connected") is False
lost = sum(1 for k in range(1, n + 1) if k not in seen)
print(f"{len(seen)} {lost} {bad} {int(order)} {errors} {down}")
EOF
}

say "gate watch --interval 10ms --reconnect, $samples samples, node $node (epmd port $port)"
soak "$samples" 200ms
read -r got lost broken inorder errors down <<<"$(check_lines "$samples")"
reconnects=$(grep -c 'connected to .* again' "$err")
for f in "$fig_first" "$fig_mid" "$fig_end"; do
	set -- $f
	[ $# = 4 ] && say "$1: sample $2: RSS $3 kB, $4 open descriptors"
done
say "wall time ${wall} s ($((samples * 10 / 1000)) s on the grid), gate exit $gate_rc"
say "lines: $got samples of $samples, lost $lost, not JSON $broken, in order $inorder; $errors skipped or down ($down while disconnected); reconnects $reconnects"
[ "$gate_rc" -le 1 ] || fail "gate watch exited $gate_rc: $(tail -n 2 "$err")"
[ "$lost" = 0 ] && [ "$broken" = 0 ] && [ "$inorder" = 1 ] || fail "samples lost or out of order"
[ "$reconnects" -ge 2 ] || fail "$reconnects reconnects, expected 2 (the drop and the restart)"
set -- $fig_first
first_rss=${3:-0} first_fds=${4:-0}
set -- $fig_end
[ $# = 4 ] || fail "no figures near the end"
[ $((${3:-0} - first_rss)) -le 1024 ] || fail "RSS grew by $((${3:-0} - first_rss)) kB from sample 1 000 to the end"
[ "${4:-0}" = "$first_fds" ] || fail "descriptors went from $first_fds to ${4:-0}"

say "under valgrind: $vg_samples samples"
vlog=$w/valgrind.log
soak "$vg_samples" 2s valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
	--error-exitcode=99 --log-file="$vlog"
read -r got lost broken inorder errors down <<<"$(check_lines "$vg_samples")"
reconnects=$(grep -c 'connected to .* again' "$err")
say "valgrind: wall time ${wall} s, gate exit $gate_rc, $got of $vg_samples samples, lost $lost, reconnects $reconnects"
if [ "$gate_rc" = 99 ] || [ -s "$vlog" ]; then
	fail "valgrind reports:"
	sed 's/^/    | /' "$vlog" | head -n 40
else
	say "valgrind: no leak, no memory error reported"
fi
[ "$gate_rc" -le 1 ] || [ "$gate_rc" = 99 ] || fail "gate watch exited $gate_rc under valgrind: $(tail -n 2 "$err")"
[ "$lost" = 0 ] && [ "$broken" = 0 ] || fail "samples lost under valgrind"
[ "$bad" = 0 ] && say "passed" || say "FAILED"
exit "$bad"
