#!/bin/sh
# tests/lint/foreign.sh: every tracked file is the project's own. A file whose opening lines
# carry a copyright notice or a licence header is another project's code or a copy of a
# third-party file (an upstream suite, a schema): real projects and such files live on the
# machine, outside the repository (CONTRIBUTING.md, "Real projects"), never in a commit.
#
# The project's own notice (a line naming "the gate authors") is allowed, and so is its
# licence: LICENSE at the root (MIT, "Copyright (c) YEAR the gate authors") may carry MIT's
# grant, and so may the Mix package's copy of it (integrations/mix/LICENSE: a Hex package
# carries only its own directory), which must be the root's byte for byte. Any other notice
# in them, and MIT's grant anywhere else, is refused as in every other file. Every text file
# is read whole: a copied README or module carries its notice at the end as often as at the
# top.
# usage: sh tests/lint/foreign.sh [FILE...]   (default: git ls-files); exit 1 names each file
set -u

# the patterns are split by character classes, so that this file does not match itself
notice='([Cc]opyright[[:space:]]+(\([Cc]\)|©|[0-9]{4})|[Ll]icensed[[:space:]]under[[:space:]]the|SPDX-License-[I]dentifier|Permission[[:space:]]is[[:space:]]hereby[[:space:]]granted|GNU[[:space:]](Lesser[[:space:]])?General[[:space:]]Public[[:space:]]License|All[[:space:]]rights[[:space:]]reserved)'
ours='the gate authors'
# MIT's grant, the one notice line of our LICENSE that does not name us; and where it may be
grant='Permission is hereby [g]ranted, free of charge, to any person obtaining a copy'
licence_files='LICENSE integrations/mix/LICENSE'

. "$(dirname "$0")/text_files.sh"
[ $# -gt 0 ] || cd "$(dirname "$0")/../.." || exit 2
files=$(text_files foreign '' "$@") || exit 2

bad=0
checked=0
for f in $files; do
	checked=$((checked + 1))
	hits=$(grep -nE "$notice" "$f" | grep -vF "$ours")
	case " $licence_files " in
	*" $f "*)
		hits=$(printf '%s\n' "$hits" | grep -vE "^[0-9]+:$grant\$")
		if [ "$f" != LICENSE ] && ! cmp -s "$f" LICENSE; then
			echo "foreign: $f: is not the repository's LICENSE byte for byte: copy it again (cp LICENSE $f)" >&2
			bad=1
		fi
		;;
	esac
	hit=$(printf '%s\n' "$hits" | sed '/^$/d' | head -n 1)
	if [ -n "$hit" ]; then
		echo "foreign: $f:${hit%%:*}: carries another project's copyright or licence (${hit#*:}): keep upstream code and third-party files outside the repository (CONTRIBUTING.md, Real projects)" >&2
		bad=1
	fi
done
[ "$bad" -eq 0 ] && echo "foreign: ok ($checked text files, none carries another project's notice)"
exit "$bad"
