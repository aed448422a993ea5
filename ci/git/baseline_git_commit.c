/* ci/git/baseline_git_commit.c: the one-file baseline commit on top of HEAD: the refusals that
 * keep the user's git state alone, the new objects, then (under the journal of
 * baseline_git_journal.c) the branch, the working-tree file and the index, in that order. */
#include "base/atomic.h"
#include "ci/git/baseline_git.h"
#include "ci/git/baseline_git_internal.h"
#include "ci/git/baseline_git_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci/git/git2_lib.h"

/* 2*bytes random hex digits from /dev/urandom; -1 when it cannot be read. */
static int random_hex(char *buf, size_t bytes)
{
	unsigned char raw[32];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || bytes > sizeof(raw) || read(fd, raw, bytes) != (ssize_t)bytes) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (size_t i = 0; i < bytes; i++)
		sprintf(buf + 2 * i, "%02x", raw[i]);
	return 0;
}

/* ---- the message, and what git would have done ---- */

/* The commit message, with " [skip ci]" on the subject line when asked; malloc'd. */
static char *make_message(const char *message, bool skip_ci, const char *measured, int dirty,
                          size_t nfiles)
{
	char dflt[200], what[64] = "";
	if (nfiles > 1) /* gate merge's one commit of every partition's baseline */
		snprintf(what, sizeof(what), "s of %zu partitions", nfiles);
	if (!message || !*message) {
		snprintf(dflt, sizeof(dflt), "gate: update the memory baseline%s%s%s%s%s", what,
		         measured ? " (measured at " : "", measured ? measured : "",
		         measured && dirty ? " with local changes" : "", measured ? ")" : "");
		message = dflt;
	}
	size_t len = strlen(message);
	char *m = malloc(len + sizeof(" [skip ci]\n"));
	if (!m)
		return NULL;
	size_t subject = strcspn(message, "\n");
	memcpy(m, message, subject);
	size_t n = subject;
	while (n > 0 && (m[n - 1] == ' ' || m[n - 1] == '\t' || m[n - 1] == '\r'))
		n--;
	if (skip_ci && !strstr(message, "[skip ci]")) {
		memcpy(m + n, " [skip ci]", 10);
		n += 10;
	}
	memcpy(m + n, message + subject, len - subject);
	n += len - subject;
	if (n == 0 || m[n - 1] != '\n')
		m[n++] = '\n';
	m[n] = '\0';
	return m;
}

/* Appends text to the caller's notice buffer, one line each. */
static void notice_add(const struct baseline_commit_opts *o, const char *text)
{
	if (!o->notice || !o->notice_len || !text[0])
		return;
	size_t n = strlen(o->notice);
	snprintf(o->notice + n, o->notice_len - n, "%s%s", n ? "\n" : "", text);
}

/* The hooks `git commit` would run and gate's commit does not, and commit.gpgsign. */
static void skipped_by_libgit2(git_repository *r, const struct baseline_commit_opts *o)
{
	static const char *const hooks[] = {"pre-commit", "prepare-commit-msg", "commit-msg",
	                                    "post-commit"};
	git_config *cfg = NULL;
	char dir[PATH_MAX * 2], found[256] = "", line[PATH_MAX * 3];
	const char *hooks_path = NULL;
	int sign = 0;

	if (git_repository_config_snapshot(&cfg, r) < 0)
		cfg = NULL;
	if (cfg && git_config_get_string(&hooks_path, cfg, "core.hooksPath") == 0 &&
	    hooks_path[0]) {
		if (hooks_path[0] == '/')
			snprintf(dir, sizeof(dir), "%s", hooks_path);
		else
			snprintf(dir, sizeof(dir), "%s%s", git_repository_workdir(r), hooks_path);
	} else {
		hooks_path = NULL;
		snprintf(dir, sizeof(dir), "%shooks", git_repository_commondir(r));
	}
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		char p[PATH_MAX * 3];
		snprintf(p, sizeof(p), "%s/%s", dir, hooks[i]);
		if (access(p, X_OK) == 0) {
			size_t n = strlen(found);
			snprintf(found + n, sizeof(found) - n, "%s%s", n ? ", " : "", hooks[i]);
		}
	}
	if (found[0]) {
		snprintf(line, sizeof(line),
		         "the baseline commit did not run the git hooks %s (in "
		         "%s%s): gate commits its one file with libgit2, which runs no hooks; run "
		         "them yourself if they must see it (git hook run pre-commit)",
		         found, dir, hooks_path ? ", core.hooksPath" : "");
		notice_add(o, line);
	}
	if (cfg && git_config_get_bool(&sign, cfg, "commit.gpgsign") == 0 && sign)
		notice_add(o,
		           "the baseline commit is not signed although commit.gpgsign is set: "
		           "gate cannot sign; sign it with git commit --amend --no-edit -S before "
		           "you push, if the branch requires signed commits");
	git_config_free(cfg);
}

/* A clean/smudge filter (.gitattributes filter=, e.g. Git LFS) on the path: git would store
 * what the filter makes of the file, libgit2 stores the raw bytes. Refused, never bypassed. */
static int refuse_filter(git_repository *r, const char *path, char *err, size_t errlen)
{
	const char *v = NULL;
	if (git_attr_get(&v, r, 0, path, "filter") < 0 ||
	    git_attr_value(v) != GIT_ATTR_VALUE_STRING)
		return BASELINE_OK;
	set_err(err, errlen,
	        "cannot commit the baseline: .gitattributes gives %s the filter "
	        "\"%s\", which gate's commit (libgit2) cannot run, so git would see the raw file "
	        "as changed; exclude the baseline from it (add the line \"%s -filter\" to "
	        ".gitattributes, after the line that sets it) and rerun",
	        path, v, path);
	return BASELINE_ERROR;
}

/* ---- the one-file commit ---- */

static const char *state_problem(int state, const char **fix)
{
	switch (state) {
	case GIT_REPOSITORY_STATE_MERGE:
		*fix = "finish it (git commit) or abort it (git merge --abort) first";
		return "a merge is in progress";
	case GIT_REPOSITORY_STATE_REVERT:
	case GIT_REPOSITORY_STATE_REVERT_SEQUENCE:
		*fix = "finish it (git revert --continue) or abort it (git revert --abort) first";
		return "a revert is in progress";
	case GIT_REPOSITORY_STATE_CHERRYPICK:
	case GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE:
		*fix = "finish it (git cherry-pick --continue) or abort it (git cherry-pick "
		       "--abort) first";
		return "a cherry-pick is in progress";
	case GIT_REPOSITORY_STATE_BISECT:
		*fix = "end it with git bisect reset first";
		return "a bisect is in progress";
	case GIT_REPOSITORY_STATE_REBASE:
	case GIT_REPOSITORY_STATE_REBASE_INTERACTIVE:
	case GIT_REPOSITORY_STATE_REBASE_MERGE:
	case GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE:
		*fix = "finish it (git rebase --continue) or abort it (git rebase --abort) first";
		return "a rebase is in progress";
	case GIT_REPOSITORY_STATE_APPLY_MAILBOX:
		*fix = "finish it (git am --continue) or abort it (git am --abort) first";
		return "git am is in progress";
	}
	*fix = "finish or abort the operation in progress first";
	return "a git operation is in progress";
}

/* What git_status_file reported, for the refusal. */
static void describe_status(char *buf, size_t len, unsigned int st)
{
	struct {
		unsigned int bit;
		const char *what;
	} bits[] = {
	        {GIT_STATUS_INDEX_NEW, "staged as new"},
	        {GIT_STATUS_INDEX_MODIFIED, "staged changes"},
	        {GIT_STATUS_INDEX_DELETED, "staged deletion"},
	        {GIT_STATUS_INDEX_RENAMED, "staged rename"},
	        {GIT_STATUS_INDEX_TYPECHANGE, "staged type change"},
	        {GIT_STATUS_WT_NEW, "untracked file"},
	        {GIT_STATUS_WT_MODIFIED, "unstaged changes"},
	        {GIT_STATUS_WT_DELETED, "deleted in the working tree"},
	        {GIT_STATUS_WT_TYPECHANGE, "type changed in the working tree"},
	        {GIT_STATUS_WT_RENAMED, "renamed in the working tree"},
	        {GIT_STATUS_WT_UNREADABLE, "unreadable in the working tree"},
	        {GIT_STATUS_IGNORED, "an ignored untracked file"},
	        {GIT_STATUS_CONFLICTED, "a merge conflict"},
	};
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (st & bits[i].bit) {
			int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", bits[i].what);
			if (w < 0 || (size_t)w >= len - n)
				return;
			n += (size_t)w;
		}
}

/* One file of the commit: its path, its baseline, what HEAD has there, the new bytes. */
struct commit_file {
	const char *path; /* repository-relative */
	const struct baseline *b;
	git_tree_entry *old_entry;
	git_blob *old_blob;
	git_filemode_t mode;
	char *text;
	size_t len;
	bool unchanged; /* HEAD has exactly these bytes */
	git_oid blob_id;
	char *full; /* the working-tree file */
	struct atomic_file tmp;
};

/* One baseline commit in progress: what its steps share. Everything it holds is released by
 * commit_free, whatever step failed. */
struct commit_run {
	git_repository *r;
	const struct baseline_commit_opts *opts;
	struct commit_file *files; /* one, or one per partition (gate merge) */
	size_t nfiles;
	const char *wd; /* the working tree's root, ends with "/" */
	const char *gitdir;
	char *err;
	size_t errlen;
	/* HEAD's branch and commit */
	git_reference *head;
	const char *branch, *branch_short; /* borrowed from head */
	git_oid head_id;
	char head_hex[BASELINE_OID_HEX], short_head[16];
	git_index *index;
	git_commit *parent;
	git_tree *parent_tree;
	/* the new objects */
	git_oid commit_id;
	git_tree *new_tree;
	git_signature *sig;
	char *message;
	char new_hex[BASELINE_OID_HEX];
	/* from the journal on */
	struct bgit_journal j;
	git_reference *moved;
};

/* The paths are ones gate may write, each once; an earlier gate killed in the middle of a
 * commit is finished or undone first (step 0). */
static int commit_begin(struct commit_run *c, struct baseline_repo *repo)
{
	char recovered[4096];
	for (size_t i = 0; i < c->nfiles; i++) {
		const char *path = c->files[i].path;
		if (bgit_check_path(path, c->err, c->errlen) < 0)
			return BASELINE_ERROR;
		if (strchr(path, '\n')) {
			set_err(c->err, c->errlen, "baseline path %s: may not contain a line break",
			        path);
			return BASELINE_ERROR;
		}
		for (size_t k = 0; k < i; k++)
			if (strcmp(c->files[k].path, path) == 0) {
				set_err(c->err, c->errlen,
				        "cannot commit the baselines: %s is given twice", path);
				return BASELINE_ERROR;
			}
	}
	if (git_repository_workdir(c->r)) {
		int rrc =
		        baseline_git_recover(repo, recovered, sizeof(recovered), c->err, c->errlen);
		if (rrc < 0)
			return BASELINE_ERROR;
		if (rrc == 1)
			notice_add(c->opts, recovered);
	}
	return BASELINE_OK;
}

/* Step 1: where we are: a checkout on a branch with commits, nothing in progress. */
static int commit_where(struct commit_run *c)
{
	char *err = c->err;
	size_t errlen = c->errlen;
	c->wd = git_repository_workdir(c->r);
	if (!c->wd) {
		set_err(err, errlen,
		        "cannot commit the baseline: the repository %s is bare; run "
		        "gate in a checkout",
		        git_repository_path(c->r));
		return BASELINE_ERROR;
	}
	int state = git_repository_state(c->r);
	if (state != GIT_REPOSITORY_STATE_NONE) {
		const char *fix, *what = state_problem(state, &fix);
		set_err(err, errlen, "cannot commit the baseline: %s; %s", what, fix);
		return BASELINE_ERROR;
	}
	if (git_repository_head_unborn(c->r) == 1) {
		set_err(err, errlen,
		        "cannot commit the baseline: HEAD has no commits yet (unborn "
		        "branch); make a first commit");
		return BASELINE_ERROR;
	}
	int grc = git_repository_head_detached(c->r);
	if (grc == 1) {
		git_oid id;
		char at[16] = "?";
		if (git_reference_name_to_id(&id, c->r, "HEAD") == 0)
			bgit_short_hex(at, &id);
		set_err(err, errlen,
		        "cannot commit the baseline: HEAD is detached (at %s); check "
		        "out the branch the baseline belongs to (git switch main) and rerun",
		        at);
		return BASELINE_ERROR;
	}
	if (grc < 0)
		return bgit_fail(err, errlen, grc, NULL, "cannot read HEAD");
	grc = git_repository_head(&c->head, c->r);
	if (grc < 0)
		return bgit_fail(err, errlen, grc, NULL, "cannot resolve HEAD");
	c->branch = git_reference_name(c->head);
	c->branch_short = git_reference_shorthand(c->head);
	git_oid_cpy(&c->head_id, git_reference_target(c->head));
	bgit_oid_hex(c->head_hex, &c->head_id);
	bgit_short_hex(c->short_head, &c->head_id);
	c->gitdir = git_repository_path(c->r);
	return BASELINE_OK;
}

/* Step 1, continued: HEAD is where the run measured it, and no git command holds the index
 * (it would make our index write fail after the commit). */
static int commit_head_expected(struct commit_run *c)
{
	const char *expected = c->opts->expected_head;
	if (expected) {
		git_oid want;
		if (strlen(expected) != GIT_OID_HEXSZ || git_oid_fromstr(&want, expected) < 0) {
			set_err(c->err, c->errlen,
			        "cannot commit the baseline: expected HEAD \"%s\" is not a "
			        "commit id",
			        expected);
			return BASELINE_ERROR;
		}
		if (!git_oid_equal(&want, &c->head_id)) {
			set_err(c->err, c->errlen,
			        "cannot commit the baseline: HEAD moved since the run "
			        "started (it was %.7s, %s is now at %s); the figures belong to the "
			        "old commit, so rerun gate on the new HEAD",
			        expected, c->branch_short, c->short_head);
			return BASELINE_ERROR;
		}
	}
	char lock[PATH_MAX * 2];
	snprintf(lock, sizeof(lock), "%sindex.lock", c->gitdir);
	if (access(lock, F_OK) == 0) {
		set_err(c->err, c->errlen,
		        "cannot commit the baseline: %s exists, so another git process "
		        "is using the index; wait for it to finish (or remove the stale lock)",
		        lock);
		return BASELINE_ERROR;
	}
	return BASELINE_OK;
}

/* Step 2: a baseline path has no changes of its own: not staged, not in the work tree. */
static int commit_path_clean(struct commit_run *c, const char *path)
{
	char *err = c->err;
	size_t errlen = c->errlen;
	/* a sparse checkout leaves the path out of the working tree (skip-worktree): libgit2
	 * would report it as deleted, and gate cannot update a file git keeps out */
	const git_index_entry *ie = git_index_get_bypath(c->index, path, 0);
	if (ie && (ie->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE)) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		set_err(err, errlen,
		        "cannot commit the baseline: %s is outside the sparse checkout "
		        "(its index entry is skip-worktree), so gate cannot write it; add it to "
		        "the "
		        "checkout (git sparse-checkout add %s) and rerun",
		        path, slash ? dir : path);
		return BASELINE_ERROR;
	}
	unsigned int status = 0;
	int grc = git_status_file(&status, c->r, path);
	if (grc < 0 && grc != GIT_ENOTFOUND)
		return bgit_fail(err, errlen, grc, NULL, "cannot get the status of %s", path);
	if (grc == 0 && status != GIT_STATUS_CURRENT) {
		char what[256];
		describe_status(what, sizeof(what), status);
		if (status & (GIT_STATUS_WT_NEW | GIT_STATUS_IGNORED))
			set_err(err, errlen,
			        "cannot commit the baseline: %s has local changes of its "
			        "own (%s); commit it or remove it, then rerun",
			        path, what);
		else
			set_err(err, errlen,
			        "cannot commit the baseline: %s has local changes of its "
			        "own (%s); commit them, or discard them (git restore --staged "
			        "--worktree %s), then rerun",
			        path, what, path);
		return BASELINE_ERROR;
	}
	return BASELINE_OK;
}

/* Step 2, for every file, with the index read once. */
static int commit_paths_clean(struct commit_run *c)
{
	int grc = git_repository_index(&c->index, c->r);
	if (grc < 0)
		return bgit_fail(c->err, c->errlen, grc, NULL, "cannot open the index of %s",
		                 c->gitdir);
	grc = git_index_read(c->index, 1);
	if (grc < 0)
		return bgit_fail(c->err, c->errlen, grc, "check it with git status",
		                 "cannot read the index %s", git_index_path(c->index));
	for (size_t i = 0; i < c->nfiles; i++)
		if (commit_path_clean(c, c->files[i].path) < 0)
			return BASELINE_ERROR;
	return BASELINE_OK;
}

/* Step 3: what HEAD has at each path now (nothing, or a file: its mode and blob). */
static int commit_old(struct commit_run *c)
{
	int grc = git_commit_lookup(&c->parent, c->r, &c->head_id);
	if (grc < 0 || (grc = git_commit_tree(&c->parent_tree, c->parent)) < 0)
		return bgit_fail(c->err, c->errlen, grc, NULL, "cannot read HEAD's commit %s",
		                 c->short_head);
	for (size_t i = 0; i < c->nfiles; i++) {
		struct commit_file *f = &c->files[i];
		f->mode = GIT_FILEMODE_BLOB;
		grc = git_tree_entry_bypath(&f->old_entry, c->parent_tree, f->path);
		if (grc < 0 && grc != GIT_ENOTFOUND)
			return bgit_fail(c->err, c->errlen, grc, NULL, "cannot look up HEAD:%s",
			                 f->path);
		if (!f->old_entry)
			continue;
		git_filemode_t m = git_tree_entry_filemode(f->old_entry);
		if (m != GIT_FILEMODE_BLOB && m != GIT_FILEMODE_BLOB_EXECUTABLE) {
			set_err(c->err, c->errlen,
			        "cannot commit the baseline: HEAD:%s is a %s, not a file", f->path,
			        m == GIT_FILEMODE_TREE     ? "directory"
			        : m == GIT_FILEMODE_COMMIT ? "submodule"
			                                   : "symbolic link");
			return BASELINE_ERROR;
		}
		f->mode = m;
		grc = git_blob_lookup(&f->old_blob, c->r, git_tree_entry_id(f->old_entry));
		if (grc < 0)
			return bgit_fail(c->err, c->errlen, grc, NULL, "cannot read HEAD:%s",
			                 f->path);
	}
	return BASELINE_OK;
}

/* Step 4: the new bytes; an old file we cannot read is not replaced unless forced; a filter
 * git would run on a path is not bypassed. BASELINE_UNCHANGED when HEAD has all these bytes. */
static int commit_bytes(struct commit_run *c)
{
	bool all_same = true;
	for (size_t i = 0; i < c->nfiles; i++) {
		struct commit_file *f = &c->files[i];
		if (refuse_filter(c->r, f->path, c->err, c->errlen) < 0)
			return BASELINE_ERROR;
		if (baseline_format(&f->text, &f->len, f->b, c->err, c->errlen) != BASELINE_OK)
			return BASELINE_ERROR;
		if (!f->old_blob) {
			all_same = false;
			continue;
		}
		size_t osize = (size_t)git_blob_rawsize(f->old_blob);
		const char *odata = git_blob_rawcontent(f->old_blob);
		char name[PATH_MAX];
		snprintf(name, sizeof(name), "HEAD:%s", f->path);
		if (!(c->opts->flags & BASELINE_WRITE_FORCE) &&
		    baseline_check_replaceable(odata, osize, name, c->err, c->errlen) !=
		            BASELINE_OK)
			return BASELINE_ERROR;
		f->unchanged = osize == f->len && memcmp(odata, f->text, f->len) == 0;
		all_same = all_same && f->unchanged;
	}
	return all_same ? BASELINE_UNCHANGED : BASELINE_OK;
}

/* Step 5: the objects: blobs, tree (HEAD's with the entries replaced), commit. The branch
 * does not move yet, so a failure here leaves only unreferenced objects behind. */
static int commit_objects(struct commit_run *c)
{
	char *err = c->err;
	size_t errlen = c->errlen;
	git_oid tree_id;
	git_tree_update *upd = calloc(c->nfiles, sizeof(*upd));
	if (!upd) {
		set_err(err, errlen, "out of memory");
		return BASELINE_ERROR;
	}
	int grc = 0;
	for (size_t i = 0; i < c->nfiles && grc >= 0; i++) {
		struct commit_file *f = &c->files[i];
		grc = git_blob_create_from_buffer(&f->blob_id, c->r, f->text, f->len);
		if (grc < 0) {
			free(upd);
			return bgit_fail(err, errlen, grc, NULL, "cannot write the blob for %s",
			                 f->path);
		}
		upd[i] = (git_tree_update){
		        .action = GIT_TREE_UPDATE_UPSERT, .filemode = f->mode, .path = f->path};
		git_oid_cpy(&upd[i].id, &f->blob_id);
	}
	grc = git_tree_create_updated(&tree_id, c->r, c->parent_tree, c->nfiles, upd);
	free(upd);
	if (grc < 0)
		return bgit_fail(err, errlen, grc, NULL, "cannot build the tree with %s%s",
		                 c->files[0].path, c->nfiles > 1 ? " and the other baselines" : "");
	grc = git_tree_lookup(&c->new_tree, c->r, &tree_id);
	if (grc < 0)
		return bgit_fail(err, errlen, grc, NULL, "cannot read back the new tree");
	if (bgit_signature(&c->sig, c->r, err, errlen) < 0)
		return BASELINE_ERROR;
	const struct baseline *b = c->files[0].b;
	char measured[8] = "";
	if (b->commit && strlen(b->commit) >= 7)
		snprintf(measured, sizeof(measured), "%.7s", b->commit);
	int dirty = c->opts->measured_dirty || b->commit_dirty ? 1 : 0;
	c->message = make_message(c->opts->message, c->opts->skip_ci, measured[0] ? measured : NULL,
	                          dirty, c->nfiles);
	if (!c->message) {
		set_err(err, errlen, "out of memory");
		return BASELINE_ERROR;
	}
	const git_commit *parents[1] = {c->parent};
	grc = git_commit_create(&c->commit_id, c->r, NULL, c->sig, c->sig, NULL, c->message,
	                        c->new_tree, 1, parents);
	if (grc < 0)
		return bgit_fail(err, errlen, grc, NULL, "cannot create the commit");
	bgit_oid_hex(c->new_hex, &c->commit_id);
	return BASELINE_OK;
}

/* Step 6: the journal, then git's index.lock: from here on a kill is finished or undone by
 * the next run, and no other git process writes the index until we are done. */
static int commit_journal(struct commit_run *c)
{
	struct bgit_journal *j = &c->j;
	for (size_t i = 0; i < c->nfiles; i++) {
		struct commit_file *f = &c->files[i];
		size_t flen = strlen(c->wd) + strlen(f->path) + 1;
		if (!(f->full = malloc(flen))) {
			set_err(c->err, c->errlen, "out of memory");
			return BASELINE_ERROR;
		}
		snprintf(f->full, flen, "%s%s", c->wd, f->path);
	}
	if (bgit_journal_acquire(j, c->gitdir, c->err, c->errlen) < 0)
		return BASELINE_ERROR;
	if (bgit_journal_read(j)) { /* a killed gate's, left since step 0 */
		set_err(c->err, c->errlen,
		        "cannot commit the baseline: %s appeared while gate was "
		        "starting; rerun gate",
		        j->path);
		bgit_journal_keep(j);
		return BASELINE_ERROR;
	}
	char rnd[17] = "0";
	(void)random_hex(rnd, 8);
	snprintf(j->token, sizeof(j->token), "gate %ld %s", (long)getpid(), rnd);
	snprintf(j->ref, sizeof(j->ref), "%s", c->branch);
	memcpy(j->old_hex, c->head_hex, BASELINE_OID_HEX);
	memcpy(j->new_hex, c->new_hex, BASELINE_OID_HEX);
	for (size_t i = 0; i < c->nfiles; i++) {
		char blob[BASELINE_OID_HEX];
		bgit_oid_hex(blob, &c->files[i].blob_id);
		if (bgit_journal_add_file(j, blob, c->files[i].mode, c->files[i].path) < 0) {
			set_err(c->err, c->errlen, "out of memory");
			bgit_journal_drop(j);
			return BASELINE_ERROR;
		}
	}
	if (bgit_journal_write(j, c->err, c->errlen) < 0) {
		bgit_journal_drop(j);
		return BASELINE_ERROR;
	}
	bgit_fault("journal");
	if (bgit_lock_take(j, c->err, c->errlen) < 0) {
		bgit_journal_drop(j);
		return BASELINE_ERROR;
	}
	bgit_fault("locked");
	return BASELINE_OK;
}

static void tmps_abort(struct commit_run *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		atomic_file_abort(&c->files[i].tmp);
}

/* Step 7: the new bytes beside each working-tree file, not yet visible. */
static int commit_tmp(struct commit_run *c)
{
	for (size_t i = 0; i < c->nfiles; i++) {
		struct commit_file *f = &c->files[i];
		char tmp[PATH_MAX * 2];
		bgit_tmp_path(tmp, sizeof(tmp), c->wd, f->path);
		if (atomic_file_open_at(&f->tmp, f->full, tmp,
		                        f->mode == GIT_FILEMODE_BLOB_EXECUTABLE, c->err,
		                        c->errlen) < 0 ||
		    bgit_write_all(f->tmp.fd, f->text, f->len) < 0 ||
		    atomic_file_finish(&f->tmp, c->err, c->errlen) < 0) {
			if (f->tmp.path && (!c->err || !c->err[0]))
				set_err(c->err, c->errlen, "cannot write %s: %s", tmp,
				        strerror(errno));
			tmps_abort(c);
			bgit_lock_drop(&c->j);
			bgit_journal_drop(&c->j);
			return BASELINE_ERROR;
		}
	}
	bgit_fault("tmp");
	return BASELINE_OK;
}

/* Step 8: move the branch, only if it still points where we started (compare-and-swap). */
static int commit_branch(struct commit_run *c)
{
	char reflog[512];
	snprintf(reflog, sizeof(reflog), "commit: %.*s", (int)strcspn(c->message, "\n"),
	         c->message);
	int grc = git_reference_create_matching(&c->moved, c->r, c->branch, &c->commit_id, 1,
	                                        &c->head_id, reflog);
	if (grc < 0) {
		if (grc == GIT_EMODIFIED)
			set_err(c->err, c->errlen,
			        "cannot commit the baseline: %s moved while gate was "
			        "committing (it is no longer at %s); nothing was changed, rerun "
			        "gate",
			        c->branch_short, c->short_head);
		else
			bgit_fail(c->err, c->errlen, grc, "nothing was changed", "cannot update %s",
			          c->branch_short);
		tmps_abort(c);
		bgit_lock_drop(&c->j);
		bgit_journal_drop(&c->j);
		return BASELINE_ERROR;
	}
	bgit_fault("branch");
	return BASELINE_OK;
}

/* Step 9: the working tree and the index follow: the index is read again now, under the
 * lock, and only the baselines' entries change, so whatever was staged meanwhile stays. A
 * failure here keeps the journal: the next run finishes the update. */
static int commit_follow(struct commit_run *c)
{
	char *err = c->err;
	size_t errlen = c->errlen;
	struct bgit_journal *j = &c->j;
	for (size_t i = 0; i < c->nfiles; i++) {
		struct commit_file *f = &c->files[i];
		if (atomic_file_commit(&f->tmp, err, errlen) == BASELINE_OK)
			continue;
		char why[512];
		snprintf(why, sizeof(why), "%s", err ? err : "");
		set_err(err, errlen,
		        "committed the baseline as %.7s on %s, but could not write the "
		        "working-tree file (%s); the next gate run finishes it, or restore it with "
		        "git checkout HEAD -- %s",
		        c->new_hex, c->branch_short, why, f->path);
		bgit_lock_drop(j);
		bgit_journal_keep(j);
		return BASELINE_ERROR;
	}
	bgit_fault("file");
	if (bgit_index_apply(c->r, j, err, errlen) < 0) {
		char why[1024];
		snprintf(why, sizeof(why), "%s", err ? err : "");
		set_err(err, errlen,
		        "committed the baseline as %.7s on %s, but could not update the "
		        "index for %s%s (%s); the next gate run finishes it, or fix it with git "
		        "reset -q -- %s",
		        c->new_hex, c->branch_short, c->files[0].path,
		        c->nfiles > 1 ? " and the other baselines" : "", why, c->files[0].path);
		bgit_lock_drop(j);
		bgit_journal_keep(j);
		return BASELINE_ERROR;
	}
	bgit_journal_mark_indexed(j);
	bgit_fault("indexed");
	bgit_lock_drop(j);
	bgit_fault("unlocked");
	bgit_journal_drop(j);
	return BASELINE_OK;
}

static void commit_free(struct commit_run *c)
{
	for (size_t i = 0; c->files && i < c->nfiles; i++) {
		struct commit_file *f = &c->files[i];
		atomic_file_abort(&f->tmp);
		free(f->full);
		free(f->text);
		git_blob_free(f->old_blob);
		git_tree_entry_free(f->old_entry);
	}
	free(c->files);
	bgit_journal_free(&c->j);
	free(c->message);
	git_signature_free(c->sig);
	git_index_free(c->index);
	git_tree_free(c->new_tree);
	git_tree_free(c->parent_tree);
	git_commit_free(c->parent);
	git_reference_free(c->moved);
	git_reference_free(c->head);
}

/* The files of the commit: opts->files, or the one file b at opts->path. */
static int commit_files(struct commit_run *c, const struct baseline *b)
{
	const struct baseline_commit_opts *o = c->opts;
	c->nfiles = o->nfiles ? o->nfiles : 1;
	if (!(c->files = calloc(c->nfiles, sizeof(*c->files)))) {
		set_err(c->err, c->errlen, "out of memory");
		return BASELINE_ERROR;
	}
	for (size_t i = 0; i < c->nfiles; i++) {
		c->files[i].path = o->nfiles ? o->files[i].path : o->path;
		c->files[i].b = o->nfiles ? o->files[i].b : b;
		if (!c->files[i].path)
			c->files[i].path = BASELINE_DEFAULT_PATH;
		if (!c->files[i].b) {
			set_err(c->err, c->errlen, "no baseline given for %s", c->files[i].path);
			return BASELINE_ERROR;
		}
	}
	return BASELINE_OK;
}

int baseline_git_commit(char out[BASELINE_OID_HEX], struct baseline_repo *repo,
                        const struct baseline *b, const struct baseline_commit_opts *opts,
                        char *err, size_t errlen)
{
	static const struct baseline_commit_opts none = {0};
	struct commit_run c = {.r = repo->repo,
	                       .opts = opts ? opts : &none,
	                       .err = err,
	                       .errlen = errlen,
	                       .j = {.fd = -1}};
	out[0] = '\0';
	if (err && errlen)
		err[0] = '\0';
	if (c.opts->notice && c.opts->notice_len)
		c.opts->notice[0] = '\0';

	/* every check before the first change; the steps from the journal on undo their own
	 * half-done work on failure, or keep the journal for the next run once the branch moved */
	int rc = commit_files(&c, b);
	if (rc == BASELINE_OK)
		rc = commit_begin(&c, repo);
	if (rc == BASELINE_OK)
		rc = commit_where(&c);
	if (rc == BASELINE_OK)
		rc = commit_head_expected(&c);
	if (rc == BASELINE_OK)
		rc = commit_paths_clean(&c);
	if (rc == BASELINE_OK)
		rc = commit_old(&c);
	if (rc == BASELINE_OK)
		rc = commit_bytes(&c);
	if (rc == BASELINE_OK)
		rc = commit_objects(&c);
	if (rc == BASELINE_OK)
		rc = commit_journal(&c);
	if (rc == BASELINE_OK)
		rc = commit_tmp(&c);
	if (rc == BASELINE_OK)
		rc = commit_branch(&c);
	if (rc == BASELINE_OK)
		rc = commit_follow(&c);

	if (rc == BASELINE_OK) {
		skipped_by_libgit2(c.r, c.opts);
		memcpy(out, c.new_hex, BASELINE_OID_HEX);
	} else if (rc == BASELINE_UNCHANGED) {
		memcpy(out, c.head_hex, BASELINE_OID_HEX);
	}
	commit_free(&c);
	return rc;
}
