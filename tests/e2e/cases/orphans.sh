# tests/e2e/cases/orphans.sh: "no orphans, ever": every OS process the suite or
# the --exec workload starts is gone when gate exits, after a normal end, SIGINT, SIGTERM and
# SIGKILL of gate, including the ones in sessions of their own (:os.cmd with "&", setsid,
# nohup, a Port.open program: the runtime's port helper gives each its own session, so
# killing the node's process group misses them). Processes are counted by a per-case marker
# in their environment, which everything gate starts inherits. Sourced by tests/e2e/run.sh
# (helpers there and in hardening.sh: fixture, run_gate, hard_gate_bg, wait_text, ...).

# marked_pids MARK: the pids of live processes whose environment has MARK
marked_pids() {
	local p
	for p in /proc/[0-9]*; do
		{ tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "GATE_ORPHAN_MARK=$1" || continue
		grep -q '^State:[[:space:]]*Z' "$p/status" 2>/dev/null && continue
		echo "${p#/proc/}"
	done
}

# marked MARK: the same with their command lines, for messages
marked() {
	local p
	for p in $(marked_pids "$1"); do
		printf '%s(%s) ' "$p" "$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | cut -c1-40)"
	done
}

# marked_sleeps MARK: how many `sleep` processes carry MARK
marked_sleeps() {
	marked "$1" | grep -o 'sleep 30[0-9]' | wc -l
}

# wait_sleeps MARK N: waits (polling, at most 5 min) until N marked sleeps run
wait_sleeps() {
	local i
	for i in $(seq 1 3000); do
		[ "$(marked_sleeps "$1")" -ge "$2" ] && return 0
		kill -0 "$GPID" 2>/dev/null || break
		sleep 0.1
	done
	fail "never saw $2 sleeps of the run: $(marked "$1")"
	return 1
}

# no_marked MARK WHEN: nothing carrying MARK is alive now; whatever is, is reported and then
# killed, so that a failing case leaves nothing running either
no_marked() {
	local left p
	left=$(marked "$1")
	[ -z "$left" ] && return 0
	fail "$2: processes left behind: $left"
	for p in $(marked_pids "$1"); do kill -9 "$p" 2>/dev/null; done
}

# wait_no_marked MARK WHEN: after SIGKILL of gate its reaper (a fork of gate, so its command
# line is gate's) cleans up by itself and exits last: wait until no marked gate process is
# left (polling, at most 5 min), then nothing carrying MARK may be alive
wait_no_marked() {
	local i
	for i in $(seq 1 3000); do
		marked "$1" | grep -qF "$GATE" || break
		sleep 0.1
	done
	no_marked "$1" "$2"
}

orphan_mark() { echo "orph_$$_$RANDOM$RANDOM"; }

# A suite that starts four detached sleeps and ends normally: none is left once gate exits.
case_orphans_normal_end() {
	local d m; d=$(fixture orphans); m=$(orphan_mark)
	GATE_ORPHAN_MARK=$m run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "gate-fixture: orphans started"
	no_marked "$m" "after a normal end"
	no_leftovers "$d"
}

# orphans_signal SIG RC: the suite blocks after starting its sleeps; gate gets SIG
orphans_signal() {
	local sig=$1 want=$2 d m; d=$(fixture orphans); m=$(orphan_mark)
	GATE_ORPHAN_MARK=$m ORPHANS_BLOCK=1 hard_gate_bg run -C "$d"
	wait_text "gate-fixture: orphans started" "$OUT" || { stop_bg "$GPID"; no_marked "$m" "after the case gave up"; return; }
	wait_sleeps "$m" 4 || { stop_bg "$GPID"; no_marked "$m" "after the case gave up"; return; }
	kill -s "$sig" "$GPID"
	wait "$GPID"
	RC=$?
	if [ "$sig" = KILL ]; then
		[ "$RC" = 137 ] || fail "gate exited $RC after SIGKILL"
		wait_no_marked "$m" "after SIGKILL of gate"
	else
		expect_rc "$want"
		no_marked "$m" "after SIG$sig"
	fi
	no_leftovers "$d"
}

case_orphans_sigint() { orphans_signal INT 130; }
case_orphans_sigterm() { orphans_signal TERM 143; }
case_orphans_sigkill() { orphans_signal KILL 137; }

# --exec (with --distributed, so that there is a cookie file): the workload's
# foreground child, its setsid'd and nohup'd children, and gate's cookie file are gone after SIGKILL of gate; and after a normal end of a workload that left
# background processes.
case_orphans_exec_sigkill() {
	local d m f; d=$(fixture orphans); m=$(orphan_mark); f="$WORK/cookie_path.$RANDOM"
	GATE_ORPHAN_MARK=$m hard_gate_bg run -C "$d" --distributed "e2e_$RANDOM" --exec "$FIX/workload/orphans.sh $f"
	wait_text "gate-fixture: workload started" "$OUT" || { stop_bg "$GPID"; no_marked "$m" "after the case gave up"; return; }
	wait_sleeps "$m" 3 || { stop_bg "$GPID"; no_marked "$m" "after the case gave up"; return; }
	local cookie; cookie=$(cat "$f")
	[ -f "$cookie" ] || fail "the workload's cookie file $cookie does not exist during the run"
	kill -KILL "$GPID"
	wait "$GPID"
	wait_no_marked "$m" "after SIGKILL of gate with --exec"
	[ ! -e "$cookie" ] || fail "the cookie file $cookie survived SIGKILL of gate"
	[ ! -e "$(dirname "$cookie")" ] || fail "the cookie's directory survived SIGKILL of gate"
	no_leftovers "$d"
}

case_orphans_exec_normal_end() {
	local d m f; d=$(fixture orphans); m=$(orphan_mark); f="$WORK/cookie_path.$RANDOM"
	GATE_ORPHAN_MARK=$m run_gate run -C "$d" --distributed "e2e_$RANDOM" --exec "sh -c 'setsid sleep 3080 </dev/null >/dev/null 2>&1 & nohup sleep 3090 >/dev/null 2>&1 & echo \$GATE_COOKIE_FILE >$f'"
	expect_rc 0
	no_marked "$m" "after a workload that left background processes"
	[ ! -e "$(cat "$f")" ] || fail "the cookie file survived the run"
	no_leftovers "$d"
}
