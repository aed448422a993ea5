#!/usr/bin/env bash
# tests/e2e/run.sh: end-to-end tests of `gate run` on real BEAM nodes and fixture Mix
# projects (tests/fixtures). Each case copies its fixture into a fresh temp dir, runs the
# real build/gate, checks the exit code, the messages, the JUnit file (xmllint against the
# xsd and junit2json, a real consumer from npm) and that no process it started is left.
#
# usage: tests/e2e/run.sh [-j N] [--long | --all] [--list] [CASE...]
#   no CASE: the everyday tier (every case not marked long; make test); --long: the long
#   cases alone (make test-long); --all: both. Named cases run whatever their tier.
#   -j N: N cases at a time (default: GATE_E2E_JOBS, else the CPU count plus one); cases
#   marked serial run afterwards, alone. --list: the cases it would run, and how, one a line.
# It ends with each case's wall time, slowest first, the summed and the wall time, then
# "e2e: N passed, M failed". The whole table goes to $GATE_BUILD/e2e-times.txt, and the next
# run starts the cases slowest first from it.
#
# Cases live here and in tests/e2e/cases/*.sh (sourced below, sharing these helpers): a case
# is a function case_NAME. Each runs in a subshell of its own with its own $WORK (its temp
# files, fixture copies, private HOMEs) and its own GATE_E2E_RUN mark, so cases run side by
# side. A case file may add declarative lines, one or more case names each:
#   e2e_serial NAME...  runs alone, after the others (it depends on the machine being quiet,
#                       or on state shared beyond its $WORK)
#   e2e_long NAME...    the long tier: not in make test, run by make test-long in CI
#   e2e_fresh NAME...   its fixtures are copied as in the repository, not compiled: the case
#                       looks at the compilation (its output, the time it takes)
# Fixtures are compiled once per run (MIX_ENV=test mix compile, in $RUN/fixtures) and each
# case gets a copy with its _build (cp -a: the timestamps Mix compares are kept), unless its
# case is marked fresh, or GATE_E2E_ELIXIR names another Elixir (make compat), or
# GATE_E2E_FRESH=1.
set -u
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR="$ROOT/${GATE_BUILD:-build}"
GATE="$BUILD_DIR/gate"
FIX="$ROOT/tests/fixtures"

JOBS=${GATE_E2E_JOBS:-}
TIER=quick
LIST=0
while [ $# -gt 0 ]; do
	case "$1" in
	-j) JOBS=${2:-}; shift 2 || shift ;;
	-j*) JOBS=${1#-j}; shift ;;
	--long) TIER=long; shift ;;
	--all) TIER=all; shift ;;
	--list) LIST=1; shift ;;
	--) shift; break ;;
	-*) echo "e2e: error: unknown option $1 (usage: tests/e2e/run.sh [-j N] [--long | --all] [--list] [CASE...])"; echo "e2e: 0 passed, 1 failed"; exit 2 ;;
	*) break ;;
	esac
done
[ -n "$JOBS" ] || JOBS=$(($(nproc 2>/dev/null || echo 1) + 1))
case "$JOBS" in '' | *[!0-9]* | 0) echo "e2e: error: -j $JOBS: not a number of cases at a time (1 or more)"; echo "e2e: 0 passed, 1 failed"; exit 2 ;; esac

# the run's directory: a directory per case ($WORK), the compiled fixtures, the cases' logs
RUN=$(mktemp -d "${TMPDIR:-/tmp}/gate-e2e.XXXXXX")
WORK="$RUN/main"
E2E_CASE=main # the case running (run_case sets it)
mkdir -p "$WORK" "$RUN/fixtures" "$RUN/logs"
# marks every process this suite starts, so that leftovers are told from other users' (epmd);
# each case has its own ($WORK), set where it starts
export GATE_E2E_RUN="$WORK"
# on any exit, also an aborted one, no epmd of ours stays behind (a case's private epmd), and
# no case still runs
on_exit() {
	local p
	for p in "${!PID_CASE[@]}"; do kill_tree "$p"; done
	for p in $(run_epmds); do kill "$p" 2>/dev/null; done
	rm -rf "$RUN"
}
# kill_tree PID: PID and every process below it (a case still running when the run is
# stopped: its gate, which stops its node, and its helpers)
kill_tree() {
	local below
	below=$(tree_below "$1")
	kill "$1" 2>/dev/null
	# shellcheck disable=SC2086
	[ -z "$below" ] || kill $below 2>/dev/null
}
tree_below() { # PID: the pids below PID
	local c
	for c in $(pgrep -P "$1"); do printf '%s ' "$c"; tree_below "$c"; done
}
declare -A PID_CASE=()
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
CASE_OK=1

[ -x "$GATE" ] || { echo "e2e: $GATE is not built (run make)"; echo "e2e: 0 passed, 1 failed"; exit 1; }
if [ ! -d "$ROOT/tests/junit/node_modules/junit2json" ]; then
	(cd "$ROOT/tests/junit" && npm ci --silent --no-audit --no-fund >/dev/null 2>&1) ||
		echo "e2e: warning: npm ci in tests/junit failed; JUnit consumer checks will fail"
fi
# the integration checks' packages, here once rather than by cases side by side
if [ ! -d "$ROOT/tests/integrations/node_modules/playwright-core" ]; then
	(cd "$ROOT/tests/integrations" && npm ci --silent --no-audit --no-fund >/dev/null 2>&1) ||
		echo "e2e: warning: npm ci in tests/integrations failed; the integration checks will fail"
fi

# the cases' annotations (see the header): e2e_serial, e2e_long, e2e_fresh NAME...
declare -A SERIAL=() LONG=() FRESH=()
e2e_serial() { local c; for c in "$@"; do SERIAL[$c]=1; done; }
e2e_long() { local c; for c in "$@"; do LONG[$c]=1; done; }
e2e_fresh() { local c; for c in "$@"; do FRESH[$c]=1; done; }

fail() {
	echo "    FAIL: $*"
	CASE_OK=0
}

# fixture NAME: a private copy of tests/fixtures/NAME, compiled (fixture_built); prints its
# path
fixture() {
	local dir src
	dir=$(mktemp -d "$WORK/$1.XXXXXX")
	src=$(fixture_built "$1")
	cp -a "$src/." "$dir/"
	echo "$dir"
}

# fixture_built NAME: the directory to copy fixture NAME from: tests/fixtures/NAME compiled
# once per run (MIX_ENV=test mix compile, under a lock: cases run side by side), or as it is
# when the case is marked fresh, under another Elixir, or when it does not compile (the
# cases of a project that does not compile see that compilation themselves)
fixture_built() {
	local name=$1 c="$RUN/fixtures/$1"
	if [ -n "${GATE_E2E_ELIXIR:-}" ] || [ "${GATE_E2E_FRESH:-0}" = 1 ] ||
		[ -n "${FRESH[${E2E_CASE:-}]:-}" ] || [ ! -f "$FIX/$name/mix.exs" ]; then
		echo "$FIX/$name"
		return
	fi
	(
		flock 9
		[ -e "$c.done" ] && exit 0
		rm -rf "$c"
		cp -r "$FIX/$name" "$c"
		if ! (cd "$c" && MIX_ENV=test timeout -k 5 300 mix compile </dev/null >"$c.log" 2>&1); then
			rm -rf "$c/_build" "$c/deps" # as in the repository, compiled by each case
		fi
		: >"$c.done"
	) 9>"$c.lock"
	if [ -e "$c.done" ]; then echo "$c"; else echo "$FIX/$name"; fi
}

# run_gate ARGS...: runs gate, output in $OUT/$ERR, exit code in $RC
run_gate() {
	OUT="$WORK/out.$RANDOM"
	ERR="$WORK/err.$RANDOM"
	# GATE_E2E_ELIXIR: the elixir gate starts nodes with (make compat: the chroot's OTP 27)
	if [ -n "${GATE_E2E_ELIXIR:-}" ]; then
		case "${1:-}" in run | snapshot) set -- "$1" --elixir "$GATE_E2E_ELIXIR" "${@:2}" ;; esac
	fi
	# shellcheck disable=SC2086 # GATE_WRAP: a command line such as valgrind's (make valgrind)
	timeout -k 5 300 ${GATE_WRAP:-} "$GATE" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

expect_rc() {
	if [ "$RC" -ne "$1" ]; then
		fail "exit code $RC, expected $1"
		echo "    --- stderr (last 15 lines):"
		tail -n 15 "$ERR" | sed 's/^/    | /'
		echo "    --- stdout (last 15 lines):"
		tail -n 15 "$OUT" | sed 's/^/    | /'
	fi
}

expect_in() { # FILE TEXT
	grep -qF -- "$2" "$1" || fail "$(basename "$1" | cut -d. -f1) lacks: $2"
}

expect_not_in() { # FILE TEXT
	if grep -qF -- "$2" "$1"; then fail "$(basename "$1" | cut -d. -f1) has: $2"; fi
}

# no_leftovers DIR: no process whose working directory is inside DIR (the node, its
# erl_child_setup, OS processes of the suite), and no epmd of ours left running. A process on
# its way out gets up to 1 s to be gone.
no_leftovers() {
	local dir=$1 left="" p i
	for i in $(seq 1 50); do
		left=$(procs_in "$dir")
		[ -z "$left" ] && break
		sleep 0.02
	done
	if [ -n "$left" ]; then
		local list=""
		for p in $left; do list="$list $p($(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-60))"; done
		fail "processes left behind:$list"
	fi
	local ours
	ours=$(our_epmds)
	[ -z "$ours" ] || fail "epmd started by this suite left running: $ours"
}

# procs_in DIR: the pids of the processes whose working directory is DIR or inside it (make
# compat: a node in the chroot has its cwd under the chroot's bind of /tmp)
procs_in() {
	local dir=$1 r=${GATE_COMPAT_ROOT:-/nonexistent}
	find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$dir" -o -lname "$dir/*" \
		-o -lname "$r$dir" -o -lname "$r$dir/*" \) 2>/dev/null | cut -d/ -f3 | tr '\n' ' '
}

# our_epmds: the epmd processes started from this case (they inherit GATE_E2E_RUN from
# whatever started them: a node of ours, or a case itself); other users' epmds on the same
# machine, and other cases', are not ours and never fail a case.
our_epmds() {
	local p
	for p in $(pgrep -x epmd); do
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qxF "GATE_E2E_RUN=$WORK" && printf '%s ' "$p"
	done
}

# run_epmds: the epmds of every case of this run
run_epmds() {
	local p
	for p in $(pgrep -x epmd); do
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -q "^GATE_E2E_RUN=$RUN/" && printf '%s ' "$p"
	done
}

# ours_matching PATTERN: the pids of this case's processes (GATE_E2E_RUN) whose command line
# matches PATTERN (pgrep -f)
ours_matching() {
	local p
	for p in $(pgrep -f -- "$1"); do
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qxF "GATE_E2E_RUN=$WORK" && printf '%s ' "$p"
	done
}

# The JUnit schema is a third-party file kept outside the repository (tests/junit/validate.sh):
# without it, schema checks are skipped, said once here; junit2json (junit_check) still runs.
JUNIT_XSD=${GATE_JUNIT_XSD:-$(cd "$ROOT/.." && pwd)/shared/junit/junit-10.xsd}
export GATE_JUNIT_XSD="$JUNIT_XSD"
[ -r "$JUNIT_XSD" ] || echo "e2e: JUnit schema checks skipped: no junit-10.xsd at $JUNIT_XSD (set GATE_JUNIT_XSD)"

junit_valid() { # FILE
	[ -f "$1" ] || { fail "no JUnit file at $1"; return; }
	[ -r "$JUNIT_XSD" ] || return 0
	sh "$ROOT/tests/junit/validate.sh" "$1" >"$WORK/validate.out" 2>&1 ||
		fail "JUnit does not validate: $(cat "$WORK/validate.out")"
}

junit_check() { # FILE ARGS... (tests/junit/check.js expectations)
	node "$ROOT/tests/junit/check.js" "$@" >"$WORK/check.out" 2>&1 ||
		fail "junit2json check: $(tail -n 3 "$WORK/check.out")"
}

# ---------------------------------------------------------------------------------------

case_clean_passes() {
	local d; d=$(fixture clean)
	run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	expect_in "$OUT" "28 tests: 28 passed, 0 failed"
	expect_in "$OUT" "processes_used"
	expect_in "$ERR" "before-snapshot"
	expect_in "$OUT" "28 tests, 0 failures" # ExUnit's own console output streams through
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "Clean.CacheTest=test the cache holds what was put"
	no_leftovers "$d"
}

# One leak, one finding: the holder fails; the binary row's growth is the
# holder's, so it passes as context, saying so.
case_leak_binary_fails() {
	local d; d=$(fixture leak_binary)
	run_gate run -C "$d" --junit "$d/out/report.xml"
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "process LeakBinary.Holder (<0."
	junit_valid "$d/out/report.xml"
	junit_check "$d/out/report.xml" --failures 1 --errors 0 \
		--failure-contains "process LeakBinary.Holder=300 refc binaries"
	no_leftovers "$d"
}

# The planted problems: each fails with the culprit named in the JUnit message.
case_ets_table_cap_names_table() {
	local d; d=$(fixture leak_ets)
	printf '[[ets.table]]\nname = "corpus_*"\nmax_bytes = "2 MB"\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 1
	expect_in "$OUT" "ETS table corpus_cache (owner LeakEts.Corpus) grew"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" \
		--failure-contains "table corpus_cache=ETS table corpus_cache (owner LeakEts.Corpus)" \
		--failure-contains "table corpus_cache=cap 2.0 MB"
	no_leftovers "$d"
}

case_binary_holder_named() {
	local d; d=$(fixture leak_binary)
	run_gate run -C "$d"
	expect_rc 1
	junit_check "$d/_build/gate/junit.xml" \
		--failure-contains "process LeakBinary.Holder=LeakBinary.Holder (<0." \
		--failure-contains "process LeakBinary.Holder=300 refc binaries"
	no_leftovers "$d"
}

case_flooded_mailbox_named() {
	local d; d=$(fixture plant)
	run_gate run -C "$d" -- --only mailbox
	expect_rc 1
	junit_check "$d/_build/gate/junit.xml" \
		--failure-contains "mailbox Plant.Sink=has 20 000 messages in its mailbox"
	no_leftovers "$d"
}

case_leaked_processes_grouped() {
	local d; d=$(fixture plant)
	run_gate run -C "$d" -- --only procs
	expect_rc 1
	junit_check "$d/_build/gate/junit.xml" \
		--failure-contains "born=500 processes born during the run are still alive" \
		--failure-contains "born=Plant.Worker:init/1 x 500"
	no_leftovers "$d"
}

case_atom_leak_fails() {
	local d; d=$(fixture plant)
	run_gate run -C "$d" -- --only atoms
	expect_rc 1
	junit_check "$d/_build/gate/junit.xml" --failure-contains "growth=atom count grew"
	no_leftovers "$d"
}

case_plant_clean_part_passes() {
	local d; d=$(fixture plant)
	run_gate run -C "$d"
	expect_rc 0 # the planted tests are excluded: every default rule passes
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0
	no_leftovers "$d"
}

case_snapshot_tables_and_json() {
	local d; d=$(fixture leak_ets)
	run_gate snapshot -C "$d"
	expect_rc 0
	expect_in "$OUT" "Top processes by memory"
	expect_in "$OUT" "Largest ETS tables"
	expect_in "$OUT" "binary_alloc"
	run_gate snapshot -q -C "$d" --json "$d/snap.json" --top 5
	expect_rc 0
	node -e '
		const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const ok = s.format === "gate.snapshot/1" && s.memory.total > 0 &&
			s.processes.length > 0 && s.processes.length <= 20 &&
			s.ets.some((t) => t.name === "corpus_cache" && t.owner_name === "LeakEts.Corpus") &&
			s.allocators.some((a) => a.type === "binary_alloc") && s.system.process_count > 0;
		process.exit(ok ? 0 : 1);' "$d/snap.json" || fail "snapshot JSON lacks expected fields"
	run_gate snapshot --attach nobody@127.0.0.1 --cookie-file /nonexistent
	expect_rc 2
	expect_in "$ERR" "cannot read the cookie from /nonexistent"
	no_leftovers "$d"
}

# free_port: a TCP port for a listener of a case's own (a private epmd, a node, a git daemon):
# below the kernel's ephemeral range, so that no connection of anyone's can hold it as its
# local port (a listener's bind then fails: an epmd on a port from that range failed so), and
# used by no socket now
free_port() {
	local p low
	low=$(cut -f 1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	case "$low" in '' | *[!0-9]*) low=32768 ;; esac
	[ "$low" -gt 12000 ] || low=32768
	while :; do
		p=$((10000 + RANDOM % (low - 10000)))
		ss -tan 2>/dev/null | awk '{print $4}' | grep -q ":$p\$" || { echo "$p"; return; }
	done
}

# Attach mode of gate snapshot: a node of our own behind a private epmd on a free port and a
# private HOME with the cookie; afterwards the probe must be gone from the node.
case_snapshot_attach_leaves_nothing() {
	local home="$WORK/attach_home" port name epid npid i loaded
	mkdir -p "$home"
	port=$(free_port)
	name="e2e_att_$RANDOM@127.0.0.1"
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$home/.erlang.cookie"
	chmod 400 "$home/.erlang.cookie"
	(export ERL_EPMD_PORT=$port; exec epmd -port "$port" -address 127.0.0.1) >/dev/null 2>&1 &
	epid=$!
	for i in $(seq 1 100); do # up to 5 s for it to listen
		ERL_EPMD_PORT=$port epmd -port "$port" -names >/dev/null 2>&1 && break
		sleep 0.05
	done
	(cd "$home" && export HOME="$home" ERL_EPMD_PORT=$port && exec erl -noshell -name "$name" \
		-start_epmd false -kernel inet_dist_use_interface '{127,0,0,1}' \
		-eval 'spawn(fun() -> timer:sleep(120000), halt() end).') >/dev/null 2>&1 &
	npid=$!
	for i in $(seq 1 50); do
		ERL_EPMD_PORT=$port epmd -port "$port" -names 2>/dev/null | grep -q "${name%@*}" && break
		sleep 0.1
	done
	ERL_EPMD_PORT=$port run_gate snapshot -q --attach "$name" --cookie-file "$home/.erlang.cookie" \
		--json "$WORK/attach.json"
	expect_rc 0
	[ -s "$WORK/attach.json" ] || fail "no snapshot JSON written"
	loaded=$(HOME="$home" ERL_EPMD_PORT=$port "$(ls /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | head -n 1)" \
		-name "$name" -a 'code is_loaded [gate_probe]' 2>&1)
	[ "$loaded" = "false" ] || fail "gate_probe still loaded on the node after the snapshot: $loaded"
	printf 'wrong\n' >"$WORK/wrong.cookie"
	ERL_EPMD_PORT=$port run_gate snapshot -q --attach "$name" --cookie-file "$WORK/wrong.cookie"
	expect_rc 2
	expect_in "$ERR" "cookie"
	expect_in "$ERR" "$WORK/wrong.cookie"
	kill "$npid" 2>/dev/null
	wait "$npid" 2>/dev/null
	kill "$epid" 2>/dev/null
	wait "$epid" 2>/dev/null
	EPMD_BEFORE=$(pgrep -x epmd | sort | tr '\n' ' ')
	no_leftovers "$home"
}

case_leak_ets_fails() {
	local d; d=$(fixture leak_ets)
	run_gate run -C "$d"
	expect_rc 1
	expect_in "$OUT" "ets grew"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --failure-contains "ets=ets grew" --errors 0
	no_leftovers "$d"
}

case_failing_test_fails() {
	local d; d=$(fixture failing)
	run_gate run -C "$d"
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 test)"
	local j="$d/_build/gate/junit.xml"
	junit_valid "$j"
	junit_check "$j" --failures 1 --skipped 2 --errors 0 \
		--failure-contains "test the answer is right=gate-fixture: the answer drifted"
	expect_in "$j" 'classname="FailingTest"'
	no_leftovers "$d"
}

case_mix_test_args_pass_through() {
	local d; d=$(fixture failing)
	run_gate run -C "$d" -- --only slow
	expect_rc 0 # the failing test is filtered out; the slow one passes
	junit_check "$d/_build/gate/junit.xml" --failures 0 --testcase "FailingTest=test excluded by tag"
	no_leftovers "$d"
}

case_no_compile_is_error() {
	local d; d=$(fixture no_compile)
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "gate: error: node nonode@nohost"
	expect_in "$ERR" "while booting the node"
	expect_in "$ERR" "exited with status 1"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1
	no_leftovers "$d"
}

case_node_dies_is_error() {
	local d; d=$(fixture node_dies)
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "gate: error:"
	expect_in "$ERR" "running the tests"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1
	no_leftovers "$d"
}

case_test_timeout_is_error() {
	local d; d=$(fixture blocking)
	run_gate run -C "$d" --test-timeout 4
	expect_rc 2
	expect_in "$ERR" "did not finish within node.test_timeout (4 s)"
	junit_check "$d/_build/gate/junit.xml" --errors 1
	no_leftovers "$d"
}

# signal_during FIXTURE SIGNAL WAIT_FOR_TEXT EXPECTED_RC
signal_during() {
	local d; d=$(fixture "$1")
	OUT="$WORK/out.$RANDOM"
	ERR="$WORK/err.$RANDOM"
	"$GATE" run -C "$d" >"$OUT" 2>"$ERR" &
	local pid=$! i
	for i in $(seq 1 600); do
		grep -qF -- "$3" "$OUT" "$ERR" 2>/dev/null && break
		sleep 0.1
	done
	grep -qF -- "$3" "$OUT" "$ERR" || fail "never saw: $3"
	kill -s "$2" "$pid"
	wait "$pid"
	RC=$?
	expect_rc "$4"
	expect_in "$ERR" "interrupted by"
	no_leftovers "$d"
}

# gate killed with SIGKILL cannot clean up: the node notices its lifeline pipe (fd 3) close and halts.
case_sigkill_of_gate_leaves_no_node() {
	local d; d=$(fixture blocking)
	OUT="$WORK/out.$RANDOM"
	ERR="$WORK/err.$RANDOM"
	"$GATE" run -C "$d" >"$OUT" 2>"$ERR" &
	local pid=$! i
	for i in $(seq 1 600); do
		grep -qF "gate-fixture: blocking now" "$OUT" && break
		sleep 0.1
	done
	grep -qF "gate-fixture: blocking now" "$OUT" || fail "the suite never started"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	# the node halts when it reads end-of-file on its lifeline pipe: up to 2 s for that
	local t
	for t in $(seq 1 100); do [ -z "$(procs_in "$d")" ] && break; sleep 0.02; done
	no_leftovers "$d"
}

case_sigint_while_tests_run() { signal_during blocking INT "gate-fixture: blocking now" 130; }
case_sigterm_while_booting() { signal_during clean TERM "booting node" 143; }

case_usage_errors() {
	run_gate run --no-such-flag
	expect_rc 2
	expect_in "$ERR" "unknown option --no-such-flag"
	run_gate frobnicate
	expect_rc 2
	expect_in "$ERR" "unknown command frobnicate"
	run_gate
	expect_rc 2
	run_gate run -C "$WORK/does-not-exist"
	expect_rc 2
	expect_in "$ERR" "does-not-exist"
	mkdir -p "$WORK/empty"
	run_gate run -C "$WORK/empty"
	expect_rc 2
	expect_in "$ERR" "no readable mix.exs"
	run_gate run --test-timeout soon
	expect_rc 2
	expect_in "$ERR" "--test-timeout soon"
	run_gate run -C
	expect_rc 2
	expect_in "$ERR" "needs a value"
}

case_help_and_version() {
	run_gate --help
	expect_rc 0
	expect_in "$OUT" "usage: gate <command>"
	run_gate run --help
	expect_rc 0
	expect_in "$OUT" "usage: gate run"
	run_gate --version
	expect_rc 0
	expect_in "$OUT" "gate 0."
}

case_config_check() {
	run_gate config check "$ROOT/gate.toml"
	expect_rc 0
	expect_in "$ERR" "is valid"
	expect_in "$OUT" 'boot_timeout = "120 s"'
	expect_in "$OUT" '[growth.code]'
	# the printed configuration is itself a valid configuration
	cp "$OUT" "$WORK/effective.toml"
	run_gate config check "$WORK/effective.toml"
	expect_rc 0
	printf '[growth]\nmax = "10 %%"\n\n[ets]\nmax_left_alvie = 3\n' >"$WORK/bad.toml"
	run_gate config check "$WORK/bad.toml"
	expect_rc 2
	expect_in "$ERR" "bad.toml:5:1"
	expect_in "$ERR" 'did you mean "max_left_alive"'
	run_gate config check "$WORK/missing.toml"
	expect_rc 2
	expect_in "$ERR" "missing.toml"
}

case_bad_config_is_error() {
	local d; d=$(fixture failing)
	printf '[node]\nboot_timout = "10 s"\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "gate.toml:2:1"
	expect_in "$ERR" "boot_timeout"
	[ ! -e "$d/_build/gate/junit.xml" ] || fail "a JUnit file was written for a config error"
	no_leftovers "$d"
}

# The value after -setcookie on the node's command line is a throw-away: the node replaces
# it with the real cookie from its lifeline pipe, so a connection using it must be refused.
# (only a node started with --distributed NAME has a cookie and a listener)
case_cookie_not_on_command_line() {
	local d; d=$(fixture blocking)
	OUT="$WORK/out.$RANDOM"
	ERR="$WORK/err.$RANDOM"
	"$GATE" run -C "$d" --distributed "gate_e2e_$RANDOM" >"$OUT" 2>"$ERR" &
	local pid=$! i beam="" p
	for i in $(seq 1 600); do
		grep -qF "gate-fixture: blocking now" "$OUT" && break
		sleep 0.1
	done
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$d" ] || continue
		grep -qa beam "$p/cmdline" 2>/dev/null && beam=${p#/proc/}
	done
	if [ -z "$beam" ]; then
		fail "no node process found"
	else
		local args visible port
		args=$(tr '\0' ' ' <"/proc/$beam/cmdline")
		visible=$(echo "$args" | sed -n 's/.*-setcookie \([^ ]*\).*/\1/p')
		port=$(echo "$args" | sed -n 's/.*-erl_epmd_port \([0-9]*\).*/\1/p')
		name=$(sed -n 's/.*booting node \(gate_e2e_[0-9]*@127.0.0.1\).*/\1/p' "$ERR")
		echo "$args" | grep -q -- "-start_epmd false" || fail "node not started without epmd"
		ss -ltn 2>/dev/null | grep -q "127.0.0.1:$port " || fail "distribution not on 127.0.0.1:$port"
		if ss -ltn 2>/dev/null | grep -E "(0.0.0.0|\*|\[::\]):$port " >/dev/null; then fail "distribution listens beyond loopback"; fi
		local ping
		[ -n "$visible" ] || fail "no -setcookie on the node's command line"
		printf '%s\n' "$visible" >"$WORK/visible.cookie"
		ping=$("$ROOT/${GATE_BUILD:-build}/tests/ei_ping" "$name" "$port" "$WORK/visible.cookie")
		[ "$ping" = "pang" ] || fail "the cookie visible on the command line was accepted ($ping)"
	fi
	kill -INT "$pid"
	wait "$pid"
	no_leftovers "$d"

	# control: ei_ping does say pong when the cookie is right (a node of our own)
	local cport cnode="e2e_ctl_$RANDOM@127.0.0.1" cpid
	# a port nothing listens on yet (another user's node on it answered pang), and time for
	# a node booting on a loaded machine
	cport=$(free_port)
	printf 'e2e_known_cookie\n' >"$WORK/known.cookie"
	(cd "$WORK" && exec erl -noshell -start_epmd false -erl_epmd_port "$cport" -name "$cnode" \
		-kernel inet_dist_use_interface '{127,0,0,1}' -setcookie e2e_known_cookie \
		-eval 'spawn(fun() -> timer:sleep(30000), halt() end).') >/dev/null 2>&1 &
	cpid=$!
	for i in $(seq 1 300); do
		ss -ltn 2>/dev/null | grep -q "127.0.0.1:$cport " && break
		sleep 0.1
	done
	ping=$("$ROOT/${GATE_BUILD:-build}/tests/ei_ping" "$cnode" "$cport" "$WORK/known.cookie")
	[ "$ping" = "pong" ] || fail "control: ei_ping with the right cookie said $ping"
	kill "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
}

# ---- baselines in git: real repositories made here, the fixture committed ----

# git_fixture NAME: a private copy of fixture NAME in a new repository (branch main, a local
# identity), everything committed; prints its path
git_fixture() {
	local dir
	dir=$(fixture "$1")
	# the fixture's compiled _build (fixture) is not part of the project's history
	(cd "$dir" && git init -q -b main && git config user.name "Gate E2E" &&
		git config user.email e2e@gate.invalid && git add -A &&
		git rm -r -q --cached --ignore-unmatch _build &&
		git commit -q -m "the project") >/dev/null 2>&1 || fail "cannot make a repository in $dir"
	echo "$dir"
}

# git_in DIR ARGS...: git in DIR, stderr kept with stdout
git_in() { local dir=$1; shift; git -C "$dir" "$@" 2>&1; }

fsck_clean() { # DIR
	local out
	out=$(git -C "$1" fsck --no-dangling 2>&1) || fail "git fsck failed in $1: $out"
	[ -z "$out" ] || fail "git fsck in $1 reports: $out"
}

# (a) no baseline: a skipped testcase with the reason; --require-baseline fails; no repository
case_baseline_missing_is_skipped() {
	local d; d=$(git_fixture clean)
	run_gate run -C "$d"
	expect_rc 0
	expect_in "$ERR" "baseline: none at HEAD:.gate/baseline.json (the configured ref does not exist here: read HEAD)"
	expect_in "$OUT" "gate: PASSED"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 --testcase "gate.memory.baseline=baseline"
	expect_in "$d/_build/gate/junit.xml" '<skipped message="no baseline at HEAD:.gate/baseline.json: nothing to compare with'
	run_gate run -q -C "$d" --require-baseline
	expect_rc 1
	junit_check "$d/_build/gate/junit.xml" --failures 1 --errors 0 \
		--failure-contains "baseline=no baseline at HEAD:.gate/baseline.json, and a baseline is required"
	local n; n=$(fixture clean) # in no repository at all: skipped, said so, no testcase
	run_gate run -C "$n"
	expect_rc 0
	expect_in "$ERR" "baseline: skipped, $n is in no git repository"
	expect_not_in "$n/_build/gate/junit.xml" "gate.memory.baseline"
	run_gate run -q -C "$n" --require-baseline
	expect_rc 1
	junit_check "$n/_build/gate/junit.xml" --failures 1 \
		--failure-contains "baseline=no baseline at origin/main:.gate/baseline.json ($n is in no git repository), and a baseline is required"
	no_leftovers "$d"
	no_leftovers "$n"
}

# (b) --update-baseline --commit commits that one file; other changes survive byte for byte
case_baseline_commit_only_that_file() {
	local d; d=$(git_fixture clean)
	printf 'staged, not committed\n' >"$d/notes.txt"
	git_in "$d" add notes.txt >/dev/null
	printf '# an unstaged local edit\n' >>"$d/mix.exs"
	printf 'also unstaged\n' >>"$d/notes.txt"
	local head0; head0=$(git -C "$d" rev-parse HEAD)
	git -C "$d" diff --cached >"$WORK/cached.before"
	git -C "$d" diff >"$WORK/unstaged.before"
	run_gate run -C "$d" --update-baseline --commit --message "ci: memory baseline"
	expect_rc 0
	expect_in "$OUT" "gate: committed "
	expect_in "$OUT" ".gate/baseline.json (that file only)"
	expect_in "$OUT" "git push origin HEAD"
	expect_in "$OUT" "git push origin refs/notes/gate"
	local files; files=$(git -C "$d" log -1 --name-only --format=)
	[ "$files" = ".gate/baseline.json" ] || fail "the commit touches: $files"
	[ "$(git -C "$d" rev-parse HEAD~1)" = "$head0" ] || fail "the commit is not on top of the HEAD measured"
	git -C "$d" log -1 --format=%s | grep -q "^ci: memory baseline" || fail "commit message: $(git -C "$d" log -1 --format=%s)"
	git -C "$d" notes --ref=gate show HEAD >"$WORK/note" 2>&1 || fail "no note on HEAD: $(cat "$WORK/note")"
	expect_in "$WORK/note" "\"commit\":\"$head0\""
	git -C "$d" diff --cached >"$WORK/cached.after"
	git -C "$d" diff >"$WORK/unstaged.after"
	cmp -s "$WORK/cached.before" "$WORK/cached.after" || fail "the staged change did not survive"
	cmp -s "$WORK/unstaged.before" "$WORK/unstaged.after" || fail "the unstaged change did not survive"
	[ -z "$(git -C "$d" status --porcelain -- .gate)" ] || fail "git status shows the baseline: $(git -C "$d" status --porcelain -- .gate)"
	cmp -s "$d/.gate/baseline.json" <(git -C "$d" show HEAD:.gate/baseline.json) ||
		fail "the working-tree baseline differs from the committed one"
	fsck_clean "$d"
	no_leftovers "$d"
}

# (c) a run against that baseline passes; the leak_ets code in the same repository fails the
# baseline rule naming the category
case_baseline_compare_names_category() {
	local d; d=$(git_fixture clean)
	run_gate baseline update -q -C "$d" --commit # a fresh run through the subcommand
	expect_rc 0
	expect_in "$OUT" "gate: committed "
	local base; base=$(git -C "$d" rev-parse HEAD)
	run_gate run -C "$d"
	expect_rc 0
	expect_in "$ERR" "baseline: HEAD:.gate/baseline.json at commit ${base:0:12}"
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "gate.memory.baseline=baseline" # the comparison is one testcase
	rm -rf "$d/lib" "$d/test" "$d/mix.exs"
	cp -r "$FIX/leak_ets/lib" "$FIX/leak_ets/test" "$FIX/leak_ets/mix.exs" "$d/"
	git_in "$d" add -A >/dev/null
	git_in "$d" commit -q -m "the leaking code" >/dev/null
	run_gate run -C "$d" --baseline-ref "$base"
	expect_rc 1
	expect_in "$ERR" "baseline: $base:.gate/baseline.json at commit"
	junit_valid "$d/_build/gate/junit.xml"
	# one leak, one voice: the table fails, the baseline's rows are context
	junit_check "$d/_build/gate/junit.xml" --errors 0 --failures 1 \
		--failure-contains "ets=ETS table corpus_cache (owner LeakEts.Corpus)"
	expect_in "$d/_build/gate/junit.xml" "ets: explained by ETS table corpus_cache"
	expect_in "$OUT" "baseline"
	fsck_clean "$d"
	no_leftovers "$d"
}

# (d) a corrupt or future baseline, or a ref that does not exist: exit 2 naming REF:PATH / REF
case_baseline_bad_input_is_error() {
	local d; d=$(git_fixture clean)
	mkdir -p "$d/.gate"
	printf '{"version": 1, "memory": {"total": 12' >"$d/.gate/baseline.json"
	git_in "$d" add .gate/baseline.json >/dev/null
	git_in "$d" commit -q -m "a truncated baseline" >/dev/null
	run_gate run -C "$d" --baseline-ref HEAD
	expect_rc 2
	expect_in "$ERR" "gate: error: HEAD:.gate/baseline.json"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1
	expect_not_in "$ERR" "booting node" # refused before the suite runs
	printf '{"version": 99}\n' >"$d/.gate/baseline.json"
	git_in "$d" commit -q -a -m "a baseline from the future" >/dev/null
	run_gate run -q -C "$d"
	expect_rc 2
	expect_in "$ERR" "HEAD:.gate/baseline.json"
	expect_in "$ERR" "newer gate"
	run_gate run -q -C "$d" --baseline-ref nosuchref
	expect_rc 2
	expect_in "$ERR" "nosuchref"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=nosuchref"
	[ "$(cat "$d/.gate/baseline.json")" = '{"version": 99}' ] || fail "the baseline file was changed"
	fsck_clean "$d"
	no_leftovers "$d"
}

# (e) run --json, baseline update --from, the history as JSON, and the library's refusals
case_baseline_history_and_refusals() {
	local d; d=$(git_fixture clean)
	run_gate run -q -C "$d" --json "$WORK/run1.json"
	expect_rc 0
	node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		process.exit(r.verdict === "passed" && r.baseline.version === 1 && r.baseline.memory.total > 0 ? 0 : 1)' \
		"$WORK/run1.json" || fail "the run JSON lacks verdict/baseline"
	run_gate baseline update -C "$d" --from "$WORK/run1.json" --commit
	expect_rc 0
	local first; first=$(git -C "$d" rev-parse HEAD)
	run_gate run -q -C "$d" --update-baseline --commit --json "$WORK/run2.json"
	expect_rc 0
	local second; second=$(git -C "$d" rev-parse HEAD)
	run_gate baseline history -C "$d" --json
	expect_rc 0
	node -e 'const h = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const ok = h.length === 2 && h[0].noted_commit === process.argv[2] &&
			h[1].noted_commit === process.argv[3] && h[1].memory.total > 0;
		process.exit(ok ? 0 : 1)' "$OUT" "$first" "$second" || fail "history JSON: $(cat "$OUT")"
	run_gate baseline history -C "$d" -n 1
	expect_rc 0
	expect_in "$OUT" "processes_used"
	expect_in "$OUT" "${second:0:7}"
	expect_not_in "$OUT" "${first:0:7} "
	# run1 was measured two commits ago: HEAD moved
	run_gate baseline update -C "$d" --from "$WORK/run1.json" --commit
	expect_rc 2
	expect_in "$ERR" "HEAD moved"
	# local edits of the baseline file itself (run3 is measured at the current HEAD)
	run_gate run -q -C "$d" --json "$WORK/run3.json"
	expect_rc 0
	printf '\n' >>"$d/.gate/baseline.json"
	run_gate baseline update -C "$d" --from "$WORK/run3.json" --commit
	expect_rc 2
	expect_in "$ERR" "local changes"
	git_in "$d" checkout -q -- .gate/baseline.json >/dev/null
	git_in "$d" checkout -q --detach >/dev/null
	run_gate baseline update -C "$d" --from "$WORK/run3.json" --commit
	expect_rc 2
	expect_in "$ERR" "detached"
	[ "$(git -C "$d" rev-parse HEAD)" = "$second" ] || fail "a refused update moved HEAD"
	fsck_clean "$d"
	no_leftovers "$d"
}

# (f) a shallow clone (depth 1) compares against the baseline its origin/main has
case_baseline_shallow_clone() {
	local d; d=$(git_fixture clean)
	run_gate baseline update -q -C "$d" --commit
	expect_rc 0
	printf 'more\n' >"$d/README"
	git_in "$d" add README >/dev/null
	git_in "$d" commit -q -m "one more commit" >/dev/null
	local c; c=$(mktemp -d "$WORK/shallow.XXXXXX")
	git clone -q --depth 1 "file://$d" "$c/repo" 2>"$WORK/clone.err" || fail "clone: $(cat "$WORK/clone.err")"
	[ "$(git -C "$c/repo" rev-parse --is-shallow-repository)" = true ] || fail "the clone is not shallow"
	run_gate run -C "$c/repo"
	expect_rc 0
	expect_in "$ERR" "baseline: origin/main:.gate/baseline.json at commit"
	junit_check "$c/repo/_build/gate/junit.xml" --failures 0 --errors 0 --testcase "gate.memory.baseline=baseline"
	no_leftovers "$d"
	no_leftovers "$c"
}

# ---------------------------------------------------------------------------------------

# More cases, one file per capability (attribution, integrations, attach, hardening), so
# that each keeps its own helpers beside its cases.
for f in "$ROOT"/tests/e2e/cases/*.sh; do
	[ -f "$f" ] || continue
	# shellcheck disable=SC1090
	. "$f"
done

# the cases whose fixtures are copied as in the repository (see the header)
e2e_fresh sigterm_while_booting sigint_while_booting json_stdout_run json_stdout_snapshot

# run_case NAME: case NAME in a subshell of its own, with its own $WORK and GATE_E2E_RUN
# mark; its epmds are stopped when it ends, its $WORK removed when it passed. Writes its wall
# time (s) to $RUN/logs/NAME.time; exits 0 when it passed.
run_case() (
	E2E_CASE=$1
	WORK="$RUN/$1"
	mkdir -p "$WORK"
	export GATE_E2E_RUN="$WORK"
	trap 'for p in $(our_epmds); do kill "$p" 2>/dev/null; done' EXIT
	CASE_OK=1
	local t0=$EPOCHREALTIME
	if declare -F "case_$1" >/dev/null; then "case_$1"; else fail "no such case: $1"; fi
	local t1=$EPOCHREALTIME
	LC_ALL=C awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$RUN/logs/$1.time"
	if [ "$CASE_OK" = 1 ]; then
		rm -rf "$WORK"
		exit 0
	fi
	exit 1
)

# launch NAME: run_case in the background, its output in $RUN/logs/NAME.log
launch() {
	run_case "$1" >"$RUN/logs/$1.log" 2>&1 </dev/null &
	PID_CASE[$!]=$1
}

# reap: waits for the next case to end and reports it (its output, then ok or failed)
reap() {
	local pid rc c t
	wait -n -p pid
	rc=$?
	c=${PID_CASE[$pid]}
	unset "PID_CASE[$pid]"
	t=$(cat "$RUN/logs/$c.time" 2>/dev/null || echo "?")
	echo "e2e: $c"
	cat "$RUN/logs/$c.log"
	if [ "$rc" = 0 ]; then
		PASS=$((PASS + 1))
		echo "    ok ($t s)"
	else
		FAIL=$((FAIL + 1))
		FAILED_CASES+=("$c")
		echo "    failed ($t s)"
	fi
	[ "$t" = "?" ] || TIMES+=("$t $c")
}

ALL_CASES=$(declare -F | awk '{print $3}' | grep '^case_' | sed 's/^case_//')
if [ $# -gt 0 ]; then
	CASES="$*"
else
	CASES=""
	for c in $ALL_CASES; do
		case "$TIER" in
		quick) [ -n "${LONG[$c]:-}" ] || CASES="$CASES $c" ;;
		long) [ -z "${LONG[$c]:-}" ] || CASES="$CASES $c" ;;
		*) CASES="$CASES $c" ;;
		esac
	done
fi
# slowest first, as the last run timed them (a case it did not time counts as slow): the
# long ones do not start last and leave the others' slots idle
TIMES_FILE="$BUILD_DIR/e2e-times.txt"
declare -A LAST=()
if [ -r "$TIMES_FILE" ]; then
	while read -r t c; do
		case "$t" in *[!0-9.]* | '') continue ;; esac
		LAST[$c]=$t
	done <"$TIMES_FILE"
fi
ORDERED=$(for c in $CASES; do printf '%s %s\n' "${LAST[$c]:-999}" "$c"; done | sort -s -k1,1gr | awk '{print $2}')
PARALLEL=() SERIAL_CASES=()
for c in $ORDERED; do
	if [ -n "${SERIAL[$c]:-}" ]; then SERIAL_CASES+=("$c"); else PARALLEL+=("$c"); fi
done
if [ "$LIST" = 1 ]; then
	for c in $CASES; do
		printf '%s%s%s%s\n' "$c" "${LONG[$c]:+ long}" "${SERIAL[$c]:+ serial}" "${FRESH[$c]:+ fresh}"
	done
	exit 0
fi
PASS=0
FAIL=0
FAILED_CASES=()
TIMES=()
RUN_T0=$EPOCHREALTIME
echo "e2e: $((${#PARALLEL[@]} + ${#SERIAL_CASES[@]})) cases, $JOBS at a time (${#SERIAL_CASES[@]} alone, after the others)"
for c in "${PARALLEL[@]}"; do
	while [ "${#PID_CASE[@]}" -ge "$JOBS" ]; do reap; done
	launch "$c"
done
while [ "${#PID_CASE[@]}" -gt 0 ]; do reap; done
for c in "${SERIAL_CASES[@]}"; do
	launch "$c"
	reap
done
RUN_T1=$EPOCHREALTIME

# the times: every case's, slowest first, in $TIMES_FILE (a run of every case of a tier or
# more only, so that a run of a few cases does not forget the others' times); the slowest
# here, with the sum and the wall time
if [ "${#TIMES[@]}" -gt 0 ]; then
	printf '%s\n' "${TIMES[@]}" | sort -k1,1gr >"$RUN/times"
	if [ $# -eq 0 ]; then
		{
			[ -r "$TIMES_FILE" ] && awk 'NR == FNR { seen[$2] = 1; next } !($2 in seen)' "$RUN/times" "$TIMES_FILE"
			cat "$RUN/times"
		} | sort -k1,1gr >"$RUN/times.all" 2>/dev/null && mkdir -p "$BUILD_DIR" &&
			cp "$RUN/times.all" "$TIMES_FILE" 2>/dev/null
	fi
	echo "e2e: the slowest cases (wall s; every case's in $TIMES_FILE after a full run):"
	head -n 20 "$RUN/times" | awk '{ printf "    %7.1f  %s\n", $1, $2 }'
	awk -v w0="$RUN_T0" -v w1="$RUN_T1" -v j="$JOBS" '{ s += $1 } END {
		printf "e2e: %d cases, %.0f s summed, %.0f s wall, %d at a time\n", NR, s, w1 - w0, j }' "$RUN/times"
fi
[ "$FAIL" -eq 0 ] || echo "e2e: failed cases: ${FAILED_CASES[*]}"
echo "e2e: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
