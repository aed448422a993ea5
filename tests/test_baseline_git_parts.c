/* tests/test_baseline_git_parts.c: the baseline commit of several files in one (for
 * `gate merge --commit`, every partition's baseline), against real repositories made by the
 * git CLI (tests/baseline_git_fixture.h): both files in one commit, the same path twice
 * refused, a kill after each step finished or undone for every file, and the merged run's
 * note with each partition's summary read back per partition. `git fsck` must be clean. */
#include "model/snapshot.h"
#include "tests/baseline_git_fixture.h"

#include <sys/wait.h>

/* The steps of baseline_git_commit, in order, and whether a kill there leaves the branch
 * moved (the next run finishes the update) or not (the next run undoes it); as in
 * tests/test_baseline_git.c. */
static const struct {
	const char *step;
	bool moved;
} steps[] = {
        {"journal", false}, {"locked", false},       {"tmp", false},    {"branch", true},
        {"file", true},     {"index-written", true}, {"indexed", true}, {"unlocked", true},
};

static const char *die_at;

static void die_hook(const char *step)
{
	if (die_at && strcmp(step, die_at) == 0)
		_exit(77); /* no clean-up of any kind, as with SIGKILL */
}

/* A repository with user changes that must survive anything. */
static void make_busy_repo(struct fixture *fx)
{
	make_repo(fx);
	SH_OK(fx->repo, "printf 'staged\\n' >a.txt && git add a.txt && printf 'unstaged\\n' >b.txt"
	                " && printf 'new\\n' >untracked.txt");
}

#define USER_STATUS "M  a.txt\n M b.txt\n?? untracked.txt\n"

/* ---- several files in one commit (gate merge's every partition) ---- */

static const char *const two_paths[] = {".gate/baseline.partition-1.json",
                                        ".gate/baseline.partition-2.json"};

/* Commits fx->b as both partition files in one commit. */
static int commit_two(struct fixture *fx, struct baseline_repo *r, const char *expected,
                      char out[BASELINE_OID_HEX])
{
	struct baseline_commit_file files[2] = {{two_paths[0], &fx->b}, {two_paths[1], &fx->b}};
	struct baseline_commit_opts o = {.expected_head = expected, .files = files, .nfiles = 2};
	return baseline_git_commit(out, r, NULL, &o, fx->err, sizeof(fx->err));
}

/* Both files committed (index entry = HEAD's blob = the file's bytes) in one commit on
 * old_head, or neither there; the user's changes kept; nothing of ours left. */
static void assert_two_consistent(struct fixture *fx, const char *old_head, bool committed)
{
	char want[128];
	snprintf(want, sizeof(want), "%s\n", old_head);
	assert_out(fx->repo, want, committed ? "git rev-parse HEAD~1" : "git rev-parse HEAD");
	for (size_t i = 0; i < 2; i++) {
		char cmd[256];
		if (!committed) {
			snprintf(cmd, sizeof(cmd), "test ! -e %s", two_paths[i]);
			assert_int_equal(sh(fx->repo, cmd), 0);
			continue;
		}
		snprintf(cmd, sizeof(cmd), "git rev-parse :%s", two_paths[i]);
		char *idx = out(fx->repo, cmd);
		snprintf(cmd, sizeof(cmd), "git rev-parse HEAD:%s", two_paths[i]);
		char *head = out(fx->repo, cmd);
		snprintf(cmd, sizeof(cmd), "git hash-object %s", two_paths[i]);
		char *file = out(fx->repo, cmd);
		assert_string_equal(idx, head);
		assert_string_equal(file, head);
		free(idx), free(head), free(file);
	}
	if (committed)
		assert_out(fx->repo,
		           ".gate/baseline.partition-1.json\n.gate/baseline.partition-2.json\n",
		           "git diff --name-only HEAD~1 HEAD");
	assert_out(fx->repo, USER_STATUS, "git status --porcelain --untracked-files=all");
	assert_int_equal(sh(fx->repo,
	                    "test ! -e .git/index.lock && test ! -e "
	                    ".git/gate-baseline-commit && ! ls -A .git | grep -q '^gate-'"),
	                 0);
	assert_int_equal(sh(fx->repo, "! ls -A .gate 2>/dev/null | grep -q tmp"), 0);
	assert_fsck(fx->repo);
}

/* Two files, one commit; the same path twice is refused; unchanged files commit nothing. */
static void test_git__two_files_one_commit(void **state)
{
	struct fixture *fx = *state;
	make_busy_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char old[BASELINE_OID_HEX], c[BASELINE_OID_HEX];
	head_hex(fx, r, old);
	if (commit_two(fx, r, old, c) != BASELINE_OK)
		fail_msg("commit_two: %s", fx->err);
	assert_two_consistent(fx, old, true);
	assert_out(fx->repo,
	           "gate: update the memory baselines of 2 partitions (measured at 0123456)\n",
	           "git log -1 --format=%s");
	char again[BASELINE_OID_HEX];
	assert_int_equal(commit_two(fx, r, c, again), BASELINE_UNCHANGED);
	assert_string_equal(again, c);
	struct baseline_commit_file same[2] = {{two_paths[0], &fx->b}, {two_paths[0], &fx->b}};
	struct baseline_commit_opts o = {.files = same, .nfiles = 2};
	assert_int_equal(baseline_git_commit(c, r, NULL, &o, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, ".gate/baseline.partition-1.json is given twice"));
	baseline_git_close(r);
}

/* gate killed after each step of a two-file commit: the next run finishes or undoes both. */
static void test_git__two_files_kill_at_each_step(void **state)
{
	struct fixture *fx = *state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		rm_rf(fx->repo);
		make_busy_repo(fx);
		struct baseline_repo *r = open_repo(fx, fx->repo);
		char old[BASELINE_OID_HEX];
		head_hex(fx, r, old);
		baseline_git_close(r);
		fflush(NULL);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			die_at = steps[i].step;
			baseline_git_fault = die_hook;
			struct baseline_repo *cr = NULL;
			char c[BASELINE_OID_HEX], e[2048];
			if (baseline_git_open(&cr, fx->repo, e, sizeof(e)) != BASELINE_OK)
				_exit(2);
			commit_two(fx, cr, old, c);
			_exit(3);
		}
		int st = 0;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 77)
			fail_msg("step %s: the child did not stop there (status %d)", steps[i].step,
			         st);
		r = open_repo(fx, fx->repo);
		char msg[4096];
		int rc = baseline_git_recover(r, msg, sizeof(msg), fx->err, sizeof(fx->err));
		if (rc != 1)
			fail_msg("step %s: recover returned %d: %s", steps[i].step, rc, fx->err);
		assert_non_null(strstr(msg, steps[i].moved ? "finished it" : "undid it"));
		if (steps[i].moved)
			assert_non_null(strstr(msg, ".gate/baseline.partition-1.json "
			                            ".gate/baseline.partition-2.json"));
		baseline_git_close(r);
		assert_two_consistent(fx, old, steps[i].moved);
	}
}

/* gate merge's note: the whole suite's summary, each partition's under "partitions"; the
 * history gives the whole (history shows merged runs), a partition its own figures, and
 * leaves the note out for a partition it does not have. */
static void test_git__merged_note_per_partition(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char head[BASELINE_OID_HEX];
	head_hex(fx, r, head);
	struct baseline p1 = {0}, p2 = {0}, whole = {0};
	assert_int_equal(baseline_copy(&p1, &fx->b), 0);
	assert_int_equal(baseline_copy(&p2, &fx->b), 0);
	assert_int_equal(baseline_copy(&whole, &fx->b), 0);
	p1.mem[MEM_TOTAL] = 1000;
	p2.mem[MEM_TOTAL] = 2000;
	whole.mem[MEM_TOTAL] = 3000;
	p1.test_count = 4, p2.test_count = 5, whole.test_count = 9;
	const struct baseline *parts[2] = {&p1, &p2};
	const int ks[2] = {1, 2};
	if (baseline_git_note_write_parts(r, NULL, head, &whole, parts, ks, 2, fx->err,
	                                  sizeof(fx->err)) != BASELINE_OK)
		fail_msg("note_write_parts: %s", fx->err);
	const int want_total[4] = {3000, 1000, 2000, -1};
	for (int k = 0; k < 4; k++) {
		struct baseline_history h = {0};
		assert_int_equal(baseline_git_history_partition(&h, r, NULL, NULL, 0, 0, k, fx->err,
		                                                sizeof(fx->err)),
		                 BASELINE_OK);
		if (want_total[k] < 0) {
			assert_int_equal(h.count, 0); /* partition 3: not in this merged run */
		} else {
			assert_int_equal(h.count, 1);
			assert_int_equal(h.items[0].mem[MEM_TOTAL], want_total[k]);
		}
		baseline_history_clear(&h);
	}
	/* the plain reader (gate baseline history) reads the whole */
	struct baseline n = {0};
	assert_int_equal(baseline_git_note_read(&n, r, NULL, head, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_int_equal(n.test_count, 9);
	baseline_clear(&n);
	baseline_clear(&p1), baseline_clear(&p2), baseline_clear(&whole);
	baseline_git_close(r);
}

int main(void)
{
	bgfx_env();
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_git__two_files_one_commit, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__two_files_kill_at_each_step, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_git__merged_note_per_partition, setup,
	                                        teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
