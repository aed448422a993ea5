#!/bin/bash
# tests/bench/findings_compare.sh OLD NEW [CASE...]: what two gate builds say on the fixtures,
# compared: for a change meant to leave the findings' words alone (a refactor of the judge or
# the writers), every failing finding of every case must read the same, figures aside.
#
# Each CASE is FIXTURE or "FIXTURE|GATE OPTIONS -- MIX TEST ARGS" (default: a set of the
# fixtures with planted leaks of every kind, and clean ones). Both builds run each case on a
# copy of the fixture of their own (mix test --seed 0), with --json, --summary and --html;
# the failing findings of the two --json files are compared with their figures masked (sizes,
# counts, pids, percentages: real runs measure slightly different bytes each time), and each
# case prints SAME or DIFF with the findings only one build gave; the writers' whole outputs
# (the console, the JUnit file, the step summary, the HTML report) are compared the same way,
# their lines sorted (a ranking may reorder when figures differ). Outputs stay in the work
# directory it prints (removed when every case is the same). Exit 0 when all are the same.
# A figure's own variation between runs can still change a sentence (which evidence names a
# culprit): run a DIFF case again with each build to tell.
set -u
old=${1:?usage: findings_compare.sh OLD_GATE NEW_GATE [CASE...]}
new=${2:?usage: findings_compare.sh OLD_GATE NEW_GATE [CASE...]}
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
for b in "$old" "$new"; do
	[ -x "$b" ] || { echo "findings_compare: error: $b is not an executable gate" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "findings_compare: error: python3 is needed" >&2; exit 2; }
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(
	clean failing grows leak_binary leak_ets code_leak consistent oneleak gc_heavy whatgrew tags
	settle "warmup|--repeat 3"
	"attrib|-- --include leak_sync" "attrib|-- --include leak_async"
	"inside|-- --only spawn" "inside|-- --only map" "inside|-- --only agent"
	"inside|-- --only mailbox" "inside|-- --only queue"
	"onevoice|-- --only procs" "onevoice|-- --only ets" "onevoice|-- --only binary_holder"
	"onevoice|-- --only mailbox" "onevoice|-- --only atoms"
	"fairblame|-- --only spread" "fairblame|-- --only one_process")
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-compare.XXXXXX")
export MIX_ENV=test
bad=0
for c in "${cases[@]}"; do
	fx=${c%%|*}
	args=""
	[ "$fx" != "$c" ] && args=${c#*|}
	[ -d "$root/tests/fixtures/$fx" ] || { echo "findings_compare: error: no fixture $fx" >&2; exit 2; }
	id=$(printf '%s %s' "$fx" "$args" | tr -c 'a-z0-9_' '_')
	read -ra a <<<"$args"
	ga=() ma=() seen=0
	for x in "${a[@]}"; do
		if [ "$x" = "--" ]; then seen=1; elif [ $seen = 1 ]; then ma+=("$x"); else ga+=("$x"); fi
	done
	for v in old new; do
		d=$work/$v/$fx
		if [ ! -d "$d" ]; then
			mkdir -p "$work/$v"
			cp -r "$root/tests/fixtures/$fx" "$d"
			(cd "$d" && mix deps.get >/dev/null 2>&1 && mix compile >/dev/null 2>&1)
		fi
		bin=$old
		[ $v = new ] && bin=$new
		o=$work/out/$v/$id
		mkdir -p "$o"
		"$bin" run -q -C "$d" "${ga[@]}" --json "$o/run.json" --summary "$o/summary.md" \
			--html "$o/report.html" -- --seed 0 "${ma[@]}" >"$o/stdout" 2>"$o/stderr"
		echo $? >"$o/rc"
		cp "$d/_build/gate/junit.xml" "$o/junit.xml" 2>/dev/null
	done
	python3 - "$work/out/old/$id" "$work/out/new/$id" "$id" <<'EOF' || bad=1
import json, re, sys
def mask(s):
    s = re.sub(r'/gate-compare\.[A-Za-z0-9]+/(old|new)/', '/W/', s)
    s = re.sub(r'\b(old|new)/', 'W/', s)
    s = re.sub(r'<\d+\.\d+\.\d+>', '<PID>', s)
    s = re.sub(r'[+-]?\d+([.,]\d+)*( \d{3})*', 'N', s)
    return re.sub(r'N (B|kB|MB|GB)\b', 'N U', s)
# what a passing check says and how the rankings order depend on the run's own figures (the
# largest process, the allocator with most waste, the tests that grew most): two runs of one
# build differ there, so the writers' comparison leaves those lines out
# (and, with async modules, which ones overlapped)
VARIES = ('finding-pass', '<system-out>', 'class="grew"', 'class="growing"', 'class="process"',
          '<polyline', '<circle', 'most waste', 'largest: process', 'Top growing', 'grew most',
          'gate.attribution', 'overlapping module')
def failing(d):
    try:
        j = json.load(open(d + '/run.json'))
    except (OSError, ValueError):
        return None
    return [(f.get('rule'), f.get('subject'), mask(f.get('message') or ''))
            for f in j.get('findings') or [] if f.get('verdict') == 'FAIL']
def lines(d, name):
    try:
        text = open(d + '/' + name, errors='replace').read().splitlines()
    except OSError:
        return []
    if name == 'stdout':  # wrapped lines joined: where a line wraps depends on the figures
        joined = []
        for l in text:
            if joined and l.startswith('  ') and not l.lstrip().startswith(('-', '1', '2', '3')):
                joined[-1] += ' ' + l.strip()
            else:
                joined.append(l)
        text = joined
    keep = [l for l in text if not any(v in l for v in VARIES)]
    keep = [l for l in keep if not re.match(r'\s*(- )?\d+\. ', l)]  # a ranking's entries
    if name == 'summary.md':  # the top growing table's rows: a ranking
        keep = [l for l in keep if not re.match(r'\| \d+ \| ', l)]
    return sorted(' '.join(mask(l).split()) for l in keep)
def writers(a, b):
    """the writers' whole outputs, figures masked, as sorted lines (a ranking may reorder)"""
    out = []
    for name in ('stdout', 'junit.xml', 'summary.md', 'report.html'):
        x, y = lines(a, name), lines(b, name)
        if x != y:
            only_x = [l for l in x if l not in y][:3]
            only_y = [l for l in y if l not in x][:3]
            out.append((name, only_x, only_y))
    return out
o, n = failing(sys.argv[1]), failing(sys.argv[2])
rc = [open(d + '/rc').read().strip() for d in sys.argv[1:3]]
w = writers(sys.argv[1], sys.argv[2])
if o == n and rc[0] == rc[1] and not w:
    print('SAME %s: exit %s, %d failing, every writer\'s output the same' % (sys.argv[3], rc[1], len(n or [])))
    sys.exit(0)
print('DIFF %s: exit %s -> %s' % (sys.argv[3], rc[0], rc[1]))
for name, x, y in w:
    print('   %s differs' % name)
    for l in x:
        print('      old: %s' % l[:200])
    for l in y:
        print('      new: %s' % l[:200])
for x in o or []:
    if x not in (n or []):
        print('   old: %s %s: %s' % x)
for x in n or []:
    if x not in (o or []):
        print('   new: %s %s: %s' % x)
sys.exit(1)
EOF
done
if [ $bad -eq 0 ]; then
	rm -rf "$work"
	echo "findings_compare: every case reads the same"
else
	echo "findings_compare: outputs in $work"
fi
exit $bad
