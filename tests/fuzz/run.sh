#!/bin/sh
# tests/fuzz/run.sh: runs every libFuzzer target built in $GATE_BUILD/fuzz for SECONDS each
# (one process, one core), from a working copy of its seeds in tests/fuzz/corpus/<name>
# (the seeds, crash reproducers included, are replayed first). Prints per target the
# executions, executions per second and crashes, and ends with "fuzz: N passed, M failed".
# A crash leaves its input in $GATE_BUILD/fuzz/crashes/: add it to the target's corpus and a
# unit test, then fix it.
# usage: tests/fuzz/run.sh [SECONDS] [TARGET...]      (FUZZ_NICE=1 runs under nice)
set -u
export LC_ALL=C
secs=${1:-60}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/${GATE_BUILD:-build/fuzz}"
targets=${*:-$(cd "$root/tests/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')}
passed=0
failed=0
mkdir -p "$build/fuzz/crashes" "$build/fuzz/work"
for t in $targets; do
	bin="$build/fuzz/fuzz_$t"
	if [ ! -x "$bin" ]; then
		echo "fuzz: $t: $bin is not built (make fuzz-build)"
		failed=$((failed + 1))
		continue
	fi
	work="$build/fuzz/work/$t"
	mkdir -p "$work"
	log="$build/fuzz/$t.log"
	# the writer targets build a model from the input (fuzz_model_make): its long names come
	# from two bytes, so small inputs reach everything and run several times faster
	maxlen=8192
	grep -q fuzz_model_make "$root/tests/fuzz/fuzz_$t.c" && maxlen=1024
	# a reader whose seeds are real files larger than that says so in its source
	own=$(sed -n 's/.*fuzz-max-len: *\([0-9][0-9]*\).*/\1/p' "$root/tests/fuzz/fuzz_$t.c" | head -n 1)
	[ -n "$own" ] && maxlen=$own
	dict=""
	[ -f "$root/tests/fuzz/$t.dict" ] && dict="-dict=$root/tests/fuzz/$t.dict"
	# -rss_limit_mb: a reply or file that makes us allocate without bound is a finding too.
	# Run from the target's work directory: whatever libFuzzer writes without the prefix
	# (crash-*, leak-*, timeout-*, oom-*, slow-unit-*) lands there, never in the repository.
	(cd "$work" && exec ${FUZZ_NICE:+nice} "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
		-max_len=$maxlen -print_final_stats=1 -artifact_prefix="$build/fuzz/crashes/$t-" \
		$dict "$work" "$root/tests/fuzz/corpus/$t") >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	crashes=$(ls "$build/fuzz/crashes" 2>/dev/null | grep -c "^$t-")
	if [ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ]; then
		passed=$((passed + 1))
		echo "fuzz: $t: ${execs:-?} execs, ${rate:-?}/s, 0 crashes ($secs s)"
	else
		failed=$((failed + 1))
		echo "fuzz: $t: FAILED (exit $rc, $crashes crash inputs in $build/fuzz/crashes); log $log:"
		grep -E 'ERROR|SUMMARY|oracle|==[0-9]+==' "$log" | head -n 12 | sed 's/^/    | /'
	fi
done
# an artifact in the repository is a run that escaped the prefix: say so, and fail
strays=$(cd "$root" && ls -d crash-* leak-* timeout-* oom-* slow-unit-* 2>/dev/null)
if [ -n "$strays" ]; then
	echo "fuzz: libFuzzer artifacts in $root (move them to $build/fuzz/crashes): $strays"
	failed=$((failed + 1))
fi
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
