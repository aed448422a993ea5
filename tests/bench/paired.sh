#!/bin/sh
# tests/bench/paired.sh: gate's fixed cost as paired differences, for a machine whose speed
# drifts between runs (this one's bare `mix test` of one suite varied by 25 % within minutes).
#
# Each round runs bare `MIX_ENV=test mix test` in DIR and `gate run -q -C DIR` with each
# GATE binary given, one after the other, the order rotating from round to round. Each gate
# run is compared with the bare run of its own round (its wall time less bare's, and their
# ratio), so that what moves the machine's speed between rounds cancels out; it prints, per
# binary, the median difference with its quartiles and the median ratio, then bare's median.
#
# usage: tests/bench/paired.sh ROUNDS DIR GATE...
#   e.g. tests/bench/paired.sh 20 /tmp/suite build/gate /tmp/gate-before
# DIR is a compiled Mix project whose suite passes; nothing is left behind but its _build/gate.
set -u
[ $# -ge 3 ] || { echo "usage: tests/bench/paired.sh ROUNDS DIR GATE..." >&2; exit 2; }
rounds=$1 dir=$2
shift 2
case "$rounds" in
'' | *[!0-9]* | 0) echo "paired bench: error: ROUNDS is a positive number, got '$rounds'" >&2; exit 2 ;;
esac
[ -f "$dir/mix.exs" ] || { echo "paired bench: error: $dir has no mix.exs" >&2; exit 2; }
for g in "$@"; do
	[ -x "$g" ] || { echo "paired bench: error: $g is not an executable gate" >&2; exit 2; }
done
export MIX_ENV=test
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"
n=$#
i=0
while [ "$i" -lt "$rounds" ]; do
	# the kinds in this round's order: bare first, last, or in between, in turn
	k=0 line=""
	while [ "$k" -le "$n" ]; do
		j=$(((k + i) % (n + 1)))
		if [ "$j" -eq 0 ]; then
			t=$(now_ms)
			(cd "$dir" && mix test >/dev/null 2>&1) ||
				{ echo "paired bench: error: bare mix test failed in $dir" >&2; exit 2; }
			line="$line 0=$(($(now_ms) - t))"
		else
			eval "g=\${$j}"
			t=$(now_ms)
			"$g" run -q -C "$dir" >/dev/null 2>&1
			rc=$?
			[ "$rc" -eq 0 ] || { echo "paired bench: error: $g exited $rc on $dir" >&2; exit 2; }
			line="$line $j=$(($(now_ms) - t))"
		fi
		k=$((k + 1))
	done
	echo "$line"
	i=$((i + 1))
done | awk -v names="$*" '
function sort(a, m,   x, y, q) { for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] < a[x]) { q = a[x]; a[x] = a[y]; a[y] = q } }
{
	for (f = 1; f <= NF; f++) { split($f, kv, "="); t[kv[1]] = kv[2] }
	nb++; b[nb] = t[0]
	for (k in t) if (k != 0) { c[k]++; d[k, c[k]] = t[k] - t[0]; r[k, c[k]] = t[k] / t[0] }
}
END {
	split(names, name, " ")
	for (k = 1; k in c; k++) {
		m = c[k]
		for (a = 1; a <= m; a++) { x[a] = d[k, a]; y[a] = r[k, a] }
		sort(x, m); sort(y, m)
		printf "%s: gate - bare median %+d ms (quartiles %+d, %+d), gate/bare median %.3f over %d rounds\n",
			name[k], x[int((m + 1) / 2)], x[int((m + 3) / 4)], x[int((3 * m + 1) / 4)], y[int((m + 1) / 2)], m
	}
	sort(b, nb)
	printf "bare mix test: median %d ms\n", b[int((nb + 1) / 2)]
}'
