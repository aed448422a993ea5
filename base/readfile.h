/* base/readfile.h: bounded file reading, the one way gate reads a whole file it did not write
 * (baselines, saved runs, hook scripts, summaries, a node's files): never more than a cap, a
 * regular file only, an error that names the file. */
#ifndef GATE_BASE_READFILE_H
#define GATE_BASE_READFILE_H

#include <stddef.h>

enum readfile_status {
	READFILE_OK = 0,
	READFILE_MISSING = 1, /* no such file (ENOENT): err says so */
	READFILE_ERROR = -1,  /* not a regular file, over max, unreadable, out of memory */
};

enum readfile_flags {
	/* more than max bytes: the first max bytes, READFILE_OK (else READFILE_ERROR) */
	READFILE_TRUNCATE = 1 << 0,
	/* a pipe or a character device too (a cookie from <(...), a config from /dev/stdin):
	 * read until its end, still at most max bytes; a FIFO nobody writes to reads as empty */
	READFILE_STREAM = 1 << 1,
};

/* Reads path whole into *out (malloc'd, NUL-terminated; *len bytes without the NUL), a regular
 * file unless flags has READFILE_STREAM. A file of more than max bytes (also one that grows
 * past it while read) is READFILE_ERROR, unless READFILE_TRUNCATE. err gets "PATH: why". */
enum readfile_status readfile_bounded(const char *path, size_t max, int flags, char **out,
                                      size_t *len, char *err, size_t errlen);

#endif
