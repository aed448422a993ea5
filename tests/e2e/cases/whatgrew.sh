# tests/e2e/cases/whatgrew.sh: what grew, named first, sourced by tests/e2e/run.sh.
# Every planted kind fails with gate's defaults, and the FIRST JUnit failure (what a CI reader
# sees first, whichever rule it is) names the structure: the table, the process, the port
# owner, the persistent_term keys, the atoms.

# whatgrew_first FIXTURE TAG TEXT...: runs the fixture's planted test TAG with the defaults
# (or with $WG_TOML as gate.toml); the first failure's message contains every TEXT
whatgrew_first() {
	local fx=$1 tag=$2 d args=()
	shift 2
	d=$(fixture "$fx")
	[ -z "${WG_TOML:-}" ] || printf '%b' "$WG_TOML" >"$d/gate.toml"
	for t in "$@"; do args+=(--first-failure-contains "$t"); done
	if [ -n "$tag" ]; then run_gate run -C "$d" -- --only "$tag"; else run_gate run -C "$d"; fi
	expect_rc 1
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" "${args[@]}"
	WG_DIR=$d
	no_leftovers "$d"
}

# An ETS table created at application start, filled by a test
case_whatgrew_boot_table() {
	whatgrew_first whatgrew table "ETS table corpus_cache (owner WhatGrew.Corpus) +60 000 rows"
	expect_in "$OUT" "ETS table corpus_cache (owner WhatGrew.Corpus) +60 000 rows"
}

# An Agent started at boot whose state grows
case_whatgrew_boot_agent() {
	whatgrew_first whatgrew agent "process WhatGrew.Store (" "under WhatGrew.Supervisor"
}

# 300 ports (OS programs) opened by a process a test spawned, never closed: the owner and,
# by spawn ancestry, the test module; their OS processes end with the node
case_whatgrew_ports() {
	whatgrew_first whatgrew ports "port cat x 300, owner <0." "from test module WhatGrew.PortsTest" \
		"300 ports opened during the run are still open, limit 50"
	# a count of ports is no memory: no test's bytes are cited as evidence for it, and the
	# owners' test module is where a reviewer looks
	expect_not_in "$OUT" "B judged"
	expect_not_in "$OUT" "no test stands out"
	expect_in "$WG_DIR/_build/gate/junit.xml" \
		'classname="gate.memory.ports" name="open" time="0" file="test/what_grew_test.exs" line="31"'
}

# 4 000 persistent_term entries never erased
case_whatgrew_pterm() {
	whatgrew_first whatgrew pterm "persistent_term {WhatGrew.Settings, _} x 4 000 (e.g. {WhatGrew.Settings, " \
		"persistent_term grew +4 000 entries"
}

# The clean part passes: one supervised connection (a port) left open is no leak
case_whatgrew_clean_part_passes() {
	local d; d=$(fixture whatgrew)
	run_gate run -C "$d"
	expect_rc 0
	junit_check "$d/_build/gate/junit.xml" --failures 0 --errors 0 --testcase "gate.memory.ports=open"
	expect_in "$OUT" "ports            pass"
	no_leftovers "$d"
}

# The kinds planted in the older fixtures (leak_binary, plant) name their structure first too
case_whatgrew_binary_holder_first() { whatgrew_first leak_binary "" "LeakBinary.Holder (<0."; }
case_whatgrew_procs_first() { whatgrew_first plant procs "Plant.Worker:init/1 x 500"; }
case_whatgrew_mailbox_first() { whatgrew_first plant mailbox "Plant.Sink (<0." "20 000 messages"; }
case_whatgrew_atoms_first() { whatgrew_first plant atoms "atoms +" "plant_user_# x "; }
case_whatgrew_table_cap_first() {
	WG_TOML='[[ets.table]]\nname = "corpus_*"\nmax_bytes = "2 MB"\n' \
		whatgrew_first leak_ets "" "corpus_cache (owner LeakEts.Corpus)"
}
# an ETS table created by a process a test spawned and left alive
case_whatgrew_tables_left_alive_first() {
	# the left-alive rule names the table itself (the ets row then passes as context)
	whatgrew_first whatgrew left_table "ETS table session_index (owner <0." \
		"left alive with 4.2 MB in 40 000 rows"
}
