#!/bin/sh
# tests/lint/history.sh: the code and the product's text say why, not which work item: no
# tracked file but CHANGELOG.md (where the history lives) cites a work item by number (the
# word issue followed by its number). The repository has no tracker to follow such a number
# to, and a reader needs the reason in the present tense.
# usage: sh tests/lint/history.sh [FILE...]   (default: git ls-files); exit 1 names each line
set -u

# split by a character class, so that this file does not match itself
cite='[I]ssues?([[:space:]]+|-)#?[0-9]+'

. "$(dirname "$0")/text_files.sh"
[ $# -gt 0 ] || cd "$(dirname "$0")/../.." || exit 2
files=$(text_files history '^CHANGELOG\.md$' "$@") || exit 2

bad=0
checked=0
for f in $files; do
	checked=$((checked + 1))
	grep -niE "$cite" "$f" | while IFS= read -r hit; do
		echo "history: $f:${hit%%:*}: cites a work item by number (${hit#*:}): say the reason instead; the history goes in CHANGELOG.md" >&2
	done
	grep -qiE "$cite" "$f" && bad=1
done
[ "$bad" -eq 0 ] && echo "history: ok ($checked text files, none cites a work item by number)"
exit "$bad"
