# tests/e2e/cases/settle.sh: on small fixtures (no PostgreSQL needed): the settled
# before-snapshot, structures judged on their own past, and structures that grow in every run
# of --repeat. Sourced by tests/e2e/run.sh. Real applications: tests/bench/realworld.sh and
# case_app_planted_leaks below (skipped, saying why, without one or without PostgreSQL).

# settle_js FILE EXPR: EXPR over the run's JSON (d) must hold
settle_js() {
	node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		if (!(eval(process.argv[2]))) { console.log("false: " + process.argv[2]); process.exit(1); }' \
		"$1" "$2" >"$WORK/js.out" 2>&1 || fail "$(basename "$1"): $(tail -n 2 "$WORK/js.out")"
}

# An 8 MB input buffer a socket holds until its first read, 700 ms after start (a database
# pool's connections, made small): the before-snapshot sets it aside (the socket's `buffer`
# option, exact) instead of waiting for the read, says so, and judges binary without it; so
# binary's growth is the server the suite fills with 3 MB: the binary row fails and names it
# first; the structure rule adds nothing (one leak, one finding).
case_settle_sets_aside_port_buffers() {
	local d; d=$(fixture settle)
	run_gate run -C "$d" --json "$d/run.json"
	expect_rc 1
	expect_in "$ERR" "is 1 socket's input buffer (released at its next read), judged"
	expect_not_in "$ERR" "before-snapshot settled"
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "process Settle.Keeper"
	# the fixture's buffer option is 8 000 000: its block is that plus a header of a few words
	settle_js "$d/run.json" 'd.before.set_aside.sockets === 1 && d.before.set_aside.exact &&
		d.before.set_aside.bytes >= 8e6 && d.before.set_aside.bytes < 8e6 + 256 &&
		d.before.set_aside.binary_measured - d.before.set_aside.bytes === d.before.memory.binary'
	settle_js "$d/run.json" 'd.before.memory.binary < 2e6 && d.after.memory.binary > 3e6'
	settle_js "$d/run.json" 'd.findings.filter(f => f.verdict === "FAIL").length === 1'
	junit_check "$d/_build/gate/junit.xml" --failures 1 \
		--first-failure-contains "Settle.Keeper"
	no_leftovers "$d"
}

# A socket the suite opens and leaves holding a 2 MB buffer (a read pending) was not open at
# the before-snapshot: the after-snapshot does not set it aside (it waits for it, up to
# settle_timeout, as for anything no old socket explains), and binary's growth names the test.
case_settle_new_socket_buffer_is_growth() {
	local d; d=$(fixture settle)
	run_gate run -C "$d" --json "$d/run.json" -- --include socket --exclude leak
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "Settle.SocketsTest"
	expect_in "$ERR" "after-snapshot: port drivers still keep at least"
	settle_js "$d/run.json" 'd.before.set_aside.sockets === 1 && d.after.memory.binary > 2e6'
	settle_js "$d/run.json" 'd.findings.filter(f => f.verdict === "FAIL").length === 1'
	no_leftovers "$d"
}

# Settling off: the buffer is in binary before; binary's row may then pass (the buffer's
# release outweighs the server's growth) or fail, depending on when the read comes; either
# way the server that grew from nothing to 3 MB is named, in one finding (the row's, or the
# structure rule's, judged on its own past).
case_settle_off_structure_still_named() {
	local d; d=$(fixture settle)
	printf '[node]\nsettle_timeout = "off"\n' >"$d/gate.toml"
	run_gate run -C "$d" --json "$d/run.json"
	expect_rc 1
	expect_not_in "$ERR" "settled"
	expect_in "$OUT" "process Settle.Keeper"
	junit_check "$d/_build/gate/junit.xml" --failures 1 \
		--first-failure-contains "Settle.Keeper"
	settle_js "$d/run.json" 'd.findings.filter(f => f.verdict === "FAIL").length === 1'
	# without the leak: a clean pass either way (no false alarm from the release)
	run_gate run -C "$d" -- --exclude leak
	expect_rc 0
	rm "$d/gate.toml"
	run_gate run -C "$d" -- --exclude leak
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	printf '[node]\nsettle_timeout = "soon"\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "gate.toml:2"
	expect_in "$ERR" "settle_timeout"
	printf '[structure]\nprocess_floor = "big"\n' >"$d/gate.toml"
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "structure.process_floor"
	no_leftovers "$d"
}

# A session table (+40 rows) and a page cache (+40 kB) per run: each under every floor in one
# run (passes), a leak with --repeat 3, named, one finding each; the configuration cache
# that fills the same keys every run (a warm-up) is not.
case_repeat_consistent_structures_fail() {
	local d; d=$(fixture consistent)
	run_gate run -C "$d"
	expect_rc 0
	run_gate run -C "$d" --repeat 3
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (2 memory rules)"
	expect_in "$OUT" "ETS table sessions (owner Consistent.Sessions) +40 rows in each of 3"
	expect_in "$OUT" "process Consistent.Pages (Consistent.Pages:init/1): its refc"
	expect_not_in "$OUT" "process Consistent.Config (Consistent.Config"
	junit_check "$d/_build/gate/junit.xml" --failures 2
	# the warm-up fixture's cache is full after run 1: still a pass with per-run structures
	local w; w=$(fixture warmup)
	run_gate run -C "$w" --repeat 3
	expect_rc 0
	expect_in "$OUT" "structure        pass"
	no_leftovers "$d"
	no_leftovers "$w"
}

# One leak, one voice in --repeat: a watcher that monitors a target 300 more times every run
# grows, and so does the target (the same monitors, both sides): one finding, the watcher's,
# saying the monitors and the other end; 30 tasks a run left alive under a Task.Supervisor:
# one finding, the born processes' (the supervisor's memory grew in steps here, not every
# run: that it defers to them is test_structure.c's; it gave a second finding on the Phoenix
# app).
case_repeat_one_voice_monitors_and_tasks() {
	local d; d=$(fixture consistent)
	run_gate run -C "$d" --repeat 3 -- --only monitors
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "process Consistent.Watcher (Consistent.Watcher:init/1): its memory"
	# the console wraps the message; the JUnit has it whole
	expect_in "$d/_build/gate/junit.xml" "holds 900 monitors (the other end: Consistent.Target, monitored 900"
	expect_not_in "$OUT" "process Consistent.Target (Consistent.Target:init/1): its"
	junit_check "$d/_build/gate/junit.xml" --failures 1
	run_gate run -C "$d" --repeat 3 -- --only jobs
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "+30 processes in each of"
	expect_not_in "$OUT" "process Consistent.Jobs (supervisor"
	junit_check "$d/_build/gate/junit.xml" --failures 1
	no_leftovers "$d"
}

# Every Phoenix application of $GATE_REALWORLD_APPS (tests/realworld/lib.sh), unchanged, and
# with leak shapes of tests/realworld/plant/gate_plant.erl filled by the application's own
# requests as its own tests make them (GATE_PLANT, loaded by ERL_AFLAGS; not a line of the
# application changes): a GenServer keeping every response body fails a default run, named;
# an ETS session cache and a page cache GenServer fail with --repeat 3, named, one finding
# each; the unchanged application passes both ways; a holder monitoring a target and tasks
# left under a Task.Supervisor at kB per suite are one finding each with --repeat 3. An
# application that uses postgrex gets a private PostgreSQL. Skipped, saying so, without one.
case_app_planted_leaks() {
	. "$ROOT/tests/realworld/lib.sh"
	local apps="" p
	for p in $(rw_projects "$rw_apps"); do
		rw_is_phoenix "$rw_apps/$p" && apps="$apps $p"
	done
	if [ -z "$apps" ]; then
		echo "    skipped: no Phoenix application in $rw_apps (GATE_REALWORLD_APPS; CONTRIBUTING.md: Real projects)"
		return
	fi
	for p in $apps; do
		if rw_needs_postgres "$rw_apps/$p" && ! pg_bin >/dev/null; then
			echo "    skipped $p: no PostgreSQL server (apt-get install postgresql; integrations/deps.sh does)"
			continue
		fi
		app_planted_leaks_in "$rw_apps/$p"
	done
}

# app_planted_leaks_in DIR: case_app_planted_leaks on one application
app_planted_leaks_in() {
	local top flags
	top=$(mktemp -d "$WORK/app.XXXXXX")
	rw_copy_app "$1" "$top/app" || { fail "cannot copy $1"; return; }
	rm -rf "$top/app/.gate" "$top/app/_build/gate"
	mkdir "$top/plant"
	flags=$(plant_flags "$ROOT" "$top/plant") || { fail "gate_plant.erl does not compile"; return; }
	if rw_needs_postgres "$top/app"; then
		if ! pg_start "$top/pg.env" 2>"$top/pg.err"; then
			fail "PostgreSQL did not start: $(tail -n 3 "$top/pg.err")"
			pg_stop "$top/pg.env" # what it made before failing: its data dir, its namespace
			return
		fi
		pg_env "$top/pg.env"
	fi
	# the database's network namespace, when it has one: gate (and its node) run there
	local wrap="${GATE_WRAP:-}"
	local GATE_WRAP
	GATE_WRAP="$(pg_wrap "$top/pg.env" 2>/dev/null) $wrap"
	(cd "$top/app" && MIX_ENV=test mix compile >"$top/compile.log" 2>&1) ||
		fail "$1 does not compile: $(tail -n 3 "$top/compile.log")"
	run_gate run -C "$top/app"
	expect_rc 0
	run_gate run -C "$top/app" --repeat 3
	expect_rc 0
	GATE_PLANT=bodies ERL_AFLAGS="$flags" run_gate run -C "$top/app"
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "process GatePlant.BodyKeeper"
	GATE_PLANT=sessions ERL_AFLAGS="$flags" run_gate run -C "$top/app"
	expect_rc 0
	GATE_PLANT=sessions ERL_AFLAGS="$flags" run_gate run -C "$top/app" --repeat 3
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "ETS table sessions"
	GATE_PLANT=pages ERL_AFLAGS="$flags" run_gate run -C "$top/app" --repeat 3
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "process GatePlant.PageCache"
	# a holder monitoring a target more times each suite, and tasks left under a
	# Task.Supervisor each suite: one finding each
	GATE_PLANT=monitors GATE_PLANT_SMALL=1 ERL_AFLAGS="$flags" run_gate run -C "$top/app" --repeat 3
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$top/app/_build/gate/junit.xml" "monitors (the other end: GatePlant.Target"
	GATE_PLANT=tasks GATE_PLANT_SMALL=1 ERL_AFLAGS="$flags" run_gate run -C "$top/app" --repeat 3
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_not_in "$OUT" "process GatePlant.TaskSup ("
	pg_stop "$top/pg.env"
	unset PGHOST PGPORT
}

# real applications ($GATE_REALWORLD_APPS): the long tier (make test-long)
e2e_long app_planted_leaks
