#!/usr/bin/env bash
# tests/compat/run.sh: `make compat`: gate, built here, against another Erlang/OTP and Elixir
# than the machine's: Debian 13's OTP 27 and Elixir 1.18, in a chroot built once by
# tests/compat/root.sh ($GATE_COMPAT_ROOT, default /var/cache/gate-compat/trixie).
#
# It runs in a mount namespace of its own (unshare), where it mounts proc and binds /dev and
# /tmp into the chroot: the mounts are seen by nothing else and go away with the namespace,
# and a trap unmounts them on every exit path all the same. gate gets `--elixir` a wrapper
# that runs the chroot's elixir in the same directory (fixtures live under /tmp, the same
# path inside), so the nodes it starts are OTP 27 / Elixir 1.18 nodes on loopback, which
# gate connects to unchanged; the attach case starts its Mix node through the same wrapper.
# The cases: a clean pass, each leak kind, a failing test, attribution, attach, JUnit
# validity (every case validates its JUnit), the toolchain cases that need OTP 27's erlc, and
# what depends on the OTP or Elixir release: the node without distribution, one leak one
# voice, instrument's origins and the settling (Mix prunes the code path from Elixir 1.15),
# the peak, and the look inside processes (which loops answer system messages); and a rebar3
# project (the chroot's rebar3 compiles it, its erl runs EUnit and Common Test).
#
#   bash tests/compat/run.sh [CASE...]     ends with "compat: N passed, M failed (...)"
#                                          (exit 1 when any failed, 2 when it could not run)
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
export GATE_BUILD=${GATE_BUILD:-build}

if [ "${1:-}" != --inside ]; then
	t0=$(date +%s)
	root=$(sh tests/compat/root.sh | tail -n 1) || exit 2
	export GATE_COMPAT_ROOT=$root
	echo "compat: chroot ready in $(($(date +%s) - t0)) s"
	command -v unshare >/dev/null 2>&1 || { echo "compat: error: unshare (util-linux) is missing"; exit 2; }
	out=$(mktemp)
	unshare --mount --propagation private -- bash "$0" --inside "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	counts=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 passed, \2 failed/p' "$out" | tail -n 1)
	rm -f "$out"
	[ -n "$counts" ] || { counts="0 passed, 1 failed"; rc=1; }
	echo "compat: $counts (OTP 27 / Elixir 1.18 in $root, $(($(date +%s) - t0)) s)"
	exit "$rc"
fi
shift

R=$GATE_COMPAT_ROOT
case "$R" in /?*/?*) ;; *) echo "compat: error: GATE_COMPAT_ROOT=$R: not a directory of its own"; exit 2 ;; esac
# processes of this run carry this mark (a chroot keeps the environment), so that leftovers
# are told from another run's
export GATE_COMPAT_RUN="compat.$$.$RANDOM"
export TMPDIR=/tmp # the fixtures must be under /tmp, which the chroot sees
STATE=$(mktemp -d /tmp/gate-compat.XXXXXX)
MOUNTED=()

ours() { # pids of processes of this run still running inside the chroot
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] || continue
		tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "GATE_COMPAT_RUN=$GATE_COMPAT_RUN" &&
			printf '%s ' "${p#/proc/}"
	done
}

cleanup() {
	local p m i
	for p in $(ours); do kill -9 "$p" 2>/dev/null; done
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		m=${MOUNTED[$i]}
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
			echo "compat: warning: could not unmount $m"
	done
	MOUNTED=()
	rm -rf "$STATE"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mount -t proc proc "$R/proc" && MOUNTED+=("$R/proc") || { echo "compat: error: cannot mount proc in $R/proc"; exit 2; }
mount --bind /dev "$R/dev" && MOUNTED+=("$R/dev") || { echo "compat: error: cannot bind /dev into $R/dev"; exit 2; }
mount --bind /tmp "$R/tmp" && MOUNTED+=("$R/tmp") || { echo "compat: error: cannot bind /tmp into $R/tmp"; exit 2; }

# in-chroot commands for a directory under /tmp
for tool in elixir erlc erl rebar3; do
	cat >"$STATE/$tool" <<WRAP
#!/bin/sh
# $tool of $R, run in the same directory inside it
exec chroot "$R" /bin/sh -c 'cd "\$0" && exec $tool "\$@"' "\$PWD" "\$@"
WRAP
	chmod 755 "$STATE/$tool"
done
# erlc for sources outside the chroot (the probe's): compiles copies under /tmp
cat >"$STATE/erlc-copy" <<WRAP
#!/bin/sh
out=.; src=; set -- "\$@"
n=\$#; i=0
while [ \$i -lt \$n ]; do
	a=\$1; shift; i=\$((i + 1))
	case "\$a" in
	-o) out=\$1; shift; i=\$((i + 1)) ;;
	*.erl) src=\$a ;;
	*) set -- "\$@" "\$a" ;;
	esac
done
t=\$(mktemp -d /tmp/gate-erlc.XXXXXX) || exit 2
cp "\$src" "\$t/" && (cd "\$t" && "$STATE/erlc" "\$@" "\$(basename "\$src")")
rc=\$?
[ \$rc -ne 0 ] || cp "\$t"/*.beam "\$out"/ || rc=2
rm -rf "\$t"
exit \$rc
WRAP
chmod 755 "$STATE/erlc-copy"

otp=$(cd /tmp && "$STATE/erl" -noshell -eval 'io:format("~s", [erlang:system_info(otp_release)]), halt().')
ex=$(cd /tmp && "$STATE/elixir" -e 'IO.write(System.version())' 2>/dev/null)
echo "compat: gate $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) (built with OTP $(erl -noshell -eval 'io:format("~s", [erlang:system_info(otp_release)]), halt().')) against OTP $otp / Elixir $ex in $R"
[ -n "$otp" ] && [ -n "$ex" ] || { echo "compat: error: the chroot's erl or elixir does not run"; exit 2; }

# gate with its probe compiled by OTP $otp's erlc: with the options that keep it loadable
# by OTP 25 (the Makefile's default), and without them
for v in compat raw; do
	flags=()
	[ "$v" = raw ] && flags=(PROBE_ERLC_FLAGS=)
	make -s -C "$ROOT" probe-gate PROBE_GATE_OUT="$STATE/gate-otp$otp-$v" ERLC="$STATE/erlc-copy" \
		PROBE_OTP="$otp" "${flags[@]}" >"$STATE/probe-gate.log" 2>&1 ||
		{ echo "compat: error: cannot build gate with OTP $otp's probe ($v):"; tail -n 5 "$STATE/probe-gate.log"; exit 2; }
done
export GATE_COMPAT_OTP=$otp
export GATE_COMPAT_PROBE_GATE="$STATE/gate-otp$otp-compat/gate"
export GATE_COMPAT_RAW_PROBE_GATE="$STATE/gate-otp$otp-raw/gate"
export GATE_E2E_ELIXIR="$STATE/elixir"
# a rebar3 project's node and compile (tests/e2e/cases/erlang.sh): the chroot's erl and rebar3
export GATE_E2E_ERL="$STATE/erl" GATE_E2E_REBAR3="$STATE/rebar3"

CASES=("$@")
if [ ${#CASES[@]} -eq 0 ]; then
	CASES=(clean_passes leak_binary_fails leak_ets_fails leaked_processes_grouped
		atom_leak_fails flooded_mailbox_named failing_test_fails no_compile_is_error
		attribution_sync_module_named attribution_async_module_named attach_mix_test_node
		toolchain_project_needs_newer_elixir toolchain_deps_not_fetched
		toolchain_probe_from_newer_erlc_loads_in_both toolchain_probe_newer_than_node
		toolchain_gitlab_job_in_an_elixir_image
		nodist_plain_node onevoice_ets_table fine_enif_names_the_nif fine_peak_names_the_test
		settle_sets_aside_port_buffers settle_new_socket_buffer_is_growth
		inside_map inside_queue inside_record inside_pdict inside_handlers inside_heap
		inside_silent inside_spawn
		erlang_clean_passes erlang_leak_ets_fails erlang_leak_state_fails erlang_leak_procs_fails
		erlang_eunit_failure_fails erlang_init_per_suite_fails erlang_no_compile_is_error)
fi
bash tests/e2e/run.sh "${CASES[@]}"
rc=$?
left=$(ours)
if [ -n "$left" ]; then
	echo "compat: FAIL: processes left running in the chroot: $left"
	echo "e2e: 0 passed, 1 failed (leftovers)"
	rc=1
fi
exit "$rc"
