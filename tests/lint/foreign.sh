#!/bin/sh
# tests/lint/foreign.sh: every tracked file is the project's own. A file whose opening lines
# carry a copyright notice or a licence header is another project's code or a copy of a
# third-party file (an upstream suite, a schema): real projects and such files live on the
# machine, outside the repository (CONTRIBUTING.md, "Real projects"), never in a commit.
#
# The project's own notice (a line naming "the gate authors") is allowed. Every text file is
# read whole: a copied README or module carries its notice at the end as often as at the top.
# usage: sh tests/lint/foreign.sh [FILE...]   (default: git ls-files); exit 1 names each file
set -u

# the patterns are split by character classes, so that this file does not match itself
notice='([Cc]opyright[[:space:]]+(\([Cc]\)|©|[0-9]{4})|[Ll]icensed[[:space:]]under[[:space:]]the|SPDX-License-[I]dentifier|Permission[[:space:]]is[[:space:]]hereby[[:space:]]granted|GNU[[:space:]](Lesser[[:space:]])?General[[:space:]]Public[[:space:]]License|All[[:space:]]rights[[:space:]]reserved)'
ours='the gate authors'

. "$(dirname "$0")/text_files.sh"
[ $# -gt 0 ] || cd "$(dirname "$0")/../.." || exit 2
files=$(text_files foreign '' "$@") || exit 2

bad=0
checked=0
for f in $files; do
	checked=$((checked + 1))
	hit=$(grep -nE "$notice" "$f" | grep -vF "$ours" | head -n 1)
	if [ -n "$hit" ]; then
		echo "foreign: $f:${hit%%:*}: carries another project's copyright or licence (${hit#*:}): keep upstream code and third-party files outside the repository (CONTRIBUTING.md, Real projects)" >&2
		bad=1
	fi
done
[ "$bad" -eq 0 ] && echo "foreign: ok ($checked text files, none carries another project's notice)"
exit "$bad"
