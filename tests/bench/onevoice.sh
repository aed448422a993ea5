#!/usr/bin/env bash
# tests/bench/onevoice.sh: one leak, one voice, measured: for each kind of single leak of
# tests/fixtures/onevoice, the failing memory testcases and ::error annotations, in the
# merge-request configuration (a baseline committed from a clean run in a temp git
# repository, then --baseline-ref and GITHUB_ACTIONS=true) and without a baseline.
#   sh tests/bench/onevoice.sh [GATE_BINARY]      (default build/gate; e.g. an older build's)
# Prints one row per kind and configuration: "KIND CONFIG failures=N annotations=M". Leaves
# nothing behind.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
gate=${1:-$root/build/gate}
fix=$root/tests/fixtures/onevoice
cap='[[ets.table]]\nname = "onevoice_*"\nmax_bytes = "2 MB"\n'

# measure KIND MODE LABEL [TOML]
measure() {
	local kind=$1 mode=$2 label=$3 toml=${4:-} w base
	w=$(mktemp -d "${TMPDIR:-/tmp}/gate-onevoice.XXXXXX")
	cp -r "$fix/." "$w/"
	[ -n "$toml" ] && printf '%b' "$toml" >"$w/gate.toml"
	(cd "$w" && git init -q -b main && git config user.name onevoice &&
		git config user.email onevoice@gate.invalid && git add -A && git commit -qm p)
	if [ "$mode" = mr ]; then
		"$gate" run -q -C "$w" --update-baseline --commit >/dev/null 2>&1
		base=$(git -C "$w" rev-parse HEAD)
		GITHUB_ACTIONS=true GITHUB_WORKSPACE="$w" "$gate" run -C "$w" --baseline-ref "$base" \
			-- --only "$kind" >"$w/out" 2>/dev/null
	else
		rm -rf "$w/.git"
		GITHUB_ACTIONS=true GITHUB_WORKSPACE="$w" "$gate" run -C "$w" -- --only "$kind" \
			>"$w/out" 2>/dev/null
	fi
	echo "$label $mode failures=$(grep -c '<failure ' "$w/_build/gate/junit.xml") annotations=$(grep -c '^::error' "$w/out")"
	rm -rf "$w"
}

for mode in mr plain; do
	for k in ets pterm atoms binary procs mailbox state tables ports monitors; do
		measure "$k" "$mode" "$k"
	done
	measure ets "$mode" ets-cap "$cap"
done
