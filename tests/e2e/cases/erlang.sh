# tests/e2e/cases/erlang.sh, sourced by tests/e2e/run.sh: gate run in a rebar3 project
# (tests/fixtures/erl_app: an app with EUnit tests in src/ and test/, and a Common Test suite
# with a group). rebar3 compiles it, its EUnit tests then its suite run in the node, and each
# planted problem (ERL_APP_PLANT, read by the fixture's tests) fails as one finding naming the
# structure and the EUnit module or suite that grew it, or as the failing test.

# erl_gate ARGS...: gate run ARGS, with the erl and rebar3 of GATE_E2E_ERL and GATE_E2E_REBAR3
# when set (make compat: the chroot's OTP 27 and its rebar3)
erl_gate() {
	GATE_REBAR3=${GATE_E2E_REBAR3:-${GATE_REBAR3:-}} run_gate run ${GATE_E2E_ERL:+--erl "$GATE_E2E_ERL"} "$@"
}

# erl_run PLANT ARGS...: gate run on a fresh copy of the fixture with ERL_APP_PLANT=PLANT
# ("" for none); the copy's path in $D
erl_run() {
	local plant=$1
	shift
	D=$(fixture erl_app)
	ERL_APP_PLANT=$plant erl_gate -C "$D" "$@"
}

# erl_one_failure FILE TEXT: exactly one failing testcase in the JUnit file, naming TEXT
erl_one_failure() {
	local n
	n=$(grep -c '<failure ' "$1")
	[ "$n" = 1 ] || fail "$n failing testcases, want 1: $(grep -o '<failure message="[^"]*"' "$1" | cut -c1-200)"
	grep -o '<failure message="[^"]*"' "$1" | grep -qF -- "$2" || fail "the failure does not name \"$2\": $(grep -o '<failure message="[^"]*"' "$1" | cut -c1-200)"
}

case_erlang_clean_passes() {
	erl_run ""
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	expect_in "$OUT" "8 tests: 8 passed, 0 failed"
	expect_in "$ERR" "compiling $D with rebar3 as test compile"
	expect_in "$ERR" "2 modules with EUnit tests, 1 Common Test suites"
	expect_in "$OUT" "All 4 tests passed." # EUnit's own output streams through
	expect_in "$OUT" "TEST COMPLETE, 3 ok, 0 failed of 3 test cases" # and Common Test's
	local j="$D/_build/gate/junit.xml"
	junit_valid "$j"
	junit_check "$j" --failures 0 --errors 0 \
		--testcase "erl_app_store_tests=answer_test/0" \
		--testcase "erl_app_store_tests=sessions/0: sessions open and close" \
		--testcase "erl_app_worker=work_doubles_test/0" \
		--testcase "erl_app_SUITE=worker_roundtrip" \
		--testcase "erl_app_SUITE=pool.doubling"
	no_leftovers "$D"
}

case_erlang_leak_ets_fails() {
	erl_run ets
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "ETS table erl_app_sessions (owner erl_app_store)"
	local j="$D/_build/gate/junit.xml"
	junit_valid "$j"
	erl_one_failure "$j" "ETS table erl_app_sessions (owner erl_app_store)"
	erl_one_failure "$j" "likely culprit: erl_app_store_tests"
	no_leftovers "$D"
}

case_erlang_leak_state_fails() {
	erl_run state
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	expect_in "$OUT" "process erl_app_store ("
	local j="$D/_build/gate/junit.xml"
	erl_one_failure "$j" "process erl_app_store"
	erl_one_failure "$j" "its state (a list) grew 0 -&gt; 3 000 elements"
	erl_one_failure "$j" "likely culprit: erl_app_store_tests"
	no_leftovers "$D"
}

case_erlang_leak_procs_fails() {
	erl_run procs
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	local j="$D/_build/gate/junit.xml"
	erl_one_failure "$j" "spawned with erl_app_worker:loop/0 (src/erl_app_worker.erl:17), waiting in that function x 2 000"
	erl_one_failure "$j" "likely culprit: erl_app_SUITE"
	no_leftovers "$D"
}

# Each failing finding ends with the command that reproduces it, its EUnit module or Common
# Test suite selected as rebar3 does (--module, --suite); --confirm runs that selection alone
# in a fresh node, --repeat 3. A table that its tests fill with the same keys in every run
# grows once: said as such, not as a growth that needs what ran before. Processes left by
# each run of a suite grow in each: confirmed.
case_erlang_reproduce_and_confirm() {
	local j
	erl_run ets --confirm
	expect_rc 1
	j="$D/_build/gate/junit.xml"
	junit_valid "$j"
	erl_one_failure "$j" "confirmed alone, once: erl_app_store_tests grows ETS table erl_app_sessions in its first run only (ets +"
	erl_one_failure "$j" "reproduce: gate run -C $D -- --module erl_app_store_tests"
	expect_in "$ERR" "confirming: erl_app_store_tests alone in a fresh node, --repeat 3"
	expect_not_in "$OUT" "not reproduced alone"
	no_leftovers "$D"
	erl_run procs --confirm -- --suite erl_app_SUITE --group pool
	expect_rc 1
	j="$D/_build/gate/junit.xml"
	erl_one_failure "$j" "confirmed alone: erl_app_SUITE grows 2 000 processes left alive"
	# the run's own selection gives way to the culprit's
	erl_one_failure "$j" "reproduce: gate run -C $D -- --suite erl_app_SUITE\""
	no_leftovers "$D"
}

# rebar.config's eunit_opts and ct_opts as rebar3 applies them: the fixture's sys_config
# (every case: its tests check the environment it sets), a Common Test hook of the project's
# own beside gate's; a sys_config file that is missing is an error naming it, exit 2.
case_erlang_rebar_config_opts() {
	D=$(fixture erl_app)
	cat >"$D/test/erl_app_cth.erl" <<-'EOF'
	-module(erl_app_cth).
	-export([init/2]).
	init(_Id, Opts) ->
	    ok = file:write_file(filename:join(os:getenv("ERL_APP_MARK"), "hooked"), <<"yes">>),
	    {ok, Opts}.
	EOF
	sed -i 's/{ct_opts, \[/{ct_opts, [{ct_hooks, [erl_app_cth]}, /' "$D/rebar.config"
	grep -q 'ct_hooks, \[erl_app_cth\]' "$D/rebar.config" || fail "the hook was not added: $(cat "$D/rebar.config")"
	ERL_APP_MARK=$D erl_gate -C "$D"
	expect_rc 0
	expect_in "$OUT" "8 tests: 8 passed, 0 failed"
	[ -f "$D/hooked" ] || fail "the project's own Common Test hook did not run"
	no_leftovers "$D"
	sed -i 's|config/test.config|config/nothere.config|' "$D/rebar.config"
	erl_gate -C "$D"
	expect_rc 2
	expect_in "$ERR" "rebar.config's eunit_opts sys_config config/nothere.config: no such file or directory"
	no_leftovers "$D"
}

case_erlang_eunit_failure_fails() {
	erl_run eunit_fail
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 test)"
	local j="$D/_build/gate/junit.xml"
	junit_valid "$j"
	junit_check "$j" --failures 1 --errors 0 \
		--failure-contains "answer_test/0=assertEqual failed: expected 41, value 42"
	expect_in "$j" 'file="test/erl_app_store_tests.erl" line="'
	expect_in "$j" 'type="EUnit"'
	no_leftovers "$D"
}

case_erlang_ct_failure_fails() {
	erl_run ct_fail
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 test)"
	local j="$D/_build/gate/junit.xml"
	junit_valid "$j"
	junit_check "$j" --failures 1 --errors 0 --failure-contains "pool.doubling=badmatch"
	expect_in "$j" 'type="CommonTest"'
	no_leftovers "$D"
}

# init_per_suite crashing is a failure (the suite's cases are skipped), never a pass
case_erlang_init_per_suite_fails() {
	erl_run init_fail
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 test)"
	local j="$D/_build/gate/junit.xml"
	junit_check "$j" --failures 1 --skipped 3 --errors 0 \
		--failure-contains "init_per_suite=no_pool_configured"
	no_leftovers "$D"
}

case_erlang_no_compile_is_error() {
	D=$(fixture erl_app)
	printf -- '-module(erl_app_broken).\n-export([f/0]).\nf() -> undefined_call(.\n' >"$D/src/erl_app_broken.erl"
	erl_gate -C "$D"
	expect_rc 2
	expect_in "$ERR" "gate: error: rebar3 as test compile failed in $D (exit status 1)"
	# the compiler's words (rebar3 3.19 prints FILE:LINE:COL: ..., 3.24 a framed excerpt)
	expect_in "$ERR" "src/erl_app_broken.erl"
	expect_in "$ERR" "syntax error before: '.'"
	junit_valid "$D/_build/gate/junit.xml"
	junit_check "$D/_build/gate/junit.xml" --errors 1
	no_leftovers "$D"
}

# --runner and rebar3's arguments after -- pick what runs; a wrong one is exit 2
case_erlang_runner_picks() {
	erl_run "" --runner eunit
	expect_rc 0
	expect_in "$OUT" "5 tests: 5 passed"
	expect_not_in "$OUT" "TEST COMPLETE"
	erl_run procs -- --suite erl_app_SUITE --case worker_roundtrip
	expect_rc 0 # the leaking case does not run
	expect_in "$OUT" "1 test: 1 passed"
	erl_run "" --runner mix
	expect_rc 2
	expect_in "$ERR" "--runner \"mix\" does not fit this project, a rebar3 project"
	erl_run "" -- --only slow
	expect_rc 2
	expect_in "$ERR" "the test argument --only is not one gate passes to a rebar3 project's runners"
	no_leftovers "$D"
	# a library that ships a mix.exs for Elixir users but has no ExUnit suite (no
	# test/test_helper.exs) is tested as a rebar3 project
	D=$(fixture erl_app)
	printf 'defmodule ErlApp.MixProject do\n  use Mix.Project\n  def project, do: [app: :erl_app, version: "0.1.0"]\nend\n' >"$D/mix.exs"
	erl_gate -C "$D"
	expect_rc 0
	expect_in "$OUT" "8 tests: 8 passed"
	no_leftovers "$D"
}

# --repeat runs EUnit and Common Test again in the same node: a clean project passes; with
# --per-test a leak's culprit is the EUnit test itself
case_erlang_repeat_and_per_test() {
	erl_run "" --repeat 3
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	erl_run ets --per-test
	expect_rc 1
	erl_one_failure "$D/_build/gate/junit.xml" 'likely culprit: erl_app_store_tests &quot;sessions/0: sessions open and close&quot;'
	no_leftovers "$D"
}

# rebar3 gate (integrations/rebar3): the plugin as a project_plugins git_subdir dependency of the
# fixture (a git repository of this checkout's integrations/, cloned by rebar3 over file://),
# the release binary and its .sha256 served on a random loopback port (release.sh's helpers):
# installed and verified, run with gate's exit code kept (0 clean, 1 a leak), an install whose
# checksum does not match refused with nothing installed
case_erlang_rebar3_gate_plugin() {
	release_built || return
	local srv repo d
	srv=$(mktemp -d "$WORK/srv.XXXXXX")
	mkdir -p "$srv/v$GATE_VERSION_H"
	cp "$RELEASE_BIN" "$RELEASE_BIN.sha256" "$srv/v$GATE_VERSION_H/"
	serve "$srv"
	repo=$(mktemp -d "$WORK/plugin.XXXXXX")
	mkdir -p "$repo/integrations/mix"
	cp -r "$ROOT/integrations/rebar3" "$repo/integrations/"
	cp "$ROOT/integrations/mix/VERSION" "$repo/integrations/mix/"
	(cd "$repo" && git init -q -b main . && git add -A &&
		git -c user.email=e2e@gate -c user.name=e2e commit -q -m plugin) || fail "cannot make the plugin's repository"
	D=$(fixture erl_app)
	d=$D
	printf '{project_plugins, [{rebar3_gate, {git_subdir, "file://%s", {branch, "main"}, "integrations/rebar3/rebar3_gate"}}]}.\n{gate, [{base_url, "%s/v$version"}]}.\n' \
		"$repo" "$SERVE_URL" >>"$d/rebar.config"
	OUT="$WORK/out.$RANDOM" ERR="$WORK/err.$RANDOM"
	(cd "$d" && timeout -k 5 300 rebar3 gate -- -q) >"$OUT" 2>"$ERR"
	RC=$?
	expect_rc 0
	expect_in "$OUT" "gate: installed gate $GATE_VERSION_H (sha256 verified): $d/_build/gate-$GATE_VERSION_H/gate"
	expect_in "$OUT" "gate: PASSED"
	cmp -s "$RELEASE_BIN" "$d/_build/gate-$GATE_VERSION_H/gate" || fail "the installed binary is not the release"
	(cd "$d" && ERL_APP_PLANT=ets timeout -k 5 300 rebar3 gate -- -q) >"$OUT" 2>"$ERR"
	RC=$?
	expect_rc 1
	expect_in "$OUT" "gate: FAILED (1 memory rule)"
	# the finding says the command that reproduces it through the plugin, gate's options
	# after rebar3's --, the module selected after gate's own
	expect_in "$OUT" "reproduce: rebar3 gate -- -- --module erl_app_store_tests"
	# a download whose .sha256 does not match: refused, nothing installed
	rm -rf "$d/_build/gate-$GATE_VERSION_H"
	printf '%064d  %s\n' 0 "$RELEASE_NAME" >"$srv/v$GATE_VERSION_H/$RELEASE_NAME.sha256"
	(cd "$d" && timeout -k 5 300 rebar3 gate install) >"$OUT" 2>"$ERR"
	RC=$?
	expect_rc 2
	expect_in "$ERR" "gate: error: checksum mismatch for $SERVE_URL/v$GATE_VERSION_H/$RELEASE_NAME"
	expect_in "$ERR" "nothing installed"
	[ ! -e "$d/_build/gate-$GATE_VERSION_H" ] || fail "_build/gate-$GATE_VERSION_H was installed"
	[ "$(ls -A "$d/_build" | grep -c '^\.gate-')" = 0 ] || fail "a temporary install dir was left: $(ls -A "$d/_build")"
	serve_stop
	gone "$d"
}

# it builds the release binary (make release, a minute of static linking the first time): the
# long tier (make test-long)
e2e_long erlang_rebar3_gate_plugin

# SIGTERM while the suite runs and SIGINT while rebar3 compiles: 143 and 130, said, the JUnit
# report saying it, nothing left running
case_erlang_interrupted() {
	local sig rc text phase
	for sig in TERM INT; do
		D=$(fixture erl_app)
		if [ "$sig" = TERM ]; then
			rc=143 text="erl_app: waiting now" phase="while running the tests"
		else
			rc=130 text="compiling $D with rebar3" phase="while compiling $D with rebar3"
		fi
		# hard_gate_bg and wait_text: tests/e2e/cases/hardening.sh
		ERL_APP_PLANT=slow GATE_REBAR3=${GATE_E2E_REBAR3:-${GATE_REBAR3:-}} \
			hard_gate_bg run -C "$D" ${GATE_E2E_ERL:+--erl "$GATE_E2E_ERL"}
		wait_text "$text" "$OUT" "$ERR"
		kill -s "$sig" "$GPID"
		wait "$GPID"
		RC=$?
		expect_rc "$rc"
		expect_in "$ERR" "gate: error: interrupted by"
		expect_in "$ERR" "$phase"
		no_leftovers "$D"
	done
}

# an umbrella (apps/*, rebar3's project_app_dirs): every app's EUnit tests and suites run
case_erlang_umbrella_apps() {
	local a
	D=$(mktemp -d "$WORK/erl_umbrella.XXXXXX")
	printf '{erl_opts, [debug_info]}.\n{deps, []}.\n' >"$D/rebar.config"
	for a in alpha beta; do
		mkdir -p "$D/apps/$a/src" "$D/apps/$a/test"
		printf '{application, %s, [{vsn, "1"}, {applications, [kernel, stdlib]}, {modules, []}]}.\n' "$a" >"$D/apps/$a/src/$a.app.src"
		printf -- '-module(%s).\n-export([f/0]).\nf() -> 1.\n' "$a" >"$D/apps/$a/src/$a.erl"
		printf -- '-module(%s_tests).\n-include_lib("eunit/include/eunit.hrl").\nf_test() -> ?assertEqual(1, %s:f()).\n' "$a" "$a" >"$D/apps/$a/test/${a}_tests.erl"
	done
	printf -- '-module(beta_SUITE).\n-export([all/0, one/1]).\nall() -> [one].\none(_) -> 1 = beta:f().\n' >"$D/apps/beta/test/beta_SUITE.erl"
	erl_gate -C "$D"
	expect_rc 0
	expect_in "$ERR" "2 modules with EUnit tests, 1 Common Test suites"
	junit_check "$D/_build/gate/junit.xml" --failures 0 --errors 0 \
		--testcase "alpha_tests=f_test/0" --testcase "beta_tests=f_test/0" --testcase "beta_SUITE=one"
	no_leftovers "$D"
}
