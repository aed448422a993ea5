# tests/e2e/cases/looseends.sh, sourced by tests/e2e/run.sh: what a careful reviewer checks
# in the first hour: the project's licence and the lint that keeps other projects' notices
# out, make clean all in one command, gate watch's replies matched over distribution, a
# cluster's and a merged run's results whole, and the suite's own epmd and plain arguments
# as under bare mix test.

# tree_copy DIR: the repository's tracked files as they are in the work tree, copied into DIR
tree_copy() {
	(cd "$ROOT" && git ls-files -z | xargs -0 cp -P --parents -t "$1" 2>/dev/null)
}

# The lint (tests/lint/foreign.sh) accepts the project's licence, the MIT text naming the
# gate authors, in exactly its two files, LICENSE and integrations/mix/LICENSE, and refuses a
# changed copy, the same text anywhere else, a licence file of another name and another
# project's notice.
case_licence_lint() {
	local t lint="$ROOT/tests/lint/foreign.sh"
	[ -f "$ROOT/LICENSE" ] || { fail "no LICENSE at the repository's root"; return; }
	cmp -s "$ROOT/LICENSE" "$ROOT/integrations/mix/LICENSE" ||
		fail "integrations/mix/LICENSE is not the root's LICENSE"
	head -n 3 "$ROOT/LICENSE" | grep -qxF "Copyright (c) 2026 the gate authors" ||
		fail "LICENSE does not name the gate authors: $(head -n 3 "$ROOT/LICENSE")"
	grep -q "Permission [i]s hereby granted, free of charge" "$ROOT/LICENSE" || fail "LICENSE is not the MIT text"
	(cd "$ROOT" && sh "$lint" LICENSE integrations/mix/LICENSE) >"$WORK/lic.out" 2>&1 ||
		fail "the lint refuses the project's licence: $(cat "$WORK/lic.out")"
	(cd "$ROOT" && sh "$lint") >"$WORK/lic.out" 2>&1 || fail "the lint refuses the repository: $(cat "$WORK/lic.out")"
	t=$(mktemp -d "$WORK/lic.XXXXXX")
	mkdir -p "$t/integrations/mix" "$t/vendor/x" "$t/src"
	# a word changed, or a year: refused in the licence's own places
	sed 's/the gate authors/the gate authors and others/' "$ROOT/LICENSE" >"$t/LICENSE"
	cp "$ROOT/LICENSE" "$t/integrations/mix/LICENSE"
	printf '\n' >>"$t/integrations/mix/LICENSE"
	# the same text elsewhere, a licence file under another name, a header in a source file
	cp "$ROOT/LICENSE" "$t/vendor/x/LICENSE"
	printf 'Redistribution and use in source and binary forms are permitted.\n' >"$t/vendor/x/COPYING"
	# (the notices are written in two parts, so that this file does not carry them)
	printf '/* %sed under the Apache License, Version 2.0 */\nint x;\n' Licens >"$t/src/a.c"
	printf '# %sright (c) 2019 Someone Else\nx = 1\n' Copy >"$t/src/b.exs"
	printf '# %sright (c) 2026 the gate authors\nx = 1\n' Copy >"$t/src/ours.exs"
	(cd "$t" && sh "$lint" LICENSE integrations/mix/LICENSE vendor/x/LICENSE vendor/x/COPYING src/a.c src/b.exs src/ours.exs) >"$WORK/lic.out" 2>&1
	[ $? -eq 1 ] || fail "the lint passes foreign texts: $(cat "$WORK/lic.out")"
	local f
	for f in LICENSE integrations/mix/LICENSE vendor/x/LICENSE vendor/x/COPYING src/a.c src/b.exs; do
		grep -q "^foreign: $f:" "$WORK/lic.out" || fail "the lint does not refuse $f: $(cat "$WORK/lic.out")"
	done
	expect_not_in "$WORK/lic.out" "src/ours.exs"
	cp "$ROOT/LICENSE" "$t/LICENSE"
	cp "$ROOT/LICENSE" "$t/integrations/mix/LICENSE"
	(cd "$t" && sh "$lint" ./LICENSE integrations/mix/LICENSE src/ours.exs) >"$WORK/lic.out" 2>&1 ||
		fail "the lint refuses the licence in a copy: $(cat "$WORK/lic.out")"
	rm -rf "$t"
}

# make clean all, in one command, also with -j: clean deletes the version header that make
# writes as it reads the Makefile, and the build writes it again before compiling (the
# objects that include it, in a copy of the tree, so that the checkout's build is not
# touched), after clean has run.
case_make_clean_all() {
	local t; t=$(mktemp -d "$WORK/mkclean.XXXXXX")
	tree_copy "$t"
	[ -f "$t/Makefile" ] || { fail "no copy of the tree in $t"; return; }
	(cd "$t" && make -s build/obj/gate/cmd/version_cmd.o) >"$WORK/mk.out" 2>&1 || fail "make in the copy: $(tail -n 5 "$WORK/mk.out")"
	[ -f "$t/build/gen/gate_version.h" ] || fail "make wrote no build/gen/gate_version.h"
	(cd "$t" && make -s -j2 clean build/obj/gate/cmd/version_cmd.o build/obj/gate/cmd/cli.o build/obj/gate/run/run.o) >"$WORK/mk.out" 2>&1 ||
		fail "make clean then compiling in one command: $(grep -m 3 -i 'error' "$WORK/mk.out")"
	grep -qF "#define GATE_VERSION \"$(cat "$ROOT/VERSION")\"" "$t/build/gen/gate_version.h" 2>/dev/null ||
		fail "after make clean ..., build/gen/gate_version.h does not hold the version"
	(cd "$t" && make -s clean) >"$WORK/mk.out" 2>&1
	[ ! -e "$t/build" ] || fail "make clean leaves build/: $(ls "$t/build")"
	rm -rf "$t"
}

# gate watch over distribution, the node stalled (SIGSTOP) past two samples' timeouts and
# then answering both: each late reply is dropped and counted ("late"), and no sample carries
# another's figures: an answered sample is taken after gate asked for it, so two answered
# samples are at least about the interval less the timeout apart on the node's clock (a late
# reply taken for the next sample would put two of them within milliseconds).
e2e_serial watch_late_replies_dropped # its samples' timings are a few hundred ms
case_watch_late_replies_dropped() {
	cl_start 1
	local a=${CL_NODES[0]} i
	ERL_EPMD_PORT=$CL_PORT gate_bg '"sample":1,' watch --attach "$a" \
		--cookie-file "$CL_HOME/.erlang.cookie" --interval 1500ms --timeout 400ms --count 7
	kill -STOP "${CL_PIDS[0]}"
	for i in $(seq 1 200); do
		[ "$(grep -c '"error":' "$OUT")" -ge 2 ] && break
		sleep 0.1
	done
	kill -CONT "${CL_PIDS[0]}"
	for i in $(seq 1 300); do kill -0 "$BG_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$BG_PID"
	RC=$?
	expect_rc 0
	expect_in "$ERR" "skipped: node $a did not answer"
	node -e 'const ls = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
		if (ls.length !== 7) throw new Error(ls.length + " lines");
		const ds = ls.map(JSON.parse);
		let errors = 0, prev = null;
		ds.forEach((d, i) => {
			if (d.sample !== i + 1 || typeof d.late !== "number") throw new Error("line " + (i + 1) + ": " + ls[i]);
			if (d.error) { errors++; return; }
			if (prev && d.t - prev.t < (1500 - 400) / 2)
				throw new Error("samples " + prev.sample + " and " + d.sample + " taken " +
					(d.t - prev.t) + " ms apart: one carries another sample\x27s reply");
			prev = d;
		});
		const late = ds[6].late;
		if (errors < 2 || late < 2 || late > errors) throw new Error(errors + " skipped, late " + late);
		if (ds[6].error) throw new Error("the last sample after the stall has no figures");' \
		"$OUT" >"$WORK/js.out" 2>&1 || fail "bad JSON lines: $(tail -n 3 "$WORK/js.out") $(cat "$OUT")"
	cl_no_probe "$a"
	cl_stop
}

# gate run --cluster --json: one result with every node (the attached one first), each with
# its verdict, findings and snapshots, and every node's findings in one list; a leak on one
# node fails that node only.
case_cluster_json_every_node() {
	cl_start 2
	local a=${CL_NODES[0]} b=${CL_NODES[1]} d
	d=$(mktemp -d "$WORK/reports.XXXXXX")
	HOME="$CL_HOME" run_attached -C "$d" --attach "$a" --cluster --json "$d/run.json" \
		--exec "$FIX/workload/leak_ets.sh $b"
	expect_rc 1
	[ -f "$d/run.json" ] || { fail "no --json file: $(tail -n 3 "$ERR")"; cl_stop; return; }
	python3 - "$d/run.json" "$a" "$b" >"$WORK/cj.out" 2>&1 <<'PY' || fail "cluster JSON: $(cat "$WORK/cj.out")"
import json, sys
d = json.load(open(sys.argv[1])); a, b = sys.argv[2], sys.argv[3]
assert d["format"] == "gate.run/2" and d["verdict"] == "failed", (d["format"], d["verdict"])
assert d["baseline"] is None
ns = d["nodes"]
assert [n["node"] for n in ns] == [a, b], [n["node"] for n in ns]
bad = [n for n in ns if n["verdict"] == "failed"]
assert [n["node"] for n in bad] == [b], [(n["node"], n["verdict"]) for n in ns]
for n in ns:
    assert n["error"] is None and n["before"]["node"] == n["node"] and n["after"]["node"] == n["node"], (n["error"], n["before"]["node"], n["after"]["node"])
    assert n["after"]["memory"]["total"] > 0
assert any(f["verdict"] == "FAIL" and f["rule"] == "ets" and f["subject"] == "left_alive workload_leak" for f in ns[1]["findings"]), ns[1]["findings"]
assert not any(f["verdict"] == "FAIL" for f in ns[0]["findings"])
assert any(f["verdict"] == "FAIL" and f["subject"].startswith(b + ": ") for f in d["findings"]), d["findings"]
PY
	cl_no_probe "$a" "$b"
	cl_stop
}

# gate merge carries what each partition measured beyond its verdict: every test's own
# growth (--per-test) into the merged JSON's cases and the summary's ranking, and each
# partition's --repeat runs and --sample series into the merged JSON, the HTML report and the
# console summary, each labelled with its partition.
case_merge_carries_runs_samples_per_test() {
	local d; d=$(git_fixture partitioned)
	merge_partitions "$d" 2 --per-test --repeat 2 --sample 100ms
	[ "$MERGE_RCS" = "0 0" ] || fail "the partitions' runs exited $MERGE_RCS, expected 0 0: $(tail -n 5 "$ERR")"
	run_gate merge -C "$d" "$d/_build/r1.json" "$d/_build/r2.json" --junit "$d/_build/m.xml" \
		--json "$d/_build/m.json" --html "$d/_build/m.html"
	expect_rc 0
	expect_in "$OUT" "Runs of partition 1/2 (--repeat 2)"
	expect_in "$OUT" "Runs of partition 2/2 (--repeat 2)"
	expect_in "$OUT" "Samples of partition 1/2 (--sample)"
	expect_in "$d/_build/m.html" '<section id="runs-1">'
	expect_in "$d/_build/m.html" '<section id="runs-2">'
	expect_in "$d/_build/m.html" '<h2>Runs of partition 2/2 (--repeat 2)</h2>'
	expect_in "$d/_build/m.html" '<section id="samples-1">'
	expect_not_in "$d/_build/m.html" "<script"
	python3 - "$d/_build/r1.json" "$d/_build/r2.json" "$d/_build/m.json" >"$WORK/mj.out" 2>&1 <<'PY' || fail "merged JSON: $(cat "$WORK/mj.out")"
import json, sys
r = [json.load(open(p)) for p in sys.argv[1:3]]; m = json.load(open(sys.argv[3]))
parts = m["partitions"]
assert [p["k"] for p in parts] == [1, 2], parts
for p, ri in zip(parts, r):
    assert p["iterations"] == ri["iterations"] and len(p["iterations"]) == 3, (p["iterations"], ri.get("iterations"))
    assert p["samples"]["count"] == ri["samples"]["count"] and p["samples"]["count"] >= 1
    assert p["samples"]["samples"] == ri["samples"]["samples"]
# every test's own growth, as its partition measured it
cases = {(c["module"], c["name"]): c for ri in r for c in ri["tests"]["cases"]}
measured = [c for c in cases.values() if c["measured"]]
assert measured, "no partition measured a test"
mc = {(c["module"], c["name"]): c for c in m["tests"]["cases"]}
assert len(mc) == len(cases)
for k, c in cases.items():
    assert mc[k]["measured"] == c["measured"] and mc[k]["delta"] == c["delta"], (k, mc[k], c)
assert m["tests"]["attribution"] == "test"
PY
	no_leftovers "$d"
}

# epmd_on PORT: an epmd answers on PORT
epmd_on() {
	ERL_EPMD_PORT=$1 epmd -port "$1" -names >/dev/null 2>&1
}

# An epmd the suite starts (a node it boots with -name starts `epmd -daemon` when none runs)
# outlives gate's node as it outlives bare `mix test`'s; the case ends it itself. And the
# node's :init.get_plain_arguments() is what docs/how-it-works.md says it is, beside bare
# mix test's.
case_suite_epmd_outlives_node() {
	local d home port plain
	d=$(fixture clean)
	home=$(mktemp -d "$WORK/epmdhome.XXXXXX")
	cat >"$d/test/epmd_test.exs" <<'EXS'
defmodule EpmdTest do
  use ExUnit.Case

  test "a node booted with -name starts epmd" do
    name = "loose_#{System.unique_integer([:positive])}@127.0.0.1"
    assert {_, 0} = System.cmd("erl", ["-name", name, "-noshell", "-eval", "halt()."])
    File.write!(System.fetch_env!("LOOSE_PLAIN"), inspect(:init.get_plain_arguments()))
  end
end
EXS
	port=$(free_port)
	epmd_on "$port" && { fail "an epmd runs on the free port $port"; return; }
	(cd "$d" && HOME="$home" ERL_EPMD_PORT=$port LOOSE_PLAIN="$d/bare.txt" MIX_ENV=test \
		mix test test/epmd_test.exs) >"$WORK/bare.out" 2>&1 || fail "bare mix test: $(tail -n 5 "$WORK/bare.out")"
	epmd_on "$port" || fail "bare mix test left no epmd: the case does not start one"
	ERL_EPMD_PORT=$port epmd -port "$port" -kill >/dev/null 2>&1
	HOME="$home" ERL_EPMD_PORT=$port LOOSE_PLAIN="$d/gate.txt" run_gate run -C "$d" -- test/epmd_test.exs
	expect_rc 0
	local i
	for i in 1 2 3 4 5; do epmd_on "$port" && break; sleep 0.2; done
	epmd_on "$port" || fail "the epmd the suite started ended with gate's node"
	ERL_EPMD_PORT=$port epmd -port "$port" -kill >/dev/null 2>&1
	# the plain arguments: bare mix test's are mix's own command line; gate's node says
	# what docs/how-it-works.md lists
	grep -q "'test', 'test/epmd_test.exs'\]" "$d/bare.txt" || fail "bare plain arguments: $(cat "$d/bare.txt")"
	plain=$(cat "$d/gate.txt")
	case "$plain" in "['-e', "*"'-S', 'mix', 'run', '--no-halt', '-e', "*) ;;
	*) fail "gate's node's plain arguments are not the documented ones: ${plain:0:200}" ;; esac
	grep -q 'get_plain_arguments()` shows the node.s `mix run --no-halt -e ...` command line' \
		"$ROOT/docs/how-it-works.md" || fail "docs/how-it-works.md does not list the plain arguments"
	no_leftovers "$d"
	no_leftovers "$home"
}
