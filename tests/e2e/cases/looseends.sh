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
