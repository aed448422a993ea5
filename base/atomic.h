/* base/atomic.h: files replaced atomically: a fsynced temp file beside the target, renamed over
 * it, the directory fsynced; never a half-written file, nothing left behind on failure.
 * Reports (JUnit, JSON, summaries, the watch's metrics) skip the two fsyncs (report set, or
 * atomic_file_replace_report): a reader still sees the old file or the new one whole, and
 * what only a power loss could undo is rewritten by the next run; the fsyncs cost 12 ms of a
 * 10 000-test run's JUnit file (measured). Baselines, hooks and gate.toml keep them. */
#ifndef GATE_BASE_ATOMIC_H
#define GATE_BASE_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>

/* ---- atomic replacement in two steps, for writers that must check something between
 * writing the bytes and making them visible (baseline_git_commit). Return 0 or -1 with err naming
 * the path. ---- */

struct atomic_file {
	char *path;     /* the target */
	char *dir;      /* its directory */
	char *tmp;      /* the temp file beside it; NULL once renamed or removed */
	size_t created; /* length of dir's prefix that was made for the temp file (0: none) */
	int fd;         /* the open temp file between atomic_file_open and _finish, else -1
	                   (a zeroed struct has 0 here and counts as closed) */
	bool report; /* set by the caller after opening: no fsync of the file nor its directory */
};

/* For streaming writers: creates the missing parents of path and opens a temp file beside
 * it (t->fd), mode 0777 when executable, else 0666, less the umask (as open(2) gives a new
 * file). On failure t is cleared. */
int atomic_file_open(struct atomic_file *t, const char *path, bool executable, char *err,
                     size_t errlen);
/* The same with a temp file whose name the caller chose (tmp, in path's directory),
 * created or truncated: for a writer that records the name before creating it, so that a
 * later run can remove it after a kill (baseline_git_commit's journal). */
int atomic_file_open_at(struct atomic_file *t, const char *path, const char *tmp, bool executable,
                        char *err, size_t errlen);
/* fsyncs (unless t->report) and closes t->fd; on failure the temp file is removed and t
 * cleared. */
int atomic_file_finish(struct atomic_file *t, char *err, size_t errlen);

/* Writes all len bytes of data to fd, again after EINTR and short writes. Returns 0, or -1
 * with errno set (EIO when a write wrote nothing). */
int write_all(int fd, const char *data, size_t len);

/* Creates the missing parent directories of path and writes data to a fsynced temp file
 * beside it, with the modes of atomic_file_open. t must be zeroed. On failure
 * nothing is left behind and t is cleared. */
int atomic_file_write(struct atomic_file *t, const char *path, const char *data, size_t len,
                      bool executable, char *err, size_t errlen);
/* Renames the temp file over the target and fsyncs the directory (unless t->report); clears t
 * either way (on failure the temp file is removed). */
int atomic_file_commit(struct atomic_file *t, char *err, size_t errlen);
/* Removes the temp file, if any, and the directories made for it; clears t. A zeroed t is
 * a no-op. */
void atomic_file_abort(struct atomic_file *t);

/* The one-step form: write data to path atomically (parents created). 0, or -1 with err. */
int atomic_file_replace(const char *path, const char *data, size_t len, char *err, size_t errlen);
/* The same for a report: nothing fsynced. */
int atomic_file_replace_report(const char *path, const char *data, size_t len, char *err,
                               size_t errlen);

#endif
