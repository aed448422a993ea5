# tests/e2e/cases/gitsafety.sh: git safety cases through the command line (the kill at
# every step and the concurrent git add are cmocka tests: tests/test_baseline_git.c). gate
# says what git would have done (hooks, signing), says a dirty tree is dirty, and a run
# finishes a baseline commit that a killed gate left half done. Sourced by tests/e2e/run.sh.

case_gitsafety_hooks_signing_dirty() {
	local d; d=$(git_fixture clean)
	printf '#!/bin/sh\nexit 1\n' >"$d/.git/hooks/pre-commit"
	chmod +x "$d/.git/hooks/pre-commit"
	git_in "$d" config commit.gpgsign true >/dev/null
	printf 'not committed\n' >"$d/scratch.txt"
	local head0; head0=$(git -C "$d" rev-parse HEAD)
	run_gate run -C "$d" --update-baseline --commit
	expect_rc 0
	expect_in "$ERR" "gate: note: the baseline commit did not run the git hooks pre-commit"
	expect_in "$ERR" "gate: note: the baseline commit is not signed although commit.gpgsign is set"
	git -C "$d" log -1 --format=%s | grep -qF "(measured at ${head0:0:7} with local changes)" ||
		fail "commit message: $(git -C "$d" log -1 --format=%s)"
	git -C "$d" show HEAD:.gate/baseline.json | grep -qF '"worktree": "with local changes"' ||
		fail "the baseline does not say it was measured with local changes"
	[ "$(git -C "$d" status --porcelain)" = "?? scratch.txt" ] || fail "status: $(git -C "$d" status --porcelain)"
	fsck_clean "$d"
	no_leftovers "$d"
}

# The state a gate killed right after moving the branch leaves (journal, its index.lock, the
# new bytes in the temp file, the branch at the new commit), made with git's plumbing: git
# itself refuses to stage meanwhile, and the next gate run finishes the update and says so.
case_gitsafety_next_run_finishes_commit() {
	local d; d=$(git_fixture clean)
	run_gate run -q -C "$d" --update-baseline --commit
	expect_rc 0
	local old blob tree new g="$d/.git"
	old=$(git -C "$d" rev-parse HEAD)
	sed 's/"test_count": [0-9]*/"test_count": 99999/' "$d/.gate/baseline.json" >"$d/.gate/.baseline.json.gate-tmp"
	blob=$(git -C "$d" hash-object -w .gate/.baseline.json.gate-tmp)
	tree=$(cd "$d" && export GIT_INDEX_FILE="$WORK/plumb.idx" && git read-tree HEAD &&
		git update-index --cacheinfo "100644,$blob,.gate/baseline.json" && git write-tree)
	rm -f "$WORK/plumb.idx"
	new=$(git -C "$d" commit-tree -p HEAD -m "gate: update the memory baseline" "$tree")
	git -C "$d" update-ref refs/heads/main "$new" "$old"
	printf 'gate 1 e2e' >"$g/index.lock"
	printf 'gate baseline commit journal 1\ntoken gate 1 e2e\nref refs/heads/main\nold %s\nnew %s\nblob %s\nmode 100644\npath .gate/baseline.json\n' \
		"$old" "$new" "$blob" >"$g/gate-baseline-commit"
	git_in "$d" add .gate/baseline.json >"$WORK/add.out" && fail "git add worked while the update was half done"
	run_gate run -C "$d"
	expect_rc 0
	expect_in "$ERR" "gate: note: an earlier gate was stopped in the middle of a baseline commit after refs/heads/main had moved to ${new:0:7}; finished it"
	[ -z "$(git -C "$d" status --porcelain --untracked-files=all -- .gate)" ] || fail "status: $(git -C "$d" status --porcelain -- .gate)"
	[ "$(git -C "$d" rev-parse :.gate/baseline.json)" = "$blob" ] || fail "the index does not have the new blob"
	[ "$(git -C "$d" hash-object .gate/baseline.json)" = "$blob" ] || fail "the file does not have the new bytes"
	[ ! -e "$g/index.lock" ] && [ ! -e "$g/gate-baseline-commit" ] || fail "the lock or the journal is left"
	expect_in "$ERR" "baseline: HEAD:.gate/baseline.json" # and the run read it
	fsck_clean "$d"
	no_leftovers "$d"
}
