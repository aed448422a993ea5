/* tests/test_baseline_git.c: the one-file baseline commit, against real repositories made by
 * the git CLI (tests/baseline_git_fixture.h): commits that leave every other change byte for
 * byte, the refusals, HEAD moving before and during the commit, author and message, and the
 * crash safety (a kill at each step, the next run finishing or undoing it, concurrent
 * staging kept, hooks, signing and filters named). Reading, notes and the history are in
 * tests/test_baseline_git_read.c. `git fsck` must be clean at the end of every test that
 * touched a repository. */
#include "model/snapshot.h"
#include "tests/baseline_git_fixture.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>

#include "ci/git/git2_lib.h"

/* Tries a commit that must be refused with want in the message, and checks that nothing
 * moved: HEAD, the index, the working tree. */
static void assert_refused(struct fixture *fx, struct baseline_repo *r,
                           const struct baseline_commit_opts *o, const char *want)
{
	char *head = out(fx->repo, "git rev-parse -q --verify HEAD; true");
	char *index = out(fx->repo, "git ls-files -s --debug");
	char *tree =
	        out(fx->repo, "find . -path ./.git -prune -o -type f -exec sha1sum {} + | sort");
	char *status = out(fx->repo, "git status --porcelain=v1 --untracked-files=all");
	char c[BASELINE_OID_HEX] = "x";
	int rc = baseline_git_commit(c, r, &fx->b, o, fx->err, sizeof(fx->err));
	if (rc != BASELINE_ERROR || !strstr(fx->err, want))
		fail_msg("commit: rc %d, err \"%s\", want \"%s\"", rc, fx->err, want);
	assert_string_equal(c, "");
	char *head2 = out(fx->repo, "git rev-parse -q --verify HEAD; true");
	char *index2 = out(fx->repo, "git ls-files -s --debug");
	char *tree2 =
	        out(fx->repo, "find . -path ./.git -prune -o -type f -exec sha1sum {} + | sort");
	char *status2 = out(fx->repo, "git status --porcelain=v1 --untracked-files=all");
	assert_string_equal(head, head2);
	assert_string_equal(index, index2);
	assert_string_equal(tree, tree2);
	assert_string_equal(status, status2);
	free(head), free(index), free(tree), free(status);
	free(head2), free(index2), free(tree2), free(status2);
}

/* A command to run once in the repository from inside the next git_signature_now call:
 * baseline_git_commit makes its signature after its checks and before it moves the branch,
 * so this is how a test moves HEAD in the middle of a commit. */
static const char *race_cmd;

/* libgit2's git_signature_now, which bgit_signature calls between the checks and the
 * commit, runs race_cmd first, once, when race_arm() gave one. */
static int race_run(void)
{
	if (!race_cmd)
		return 0;
	const char *c = race_cmd;
	race_cmd = NULL;
	return sh(g_fx->repo, "%s", c) != 0 ? -1 : 0;
}

#ifndef GATE_DIRECT_LIBS
/* gate calls libgit2 through a table (ci/git/git2_lib.h; the library is open once a
 * repository is): race_arm() puts race_signature_now in git_signature_now's place */
static __typeof__(git_signature_now) real_signature_now; /* the table's pointer type */

static int race_signature_now(git_signature **out, const char *name, const char *email)
{
	return race_run() < 0 ? -1 : real_signature_now(out, name, email);
}

static void race_arm(const char *cmd)
{
	if (!real_signature_now)
		real_signature_now = git2_api.fn_git_signature_now;
	git2_api.fn_git_signature_now = race_signature_now;
	race_cmd = cmd;
}
#else
/* linked with libgit2 and calling it directly (make release's flags): the executable's
 * definition wins over the library's for the calls of ci/git/baseline_git.c */
int git_signature_now(git_signature **out, const char *name, const char *email)
{
	typedef int (*sig_now_fn)(git_signature **, const char *, const char *);
	static sig_now_fn real;
	if (!real)
		real = (sig_now_fn)dlsym(RTLD_NEXT, "git_signature_now");
	return race_run() < 0 ? -1 : real(out, name, email);
}

static void race_arm(const char *cmd)
{
	race_cmd = cmd;
}
#endif

/* ---- the one-file commit ---- */

/* The first baseline creates .gate/ in the tree; the commit has exactly one path, HEAD as its
 * parent, the configured author, and the blob equals the working-tree file and
 * baseline_format's bytes. A second commit replaces it. */
static void test_git__commit_touches_one_path(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char before[BASELINE_OID_HEX], c1[BASELINE_OID_HEX], c2[BASELINE_OID_HEX];
	head_hex(fx, r, before);

	commit_ok(fx, r, NULL, c1);
	char *head = out(fx->repo, "git rev-parse HEAD");
	char want[64];
	snprintf(want, sizeof(want), "%s\n", c1);
	assert_string_equal(head, want);
	free(head);
	snprintf(want, sizeof(want), "%s\n", before);
	assert_out(fx->repo, want, "git rev-parse HEAD~1");
	assert_out(fx->repo, ".gate/baseline.json\n", "git diff --name-only HEAD~1 HEAD");
	assert_out(fx->repo, "A\t.gate/baseline.json\n", "git diff --name-status HEAD~1 HEAD");
	assert_out(fx->repo,
	           "Test User <test@example.com>|Test User <test@example.com>|"
	           "gate: update the memory baseline (measured at 0123456)\n",
	           "git log -1 --format='%an <%ae>|%cn <%ce>|%s'");
	assert_out(fx->repo, "1\n", "git rev-list --count HEAD~1"); /* one commit before it */
	assert_out(fx->repo, "", "git status --porcelain --untracked-files=all");

	char *text;
	size_t len;
	assert_int_equal(baseline_format(&text, &len, &fx->b, fx->err, sizeof(fx->err)), 0);
	char *blob = out(fx->repo, "git cat-file blob HEAD:.gate/baseline.json");
	char *file = out(fx->repo, "cat .gate/baseline.json");
	assert_string_equal(blob, text);
	assert_string_equal(file, text);
	free(blob);
	free(file);
	free(text);
	assert_out(fx->repo, "100644\n", "git ls-files -s .gate/baseline.json | cut -c1-6");

	/* a second baseline replaces the first: M, one path, still clean */
	fx->b.test_count = 2;
	fx->b.mem[MEM_BINARY] = 123;
	commit_ok(fx, r, NULL, c2);
	assert_out(fx->repo, "M\t.gate/baseline.json\n", "git diff --name-status HEAD~1 HEAD");
	assert_out(fx->repo, "", "git status --porcelain --untracked-files=all");
	struct baseline_source src;
	struct baseline back;
	assert_int_equal(
	        baseline_git_read(&back, &src, r, "HEAD", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	assert_int_equal(back.test_count, 2);
	assert_int_equal(back.mem[MEM_BINARY], 123);
	assert_string_equal(src.commit, c2);
	baseline_clear(&back);
	/* no temp file and no lock left behind */
	assert_out(fx->repo, ".gate/baseline.json\n", "ls -A .gate | sed 's|^|.gate/|'");
	assert_int_equal(sh(fx->repo, "test ! -e .git/index.lock"), 0);
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* Staged, unstaged, intent-to-add, assume-unchanged and untracked changes to other files are
 * exactly as they were: the index entries, both diffs, the status and every file's bytes and
 * mode. */
static void test_git__commit_keeps_other_changes(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char c[BASELINE_OID_HEX];
	commit_ok(fx, r, NULL, c); /* so that the next one replaces a tracked file */

	SH_OK(fx->repo, "printf 'frozen\\n' >frozen.txt && git add frozen.txt && git commit -q -m "
	                "frozen && git update-index --assume-unchanged frozen.txt && printf "
	                "'thawed\\n' >frozen.txt");
	put(fx->repo, "a.txt", "a staged\n");
	SH_OK(fx->repo, "git add a.txt");
	put(fx->repo, "b.txt", "b staged\n");
	SH_OK(fx->repo, "git add b.txt");
	put(fx->repo, "b.txt", "b staged, then changed again\n");
	put(fx->repo, "dir/c.txt", "c unstaged\n");
	SH_OK(fx->repo, "chmod -x run.sh");
	put(fx->repo, "new.txt", "new and staged\n");
	SH_OK(fx->repo, "git add new.txt");
	put(fx->repo, "ita.txt", "intent to add\n");
	SH_OK(fx->repo, "git add -N ita.txt");
	put(fx->repo, "untracked.txt", "untracked\n");

	const char *excl = "-- . ':(exclude).gate/baseline.json'";
	char cmd_cached[256], cmd_diff[256], cmd_ls[256], cmd_lsv[256], cmd_status[256];
	snprintf(cmd_cached, sizeof(cmd_cached), "git diff --cached --binary %s", excl);
	snprintf(cmd_diff, sizeof(cmd_diff), "git diff --binary %s", excl);
	snprintf(cmd_ls, sizeof(cmd_ls), "git ls-files -s %s", excl);
	snprintf(cmd_lsv, sizeof(cmd_lsv), "git ls-files -v %s", excl);
	snprintf(cmd_status, sizeof(cmd_status),
	         "git status --porcelain=v1 --untracked-files=all %s", excl);
	const char *cmd_files =
	        "find . -path ./.git -prune -o -type f ! -path ./.gate/baseline.json "
	        "-printf '%m %p ' -exec sha1sum {} \\; | sort";
	char *cached = out(fx->repo, "%s", cmd_cached), *diff = out(fx->repo, "%s", cmd_diff);
	char *ls = out(fx->repo, "%s", cmd_ls), *lsv = out(fx->repo, "%s", cmd_lsv);
	char *status = out(fx->repo, "%s", cmd_status), *files = out(fx->repo, "%s", cmd_files);
	/* the scenario is what it claims to be */
	assert_non_null(strstr(status, "M  a.txt\n"));
	assert_non_null(strstr(status, "MM b.txt\n"));
	assert_non_null(strstr(status, " M dir/c.txt\n"));
	assert_non_null(strstr(status, " M run.sh\n"));
	assert_non_null(strstr(status, "A  new.txt\n"));
	assert_non_null(strstr(status, " A ita.txt\n"));
	assert_non_null(strstr(status, "?? untracked.txt\n"));
	assert_null(strstr(status, "frozen.txt"));
	assert_non_null(strstr(lsv, "h frozen.txt\n"));
	assert_non_null(strstr(diff, "old mode 100755\nnew mode 100644\n"));

	fx->b.test_count = 2;
	commit_ok(fx, r, NULL, c);

	assert_out(fx->repo, ".gate/baseline.json\n", "git diff --name-only HEAD~1 HEAD");
	char *cached2 = out(fx->repo, "%s", cmd_cached), *diff2 = out(fx->repo, "%s", cmd_diff);
	char *ls2 = out(fx->repo, "%s", cmd_ls), *lsv2 = out(fx->repo, "%s", cmd_lsv);
	char *status2 = out(fx->repo, "%s", cmd_status), *files2 = out(fx->repo, "%s", cmd_files);
	assert_string_equal(cached, cached2);
	assert_string_equal(diff, diff2);
	assert_string_equal(ls, ls2);
	assert_string_equal(lsv, lsv2);
	assert_string_equal(status, status2);
	assert_string_equal(files, files2);
	assert_out(fx->repo, "",
	           "git status --porcelain --untracked-files=all -- .gate/baseline.json");
	assert_out(fx->repo, "", "git diff HEAD -- .gate/baseline.json");
	free(cached), free(diff), free(ls), free(lsv), free(status), free(files);
	free(cached2), free(diff2), free(ls2), free(lsv2), free(status2), free(files2);
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* HEAD moving between the caller's read and the commit is refused; nothing changes. */
static void test_git__head_moved(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char read_at[BASELINE_OID_HEX];
	head_hex(fx, r, read_at);
	SH_OK(fx->repo, "git commit -q --allow-empty -m 'moved meanwhile'");
	struct baseline_commit_opts o = {.expected_head = read_at};
	assert_refused(fx, r, &o, "HEAD moved since the run started");
	assert_non_null(strstr(fx->err, "rerun gate on the new HEAD"));
	assert_out(fx->repo, "moved meanwhile\n", "git log -1 --format=%s");
	assert_int_equal(sh(fx->repo, "test ! -e .gate"), 0);

	/* an expected head that is not a commit id is an error too */
	struct baseline_commit_opts bad = {.expected_head = "main"};
	assert_refused(fx, r, &bad, "is not a commit id");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* HEAD moving after the checks, while the commit is being made: the compare-and-swap on the
 * branch refuses, and the working tree and index are left as they were. */
static void test_git__head_moved_during_commit(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char head[BASELINE_OID_HEX], c[BASELINE_OID_HEX] = "x";
	head_hex(fx, r, head);
	char *index = out(fx->repo, "git ls-files -s --debug");
	/* the branch moves without the index (gate holds index.lock by then, so a `git commit`
	 * would be refused: a fetch into the branch or update-ref is what can still race) */
	race_arm("git update-ref refs/heads/main "
	         "$(git commit-tree -p HEAD -m racing 'HEAD^{tree}')");
	struct baseline_commit_opts o = {.expected_head = head};
	int rc = baseline_git_commit(c, r, &fx->b, &o, fx->err, sizeof(fx->err));
	assert_null(race_cmd); /* the race did happen */
	assert_int_equal(rc, BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "main moved while gate was committing"));
	assert_string_equal(c, "");
	assert_out(fx->repo, "racing\n", "git log -1 --format=%s");
	assert_int_equal(sh(fx->repo, "test ! -e .gate/baseline.json"), 0);
	assert_int_equal(sh(fx->repo, "test ! -e .gate"), 0); /* no temp file, no new dir */
	char *index2 = out(fx->repo, "git ls-files -s --debug");
	assert_string_equal(index, index2);
	free(index);
	free(index2);
	assert_out(fx->repo, "", "git status --porcelain --untracked-files=all");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

static void test_git__refuse_detached(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	SH_OK(fx->repo, "git checkout -q --detach");
	struct baseline_repo *r = open_repo(fx, fx->repo);
	assert_refused(fx, r, NULL, "HEAD is detached");
	assert_non_null(strstr(fx->err, "git switch"));
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

static void test_git__refuse_unborn(void **state)
{
	struct fixture *fx = *state;
	SH_OK(fx->dir, "git init -q -b main repo");
	struct baseline_repo *r = open_repo(fx, fx->repo);
	assert_refused(fx, r, NULL, "HEAD has no commits yet");
	char h[BASELINE_OID_HEX];
	assert_int_equal(baseline_git_head(h, r, fx->err, sizeof(fx->err)), BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "no commits yet"));
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* Two branches that changed a.txt differently, for merges, rebases and cherry-picks that
 * stop in the middle. */
static void make_diverged(struct fixture *fx)
{
	make_repo(fx);
	SH_OK(fx->repo, "git checkout -q -b topic && printf 'topic\\n' >a.txt && git commit -q -am "
	                "topic && git checkout -q main && printf 'main\\n' >a.txt && git commit -q "
	                "-am main");
}

static void test_git__refuse_merge(void **state)
{
	struct fixture *fx = *state;
	make_diverged(fx);
	assert_int_not_equal(sh(fx->repo, "git merge --no-edit topic"), 0); /* conflict */
	struct baseline_repo *r = open_repo(fx, fx->repo);
	assert_refused(fx, r, NULL, "a merge is in progress");
	assert_non_null(strstr(fx->err, "git merge --abort"));
	SH_OK(fx->repo, "git merge --abort");
	/* a merge stopped without a conflict (--no-commit) counts too */
	SH_OK(fx->repo,
	      "git checkout -q -b side main~1 && printf 'x\\n' >x.txt && git add x.txt && "
	      "git commit -q -m side && git checkout -q main && git merge -q --no-ff "
	      "--no-commit side");
	assert_refused(fx, r, NULL, "a merge is in progress");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

static void test_git__refuse_rebase(void **state)
{
	struct fixture *fx = *state;
	make_diverged(fx);
	SH_OK(fx->repo, "git checkout -q topic");
	assert_int_not_equal(sh(fx->repo, "git rebase main"), 0); /* conflict */
	struct baseline_repo *r = open_repo(fx, fx->repo);
	assert_refused(fx, r, NULL, "a rebase is in progress");
	assert_non_null(strstr(fx->err, "git rebase --abort"));
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

static void test_git__refuse_cherry_pick(void **state)
{
	struct fixture *fx = *state;
	make_diverged(fx);
	assert_int_not_equal(sh(fx->repo, "git cherry-pick topic"), 0); /* conflict */
	struct baseline_repo *r = open_repo(fx, fx->repo);
	assert_refused(fx, r, NULL, "a cherry-pick is in progress");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* The baseline file's own changes (unstaged, staged, untracked) are never committed over. */
static void test_git__refuse_local_edits(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char c[BASELINE_OID_HEX];

	/* untracked: a file at the path that HEAD does not have */
	SH_OK(fx->repo, "mkdir .gate && printf 'hand made\\n' >.gate/baseline.json");
	assert_refused(fx, r, NULL, ".gate/baseline.json has local changes of its own (untracked");
	SH_OK(fx->repo, "rm -r .gate");

	commit_ok(fx, r, NULL, c);
	SH_OK(fx->repo, "printf ' ' >>.gate/baseline.json");
	assert_refused(fx, r, NULL, "(unstaged changes)");
	SH_OK(fx->repo, "git add .gate/baseline.json");
	assert_refused(fx, r, NULL, "(staged changes)");
	SH_OK(fx->repo, "git reset -q && git checkout -q -- .gate/baseline.json");
	SH_OK(fx->repo, "rm .gate/baseline.json");
	assert_refused(fx, r, NULL, "deleted in the working tree");
	SH_OK(fx->repo, "git rm -q --cached .gate/baseline.json");
	assert_refused(fx, r, NULL, "staged deletion");
	SH_OK(fx->repo, "git reset -q && git checkout -q -- .gate/baseline.json");

	/* clean again: the commit goes through */
	fx->b.test_count = 5;
	commit_ok(fx, r, NULL, c);
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* Another git process holding the index: refused before anything is written. */
static void test_git__refuse_index_lock(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	SH_OK(fx->repo, ": >.git/index.lock");
	assert_refused(fx, r, NULL, "index.lock exists");
	SH_OK(fx->repo, "rm .git/index.lock");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* A committed baseline this gate cannot read (a newer gate's, a corrupt one) is not
 * replaced unless forced. */
static void test_git__refuse_unreadable_old(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	SH_OK(fx->repo,
	      "mkdir .gate && printf '{\"version\": 9}\\n' >.gate/baseline.json && git add "
	      ".gate && git commit -q -m 'from the future'");
	struct baseline_repo *r = open_repo(fx, fx->repo);
	assert_refused(fx, r, NULL, "refusing to overwrite HEAD:.gate/baseline.json");
	assert_non_null(strstr(fx->err, "newer gate"));
	struct baseline_commit_opts force = {.flags = BASELINE_WRITE_FORCE};
	char c[BASELINE_OID_HEX];
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &force, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_out(fx->repo, "", "git status --porcelain");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* The same bytes again: no commit, HEAD returned. */
static void test_git__unchanged(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char c1[BASELINE_OID_HEX], c2[BASELINE_OID_HEX];
	commit_ok(fx, r, NULL, c1);
	assert_int_equal(baseline_git_commit(c2, r, &fx->b, NULL, fx->err, sizeof(fx->err)),
	                 BASELINE_UNCHANGED);
	assert_string_equal(c1, c2);
	assert_out(fx->repo, "2\n", "git rev-list --count HEAD");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* GATE_AUTHOR_* override git config; no author at all is a clear error; [skip ci] and a
 * custom message; an executable file keeps its mode; a nested path gets its trees. */
static void test_git__author_message_mode(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char c[BASELINE_OID_HEX];

	setenv("GATE_AUTHOR_NAME", "CI Bot", 1);
	setenv("GATE_AUTHOR_EMAIL", "ci@example.com", 1);
	struct baseline_commit_opts o = {.skip_ci = true};
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &o, fx->err, sizeof(fx->err)), 0);
	assert_out(fx->repo,
	           "CI Bot <ci@example.com>|CI Bot <ci@example.com>|gate: update the "
	           "memory baseline (measured at 0123456) [skip ci]\n",
	           "git log -1 --format='%an <%ae>|%cn <%ce>|%s'");
	unsetenv("GATE_AUTHOR_NAME");
	unsetenv("GATE_AUTHOR_EMAIL");

	struct baseline_commit_opts m = {.message =
	                                         "perf: new baseline  \n\nafter the cache change",
	                                 .skip_ci = true,
	                                 .path = "apps/web/perf/base.json"};
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &m, fx->err, sizeof(fx->err)), 0);
	assert_out(fx->repo, "perf: new baseline [skip ci]\n\nafter the cache change\n",
	           "git cat-file commit HEAD | sed '1,/^$/d'");
	assert_out(fx->repo, "apps/web/perf/base.json\n", "git diff --name-only HEAD~1 HEAD");
	assert_out(fx->repo, "", "git status --porcelain");

	/* an executable baseline (odd, but it is the user's) stays executable */
	SH_OK(fx->repo,
	      "chmod +x apps/web/perf/base.json && git commit -q -am 'make it executable'");
	fx->b.test_count = 9;
	m.message = "again";
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &m, fx->err, sizeof(fx->err)), 0);
	assert_out(fx->repo, "100755\n", "git ls-tree HEAD apps/web/perf/base.json | cut -c1-6");
	assert_out(fx->repo, "", "git status --porcelain");

	SH_OK(fx->repo, "git config --unset user.name");
	fx->b.test_count = 10;
	assert_refused(fx, r, NULL, "no author for the commit: git config has no user.name");
	assert_non_null(strstr(fx->err, "GATE_AUTHOR_NAME"));
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* ---- crash safety ---- */

/* The steps of baseline_git_commit, in order, and whether a kill there leaves the branch
 * moved (the next run finishes the update) or not (the next run undoes it). */
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

/* A repository with user changes that must survive anything: a staged edit, an unstaged
 * edit, an untracked file. */
static void make_busy_repo(struct fixture *fx)
{
	make_repo(fx);
	SH_OK(fx->repo, "printf 'staged\\n' >a.txt && git add a.txt && printf 'unstaged\\n' >b.txt"
	                " && printf 'new\\n' >untracked.txt");
}

#define USER_STATUS "M  a.txt\n M b.txt\n?? untracked.txt\n"

/* Everything agrees: HEAD (old or new), the index entry, the working-tree file; the user's
 * changes as they were; no lock, journal or temp file of ours. */
static void assert_consistent(struct fixture *fx, const char *old_head, bool committed)
{
	char want[128];
	snprintf(want, sizeof(want), "%s\n", old_head);
	if (committed) {
		assert_out(fx->repo, want, "git rev-parse HEAD~1");
		assert_out(fx->repo, ".gate/baseline.json\n", "git diff --name-only HEAD~1 HEAD");
		/* index entry = HEAD's blob = the file's bytes */
		char *idx = out(fx->repo, "git rev-parse :.gate/baseline.json");
		char *head = out(fx->repo, "git rev-parse HEAD:.gate/baseline.json");
		char *file = out(fx->repo, "git hash-object .gate/baseline.json");
		assert_string_equal(idx, head);
		assert_string_equal(file, head);
		free(idx), free(head), free(file);
	} else {
		assert_out(fx->repo, want, "git rev-parse HEAD");
		assert_int_equal(sh(fx->repo, "test ! -e .gate/baseline.json"), 0);
	}
	assert_out(fx->repo, USER_STATUS, "git status --porcelain --untracked-files=all");
	assert_out(fx->repo, "a.txt\n", "git diff --cached --name-only");
	assert_out(fx->repo, "b.txt\n", "git diff --name-only");
	assert_int_equal(sh(fx->repo,
	                    "test ! -e .git/index.lock && test ! -e "
	                    ".git/gate-baseline-commit && ! ls -A .git | grep -q '^gate-'"),
	                 0);
	assert_int_equal(sh(fx->repo, "! ls -A .gate 2>/dev/null | grep -q tmp"), 0);
	assert_fsck(fx->repo);
}

/* gate killed after each step of the commit: until the next run, git refuses to write the
 * index (our index.lock) unless the repository is already consistent; the next run finishes
 * (branch moved) or undoes (not moved) the update, says so, and everything agrees. */
static void test_git__kill_at_each_step(void **state)
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
			struct baseline_commit_opts o = {.expected_head = old};
			baseline_git_commit(c, cr, &fx->b, &o, e, sizeof(e));
			_exit(3); /* the step was never reached */
		}
		int st = 0;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 77)
			fail_msg("step %s: the child did not stop there (status %d)", steps[i].step,
			         st);

		/* before the next run: the user's own commit cannot record a half-done state */
		char *head_now = out(fx->repo, "git rev-parse HEAD");
		bool at_new = strncmp(head_now, old, 40) != 0;
		free(head_now);
		assert_true(at_new == steps[i].moved);
		bool locked = strcmp(steps[i].step, "journal") != 0 &&
		              strcmp(steps[i].step, "unlocked") != 0;
		if (locked && sh(fx->repo, "git add untracked.txt") == 0)
			fail_msg("step %s: git could stage while the update was half done",
			         steps[i].step);

		/* the next run says what it did and leaves a consistent repository */
		r = open_repo(fx, fx->repo);
		char msg[2048];
		int rc = baseline_git_recover(r, msg, sizeof(msg), fx->err, sizeof(fx->err));
		if (rc != 1)
			fail_msg("step %s: recover returned %d: %s", steps[i].step, rc, fx->err);
		assert_non_null(strstr(msg, steps[i].moved ? "finished it" : "undid it"));
		assert_int_equal(
		        baseline_git_recover(r, msg, sizeof(msg), fx->err, sizeof(fx->err)),
		        0); /* once only */
		baseline_git_close(r);
		assert_consistent(fx, old, steps[i].moved);

		/* and a commit works again from there */
		if (!steps[i].moved) {
			r = open_repo(fx, fx->repo);
			char c[BASELINE_OID_HEX];
			commit_ok(fx, r, NULL, c);
			baseline_git_close(r);
			assert_consistent(fx, old, true);
		}
	}
}

/* A kill is also recovered by the next commit itself, which says so in its notice. */
static void test_git__next_commit_recovers(void **state)
{
	struct fixture *fx = *state;
	make_busy_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char old[BASELINE_OID_HEX];
	head_hex(fx, r, old);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		die_at = "tmp";
		baseline_git_fault = die_hook;
		char c[BASELINE_OID_HEX], e[2048];
		baseline_git_commit(c, r, &fx->b, NULL, e, sizeof(e));
		_exit(3);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 77);
	char notice[4096], c[BASELINE_OID_HEX];
	struct baseline_commit_opts o = {
	        .expected_head = old, .notice = notice, .notice_len = sizeof(notice)};
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &o, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_non_null(strstr(notice, "undid it"));
	baseline_git_close(r);
	assert_consistent(fx, old, true);
}

static const char *add_at;
static int add_rc[16];
static int add_n;

static void add_hook(const char *step)
{
	if (!add_at || strcmp(step, add_at) != 0)
		return;
	add_rc[add_n] = sh(g_fx->repo, "printf 'x\\n' >during-%d.txt && git add during-%d.txt",
	                   add_n, add_n);
	add_n++;
}

/* `git add` of another file while gate commits, at every step and before the lock: either
 * git refuses it (gate holds index.lock, and git says so) or it is still staged afterwards.
 * Nothing that git add reported as done is lost. */
static void test_git__concurrent_add_kept(void **state)
{
	struct fixture *fx = *state;
	/* before the lock: between the checks and the commit (the signature is made there) */
	make_busy_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	race_arm("printf 'y\\n' >early.txt && git add early.txt");
	char c[BASELINE_OID_HEX];
	commit_ok(fx, r, NULL, c);
	assert_null(race_cmd);
	assert_out(fx->repo, "a.txt\nearly.txt\n", "git diff --cached --name-only");
	baseline_git_close(r);

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		rm_rf(fx->repo);
		make_busy_repo(fx);
		r = open_repo(fx, fx->repo);
		add_n = 0;
		add_at = steps[i].step;
		baseline_git_fault = add_hook;
		commit_ok(fx, r, NULL, c);
		baseline_git_fault = NULL;
		add_at = NULL;
		baseline_git_close(r);
		assert_int_equal(add_n, 1);
		char *staged = out(fx->repo, "git diff --cached --name-only");
		bool kept = strstr(staged, "during-0.txt") != NULL;
		free(staged);
		if (add_rc[0] == 0 && !kept)
			fail_msg("step %s: git add returned 0 and its file is no longer staged",
			         steps[i].step);
		if (add_rc[0] != 0 && strcmp(steps[i].step, "unlocked") == 0)
			fail_msg("git add failed after gate released the index");
		assert_out(fx->repo, "", "git diff --name-only HEAD -- .gate");
		assert_fsck(fx->repo);
	}
}

/* Hooks and signing configured: the commit says that it did not run or honour them. */
static void test_git__hooks_and_signing_named(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	SH_OK(fx->repo, "printf '#!/bin/sh\\nexit 1\\n' >.git/hooks/pre-commit && chmod +x "
	                ".git/hooks/pre-commit && git config commit.gpgsign true");
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char notice[4096], c[BASELINE_OID_HEX];
	struct baseline_commit_opts o = {.notice = notice, .notice_len = sizeof(notice)};
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &o, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_non_null(strstr(notice, "did not run the git hooks pre-commit"));
	assert_non_null(strstr(notice, "not signed although commit.gpgsign is set"));

	/* core.hooksPath is where git looks then */
	SH_OK(fx->repo,
	      "rm .git/hooks/pre-commit && git config --unset commit.gpgsign && mkdir "
	      "githooks && printf '#!/bin/sh\\n' >githooks/commit-msg && chmod +x "
	      "githooks/commit-msg && git config core.hooksPath githooks && git add githooks"
	      " && git commit -q --no-verify -m hooks");
	fx->b.test_count = 9;
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &o, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_non_null(strstr(notice, "commit-msg"));
	assert_non_null(strstr(notice, "core.hooksPath"));
	assert_null(strstr(notice, "signed"));

	/* nothing configured: nothing said */
	SH_OK(fx->repo, "git config --unset core.hooksPath");
	fx->b.test_count = 10;
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &o, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_string_equal(notice, "");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* A clean/smudge filter on the baseline path is refused, not bypassed. */
static void test_git__refuse_filter(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	SH_OK(fx->repo, "printf '.gate/** filter=lfs diff=lfs merge=lfs -text\\n' >.gitattributes"
	                " && git add .gitattributes && git commit -q -m lfs");
	struct baseline_repo *r = open_repo(fx, fx->repo);
	assert_refused(fx, r, NULL, "the filter \"lfs\"");
	assert_non_null(strstr(fx->err, ".gate/baseline.json -filter"));
	/* the fix the message gives works */
	SH_OK(fx->repo,
	      "printf '.gate/baseline.json -filter\\n' >>.gitattributes && git commit -qam"
	      " fix");
	char c[BASELINE_OID_HEX];
	commit_ok(fx, r, NULL, c);
	assert_out(fx->repo, "", "git status --porcelain --untracked-files=all");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* A run measured on a dirty working tree says so; the baseline path itself does not count. */
static void test_git__dirty_worktree_named(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	assert_int_equal(baseline_git_worktree_dirty(r, NULL), 0);
	SH_OK(fx->repo, "mkdir -p .gate && printf '{}' >.gate/baseline.json");
	assert_int_equal(baseline_git_worktree_dirty(r, NULL), 0);
	SH_OK(fx->repo, "rm -r .gate && printf 'x\\n' >>b.txt");
	assert_int_equal(baseline_git_worktree_dirty(r, NULL), 1);
	SH_OK(fx->repo, "git checkout -q b.txt && printf 'x\\n' >new.txt");
	assert_int_equal(baseline_git_worktree_dirty(r, NULL), 1);
	char c[BASELINE_OID_HEX];
	struct baseline_commit_opts o = {.measured_dirty = true};
	assert_int_equal(baseline_git_commit(c, r, &fx->b, &o, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_out(fx->repo,
	           "gate: update the memory baseline (measured at 0123456 with local "
	           "changes)\n",
	           "git log -1 --format=%s");
	assert_out(fx->repo, "", "git grep -h worktree HEAD -- .gate/baseline.json");

	/* the baseline itself says so too, and reads back */
	fx->b.commit_dirty = true;
	fx->b.test_count = 5;
	assert_int_equal(baseline_git_commit(c, r, &fx->b, NULL, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_out(fx->repo, "  \"worktree\": \"with local changes\"\n",
	           "git grep -h worktree HEAD -- .gate/baseline.json");
	assert_out(fx->repo,
	           "gate: update the memory baseline (measured at 0123456 with local "
	           "changes)\n",
	           "git log -1 --format=%s");
	struct baseline back;
	struct baseline_source src;
	assert_int_equal(
	        baseline_git_read(&back, &src, r, "HEAD", false, NULL, fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	assert_true(back.commit_dirty);
	baseline_clear(&back);
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

/* A sparse checkout without .gate/: refused with the hint that fits (not "discard your
 * deletion"), and the hint works. */
static void test_git__sparse_checkout_hint(void **state)
{
	struct fixture *fx = *state;
	make_repo(fx);
	struct baseline_repo *r = open_repo(fx, fx->repo);
	char c[BASELINE_OID_HEX];
	commit_ok(fx, r, NULL, c);
	baseline_git_close(r);
	SH_OK(fx->repo, "git sparse-checkout set --cone dir && test ! -e .gate/baseline.json");
	r = open_repo(fx, fx->repo);
	fx->b.test_count = 7;
	assert_refused(fx, r, NULL, "is outside the sparse checkout");
	assert_non_null(strstr(fx->err, "git sparse-checkout add .gate"));
	assert_null(strstr(fx->err, "git restore"));
	SH_OK(fx->repo, "git sparse-checkout add .gate");
	commit_ok(fx, r, NULL, c);
	assert_out(fx->repo, "", "git status --porcelain --untracked-files=all");
	baseline_git_close(r);
	assert_fsck(fx->repo);
}

int main(void)
{
	bgfx_env();
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_git__commit_touches_one_path, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__commit_keeps_other_changes, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_git__head_moved, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__head_moved_during_commit, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_detached, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_unborn, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_merge, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_rebase, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_cherry_pick, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_local_edits, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_index_lock, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_unreadable_old, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__unchanged, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__author_message_mode, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__kill_at_each_step, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__next_commit_recovers, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__concurrent_add_kept, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__hooks_and_signing_named, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__refuse_filter, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__dirty_worktree_named, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_git__sparse_checkout_hint, setup, teardown),
	};
	return cmocka_run_group_tests_name("baseline_git", tests, NULL, NULL);
}
