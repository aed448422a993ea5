/* ci/git/baseline_git_journal.c: the crash safety of the baseline commit: a journal under .git,
 * git's own index.lock, the index and working-tree updates that follow the branch, and the
 * recovery of a commit that a killed gate left half done. */
#include "ci/git/baseline_git.h"
#include "ci/git/baseline_git_internal.h"
#include "ci/git/baseline_git_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ci/git/git2_lib.h"

/* ---- crash safety: a journal under .git and git's own index.lock ----
 *
 * A baseline commit changes three things git keeps apart: the branch, the working-tree file
 * and the index. Before the first of them changes, gate writes what it is about to do to
 * GITDIR/gate-baseline-commit (flock'd while a gate works on it, so a live gate and a dead
 * one are told apart) and takes GITDIR/index.lock the way git does (created with link(2), so
 * it appears with gate's token in it). A run that finds the journal of a killed gate
 * finishes the update when the branch had moved, or undoes it when it had not. */

void (*baseline_git_fault)(const char *step);

void bgit_fault(const char *step)
{
	if (baseline_git_fault)
		baseline_git_fault(step);
}

static void gitdir_file(char *out, size_t len, const struct bgit_journal *j, const char *name)
{
	snprintf(out, len, "%s%s", j->gitdir, name);
}

int bgit_write_all(int fd, const char *p, size_t n)
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
int bgit_journal_acquire(struct bgit_journal *j, const char *gitdir, char *err, size_t errlen)
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
void bgit_journal_drop(struct bgit_journal *j)
{
	if (j->fd < 0)
		return;
	unlink(j->path);
	fsync_path_dir(j->gitdir);
	close(j->fd);
	j->fd = -1;
}

/* Lets go of the journal but keeps it for the next run (the update is half done). */
void bgit_journal_keep(struct bgit_journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
}

int bgit_journal_add_file(struct bgit_journal *j, const char *blob_hex, unsigned mode,
                          const char *relpath)
{
	struct bgit_journal_file *f = realloc(j->files, (j->nfiles + 1) * sizeof(*f));
	if (!f)
		return -1;
	j->files = f;
	f = &j->files[j->nfiles++];
	memset(f, 0, sizeof(*f));
	snprintf(f->blob_hex, sizeof(f->blob_hex), "%s", blob_hex);
	f->mode = mode;
	snprintf(f->relpath, sizeof(f->relpath), "%s", relpath);
	return 0;
}

void bgit_journal_free(struct bgit_journal *j)
{
	free(j->files);
	j->files = NULL;
	j->nfiles = 0;
}

/* A "file MODE BLOB PATH" line (format 2); false when it is not one. */
static bool read_file_line(struct bgit_journal *j, char *v)
{
	char *blob = strchr(v, ' ');
	char *path = blob ? strchr(blob + 1, ' ') : NULL;
	if (!path)
		return false;
	*blob++ = '\0';
	*path++ = '\0';
	return strlen(blob) == 40 && *path &&
	       bgit_journal_add_file(j, blob, (unsigned)strtoul(v, NULL, 8), path) == 0;
}

/* Reads the journal's fields; false when it is empty (nothing was started). */
bool bgit_journal_read(struct bgit_journal *j)
{
	char *buf = malloc(JOURNAL_MAX + 1);
	char blob[BASELINE_OID_HEX] = "", relpath[PATH_MAX] = "";
	unsigned mode = 0;
	bool ok = true;
	ssize_t n = buf ? pread(j->fd, buf, JOURNAL_MAX, 0) : -1;
	if (n <= 0) {
		free(buf);
		return false;
	}
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
		FIELD("blob", blob)    /* format 1: its one file */
		FIELD("path", relpath) /* format 1 */
#undef FIELD
		if (strcmp(line, "mode") == 0)
			mode = (unsigned)strtoul(v, NULL, 8);
		if (strcmp(line, "file") == 0 && !read_file_line(j, v))
			ok = false;
		if (strcmp(line, "indexed") == 0)
			j->indexed = true;
	}
	free(buf);
	if (blob[0] && relpath[0] && !j->nfiles &&
	    bgit_journal_add_file(j, blob, mode, relpath) < 0)
		ok = false;
	bool files_ok = ok && j->nfiles > 0;
	for (size_t i = 0; files_ok && i < j->nfiles; i++)
		files_ok = strlen(j->files[i].blob_hex) == 40 && j->files[i].relpath[0];
	j->has_commit =
	        j->ref[0] && strlen(j->old_hex) == 40 && strlen(j->new_hex) == 40 && files_ok;
	return true;
}

/* Writes the journal's fields and fsyncs it: from here on a kill is recoverable. */
int bgit_journal_write(struct bgit_journal *j, char *err, size_t errlen)
{
	char *buf = malloc(JOURNAL_MAX);
	int n = buf ? snprintf(buf, JOURNAL_MAX,
	                       "gate baseline commit journal 2\ntoken %s\nref %s\nold %s\nnew %s\n",
	                       j->token, j->ref, j->old_hex, j->new_hex)
	            : -1;
	for (size_t i = 0; n >= 0 && n < JOURNAL_MAX && i < j->nfiles; i++) {
		const struct bgit_journal_file *f = &j->files[i];
		int w = snprintf(buf + n, JOURNAL_MAX - (size_t)n, "file %o %s %s\n", f->mode,
		                 f->blob_hex, f->relpath);
		n = w < 0 ? -1 : n + w;
	}
	if (n < 0 || n >= JOURNAL_MAX || ftruncate(j->fd, 0) < 0 ||
	    pwrite(j->fd, buf, (size_t)n, 0) != n || fsync(j->fd) < 0) {
		set_err(err, errlen,
		        "cannot commit the baseline: cannot write %s: %s; nothing was "
		        "changed",
		        j->path,
		        n >= JOURNAL_MAX ? "too many files for one journal" : strerror(errno));
		free(buf);
		return BASELINE_ERROR;
	}
	free(buf);
	fsync_path_dir(j->gitdir);
	return BASELINE_OK;
}

void bgit_journal_mark_indexed(struct bgit_journal *j)
{
	off_t end = lseek(j->fd, 0, SEEK_END);
	if (end >= 0 && pwrite(j->fd, "indexed\n", 8, end) == 8)
		(void)fsync(j->fd);
	j->indexed = true;
}

/* index.lock holds our token: it is ours (a killed gate's, when read from the journal). */
static bool lock_is_ours(const struct bgit_journal *j)
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
int bgit_lock_take(struct bgit_journal *j, char *err, size_t errlen)
{
	char lock[PATH_MAX + 64], tmp[PATH_MAX + 64];
	if (lock_is_ours(j))
		return BASELINE_OK;
	gitdir_file(lock, sizeof(lock), j, "index.lock");
	gitdir_file(tmp, sizeof(tmp), j, "gate-index.lock.tmp");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || bgit_write_all(fd, j->token, strlen(j->token)) < 0 || fsync(fd) < 0) {
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

void bgit_lock_drop(const struct bgit_journal *j)
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
		if (n < 0 || bgit_write_all(out, buf, (size_t)n) < 0) {
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

/* One file's entry, as git would stage it: the working-tree file's stat data goes in only
 * when the file has the blob's bytes, so git never takes another file as clean. */
static int index_entry_set(git_index *idx, git_repository *r, const struct bgit_journal_file *f,
                           const git_oid *blob_id)
{
	char full[PATH_MAX * 2];
	git_oid on_disk;
	git_index_entry e;
	memset(&e, 0, sizeof(e));
	snprintf(full, sizeof(full), "%s%s", git_repository_workdir(r), f->relpath);
	struct stat st;
	if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) &&
	    git_odb_hashfile(&on_disk, full, GIT_OBJECT_BLOB) == 0 &&
	    git_oid_equal(&on_disk, blob_id)) {
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
	e.mode = f->mode ? f->mode : GIT_FILEMODE_BLOB;
	e.path = f->relpath;
	git_oid_cpy(&e.id, blob_id);
	return git_index_add(idx, &e);
}

/* With index.lock ours: reads the index as it is now (whatever was staged meanwhile), sets
 * only the baselines' entries and replaces the index. */
int bgit_index_apply(git_repository *r, struct bgit_journal *j, char *err, size_t errlen)
{
	char index_path[PATH_MAX + 64], next[PATH_MAX + 64];
	git_index *idx = NULL;
	int grc = 0, rc = BASELINE_ERROR;

	gitdir_file(index_path, sizeof(index_path), j, "index");
	gitdir_file(next, sizeof(next), j, "gate-index.new");
	for (size_t i = 0; i < j->nfiles; i++) {
		git_oid id;
		if (git_oid_fromstr(&id, j->files[i].blob_hex) < 0) {
			set_err(err, errlen, "the journal %s names no blob for %s", j->path,
			        j->files[i].relpath);
			return BASELINE_ERROR;
		}
	}
	if (copy_file(index_path, next) < 0) {
		set_err(err, errlen, "cannot copy the index %s to %s: %s", index_path, next,
		        strerror(errno));
		goto out;
	}
	grc = git_index_open(&idx, next);
	if (grc < 0) {
		bgit_fail(err, errlen, grc, "check it with git status", "cannot read the index %s",
		          index_path);
		goto out;
	}
	for (size_t i = 0; grc >= 0 && i < j->nfiles; i++) {
		git_oid id;
		(void)git_oid_fromstr(&id, j->files[i].blob_hex);
		grc = index_entry_set(idx, r, &j->files[i], &id);
	}
	if (grc >= 0)
		grc = git_index_write(idx);
	if (grc < 0) {
		bgit_fail(err, errlen, grc, NULL, "cannot write the new index %s", next);
		goto out;
	}
	bgit_fault("index-written");
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
void bgit_tmp_path(char *out, size_t len, const char *workdir, const char *relpath)
{
	const char *slash = strrchr(relpath, '/');
	if (slash)
		snprintf(out, len, "%s%.*s/.%s.gate-tmp", workdir, (int)(slash - relpath), relpath,
		         slash + 1);
	else
		snprintf(out, len, "%s.%s.gate-tmp", workdir, relpath);
}

/* Moves each finished temp file over its working-tree file, if it is still there. */
static int tmp_finish(git_repository *r, struct bgit_journal *j, char *err, size_t errlen)
{
	const char *wd = git_repository_workdir(r);
	for (size_t i = 0; i < j->nfiles; i++) {
		char tmp[PATH_MAX * 2], target[PATH_MAX * 2];
		struct stat st;
		bgit_tmp_path(tmp, sizeof(tmp), wd, j->files[i].relpath);
		if (lstat(tmp, &st) < 0)
			continue; /* renamed already */
		snprintf(target, sizeof(target), "%s%s", wd, j->files[i].relpath);
		if (rename(tmp, target) < 0) {
			set_err(err, errlen, "cannot rename %s over %s: %s", tmp, target,
			        strerror(errno));
			return BASELINE_ERROR;
		}
		char *slash = strrchr(target, '/');
		if (slash) {
			*slash = '\0';
			fsync_path_dir(target);
		}
	}
	return BASELINE_OK;
}

/* The journal's files as one text for messages: "a.json, b.json". */
static void files_text(char *out, size_t len, const struct bgit_journal *j)
{
	size_t n = 0;
	out[0] = '\0';
	for (size_t i = 0; i < j->nfiles && n < len; i++) {
		int w = snprintf(out + n, len - n, "%s%s", i ? " " : "", j->files[i].relpath);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* With the journal of a killed gate in hand (read, flock'd): finishes the update when the
 * branch had moved, undoes it when it had not. Returns 1 with msg saying which, or
 * BASELINE_ERROR (the journal is kept for the next run). */
static int journal_recover(git_repository *r, struct bgit_journal *j, char *msg, size_t msglen,
                           char *err, size_t errlen)
{
	const char *wd = git_repository_workdir(r);
	char why[1024] = "", paths[2048];
	/* a path gate would not write is never trusted: nothing of it is finished or removed */
	for (size_t i = 0; i < j->nfiles; i++)
		if (bgit_check_path(j->files[i].relpath, why, sizeof(why)) < 0) {
			j->has_commit = false;
			bgit_journal_free(j);
			break;
		}
	files_text(paths, sizeof(paths), j);
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
			if (bgit_lock_take(j, why, sizeof(why)) < 0 ||
			    bgit_index_apply(r, j, why, sizeof(why)) < 0)
				goto keep;
		}
		bgit_lock_drop(j);
		bgit_journal_drop(j);
		snprintf(msg, msglen,
		         "an earlier gate was stopped in the middle of a baseline "
		         "commit after %s had moved to %.7s; finished it: %s in the working tree "
		         "and in the index now match that commit",
		         j->ref, j->new_hex, paths);
		return 1;
	}
	for (size_t i = 0; wd && i < j->nfiles; i++) {
		char tmp[PATH_MAX * 2];
		bgit_tmp_path(tmp, sizeof(tmp), wd, j->files[i].relpath);
		unlink(tmp);
	}
	bgit_lock_drop(j);
	bgit_journal_drop(j);
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
		        j->new_hex, j->ref, paths);
	return 1;
keep:
	bgit_lock_drop(j);
	bgit_journal_keep(j);
	set_err(err, errlen,
	        "an earlier gate was stopped in the middle of a baseline commit "
	        "(%s is at %.7s, the new baseline), and finishing it failed: %s; fix that and "
	        "rerun gate, or restore the files by hand (git checkout HEAD -- %s) and remove %s",
	        j->ref, j->new_hex, why, paths, j->path);
	return BASELINE_ERROR;
}

int baseline_git_recover(struct baseline_repo *repo, char *msg, size_t msglen, char *err,
                         size_t errlen)
{
	struct bgit_journal j;
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
	if (bgit_journal_acquire(&j, gitdir, busy, sizeof(busy)) < 0)
		return 0; /* a live gate is at work: it is not ours to finish */
	if (!bgit_journal_read(&j)) {
		bgit_journal_drop(&j);
		bgit_journal_free(&j);
		return 0;
	}
	char m[4096];
	int rc = journal_recover(repo->repo, &j, m, sizeof(m), err, errlen);
	bgit_journal_free(&j);
	if (rc == 1 && msg)
		snprintf(msg, msglen, "%s", m);
	return rc;
}
