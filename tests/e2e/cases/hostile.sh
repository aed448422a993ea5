# tests/e2e/cases/hostile.sh: `gate merge` of result files shaped by whoever could upload a CI
# job's artifact: real partition results (a real gate run per partition of a fixture) cut short,
# with wrong types, negative and huge figures, a key twice, nesting past any depth, and a file
# over the cap. Each is refused with exit 2 naming the file and the field; nothing is written
# and no baseline is committed. Sourced by tests/e2e/run.sh (uses merge.sh's helpers).

# hostile_refused DIR FILE TEXT: merging DIR's first result with FILE, baselines and their
# commit asked for, is refused naming FILE and TEXT, and leaves DIR as it was
hostile_refused() {
	local d=$1 f=$2 text=$3 head
	head=$(git -C "$d" rev-parse HEAD)
	run_gate merge -C "$d" "$d/_build/r1.json" "$f" --update-baseline --commit \
		--json "$d/_build/merged.json" --summary "$d/_build/summary.md"
	expect_rc 2
	expect_in "$ERR" "$f"
	expect_in "$ERR" "$text"
	local out
	for out in "$d/_build/gate/junit.xml" "$d/_build/merged.json" "$d/_build/summary.md" "$d/.gate"; do
		[ ! -e "$out" ] || fail "$(basename "$f"): a refused merge wrote $out"
	done
	[ "$(git -C "$d" rev-parse HEAD)" = "$head" ] || fail "$(basename "$f"): a refused merge committed"
	[ -z "$(git -C "$d" notes --ref=refs/notes/gate list 2>/dev/null)" ] ||
		fail "$(basename "$f"): a refused merge wrote a note"
}

case_merge_hostile_files() {
	local d h; d=$(git_fixture partitioned)
	h=$(mktemp -d "$WORK/hostile.XXXXXX")
	echo "_build/" >"$d/.gitignore"
	git_in "$d" add .gitignore >/dev/null
	git_in "$d" commit -q -m "ignore _build" >/dev/null
	merge_partitions "$d" 2
	[ "$MERGE_RCS" = "0 0" ] || fail "the partitions' runs exited $MERGE_RCS, expected 0 0"
	local r2=$d/_build/r2.json
	rm -f "$d/_build/gate/junit.xml"
	# cut short, as an upload that stopped
	head -c "$(($(stat -c %s "$r2") * 2 / 3))" "$r2" >"$h/truncated.json"
	hostile_refused "$d" "$h/truncated.json" "the result is cut short"
	# wrong types: a string for a line number, a number for the verdict, an object for a list
	json_edit "$r2" "$h/line_string.json" 'd["tests"]["cases"][0]["line"] = "12"'
	hostile_refused "$d" "$h/line_string.json" '"tests.cases[0].line" is not an integer in range'
	json_edit "$r2" "$h/verdict_number.json" 'd["verdict"] = 1'
	hostile_refused "$d" "$h/verdict_number.json" '"verdict" is not "passed" or "failed"'
	json_edit "$r2" "$h/findings_object.json" 'd["findings"] = {"rule": "growth"}'
	hostile_refused "$d" "$h/findings_object.json" '"findings" is not a list'
	# negative figures
	json_edit "$r2" "$h/negative_memory.json" 'd["after"]["memory"]["ets"] = -4096'
	hostile_refused "$d" "$h/negative_memory.json" '"after.memory.ets" is not a byte count'
	json_edit "$r2" "$h/negative_time.json" 'd["tests"]["cases"][1]["time_us"] = -5'
	hostile_refused "$d" "$h/negative_time.json" '"tests.cases[1].time_us" is not an integer in range'
	json_edit "$r2" "$h/negative_partition.json" 'd["partition"]["k"] = -1'
	hostile_refused "$d" "$h/negative_partition.json" '"partition.k" is not an integer in range'
	# huge figures: beyond the model's range, beyond int64, beyond a double
	json_edit "$r2" "$h/huge_after.json" 'd["findings"][0]["after"] = 2**63 - 1'
	hostile_refused "$d" "$h/huge_after.json" '"findings[0].after" is not an integer in range'
	json_edit "$r2" "$h/huge_seed.json" 'd["tests"]["seed"] = 2**64'
	hostile_refused "$d" "$h/huge_seed.json" "too big integer near '18446744073709551616'"
	sed 's/"started": [0-9]*/"started": 1e400/' "$r2" >"$h/huge_real.json"
	hostile_refused "$d" "$h/huge_real.json" "real number overflow"
	# a key twice: the first or the last would each be a different result
	sed 's/"verdict": "passed"/"verdict": "passed", "verdict": "failed"/' "$r2" >"$h/duplicate.json"
	hostile_refused "$d" "$h/duplicate.json" "duplicate object key"
	# nesting deeper than any result has
	python3 -c 'import sys; t = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(t[:-2] + ", \"x\": " + "[" * 100000 + "]" * 100000 + "}\n")' \
		"$r2" "$h/deep.json"
	hostile_refused "$d" "$h/deep.json" "maximum parsing depth"
	# over the cap, the size said before a byte is read
	truncate -s 65M "$h/huge_file.json"
	hostile_refused "$d" "$h/huge_file.json" "more than the 67108864 bytes a result may have"
	# the real results still merge, and commit
	run_gate merge -C "$d" "$d/_build/r1.json" "$r2" --update-baseline --commit
	expect_rc 0
	expect_in "$OUT" "the baselines of 2 partitions"
	rm -rf "$h"
	no_leftovers "$d"
}
