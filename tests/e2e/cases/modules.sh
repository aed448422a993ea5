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
