# tests/e2e/cases/toolchain.sh: the toolchain a team brings: bad input stays clear.
# An elixir that is not there, a project that needs a newer Elixir than the node has, deps
# not fetched: exit 2 with Mix's own words as the reason, in the console and the JUnit, and
# gate's hint. With make compat (tests/compat/run.sh) the same cases run on OTP 27 / Elixir
# 1.18, plus the ones that need OTP 27's erlc: the probe compiled by it loads into OTP 25 and
# 27, and one compiled without the options that allow that is refused by an OTP 25 node
# with both releases named. Sourced by tests/e2e/run.sh.

# the Elixir version the nodes of this run have (the compat chroot's under make compat)
tc_elixir_version() {
	(cd "$WORK" && ${GATE_E2E_ELIXIR:-elixir} -e 'IO.write(System.version())' 2>/dev/null)
}

# An elixir that is not on PATH, and an --elixir that does not exist: exit 2 before any node,
# naming what was looked for and where to get it; the JUnit says the same.
case_toolchain_elixir_not_on_path() {
	local d; d=$(fixture clean)
	mkdir -p "$WORK/emptybin"
	GATE_E2E_ELIXIR='' GATE_WRAP="env PATH=$WORK/emptybin" run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "gate: error: cannot run elixir: not found on PATH"
	expect_in "$ERR" "erlef/setup-beam"
	expect_in "$ERR" "--elixir PATH"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=cannot run elixir: not found on PATH"
	GATE_E2E_ELIXIR='' run_gate run -C "$d" --elixir "$WORK/no/such/elixir"
	expect_rc 2
	expect_in "$ERR" "cannot run $WORK/no/such/elixir to start the node in $d: No such file or directory"
	no_leftovers "$d"
}

# mix.exs declares an Elixir newer than the node's: Mix's refusal is the reason, with the hint
case_toolchain_project_needs_newer_elixir() {
	local d v need; d=$(fixture clean)
	v=$(tc_elixir_version)
	[ -n "$v" ] || { fail "cannot tell the nodes' Elixir version"; return; }
	need="$(echo "$v" | cut -d. -f1).$(($(echo "$v" | cut -d. -f2) + 1)).0"
	sed -i "s/elixir: \"~> 1.14\"/elixir: \">= $need\"/" "$d/mix.exs"
	grep -qF ">= $need" "$d/mix.exs" || { fail "the fixture's elixir requirement was not replaced"; return; }
	run_gate run -C "$d"
	expect_rc 2
	local said="You're trying to run :clean on Elixir v$v but it has declared in its mix.exs file it supports only Elixir >= $need"
	expect_in "$ERR" "gate: error: node nonode@nohost"
	expect_in "$ERR" "exited with status 1 while booting the node in $d: ** (Mix) $said"
	expect_in "$ERR" "run gate with the Elixir the project declares in mix.exs"
	expect_not_in "$ERR" "its output above says why"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=$said" \
		--failure-contains "gate=setup-beam's elixir-version"
	no_leftovers "$d"
}

# A dependency that was never fetched (a git one: no Hex is needed to name it): Mix's words,
# `mix deps.get` in gate's hint, in the console and the JUnit
case_toolchain_deps_not_fetched() {
	local d; d=$(fixture clean)
	sed -i 's|deps: \[\]|deps: [{:gate_absent, git: "https://example.invalid/gate_absent.git", tag: "v1.0.0"}]|' "$d/mix.exs"
	grep -qF gate_absent "$d/mix.exs" || { fail "the fixture's deps were not replaced"; return; }
	run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "Unchecked dependencies for environment test:; * gate_absent"
	expect_in "$ERR" 'the dependency is not available, run "mix deps.get"'
	expect_in "$ERR" "fetch the project's dependencies before gate runs: \`MIX_ENV=test mix deps.get\`"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1 \
		--failure-contains "gate=the dependency is not available, run \"mix deps.get\"" \
		--failure-contains "gate=** (Mix) Can't continue due to errors on dependencies" \
		--failure-contains "gate=with deps/ and _build/ cached on mix.lock"
	[ ! -d "$d/deps" ] || fail "gate fetched dependencies itself"
	no_leftovers "$d"
}

# The following need OTP 27's erlc, which only make compat has (tests/compat/run.sh builds
# the two gates).
if [ -n "${GATE_COMPAT_PROBE_GATE:-}" ]; then

# the probe compiled by OTP 27's erlc with the Makefile's options loads into this machine's
# OTP 25 node and into the chroot's OTP 27 node: both runs pass and judge
case_toolchain_probe_from_newer_erlc_loads_in_both() {
	local d e; d=$(fixture clean)
	GATE="$GATE_COMPAT_PROBE_GATE" GATE_E2E_ELIXIR='' run_gate run -C "$d"
	expect_rc 0
	expect_in "$OUT" "28 tests: 28 passed, 0 failed"
	e=$(fixture leak_ets)
	GATE="$GATE_COMPAT_PROBE_GATE" run_gate run -C "$e"
	expect_rc 1
	expect_in "$OUT" "ets grew"
	junit_check "$e/_build/gate/junit.xml" --failure-contains "ets=ets grew" --errors 0
	no_leftovers "$d"
	no_leftovers "$e"
}

# compiled without them, an OTP 25 node cannot load it: exit 2 naming both releases
case_toolchain_probe_newer_than_node() {
	local d; d=$(fixture clean)
	GATE="$GATE_COMPAT_RAW_PROBE_GATE" GATE_E2E_ELIXIR='' run_gate run -C "$d"
	expect_rc 2
	expect_in "$ERR" "runs Erlang/OTP 25, but this gate's probe was compiled by OTP $GATE_COMPAT_OTP's erlc and OTP 25 cannot load it"
	expect_in "$ERR" "build gate with the OTP the project runs on"
	junit_valid "$d/_build/gate/junit.xml"
	junit_check "$d/_build/gate/junit.xml" --errors 1 --failure-contains "gate=compiled by OTP $GATE_COMPAT_OTP's erlc"
	no_leftovers "$d"
}

# GitLab's gate:merge-request job, before_script and script as the template has them, run
# as a Docker runner runs them in an image: the Debian 13 chroot stands for an elixir image
# (root, Erlang/OTP 27 and Elixir 1.18 on PATH, no compiler). It installs only gate's build
# packages with apt (no Erlang, no Elixir), fetches gate at GATE_REF from GATE_SOURCE (this
# repository's HEAD, committed), builds it against the image's OTP 27 (ei from its erl) and
# judges a failing project; run twice in the same place, as on a reused runner. The deps
# step is off (GATE_MIX_DEPS_GET=false): hex.pm is not reachable from here.
case_toolchain_gitlab_job_in_an_elixir_image() {
	integ_npm
	local t d rev i; t=$(mktemp -d "$WORK/gitlab.XXXXXX")
	git clone -q --bare "$ROOT" "$t/gate.git" || { fail "cannot clone $ROOT"; return; }
	rev=$(git -C "$ROOT" rev-parse HEAD)
	d=$(git_fixture failing)
	bare_remote "$d" >/dev/null
	git -C "$d" push -q origin main 2>/dev/null
	git -C "$d" checkout -q --detach
	{
		node "$INTEG/ci-step.js" "$ROOT/integrations/gitlab/gate.gitlab-ci.yml" .gate before_script
		node "$INTEG/ci-step.js" "$ROOT/integrations/gitlab/gate.gitlab-ci.yml" gate:merge-request
	} >"$t/job.sh" || { fail "no gate:merge-request job"; return; }
	# The image is a throwaway layer over the chroot, as a runner's container is over its
	# image: an overlay whose upper layer is a tmpfs, mounted in a mount namespace of its own
	# (unshare -m), so that every mount and every package the job installs go away with it.
	# Installing into the cached chroot itself would leave libgit2 & co. there, where `make
	# release-compat` must find none. Both runs share the one layer (a reused runner).
	cat >"$t/image.sh" <<'IMAGE'
set -e
t=$1 d=$2
mkdir -p "$t/layer" "$t/root"
mount -t tmpfs tmpfs "$t/layer"
mkdir "$t/layer/upper" "$t/layer/work"
if ! mount -t overlay overlay -o "lowerdir=$GATE_COMPAT_ROOT,upperdir=$t/layer/upper,workdir=$t/layer/work" "$t/root"; then
	# no overlayfs here: a copy of the chroot in the tmpfs instead (without the runner's
	# mounts of proc, dev and tmp in it)
	echo "image: no overlayfs: a copy of $GATE_COMPAT_ROOT instead"
	mkdir "$t/layer/copy"
	(cd "$GATE_COMPAT_ROOT" && tar -c --exclude=./proc --exclude=./dev --exclude=./tmp .) | (cd "$t/layer/copy" && tar -x)
	mkdir -p "$t/layer/copy/proc" "$t/layer/copy/dev" "$t/layer/copy/tmp"
	mount --bind "$t/layer/copy" "$t/root"
fi
mount -t proc proc "$t/root/proc"
mount --bind /dev "$t/root/dev"
mount --bind /tmp "$t/root/tmp"
for i in 1 2; do
	rc=0
	chroot "$t/root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		GATE_COMPAT_RUN="$GATE_COMPAT_RUN" LANG=C.UTF-8 CI_DEFAULT_BRANCH=main MIX_ENV=test \
		GATE_IMAGE=debian-13-chroot GATE_PROJECT=. GATE_ARGS=-q GATE_SOURCE="file://$t/gate.git" \
		GATE_REF="$GATE_REF" GATE_HOME="$t/gate-job" GATE_BASELINE_BRANCH=gate/baseline \
		GATE_MIX_DEPS_GET=false /bin/sh -c 'cd "$1" && exec sh -e "$2"' sh "$d" "$t/job.sh" \
		>"$t/job$i.out" 2>&1 || rc=$?
	echo "$rc" >"$t/rc$i"
	chroot "$t/root" dpkg-query -W -f='${Package} ' 'erlang-*' 'elixir' >"$t/erlang$i" 2>/dev/null || true
	# the reports of this run, out of the way of the next (the project dir is the same)
	mv "$d/gate-reports" "$t/reports$i" 2>/dev/null || true
done
IMAGE
	GATE_REF="$rev" unshare -m bash "$t/image.sh" "$t" "$d" >"$t/image.out" 2>&1 ||
		{ fail "the image layer over $GATE_COMPAT_ROOT: $(tail -n 5 "$t/image.out")"; return; }
	for i in 1 2; do
		local rc; rc=$(cat "$t/rc$i" 2>/dev/null)
		[ "$rc" = 1 ] || { fail "run $i of the job exited $rc: $(tail -n 5 "$t/job$i.out")"; return; }
		junit_check "$t/reports$i/junit.xml" --failures 1 --errors 0 \
			--failure-contains "test the answer is right=gate-fixture: the answer drifted"
		expect_in "$t/reports$i/summary.md" "gate: FAILED (1 test)"
		expect_in "$t/job$i.out" "deps: Erlang/OTP from PATH (/usr/bin/erl): no Erlang packages"
		expect_in "$t/job$i.out" "deps: Elixir from PATH (/usr/bin/elixir): no Elixir package"
		expect_not_in "$t/job$i.out" "already exists"
		if grep -q 'esl-erlang' "$t/erlang$i"; then
			fail "a second Erlang got installed"
		fi
	done
	# the job's packages went with the layer: the cached chroot has no gate build package
	if chroot "$GATE_COMPAT_ROOT" dpkg-query -W -f='${Status}' libgit2-dev 2>/dev/null | grep -q 'installed'; then
		fail "the job installed libgit2-dev into $GATE_COMPAT_ROOT itself, not into its layer"
	fi
	# the second run found everything installed by the first
	expect_in "$t/job2.out" "deps: all packages are installed"
	expect_in "$t/gate-job/build/probe_blob.c" "probe_otp_release[] = \"$GATE_COMPAT_OTP\""
	grep -q "erl_interface" "$t/job1.out" && fail "the build said something about erl_interface: $(grep erl_interface "$t/job1.out")"
	no_leftovers "$d"
}

fi
