#!/bin/sh
# tests/run.sh: runs the cmocka unit tests, the end-to-end suite's everyday tier, or both
# (make test), or its long tier (make test-long), and ends with one closing line
# "tests: N passed, M failed" (exit 1 when anything failed).
# usage: tests/run.sh unit|e2e|all|long      (GATE_BUILD: the build dir, default build;
#        GATE_E2E_JOBS: end-to-end cases at a time, tests/e2e/run.sh)
set -u
mode=${1:-all}
build=${GATE_BUILD:-build}
export LC_ALL=C
passed=0
failed=0

case "$mode" in unit | e2e | all | long) ;; *) echo "tests/run.sh: unknown mode $mode (unit, e2e, all or long)"; exit 2 ;; esac

if [ "$mode" = unit ] || [ "$mode" = all ]; then
	t0=$(date +%s)
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
	echo "unit: $passed passed, $failed failed, $(($(date +%s) - t0)) s wall"
fi

if [ "$mode" = e2e ] || [ "$mode" = all ] || [ "$mode" = long ]; then
	out=$(mktemp)
	tier=""
	[ "$mode" = long ] && tier=--long
	bash tests/e2e/run.sh $tier 2>&1 | tee "$out"
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
