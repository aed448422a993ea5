#!/bin/sh
# integrations/deps.sh: installs the packages gate needs to build, test and run (and clang with its
# libFuzzer runtime, valgrind and debootstrap for make fuzz / make valgrind / make compat),
# when they are missing. Idempotent: installs nothing when everything is there. As root it
# runs apt-get (Debian, Ubuntu) or apk (Alpine); otherwise it prints the exact command to run.
#
# GATE_DEPS=run: only what building and running gate needs (the CI templates use it): a C
# compiler, make, pkg-config, libgit2, libxml2, jansson. Erlang/OTP and Elixir are the
# team's: when `erl` / `elixir` are on PATH (erlef/setup-beam, an elixir image, asdf) no
# Erlang or Elixir package is installed, and gate takes ei from that erl's installation
# (erlang-dev only when that erl is Debian's own and lacks it). Without them on PATH, Debian's.
# default: the tests' tools too (cmocka, xmllint, Node.js, Chromium for the HTML report,
# PostgreSQL for the Phoenix app of make realworld).
set -eu
mode=${GATE_DEPS:-test}

# erl on PATH with ei.h and libei.a beside it (code:lib_dir(erl_interface)): prints that dir
erl_ei_dir() {
	command -v erl >/dev/null 2>&1 || return 1
	d=$(erl -noshell -noinput -eval 'io:format("~s", [code:lib_dir(erl_interface)]), halt().' 2>/dev/null) || return 1
	[ -f "$d/include/ei.h" ] && [ -f "$d/lib/libei.a" ] && echo "$d"
}

if command -v apk >/dev/null 2>&1 && ! command -v dpkg-query >/dev/null 2>&1; then
	# Alpine (elixir:*-alpine, hexpm/elixir:*-alpine-*): run mode only
	if [ "$mode" != run ]; then
		echo "deps: error: the tests need Debian (apt-get); on Alpine only GATE_DEPS=run is supported" >&2
		exit 2
	fi
	if ! erl_ei_dir >/dev/null; then
		echo "deps: error: no Erlang/OTP with erl_interface (ei.h, libei.a) on PATH: use an image with Erlang/OTP (elixir:*-alpine) or put its bin/ on PATH" >&2
		exit 2
	fi
	command -v elixir >/dev/null 2>&1 || { echo "deps: error: no elixir on PATH: use an elixir image" >&2; exit 2; }
	PKGS="build-base make pkgconf libgit2-dev libxml2-dev jansson-dev git"
	missing=""
	for p in $PKGS; do apk info -e "$p" >/dev/null 2>&1 || missing="$missing $p"; done
	if [ -z "$missing" ]; then
		echo "deps: all packages are installed (Erlang/OTP and Elixir from PATH)"
		exit 0
	fi
	echo "deps: missing:$missing"
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: run as root:"
		echo "  apk add --no-cache$missing"
		exit 1
	fi
	# shellcheck disable=SC2086
	apk add --no-cache $missing
	exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: error: neither apt (Debian, Ubuntu) nor apk (Alpine) is here: install a C compiler, make, pkg-config and the development files of libgit2, libxml2 and jansson yourself" >&2
	exit 2
fi

PKGS="build-essential pkg-config libgit2-dev libxml2-dev libjansson-dev"
ERLANG_PKGS="erlang-base erlang-dev erlang-tools erlang-runtime-tools erlang-crypto
erlang-syntax-tools erlang-parsetools"
if [ "$mode" = run ]; then
	if erl_ei_dir >/dev/null; then
		echo "deps: Erlang/OTP from PATH ($(command -v erl)): no Erlang packages"
	elif command -v erl >/dev/null 2>&1; then
		# an erl without ei.h beside it: Debian's erlang-base without erlang-dev can be
		# completed; any other installation must bring its own erl_interface
		if dpkg-query -S "$(readlink -f "$(command -v erl)")" >/dev/null 2>&1; then
			PKGS="$PKGS erlang-dev"
		else
			echo "deps: error: $(command -v erl) has no erl_interface (ei.h, libei.a): use an Erlang/OTP installation that has one (setup-beam's, an elixir image's), or make EI_DIR=/path/to/lib/erl_interface-X" >&2
			exit 2
		fi
	else
		PKGS="$PKGS $ERLANG_PKGS"
	fi
	if command -v elixir >/dev/null 2>&1; then
		echo "deps: Elixir from PATH ($(command -v elixir)): no Elixir package"
	else
		PKGS="$PKGS elixir"
	fi
else
	PKGS="$PKGS $ERLANG_PKGS elixir"
	# chromium: the HTML report's render test must fail, not skip, where it is missing;
	# debootstrap: make compat builds its Debian 13 chroot with it; time: make bench reads
	# gate's peak RSS with GNU time; clang-format: make lint checks the house style
	PKGS="$PKGS libxml2-utils libcmocka-dev chromium clang clang-format libclang-rt-14-dev valgrind debootstrap time"
	# make realworld and the e2e case app_planted_leaks run a Phoenix + Ecto application on a
	# private PostgreSQL (tests/realworld/lib.sh), and a Phoenix app's mailer (swoosh) starts
	# xmerl; python3 for the bench scripts' JSON
	PKGS="$PKGS postgresql python3 erlang-xmerl"
	# gate run in a rebar3 project: rebar3 compiles it, EUnit and Common Test run its tests
	# (the e2e cases of tests/e2e/cases/erlang.sh)
	PKGS="$PKGS rebar3 erlang-eunit erlang-common-test"
fi
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# Tools the tests use, by command: a machine may have Node.js from elsewhere, and Debian's
# npm package would conflict with it.
if [ "$mode" != run ]; then
	command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
	command -v ss >/dev/null 2>&1 || missing="$missing iproute2"
	command -v pgrep >/dev/null 2>&1 || missing="$missing procps"
	command -v timeout >/dev/null 2>&1 || missing="$missing coreutils"
fi
command -v git >/dev/null 2>&1 || missing="$missing git"
command -v make >/dev/null 2>&1 || missing="$missing make"
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
