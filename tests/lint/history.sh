#!/bin/sh
# tests/lint/history.sh: the code and the product's text say why, not which work item: no
# tracked file but CHANGELOG.md (where the history lives) cites a work item by number (the
# word issue followed by its number). The repository has no tracker to follow such a number
# to, and a reader needs the reason in the present tense.
# usage: sh tests/lint/history.sh [FILE...]   (default: git ls-files); exit 1 names each line
set -u

# split by a character class, so that this file does not match itself
cite='[I]ssues?([[:space:]]+|-)#?[0-9]+'

if [ $# -gt 0 ]; then
	files=$(printf '%s\n' "$@")
elif cd "$(dirname "$0")/../.." && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files | grep -v '^CHANGELOG\.md$')
else
	echo "history: error: not a git checkout and no files given: run it from the repository" >&2
	exit 2
fi

bad=0
checked=0
for f in $files; do
	[ -f "$f" ] || continue
	checked=$((checked + 1))
	grep -Iq . "$f" 2>/dev/null || continue # binary or empty
	grep -niE "$cite" "$f" | while IFS= read -r hit; do
		echo "history: $f:${hit%%:*}: cites a work item by number (${hit#*:}): say the reason instead; the history goes in CHANGELOG.md" >&2
	done
	grep -qiE "$cite" "$f" && bad=1
done
[ "$bad" -eq 0 ] && echo "history: ok ($checked tracked files, none cites a work item by number)"
exit "$bad"
