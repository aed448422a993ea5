/* ci/git/baseline_git.c: the baseline in git with libgit2: the repository, the helpers its other
 * files share (ci/git/baseline_git_internal.h), and the baseline read as a blob at a ref.
 * The one-file commit is in baseline_git_commit.c, its crash safety in baseline_git_journal.c,
 * notes and the history in baseline_git_notes.c. */
#include "ci/git/baseline_git.h"
#include "ci/git/baseline_git_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ci/git/git2_lib.h"

_Static_assert(BGIT_HEX == BASELINE_OID_HEX, "a commit id as text has one size");

/* ---- messages ---- */

/* "WHAT: libgit2's reason[; FIX]" with the reason from git_error_last() */
int bgit_fail(char *err, size_t errlen, int code, const char *fix, const char *fmt, ...)
{
	if (err && errlen) {
		const git_error *e = git_error_last();
		char what[1024];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		char why[512];
		if (e && e->message && *e->message)
			snprintf(why, sizeof(why), "%s", e->message);
		else
			snprintf(why, sizeof(why), "libgit2 error %d", code);
		size_t n = strlen(why);
		while (n > 0 && (why[n - 1] == '\n' || why[n - 1] == '.'))
			why[--n] = '\0';
		errtext_set(err, errlen, what, "%s%s%s", why, fix ? "; " : "", fix ? fix : "");
	}
	return BASELINE_ERROR;
}

void bgit_oid_hex(char out[BGIT_HEX], const git_oid *id)
{
	git_oid_tostr(out, BGIT_HEX, id);
}

void bgit_short_hex(char out[16], const git_oid *id)
{
	git_oid_tostr(out, 8, id); /* 7 digits, like git's default abbreviation */
}

/* A repository path we are willing to read and write: relative, no "." / ".." / empty
 * components, nothing inside .git. */
int bgit_check_path(const char *path, char *err, size_t errlen)
{
	if (!path || !*path) {
		set_err(err, errlen,
		        "the baseline path is empty; set it to a file in the "
		        "repository (default %s)",
		        BASELINE_DEFAULT_PATH);
		return BASELINE_ERROR;
	}
	if (path[0] == '/') {
		set_err(err, errlen, "baseline path %s: must be relative to the repository root",
		        path);
		return BASELINE_ERROR;
	}
	for (const char *p = path;;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			set_err(err, errlen, "baseline path %s: %s", path,
			        n == 0 ? "has an empty component or ends with \"/\""
			               : "may not contain \".\" or \"..\" components");
			return BASELINE_ERROR;
		}
		if (n == 4 && strncasecmp(p, ".git", 4) == 0) {
			set_err(err, errlen, "baseline path %s: may not be inside .git", path);
			return BASELINE_ERROR;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return BASELINE_OK;
}

/* ---- the repository ---- */

int baseline_git_open(struct baseline_repo **out, const char *dir, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (git2_lib_load(err, errlen) < 0)
		return BASELINE_ERROR;
	if (git_libgit2_init() < 0)
		return bgit_fail(err, errlen, -1, NULL, "cannot initialise libgit2");
	struct baseline_repo *r = calloc(1, sizeof(*r));
	if (!r) {
		git_libgit2_shutdown();
		set_err(err, errlen, "out of memory");
		return BASELINE_ERROR;
	}
	struct stat st;
	int serr = stat(dir ? dir : ".", &st) < 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
	if (serr) {
		set_err(err, errlen, "cannot open the git repository at %s: %s", dir ? dir : ".",
		        strerror(serr));
		free(r);
		git_libgit2_shutdown();
		return BASELINE_ERROR;
	}
	int rc = git_repository_open_ext(&r->repo, dir ? dir : ".", 0, NULL);
	if (rc < 0) {
		if (rc == GIT_ENOTFOUND)
			bgit_fail(err, errlen, rc,
			          "run gate inside a git checkout, or read the baseline from the "
			          "working tree (--baseline-ref worktree)",
			          "%s is not in a git repository (looked there and in its parents)",
			          dir ? dir : ".");
		else
			bgit_fail(err, errlen, rc,
			          "check the repository with git status / git fsck",
			          "cannot open the git repository at %s", dir ? dir : ".");
		free(r);
		git_libgit2_shutdown();
		return BASELINE_ERROR;
	}
	*out = r;
	return BASELINE_OK;
}

void baseline_git_close(struct baseline_repo *repo)
{
	if (!repo)
		return;
	git_repository_free(repo->repo);
	free(repo);
	git_libgit2_shutdown();
}

const char *baseline_git_workdir(const struct baseline_repo *repo)
{
	return repo ? git_repository_workdir(repo->repo) : NULL;
}

/* Resolves "." and ".." and repeated slashes of an absolute path in place, lexically. */
static void normalize(char *path)
{
	char *w = path; /* write position; path[0] is '/' */
	for (const char *r = path; *r;) {
		while (*r == '/')
			r++;
		if (!*r)
			break;
		const char *e = strchr(r, '/');
		size_t n = e ? (size_t)(e - r) : strlen(r);
		if (n == 1 && r[0] == '.') {
			/* nothing */
		} else if (n == 2 && r[0] == '.' && r[1] == '.') {
			while (w > path && *--w != '/')
				;
		} else {
			*w++ = '/';
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	if (w == path)
		*w++ = '/';
	*w = '\0';
}

int baseline_git_relpath(char *out, size_t outlen, const struct baseline_repo *repo,
                         const char *dir, const char *path, char *err, size_t errlen)
{
	const char *wd = baseline_git_workdir(repo);
	char real_wd[PATH_MAX], real_dir[PATH_MAX], joined[PATH_MAX * 2];

	if (!wd) {
		set_err(err, errlen, "the repository has no working tree (bare)");
		return BASELINE_ERROR;
	}
	if (!path || !*path)
		path = BASELINE_DEFAULT_PATH;
	if (!realpath(wd, real_wd)) {
		set_err(err, errlen, "%s: %s", wd, strerror(errno));
		return BASELINE_ERROR;
	}
	if (path[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", path);
	} else {
		if (!realpath(dir ? dir : ".", real_dir)) {
			set_err(err, errlen, "%s: %s", dir ? dir : ".", strerror(errno));
			return BASELINE_ERROR;
		}
		snprintf(joined, sizeof(joined), "%s/%s", real_dir, path);
	}
	normalize(joined);
	size_t wl = strcmp(real_wd, "/") == 0 ? 0 : strlen(real_wd);
	if (strncmp(joined, real_wd, wl) != 0 || (joined[wl] != '/' && joined[wl] != '\0')) {
		set_err(err, errlen, "baseline path %s is outside the working tree %s", joined,
		        real_wd);
		return BASELINE_ERROR;
	}
	const char *rel = joined + wl;
	while (*rel == '/')
		rel++;
	if ((size_t)snprintf(out, outlen, "%s", rel) >= outlen) {
		set_err(err, errlen, "baseline path %s is too long", rel);
		return BASELINE_ERROR;
	}
	return bgit_check_path(out, err, errlen);
}

int baseline_git_head(char out[BASELINE_OID_HEX], struct baseline_repo *repo, char *err,
                      size_t errlen)
{
	git_oid id;
	out[0] = '\0';
	if (git_repository_head_unborn(repo->repo) == 1) {
		set_err(err, errlen,
		        "HEAD has no commits yet (unborn branch); make a first commit");
		return BASELINE_ERROR;
	}
	int rc = git_reference_name_to_id(&id, repo->repo, "HEAD");
	if (rc < 0)
		return bgit_fail(err, errlen, rc, NULL, "cannot resolve HEAD");
	bgit_oid_hex(out, &id);
	return BASELINE_OK;
}

/* Whether every path that differs between the trees of a and b lies under dir ("" for none:
 * the trees are equal). 1, 0, or -1 when they cannot be compared. */
static int diff_only_under(git_repository *r, git_commit *a, git_commit *b, const char *dir)
{
	git_tree *ta = NULL, *tb = NULL;
	git_diff *d = NULL;
	int rc = -1;
	size_t n = strlen(dir);
	if (git_commit_tree(&ta, a) < 0 || git_commit_tree(&tb, b) < 0 ||
	    git_diff_tree_to_tree(&d, r, ta, tb, NULL) < 0)
		goto out;
	rc = 1;
	for (size_t i = 0; i < git_diff_num_deltas(d) && rc == 1; i++) {
		const git_diff_delta *dl = git_diff_get_delta(d, i);
		const char *p = dl->new_file.path ? dl->new_file.path : dl->old_file.path;
		if (!n || !p || strncmp(p, dir, n) != 0 || p[n] != '/')
			rc = 0;
	}
out:
	git_diff_free(d);
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
}

int baseline_git_measured_under(struct baseline_repo *repo, const char *measured, const char *head,
                                const char *dir)
{
	git_oid mid, hid;
	git_commit *h = NULL, *m = NULL;
	if (!measured || !head || git_oid_fromstr(&mid, measured) < 0 ||
	    git_oid_fromstr(&hid, head) < 0 || git_commit_lookup(&h, repo->repo, &hid) < 0 ||
	    git_commit_lookup(&m, repo->repo, &mid) < 0) {
		git_commit_free(h);
		return -1;
	}
	int found = 0;
	for (unsigned i = 0; i < git_commit_parentcount(h) && !found; i++)
		found = git_oid_equal(git_commit_parent_id(h, i), &mid);
	int rc = found ? diff_only_under(repo->repo, m, h, dir ? dir : "") : 0;
	git_commit_free(h);
	git_commit_free(m);
	return rc;
}

/* ---- reading at a ref ---- */

static int read_worktree(struct baseline *out, struct baseline_source *src,
                         struct baseline_repo *repo, const char *path, char *err, size_t errlen)
{
	const char *wd = baseline_git_workdir(repo);
	char full[PATH_MAX * 2];
	snprintf(src->ref, sizeof(src->ref), "%s", BASELINE_REF_WORKTREE);
	snprintf(src->where, sizeof(src->where), "%s:%s", BASELINE_REF_WORKTREE, path);
	if (!wd) {
		set_err(err, errlen,
		        "cannot read the baseline from the working tree: the "
		        "repository is bare; pass --baseline-ref REF");
		return BASELINE_ERROR;
	}
	snprintf(full, sizeof(full), "%s%s", wd, path);
	int rc = baseline_read_file(out, full, err, errlen);
	if (rc == BASELINE_MISSING)
		set_err(err, errlen, "no baseline at %s (%s does not exist)", src->where, full);
	return rc;
}

/* Resolves ref to a commit. GIT_ENOTFOUND when the ref does not exist. */
int bgit_resolve_commit(git_commit **out, git_repository *repo, const char *ref)
{
	git_object *obj = NULL, *peeled = NULL;
	*out = NULL;
	int rc = git_revparse_single(&obj, repo, ref);
	if (rc < 0)
		return rc;
	rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0)
		return GIT_EPEEL; /* it exists, it is not a commit */
	*out = (git_commit *)peeled;
	return 0;
}

/* The error for a baseline ref that did not resolve (grc: bgit_resolve_commit's code). */
static int read_ref_failed(struct baseline_repo *repo, const char *asked, int grc, char *err,
                           size_t errlen)
{
	if (grc == GIT_ENOTFOUND && strcmp(asked, "HEAD") == 0 &&
	    git_repository_head_unborn(repo->repo) == 1) {
		set_err(err, errlen,
		        "cannot read the baseline at HEAD: HEAD has no commits "
		        "yet; make a first commit or pass --baseline-ref worktree");
		return BASELINE_ERROR;
	}
	if (grc == GIT_ENOTFOUND) {
		/* "origin/main": say how a shallow CI clone gets that one ref */
		char fix[768];
		const char *slash = strchr(asked, '/');
		if (slash && slash != asked && slash[1] && !strchr(slash + 1, '~') &&
		    !strchr(slash + 1, '^') && strncmp(asked, "refs/", 5) != 0)
			snprintf(fix, sizeof(fix),
			         "fetch it (git fetch --depth=1 %.*s %s:refs/remotes/%s) or "
			         "pass another --baseline-ref",
			         (int)(slash - asked), asked, slash + 1, asked);
		else
			snprintf(fix, sizeof(fix), "fetch it or pass another --baseline-ref");
		return bgit_fail(err, errlen, grc, fix, "the baseline ref %s does not exist",
		                 asked);
	}
	if (grc == GIT_EPEEL)
		return bgit_fail(err, errlen, grc, "pass a branch, tag or commit",
		                 "the baseline ref %s does not name a commit", asked);
	return bgit_fail(err, errlen, grc, "pass a branch, tag or commit",
	                 "cannot resolve the baseline ref %s", asked);
}

/* Resolves ref to its commit, or HEAD's when it does not exist and fallback_to_head (src
 * says so). BASELINE_MISSING when it fell back to an unborn HEAD. */
static int read_resolve(git_commit **commit, struct baseline_source *src,
                        struct baseline_repo *repo, const char *ref, bool fallback_to_head,
                        const char *path, char *err, size_t errlen)
{
	int grc = bgit_resolve_commit(commit, repo->repo, ref);
	if (grc == GIT_ENOTFOUND && fallback_to_head && strcmp(ref, "HEAD") != 0) {
		src->fell_back = true;
		snprintf(src->ref, sizeof(src->ref), "HEAD");
		snprintf(src->where, sizeof(src->where), "HEAD:%s", path);
		if (git_repository_head_unborn(repo->repo) == 1) {
			set_err(err, errlen,
			        "no baseline at %s: %s does not exist and HEAD has no "
			        "commits yet",
			        src->where, ref);
			return BASELINE_MISSING;
		}
		grc = bgit_resolve_commit(commit, repo->repo, "HEAD");
	}
	if (grc < 0)
		return read_ref_failed(repo, src->ref, grc, err, errlen);
	bgit_oid_hex(src->commit, git_commit_id(*commit));
	return BASELINE_OK;
}

/* Reads and parses the file at path in commit's tree. */
static int read_blob(struct baseline *out, const struct baseline_source *src,
                     struct baseline_repo *repo, git_commit *commit, const char *path, char *err,
                     size_t errlen)
{
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int rc = BASELINE_ERROR;

	int grc = git_commit_tree(&tree, commit);
	if (grc < 0) {
		bgit_fail(err, errlen, grc, "the clone may lack the objects: fetch the ref again",
		          "cannot read the tree of %s (%s)", src->ref, src->commit);
		goto out;
	}
	grc = git_tree_entry_bypath(&entry, tree, path);
	if (grc == GIT_ENOTFOUND) {
		set_err(err, errlen, "no baseline at %s", src->where);
		rc = BASELINE_MISSING;
		goto out;
	}
	if (grc < 0) {
		bgit_fail(err, errlen, grc, NULL, "cannot look up %s", src->where);
		goto out;
	}
	git_filemode_t mode = git_tree_entry_filemode(entry);
	if (mode == GIT_FILEMODE_TREE || mode == GIT_FILEMODE_COMMIT || mode == GIT_FILEMODE_LINK) {
		set_err(err, errlen,
		        "%s is a %s, not a baseline file; point the baseline path at a "
		        "file (default %s)",
		        src->where,
		        mode == GIT_FILEMODE_TREE     ? "directory"
		        : mode == GIT_FILEMODE_COMMIT ? "submodule"
		                                      : "symbolic link",
		        BASELINE_DEFAULT_PATH);
		goto out;
	}
	grc = git_blob_lookup(&blob, repo->repo, git_tree_entry_id(entry));
	if (grc < 0) {
		bgit_fail(err, errlen, grc, "the clone may lack the objects: fetch the ref again",
		          "cannot read the blob of %s", src->where);
		goto out;
	}
	git_object_size_t size = git_blob_rawsize(blob);
	if (size > BASELINE_FILE_MAX) {
		set_err(err, errlen, "%s: %llu bytes, more than the %d a baseline may have",
		        src->where, (unsigned long long)size, BASELINE_FILE_MAX);
		goto out;
	}
	rc = baseline_parse(out, git_blob_rawcontent(blob), (size_t)size, src->where, err, errlen);
out:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	git_tree_free(tree);
	return rc;
}

int baseline_git_read(struct baseline *out, struct baseline_source *src, struct baseline_repo *repo,
                      const char *ref, bool fallback_to_head, const char *path, char *err,
                      size_t errlen)
{
	git_commit *commit = NULL;

	memset(out, 0, sizeof(*out));
	memset(src, 0, sizeof(*src));
	if (err && errlen)
		err[0] = '\0';
	if (!path)
		path = BASELINE_DEFAULT_PATH;
	if (!ref || !*ref)
		ref = BASELINE_DEFAULT_REF;
	snprintf(src->ref, sizeof(src->ref), "%s", ref);
	snprintf(src->where, sizeof(src->where), "%s:%s", ref, path);
	if (bgit_check_path(path, err, errlen) < 0)
		return BASELINE_ERROR;
	if (strcmp(ref, BASELINE_REF_WORKTREE) == 0)
		return read_worktree(out, src, repo, path, err, errlen);
	int rc = read_resolve(&commit, src, repo, ref, fallback_to_head, path, err, errlen);
	if (rc == BASELINE_OK)
		rc = read_blob(out, src, repo, commit, path, err, errlen);
	git_commit_free(commit);
	return rc;
}

/* ---- the author, the working tree ---- */

/* GATE_AUTHOR_NAME / GATE_AUTHOR_EMAIL, else user.name / user.email from git config. */
int bgit_signature(git_signature **out, git_repository *repo, char *err, size_t errlen)
{
	git_config *cfg = NULL;
	const char *name = getenv("GATE_AUTHOR_NAME"), *email = getenv("GATE_AUTHOR_EMAIL");
	int rc;

	*out = NULL;
	if (!name || !*name || !email || !*email) {
		rc = git_repository_config_snapshot(&cfg, repo);
		if (rc < 0)
			return bgit_fail(err, errlen, rc, NULL,
			                 "cannot read the git configuration");
		if (!name || !*name)
			if (git_config_get_string(&name, cfg, "user.name") < 0)
				name = NULL;
		if (!email || !*email)
			if (git_config_get_string(&email, cfg, "user.email") < 0)
				email = NULL;
	}
	if (!name || !*name || !email || !*email) {
		set_err(err, errlen,
		        "no author for the commit: git config has no user.%s; set it "
		        "(git config user.name NAME; git config user.email EMAIL) or set "
		        "GATE_AUTHOR_NAME and GATE_AUTHOR_EMAIL",
		        !name || !*name ? "name" : "email");
		git_config_free(cfg);
		return BASELINE_ERROR;
	}
	rc = git_signature_now(out, name, email);
	if (rc < 0)
		bgit_fail(err, errlen, rc, "fix GATE_AUTHOR_* or user.name / user.email",
		          "invalid author \"%s <%s>\"", name, email);
	git_config_free(cfg); /* name and email borrow from it until here */
	return rc < 0 ? BASELINE_ERROR : BASELINE_OK;
}

/* Local changes anywhere but the baseline path (untracked files count: they change what
 * the suite runs). 1 dirty, 0 clean, -1 when status cannot be read. */
static int worktree_dirty(git_repository *r, const char *path)
{
	git_status_list *list = NULL;
	git_status_options so;
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
	           GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&list, r, &so) < 0)
		return -1;
	int dirty = 0;
	for (size_t i = 0; i < git_status_list_entrycount(list) && !dirty; i++) {
		const git_status_entry *e = git_status_byindex(list, i);
		const git_diff_delta *d =
		        e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
		const char *p = d ? (d->new_file.path ? d->new_file.path : d->old_file.path) : NULL;
		if (e->status == GIT_STATUS_CURRENT || e->status == GIT_STATUS_IGNORED)
			continue;
		if (p && strcmp(p, path) == 0)
			continue;
		dirty = 1;
	}
	git_status_list_free(list);
	return dirty;
}

int baseline_git_worktree_dirty(struct baseline_repo *repo, const char *path)
{
	return worktree_dirty(repo->repo, path ? path : BASELINE_DEFAULT_PATH);
}
