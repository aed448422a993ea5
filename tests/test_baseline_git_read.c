/* tests/test_baseline_git_read.c: the baseline read from git, against real repositories made
 * by the git CLI (tests/baseline_git_fixture.h): at refs without a checkout (also in a
 * shallow clone, with the fallback to HEAD), notes and the history they make, bad
 * repositories and paths. The commit itself is tested in tests/test_baseline_git.c. */
#include "model/snapshot.h"
#include "tests/baseline_git_fixture.h"

#include <errno.h>
#include <sys/stat.h>

#include <git2.h>
#include <jansson.h>

/* ---- notes and history ---- */

static void test_git__notes_roundtrip(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char c[BASELINE_OID_HEX];
	commit_ok(fx, r, NULL, c);

	struct baseline n;
	assert_int_equal(baseline_git_note_read(&n, r, NULL, c, fx->err, sizeof(fx->err)),
	                 BASELINE_MISSING);
	assert_int_equal(
	        baseline_git_note_write(r, NULL, c, &fx->b, false, fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	assert_int_equal(
	        baseline_git_note_read(&n, r, "refs/notes/gate", c, fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	assert_int_equal(n.test_count, 1);
	assert_int_equal(n.mem[MEM_TOTAL], 30000000);
	assert_string_equal(n.commit, fx->b.commit);
	assert_int_equal(n.timestamp, fx->b.timestamp);
	assert_int_equal(n.nets, 0); /* a summary */
	baseline_clear(&n);

	/* git itself reads it, as one line of JSON */
	char *shown = out(fx->repo, "git notes --ref=gate show HEAD");
	char *want;
	assert_int_equal(baseline_summary_format(&want, &fx->b, fx->err, sizeof(fx->err)), 0);
	assert_string_equal(shown, want);
	free(shown);
	free(want);

	/* a second note on the same commit: refused, unless overwriting */
	fx->b.test_count = 2;
	assert_int_equal(
	        baseline_git_note_write(r, "gate", c, &fx->b, false, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "already has a note in refs/notes/gate"));
	assert_int_equal(
	        baseline_git_note_write(r, "gate", c, &fx->b, true, fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	assert_int_equal(baseline_git_note_read(&n, r, NULL, c, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(n.test_count, 2);
	baseline_clear(&n);

	/* a note that is not ours */
	SH_OK(fx->repo, "git notes --ref=gate add -f -m 'hello' HEAD");
	assert_int_equal(baseline_git_note_read(&n, r, NULL, c, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "note refs/notes/gate of"));
	assert_int_equal(
	        baseline_git_note_write(r, NULL, "nothex", &fx->b, false, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* Notes along the first-parent chain, oldest first; commits without notes, notes on a merged
 * side branch and unreadable notes are left out; the limits hold. */
static void test_git__history_order(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	struct baseline_history h = {0};

	assert_int_equal(baseline_git_history(&h, r, NULL, NULL, 0, 0, fx->err, sizeof(fx->err)),
	                 0);
	assert_int_equal(h.count, 0);
	assert_true(h.notes_ref_missing);
	baseline_history_clear(&h);

	char c[3][BASELINE_OID_HEX];
	for (int i = 0; i < 3; i++) {
		struct baseline b;
		sample(&b, i + 1, 1000 * (i + 1));
		commit_ok(fx, r, &b, c[i]);
		assert_int_equal(
		        baseline_git_note_write(r, NULL, c[i], &b, false, fx->err, sizeof(fx->err)),
		        0);
		baseline_clear(&b);
		SH_OK(fx->repo, "git commit -q --allow-empty -m 'work %d'", i);
	}
	/* a side branch whose commit has a note, merged: not on the first-parent chain */
	SH_OK(fx->repo, "git checkout -q -b side HEAD~2 && git commit -q --allow-empty -m side");
	char *side = out(fx->repo, "git rev-parse HEAD | tr -d '\\n'");
	struct baseline sb;
	sample(&sb, 99, 99);
	assert_int_equal(
	        baseline_git_note_write(r, NULL, side, &sb, false, fx->err, sizeof(fx->err)), 0);
	baseline_clear(&sb);
	free(side);
	SH_OK(fx->repo, "git checkout -q main && git merge -q --no-ff --no-edit side");
	/* and a note that is not a summary */
	SH_OK(fx->repo, "git notes --ref=gate add -m 'not json' HEAD~1");

	assert_int_equal(baseline_git_history(&h, r, NULL, NULL, 0, 0, fx->err, sizeof(fx->err)),
	                 0);
	assert_int_equal(h.count, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(h.items[i].test_count, i + 1);
		assert_int_equal(h.items[i].mem[MEM_TOTAL], 1000 * (i + 1));
		assert_string_equal(h.noted[i], c[i]);
	}
	assert_int_equal(h.unreadable, 1);
	assert_non_null(strstr(h.unreadable_why, "invalid JSON"));
	assert_false(h.shallow_end);
	assert_false(h.notes_ref_missing);
	assert_int_equal(h.walked, 8); /* merge, work 2, c2, work 1, c1, work 0, c0, initial */

	char *json = NULL;
	assert_int_equal(baseline_history_format_json(&json, &h, fx->err, sizeof(fx->err)), 0);
	json_error_t jerr;
	json_t *arr = json_loads(json, 0, &jerr);
	assert_non_null(arr);
	assert_int_equal(json_array_size(arr), 3);
	assert_string_equal(
	        json_string_value(json_object_get(json_array_get(arr, 2), "noted_commit")), c[2]);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 0), "test_count")),
	                 1);
	json_decref(arr);
	assert_int_equal(json[strlen(json) - 1], '\n');
	free(json);
	baseline_history_clear(&h);

	/* the newest two */
	assert_int_equal(
	        baseline_git_history(&h, r, "gate", "HEAD", 2, 0, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(h.count, 2);
	assert_int_equal(h.items[0].test_count, 2);
	assert_int_equal(h.items[1].test_count, 3);
	baseline_history_clear(&h);
	/* from an older commit, and with a short walk */
	assert_int_equal(baseline_git_history(&h, r, NULL, c[1], 0, 0, fx->err, sizeof(fx->err)),
	                 0);
	assert_int_equal(h.count, 2);
	assert_int_equal(h.items[1].test_count, 2);
	baseline_history_clear(&h);
	assert_int_equal(baseline_git_history(&h, r, NULL, NULL, 0, 3, fx->err, sizeof(fx->err)),
	                 0);
	assert_int_equal(h.walked, 3);
	assert_int_equal(h.count, 1);
	baseline_history_clear(&h);
	assert_int_equal(
	        baseline_git_history(&h, r, NULL, "no-such-branch", 0, 0, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "no-such-branch"));
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* ---- reading at a ref ---- */

static void test_git__read_at_ref(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	struct baseline b;
	struct baseline_source src;
	char c[BASELINE_OID_HEX];

	/* no baseline committed yet: missing, not an error */
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "HEAD", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_MISSING);
	assert_string_equal(fx->err, "no baseline at HEAD:.gate/baseline.json");
	assert_string_equal(src.where, "HEAD:.gate/baseline.json");

	commit_ok(fx, r, NULL, c);
	/* the default ref does not exist here: HEAD is read, and src says so */
	assert_int_equal(baseline_git_read(&b, &src, r, NULL, true, NULL, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_true(src.fell_back);
	assert_string_equal(src.ref, "HEAD");
	assert_string_equal(src.commit, c);
	assert_string_equal(src.where, "HEAD:.gate/baseline.json");
	assert_int_equal(b.test_count, 1);
	baseline_clear(&b);
	/* asked explicitly, a missing ref is an error naming it */
	assert_int_equal(baseline_git_read(&b, &src, r, "origin/main", false, NULL, fx->err,
	                                   sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "the baseline ref origin/main does not exist"));
	assert_non_null(strstr(fx->err, "git fetch"));

	/* a ref that has the file, read without a checkout while the work tree differs */
	SH_OK(fx->repo, "git branch old && git update-ref refs/remotes/origin/main HEAD");
	fx->b.test_count = 2;
	commit_ok(fx, r, NULL, c);
	assert_int_equal(baseline_git_read(&b, &src, r, NULL, true, NULL, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_false(src.fell_back);
	assert_string_equal(src.ref, "origin/main");
	assert_int_equal(b.test_count, 1);
	baseline_clear(&b);
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "old~1", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_MISSING);
	assert_non_null(strstr(fx->err, "no baseline at old~1:.gate/baseline.json"));

	/* the working tree, edited and not committed */
	SH_OK(fx->repo, "sed -i 's/\"test_count\": 2/\"test_count\": 77/' .gate/baseline.json");
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "worktree", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	assert_int_equal(b.test_count, 77);
	assert_string_equal(src.ref, "worktree");
	assert_string_equal(src.commit, "");
	baseline_clear(&b);
	SH_OK(fx->repo, "git checkout -q -- .gate");
	assert_int_equal(baseline_git_read(&b, &src, r, "worktree", false, "nope.json", fx->err,
	                                   sizeof(fx->err)),
	                 BASELINE_MISSING);

	/* bad blobs at refs: corrupt, from a newer gate, a directory, a symlink */
	SH_OK(fx->repo,
	      "git checkout -q -b bad && printf '{\"version\": 1, \"mem' "
	      ">.gate/baseline.json && git commit -q -am corrupt && git tag corrupt && "
	      "printf '{\"version\": 3}' >.gate/baseline.json && git commit -q -am future "
	      "&& git tag future && git rm -q .gate/baseline.json && mkdir -p "
	      ".gate/baseline.json && : >.gate/baseline.json/x && git add .gate && git "
	      "commit -q -m dir && git tag dir && git rm -q -r .gate && mkdir -p .gate && ln "
	      "-s ../a.txt .gate/baseline.json && git add .gate && git commit -q -m link "
	      "&& git tag link && git checkout -q main");
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "corrupt", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "corrupt:.gate/baseline.json: 1:"));
	assert_non_null(strstr(fx->err, "truncated"));
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "future", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "future:.gate/baseline.json: written by a newer gate"));
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "dir", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "dir:.gate/baseline.json is a directory"));
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "link", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "symbolic link"));
	/* a ref that names a blob, not a commit; an invalid spec */
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "HEAD:a.txt", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "does not name a commit"));
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "HEAD@@{", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* Not a repository, a broken one, and an unborn HEAD when falling back. */
static void test_git__bad_repositories(void **state)
{
	struct fixture *fx = *state;
	struct baseline_repo *r = (struct baseline_repo *)1;
	char plain[128];
	snprintf(plain, sizeof(plain), "%s/plain", fx->dir);
	assert_int_equal(mkdir(plain, 0755), 0);
	/* GIT_CEILING_DIRECTORIES is not read by libgit2 here: /tmp is not in a repository */
	assert_int_equal(baseline_git_open(&r, plain, fx->err, sizeof(fx->err)), BASELINE_ERROR);
	assert_null(r);
	assert_non_null(strstr(fx->err, plain));
	assert_non_null(strstr(fx->err, "is not in a git repository"));
	assert_non_null(strstr(fx->err, "--baseline-ref worktree"));

	char broken[128];
	snprintf(broken, sizeof(broken), "%s/broken", fx->dir);
	assert_int_equal(mkdir(broken, 0755), 0);
	SH_OK(broken, "printf 'gitdir: /nonexistent/x\\n' >.git");
	assert_int_equal(baseline_git_open(&r, broken, fx->err, sizeof(fx->err)), BASELINE_ERROR);
	assert_non_null(strstr(fx->err, broken));

	assert_int_equal(baseline_git_open(&r, "/nonexistent/dir", fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "/nonexistent/dir"));

	SH_OK(fx->dir, "git init -q -b main repo");
	r = open_repo(fx, fx->repo);
	struct baseline b;
	struct baseline_source src;
	assert_int_equal(baseline_git_read(&b, &src, r, NULL, true, NULL, fx->err, sizeof(fx->err)),
	                 BASELINE_MISSING);
	assert_true(src.fell_back);
	assert_non_null(strstr(fx->err, "HEAD has no commits yet"));
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "HEAD", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	struct baseline_history h = {0};
	assert_int_equal(baseline_git_history(&h, r, NULL, NULL, 0, 0, fx->err, sizeof(fx->err)),
	                 0);
	assert_int_equal(h.count, 0);
	baseline_history_clear(&h);
	baseline_git_close(r);
	baseline_git_close(NULL);
	assert_fsck(fx->repo);
}

/* The CI case: a shallow clone of a branch, comparing against origin/main without fetching
 * history, committing there, and a history that ends at the clone's boundary. */
static void test_git__shallow_clone(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char c[BASELINE_OID_HEX];
	commit_ok(fx, r, NULL, c); /* main: test_count 1 */
	SH_OK(fx->repo, "git commit -q --allow-empty -m 'more on main'");
	SH_OK(fx->repo, "git checkout -q -b feature && printf 'f\\n' >f.txt && git add f.txt && "
	                "git commit -q -m feature");
	fx->b.test_count = 2;
	commit_ok(fx, r, NULL, c); /* feature: test_count 2, with a note */
	assert_int_equal(
	        baseline_git_note_write(r, NULL, c, &fx->b, false, fx->err, sizeof(fx->err)), 0);
	SH_OK(fx->repo, "git checkout -q main");
	baseline_git_close(r);

	char clone[128];
	snprintf(clone, sizeof(clone), "%s/clone", fx->dir);
	SH_OK(fx->dir, "git clone -q --depth 1 --no-single-branch --branch feature file://%s clone",
	      fx->repo);
	SH_OK(clone,
	      "git config user.name 'Clone User' && git config user.email clone@example.com");
	assert_out(clone, "true\n", "git rev-parse --is-shallow-repository");
	assert_out(clone, "1\n", "git rev-list --count HEAD");

	r = open_repo(fx, clone);
	struct baseline b;
	struct baseline_source src;
	assert_int_equal(baseline_git_read(&b, &src, r, NULL, true, NULL, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_false(src.fell_back);
	assert_string_equal(src.ref, "origin/main");
	assert_int_equal(b.test_count, 1);
	baseline_clear(&b);
	assert_int_equal(
	        baseline_git_read(&b, &src, r, "HEAD", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	assert_int_equal(b.test_count, 2);
	baseline_clear(&b);
	assert_int_equal(baseline_git_read(&b, &src, r, "origin/release", false, NULL, fx->err,
	                                   sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "origin/release does not exist"));

	/* notes are not cloned: an empty history that says why; fetched, it stops at the edge */
	struct baseline_history h = {0};
	assert_int_equal(baseline_git_history(&h, r, NULL, NULL, 0, 0, fx->err, sizeof(fx->err)),
	                 0);
	assert_true(h.notes_ref_missing);
	baseline_history_clear(&h);
	SH_OK(clone, "git fetch -q origin refs/notes/gate:refs/notes/gate");
	assert_int_equal(baseline_git_history(&h, r, NULL, NULL, 0, 0, fx->err, sizeof(fx->err)),
	                 0);
	assert_int_equal(h.count, 1);
	assert_true(h.shallow_end);
	assert_int_equal(h.items[0].test_count, 2);
	baseline_history_clear(&h);

	/* the main-branch job commits in its shallow clone */
	fx->b.test_count = 3;
	commit_ok(fx, r, NULL, c);
	assert_out(clone, ".gate/baseline.json\n", "git diff --name-only HEAD~1 HEAD");
	assert_out(clone, "", "git status --porcelain");
	assert_out(clone, "Clone User\n", "git log -1 --format=%an");
	baseline_git_close(r);
	assert_fsck(clone);
	assert_fsck(fx->repo);
}

/* Paths: relative to a project inside the repository; nothing outside it or inside .git. */
static void test_git__paths(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char rel[512], sub[256];
	snprintf(sub, sizeof(sub), "%s/dir", fx->repo);

	const char *wd = baseline_git_workdir(r);
	assert_non_null(wd);
	assert_int_equal(wd[strlen(wd) - 1], '/');
	assert_int_equal(
	        baseline_git_relpath(rel, sizeof(rel), r, sub, NULL, fx->err, sizeof(fx->err)), 0);
	assert_string_equal(rel, "dir/.gate/baseline.json");
	assert_int_equal(baseline_git_relpath(rel, sizeof(rel), r, fx->repo, "perf/b.json", fx->err,
	                                      sizeof(fx->err)),
	                 0);
	assert_string_equal(rel, "perf/b.json");
	assert_int_equal(baseline_git_relpath(rel, sizeof(rel), r, sub, "./../perf//./b.json",
	                                      fx->err, sizeof(fx->err)),
	                 0);
	assert_string_equal(rel, "perf/b.json");
	assert_int_equal(baseline_git_relpath(rel, sizeof(rel), r, sub, "../../outside.json",
	                                      fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_int_equal(baseline_git_relpath(rel, sizeof(rel), r, sub, "/etc/passwd", fx->err,
	                                      sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "outside the working tree"));

	const char *bad[] = {"/abs.json",  "../x.json", "a/../b.json", "a//b.json", ".git/x.json",
	                     "sub/.GIT/x", "dir/",      "./x.json",    ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct baseline_commit_opts o = {.path = bad[i]};
		char c[BASELINE_OID_HEX];
		assert_int_equal(baseline_git_commit(c, r, &fx->b, &o, fx->err, sizeof(fx->err)),
		                 BASELINE_ERROR);
		assert_non_null(strstr(fx->err, "baseline path"));
		struct baseline b;
		struct baseline_source src;
		assert_int_equal(baseline_git_read(&b, &src, r, "HEAD", false, bad[i], fx->err,
		                                   sizeof(fx->err)),
		                 BASELINE_ERROR);
	}
	assert_out(fx->repo, "1\n", "git rev-list --count HEAD");
	assert_out(fx->repo, "", "git status --porcelain");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

int main(void)
{
	bgfx_env();
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_git__notes_roundtrip, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__history_order, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__read_at_ref, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__bad_repositories, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__shallow_clone, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__paths, setup, teardown),
	};
	return cmocka_run_group_tests_name("baseline_git_read", tests, NULL, NULL);
}
