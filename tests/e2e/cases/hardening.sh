# tests/e2e/cases/hardening.sh: fault and security cases, sourced by
# tests/e2e/run.sh (its helpers: fixture, run_gate, expect_rc, expect_in, no_leftovers, ...).
# Cases already in run.sh are not repeated here: sigint_while_tests_run,
# sigterm_while_booting, sigkill_of_gate_leaves_no_node, node_dies_is_error,
# test_timeout_is_error (a test that blocks forever), cookie_not_on_command_line,
# snapshot_attach_leaves_nothing (attach: probe unloaded, wrong cookie).
#
# Disk full and read-only output directories need mounts (a small tmpfs, a read-only bind
# mount), so root: CI runs as root. Elsewhere the read-only cases use chmod, which stops a
# user other than root, and the disk-full cases say why they cannot run.

# ---- helpers ----

IS_ROOT=0
[ "$(id -u)" = 0 ] && IS_ROOT=1

# hard_gate_bg ARGS...: starts gate in the background ($GATE_WRAP too); pid in $GPID, output in
# $OUT/$ERR
hard_gate_bg() {
	OUT="$WORK/out.$RANDOM"
	ERR="$WORK/err.$RANDOM"
	# made before gate starts: the background job opens them when it gets to it, and a
	# `tail -f` (wait_text_now) that starts first would give up on a file not there yet
	# (sigint_while_collecting_garbage never saw its line, 1 run in CI under load)
	: >"$OUT"
	: >"$ERR"
	${GATE_WRAP:-} "$GATE" "$@" >"$OUT" 2>"$ERR" &
	GPID=$!
}

# wait_text TEXT FILE...: waits (polling every 20 ms, at most 5 min) until TEXT appears
wait_text() {
	local text=$1 i
	shift
	for i in $(seq 1 15000); do
		grep -qF -- "$text" "$@" 2>/dev/null && return 0
		kill -0 "$GPID" 2>/dev/null || break
		sleep 0.02
	done
	grep -qF -- "$text" "$@" 2>/dev/null && return 0
	fail "never saw: $text"
	return 1
}

# wait_text_now TEXT FILE...: as wait_text, but returns as soon as TEXT is written (tail -f
# follows the files through inotify; no polling interval, no process spawned per look), for
# phases that last only a few hundred ms (the gc_heavy fixture's GC: 200-300 ms here)
wait_text_now() {
	local text=$1
	shift
	grep -q -m1 -F -- "$text" < <(timeout 300 tail -q -n +1 --pid="$GPID" -f "$@" 2>/dev/null) &&
		return 0
	fail "never saw: $text"
	return 1
}

# stop_bg PID...: ends background processes this case started, and reaps them
stop_bg() {
	local p
	for p in "$@"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

# node_pid DIR: the pid of the BEAM (beam.smp) whose working directory is DIR
node_pid() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$1" ] || continue
		grep -qa beam "$p/cmdline" 2>/dev/null && { echo "${p#/proc/}"; return 0; }
	done
	return 1
}

# interrupt_at FIXTURE SIGNAL WAIT_FOR_TEXT RC PHASE: gate run on a copy of FIXTURE, SIGNAL
# once WAIT_FOR_TEXT shows; then the exit code, the message naming the signal and the
# phase, the JUnit report with its error testcase, and nothing left behind
interrupt_at() {
	local fx=$1 sig=$2 text=$3 rc=$4 phase=$5 d
	d=$(fixture "$fx")
	hard_gate_bg run -C "$d"
	wait_text_now "$text" "$OUT" "$ERR"
	kill -s "$sig" "$GPID"
	wait "$GPID"
	RC=$?
	expect_rc "$rc"
	expect_in "$ERR" "gate: error: interrupted by"
	expect_in "$ERR" "while $phase"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=interrupted by"
	# the report and the hook's compiled form (kept between runs), nothing half-written
	ls -a "$d/_build/gate" | grep -v -e '^\.\.*$' -e '^junit.xml$' -e '^ex_unit_hook-[0-9a-f]\{32\}\.beam$' >"$WORK/extra" &&
		fail "left in _build/gate: $(cat "$WORK/extra")"
	no_leftovers "$d"
}

# ---- faults: signals ----

case_sigint_while_booting() {
	interrupt_at clean INT "booting node" 130 "booting the node"
}

case_sigterm_while_tests_run() {
	interrupt_at blocking TERM "gate-fixture: blocking now" 143 "running the tests"
}

# The gc_heavy fixture's holders keep 3 M refc binaries: the GC and the probe's per-process
# pass over them take long enough (200-300 ms here, longer under load) to be interrupted in;
# interrupt_at signals as soon as the phase's line is written (wait_text_now).
case_sigint_while_collecting_garbage() {
	interrupt_at gc_heavy INT "collecting garbage for the before-snapshot" 130 \
		"collecting garbage for the before-snapshot"
}

case_sigterm_while_collecting_garbage() {
	interrupt_at gc_heavy TERM "collecting garbage for the before-snapshot" 143 \
		"collecting garbage for the before-snapshot"
}

# ---- faults: the node ----

case_node_killed_mid_suite() {
	local d beam
	d=$(fixture blocking)
	hard_gate_bg run -C "$d"
	wait_text "gate-fixture: blocking now" "$OUT"
	beam=$(node_pid "$d") || fail "no node process found"
	[ -n "$beam" ] && kill -9 "$beam"
	wait "$GPID"
	RC=$?
	expect_rc 2
	expect_in "$ERR" "gate: error: node nonode@nohost"
	expect_in "$ERR" "killed by signal 9"
	expect_in "$ERR" "while running the tests"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=killed by signal 9"
	no_leftovers "$d"
}

# An ExUnit.after_suite callback that raises: bare mix test dies with status 1 (the runner's
# task is linked to the CLI's process); gate failed to answer until the suite's timeout.
case_after_suite_raises() {
	local d
	d=$(fixture clean)
	printf 'ExUnit.start()\nExUnit.after_suite(fn _ -> raise "boom in after_suite" end)\n' \
		>"$d/test/test_helper.exs"
	run_gate run -C "$d"
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (mix test exit status 1)"
	junit_valid "$d/_build/gate/junit.xml"
	expect_in "$d/_build/gate/junit.xml" "exited: ** (RuntimeError) boom in after_suite"
	no_leftovers "$d"
}

# ---- faults: epmd (attach mode looks nodes up there) ----

case_attach_without_epmd() {
	local port cookie
	port=$(free_port)
	cookie="e2e-$RANDOM-$RANDOM-secret"
	printf '%s\n' "$cookie" >"$WORK/noepmd.cookie"
	ERL_EPMD_PORT=$port run_gate snapshot --attach "app@127.0.0.1" --cookie-file "$WORK/noepmd.cookie"
	expect_rc 2
	expect_in "$ERR" "epmd is not running on 127.0.0.1 (port $port), so node app@127.0.0.1 is not up there"
	expect_in "$ERR" "ERL_EPMD_PORT"
	expect_not_in "$ERR" "$cookie"
	expect_not_in "$OUT" "$cookie"
}

# A name epmd lists at a port nothing listens on (what a node leaves when its epmd
# connection is held by something else), and a name epmd does not know.
case_attach_stale_epmd_registration() {
	local port dead epid hpid i name="stale$RANDOM" cookie="e2e-$RANDOM-stale-secret"
	port=$(free_port)
	dead=$(free_port)
	printf '%s\n' "$cookie" >"$WORK/stale.cookie"
	(exec epmd -port "$port" -address 127.0.0.1) >/dev/null 2>&1 &
	epid=$!
	for i in $(seq 1 50); do
		ss -ltn 2>/dev/null | grep -q "127.0.0.1:$port " && break
		sleep 0.1
	done
	# ALIVE2_REQ: 'x', port, type 77 (normal node), protocol 0, versions 6 and 5, the name,
	# no extra; epmd keeps the entry while this connection stays open
	(
		exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
		n=${#name}
		len=$((13 + n))
		printf "\\x$(printf %02x $((len >> 8)))\\x$(printf %02x $((len & 255)))x\\x$(printf %02x $((dead >> 8)))\\x$(printf %02x $((dead & 255)))M\\x00\\x00\\x06\\x00\\x05\\x00\\x$(printf %02x "$n")%s\\x00\\x00" "$name" >&3
		exec sleep 60
	) &
	hpid=$!
	for i in $(seq 1 50); do
		ERL_EPMD_PORT=$port epmd -port "$port" -names 2>/dev/null | grep -q "name $name at port $dead" && break
		sleep 0.1
	done
	ERL_EPMD_PORT=$port epmd -port "$port" -names 2>/dev/null | grep -q "name $name at port $dead" ||
		fail "could not plant the registration of $name"
	ERL_EPMD_PORT=$port run_gate snapshot --attach "$name@127.0.0.1" --cookie-file "$WORK/stale.cookie"
	expect_rc 2
	expect_in "$ERR" "epmd on 127.0.0.1 (port $port) lists node $name@127.0.0.1 at port $dead, but nothing answers there"
	expect_in "$ERR" "stale registration"
	expect_not_in "$ERR" "$cookie"
	ERL_EPMD_PORT=$port run_gate snapshot --attach "nobody$RANDOM@127.0.0.1" --cookie-file "$WORK/stale.cookie"
	expect_rc 2
	expect_in "$ERR" "is registered with epmd on 127.0.0.1 (port $port)"
	stop_bg "$hpid" "$epid"
}

# ---- faults: the disk ----

# small_fs DIR: DIR becomes a 64 kB tmpfs, filled up to the last block
small_fs() {
	mkdir -p "$1"
	mount -t tmpfs -o size=64k,mode=0755 gate-e2e-full "$1" || { fail "cannot mount a tmpfs on $1"; return 1; }
	dd if=/dev/zero of="$1/filler" bs=4096 count=64 >/dev/null 2>&1
	return 0
}

# read_only DIR: DIR becomes read-only (a read-only bind mount as root, chmod otherwise)
read_only() {
	mkdir -p "$1"
	if [ "$IS_ROOT" = 1 ]; then
		mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || fail "cannot make $1 read-only"
	else
		chmod 0555 "$1"
	fi
}

undo_mount() {
	if [ "$IS_ROOT" = 1 ]; then
		umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
	fi
	chmod 0755 "$1" 2>/dev/null
}

# expect_only DIR NAMES...: DIR holds exactly NAMES (no temp file left beside them)
expect_only() {
	local dir=$1 have want
	shift
	have=$(ls -A "$dir" | sort | tr '\n' ' ')
	want=""
	[ $# -eq 0 ] || want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	[ "$have" = "$want" ] || fail "$dir holds [$have], expected [$want]"
}

case_disk_full_junit() {
	if [ "$IS_ROOT" != 1 ]; then
		echo "    note: not root: cannot mount a small tmpfs to fill; case not run"
		return
	fi
	local d; d=$(fixture failing)
	printf 'the previous report\n' >"$WORK/previous.xml"
	small_fs "$d/out" # filled after the previous report is in place
	rm -f "$d/out/filler"
	cp "$WORK/previous.xml" "$d/out/junit.xml"
	dd if=/dev/zero of="$d/out/filler" bs=4096 count=64 >/dev/null 2>&1
	run_gate run -C "$d" --junit "$d/out/junit.xml"
	expect_rc 2
	expect_in "$ERR" "gate: error: cannot write the JUnit report: $d/out/junit.xml"
	expect_in "$ERR" "No space left on device"
	cmp -s "$d/out/junit.xml" "$WORK/previous.xml" || fail "the previous report was changed"
	expect_only "$d/out" filler junit.xml
	undo_mount "$d/out"
	no_leftovers "$d"
}

case_disk_full_baseline() {
	if [ "$IS_ROOT" != 1 ]; then
		echo "    note: not root: cannot mount a small tmpfs to fill; case not run"
		return
	fi
	local d; d=$(git_fixture clean)
	small_fs "$d/.gate"
	run_gate run -C "$d" --update-baseline
	expect_rc 2
	expect_in "$ERR" "gate: error: $d/.gate/baseline.json"
	expect_in "$ERR" "No space left on device"
	expect_only "$d/.gate" filler
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=No space left on device"
	undo_mount "$d/.gate"
	fsck_clean "$d"
	no_leftovers "$d"
}

case_readonly_junit_dir() {
	local d; d=$(fixture failing)
	mkdir -p "$d/out"
	printf 'the previous report\n' >"$d/out/junit.xml"
	read_only "$d/out"
	run_gate run -C "$d" --junit "$d/out/junit.xml"
	expect_rc 2
	expect_in "$ERR" "gate: error: cannot write the JUnit report: $d/out/junit.xml"
	if [ "$IS_ROOT" = 1 ]; then expect_in "$ERR" "Read-only file system"; else expect_in "$ERR" "Permission denied"; fi
	[ "$(cat "$d/out/junit.xml")" = "the previous report" ] || fail "the previous report was changed"
	expect_only "$d/out" junit.xml
	undo_mount "$d/out"
	no_leftovers "$d"
}

case_readonly_baseline_dir() {
	local d; d=$(git_fixture clean)
	read_only "$d/.gate"
	run_gate run -C "$d" --update-baseline
	expect_rc 2
	expect_in "$ERR" "gate: error: $d/.gate/baseline.json"
	if [ "$IS_ROOT" = 1 ]; then expect_in "$ERR" "Read-only file system"; else expect_in "$ERR" "Permission denied"; fi
	expect_only "$d/.gate"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=$d/.gate/baseline.json"
	undo_mount "$d/.gate"
	fsck_clean "$d"
	no_leftovers "$d"
}

# ---- security ----

# The node's real cookie (the fixture's test writes it to spy/cookie) appears in no output
# of gate, no file it writes, no process's command line or environment; while the node runs,
# its every listening socket is on 127.0.0.1; and no epmd was started (no_leftovers).
case_cookie_never_leaks_loopback_only() {
	local d beam cookie p hits="" sock
	d=$(fixture cookie_spy)
	# only a node started with --distributed has a cookie and a listener
	hard_gate_bg run -C "$d" --distributed "e2e_spy_$RANDOM" --json "$d/_build/gate/run.json"
	wait_text "gate-fixture: cookie handed over" "$OUT"
	cookie=$(cat "$d/spy/cookie" 2>/dev/null)
	[ ${#cookie} -ge 16 ] || fail "no cookie from the node (got '$cookie')"
	for p in /proc/[0-9]*; do
		if grep -qaF -- "$cookie" "$p/cmdline" "$p/environ" 2>/dev/null; then
			hits="$hits ${p#/proc/}($(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-50))"
		fi
	done
	[ -z "$hits" ] || fail "the cookie is in the command line or environment of:$hits"
	beam=$(node_pid "$d") || fail "no node process found"
	# what the node starts inherits the run's marker, so that an epmd it started would show
	tr '\0' '\n' <"/proc/$beam/environ" 2>/dev/null | grep -qxF "GATE_E2E_RUN=$WORK" ||
		fail "the node lacks the GATE_E2E_RUN marker: the epmd checks could not see its epmd"
	ss -ltnpH 2>/dev/null | grep "pid=$beam," >"$WORK/sockets"
	[ -s "$WORK/sockets" ] || fail "the node listens on nothing (ss -p sees no socket of $beam)"
	while read -r sock; do
		echo "$sock" | awk '{print $4}' | grep -q '^127\.0\.0\.1:' || fail "the node listens beyond loopback: $sock"
	done <"$WORK/sockets"
	ss -lunpH 2>/dev/null | grep "pid=$beam," | awk '{print $4}' | grep -v '^127\.0\.0\.1:' >"$WORK/udp" &&
		fail "the node has UDP sockets beyond loopback: $(cat "$WORK/udp")"
	touch "$d/spy/go"
	wait "$GPID"
	RC=$?
	expect_rc 0
	local f
	for f in "$OUT" "$ERR" "$d"/_build/gate/*; do
		grep -qaF -- "$cookie" "$f" && fail "the cookie is in $f"
	done
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0
	no_leftovers "$d"
}

# Outputs inside the project do not follow a symlink out of it (base/outpath.h): refused with
# exit 2 before the suite runs, nothing written at the link's target; --allow-outside and an
# absolute path given on the command line are obeyed.
case_symlink_outside_refused() {
	local d outside
	d=$(git_fixture failing)
	outside=$(mktemp -d "$WORK/outside.XXXXXX")
	mkdir -p "$d/_build"
	ln -s "$outside" "$d/_build/gate"
	run_gate run -C "$d" -- --only slow
	expect_rc 2
	expect_in "$ERR" "gate: error: the JUnit report $d/_build/gate/junit.xml leads outside the project $d through a symlink (to $outside/junit.xml)"
	expect_in "$ERR" "--allow-outside"
	expect_not_in "$ERR" "booting node"
	[ -z "$(ls -A "$outside")" ] || fail "written outside: $(ls -A "$outside")"
	# the file itself a symlink out of the project
	rm "$d/_build/gate"
	mkdir -p "$d/_build/gate"
	ln -s "$outside/victim" "$d/_build/gate/junit.xml"
	run_gate run -C "$d" -- --only slow
	expect_rc 2
	expect_in "$ERR" "leads outside the project"
	[ ! -e "$outside/victim" ] || fail "written through the link"
	# the baseline under a .gate that leads out
	rm -rf "$d/_build/gate"
	ln -s "$outside" "$d/.gate"
	run_gate run -C "$d" --update-baseline -- --only slow
	expect_rc 2
	expect_in "$ERR" "the baseline $d/.gate/baseline.json leads outside the project"
	[ -z "$(ls -A "$outside")" ] || fail "written outside: $(ls -A "$outside")"
	# asked for: --allow-outside, or an absolute path spelled outside the project
	run_gate run -q -C "$d" --allow-outside --update-baseline -- --only slow
	expect_rc 0
	[ -s "$outside/baseline.json" ] || fail "--allow-outside: no baseline at $outside/baseline.json"
	[ -s "$d/_build/gate/junit.xml" ] || fail "--allow-outside: no JUnit"
	rm "$d/.gate"
	run_gate run -q -C "$d" --junit "$outside/asked.xml" -- --only slow
	expect_rc 0
	junit_check "$outside/asked.xml" --failures 0
	no_leftovers "$d"
}

# gate run needs no epmd: the node is started with -start_epmd false on a port of its own,
# so an epmd port where nothing answers changes nothing, and no epmd is started (no_leftovers
# sees any epmd that carries the run's marker)
case_run_needs_no_epmd() {
	local d; d=$(fixture failing)
	ERL_EPMD_PORT=$(free_port) run_gate run -C "$d" -- --only slow
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	no_leftovers "$d"
}

# gate opens libgit2 and libxml2 on first use (base/lazylib.h), not when it starts: one that
# cannot be loaded (removed, broken) is an error that names it and its package, exit 2, before
# the suite runs, with the previous report left as it was and no node left. Broken copies first on the library path
# stand for them here.
case_missing_shared_library() {
	local bad="$WORK/badlib" so
	so=$(pkg-config --modversion libgit2 | cut -d. -f1,2)
	mkdir -p "$bad"
	: >"$bad/libxml2.so.2"
	: >"$bad/libgit2.so.$so"
	# in a repository, the baseline is read with libgit2 before any node starts
	local d; d=$(git_fixture clean)
	LD_LIBRARY_PATH="$bad" run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "cannot load libgit2.so.$so: $bad/libgit2.so.$so"
	expect_in "$ERR" "install libgit2 (Debian: apt-get install libgit2-$so; Alpine: apk add libgit2)"
	no_leftovers "$d"
	# elsewhere the node starts, and the run stops before the suite: no report could hold it
	d=$(fixture clean)
	mkdir -p "$d/_build/gate"
	printf 'the previous report\n' >"$d/_build/gate/junit.xml"
	LD_LIBRARY_PATH="$bad" run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "gate: error: cannot load libxml2.so.2: $bad/libxml2.so.2"
	expect_in "$ERR" "install libxml2 (Debian: apt-get install libxml2; Alpine: apk add libxml2)"
	expect_in "$ERR" "cannot write the JUnit report: $d/_build/gate/junit.xml: cannot load libxml2.so.2"
	if grep -q "Finished in" "$OUT"; then fail "the suite ran though its report could not be written"; fi
	[ "$(cat "$d/_build/gate/junit.xml")" = "the previous report" ] || fail "the previous report was changed"
	[ -z "$(find "$d/_build/gate" -name '.junit.xml*')" ] || fail "a temp file of the report is left"
	no_leftovers "$d"
	# gate --version says which one it could not load
	LD_LIBRARY_PATH="$bad" run_gate --version
	expect_rc 0
	expect_in "$OUT" "libgit2 missing, libxml2 missing"
}
