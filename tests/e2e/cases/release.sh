# tests/e2e/cases/release.sh: installing gate the way teams install CI tools: the
# release binary (make release: static but for the C library, its checksum, --version), the
# Mix package integrations/mix as a path dependency of a copy of the demo (mix gate's exit
# codes and signals, mix gate.install against a real HTTP server on a random loopback port:
# installed, a corrupted download refused, an unreachable URL named, a pinned version that
# does not match refused, config :gate, path: used), the package's own ExUnit tests, and the
# GitHub action's and GitLab template's install steps (the release downloaded and verified
# for a release ref, built from source otherwise). No network: everything is served here.
# Sourced by tests/e2e/run.sh, whose helpers it uses.

GATE_VERSION_H=$(cat "$ROOT/VERSION") # gate's version, written once (VERSION)
RELEASE_NAME="gate-$GATE_VERSION_H-linux-$(uname -m)"
RELEASE_BIN="$ROOT/build/release/$RELEASE_NAME"

# release_built: make release (incremental: quick when it is built; one case at a time, as
# cases run side by side); fails the case otherwise
release_built() {
	mkdir -p "$ROOT/build"
	flock "$ROOT/build/.release.lock" make -s -C "$ROOT" release >"$WORK/make-release.out" 2>&1 ||
		{ fail "make release failed: $(tail -n 5 "$WORK/make-release.out")"; return 1; }
	[ -x "$RELEASE_BIN" ] && [ -f "$RELEASE_BIN.sha256" ] ||
		{ fail "make release made no $RELEASE_BIN and .sha256"; return 1; }
}

# serve DIR: OTP's httpd serving DIR on 127.0.0.1, a port the kernel picks; sets SERVE_URL and
# SERVE_PID (serve_stop stops it). erl on PATH is there wherever gate is tested.
serve() {
	local out="$WORK/serve.$RANDOM" i
	(cd "$1" && exec erl -noshell -noinput -eval '
		{ok, _} = application:ensure_all_started(inets),
		{ok, Dir} = file:get_cwd(),
		{ok, P} = inets:start(httpd, [{port, 0}, {server_name, "gate-e2e"}, {server_root, Dir},
			{document_root, Dir}, {bind_address, {127, 0, 0, 1}}]),
		io:format("port ~p~n", [proplists:get_value(port, httpd:info(P))]),
		receive after infinity -> ok end.') >"$out" 2>&1 &
	SERVE_PID=$!
	for i in $(seq 1 100); do
		grep -q '^port [0-9]' "$out" && break
		sleep 0.1
	done
	SERVE_URL="http://127.0.0.1:$(sed -n 's/^port \([0-9]*\)$/\1/p' "$out")"
	grep -q '^port [0-9]' "$out" || fail "the HTTP server did not start: $(cat "$out")"
}
serve_stop() {
	kill "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID" 2>/dev/null
}

# closed_port: a loopback port nothing listens on (bound by the kernel, then released)
closed_port() {
	erl -noshell -noinput -eval '{ok, S} = gen_tcp:listen(0, [{ip, {127,0,0,1}}]), {ok, P} = inet:port(S),
		gen_tcp:close(S), io:format("~p", [P]), halt().'
}

# mix_project FIXTURE CONFIG: a copy of FIXTURE (demo: examples/demo) with the package as a
# path dependency (only dev and test, runtime: false, as docs/install.md says) and CONFIG as its
# config/config.exs body; prints its path
mix_project() {
	local d
	if [ "$1" = demo ]; then
		d=$(mktemp -d "$WORK/demo.XXXXXX") && cp -r "$ROOT/examples/demo/." "$d/"
	else
		d=$(fixture "$1")
	fi
	sed -i "s|deps: \[\]|deps: [{:gate, path: \"$ROOT/integrations/mix\", only: [:dev, :test], runtime: false}]|" "$d/mix.exs"
	grep -q ':gate, path:' "$d/mix.exs" || fail "cannot add the dependency to $d/mix.exs"
	mkdir -p "$d/config"
	printf 'import Config\n%s\n' "$2" >"$d/config/config.exs"
	echo "$d"
}

# in_mix DIR ARGS...: mix ARGS in DIR, output in $OUT/$ERR, exit code in $RC
in_mix() {
	local d=$1
	shift
	OUT="$WORK/out.$RANDOM"
	ERR="$WORK/err.$RANDOM"
	(cd "$d" && timeout -k 5 300 mix "$@") >"$OUT" 2>"$ERR"
	RC=$?
}

# gone DIR: waits until no process runs in DIR any more (a stopped gate stops its node
# first), then checks that nothing is left there
gone() {
	local i p cwd busy
	for i in $(seq 1 300); do
		busy=""
		for p in /proc/[0-9]*; do
			cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
			case "$cwd" in "$1" | "$1"/*) busy=1 && break ;; esac
		done
		[ -z "$busy" ] && break
		sleep 0.1
	done
	no_leftovers "$1"
}

# (a) make release: linked statically but for the C library (ldd, NEEDED), its checksum in
# sha256sum's format, --version saying how each binary was built; it gates the demo
case_release_binary_static() {
	release_built || return
	sh "$ROOT/tests/release/check.sh" "$RELEASE_BIN" "$GATE_VERSION_H" >"$WORK/check.out" 2>&1 ||
		fail "tests/release/check.sh: $(cat "$WORK/check.out")"
	expect_in "$WORK/check.out" "(the C library only)"
	ldd "$RELEASE_BIN" >"$WORK/ldd.out" 2>&1
	if grep -E 'libgit2|libxml2|jansson|libssh2|libmbed|libicu|libstdc\+\+|libz\.|liblzma|libpcre' "$WORK/ldd.out"; then
		fail "ldd shows a library that should be static: $(cat "$WORK/ldd.out")"
	fi
	(cd "$(dirname "$RELEASE_BIN")" && sha256sum -c "$RELEASE_NAME.sha256") >"$WORK/sum.out" 2>&1 ||
		fail "sha256sum -c: $(cat "$WORK/sum.out")"
	[ "$(awk '{ print $2 }' "$RELEASE_BIN.sha256")" = "$RELEASE_NAME" ] || fail "the .sha256 names $(cat "$RELEASE_BIN.sha256")"
	"$RELEASE_BIN" --version >"$WORK/rv.out" 2>&1 || fail "--version of the release failed"
	[ "$(head -n 1 "$WORK/rv.out")" = "gate $GATE_VERSION_H" ] || fail "release --version: $(head -n 1 "$WORK/rv.out")"
	expect_in "$WORK/rv.out" "build: release binary $RELEASE_NAME, static: libgit2 "
	expect_in "$WORK/rv.out" "and ei (erl_interface-"
	expect_in "$WORK/rv.out" "of Erlang/OTP $(cat "$(erl -noshell -eval 'io:format("~s", [code:root_dir()]), halt().')"/releases/*/OTP_VERSION | head -n 1)); dynamic: the C library only"
	run_gate --version
	expect_rc 0
	expect_in "$OUT" "build: from source (linux-$(uname -m)), shared: libgit2 "
	local d
	d=$(mktemp -d "$WORK/demo.XXXXXX") && cp -r "$ROOT/examples/demo/." "$d/"
	(cd "$d" && "$RELEASE_BIN" run -q) >"$WORK/clean.out" 2>&1
	RC=$?
	ERR="$WORK/clean.out" OUT="$WORK/clean.out" expect_rc 0
	(cd "$d" && "$RELEASE_BIN" run -q -- --include leak) >"$WORK/leak.out" 2>&1
	RC=$?
	ERR="$WORK/leak.out" OUT="$WORK/leak.out" expect_rc 1
	expect_in "$WORK/leak.out" "ETS table demo_sessions"
	no_leftovers "$d"
}

# (b) mix gate on the demo with config :gate, path: (this build): gate's exit codes 0/1/2
# passed through, `--` arguments reach mix test, other commands pass through
case_mix_gate_exit_codes() {
	local d; d=$(mix_project demo "config :gate, path: \"$GATE\"")
	in_mix "$d" gate -q
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	in_mix "$d" gate -q -- --include leak
	expect_rc 1
	expect_in "$OUT" "ETS table demo_sessions"
	in_mix "$d" gate --no-such-flag
	expect_rc 2
	expect_in "$ERR" "unknown option --no-such-flag"
	in_mix "$d" gate config check "$d/missing.toml"
	expect_rc 2
	expect_in "$ERR" "missing.toml"
	in_mix "$d" gate snapshot --help
	expect_rc 0
	expect_in "$OUT" "usage: gate snapshot"
	in_mix "$d" gate --version
	expect_rc 0
	expect_in "$OUT" "gate $GATE_VERSION_H"
	# every command passes through, gate merge too: its refusal is gate's own
	in_mix "$d" gate merge "$d/no-result.json"
	expect_rc 2
	expect_in "$ERR" "$d/no-result.json"
	expect_not_in "$ERR" "unexpected argument merge"
	[ ! -e "$d/_build/gate-$GATE_VERSION_H" ] || fail "mix gate installed a binary although path: is set"
	# path: a copy of gate without its execute bit (a download not chmod'ed): exit 2 saying
	# so, never a crash (exit 1 would read as "the gate failed")
	cp "$GATE" "$d/gate-noexec" && chmod 644 "$d/gate-noexec"
	printf 'import Config\nconfig :gate, path: "%s"\n' "$d/gate-noexec" >"$d/config/config.exs"
	in_mix "$d" gate -q
	expect_rc 2
	expect_in "$ERR" "gate: error: config :gate, path: $d/gate-noexec is not executable: chmod +x"
	expect_not_in "$ERR" "ErlangError"
	gone "$d"
}

# (c) signals: SIGTERM to mix's VM reaches gate, which stops its node; mix exits 143. SIGINT
# (Ctrl-C) halts the VM at once: gate gets SIGTERM with it (GATE_EXIT_WITH_PARENT) and
# nothing of gate's is left
case_mix_gate_signals() {
	local d sig pid i rc
	for sig in TERM INT; do
		d=$(mix_project blocking "config :gate, path: \"$GATE\"")
		(cd "$d" && mix compile) >/dev/null 2>&1 # the deps compile before the clock matters
		OUT="$WORK/sig.$sig.out"
		ERR="$WORK/sig.$sig.err"
		(cd "$d" && exec mix gate) >"$OUT" 2>"$ERR" &
		pid=$!
		for i in $(seq 1 600); do
			grep -qF "gate-fixture: blocking now" "$OUT" && break
			sleep 0.1
		done
		grep -qF "gate-fixture: blocking now" "$OUT" || fail "the suite never started: $(tail -n 3 "$ERR")"
		kill -s "$sig" "$pid"
		wait "$pid"
		rc=$?
		if [ "$sig" = TERM ]; then
			[ "$rc" = 143 ] || fail "mix gate after SIGTERM exited $rc, not gate's 143"
			expect_in "$ERR" "gate: error: interrupted by Terminated while running the tests"
		fi
		gone "$d"
	done
}

# (d) mix gate.install from a local server: the release binary and its .sha256 under
# v$version/; installed as _build/gate-VERSION/gate and run by mix gate (demo: 0, leak: 1)
case_mix_gate_install_served() {
	release_built || return
	local srv d
	srv=$(mktemp -d "$WORK/srv.XXXXXX")
	mkdir -p "$srv/v$GATE_VERSION_H"
	cp "$RELEASE_BIN" "$RELEASE_BIN.sha256" "$srv/v$GATE_VERSION_H/"
	serve "$srv"
	d=$(mix_project demo "config :gate, version: \"$GATE_VERSION_H\", base_url: \"$SERVE_URL/v\$version\"")
	in_mix "$d" gate.install
	expect_rc 0
	expect_in "$OUT" "gate: installed gate $GATE_VERSION_H (sha256 verified): $d/_build/gate-$GATE_VERSION_H/gate"
	cmp -s "$RELEASE_BIN" "$d/_build/gate-$GATE_VERSION_H/gate" || fail "the installed binary is not the release"
	[ -x "$d/_build/gate-$GATE_VERSION_H/gate" ] || fail "the installed binary is not executable"
	[ "$(ls -A "$d/_build" | grep -c '^\.gate-')" = 0 ] || fail "a temporary install dir was left: $(ls -A "$d/_build")"
	in_mix "$d" gate.install
	expect_rc 0
	expect_in "$OUT" "is already installed"
	in_mix "$d" gate -q
	expect_rc 0
	expect_in "$OUT" "gate: PASSED"
	in_mix "$d" gate -q -- --include leak
	expect_rc 1
	# the pre-push hook through mix: it records the installed binary
	(cd "$d" && git init -q -b main .) || fail "git init in $d"
	in_mix "$d" gate hook install
	expect_rc 0
	expect_in "$d/.git/hooks/pre-push" "gate_bin='$d/_build/gate-$GATE_VERSION_H/gate'"
	# mix gate installs it first when it is missing
	rm -rf "$d/_build/gate-$GATE_VERSION_H"
	in_mix "$d" gate --version
	expect_rc 0
	expect_in "$OUT" "is not installed yet: installing it"
	expect_in "$OUT" "build: release binary $RELEASE_NAME"
	serve_stop
	gone "$d"
}

# (e) refusals, each exit 2 with nothing installed: a corrupted download (the .sha256 of the
# good one), an unreachable URL (named), a pinned version the binary does not report; and a
# pinned version that config :gate, path:'s binary does not report
case_mix_gate_install_refusals() {
	release_built || return
	local srv d port
	srv=$(mktemp -d "$WORK/srv.XXXXXX")
	mkdir -p "$srv/v$GATE_VERSION_H" "$srv/v9.9.9"
	cp "$RELEASE_BIN" "$RELEASE_BIN.sha256" "$srv/v$GATE_VERSION_H/"
	# one byte changed in the middle (whatever it was: a fixed byte may already be there in
	# some build): the size is the same, the checksum is not
	local size byte; size=$(stat -c %s "$RELEASE_BIN")
	byte=$(dd if="$RELEASE_BIN" bs=1 skip=$((size / 2)) count=1 status=none | od -An -tu1 | tr -d ' ')
	printf "\\$(printf '%03o' $(((byte + 1) % 256)))" |
		dd of="$srv/v$GATE_VERSION_H/$RELEASE_NAME" bs=1 seek=$((size / 2)) conv=notrunc status=none
	cmp -s "$RELEASE_BIN" "$srv/v$GATE_VERSION_H/$RELEASE_NAME" && fail "the corruption changed nothing"
	# 9.9.9: the real binary (gate $GATE_VERSION_H) under another version's name, checksum right
	local other="gate-9.9.9-linux-$(uname -m)"
	cp "$RELEASE_BIN" "$srv/v9.9.9/$other"
	(cd "$srv/v9.9.9" && sha256sum "$other" >"$other.sha256")
	serve "$srv"
	d=$(mix_project demo "config :gate, version: \"$GATE_VERSION_H\", base_url: \"$SERVE_URL/v\$version\"")
	in_mix "$d" gate.install
	expect_rc 2
	expect_in "$ERR" "gate: error: checksum mismatch for $SERVE_URL/v$GATE_VERSION_H/$RELEASE_NAME: its .sha256 says $(cut -d' ' -f1 "$RELEASE_BIN.sha256"), the download is "
	expect_in "$ERR" "nothing installed"
	[ -z "$(ls -A "$d/_build" 2>/dev/null | grep gate)" ] || fail "something was installed: $(ls -A "$d/_build")"
	# mix gate refuses to run what it could not install
	in_mix "$d" gate -q
	expect_rc 2
	expect_in "$ERR" "checksum mismatch"
	expect_not_in "$ERR" "booting node"
	# the pinned version 9.9.9 is gate $GATE_VERSION_H inside
	printf 'import Config\nconfig :gate, version: "9.9.9", base_url: "%s/v$version"\n' "$SERVE_URL" >"$d/config/config.exs"
	in_mix "$d" gate.install
	expect_rc 2
	expect_in "$ERR" "$SERVE_URL/v9.9.9/$other is gate $GATE_VERSION_H, not 9.9.9 (its --version): nothing installed"
	[ ! -e "$d/_build/gate-9.9.9" ] || fail "_build/gate-9.9.9 was installed"
	serve_stop
	# nothing listens there: the URL named, and what to do without a network
	port=$(closed_port)
	printf 'import Config\nconfig :gate, base_url: "http://127.0.0.1:%s/v$version"\n' "$port" >"$d/config/config.exs"
	in_mix "$d" gate.install
	expect_rc 2
	expect_in "$ERR" "gate: error: cannot download http://127.0.0.1:$port/v$GATE_VERSION_H/$RELEASE_NAME: connection refused"
	expect_in "$ERR" "set config :gate, path: to a gate binary on disk"
	[ -z "$(ls -A "$d/_build" 2>/dev/null | grep gate)" ] || fail "something was installed: $(ls -A "$d/_build")"
	# path: with a pinned version it does not report
	printf 'import Config\nconfig :gate, path: "%s", version: "9.9.9"\n' "$GATE" >"$d/config/config.exs"
	in_mix "$d" gate -q
	expect_rc 2
	expect_in "$ERR" "gate: error: config :gate, version: \"9.9.9\", but config :gate, path: $GATE is gate $GATE_VERSION_H"
	expect_not_in "$ERR" "booting node"
	in_mix "$d" gate.install
	expect_rc 2
	expect_in "$ERR" "is gate $GATE_VERSION_H"
	gone "$d"
}

# (f) the package's own ExUnit tests, in a copy (nothing compiled into the repository)
case_mix_package_unit_tests() {
	local p; p=$(mktemp -d "$WORK/mixpkg.XXXXXX")
	cp -r "$ROOT/integrations/mix/." "$p/"
	rm -rf "$p/_build" "$p/deps"
	(cd "$p" && mix test) >"$WORK/unit.out" 2>&1 || fail "mix test in integrations/mix: $(tail -n 20 "$WORK/unit.out")"
	grep -Eq '^[0-9]+ tests, 0 failures' "$WORK/unit.out" || fail "no '0 failures': $(tail -n 5 "$WORK/unit.out")"
	(cd "$p" && mix compile --force --warnings-as-errors) >"$WORK/warn.out" 2>&1 ||
		fail "the package compiles with warnings: $(tail -n 10 "$WORK/warn.out")"
	gone "$p"
}

# (g) the CI templates' install steps run here as the runners would: the action at its
# release tag downloads the release binary from a local server, verifies it and hands it to
# "Run gate" (a failing project: exit-code=1); a corrupted download stops the step (exit 2,
# nothing left); any other ref, or no binary at the URL, falls back to the source build
# ("Build gate" then builds it). GitLab's before_script: the same for GATE_REF.
case_ci_release_install_steps() {
	release_built || return
	integ_npm
	local srv t d; srv=$(mktemp -d "$WORK/srv.XXXXXX")
	mkdir -p "$srv/ok/v$GATE_VERSION_H" "$srv/bad/v$GATE_VERSION_H"
	cp "$RELEASE_BIN" "$RELEASE_BIN.sha256" "$srv/ok/v$GATE_VERSION_H/"
	cp "$RELEASE_BIN.sha256" "$srv/bad/v$GATE_VERSION_H/"
	head -c 4096 "$RELEASE_BIN" >"$srv/bad/v$GATE_VERSION_H/$RELEASE_NAME" # a truncated download
	serve "$srv"
	t=$(mktemp -d "$WORK/runner.XXXXXX")
	local act="$ROOT/integrations/github"
	node "$INTEG/ci-step.js" "$act/action.yml" "Install the release binary" >"$t/release.sh" ||
		{ fail "the action has no step Install the release binary"; return; }
	# at the release tag
	env GITHUB_ACTION_PATH="$act" ACTION_REF="v$GATE_VERSION_H" ACTION_REPOSITORY=org/gate \
		INPUT_RELEASE_URL="$SERVE_URL/ok/v\$version" RUNNER_TEMP="$t" GITHUB_OUTPUT="$t/out1" \
		GITHUB_ENV="$t/env1" bash --noprofile --norc -eo pipefail "$t/release.sh" >"$t/r1.log" 2>&1 ||
		fail "the release step failed: $(tail -n 3 "$t/r1.log")"
	expect_in "$t/out1" "install=release"
	expect_in "$t/r1.log" "gate: installed the release binary $RELEASE_NAME from $SERVE_URL/ok/v$GATE_VERSION_H/$RELEASE_NAME (sha256 $(cut -d' ' -f1 "$RELEASE_BIN.sha256") verified): build: release binary"
	expect_in "$t/env1" "GATE_EXE=$t/gate-release/$RELEASE_NAME"
	cmp -s "$RELEASE_BIN" "$t/gate-release/$RELEASE_NAME" || fail "the installed binary is not the release"
	# the downloaded binary in the action's Run gate step
	d=$(git_fixture failing)
	git -C "$d" update-ref refs/remotes/origin/main HEAD
	node "$INTEG/ci-step.js" "$act/action.yml" "Run gate" >"$t/run.sh"
	(cd "$d" && env GATE_EXE="$t/gate-release/$RELEASE_NAME" INPUT_PROJECT=. INPUT_BASELINE_REF=origin/main \
		INPUT_BASELINE_BRANCH=gate/baseline INPUT_REQUIRE_BASELINE=false INPUT_UPDATE_BASELINE=false \
		INPUT_ARGS=-q RUNNER_TEMP="$t/run" GITHUB_OUTPUT="$t/run.output" \
		bash --noprofile --norc -eo pipefail "$t/run.sh") >"$t/run.out" 2>&1 ||
		fail "Run gate with the release binary: $(tail -n 3 "$t/run.out")"
	expect_in "$t/run.output" "exit-code=1"
	expect_in "$t/run.out" "gate: FAILED (1 test)"
	# a corrupted download: stopped, nothing left
	env GITHUB_ACTION_PATH="$act" ACTION_REF="v$GATE_VERSION_H" ACTION_REPOSITORY=org/gate \
		INPUT_RELEASE_URL="$SERVE_URL/bad/v\$version" RUNNER_TEMP="$t/bad" GITHUB_OUTPUT="$t/out2" \
		GITHUB_ENV="$t/env2" bash --noprofile --norc -eo pipefail "$t/release.sh" >"$t/r2.log" 2>&1
	RC=$?
	OUT="$t/r2.log" ERR="$t/r2.log" expect_rc 2
	expect_in "$t/r2.log" "::error title=gate::checksum mismatch for $SERVE_URL/bad/v$GATE_VERSION_H/$RELEASE_NAME"
	[ ! -e "$t/bad/gate-release" ] || fail "the corrupted download was left in $t/bad/gate-release"
	[ ! -s "$t/env2" ] || fail "GATE_EXE was set for a corrupted download: $(cat "$t/env2")"
	# no binary at the URL (no release for this version): the source build
	env GITHUB_ACTION_PATH="$act" ACTION_REF="v$GATE_VERSION_H" ACTION_REPOSITORY=org/gate \
		INPUT_RELEASE_URL="$SERVE_URL/none/v\$version" RUNNER_TEMP="$t/none" GITHUB_OUTPUT="$t/out3" \
		GITHUB_ENV="$t/env3" bash --noprofile --norc -eo pipefail "$t/release.sh" >"$t/r3.log" 2>&1 ||
		fail "the release step with no binary failed: $(tail -n 3 "$t/r3.log")"
	expect_in "$t/out3" "install=source"
	expect_in "$t/r3.log" "gate: no release binary at $SERVE_URL/none/v$GATE_VERSION_H/$RELEASE_NAME"
	expect_in "$t/r3.log" "building gate from source"
	# a binary that does not run on this runner (as on musl): the source build
	mkdir -p "$srv/norun/v$GATE_VERSION_H"
	printf '#!/bin/sh\necho "cannot execute: required file not found" >&2\nexit 127\n' >"$srv/norun/v$GATE_VERSION_H/$RELEASE_NAME"
	(cd "$srv/norun/v$GATE_VERSION_H" && sha256sum "$RELEASE_NAME" >"$RELEASE_NAME.sha256")
	env GITHUB_ACTION_PATH="$act" ACTION_REF="v$GATE_VERSION_H" ACTION_REPOSITORY=org/gate \
		INPUT_RELEASE_URL="$SERVE_URL/norun/v\$version" RUNNER_TEMP="$t/norun" GITHUB_OUTPUT="$t/out5" \
		GITHUB_ENV="$t/env5" bash --noprofile --norc -eo pipefail "$t/release.sh" >"$t/r5.log" 2>&1 ||
		fail "the release step with a binary that does not run failed: $(tail -n 3 "$t/r5.log")"
	expect_in "$t/out5" "install=source"
	expect_in "$t/r5.log" "gate: the release binary does not run on this runner (cannot execute: required file not found): building gate from source"
	[ ! -e "$t/norun/gate-release" ] && [ ! -s "$t/env5" ] || fail "the binary that does not run was kept"
	# a branch or a commit: the source build, which "Build gate" does
	env GITHUB_ACTION_PATH="$act" ACTION_REF=main ACTION_REPOSITORY=org/gate INPUT_RELEASE_URL= \
		RUNNER_TEMP="$t/src" GITHUB_OUTPUT="$t/out4" GITHUB_ENV="$t/env4" \
		bash --noprofile --norc -eo pipefail "$t/release.sh" >"$t/r4.log" 2>&1 ||
		fail "the release step at main failed: $(tail -n 3 "$t/r4.log")"
	expect_in "$t/out4" "install=source"
	expect_in "$t/r4.log" "gate: main is not the release tag v$GATE_VERSION_H: building gate from source"
	node "$INTEG/ci-step.js" "$act/action.yml" "Build gate" >"$t/build.sh"
	env GITHUB_ACTION_PATH="$act" GITHUB_ENV="$t/env4" bash --noprofile --norc -eo pipefail "$t/build.sh" >"$t/b4.log" 2>&1 ||
		fail "Build gate: $(tail -n 3 "$t/b4.log")"
	expect_in "$t/b4.log" "gate: built from source: build: from source"
	expect_in "$t/env4" "GATE_EXE=$ROOT/build/gate"
	# GitLab: .gate's install lines with GATE_REF the release tag, then a corrupted download,
	# then a commit (the source build: here from a source that does not exist, so that the
	# case builds nothing: it stops saying so)
	node "$INTEG/ci-step.js" "$ROOT/integrations/gitlab/gate.gitlab-ci.yml" .gate before_script GATE_HOME >"$t/gl.sh" ||
		{ fail "no GATE_HOME lines in .gate's before_script"; return; }
	(cd "$t" && env GATE_REF="v$GATE_VERSION_H" GATE_RELEASE_URL="$SERVE_URL/ok/v\$version" GATE_HOME="$t/gl1" \
		GATE_SOURCE=https://example.invalid/gate.git GATE_IMAGE=elixir:test sh -e "$t/gl.sh") >"$t/gl1.log" 2>&1 ||
		fail "GitLab's install lines at the release tag: $(tail -n 3 "$t/gl1.log")"
	expect_in "$t/gl1.log" "gate: installed the release binary $RELEASE_NAME from $SERVE_URL/ok/v$GATE_VERSION_H/$RELEASE_NAME"
	cmp -s "$RELEASE_BIN" "$t/gl1/build/gate" || fail "GitLab's \$GATE_HOME/build/gate is not the release"
	(cd "$t" && env GATE_REF="v$GATE_VERSION_H" GATE_RELEASE_URL="$SERVE_URL/bad/v\$version" GATE_HOME="$t/gl2" \
		GATE_SOURCE=https://example.invalid/gate.git GATE_IMAGE=elixir:test sh -e "$t/gl.sh") >"$t/gl2.log" 2>&1
	RC=$?
	OUT="$t/gl2.log" ERR="$t/gl2.log" expect_rc 2
	expect_in "$t/gl2.log" "gate: error: checksum mismatch for $SERVE_URL/bad/v$GATE_VERSION_H/$RELEASE_NAME"
	[ ! -e "$t/gl2" ] || fail "GitLab's job left the corrupted download in $t/gl2"
	(cd "$t" && env GATE_REF=0123abc GATE_RELEASE_URL= GATE_HOME="$t/gl3" GATE_SOURCE="$t/no-such-repo" \
		GATE_IMAGE=elixir:test sh -e "$t/gl.sh") >"$t/gl3.log" 2>&1
	RC=$?
	OUT="$t/gl3.log" ERR="$t/gl3.log" expect_rc 2
	expect_in "$t/gl3.log" "gate: GATE_REF 0123abc is not a release tag (vX.Y.Z): building gate from source"
	expect_in "$t/gl3.log" "gate: error: cannot build gate 0123abc from $t/no-such-repo"
	# the partitioned workflow's merge job: the same release install, not a build
	local wf=integrations/github/example-workflow-partitioned.yml
	ci_step "$wf" "memory-merge/Install gate" "$t" GATE_REF="v$GATE_VERSION_H" \
		GATE_RELEASE_URL="$SERVE_URL/ok/v\$version" RUNNER_TEMP="$t/wm1" GITHUB_ENV="$t/wenv1" \
		>"$t/wm1.log" 2>&1 || fail "the merge job's Install gate at the release tag: $(tail -n 3 "$t/wm1.log")"
	expect_in "$t/wm1.log" "gate: installed the release binary $RELEASE_NAME from $SERVE_URL/ok/v$GATE_VERSION_H/$RELEASE_NAME (sha256 $(cut -d' ' -f1 "$RELEASE_BIN.sha256") verified): build: release binary"
	expect_in "$t/wenv1" "GATE_EXE=$t/wm1/gate-release/$RELEASE_NAME"
	cmp -s "$RELEASE_BIN" "$t/wm1/gate-release/$RELEASE_NAME" || fail "the merge job's gate is not the release"
	ci_step "$wf" "memory-merge/Install gate" "$t" GATE_REF="v$GATE_VERSION_H" \
		GATE_RELEASE_URL="$SERVE_URL/bad/v\$version" RUNNER_TEMP="$t/wm2" GITHUB_ENV="$t/wenv2" \
		>"$t/wm2.log" 2>&1
	RC=$?
	OUT="$t/wm2.log" ERR="$t/wm2.log" expect_rc 2
	expect_in "$t/wm2.log" "::error title=gate::checksum mismatch for $SERVE_URL/bad/v$GATE_VERSION_H/$RELEASE_NAME"
	[ ! -e "$t/wm2/gate-release" ] && [ ! -s "$t/wenv2" ] || fail "the merge job kept a corrupted download"
	serve_stop
	no_leftovers "$d"
	no_leftovers "$t"
}

# (h) GATE_EXIT_WITH_PARENT=1 (what mix gate sets): when the process that started gate dies,
# even by SIGKILL, gate gets SIGTERM, stops its node and exits; nothing is left
case_exit_with_parent_stops_gate() {
	local d parent i
	d=$(fixture blocking)
	OUT="$WORK/ewp.out"
	ERR="$WORK/ewp.err"
	GATE_EXIT_WITH_PARENT=1 sh -c '"$0" run -C "$1" >"$2" 2>"$3" & wait' "$GATE" "$d" "$OUT" "$ERR" &
	parent=$!
	for i in $(seq 1 600); do
		grep -qF "gate-fixture: blocking now" "$OUT" 2>/dev/null && break
		sleep 0.1
	done
	grep -qF "gate-fixture: blocking now" "$OUT" || fail "the suite never started: $(tail -n 3 "$ERR")"
	kill -9 "$parent"
	wait "$parent" 2>/dev/null
	gone "$d"
	expect_in "$ERR" "gate: error: interrupted by Terminated while running the tests"
	expect_in "$ERR" "stopping node"
}

# the cases that build the release binary (make release, a minute of static linking the first
# time): the long tier (make test-long)
e2e_long release_binary_static mix_gate_install_served mix_gate_install_refusals \
	ci_release_install_steps
