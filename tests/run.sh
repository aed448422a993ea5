#!/bin/sh
# tests/run.sh: runs the cmocka unit tests, the end-to-end suite, or both, and ends with one
# closing line "tests: N passed, M failed" (exit 1 when anything failed).
# usage: tests/run.sh unit|e2e|all      (GATE_BUILD: the build dir, default build)
set -u
mode=${1:-all}
build=${GATE_BUILD:-build}
export LC_ALL=C
passed=0
failed=0

if [ "$mode" = unit ] || [ "$mode" = all ]; then
	for t in "$build"/tests/test_*; do
		[ -x "$t" ] || continue
		out=$(mktemp)
		"$t" >"$out" 2>&1
		rc=$?
		cat "$out"
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
		passed=$((passed + ${p:-0}))
		failed=$((failed + ${f:-0}))
		if [ "$rc" -ne 0 ] && [ -z "$f" ]; then
			echo "unit: $t exited with status $rc"
			failed=$((failed + 1))
		fi
		rm -f "$out"
	done
fi

if [ "$mode" = e2e ] || [ "$mode" = all ]; then
	out=$(mktemp)
	bash tests/e2e/run.sh 2>&1 | tee "$out"
	p=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$out" | tail -n 1)
	if [ -z "$p" ]; then
		echo "e2e: the suite did not report its counts"
		f=1
	fi
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	rm -f "$out"
fi

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
