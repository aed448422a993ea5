/* ci/readfile.h: bounded file reading, the one way gate reads a whole file it did not write
 * (baselines, saved runs, hook scripts, summaries, a node's files): never more than a cap, a
 * regular file only, an error that names the file. */
#ifndef GATE_CI_READFILE_H
#define GATE_CI_READFILE_H

#include <stddef.h>

enum readfile_status {
	READFILE_OK = 0,
	READFILE_MISSING = 1, /* no such file (ENOENT): err says so */
	READFILE_ERROR = -1,  /* not a regular file, over max, unreadable, out of memory */
};

/* Reads path whole into *out (malloc'd, NUL-terminated; *len bytes without the NUL). A file of
 * more than max bytes (also one that grows past it while read) is READFILE_ERROR, unless
 * truncate: then the first max bytes are read and that is READFILE_OK. err gets "PATH: why". */
enum readfile_status readfile_bounded(const char *path, size_t max, int truncate, char **out,
                                      size_t *len, char *err, size_t errlen);

#endif
