/* base/atomic.c: files replaced atomically: a fsynced temp file beside the target, renamed over
 * it, the directory fsynced; never a half-written file, and nothing left behind on failure. */
#include "base/atomic.h"
#include "base/errtext.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p of dir; on failure *failed_at is the directory that could not be made. *created
 * is the length of dir's prefix naming the first directory it made (0 when none). */
static int make_dirs(char *dir, const char **failed_at, size_t *created)
{
	struct stat st;
	*created = 0;
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		errno = ENOTDIR;
		*failed_at = dir;
		return -1;
	}
	for (char *p = dir + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(dir, 0777) < 0) {
			if (errno != EEXIST) {
				*failed_at = dir;
				return -1; /* dir stays cut at the failing component for the message
				            */
			}
		} else if (!*created) {
			*created = (size_t)(p - dir);
		}
		if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			*failed_at = dir;
			return -1;
		}
		*p = saved;
		if (!saved)
			return 0;
	}
}

static void fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd); /* best effort: some file systems refuse it on a directory */
		close(fd);
	}
}

void atomic_file_abort(struct atomic_file *t)
{
	if (!t)
		return;
	if (t->tmp && t->fd >= 0)
		close(t->fd);
	if (t->tmp) {
		unlink(t->tmp);
		/* and the directories made for it, deepest first (rmdir keeps non-empty ones) */
		if (t->created && t->dir) {
			for (;;) {
				if (rmdir(t->dir) < 0 || strlen(t->dir) <= t->created)
					break;
				char *slash = strrchr(t->dir, '/');
				if (!slash || (size_t)(slash - t->dir) < t->created)
					break;
				*slash = '\0';
			}
		}
	}
	free(t->tmp);
	free(t->dir);
	free(t->path);
	memset(t, 0, sizeof(*t));
	t->fd = -1;
}

/* The mode a new file gets under the process's umask, as open(2) would give it. */
static mode_t umasked(bool executable)
{
	mode_t mask = umask(0);
	umask(mask);
	return (executable ? 0777 : 0666) & ~mask;
}

static int open_tmp(struct atomic_file *t, const char *path, const char *fixed_tmp, bool executable,
                    char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (!path || !*path) {
		errtext_set(err, errlen, "(no path)", "no path given for the file to write");
		return -1;
	}
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 1;
	if (!*base) {
		errtext_set(err, errlen, path, "the path names a directory, not a file");
		return -1;
	}
	t->path = strdup(path);
	t->dir = malloc(dlen + 2);
	t->tmp = fixed_tmp ? strdup(fixed_tmp)
	                   : malloc(dlen + strlen(base) + sizeof("/..tmp.XXXXXX"));
	if (!t->path || !t->dir || !t->tmp) {
		errtext_set(err, errlen, path, "out of memory");
		goto fail;
	}
	if (slash == path)
		strcpy(t->dir, "/");
	else if (slash)
		memcpy(t->dir, path, dlen), t->dir[dlen] = '\0';
	else
		strcpy(t->dir, ".");
	if (!fixed_tmp)
		sprintf(t->tmp, "%s/.%s.tmp.XXXXXX", t->dir, base);

	const char *failed_dir = NULL;
	if (make_dirs(t->dir, &failed_dir, &t->created) < 0) {
		errtext_set(err, errlen, path, "cannot create the directory %s: %s", failed_dir,
		            strerror(errno));
		t->created = 0; /* make_dirs stops where it failed: nothing of ours to remove */
		goto fail;
	}
	t->fd = fixed_tmp
	                ? open(t->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)
	                : mkostemp(t->tmp, O_CLOEXEC);
	if (t->fd < 0) {
		errtext_set(err, errlen, path, "cannot create a temp file in %s: %s", t->dir,
		            strerror(errno));
		free(t->tmp);
		t->tmp = NULL;
		goto fail;
	}
	/* mkostemp makes it 0600; the file gets the mode open(2) would give it under the
	 * umask, as any other program's output would */
	(void)fchmod(t->fd, umasked(executable));
	return 0;
fail:
	atomic_file_abort(t);
	return -1;
}

int atomic_file_open(struct atomic_file *t, const char *path, bool executable, char *err,
                     size_t errlen)
{
	return open_tmp(t, path, NULL, executable, err, errlen);
}

int atomic_file_open_at(struct atomic_file *t, const char *path, const char *tmp, bool executable,
                        char *err, size_t errlen)
{
	return open_tmp(t, path, tmp, executable, err, errlen);
}

int atomic_file_finish(struct atomic_file *t, char *err, size_t errlen)
{
	if (!t->report && fsync(t->fd) < 0) {
		errtext_set(err, errlen, t->path, "cannot fsync %s: %s", t->tmp, strerror(errno));
		atomic_file_abort(t);
		return -1;
	}
	int fd = t->fd;
	t->fd = -1;
	if (close(fd) < 0) {
		errtext_set(err, errlen, t->path, "cannot close %s: %s", t->tmp, strerror(errno));
		atomic_file_abort(t);
		return -1;
	}
	return 0;
}

int write_all(int fd, const char *data, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

/* data into t's open temp file, then atomic_file_finish; on failure t is cleared */
static int fill(struct atomic_file *t, const char *data, size_t len, char *err, size_t errlen)
{
	if (write_all(t->fd, data, len) < 0) {
		errtext_set(err, errlen, t->path, "cannot write the temp file %s: %s", t->tmp,
		            strerror(errno));
		atomic_file_abort(t);
		return -1;
	}
	return atomic_file_finish(t, err, errlen);
}

int atomic_file_write(struct atomic_file *t, const char *path, const char *data, size_t len,
                      bool executable, char *err, size_t errlen)
{
	if (atomic_file_open(t, path, executable, err, errlen) < 0)
		return -1;
	return fill(t, data, len, err, errlen);
}

int atomic_file_commit(struct atomic_file *t, char *err, size_t errlen)
{
	int rc = 0;
	if (!t->tmp || t->fd >= 0) {
		errtext_set(err, errlen, t->path ? t->path : "baseline",
		            "no finished temp file to rename");
		atomic_file_abort(t);
		return -1;
	}
	if (rename(t->tmp, t->path) < 0) {
		errtext_set(err, errlen, t->path, "cannot rename %s over it: %s", t->tmp,
		            strerror(errno));
		rc = -1;
	} else {
		free(t->tmp);
		t->tmp = NULL; /* it is the target now */
		if (!t->report)
			fsync_dir(t->dir);
	}
	atomic_file_abort(t);
	return rc;
}

static int replace(const char *path, const char *data, size_t len, bool report, char *err,
                   size_t errlen)
{
	struct atomic_file t = {0};
	if (atomic_file_open(&t, path, false, err, errlen) < 0)
		return -1;
	t.report = report;
	if (fill(&t, data, len, err, errlen) < 0)
		return -1;
	return atomic_file_commit(&t, err, errlen);
}

int atomic_file_replace(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
	return replace(path, data, len, false, err, errlen);
}

int atomic_file_replace_report(const char *path, const char *data, size_t len, char *err,
                               size_t errlen)
{
	return replace(path, data, len, true, err, errlen);
}
