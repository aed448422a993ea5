# tests/bench/stats.sh: the figures every benchmark takes the same way, sourced (POSIX sh) by
# tests/bench/fine.sh, realworld.sh and scale.sh; it defines functions and runs nothing.

# now_ms: the wall clock in milliseconds
now_ms() { date +%s%3N; }

# median: the median of the numbers on stdin, one a line (0 for none)
median() { quartile 2; }

# col FILE N: the median of column N
col() { awk -v n="$2" '{print $n}' "$1" | median; }

# colmin FILE N: the smallest number in column N (0 for none)
colmin() { awk -v n="$2" 'NR == 1 || $n < m {m = $n} END {print m + 0}' "$1"; }

# quartile Q: the Q-th quartile (1, 2: the median, or 3) of the numbers on stdin, one a line,
# interpolated between the two ranks around it (0 for none)
quartile() {
	sort -n | awk -v q="$1" '{a[NR] = $1} END {
		if (NR == 0) { print 0; exit }
		p = q * (NR + 1) / 4
		if (p < 1) p = 1
		if (p > NR) p = NR
		i = int(p)
		f = p - i
		print (f > 0 ? (1 - f) * a[i] + f * a[i + 1] : a[i])
	}'
}
