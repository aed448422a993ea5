#!/bin/sh
# examples/demo.sh: `make demo`: gate on the bundled example project, twice: as it is (the
# gate passes), then with the planted session leak included (the gate fails and names it).
# Works on a temp copy, so the repository stays clean.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
gate="$root/${GATE_BUILD:-build}/gate"
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cp -r "$root/examples/demo" "$work/demo"

echo "== gate run on examples/demo (clean suite) ========================================"
"$gate" run -C "$work/demo"
clean=$?
echo
echo "== gate run on examples/demo -- --include leak (a test that never closes sessions) =="
"$gate" run -C "$work/demo" --junit "$work/leak.xml" -- --include leak
leak=$?
echo
echo "demo: clean suite: exit $clean (expected 0); leaky suite: exit $leak (expected 1)"
[ "$clean" -eq 0 ] && [ "$leak" -eq 1 ]
