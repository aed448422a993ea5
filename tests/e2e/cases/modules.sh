# tests/e2e/cases/modules.sh: code judged by where each module came from, sourced by
# tests/e2e/run.sh. A template library that compiles a module per render at run time
# (Module.create) and never purges them fails as exactly one finding that names the modules by
# shape and the test module that created them; its literals' binaries are that finding's too
# (the binary row passes as context). The same library creating each template's module once
# and reusing it, or purging each module once rendered, passes; so does the suite's own code.

case_modules_created_leak_one_finding() {
	local d; d=$(fixture code_leak)
	run_gate run -C "$d"
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "CodeLeak.Tpl.* x 600 created during the run and still loaded"
	expect_in "$OUT" "likely culprit: CodeLeak.RenderTest"
	expect_in "$OUT" "of refc binaries no process or table holds"
	expect_in "$OUT" "the suite's own modules"
	expect_not_in "$OUT" "binary grew"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --failures 1
	no_leftovers "$d"
}

case_modules_reused_or_purged_pass() {
	local d; d=$(fixture code_leak)
	CODE_LEAK_MODE=reuse run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "modules          pass"
	CODE_LEAK_MODE=purge run_gate run -C "$d"
	expect_rc 0
	no_leftovers "$d"
}

# A suite whose tests define modules with large binary literals inside their bodies (schemas
# compiled when the test runs), a test file whose schemas a library gives compiled forms as
# the file compiles (Module.create, their source the library's), and a library module with a
# large literal loaded on first use: binary grows +6 MB that no process, table or term holds.
# Those are the literals of the suite's own modules, read from their object code and set
# aside by the binary row: the run passes, no module counts as created during the run, and
# no test module is named for them.
case_modules_literals_set_aside() {
	local d; d=$(fixture literals)
	run_gate run -C "$d" --json "$d/run.json"
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	expect_not_in "$OUT" "likely culprit"
	# the binary row names what it set aside, with its counts (the ranks of the judged table
	# and the reason are in --json)
	expect_in "$d/run.json" "less the literals of loaded modules +6."
	expect_in "$d/run.json" "modules of this suite and"
	python3 - "$d/run.json" <<'PY' 2>"$d/py.err" || fail "modules_new: $(cat "$d/py.err")"
import json, sys
m = json.load(open(sys.argv[1]))["after"]["what_grew"]["modules_new"]
assert m["test"]["count"] >= 100, m
assert m["created"]["count"] == 0, m
assert m["test"]["literal_bytes"] > 6_000_000, m
assert m["literals_unread"] == 0, m
PY
	no_leftovers "$d"
}

# The same suite with a cache process that keeps 4 MB of binaries its test gave it: one
# failing finding, the process named, its test module the culprit; the literals are set aside
# in that finding's figures and the module that defined the schemas is not named.
case_modules_literals_beside_a_leak() {
	local d; d=$(fixture literals)
	LITERALS_LEAK=1 run_gate run -C "$d"
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "process literals_page_cache"
	expect_in "$OUT" "1. Literals.HolderTest"
	expect_not_in "$OUT" "likely culprit: Literals.SchemaTest"
	# the lists that name what grew the process: its own test module, never the schemas'
	sed -n '/^Failed memory rule/,/^Top growing/p' "$OUT" >"$OUT.failed"
	expect_not_in "$OUT.failed" "Literals.SchemaTest"
	junit_check "$d/_build/gate/junit.xml" --failures 1
	no_leftovers "$d"
}

# its counts are those of a suite compiled in its node (the library module compiled, not
# loaded from disk): the fixture as in the repository
e2e_fresh modules_literals_set_aside
