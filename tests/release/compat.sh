#!/usr/bin/env bash
# tests/release/compat.sh: the release binary where nothing of gate's build is: inside the
# Debian 13 chroot of `make compat` (tests/compat/root.sh: Erlang/OTP 27 and Elixir 1.18 from
# Debian; libgit2, libxml2 and jansson hidden if other packages brought them), gate runs on a copy of the demo (examples/demo):
# exit 0 as it is, exit 1 with `-- --include leak`, and again through `mix gate` (the Mix
# package as a path dependency, config :gate, path: the binary), whose own ExUnit tests run
# there too (Elixir 1.18). Needs root (chroot, mounts), like
# make compat; the mounts live in a mount namespace of their own and a trap undoes them.
#
#   bash tests/release/compat.sh BIN      ends with "release compat: ok (...)" or exits 1 (a
#                                         check failed) / 2 (could not run)
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
BIN=${1:?usage: compat.sh BIN}
BIN=$(readlink -f "$BIN")

if [ "${2:-}" != --inside ]; then
	root=$(sh tests/compat/root.sh | tail -n 1) || exit 2
	export GATE_COMPAT_ROOT=$root
	exec unshare --mount --propagation private -- bash "$0" "$BIN" --inside
fi

R=$GATE_COMPAT_ROOT
export GATE_COMPAT_RUN="release.$$.$RANDOM" # our processes in the chroot carry it
MOUNTED=()
W=$(mktemp -d /tmp/gate-release.XXXXXX)
ours() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] || continue
		tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "GATE_COMPAT_RUN=$GATE_COMPAT_RUN" &&
			printf '%s ' "${p#/proc/}"
	done
}
cleanup() {
	local p i
	for p in $(ours); do kill -9 "$p" 2>/dev/null; done
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTED[$i]}" 2>/dev/null || umount -l "${MOUNTED[$i]}" 2>/dev/null
	done
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mount -t proc proc "$R/proc" && MOUNTED+=("$R/proc") || { echo "release compat: error: cannot mount proc in $R"; exit 2; }
mount --bind /dev "$R/dev" && MOUNTED+=("$R/dev") || { echo "release compat: error: cannot bind /dev into $R"; exit 2; }
mount --bind /tmp "$R/tmp" && MOUNTED+=("$R/tmp") || { echo "release compat: error: cannot bind /tmp into $R"; exit 2; }

fail=0
bad() { echo "release compat: FAIL: $*"; fail=1; }
cp "$BIN" "$W/gate" && cp -r "$ROOT/examples/demo" "$W/demo" && mkdir -p "$W/home" || exit 2
rm -rf "$W/demo/_build" "$W/demo/deps"
inside() { # CMD...: run in the chroot, in the demo's copy, with a home of its own
	chroot "$R" /usr/bin/env -i PATH=/usr/bin:/bin HOME="$W/home" LANG=C.UTF-8 \
		GATE_COMPAT_RUN="$GATE_COMPAT_RUN" /bin/sh -c 'cd "$0" && exec "$@"' "$W/demo" "$@"
}
# The chroot may carry these libraries as other packages' dependencies (Common Test, which
# the Erlang cases of make compat need, pulls in wx and its GTK stack, which needs libxml2).
# In this run's own mount namespace each of their files is covered by an empty one, so the
# binary finds none of them, as on a machine without them; a file still readable fails.
hidden=""
for lib in libgit2 libxml2 libjansson; do
	for f in $(find "$R/usr/lib" "$R/lib" -name "$lib.so*" -type f 2>/dev/null); do
		if mount --bind /dev/null "$f"; then
			MOUNTED+=("$f")
			hidden="$hidden $(basename "$f")"
		fi
		[ ! -s "$f" ] || bad "$f is in the chroot and could not be hidden: it would prove nothing about static linking"
	done
done
inside ldd "$W/gate" >"$W/ldd.out" 2>&1 || bad "ldd in the chroot: $(cat "$W/ldd.out")"
! grep -q "not found" "$W/ldd.out" || bad "libraries not found in the chroot: $(grep 'not found' "$W/ldd.out")"
otp=$(inside erl -noshell -eval 'io:format("~s", [erlang:system_info(otp_release)]), halt().')
ex=$(inside elixir -e 'IO.write(System.version())' 2>/dev/null)
inside "$W/gate" --version >"$W/version.out" 2>&1 || bad "--version: $(cat "$W/version.out")"
inside "$W/gate" run -q >"$W/clean.out" 2>&1
rc=$?
[ "$rc" = 0 ] || bad "the demo as it is exited $rc, not 0: $(tail -n 5 "$W/clean.out")"
grep -q "gate: PASSED" "$W/clean.out" || bad "no 'gate: PASSED' for the clean demo"
inside "$W/gate" run -q -- --include leak >"$W/leak.out" 2>&1
rc=$?
[ "$rc" = 1 ] || bad "the demo with its leak exited $rc, not 1: $(tail -n 5 "$W/leak.out")"
grep -q "ETS table demo_sessions" "$W/leak.out" || bad "the leak's finding does not name the table demo_sessions"
# the Mix package on this Elixir: its own tests, then mix gate with config :gate, path: the
# release binary on another copy of the demo
cp -r "$ROOT/integrations/mix" "$W/mixpkg" && rm -rf "$W/mixpkg/_build" "$W/mixpkg/deps"
(cd /tmp && chroot "$R" /usr/bin/env -i PATH=/usr/bin:/bin HOME="$W/home" LANG=C.UTF-8 \
	GATE_COMPAT_RUN="$GATE_COMPAT_RUN" /bin/sh -c 'cd "$0" && mix test && mix compile --force --warnings-as-errors' "$W/mixpkg") \
	>"$W/mixpkg.out" 2>&1 || bad "the Mix package's tests on Elixir $ex: $(tail -n 15 "$W/mixpkg.out")"
cp -r "$ROOT/examples/demo" "$W/mixdemo" && rm -rf "$W/mixdemo/_build"
sed -i "s|deps: \[\]|deps: [{:gate, path: \"$W/mixpkg\", only: [:dev, :test], runtime: false}]|" "$W/mixdemo/mix.exs"
mkdir -p "$W/mixdemo/config" && printf 'import Config\nconfig :gate, path: "%s"\n' "$W/gate" >"$W/mixdemo/config/config.exs"
mixgate() {
	chroot "$R" /usr/bin/env -i PATH=/usr/bin:/bin HOME="$W/home" LANG=C.UTF-8 \
		GATE_COMPAT_RUN="$GATE_COMPAT_RUN" /bin/sh -c 'cd "$0" && exec mix gate "$@"' "$W/mixdemo" "$@"
}
mixgate -q >"$W/mixclean.out" 2>&1
rc=$?
[ "$rc" = 0 ] || bad "mix gate on the demo exited $rc, not 0: $(tail -n 5 "$W/mixclean.out")"
mixgate -q -- --include leak >"$W/mixleak.out" 2>&1
rc=$?
[ "$rc" = 1 ] || bad "mix gate -- --include leak exited $rc, not 1: $(tail -n 5 "$W/mixleak.out")"
left=$(ours)
[ -z "$left" ] || bad "processes left in the chroot: $left"
[ "$fail" = 0 ] || exit 1
echo "release compat: ok ($(basename "$BIN") on Erlang/OTP $otp / Elixir $ex in $R, no libgit2/libxml2/jansson there${hidden:+ (hidden for the run:$hidden)}: demo clean 0, -- --include leak 1, the same through mix gate, the Mix package's tests pass; $(sed -n 2p "$W/version.out" | cut -c1-60)...)"
