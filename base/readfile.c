/* base/readfile.c: bounded file reading (see readfile.h). */
#include "base/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errtext.h"
#include "base/grow.h"

static enum readfile_status fail(int fd, char *buf, enum readfile_status st)
{
	free(buf);
	if (fd >= 0)
		close(fd);
	return st;
}

enum readfile_status readfile_bounded(const char *path, size_t max, int flags, char **out,
                                      size_t *len, char *err, size_t errlen)
{
	int truncate = flags & READFILE_TRUNCATE;
	*out = NULL;
	*len = 0;
	/* O_NONBLOCK: a FIFO at path must not hang the open before fstat says what it is */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		errtext_set(err, errlen, path, "cannot open it: %s", strerror(e));
		return e == ENOENT ? READFILE_MISSING : READFILE_ERROR;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		errtext_set(err, errlen, path, "cannot stat it: %s", strerror(errno));
		return fail(fd, NULL, READFILE_ERROR);
	}
	if (S_ISDIR(st.st_mode)) {
		errtext_set(err, errlen, path, "is a directory, not a file");
		return fail(fd, NULL, READFILE_ERROR);
	}
	bool stream = (flags & READFILE_STREAM) && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
	if (!S_ISREG(st.st_mode) && !stream) {
		errtext_set(err, errlen, path, "is not a regular file; give the path of a file");
		return fail(fd, NULL, READFILE_ERROR);
	}
	/* a stream is read as it comes: blocking again, its size unknown until its end */
	if (stream && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		errtext_set(err, errlen, path, "cannot read it: %s", strerror(errno));
		return fail(fd, NULL, READFILE_ERROR);
	}
	if (!truncate && (unsigned long long)st.st_size > max) {
		errtext_set(err, errlen, path, "%lld bytes, more than the %zu it may have",
		            (long long)st.st_size, max);
		return fail(fd, NULL, READFILE_ERROR);
	}
	size_t cap = 0, n = 0, want = (size_t)st.st_size < max ? (size_t)st.st_size : max;
	char *buf = NULL;
	if (GROW(buf, cap, want + 2, 64) < 0) {
		errtext_set(err, errlen, path, "out of memory");
		return fail(fd, buf, READFILE_ERROR);
	}
	for (;;) {
		/* read up to max + 1 bytes: one more than allowed tells a file that grew past it */
		size_t room = cap - 1 - n;
		if (n + room > max + 1)
			room = max + 1 - n;
		if (room == 0)
			break;
		ssize_t got = read(fd, buf + n, room);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			errtext_set(err, errlen, path, "cannot read it: %s", strerror(errno));
			return fail(fd, buf, READFILE_ERROR);
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n == cap - 1 && n <= max && GROW(buf, cap, cap + 1, 64) < 0) {
			errtext_set(err, errlen, path, "out of memory");
			return fail(fd, buf, READFILE_ERROR);
		}
	}
	close(fd);
	if (n > max) {
		if (!truncate) {
			errtext_set(err, errlen, path,
			            "grew past the %zu bytes it may have while read", max);
			return fail(-1, buf, READFILE_ERROR);
		}
		n = max;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return READFILE_OK;
}
