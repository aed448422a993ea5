#!/bin/sh
# tests/lint/docs.sh: the user documentation (README.md, docs/*.md, CONTRIBUTING.md) holds what
# a newcomer relies on:
# - a CI file quoted in the docs is quoted whole and byte for byte, under a marker line
#   <!-- quote: PATH --> right above its fenced block, and a fenced block that opens with a
#   CI file's own first line (# PATH: ...) carries that marker, so that no copy drifts from the
#   file the tests run;
# - the README fits on one screen (under 200 lines) and its sh blocks keep exactly the two
#   set-up commands, make demo and make test, and .ci/run runs make test;
# - every relative link names a file that exists, and an anchor into a Markdown file names
#   one of its headings (GitHub's slugs);
# - examples call gate or mix gate, not build/gate (CONTRIBUTING.md may);
# - no development history: no work item by number, no account of who worked where.
# docs/configuration.md and docs/findings.md are generated from the code and checked for
# links only.
# usage: sh tests/lint/docs.sh   (from anywhere in the checkout); exit 1 names each problem
set -u
cd "$(dirname "$0")/../.." || exit 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gate-docs-lint.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
: >"$tmp/problems"
problem() { echo "docs: $*" >>"$tmp/problems"; }

files="README.md CONTRIBUTING.md"
for f in docs/*.md; do [ -f "$f" ] && files="$files $f"; done
for f in README.md CONTRIBUTING.md; do [ -f "$f" ] || problem "$f is missing"; done
generated='docs/configuration.md docs/findings.md'
is_generated() { case " $generated " in *" $1 "*) return 0 ;; esac; return 1; }

# slugs FILE: the anchors GitHub makes for FILE's headings, one a line (lowercased; all but
# letters, digits, spaces, '-' and '_' dropped; spaces made '-'; a repeated one gets -1, -2...)
slugs() {
	awk '
		/^[[:space:]]*(```|~~~)/ { fence = !fence; next }
		fence || !/^#+[[:space:]]/ { next }
		{
			h = $0
			sub(/^#+[[:space:]]+/, "", h); sub(/[[:space:]]+#*[[:space:]]*$/, "", h)
			h = tolower(h)
			gsub(/[^a-z0-9 _-]/, "", h)
			gsub(/ /, "-", h)
			s = h
			if (h in seen) s = h "-" seen[h]
			seen[h]++
			print s
		}' "$1"
}

for f in $files; do
	dir=$(dirname "$f")

	# the quoted CI files, byte for byte
	grep -n '^<!-- quote: [^ ]* -->$' "$f" | while IFS=: read -r n line; do
		path=$(printf '%s' "$line" | sed 's/^<!-- quote: \([^ ]*\) -->$/\1/')
		if [ ! -f "$path" ]; then
			problem "$f:$n: quotes $path, which does not exist"
			continue
		fi
		open=$((n + 1))
		sed -n "${open}p" "$f" | grep -q '^```' || { problem "$f:$n: no fenced block right below the quote marker of $path"; continue; }
		close=$(awk -v from="$open" 'NR > from && /^```[[:space:]]*$/ { print NR; exit }' "$f")
		[ -n "$close" ] || { problem "$f:$open: the fenced block quoting $path is not closed"; continue; }
		sed -n "$((open + 1)),$((close - 1))p" "$f" >"$tmp/quote"
		if ! cmp -s "$tmp/quote" "$path"; then
			at=$(diff "$path" "$tmp/quote" | sed -n '1s/^\([0-9]*\).*/\1/p')
			problem "$f:$((open + 1)): the quote of $path differs from the file (first at its line ${at:-?}): copy the file whole"
		fi
	done
	awk -v f="$f" '
		/^```/ {
			if (!fence) { fence = 1; start = NR; marked = (prev ~ /^<!-- quote: /); first = 1; next }
			fence = 0; next
		}
		fence && first {
			first = 0
			if (!marked && match($0, /^# [A-Za-z0-9_.\/-]+\.(yml|yaml|sh):/)) {
				p = substr($0, 3, RLENGTH - 3)
				print f ":" start ": a fenced block opens with " p "'"'"'s first line but has no <!-- quote: " p " --> marker above it"
			}
		}
		{ prev = $0 }' "$f" >>"$tmp/problems.raw"

	# relative links and their anchors (outside code)
	awk '
		/^[[:space:]]*(```|~~~)/ { fence = !fence; next }
		fence { next }
		{
			line = $0
			gsub(/`[^`]*`/, "", line)
			while (match(line, /\]\([^)[:space:]]+\)/)) {
				print NR "\t" substr(line, RSTART + 2, RLENGTH - 3)
				line = substr(line, RSTART + RLENGTH)
			}
		}' "$f" | while IFS="$(printf '\t')" read -r n target; do
		case "$target" in http://* | https://* | mailto:*) continue ;; esac
		path=${target%%#*}
		anchor=""
		case "$target" in *'#'*) anchor=${target#*#} ;; esac
		if [ -z "$path" ]; then
			tgt=$f
		else
			tgt="$dir/$path"
			[ "$dir" != . ] || tgt=$path
			if [ ! -e "$tgt" ]; then
				problem "$f:$n: links to $path, which does not exist"
				continue
			fi
		fi
		[ -n "$anchor" ] || continue
		case "$tgt" in *.md) ;; *) continue ;; esac
		slugs "$tgt" | grep -qxF -- "$anchor" || problem "$f:$n: links to #$anchor, which is no heading of $tgt"
	done

	is_generated "$f" && continue

	# examples call the installed gate
	if [ "$f" != CONTRIBUTING.md ]; then
		grep -nE '(^|[^_[:alnum:]])build/gate( |$)' "$f" | while IFS=: read -r n _; do
			problem "$f:$n: shows build/gate: examples for users call gate or mix gate (CONTRIBUTING.md may use build/gate)"
		done
	fi

	# no development history (split by a character class, so that this file does not match)
	grep -niE '[I]ssues?([[:space:]]+|-)#?[0-9]+|other engineers|[w]orkplace' "$f" | while IFS=: read -r n _; do
		problem "$f:$n: development history (a work item by number, who worked where): say the reason in the present tense; history goes in CHANGELOG.md"
	done
done
[ ! -s "$tmp/problems.raw" ] || sed 's/^/docs: /' "$tmp/problems.raw" >>"$tmp/problems"

# the README: one screen, and its two set-up commands
if [ -f README.md ]; then
	lines=$(wc -l <README.md)
	[ "$lines" -lt 200 ] || problem "README.md: $lines lines: keep it under 200 (one screen); move the rest to docs/"
	makes=$(awk '/^```/ { sh = !sh && ($0 ~ /^```(sh|bash|shell)[[:space:]]*$/); next } sh && /^[[:space:]]*make([[:space:]]|$)/' README.md |
		sed 's/[[:space:]]*#.*$//; s/^[[:space:]]*//' | tr '\n' ';')
	[ "$makes" = "make demo;make test;" ] ||
		problem "README.md: its sh blocks must keep exactly the two set-up commands make demo and make test (found: ${makes:-none})"
fi
grep -q 'make test' .ci/run 2>/dev/null || problem ".ci/run no longer runs make test, the README's test command"

if [ -s "$tmp/problems" ]; then
	cat "$tmp/problems" >&2
	exit 1
fi
echo "docs: ok ($(echo $files | wc -w) files: quotes byte for byte, links and anchors resolve, README $(wc -l <README.md) lines)"
