#!/bin/sh
# tests/lint/generated_docs.sh: the pages gate writes about itself are current: each is the
# output of the command that generates it, byte for byte, so that the docs cannot drift from
# the code (docs/findings.md: the rules' explanations; docs/configuration.md: every key of
# gate.toml, when the command exists). Needs build/gate (GATE_BUILD: the build directory).
set -u
gate=${GATE_BUILD:-build}/gate
[ -x "$gate" ] || { echo "generated_docs: error: $gate is missing: run make first" >&2; exit 1; }
bad=0
check() { # FILE COMMAND...
	file=$1
	shift
	tmp=$(mktemp)
	if ! "$gate" "$@" >"$tmp" 2>/dev/null; then
		rm -f "$tmp"
		echo "generated_docs: error: gate $* failed" >&2
		bad=1
		return
	fi
	if ! cmp -s "$tmp" "$file"; then
		echo "generated_docs: $file is stale: run \`$gate $* > $file\`" >&2
		bad=1
	fi
	rm -f "$tmp"
}
check docs/findings.md explain --markdown
if "$gate" config reference >/dev/null 2>&1; then
	check docs/configuration.md config reference
fi
[ $bad -eq 0 ] && echo "generated_docs: ok (the generated pages match their commands)"
exit $bad
