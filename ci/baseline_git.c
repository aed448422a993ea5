/* ci/baseline_git.c: the baseline in git with libgit2: blob at a ref, a one-file commit on
 * top of HEAD that leaves every other change alone, notes as the run history. */
#include "baseline_git.h"
#include "atomic.h"
#include "errtext.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <jansson.h>

struct baseline_repo {
	git_repository *repo;
};

/* ---- messages ---- */

/* messages here name their subject themselves: no "NAME: " prefix */
#define set_err(err, errlen, ...) errtext_set(err, errlen, NULL, __VA_ARGS__)

/* "WHAT: libgit2's reason[; FIX]" with the reason from git_error_last() */
__attribute__((format(printf, 5, 6))) static int git_fail(char *err, size_t errlen, int code,
                                                          const char *fix, const char *fmt, ...)
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
		snprintf(err, errlen, "%s: %s%s%s", what, why, fix ? "; " : "", fix ? fix : "");
	}
	return BASELINE_ERROR;
}

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

static void oid_hex(char out[BASELINE_OID_HEX], const git_oid *id)
{
	git_oid_tostr(out, BASELINE_OID_HEX, id);
}

static void short_hex(char out[16], const git_oid *id)
{
	git_oid_tostr(out, 8, id); /* 7 digits, like git's default abbreviation */
}

/* A repository path we are willing to read and write: relative, no "." / ".." / empty
 * components, nothing inside .git. */
static int check_relpath(const char *path, char *err, size_t errlen)
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
	if (git_libgit2_init() < 0)
		return git_fail(err, errlen, -1, NULL, "cannot initialise libgit2");
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
			git_fail(err, errlen, rc,
			         "run gate inside a git checkout, or read the baseline from the "
			         "working tree (--baseline-ref worktree)",
			         "%s is not in a git repository (looked there and in its parents)",
			         dir ? dir : ".");
		else
			git_fail(err, errlen, rc, "check the repository with git status / git fsck",
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
	return check_relpath(out, err, errlen);
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
		return git_fail(err, errlen, rc, NULL, "cannot resolve HEAD");
	oid_hex(out, &id);
	return BASELINE_OK;
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
static int resolve_commit(git_commit **out, git_repository *repo, const char *ref)
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

int baseline_git_read(struct baseline *out, struct baseline_source *src, struct baseline_repo *repo,
                      const char *ref, bool fallback_to_head, const char *path, char *err,
                      size_t errlen)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int rc = BASELINE_ERROR, grc;

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
	if (check_relpath(path, err, errlen) < 0)
		return BASELINE_ERROR;
	if (strcmp(ref, BASELINE_REF_WORKTREE) == 0)
		return read_worktree(out, src, repo, path, err, errlen);

	grc = resolve_commit(&commit, repo->repo, ref);
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
		grc = resolve_commit(&commit, repo->repo, "HEAD");
	}
	if (grc < 0) {
		const char *asked = src->ref;
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
				snprintf(
				        fix, sizeof(fix),
				        "fetch it (git fetch --depth=1 %.*s %s:refs/remotes/%s) or "
				        "pass another --baseline-ref",
				        (int)(slash - asked), asked, slash + 1, asked);
			else
				snprintf(fix, sizeof(fix),
				         "fetch it or pass another --baseline-ref");
			return git_fail(err, errlen, grc, fix, "the baseline ref %s does not exist",
			                asked);
		}
		if (grc == GIT_EPEEL)
			return git_fail(err, errlen, grc, "pass a branch, tag or commit",
			                "the baseline ref %s does not name a commit", asked);
		return git_fail(err, errlen, grc, "pass a branch, tag or commit",
		                "cannot resolve the baseline ref %s", asked);
	}
	oid_hex(src->commit, git_commit_id(commit));

	grc = git_commit_tree(&tree, commit);
	if (grc < 0) {
		git_fail(err, errlen, grc, "the clone may lack the objects: fetch the ref again",
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
		git_fail(err, errlen, grc, NULL, "cannot look up %s", src->where);
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
		git_fail(err, errlen, grc, "the clone may lack the objects: fetch the ref again",
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
	git_commit_free(commit);
	return rc;
}

/* ---- signatures and messages ---- */

/* GATE_AUTHOR_NAME / GATE_AUTHOR_EMAIL, else user.name / user.email from git config. */
static int make_signature(git_signature **out, git_repository *repo, char *err, size_t errlen)
{
	git_config *cfg = NULL;
	const char *name = getenv("GATE_AUTHOR_NAME"), *email = getenv("GATE_AUTHOR_EMAIL");
	int rc;

	*out = NULL;
	if (!name || !*name || !email || !*email) {
		rc = git_repository_config_snapshot(&cfg, repo);
		if (rc < 0)
			return git_fail(err, errlen, rc, NULL, "cannot read the git configuration");
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
		git_fail(err, errlen, rc, "fix GATE_AUTHOR_* or user.name / user.email",
		         "invalid author \"%s <%s>\"", name, email);
	git_config_free(cfg); /* name and email borrow from it until here */
	return rc < 0 ? BASELINE_ERROR : BASELINE_OK;
}

/* The commit message, with " [skip ci]" on the subject line when asked; malloc'd. */
static char *make_message(const char *message, bool skip_ci, const char *measured, int dirty)
{
	char dflt[160];
	if (!message || !*message) {
		snprintf(dflt, sizeof(dflt), "gate: update the memory baseline%s%s%s%s",
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

/* ---- crash safety: a journal under .git and git's own index.lock ----
 *
 * A baseline commit changes three things git keeps apart: the branch, the working-tree file
 * and the index. Before the first of them changes, gate writes what it is about to do to
 * GITDIR/gate-baseline-commit (flock'd while a gate works on it, so a live gate and a dead
 * one are told apart) and takes GITDIR/index.lock the way git does (created with link(2), so
 * it appears with gate's token in it). A run that finds the journal of a killed gate
 * finishes the update when the branch had moved, or undoes it when it had not. */

void (*baseline_git_fault)(const char *step);

static void fault(const char *step)
{
	if (baseline_git_fault)
		baseline_git_fault(step);
}

#define JOURNAL_NAME "gate-baseline-commit"
#define JOURNAL_MAX 16384

struct journal {
	int fd;                /* the flock'd journal; -1 when none */
	char gitdir[PATH_MAX]; /* ends with "/" */
	char path[PATH_MAX + 64];
	char token[40]; /* "gate <pid> <random>": the content of our index.lock */
	char ref[256];
	char old_hex[BASELINE_OID_HEX], new_hex[BASELINE_OID_HEX], blob_hex[BASELINE_OID_HEX];
	unsigned mode;
	char relpath[PATH_MAX];
	char tmp[PATH_MAX * 2]; /* the temp file beside the working-tree file */
	bool indexed;           /* the index already has the new entry */
	bool has_commit;        /* the fields above were read (a journal that got that far) */
};

static void gitdir_file(char *out, size_t len, const struct journal *j, const char *name)
{
	snprintf(out, len, "%s%s", j->gitdir, name);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void fsync_path_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

/* Opens and flocks the journal (created empty when absent). BASELINE_ERROR when another
 * gate holds it (named in err) or it cannot be made. */
static int journal_acquire(struct journal *j, const char *gitdir, char *err, size_t errlen)
{
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	snprintf(j->gitdir, sizeof(j->gitdir), "%s", gitdir);
	gitdir_file(j->path, sizeof(j->path), j, JOURNAL_NAME);
	for (int tries = 0; tries < 100; tries++) {
		int fd = open(j->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			set_err(err, errlen, "cannot commit the baseline: cannot create %s: %s",
			        j->path, strerror(errno));
			return BASELINE_ERROR;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd);
			set_err(err, errlen,
			        "cannot commit the baseline: another gate is committing "
			        "a baseline in this repository now (it holds %s); wait for it to "
			        "finish, then rerun",
			        j->path);
			return BASELINE_ERROR;
		}
		/* the holder before us may have removed it after we opened it: use the live one */
		struct stat a, b;
		if (fstat(fd, &a) == 0 && stat(j->path, &b) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev) {
			j->fd = fd;
			return BASELINE_OK;
		}
		close(fd);
	}
	set_err(err, errlen, "cannot commit the baseline: %s keeps changing", j->path);
	return BASELINE_ERROR;
}

/* Drops the journal: the update it describes is complete or undone. */
static void journal_drop(struct journal *j)
{
	if (j->fd < 0)
		return;
	unlink(j->path);
	fsync_path_dir(j->gitdir);
	close(j->fd);
	j->fd = -1;
}

/* Lets go of the journal but keeps it for the next run (the update is half done). */
static void journal_keep(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
}

/* Reads the journal's fields; false when it is empty (nothing was started). */
static bool journal_read(struct journal *j)
{
	char buf[JOURNAL_MAX + 1];
	ssize_t n = pread(j->fd, buf, JOURNAL_MAX, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *v = strchr(line, ' ');
		if (!v)
			v = line + strlen(line);
		else
			*v++ = '\0';
#define FIELD(name, dst)                                                                           \
	if (strcmp(line, name) == 0)                                                               \
		snprintf(dst, sizeof(dst), "%s", v);
		FIELD("token", j->token)
		FIELD("ref", j->ref)
		FIELD("old", j->old_hex)
		FIELD("new", j->new_hex)
		FIELD("blob", j->blob_hex)
		FIELD("path", j->relpath)
		FIELD("tmp", j->tmp)
#undef FIELD
		if (strcmp(line, "mode") == 0)
			j->mode = (unsigned)strtoul(v, NULL, 8);
		if (strcmp(line, "indexed") == 0)
			j->indexed = true;
	}
	j->has_commit = j->ref[0] && strlen(j->old_hex) == 40 && strlen(j->new_hex) == 40 &&
	                strlen(j->blob_hex) == 40 && j->relpath[0];
	return true;
}

/* Writes the journal's fields and fsyncs it: from here on a kill is recoverable. */
static int journal_write(struct journal *j, char *err, size_t errlen)
{
	char buf[JOURNAL_MAX];
	int n = snprintf(buf, sizeof(buf),
	                 "gate baseline commit journal 1\ntoken %s\nref %s\nold %s\nnew %s\n"
	                 "blob %s\nmode %o\npath %s\ntmp %s\n",
	                 j->token, j->ref, j->old_hex, j->new_hex, j->blob_hex, j->mode, j->relpath,
	                 j->tmp);
	if (n < 0 || (size_t)n >= sizeof(buf) || ftruncate(j->fd, 0) < 0 ||
	    pwrite(j->fd, buf, (size_t)n, 0) != n || fsync(j->fd) < 0) {
		set_err(err, errlen,
		        "cannot commit the baseline: cannot write %s: %s; nothing was "
		        "changed",
		        j->path, strerror(errno));
		return BASELINE_ERROR;
	}
	fsync_path_dir(j->gitdir);
	return BASELINE_OK;
}

static void journal_mark_indexed(struct journal *j)
{
	off_t end = lseek(j->fd, 0, SEEK_END);
	if (end >= 0 && pwrite(j->fd, "indexed\n", 8, end) == 8)
		(void)fsync(j->fd);
	j->indexed = true;
}

/* index.lock holds our token: it is ours (a killed gate's, when read from the journal). */
static bool lock_is_ours(const struct journal *j)
{
	char lock[PATH_MAX + 64], buf[64];
	gitdir_file(lock, sizeof(lock), j, "index.lock");
	int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || !j->token[0])
		return false;
	buf[n] = '\0';
	return strcmp(buf, j->token) == 0;
}

/* Takes index.lock as git does, with our token in it from the first instant (written to a
 * file of ours, then linked: link(2) fails when the lock exists). */
static int lock_take(struct journal *j, char *err, size_t errlen)
{
	char lock[PATH_MAX + 64], tmp[PATH_MAX + 64];
	if (lock_is_ours(j))
		return BASELINE_OK;
	gitdir_file(lock, sizeof(lock), j, "index.lock");
	gitdir_file(tmp, sizeof(tmp), j, "gate-index.lock.tmp");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write_all(fd, j->token, strlen(j->token)) < 0 || fsync(fd) < 0) {
		set_err(err, errlen, "cannot commit the baseline: cannot write %s: %s", tmp,
		        strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		return BASELINE_ERROR;
	}
	close(fd);
	int rc = link(tmp, lock);
	int e = errno;
	unlink(tmp);
	if (rc < 0) {
		if (e == EEXIST)
			set_err(err, errlen,
			        "cannot commit the baseline: %s exists, so another git "
			        "process is using the index; wait for it to finish (or remove the "
			        "stale lock), then rerun",
			        lock);
		else
			set_err(err, errlen, "cannot commit the baseline: cannot create %s: %s",
			        lock, strerror(e));
		return BASELINE_ERROR;
	}
	return BASELINE_OK;
}

static void lock_drop(const struct journal *j)
{
	char p[PATH_MAX + 64];
	if (lock_is_ours(j)) {
		gitdir_file(p, sizeof(p), j, "index.lock");
		unlink(p);
	}
	gitdir_file(p, sizeof(p), j, "gate-index.lock.tmp");
	unlink(p);
	gitdir_file(p, sizeof(p), j, "gate-index.new");
	unlink(p);
	gitdir_file(p, sizeof(p), j, "gate-index.new.lock");
	unlink(p);
}

/* Copies src to dst (dst replaced); ENOENT of src leaves no dst and returns 1. */
static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? 1 : -1;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write_all(out, buf, (size_t)n) < 0) {
			rc = -1;
			break;
		}
	}
	if (fsync(out) < 0)
		rc = -1;
	close(in);
	close(out);
	return rc;
}

/* With index.lock ours: reads the index as it is now (whatever was staged meanwhile), sets
 * only the baseline's entry and replaces the index. The working-tree file's stat data goes
 * in only when the file has the blob's bytes, so git never takes another file as clean. */
static int index_apply(git_repository *r, struct journal *j, char *err, size_t errlen)
{
	char index_path[PATH_MAX + 64], next[PATH_MAX + 64], full[PATH_MAX * 2];
	git_index *idx = NULL;
	git_oid blob_id, on_disk;
	int grc, rc = BASELINE_ERROR;

	gitdir_file(index_path, sizeof(index_path), j, "index");
	gitdir_file(next, sizeof(next), j, "gate-index.new");
	if (git_oid_fromstr(&blob_id, j->blob_hex) < 0) {
		set_err(err, errlen, "the journal %s names no blob", j->path);
		return BASELINE_ERROR;
	}
	if (copy_file(index_path, next) < 0) {
		set_err(err, errlen, "cannot copy the index %s to %s: %s", index_path, next,
		        strerror(errno));
		goto out;
	}
	grc = git_index_open(&idx, next);
	if (grc < 0) {
		git_fail(err, errlen, grc, "check it with git status", "cannot read the index %s",
		         index_path);
		goto out;
	}
	git_index_entry e;
	memset(&e, 0, sizeof(e));
	snprintf(full, sizeof(full), "%s%s", git_repository_workdir(r), j->relpath);
	struct stat st;
	if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) &&
	    git_odb_hashfile(&on_disk, full, GIT_OBJECT_BLOB) == 0 &&
	    git_oid_equal(&on_disk, &blob_id)) {
		e.ctime.seconds = (int32_t)st.st_ctim.tv_sec;
		e.ctime.nanoseconds = (uint32_t)st.st_ctim.tv_nsec;
		e.mtime.seconds = (int32_t)st.st_mtim.tv_sec;
		e.mtime.nanoseconds = (uint32_t)st.st_mtim.tv_nsec;
		e.dev = (uint32_t)st.st_dev;
		e.ino = (uint32_t)st.st_ino;
		e.uid = st.st_uid;
		e.gid = st.st_gid;
		e.file_size = (uint32_t)st.st_size;
	}
	e.mode = j->mode ? j->mode : GIT_FILEMODE_BLOB;
	e.path = j->relpath;
	git_oid_cpy(&e.id, &blob_id);
	grc = git_index_add(idx, &e);
	if (grc >= 0)
		grc = git_index_write(idx);
	if (grc < 0) {
		git_fail(err, errlen, grc, NULL, "cannot write the new index %s", next);
		goto out;
	}
	fault("index-written");
	if (rename(next, index_path) < 0) {
		set_err(err, errlen, "cannot rename %s to %s: %s", next, index_path,
		        strerror(errno));
		goto out;
	}
	fsync_path_dir(j->gitdir);
	rc = BASELINE_OK;
out:
	git_index_free(idx);
	unlink(next);
	return rc;
}

/* The temp file beside the working-tree file: a name fixed by the path, so that the journal
 * never has to be trusted with a path to remove. */
static void tmp_path(char *out, size_t len, const char *workdir, const char *relpath)
{
	const char *slash = strrchr(relpath, '/');
	if (slash)
		snprintf(out, len, "%s%.*s/.%s.gate-tmp", workdir, (int)(slash - relpath), relpath,
		         slash + 1);
	else
		snprintf(out, len, "%s.%s.gate-tmp", workdir, relpath);
}

/* Moves a finished temp file over the working-tree file, if it is still there. */
static int tmp_finish(git_repository *r, struct journal *j, char *err, size_t errlen)
{
	char target[PATH_MAX * 2];
	struct stat st;
	if (lstat(j->tmp, &st) < 0)
		return BASELINE_OK; /* renamed already */
	snprintf(target, sizeof(target), "%s%s", git_repository_workdir(r), j->relpath);
	if (rename(j->tmp, target) < 0) {
		set_err(err, errlen, "cannot rename %s over %s: %s", j->tmp, target,
		        strerror(errno));
		return BASELINE_ERROR;
	}
	char *slash = strrchr(target, '/');
	if (slash) {
		*slash = '\0';
		fsync_path_dir(target);
	}
	return BASELINE_OK;
}

/* With the journal of a killed gate in hand (read, flock'd): finishes the update when the
 * branch had moved, undoes it when it had not. Returns 1 with msg saying which, or
 * BASELINE_ERROR (the journal is kept for the next run). */
static int journal_recover(git_repository *r, struct journal *j, char *msg, size_t msglen,
                           char *err, size_t errlen)
{
	const char *wd = git_repository_workdir(r);
	char why[1024] = "";
	if (j->relpath[0] && check_relpath(j->relpath, why, sizeof(why)) < 0)
		j->has_commit = false, j->relpath[0] = '\0';
	if (wd && j->relpath[0])
		tmp_path(j->tmp, sizeof(j->tmp), wd, j->relpath);
	else
		j->tmp[0] = '\0';
	git_oid now, old_id, new_id;
	bool moved = false, same = false;
	if (j->has_commit && wd && git_oid_fromstr(&old_id, j->old_hex) == 0 &&
	    git_oid_fromstr(&new_id, j->new_hex) == 0 &&
	    git_reference_name_to_id(&now, r, j->ref) == 0) {
		same = git_oid_equal(&now, &old_id);
		moved = git_oid_equal(&now, &new_id);
	}
	if (moved) {
		if (tmp_finish(r, j, why, sizeof(why)) < 0)
			goto keep;
		if (!j->indexed) {
			if (lock_take(j, why, sizeof(why)) < 0 ||
			    index_apply(r, j, why, sizeof(why)) < 0)
				goto keep;
		}
		lock_drop(j);
		journal_drop(j);
		snprintf(msg, msglen,
		         "an earlier gate was stopped in the middle of a baseline "
		         "commit after %s had moved to %.7s; finished it: %s in the working tree "
		         "and in the index now match that commit",
		         j->ref, j->new_hex, j->relpath);
		return 1;
	}
	if (j->tmp[0])
		unlink(j->tmp);
	lock_drop(j);
	journal_drop(j);
	if (same || !j->has_commit)
		snprintf(msg, msglen,
		         "an earlier gate was stopped in the middle of a baseline "
		         "commit before %s moved; undid it (removed its temp file and its "
		         "index.lock; nothing else had changed)",
		         j->has_commit ? j->ref : "the branch");
	else
		snprintf(
		        msg, msglen,
		        "found the journal of an interrupted baseline commit "
		        "(%.7s on %s), but the branch has moved on since; removed gate's temp file "
		        "and lock and left the branch, the index and the working tree as they are: "
		        "check git status -- %s",
		        j->new_hex, j->ref, j->relpath);
	return 1;
keep:
	lock_drop(j);
	journal_keep(j);
	set_err(err, errlen,
	        "an earlier gate was stopped in the middle of a baseline commit "
	        "(%s is at %.7s, the new baseline), and finishing it failed: %s; fix that and "
	        "rerun gate, or restore the file by hand (git checkout HEAD -- %s) and remove %s",
	        j->ref, j->new_hex, why, j->relpath, j->path);
	return BASELINE_ERROR;
}

int baseline_git_recover(struct baseline_repo *repo, char *msg, size_t msglen, char *err,
                         size_t errlen)
{
	struct journal j;
	char path[PATH_MAX + 64];
	if (msg && msglen)
		msg[0] = '\0';
	if (err && errlen)
		err[0] = '\0';
	const char *gitdir = git_repository_path(repo->repo);
	snprintf(path, sizeof(path), "%s%s", gitdir, JOURNAL_NAME);
	if (access(path, F_OK) < 0)
		return 0;
	char busy[512];
	if (journal_acquire(&j, gitdir, busy, sizeof(busy)) < 0)
		return 0; /* a live gate is at work: it is not ours to finish */
	if (!journal_read(&j)) {
		journal_drop(&j);
		return 0;
	}
	char m[2048];
	int rc = journal_recover(repo->repo, &j, m, sizeof(m), err, errlen);
	if (rc == 1 && msg)
		snprintf(msg, msglen, "%s", m);
	return rc;
}

/* ---- what git would have done ---- */

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

int baseline_git_commit(char out[BASELINE_OID_HEX], struct baseline_repo *repo,
                        const struct baseline *b, const struct baseline_commit_opts *opts,
                        char *err, size_t errlen)
{
	static const struct baseline_commit_opts none = {0};
	git_repository *r = repo->repo;
	git_reference *head = NULL, *moved = NULL;
	git_commit *parent = NULL;
	git_tree *parent_tree = NULL, *new_tree = NULL;
	git_tree_entry *old_entry = NULL;
	git_blob *old_blob = NULL;
	git_index *index = NULL;
	git_signature *sig = NULL;
	struct atomic_file tmp = {0};
	struct journal j = {.fd = -1};
	char *text = NULL, *message = NULL, *full = NULL;
	size_t len = 0;
	int rc = BASELINE_ERROR, grc;
	char head_hex[BASELINE_OID_HEX], new_hex[BASELINE_OID_HEX], short_head[16];
	char recovered[2048];

	if (!opts)
		opts = &none;
	const char *path = opts->path ? opts->path : BASELINE_DEFAULT_PATH;
	out[0] = '\0';
	if (err && errlen)
		err[0] = '\0';
	if (opts->notice && opts->notice_len)
		opts->notice[0] = '\0';
	if (check_relpath(path, err, errlen) < 0)
		return BASELINE_ERROR;
	if (strchr(path, '\n')) {
		set_err(err, errlen, "baseline path %s: may not contain a line break", path);
		return BASELINE_ERROR;
	}

	/* 0. an earlier gate killed in the middle of a commit: finish or undo that first */
	if (git_repository_workdir(r)) {
		int rrc = baseline_git_recover(repo, recovered, sizeof(recovered), err, errlen);
		if (rrc < 0)
			return BASELINE_ERROR;
		if (rrc == 1)
			notice_add(opts, recovered);
	}

	/* 1. where we are: a branch with commits, nothing in progress */
	const char *wd = git_repository_workdir(r);
	if (!wd) {
		set_err(err, errlen,
		        "cannot commit the baseline: the repository %s is bare; run "
		        "gate in a checkout",
		        git_repository_path(r));
		return BASELINE_ERROR;
	}
	int state = git_repository_state(r);
	if (state != GIT_REPOSITORY_STATE_NONE) {
		const char *fix, *what = state_problem(state, &fix);
		set_err(err, errlen, "cannot commit the baseline: %s; %s", what, fix);
		return BASELINE_ERROR;
	}
	if (git_repository_head_unborn(r) == 1) {
		set_err(err, errlen,
		        "cannot commit the baseline: HEAD has no commits yet (unborn "
		        "branch); make a first commit");
		return BASELINE_ERROR;
	}
	grc = git_repository_head_detached(r);
	if (grc == 1) {
		git_oid id;
		char at[16] = "?";
		if (git_reference_name_to_id(&id, r, "HEAD") == 0)
			short_hex(at, &id);
		set_err(err, errlen,
		        "cannot commit the baseline: HEAD is detached (at %s); check "
		        "out the branch the baseline belongs to (git switch main) and rerun",
		        at);
		return BASELINE_ERROR;
	}
	if (grc < 0)
		return git_fail(err, errlen, grc, NULL, "cannot read HEAD");
	grc = git_repository_head(&head, r);
	if (grc < 0)
		return git_fail(err, errlen, grc, NULL, "cannot resolve HEAD");
	const char *branch = git_reference_name(head),
	           *branch_short = git_reference_shorthand(head);
	git_oid head_id;
	git_oid_cpy(&head_id, git_reference_target(head));
	oid_hex(head_hex, &head_id);
	short_hex(short_head, &head_id);

	if (opts->expected_head) {
		git_oid want;
		if (strlen(opts->expected_head) != GIT_OID_HEXSZ ||
		    git_oid_fromstr(&want, opts->expected_head) < 0) {
			set_err(err, errlen,
			        "cannot commit the baseline: expected HEAD \"%s\" is not a "
			        "commit id",
			        opts->expected_head);
			goto out;
		}
		if (!git_oid_equal(&want, &head_id)) {
			set_err(err, errlen,
			        "cannot commit the baseline: HEAD moved since the run "
			        "started (it was %.7s, %s is now at %s); the figures belong to the "
			        "old commit, so rerun gate on the new HEAD",
			        opts->expected_head, branch_short, short_head);
			goto out;
		}
	}

	/* a git command holding the index would make our index write fail after the commit */
	const char *gitdir = git_repository_path(r);
	char lock[PATH_MAX * 2];
	snprintf(lock, sizeof(lock), "%sindex.lock", gitdir);
	if (access(lock, F_OK) == 0) {
		set_err(err, errlen,
		        "cannot commit the baseline: %s exists, so another git process "
		        "is using the index; wait for it to finish (or remove the stale lock)",
		        lock);
		goto out;
	}

	/* 2. the baseline path has no changes of its own: not staged, not in the work tree */
	grc = git_repository_index(&index, r);
	if (grc < 0) {
		git_fail(err, errlen, grc, NULL, "cannot open the index of %s", gitdir);
		goto out;
	}
	grc = git_index_read(index, 1);
	if (grc < 0) {
		git_fail(err, errlen, grc, "check it with git status", "cannot read the index %s",
		         git_index_path(index));
		goto out;
	}
	/* a sparse checkout leaves the path out of the working tree (skip-worktree): libgit2
	 * would report it as deleted, and gate cannot update a file git keeps out */
	const git_index_entry *ie = git_index_get_bypath(index, path, 0);
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
		goto out;
	}
	unsigned int status = 0;
	grc = git_status_file(&status, r, path);
	if (grc < 0 && grc != GIT_ENOTFOUND) {
		git_fail(err, errlen, grc, NULL, "cannot get the status of %s", path);
		goto out;
	}
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
		goto out;
	}

	/* 3. what HEAD has at the path now */
	grc = git_commit_lookup(&parent, r, &head_id);
	if (grc < 0 || (grc = git_commit_tree(&parent_tree, parent)) < 0) {
		git_fail(err, errlen, grc, NULL, "cannot read HEAD's commit %s", short_head);
		goto out;
	}
	git_filemode_t mode = GIT_FILEMODE_BLOB;
	grc = git_tree_entry_bypath(&old_entry, parent_tree, path);
	if (grc < 0 && grc != GIT_ENOTFOUND) {
		git_fail(err, errlen, grc, NULL, "cannot look up HEAD:%s", path);
		goto out;
	}
	if (old_entry) {
		git_filemode_t m = git_tree_entry_filemode(old_entry);
		if (m != GIT_FILEMODE_BLOB && m != GIT_FILEMODE_BLOB_EXECUTABLE) {
			set_err(err, errlen,
			        "cannot commit the baseline: HEAD:%s is a %s, not a file", path,
			        m == GIT_FILEMODE_TREE     ? "directory"
			        : m == GIT_FILEMODE_COMMIT ? "submodule"
			                                   : "symbolic link");
			goto out;
		}
		mode = m;
		grc = git_blob_lookup(&old_blob, r, git_tree_entry_id(old_entry));
		if (grc < 0) {
			git_fail(err, errlen, grc, NULL, "cannot read HEAD:%s", path);
			goto out;
		}
	}

	/* 4. the new bytes; an old file we cannot read is not replaced unless forced; a
	 * filter git would run on the path is not bypassed */
	if (refuse_filter(r, path, err, errlen) < 0)
		goto out;
	if (baseline_format(&text, &len, b, err, errlen) != BASELINE_OK)
		goto out;
	if (old_blob) {
		size_t osize = (size_t)git_blob_rawsize(old_blob);
		const char *odata = git_blob_rawcontent(old_blob);
		char name[PATH_MAX];
		snprintf(name, sizeof(name), "HEAD:%s", path);
		if (!(opts->flags & BASELINE_WRITE_FORCE) &&
		    baseline_check_replaceable(odata, osize, name, err, errlen) != BASELINE_OK)
			goto out;
		if (osize == len && memcmp(odata, text, len) == 0) {
			memcpy(out, head_hex, BASELINE_OID_HEX);
			rc = BASELINE_UNCHANGED;
			goto out;
		}
	}

	/* 5. objects: blob, tree (HEAD's with one entry replaced), commit; the branch does not
	 * move yet, so a failure here leaves only unreferenced objects behind */
	git_oid blob_id, tree_id, commit_id;
	grc = git_blob_create_from_buffer(&blob_id, r, text, len);
	if (grc < 0) {
		git_fail(err, errlen, grc, NULL, "cannot write the blob for %s", path);
		goto out;
	}
	git_tree_update upd = {.action = GIT_TREE_UPDATE_UPSERT, .filemode = mode, .path = path};
	git_oid_cpy(&upd.id, &blob_id);
	grc = git_tree_create_updated(&tree_id, r, parent_tree, 1, &upd);
	if (grc < 0) {
		git_fail(err, errlen, grc, NULL, "cannot build the tree with %s", path);
		goto out;
	}
	grc = git_tree_lookup(&new_tree, r, &tree_id);
	if (grc < 0) {
		git_fail(err, errlen, grc, NULL, "cannot read back the new tree");
		goto out;
	}
	if (make_signature(&sig, r, err, errlen) < 0)
		goto out;
	char measured[8] = "";
	if (b->commit && strlen(b->commit) >= 7)
		snprintf(measured, sizeof(measured), "%.7s", b->commit);
	int dirty = opts->measured_dirty || b->commit_dirty ? 1 : 0;
	message = make_message(opts->message, opts->skip_ci, measured[0] ? measured : NULL, dirty);
	if (!message) {
		set_err(err, errlen, "out of memory");
		goto out;
	}
	const git_commit *parents[1] = {parent};
	grc = git_commit_create(&commit_id, r, NULL, sig, sig, NULL, message, new_tree, 1, parents);
	if (grc < 0) {
		git_fail(err, errlen, grc, NULL, "cannot create the commit");
		goto out;
	}
	oid_hex(new_hex, &commit_id);

	/* 6. the journal, then git's index.lock: from here on a kill is finished or undone
	 * by the next run, and no other git process writes the index until we are done */
	size_t flen = strlen(wd) + strlen(path) + 1;
	if (!(full = malloc(flen))) {
		set_err(err, errlen, "out of memory");
		goto out;
	}
	snprintf(full, flen, "%s%s", wd, path);
	if (journal_acquire(&j, gitdir, err, errlen) < 0)
		goto out;
	if (journal_read(&j)) { /* a killed gate's, left since step 0 */
		set_err(err, errlen,
		        "cannot commit the baseline: %s appeared while gate was "
		        "starting; rerun gate",
		        j.path);
		journal_keep(&j);
		goto out;
	}
	{
		char rnd[17] = "0";
		(void)random_hex(rnd, 8);
		snprintf(j.token, sizeof(j.token), "gate %ld %s", (long)getpid(), rnd);
	}
	snprintf(j.ref, sizeof(j.ref), "%s", branch);
	memcpy(j.old_hex, head_hex, BASELINE_OID_HEX);
	memcpy(j.new_hex, new_hex, BASELINE_OID_HEX);
	oid_hex(j.blob_hex, &blob_id);
	j.mode = mode;
	snprintf(j.relpath, sizeof(j.relpath), "%s", path);
	tmp_path(j.tmp, sizeof(j.tmp), wd, path);
	if (journal_write(&j, err, errlen) < 0) {
		journal_drop(&j);
		goto out;
	}
	fault("journal");
	if (lock_take(&j, err, errlen) < 0) {
		journal_drop(&j);
		goto out;
	}
	fault("locked");

	/* 7. the new bytes beside the working-tree file, not yet visible */
	if (atomic_file_open_at(&tmp, full, j.tmp, mode == GIT_FILEMODE_BLOB_EXECUTABLE, err,
	                        errlen) < 0 ||
	    write_all(tmp.fd, text, len) < 0 || atomic_file_finish(&tmp, err, errlen) < 0) {
		if (tmp.path && (!err || !err[0]))
			set_err(err, errlen, "cannot write %s: %s", j.tmp, strerror(errno));
		atomic_file_abort(&tmp);
		lock_drop(&j);
		journal_drop(&j);
		goto out;
	}
	fault("tmp");

	/* 8. move the branch, only if it still points where we started */
	char reflog[512];
	snprintf(reflog, sizeof(reflog), "commit: %.*s", (int)strcspn(message, "\n"), message);
	grc = git_reference_create_matching(&moved, r, branch, &commit_id, 1, &head_id, reflog);
	if (grc < 0) {
		if (grc == GIT_EMODIFIED)
			set_err(err, errlen,
			        "cannot commit the baseline: %s moved while gate was "
			        "committing (it is no longer at %s); nothing was changed, rerun "
			        "gate",
			        branch_short, short_head);
		else
			git_fail(err, errlen, grc, "nothing was changed", "cannot update %s",
			         branch_short);
		atomic_file_abort(&tmp);
		lock_drop(&j);
		journal_drop(&j);
		goto out;
	}
	fault("branch");

	/* 9. the working tree and the index follow: the index is read again now, under the
	 * lock, and only the baseline's entry changes, so whatever was staged meanwhile stays */
	if (atomic_file_commit(&tmp, err, errlen) != BASELINE_OK) {
		char why[512];
		snprintf(why, sizeof(why), "%s", err ? err : "");
		set_err(err, errlen,
		        "committed the baseline as %.7s on %s, but could not write the "
		        "working-tree file (%s); the next gate run finishes it, or restore it with "
		        "git checkout HEAD -- %s",
		        new_hex, branch_short, why, path);
		lock_drop(&j);
		journal_keep(&j);
		goto out;
	}
	fault("file");
	if (index_apply(r, &j, err, errlen) < 0) {
		char why[1024];
		snprintf(why, sizeof(why), "%s", err ? err : "");
		set_err(err, errlen,
		        "committed the baseline as %.7s on %s, but could not update the "
		        "index for %s (%s); the next gate run finishes it, or fix it with git "
		        "reset "
		        "-q -- %s",
		        new_hex, branch_short, path, why, path);
		lock_drop(&j);
		journal_keep(&j);
		goto out;
	}
	journal_mark_indexed(&j);
	fault("indexed");
	lock_drop(&j);
	fault("unlocked");
	journal_drop(&j);
	skipped_by_libgit2(r, opts);
	memcpy(out, new_hex, BASELINE_OID_HEX);
	rc = BASELINE_OK;
out:
	atomic_file_abort(&tmp);
	free(full);
	free(message);
	free(text);
	git_signature_free(sig);
	git_index_free(index);
	git_blob_free(old_blob);
	git_tree_entry_free(old_entry);
	git_tree_free(new_tree);
	git_tree_free(parent_tree);
	git_commit_free(parent);
	git_reference_free(moved);
	git_reference_free(head);
	return rc;
}

/* ---- notes ---- */

/* "gate" -> "refs/notes/gate", as git notes --ref does; NULL -> the default. */
static void notes_ref_name(char *out, size_t len, const char *notes_ref)
{
	if (!notes_ref || !*notes_ref)
		notes_ref = BASELINE_DEFAULT_NOTES_REF;
	if (strncmp(notes_ref, "refs/", 5) == 0)
		snprintf(out, len, "%s", notes_ref);
	else if (strncmp(notes_ref, "notes/", 6) == 0)
		snprintf(out, len, "refs/%s", notes_ref);
	else
		snprintf(out, len, "refs/notes/%s", notes_ref);
}

static int parse_commit_id(git_oid *out, const char *hex, char *err, size_t errlen)
{
	if (!hex || strlen(hex) != GIT_OID_HEXSZ || git_oid_fromstr(out, hex) < 0) {
		set_err(err, errlen, "\"%s\" is not a full commit id", hex ? hex : "(null)");
		return BASELINE_ERROR;
	}
	return BASELINE_OK;
}

int baseline_git_note_write(struct baseline_repo *repo, const char *notes_ref, const char *commit,
                            const struct baseline *b, bool overwrite, char *err, size_t errlen)
{
	char ref[256];
	git_oid id, note_id;
	git_signature *sig = NULL;
	git_commit *c = NULL;
	char *text = NULL;
	int rc = BASELINE_ERROR, grc;

	if (err && errlen)
		err[0] = '\0';
	notes_ref_name(ref, sizeof(ref), notes_ref);
	if (!git_reference_is_valid_name(ref)) {
		set_err(err, errlen, "notes ref %s is not a valid reference name", ref);
		return BASELINE_ERROR;
	}
	if (parse_commit_id(&id, commit, err, errlen) < 0)
		return BASELINE_ERROR;
	grc = git_commit_lookup(&c, repo->repo, &id);
	if (grc < 0) {
		git_fail(err, errlen, grc, NULL, "cannot add a note to %.7s", commit);
		goto out;
	}
	if (baseline_summary_format(&text, b, err, errlen) != BASELINE_OK)
		goto out;
	if (make_signature(&sig, repo->repo, err, errlen) < 0)
		goto out;
	grc = git_note_create(&note_id, repo->repo, ref, sig, sig, &id, text, overwrite);
	if (grc == GIT_EEXISTS) {
		set_err(err, errlen,
		        "commit %.7s already has a note in %s; remove it (git notes "
		        "--ref %s remove %.7s) or overwrite it",
		        commit, ref, ref, commit);
		goto out;
	}
	if (grc < 0) {
		git_fail(err, errlen, grc, NULL, "cannot write the note of %.7s in %s", commit,
		         ref);
		goto out;
	}
	rc = BASELINE_OK;
out:
	free(text);
	git_signature_free(sig);
	git_commit_free(c);
	return rc;
}

/* BASELINE_MISSING when id has no note in ref. */
static int note_read(struct baseline *out, git_repository *repo, const char *ref, const git_oid *id,
                     char *err, size_t errlen)
{
	git_note *note = NULL;
	char hex[BASELINE_OID_HEX], name[512];
	oid_hex(hex, id);
	int grc = git_note_read(&note, repo, ref, id);
	if (grc == GIT_ENOTFOUND) {
		set_err(err, errlen, "commit %.7s has no note in %s", hex, ref);
		return BASELINE_MISSING;
	}
	if (grc < 0)
		return git_fail(err, errlen, grc, NULL, "cannot read the note of %.7s in %s", hex,
		                ref);
	const char *msg = git_note_message(note);
	size_t len = msg ? strlen(msg) : 0;
	snprintf(name, sizeof(name), "note %s of %.7s", ref, hex);
	int rc = baseline_summary_parse(out, msg ? msg : "", len, name, err, errlen);
	git_note_free(note);
	return rc;
}

int baseline_git_note_read(struct baseline *out, struct baseline_repo *repo, const char *notes_ref,
                           const char *commit, char *err, size_t errlen)
{
	char ref[256];
	git_oid id;
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	notes_ref_name(ref, sizeof(ref), notes_ref);
	if (parse_commit_id(&id, commit, err, errlen) < 0)
		return BASELINE_ERROR;
	return note_read(out, repo->repo, ref, &id, err, errlen);
}

/* ---- history ---- */

void baseline_history_clear(struct baseline_history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->count; i++)
		baseline_clear(&h->items[i]);
	free(h->items);
	free(h->noted);
	memset(h, 0, sizeof(*h));
}

static int history_push(struct baseline_history *h, size_t *cap, struct baseline *b,
                        const git_oid *noted)
{
	if (h->count == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct baseline *items = realloc(h->items, ncap * sizeof(*items));
		if (!items)
			return -1;
		h->items = items;
		char(*n)[BASELINE_OID_HEX] = realloc(h->noted, ncap * sizeof(*n));
		if (!n)
			return -1;
		h->noted = n;
		*cap = ncap;
	}
	h->items[h->count] = *b;
	oid_hex(h->noted[h->count], noted);
	h->count++;
	memset(b, 0, sizeof(*b));
	return 0;
}

int baseline_git_history(struct baseline_history *out, struct baseline_repo *repo,
                         const char *notes_ref, const char *from, size_t max_entries,
                         size_t max_walk, char *err, size_t errlen)
{
	git_repository *r = repo->repo;
	git_commit *c = NULL;
	git_reference *nref = NULL;
	char ref[256];
	size_t cap = 0;
	int rc = BASELINE_ERROR, grc;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	if (!from || !*from)
		from = "HEAD";
	if (!max_walk)
		max_walk = BASELINE_HISTORY_MAX_WALK;
	notes_ref_name(ref, sizeof(ref), notes_ref);

	grc = git_reference_lookup(&nref, r, ref);
	if (grc == GIT_ENOTFOUND) {
		out->notes_ref_missing = true;
		return BASELINE_OK;
	}
	if (grc < 0)
		return git_fail(err, errlen, grc, NULL, "cannot read the notes ref %s", ref);
	git_reference_free(nref);
	if (strcmp(from, "HEAD") == 0 && git_repository_head_unborn(r) == 1)
		return BASELINE_OK;

	grc = resolve_commit(&c, r, from);
	if (grc < 0)
		return git_fail(err, errlen, grc, NULL, "cannot resolve %s for the history", from);
	bool shallow = git_repository_is_shallow(r) == 1;
	while (c && out->walked < max_walk && (!max_entries || out->count < max_entries)) {
		struct baseline b;
		char why[512];
		out->walked++;
		int nrc = note_read(&b, r, ref, git_commit_id(c), why, sizeof(why));
		if (nrc == BASELINE_OK) {
			if (history_push(out, &cap, &b, git_commit_id(c)) < 0) {
				baseline_clear(&b);
				set_err(err, errlen, "out of memory");
				goto out;
			}
		} else if (nrc == BASELINE_ERROR) {
			/* one bad note must not hide the others: count it, keep the newest reason
			 */
			if (!out->unreadable)
				snprintf(out->unreadable_why, sizeof(out->unreadable_why), "%s",
				         why);
			out->unreadable++;
		}
		if (git_commit_parentcount(c) == 0)
			break;
		git_commit *p = NULL;
		grc = git_commit_parent(&p, c, 0);
		if (grc == GIT_ENOTFOUND && shallow) {
			out->shallow_end = true; /* the clone's history ends here */
			break;
		}
		if (grc < 0) {
			char hex[BASELINE_OID_HEX];
			oid_hex(hex, git_commit_id(c));
			git_fail(err, errlen, grc,
			         "the clone may be incomplete: fetch more history",
			         "cannot read the parent of %.7s", hex);
			goto out;
		}
		git_commit_free(c);
		c = p;
	}
	/* collected newest first; the trend rule and the listing want oldest first */
	for (size_t i = 0, j = out->count ? out->count - 1 : 0; i < j; i++, j--) {
		struct baseline t = out->items[i];
		out->items[i] = out->items[j];
		out->items[j] = t;
		char h[BASELINE_OID_HEX];
		memcpy(h, out->noted[i], sizeof(h));
		memcpy(out->noted[i], out->noted[j], sizeof(h));
		memcpy(out->noted[j], h, sizeof(h));
	}
	rc = BASELINE_OK;
out:
	git_commit_free(c);
	if (rc != BASELINE_OK)
		baseline_history_clear(out);
	return rc;
}

int baseline_history_format_json(char **out, const struct baseline_history *h, char *err,
                                 size_t errlen)
{
	json_t *arr = json_array();
	*out = NULL;
	if (!arr)
		goto oom;
	for (size_t i = 0; i < h->count; i++) {
		char *text = NULL;
		if (baseline_summary_format(&text, &h->items[i], err, errlen) != BASELINE_OK) {
			json_decref(arr);
			return BASELINE_ERROR;
		}
		json_t *o = json_loads(text, 0, NULL);
		free(text);
		if (!o || json_object_set_new(o, "noted_commit", json_string(h->noted[i])) < 0) {
			json_decref(o);
			json_decref(arr);
			goto oom;
		}
		if (json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			goto oom;
		}
	}
	char *s = json_dumps(arr, JSON_SORT_KEYS | JSON_INDENT(2));
	json_decref(arr);
	if (!s)
		goto oom;
	size_t n = strlen(s);
	char *nl = realloc(s, n + 2);
	if (!nl) {
		free(s);
		goto oom;
	}
	nl[n] = '\n';
	nl[n + 1] = '\0';
	*out = nl;
	return BASELINE_OK;
oom:
	set_err(err, errlen, "out of memory");
	return BASELINE_ERROR;
}
