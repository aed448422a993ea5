#!/bin/sh
# ci/deps.sh: installs the Debian 12 packages gate needs to build, test and run (and clang with
# its libFuzzer runtime and valgrind for make fuzz / make valgrind), when they
# are missing. Idempotent: installs nothing when everything is there. As root it runs
# apt-get; otherwise it prints the exact command to run.
# GATE_DEPS=run: only what building and running gate needs (the CI templates use it);
# default: the tests' tools too (cmocka, xmllint, Node.js, Chromium for the HTML report).
set -eu
PKGS="build-essential pkg-config erlang-base erlang-dev erlang-tools erlang-runtime-tools
erlang-crypto erlang-syntax-tools erlang-parsetools elixir libgit2-dev libxml2-dev
libjansson-dev"
if [ "${GATE_DEPS:-test}" != run ]; then
	# chromium: the HTML report's render test must fail, not skip, where it is missing
	PKGS="$PKGS libxml2-utils libcmocka-dev chromium clang libclang-rt-14-dev valgrind"
fi
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# Tools the tests use, by command: a machine may have Node.js from elsewhere, and Debian's
# npm package would conflict with it.
if [ "${GATE_DEPS:-test}" != run ]; then
	command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
fi
command -v ss >/dev/null 2>&1 || missing="$missing iproute2"
command -v pgrep >/dev/null 2>&1 || missing="$missing procps"
command -v timeout >/dev/null 2>&1 || missing="$missing coreutils"
if [ -z "$missing" ]; then
	echo "deps: all packages are installed"
	exit 0
fi
echo "deps: missing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: run as root:"
	echo "  apt-get update && apt-get install -y$missing"
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
