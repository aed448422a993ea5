#!/bin/sh
# tests/lint/layout.sh: the house layout, checked (make lint, run by .ci/run):
#   - includes run one way, down the rooms: gate/ (from the commands down: cmd -> run ->
#     probe -> node -> config, with gate/*.h (exit, error, version) under all) -> ci/git ->
#     ci/store -> ci/report -> judge -> rules -> model -> base; every include names its folder from
#     the repository's root ("model/finding.h", never "finding.h");
#   - no include circle between modules (X.c and X.h are one module);
#   - no source file (C, Erlang, shell, JavaScript, YAML, the Makefile) over 1000 lines;
#   - no C function over 150 lines.
# Prints every breach with its place and exits 1, or prints a one-line summary and exits 0.
set -u
cd "$(dirname "$0")/../.." || exit 2
fail=0
say() { echo "layout: $*" >&2; fail=1; }

# the rank of a file's layer: a file may include only its own rank or lower
rank() {
	case "$1" in
	base/*) echo 0 ;;
	model/*) echo 1 ;;
	rules/*) echo 2 ;;
	judge/*) echo 3 ;;
	ci/report/*) echo 4 ;;
	ci/store/*) echo 5 ;;
	ci/git/*) echo 6 ;;
	gate/*/*)
		case "$1" in
		gate/config/*) echo 8 ;;
		gate/node/*) echo 9 ;;
		gate/probe/*) echo 10 ;;
		gate/run/*) echo 11 ;;
		gate/cmd/*) echo 12 ;;
		*) echo 99 ;;
		esac ;;
	gate/main.c) echo 13 ;;
	gate/*) echo 7 ;; # exit.h, error.h, version.h: above ci/, under every room of gate/
	*) echo 99 ;;
	esac
}

SRC=$(find base model rules judge ci gate -name '*.[ch]' 2>/dev/null | sort)
for f in $SRC; do
	grep -n '^#include "[^/"]*"' "$f" | while IFS= read -r hit; do
		echo "layout: $f:${hit%%:*}: ${hit#*:}: name the header's folder from the repository's root" >&2
	done
	grep '^#include "[^/"]*"' "$f" && fail=1
done
EDGES=$(mktemp)
trap 'rm -f "$EDGES"' EXIT
for f in $SRC; do
	dir=$(dirname "$f")
	grep -o '^#include "[^"]*"' "$f" | sed 's/^#include "//; s/"$//' | while read -r inc; do
		if [ -f "$inc" ]; then t=$inc
		elif [ -f "$dir/$inc" ]; then t=$dir/$inc
		else continue # generated (probe_blob) or a system header in quotes
		fi
		echo "$f $t"
	done
done >"$EDGES"

while read -r from to; do
	rf=$(rank "$from"); rt=$(rank "$to")
	if [ "$rt" -gt "$rf" ]; then say "$from includes $to: an upward include (gate/cmd -> gate/run -> gate/probe -> gate/node -> gate/config -> ci/git -> ci/store -> ci/report -> judge -> rules -> model -> base)"; fi
done <"$EDGES"

# module-level circles: X.c/X.h as module X; depth-first search for a back edge
awk '{ a=$1; b=$2; sub(/\.[ch]$/, "", a); sub(/\.[ch]$/, "", b); if (a != b) print a, b }' "$EDGES" | sort -u |
awk '
	{ adj[$1] = adj[$1] " " $2; nodes[$1] = 1; nodes[$2] = 1 }
	function dfs(n,   i, k, m, parts) {
		state[n] = 1; stack[++sp] = n
		k = split(adj[n], parts, " ")
		for (i = 1; i <= k; i++) {
			m = parts[i]
			if (state[m] == 1) { cyc = m; for (j = sp; j >= 1 && stack[j] != m; j--) cyc = stack[j] " -> " cyc; print "an include circle: " m " -> " cyc; bad = 1 }
			else if (state[m] == 0) dfs(m)
		}
		state[n] = 2; sp--
	}
	END { for (n in nodes) if (state[n] == 0) dfs(n); exit bad }
' >&2 || { echo "layout: (above) modules that include each other: move what both need to a lower module" >&2; fail=1; }

SCRIPTS=$(find gate tests integrations .ci Makefile \( -name node_modules -o -name fixtures \) -prune -o -type f \( -name '*.sh' -o -name '*.js' -o -name '*.yml' -o -name run -o -name Makefile \) -print | sort)
for f in $SRC $(find gate -name '*.erl' | sort) $(find tests -name '*.[ch]' ! -path '*/fixtures/*' | sort) $SCRIPTS; do
	n=$(wc -l <"$f")
	[ "$n" -le 1000 ] || say "$f has $n lines, over 1000: split it by concern"
done

# C functions (collected first, so that a breach sets fail in this shell); a
# definition starts at column 0 with an identifier and "(", its body opens with
# "{" alone at column 0 (the house style, .clang-format's Linux braces) and ends at "}" there
LONG=$(for f in $SRC; do
	awk -v F="$f" '
		/^[A-Za-z_][^;]*\(/ && !/^(static )?(const )?(struct|enum|union) [a-z_]+ *\{/ { cand = $0; cl = NR }
		/^\{/ && cl && NR - cl < 8 { start = cl; name = cand; infn = 1; cl = 0 }
		/^\}/ && infn { n = NR - start + 1; sub(/\(.*/, "", name); k = split(name, p, /[ *]+/);
			if (n > 150) printf "layout: %s:%d: %s is %d lines, over 150: split it into steps\n", F, start, p[k], n; infn = 0 }
	' "$f"
done)
if [ -n "$LONG" ]; then
	echo "$LONG" >&2
	fail=1
fi

[ $fail = 0 ] && echo "layout: ok ($(echo "$SRC" | wc -w) C files, $(wc -l <"$EDGES") includes)"
exit $fail
