# tests/e2e/cases/inside.sh: inside the processes that grew, sourced by tests/e2e/run.sh. Each
# planted form of tests/fixtures/inside fails with gate's defaults, and its failing finding
# names the part that grew with its counts before and after, in the console, the first JUnit
# failure, the Markdown step summary and --json; a process that answers no system message is
# said not inspected, with why.

# inside_form TAG TEXT...: runs the fixture's planted test TAG; every report has every TEXT
inside_form() {
	local tag=$1 d args=() t
	shift
	d=$(fixture inside)
	for t in "$@"; do args+=(--first-failure-contains "$t"); done
	GITHUB_STEP_SUMMARY="$WORK/inside_summary.$tag.md" \
		run_gate run -C "$d" --json "$WORK/inside.$tag.json" -- --only "$tag"
	expect_rc 1
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" "${args[@]}"
	for t in "$@"; do
		# the console wraps lines: compared with its whitespace joined
		tr -s ' \n' '  ' <"$OUT" | grep -qF -- "$t" || fail "console lacks: $t"
		# Markdown escapes its punctuation and HTML's
		sed -e 's/\\\(.\)/\1/g' -e 's/&gt;/>/g' -e 's/&lt;/</g' -e 's/&quot;/"/g' \
			-e 's/&amp;/\&/g' "$WORK/inside_summary.$tag.md" | grep -qF -- "$t" ||
			fail "step summary lacks: $t"
		grep -qF -- "$(printf '%s' "$t" | sed 's/"/\\"/g')" "$WORK/inside.$tag.json" ||
			fail "--json lacks: $t"
	done
	INSIDE_DIR=$d
	no_leftovers "$d"
}

# A GenServer started at boot whose struct keeps a MapSet it never prunes: read at the
# before-snapshot (12 members) and after
case_inside_map() {
	inside_form map "process Inside.Sessions (" \
		"its state's field :keys (a MapSet) grew 12 -> 60 012 members"
}

# An Agent a test starts (born during the run): from nothing, and who started it
case_inside_agent() {
	inside_form agent "its state (a list) grew 0 -> 100 000 elements" \
		'started by "test starts an agent that keeps every item" (test/inside_test.exs:17, in Inside.AgentTest)'
}

# A gen_statem whose data keeps a :queue
case_inside_queue() {
	inside_form queue "process Inside.Jobs (" "its data's key :pending (a :queue) grew 0 -> 80 000 items"
}

# An Erlang gen_server's #state{} record: the field by its name, from the module's debug info
case_inside_record() {
	inside_form record "process inside_rec (" \
		"its state's field items of #state{} (a list) grew 0 -> 100 000 elements"
}

# Keys put in a server's process dictionary, by shape
case_inside_pdict() {
	inside_form pdict "process Inside.Tokens (" \
		"process dictionary +60 000 keys {:session, _} (0 -> 60 000)"
}

# A plain process (no OTP loop: never asked) whose mailbox fills with :DOWN messages
case_inside_mailbox() {
	inside_form mailbox "process Inside.Watcher (" \
		"not inspected: not an OTP server (waits in Inside.Watcher:loop/0" \
		"mailbox 0 -> 30 000 messages: 30 000 {:DOWN, ...}"
}

# 8 000 spawned funs: their group named by the test function that spawned them, once (the process
# rule's own words; the drill-down does not say the group again ahead of them)
case_inside_spawn() {
	inside_form spawn \
		'8 000 processes born during the run are still alive, using ' \
		'largest groups: spawned by Inside.SpawnTest.test spawns sleepers in a loop/1 (test/inside_test.exs), waiting in Process:sleep/1 x 8 000 (' \
		'; started by "test spawns sleepers in a loop" (test/inside_test.exs:60, in Inside.SpawnTest))'
	grep -qF 'processes born during the run still alive' "$OUT" &&
		fail "the born group is said twice: $(grep -F 'still alive' "$OUT" | head -n 2)"
	return 0
}

# A server busy in a callback is not asked, and delays nothing: the after-snapshot's state
# reads stay within their budget
case_inside_busy() {
	inside_form busy "not inspected: busy in a gen_server callback, now in Process:sleep/1"
	local ms
	ms=$(sed -n 's/.*after-snapshot: .* (GC [0-9]* ms, \([0-9]*\) ms in all).*/\1/p' "$OUT" "$ERR")
	[ -n "$ms" ] || fail "no after-snapshot time in the progress lines"
	[ "$ms" -lt 2000 ] || fail "the after-snapshot took $ms ms"
}

# A gen_event manager's handlers, counted by module (read at the before-snapshot: none)
case_inside_handlers() {
	inside_form handlers "process Inside.Events (" "20 000 handlers Inside.Handler (0 before)"
}

# The unplanted part passes: reading states adds no finding
case_inside_clean_passes() {
	local d
	d=$(fixture inside)
	run_gate run -C "$d"
	expect_rc 0
	no_leftovers "$d"
}

# A server started at boot whose memory grows though its state does not (a large
# min_heap_size): read before and after, the growth is said to be heap, not state
case_inside_heap() {
	inside_form heap "process Inside.Cache (" "its state did not grow (" "is heap, not state"
}

# A process of its own under proc_lib, hibernating as a server would but answering no system
# message: asked, it delays the after-snapshot by the ask's timeout alone and is said not
# inspected, with why
case_inside_silent() {
	inside_form silent "not inspected: did not answer a system message within 100 ms"
	local ms
	ms=$(sed -n 's/.*after-snapshot: .* (GC [0-9]* ms, \([0-9]*\) ms in all).*/\1/p' "$OUT" "$ERR")
	[ -n "$ms" ] || fail "no after-snapshot time in the progress lines"
	[ "$ms" -lt 2000 ] || fail "the after-snapshot took $ms ms"
}

# A server suspended where it waits is not asked (it would not answer): said not inspected
case_inside_suspended() {
	inside_form suspended "not inspected: suspended (erlang:suspend_process/1) in "
	local ms
	ms=$(sed -n 's/.*after-snapshot: .* (GC [0-9]* ms, \([0-9]*\) ms in all).*/\1/p' "$OUT" "$ERR")
	[ "${ms:-0}" -lt 2000 ] || fail "the after-snapshot took $ms ms"
}
