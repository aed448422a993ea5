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
