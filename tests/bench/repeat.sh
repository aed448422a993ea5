#!/bin/sh
# tests/bench/repeat.sh: runs gate on the clean fixture N times and counts false alarms (runs
# that did not exit 0). The fixture is compiled once; every run boots a fresh node.
# usage: tests/bench/repeat.sh [N] [FIXTURE]      (default 20 clean)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
gate="$root/${GATE_BUILD:-build}/gate"
n=${1:-20}
fixture=${2:-clean}
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-repeat.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cp -r "$root/tests/fixtures/$fixture" "$work/p"
alarms=0
i=1
while [ "$i" -le "$n" ]; do
	"$gate" run -q -C "$work/p" >"$work/out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		alarms=$((alarms + 1))
		echo "repeat: run $i exited $rc:"
		grep -E "FAIL|error" "$work/out" | head -n 8 | sed 's/^/    /'
	fi
	i=$((i + 1))
done
echo "repeat: $fixture fixture, $n runs, $alarms false alarms"
[ "$alarms" -eq 0 ]
