# tests/e2e/cases/fairblame.sh, sourced by tests/e2e/run.sh: leak shapes that used to speak
# several times or blame an innocent test (tests/fixtures/fairblame, one shape per tag, run
# with --only SHAPE and GITHUB_ACTIONS=true) give exactly one failing memory testcase and one
# ::error annotation each, naming what grew; the culprit comes from the structure's own
# growth at the test modules' edges, and growth spread over many modules names none.

# fair_one SHAPE TEXT: the fixture run with --only SHAPE fails exactly one memory testcase
# and gives one error annotation, both naming TEXT; every test passes. Leaves $FB_DIR, $FB_MSG
# (the failure's message) and $FB_ANN (the annotation) for more checks.
fair_one() {
	local shape=$1 text=$2 j n a
	FB_DIR=$(fixture fairblame)
	GITHUB_ACTIONS=true GITHUB_WORKSPACE="$FB_DIR" run_gate run -C "$FB_DIR" -- --only "$shape"
	expect_rc 1
	j="$FB_DIR/_build/gate/junit.xml"
	junit_valid "$j"
	n=$(grep -c '<failure ' "$j")
	a=$(grep -c '^::error' "$OUT")
	[ "$n" = 1 ] || fail "$shape: $n failing testcases, want 1: $(grep -o '<failure message="[^"]*"' "$j" | cut -c1-200)"
	[ "$a" = 1 ] || fail "$shape: $a error annotations, want 1: $(grep '^::error' "$OUT" | cut -c1-200)"
	FB_MSG=$(grep -o '<failure message="[^"]*"' "$j" | head -n 1)
	FB_ANN=$(grep '^::error' "$OUT" | head -n 1)
	case "$FB_MSG" in
	*"$text"*) ;;
	*) fail "$shape: the failure does not name \"$text\": $FB_MSG" ;;
	esac
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
}

# fair_placed SHAPE LINE_OF: the annotation is on the test file at the line of the module
# named LINE_OF (defmodule line + 1 ... its first test: any line of that module's block)
fair_placed() {
	local shape=$1 module=$2 line start
	line=$(printf '%s\n' "$FB_ANN" | sed -n 's/^::error file=test\/fair_blame_test.exs,line=\([0-9]*\),.*/\1/p')
	[ -n "$line" ] || { fail "$shape: the annotation is not placed on the test file: $(printf '%s' "$FB_ANN" | cut -c1-160)"; return; }
	start=$(grep -n "defmodule FairBlame.$module do" "$FB_DIR/test/fair_blame_test.exs" | cut -d: -f1)
	[ -n "$start" ] && [ "$line" -gt "$start" ] && [ "$line" -lt $((start + 25)) ] ||
		fail "$shape: the annotation is at line $line, not in FairBlame.$module (line $start)"
}

# A planner creating its working tables under four names on every call: one finding, the
# owner's tables together, the test module that planned named.
case_fairblame_tables_of_one_owner() {
	fair_one planner "600 ETS tables \`vertices\`, \`neighbours\`, \`frontier\` and \`edges\` (owner FairBlame.Planner)"
	case "$FB_MSG" in *"likely culprit: FairBlame.PlannerTest"*) ;; *) fail "planner: no culprit: $FB_MSG" ;; esac
	fair_placed planner PlannerTest
	no_leftovers "$FB_DIR"
}

# An acceptor pool keeping 3 000 accepted sockets: the ports finding counts their drivers'
# memory (no second "system" failure) and names the test module that connected.
case_fairblame_sockets() {
	fair_one sockets "port tcp_inet x 3 001, owner FairBlame.Acceptor"
	case "$FB_MSG" in *"their drivers' memory (driver_alloc) +"*) ;; *) fail "sockets: the drivers' memory is not with the ports: $FB_MSG" ;; esac
	case "$FB_MSG" in *"likely culprit: FairBlame.SocketsTest (+3 0"*) ;; *) fail "sockets: the test is not named: $FB_MSG" ;; esac
	fair_placed sockets SocketsTest
	# the system row judges what the ports do not explain
	grep -q 'system grew.*3 001 ports tcp_inet +[0-9.]* MB (failing on its own)' "$FB_DIR/_build/gate/junit.xml" ||
		fail "sockets: the system row does not set the ports' memory aside"
	no_leftovers "$FB_DIR"
}

# One long-lived connection keeping every response (headers in its state, bodies as refc
# binaries), born during the run beside five small helpers: one finding, the process's,
# which leads with the process and not with "6 processes born during the run".
case_fairblame_one_process() {
	fair_one conn "(FairBlame.Conn:init/1, under FairBlame.Conns) memory +"
	case "$FB_MSG" in '<failure message="process &lt;0.'*) ;; *) fail "conn: the headline is not the connection: $FB_MSG" ;; esac
	case "$FB_MSG" in *"processes born during the run still alive"*) fail "conn: the headline names the born group: $FB_MSG" ;; esac
	case "$FB_MSG" in *"likely culprit: FairBlame.ConnTest"*) ;; *) fail "conn: the test is not named: $FB_MSG" ;; esac
	fair_placed conn ConnTest
	no_leftovers "$FB_DIR"
}

# A property-based test module making 11 600 atoms of two shapes: both shapes in the
# headline, the module named from the atoms counted at its edges.
case_fairblame_atoms() {
	fair_one atoms "prop_field_# x 8 000 (e.g. prop_field_1), gen_key_# x 3 600 (e.g. gen_key_1)"
	case "$FB_MSG" in *"likely culprit: FairBlame.PropTest"*) ;; *) fail "atoms: the module is not named: $FB_MSG" ;; esac
	fair_placed atoms PropTest
	no_leftovers "$FB_DIR"
}

# A journal filled by request handling in twelve test modules, and an innocent module whose
# edges show binary garbage (a quiet renderer): spread, no culprit, and the annotation is
# placed on no test.
case_fairblame_spread() {
	fair_one spread "process FairBlame.Journal ("
	case "$FB_MSG" in *"spread over 12 test modules, no single one"*) ;; *) fail "spread: not said to be spread: $FB_MSG" ;; esac
	case "$FB_MSG" in *"likely culprit"* | *ErrorView*) fail "spread: a module is blamed: $FB_MSG" ;; esac
	case "$FB_ANN" in "::error file="*) fail "spread: the annotation is placed on a test: $(printf '%s' "$FB_ANN" | cut -c1-160)" ;; esac
	no_leftovers "$FB_DIR"
}

# The fixture's clean module alone: nothing fails (the structures read at the edges add no
# finding of their own).
case_fairblame_clean_passes() {
	local d
	d=$(fixture fairblame)
	run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	no_leftovers "$d"
}
