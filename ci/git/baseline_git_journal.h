/* ci/git/baseline_git_journal.h: the crash safety of the baseline commit, private to the files
 * of the baseline in git: the journal (GITDIR/gate-baseline-commit, flock'd while a gate works
 * on it), git's index.lock taken with gate's token in it, the index entry and the temp file
 * beside the working-tree file. baseline_git_commit calls these in order; a journal found
 * later is finished or undone by baseline_git_recover. Errors: BASELINE_OK or BASELINE_ERROR
 * with err saying what failed and what to do. */
#ifndef GATE_CI_GIT_BASELINE_GIT_JOURNAL_H
#define GATE_CI_GIT_BASELINE_GIT_JOURNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "ci/git/git2_lib.h"

#include "ci/git/baseline_git.h"

/* The journal's name under the git dir, and the most of it that is read back. */
#define JOURNAL_NAME "gate-baseline-commit"
#define JOURNAL_MAX (256 * 1024)

/* One file of the commit (`gate merge` commits every partition's baseline in one). */
struct bgit_journal_file {
	char blob_hex[BASELINE_OID_HEX];
	unsigned mode;
	char relpath[PATH_MAX];
};

/* A commit in progress as the journal records it (one "key value" line each, a "file MODE
 * BLOB PATH" line per file), and the open, flock'd journal itself. A journal of format 1 (one
 * file: "blob", "mode", "path" lines), left by an earlier gate, reads as one file. */
struct bgit_journal {
	int fd;                /* the flock'd journal; -1 when none */
	char gitdir[PATH_MAX]; /* ends with "/" */
	char path[PATH_MAX + 64];
	char token[40]; /* "gate <pid> <random>": the content of our index.lock */
	char ref[256];
	char old_hex[BASELINE_OID_HEX], new_hex[BASELINE_OID_HEX];
	struct bgit_journal_file *files; /* malloc'd; bgit_journal_free */
	size_t nfiles;
	bool indexed;    /* the index already has the new entries */
	bool has_commit; /* the fields above were read (a journal that got that far) */
};

/* Appends a file to j (0, or -1 when out of memory). */
int bgit_journal_add_file(struct bgit_journal *j, const char *blob_hex, unsigned mode,
                          const char *relpath);
/* Frees j's files (after bgit_journal_drop or _keep; the fields stay readable until then). */
void bgit_journal_free(struct bgit_journal *j);

/* Tells the test hook (baseline_git_fault) that step is done. */
void bgit_fault(const char *step);

/* write(2) all of it, EINTR retried: 0 or -1 (errno). */
int bgit_write_all(int fd, const char *p, size_t n);

/* Opens and flocks the journal (created empty when absent). BASELINE_ERROR when another
 * gate holds it (named in err) or it cannot be made. */
int bgit_journal_acquire(struct bgit_journal *j, const char *gitdir, char *err, size_t errlen);
/* Reads the journal's fields; false when it is empty (nothing was started). */
bool bgit_journal_read(struct bgit_journal *j);
/* Writes the journal's fields and fsyncs it: from here on a kill is recoverable. */
int bgit_journal_write(struct bgit_journal *j, char *err, size_t errlen);
/* Notes that the index has the new entry. */
void bgit_journal_mark_indexed(struct bgit_journal *j);
/* Drops the journal: the update it describes is complete or undone. */
void bgit_journal_drop(struct bgit_journal *j);
/* Lets go of the journal but keeps it for the next run (the update is half done). */
void bgit_journal_keep(struct bgit_journal *j);

/* Takes index.lock as git does, with j->token in it from the first instant. */
int bgit_lock_take(struct bgit_journal *j, char *err, size_t errlen);
/* Removes index.lock when it is ours, and gate's temp files under the git dir. */
void bgit_lock_drop(const struct bgit_journal *j);

/* With index.lock ours: re-reads the index, sets only the baselines' entries (each file's
 * relpath to its blob_hex) and replaces the index. */
int bgit_index_apply(git_repository *r, struct bgit_journal *j, char *err, size_t errlen);

/* The temp file beside the working-tree file: a name fixed by the path. */
void bgit_tmp_path(char *out, size_t len, const char *workdir, const char *relpath);

#endif
