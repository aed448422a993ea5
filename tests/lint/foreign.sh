#!/bin/sh
# tests/lint/foreign.sh: every tracked file is the project's own. A file whose opening lines
# carry a copyright notice or a licence header is another project's code or a copy of a
# third-party file (an upstream suite, a schema): real projects and such files live on the
# machine, outside the repository (CONTRIBUTING.md, "Real projects"), never in a commit.
#
# The project's own notice (a line naming "the gate authors") is allowed, and so is the
# project's licence: the MIT text naming the gate authors, in exactly two files, LICENSE at the
# root and the Mix package's copy, integrations/mix/LICENSE, each byte for byte that text (its
# SHA-256 below). Any other text in those two files, and any licence file elsewhere (LICENSE,
# LICENCE, COPYING, NOTICE), is refused. Every text file is read whole: a copied README or
# module carries its notice at the end as often as at the top.
# usage: sh tests/lint/foreign.sh [FILE...]   (default: git ls-files); exit 1 names each file
set -u

# the patterns are split by character classes, so that this file does not match itself
notice='([Cc]opyright[[:space:]]+(\([Cc]\)|©|[0-9]{4})|[Ll]icensed[[:space:]]under[[:space:]]the|SPDX-License-[I]dentifier|Permission[[:space:]]is[[:space:]]hereby[[:space:]]granted|GNU[[:space:]](Lesser[[:space:]])?General[[:space:]]Public[[:space:]]License|All[[:space:]]rights[[:space:]]reserved)'
ours='the gate authors'
licence_files='LICENSE integrations/mix/LICENSE'
licence_sha256=23a75abb7be27595e91958da736eb52edf863210957ef2d8dbd8d7d25afe76dc

. "$(dirname "$0")/text_files.sh"
[ $# -gt 0 ] || cd "$(dirname "$0")/../.." || exit 2
files=$(text_files foreign '' "$@") || exit 2

bad=0
checked=0
for f in $files; do
	checked=$((checked + 1))
	path=${f#./}
	case " $licence_files " in
	*" $path "*)
		sum=$(sha256sum <"$f") && [ "${sum%% *}" = "$licence_sha256" ] && continue
		echo "foreign: $f: is not the project's licence, the MIT text naming the gate authors: write it back as it is in the repository's LICENSE (both copies are the same text)" >&2
		bad=1
		continue
		;;
	esac
	case "${path##*/}" in
	LICENSE | LICENSE.* | LICENCE | LICENCE.* | COPYING | COPYING.* | NOTICE | NOTICE.* | UNLICENSE)
		echo "foreign: $f: a licence file: the project's licence is LICENSE at the root and its copy integrations/mix/LICENSE, and no other file may carry one (a third-party file stays outside the repository, CONTRIBUTING.md, Real projects)" >&2
		bad=1
		continue
		;;
	esac
	hit=$(grep -nE "$notice" "$f" | grep -vF "$ours" | head -n 1)
	if [ -n "$hit" ]; then
		echo "foreign: $f:${hit%%:*}: carries another project's copyright or licence (${hit#*:}): keep upstream code and third-party files outside the repository (CONTRIBUTING.md, Real projects)" >&2
		bad=1
	fi
done
[ "$bad" -eq 0 ] && echo "foreign: ok ($checked text files, none carries another project's notice)"
exit "$bad"
