#!/bin/sh
# tests/bench/realworld.sh: `make realworld`: gate's defaults on real open-source suites that
# nobody here wrote, with no leak planted. They live on this machine, never in the repository
# (tests/realworld/lib.sh): library suites in $GATE_REALWORLD, applications in
# $GATE_REALWORLD_APPS (both default to folders under ~/.cache/gate). A folder with no Mix
# project is one line saying it was looked at and skipped; with neither, the check passes.
#
# Each project is copied to a temp dir and compiled once; then, N rounds interleaved, a bare
# `MIX_ENV=test mix test` and a `gate run` (default config, a fresh node each time). Per
# project it prints the tests, gate's exit codes, and:
#   false alarms  gate exited 1 while the bare run of that round passed and no test failed
#                 under gate: a memory verdict on a clean suite. Any false alarm fails.
#   test fails    rounds where a test of the project's own failed (bare or under gate). A
#                 real suite has timing-sensitive tests (gen_stage's "80% min demand" one
#                 fails about once in 40 runs on a busy machine): such a round is reported,
#                 is not a false alarm, and fails the check only when gate PASSED a run in
#                 which a test failed (gate must fail failing tests), or when tests failed in
#                 more than half of the runs (a broken suite, not a flaky test).
#   errors        gate exited 2 (or anything but 0/1), or its report could not be read; bare
#                 runs that did not finish. Any error fails.
#   median wall   bare vs gate (ms) and their ratio (this machine is shared: informative).
#   code judged   the code row's judged growth (code and literals less the suite's own
#                 modules), the largest of the rounds: the row fails above its 16 MB floor
#   binary set aside  the refc binaries the literals of the modules loaded during the run
#                 hold (gate_probe_code.erl), set aside by the binary row, the largest
# A culprit named by a finding that did not fail is an error: a test module is named only
# for a real finding.
# An application also runs one `gate run --repeat 3`, which must pass; one that depends on
# postgrex gets a private PostgreSQL for its rounds, on localhost:5432 in a network namespace
# of its own (tests/realworld/lib.sh: pg_start).
#
# With REALWORLD_COPIES=N each library suite runs as N times its size: its test files N
# times, each copy's modules renamed (tests/realworld/lib.sh: rw_copies), as an application's
# suite of thousands of tests.
#
# Planted leaks at size: in each library suite of REALWORLD_PLANT_MIN_TESTS tests or more
# (1 000 by default), one more `gate run` per kind in REALWORLD_PLANT ("ets state procs" by
# default; "" for none; "rotate": one kind per suite, the next for the next suite, as CI
# runs it), each with one test file of tests/realworld/plant/planted_KIND_test.exs
# dropped into the suite's test folder: a session table left alive and filled, a cache
# server's state, 3 000 workers never stopped. Each must fail (exit 1) as exactly one memory
# finding, the first failing one, naming what was planted and its test module; a line per
# run says so, with the finding's first words.
#
# usage: tests/bench/realworld.sh [ROUNDS] [PROJECT...]    (default 5 rounds, every project
#        of both folders; ROUNDS also from $REALWORLD_ROUNDS)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
gate="$root/${GATE_BUILD:-build}/gate"
. "$root/tests/realworld/lib.sh"
src=$rw_libs
apps=$rw_apps
rounds=${1:-${REALWORLD_ROUNDS:-5}}
# an application-sized suite: each library suite's test files COPIES times, modules renamed
copies=${REALWORLD_COPIES:-1}
case "$copies" in
'' | *[!0-9]* | 0) echo "realworld: error: REALWORLD_COPIES must be a positive number, got '$copies'" >&2; exit 2 ;;
esac
[ $# -gt 0 ] && shift
case "$rounds" in
'' | *[!0-9]*) echo "realworld: error: ROUNDS must be a positive number, got '$rounds'" >&2; exit 2 ;;
esac
[ "$rounds" -ge 1 ] || { echo "realworld: error: ROUNDS must be at least 1" >&2; exit 2; }
if [ ! -x "$gate" ]; then
	echo "realworld: error: $gate is missing: run make first" >&2
	exit 2
fi
# the projects to run: those named (each looked up in both folders), else every one of both
if [ $# -gt 0 ]; then
	libs="" apps_run=""
	for p in "$@"; do
		if [ -f "$src/$p/mix.exs" ]; then
			libs="$libs $p"
		elif [ -f "$apps/$p/mix.exs" ]; then
			apps_run="$apps_run $p"
		else
			echo "realworld: error: no Mix project $p in $src or $apps" >&2
			exit 2
		fi
	done
else
	libs=$(rw_projects "$src" | tr '\n' ' ')
	apps_run=$(rw_projects "$apps" | tr '\n' ' ')
	[ -n "$libs" ] || echo "realworld: skipped library suites: no Mix project in $src (GATE_REALWORLD; CONTRIBUTING.md: Real projects)"
	[ -n "$apps_run" ] || echo "realworld: skipped applications: no Mix project in $apps (GATE_REALWORLD_APPS; CONTRIBUTING.md: Real projects)"
	if [ -z "$libs$apps_run" ]; then
		echo "realworld: ok: skipped, no real project on this machine"
		exit 0
	fi
fi
projects="$libs"

work=$(mktemp -d "${TMPDIR:-/tmp}/gate-realworld.XXXXXX")
# A suite may start distribution itself (phoenix_pubsub's starts peers), which needs an epmd,
# as its own CI starts with `epmd -daemon`; gate's node is not distributed and starts none.
# One is started here when none answers, before each run: another user's epmd that answered
# may be stopped by its owner meanwhile (phoenix_pubsub's bare run then failed: "register/listen
# error: econnrefused"). Only those started here are stopped at the end: they carry a mark in
# their environment (epmd -daemon forks: its pid is not $!), never another user's.
epmd_mark="REALWORLD_EPMD=$work"
our_epmds() {
	for e in $(pgrep -x epmd); do
		tr '\0' '\n' 2>/dev/null <"/proc/$e/environ" | grep -qxF "$epmd_mark" && printf '%s ' "$e"
	done
}
stop_our_epmd() { for e in $(our_epmds); do kill "$e" 2>/dev/null; done; }
pgenv="" # the env file of an application's PostgreSQL while it runs: stopped at exit
pg_down() { [ -z "$pgenv" ] || pg_stop "$pgenv"; pgenv=""; }
trap 'pg_down; stop_our_epmd; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# epmd_up: an epmd answers, started here if none does
epmd_up() {
	epmd -names >/dev/null 2>&1 && return 0
	env "$epmd_mark" epmd -daemon || { echo "realworld: error: epmd -daemon failed (a suite that starts distribution needs one)" >&2; exit 2; }
	for _e in $(seq 1 50); do epmd -names >/dev/null 2>&1 && break; sleep 0.1; done
	echo "realworld: started epmd -daemon (pid $(echo $(our_epmds))) for suites that start distribution; stopped at the end"
}
epmd_up
export MIX_ENV=test LC_ALL=C
in="" # the prefix that runs a command where an application's database is (pg_wrap)
limit=${REALWORLD_TIMEOUT:-900} # seconds per run: a hung suite is an error, not a hang of CI

. "$root/tests/bench/stats.sh"

# project_rounds P D: N rounds of bare `mix test` and `gate run` in D, project P's row in the table
project_rounds() {
	p=$1
	d=$2
	: >"$work/$p.bare"
	: >"$work/$p.gate"
	exits="" tests="?" alarms=0 tfail=0 frun=0 errors=0 gate_pass_failed=0 codemax=0 binmax=0
	i=1
	while [ "$i" -le "$rounds" ]; do
		epmd_up
		t=$(now_ms)
		# shellcheck disable=SC2086 # $in: a command prefix (the database's network namespace)
		(cd "$d" && $in timeout "$limit" mix test >"$work/bare.out" 2>&1)
		brc=$?
		echo $(($(now_ms) - t)) >>"$work/$p.bare"
		# ExUnit's closing line: "212 tests, 0 failures" (", 3 excluded", "1 test, 1 failure")
		bline=$(grep -E '^[0-9]+ (tests?|doctests?|propert)[^,]*(, [0-9]+ [a-z]+)*, [0-9]+ failures?' "$work/bare.out" | tail -n 1)
		bfail=$(printf '%s\n' "$bline" | sed -n 's/.* \([0-9][0-9]*\) failures\{0,1\}.*/\1/p')
		epmd_up
		t=$(now_ms)
		# shellcheck disable=SC2086
		$in timeout "$limit" "$gate" run -q -C "$d" --json "$work/run.json" >"$work/gate.out" 2>&1
		grc=$?
		echo $(($(now_ms) - t)) >>"$work/$p.gate"
		exits="$exits$grc"
		# a snapshot that waited (port-driver binaries no socket explains) is
		# shown with its round: the wait is part of gate's wall time
		w=$(grep -o '"waited_us": *[1-9][0-9]*' "$work/run.json" 2>/dev/null | tr -d ' ' | tr '\n' ' ')
		if [ -n "$w" ]; then echo "realworld: $p round $i: a snapshot waited (us): $w"; fi
		# the code row's judged growth, the binary the literals of loaded modules account
		# for (set aside), and a culprit named by a finding that did not fail (never right)
		fig=$(python3 - "$work/run.json" 2>/dev/null <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
code = [f for f in d["findings"] if f["rule"] == "growth" and f["subject"] == "code"]
m = d.get("after", {}).get("what_grew", {}).get("modules_new", {})
lits = sum(m.get(k, {}).get("literal_bytes", 0) for k in ("disk", "test", "created"))
stray = [f["rule"] + "/" + f["subject"] for f in d["findings"]
         if f.get("culprit") and f.get("verdict") != "FAIL"]
print(code[0]["delta"] if code else 0, lits, ",".join(stray) or "-")
PY
)
		set -- $fig
		codej=${1:-0} binaside=${2:-0}
		[ "${3:--}" = - ] || echo "realworld: $p round $i: a culprit named by a finding that passed: $3"
		[ "$codej" -le "$codemax" ] 2>/dev/null || codemax=$codej
		[ "$binaside" -le "$binmax" ] 2>/dev/null || binmax=$binaside
		if [ "${3:--}" != - ]; then errors=$((errors + 1)); fi
		# gate's summary: "212 tests: 212 passed, 0 failed, 0 skipped"
		gline=$(grep -E '^[0-9]+ tests?: [0-9]+ passed, [0-9]+ failed' "$work/gate.out" | tail -n 1)
		gtests=$(printf '%s\n' "$gline" | sed -n 's/^\([0-9][0-9]*\) test.*/\1/p')
		gfail=$(printf '%s\n' "$gline" | sed -n 's/.* passed, \([0-9][0-9]*\) failed.*/\1/p')
		ginvalid=$(printf '%s\n' "$gline" | sed -n 's/.* \([0-9][0-9]*\) invalid.*/\1/p')
		[ -n "$gtests" ] && tests=$gtests
		what=""
		if [ "$brc" -ne 0 ] && [ -z "$bfail" ]; then
			errors=$((errors + 1))
			what="error: bare mix test exited $brc without ExUnit's closing line"
		elif [ "$grc" -ne 0 ] && [ "$grc" -ne 1 ]; then
			errors=$((errors + 1))
			what="error: gate exited $grc"
		elif [ -z "$gline" ]; then
			errors=$((errors + 1))
			what="error: gate's summary has no test counts"
		else
			failed=$((gfail + ${ginvalid:-0}))
			if [ "$failed" -gt 0 ] || [ "${bfail:-0}" -gt 0 ]; then
				tfail=$((tfail + 1))
				# the runs of the round in which a test failed: bare's, gate's, or both
				[ "${bfail:-0}" -eq 0 ] || frun=$((frun + 1))
				[ "$failed" -eq 0 ] || frun=$((frun + 1))
				what="a test failed (bare: ${bfail:-0}, under gate: $failed): the project's own test, not a gate verdict"
				if [ "$failed" -gt 0 ] && [ "$grc" -eq 0 ]; then
					gate_pass_failed=$((gate_pass_failed + 1))
					what="gate PASSED although $failed test(s) failed under it"
				fi
			fi
			if [ "$grc" -eq 1 ] && [ "$brc" -eq 0 ] && [ "$failed" -eq 0 ]; then
				alarms=$((alarms + 1))
				what="FALSE ALARM"
				# each failing finding whole, from the run's JSON: what to look at
				python3 - "$work/run.json" <<'PY' 2>/dev/null | sed 's/^/    finding: /'
import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    if f.get("verdict") == "FAIL":
        print(f["rule"] + "/" + f["subject"] + ": " + f["message"])
PY
			fi
		fi
		if [ -n "$what" ]; then
			echo "realworld: $p round $i: bare exit $brc, gate exit $grc: $what"
			# the failed tests by name (ExUnit's "  1) test ... (Module)"), so that a suite's
			# own flaky test can be told from one that fails only under gate
			grep -E 'FAIL|error|failure|^  [a-z_]+ grew|^ +[0-9]+\) ' "$work/gate.out" | grep -v '^\.' | head -n 12 | sed 's/^/    /'
			[ "${bfail:-0}" -gt 0 ] &&
				grep -E '^ +[0-9]+\) ' "$work/bare.out" | head -n 6 | sed 's/^/    bare: /'
		fi
		i=$((i + 1))
	done
	bm=$(median <"$work/$p.bare")
	gm=$(median <"$work/$p.gate")
	ratio=$(awk -v b="$bm" -v g="$gm" 'BEGIN { if (b > 0) printf "%.2f", g / b; else print "-" }')
	printf '%-14s %6s %-12s %6s %6s %6s %9s %9s %6s %9s %9s\n' "$p" "$tests" "$exits" "$alarms" "$tfail" "$errors" "$bm" "$gm" "${ratio}x" "$(kb "$codemax")" "$(kb "$binmax")" >>"$table"
	[ "$alarms" -eq 0 ] || status=1
	[ "$errors" -eq 0 ] || status=1
	if [ "$gate_pass_failed" -gt 0 ]; then
		echo "realworld: $p: gate passed $gate_pass_failed run(s) in which a test failed" >&2
		status=1
	fi
	# more than half of all runs (bare + gate: 2 a round) with failing tests: a broken suite,
	# not noise (in one round, a test that failed in the bare run alone is flaky, not broken)
	if [ "$frun" -gt "$rounds" ]; then
		echo "realworld: $p: tests failed in $frun of $((rounds * 2)) runs (bare and gate): the suite is broken here, not flaky" >&2
		status=1
	fi
}

# planted P D N: the planted runs of library suite P (copied in D, N tests under gate)
planted() {
	p=$1
	d=$2
	n=$3
	rw_plant_kinds "$n"
	for kind in $rw_kinds; do
		f="$root/tests/realworld/plant/planted_${kind}_test.exs"
		if [ ! -f "$f" ]; then
			echo "realworld: error: REALWORLD_PLANT names $kind, which has no $f" >&2
			status=1
			continue
		fi
		case "$kind" in
		ets) name="ETS table gate_planted_sessions" ;;
		state) name="process gate_planted_cache" ;;
		procs) name="processes born during the run" ;;
		*) name="" ;;
		esac
		cp "$f" "$d/test/"
		$in timeout "$limit" "$gate" run -q -C "$d" --json "$work/planted.json" >"$work/gate.out" 2>&1
		grc=$?
		rm -f "$d/test/planted_${kind}_test.exs"
		# the culprit: the planted file's module, GatePlanted.EtsTest for ets
		module="GatePlanted.$(printf '%s' "$kind" | cut -c1 | tr a-z A-Z)$(printf '%s' "$kind" | cut -c2-)Test"
		rw_plant_check realworld "$kind" "$p" "$grc" "$work/planted.json" "$work/gate.out" "" \
			"$name" "$module" || status=1
	done
}

# kb BYTES: kilobytes, for the table (the largest of the rounds)
kb() { awk -v b="${1:-0}" 'BEGIN { printf "%.0f kB", b / 1000 }'; }

status=0
table="$work/table"
printf '%-14s %6s %-12s %6s %6s %6s %9s %9s %6s %9s %9s\n' project tests "gate exits" "false" "tests" errors "bare ms" "gate ms" ratio "code" "binary" >"$table"
printf '%-14s %6s %-12s %6s %6s %6s %9s %9s %6s %9s %9s\n' "" "" "" alarms failed "" median median "" "judged" "set aside" >>"$table"
for p in $projects; do
	if [ ! -f "$src/$p/mix.exs" ]; then
		echo "realworld: error: $src/$p is no Mix project (no mix.exs)" >&2
		exit 2
	fi
	d="$work/$p"
	cp -r "$src/$p" "$d"
	rm -rf "$d/_build" "$d/.gate"
	rw_copies "$d" "$copies"
	if ! (cd "$d" && mix compile >"$work/$p.compile" 2>&1); then
		echo "realworld: error: $p does not compile:" >&2
		tail -n 20 "$work/$p.compile" >&2
		exit 2
	fi
	project_rounds "$p" "$d"
	planted "$p" "$d" "$tests"
done
# Applications: copied with what their folder holds (dependencies, and a _build compiled
# before, which saves minutes), compiled, the same rounds, then one `gate run --repeat 3`.
for p in $apps_run; do
	d="$work/$p"
	rw_copy_app "$apps/$p" "$d" || { echo "realworld: error: cannot copy $apps/$p" >&2; exit 2; }
	rm -rf "$d/.gate" "$d/_build/gate"
	if rw_needs_postgres "$d"; then
		pgenv="$work/$p.pg"
		if ! pg_start "$pgenv" 2>"$work/$p.pgerr"; then
			echo "realworld: error: $p needs PostgreSQL, and a private one did not start:" >&2
			tail -n 20 "$work/$p.pgerr" >&2
			status=1
			pg_down
			continue
		fi
		pg_env "$pgenv"
		in=$(pg_wrap "$pgenv")
	fi
	if ! (cd "$d" && mix compile >"$work/$p.compile" 2>&1); then
		echo "realworld: error: $p does not compile:" >&2
		tail -n 20 "$work/$p.compile" >&2
		status=1
	else
		project_rounds "$p" "$d"
		# shellcheck disable=SC2086
		$in timeout "$limit" "$gate" run -q -C "$d" --repeat 3 >"$work/gate.out" 2>&1
		grc=$?
		if [ "$grc" -ne 0 ]; then
			echo "realworld: $p: gate run --repeat 3 exited $grc on the unchanged application"
			grep -E 'FAIL|error' "$work/gate.out" | head -n 12 | sed 's/^/    /'
			status=1
		else
			echo "realworld: $p: gate run --repeat 3 passed"
		fi
	fi
	pg_down
	in=""
	unset PGHOST PGPORT
done
echo "realworld: $rounds rounds per project, bare mix test and gate run interleaved"
cat "$table"
if [ "$status" -eq 0 ]; then
	echo "realworld: ok: 0 false alarms, 0 errors"
else
	echo "realworld: FAILED (see the rounds above)"
fi
exit "$status"
