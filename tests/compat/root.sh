#!/bin/sh
# tests/compat/root.sh: builds, once, the Debian 13 (trixie) chroot whose Erlang/OTP 27 and
# Elixir 1.18 `make compat` runs gate's end-to-end cases against. It lives in
# $GATE_COMPAT_ROOT (default /var/cache/gate-compat/trixie), a path CI can cache and reuse:
# when it is there and complete (the stamp file .gate-compat names what it holds), nothing
# is done. It is built in DIR.partial and renamed into place only when debootstrap
# succeeded, so an interrupted build is never taken for a complete one.
#
#   sh tests/compat/root.sh          prints the root's path on its last line
#
# Needs root and debootstrap (integrations/deps.sh installs it with the test tools) and Debian's
# archive (GATE_COMPAT_MIRROR, default https://deb.debian.org/debian). Exit 0: the root is
# ready; 2: it cannot be built (the reason on stderr).
set -eu
root=${GATE_COMPAT_ROOT:-/var/cache/gate-compat/trixie}
mirror=${GATE_COMPAT_MIRROR:-http://deb.debian.org/debian}
suite=trixie
pkgs=erlang-base,erlang-dev,erlang-tools,erlang-runtime-tools,erlang-crypto,erlang-syntax-tools,erlang-parsetools,elixir,ca-certificates,rebar3,erlang-eunit,erlang-common-test
stamp="$root/.gate-compat"

die() {
	echo "compat: error: $*" >&2
	exit 2
}

case "$root" in /?*/?*) ;; *) die "GATE_COMPAT_ROOT=$root: give a directory of its own, e.g. /var/cache/gate-compat/trixie" ;; esac
# a root made before rebar3 was among its packages: rebar3 (and EUnit, Common Test) added
if [ -f "$stamp" ] && [ -x "$root/usr/bin/erl" ] && [ ! -x "$root/usr/bin/rebar3" ]; then
	[ "$(id -u)" -eq 0 ] || die "adding rebar3 to the chroot in $root needs root"
	echo "compat: adding rebar3 to the chroot in $root" >&2
	DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends \
		rebar3 erlang-eunit erlang-common-test >"$root.rebar3.log" 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get update -q >>"$root.rebar3.log" 2>&1 &&
			DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends \
				rebar3 erlang-eunit erlang-common-test >>"$root.rebar3.log" 2>&1; } ||
		{ tail -n 20 "$root.rebar3.log" >&2; die "cannot install rebar3 into $root (log: $root.rebar3.log)"; }
	rm -f "$root.rebar3.log"
fi
if [ -f "$stamp" ] && [ -x "$root/usr/bin/elixir" ] && [ -x "$root/usr/bin/erl" ]; then
	echo "compat: using the chroot in $root ($(cat "$stamp"))" >&2
	echo "$root"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "building the chroot in $root needs root (debootstrap and chroot); run make compat as root, as CI does"
command -v debootstrap >/dev/null 2>&1 ||
	die "debootstrap is not installed: run sh integrations/deps.sh (as root), or apt-get install debootstrap"
mkdir -p "$(dirname "$root")" || die "cannot create $(dirname "$root")"
partial="$root.partial"
# a build interrupted earlier: start again from nothing (nothing can be mounted in it: the
# runner mounts only into complete roots)
if [ -e "$partial" ]; then
	grep -q " $partial/" /proc/mounts && die "$partial has mounts under it: umount them first"
	rm -rf "$partial"
fi
echo "compat: building a Debian $suite chroot in $root with debootstrap from $mirror (minutes, once)" >&2
t0=$(date +%s)
if ! debootstrap --variant=minbase --include="$pkgs" "$suite" "$partial" "$mirror" \
	>"$partial.log" 2>&1; then
	tail -n 20 "$partial.log" >&2
	die "debootstrap $suite into $partial failed (log: $partial.log); is $mirror reachable? set GATE_COMPAT_MIRROR to a Debian mirror"
fi
otp=$(chroot "$partial" /usr/bin/erl -noshell -eval 'io:format("~s", [erlang:system_info(otp_release)]), halt().') ||
	die "the new chroot's erl does not run"
ex=$(chroot "$partial" /usr/bin/elixir -e 'IO.write(System.version())' 2>/dev/null) ||
	die "the new chroot's elixir does not run"
echo "debian $suite, OTP $otp, Elixir $ex, built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - t0)) s" >"$partial/.gate-compat"
rm -f "$partial.log"
# an incomplete root left by something else: replaced, unless anything is mounted in it
if [ -e "$root" ]; then
	grep -q " $root/" /proc/mounts && die "$root is incomplete and has mounts under it: umount them first"
	rm -rf "$root"
fi
mv "$partial" "$root"
echo "compat: built $root: $(cat "$stamp")" >&2
echo "$root"
