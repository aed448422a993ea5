/* gate/run/baseline_step.h: the baseline step of `gate run`: read the committed baseline
 * before the run, check the run against it, and write (and commit) the new one after. On top of
 * ci/baseline*.h. */
#ifndef GATE_RUN_BASELINE_STEP_H
#define GATE_RUN_BASELINE_STEP_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ci/git/baseline_git.h"
#include "judge/judge.h"
#include "model/snapshot.h"
#include "rules/baseline.h"

struct baseline_step {
	struct baseline_repo *repo;  /* NULL: the project is in no git repository */
	char project[PATH_MAX];      /* realpath of the Mix project */
	char relpath[PATH_MAX];      /* the baseline file, repository-relative (or as configured
	                                when there is no repository) */
	char file[PATH_MAX * 2];     /* the baseline file in the working tree */
	char head[BASELINE_OID_HEX]; /* HEAD before the run; "" when unborn or no repository */
	struct baseline base;        /* valid when have_base */
	bool have_base;
	struct baseline_source src;   /* where it was read (or looked for) */
	char missing_where[1024];     /* baseline_check's source when there is no baseline */
	bool no_repo;                 /* in no repository, and the ref is not "worktree": the
	                                 rule adds no finding unless a baseline is required */
	struct baseline_history hist; /* the notes, oldest first; count 0 when none */
	bool dirty;                   /* the working tree had local changes when the run began
	                                 (other than the baseline file) */
	bool allow_outside;           /* write the file even through a symlink that leads out of
	                                 the project (base/outpath.h) */
	int partition;    /* set before baseline_step_read: a partition's trend reads its
	                     own figures from `gate merge`'s notes; 0: not partitioned */
	bool defer_dirty; /* set before baseline_step_read: `dirty` is read later, by
	                     baseline_step_dirty_start and _join */
	pthread_t dirty_thread;
	bool dirty_running; /* dirty_thread runs or has not been joined */
	bool dirty_read;    /* dirty holds the working tree's state */
};

/* Reads the baseline for a run of project (a realpath): opens the repository that contains
 * it, remembers HEAD, reads cfg->path (relative to the project) at ref (NULL: cfg->ref,
 * falling back to HEAD; "worktree": the working-tree file) and the notes history. A project
 * in no repository, or a ref without the file, is no error: have_base stays false. st must
 * be zeroed. Returns 0, or -1 with err (a corrupt or future baseline, a ref that does not
 * exist, a broken repository). */
int baseline_step_read(struct baseline_step *st, const char *project,
                       const struct baseline_config *cfg, const char *ref, char *err,
                       size_t errlen);

/* The working tree's local changes (st->dirty), read on a thread of its own while the node
 * boots, when st->defer_dirty: git status of an application's tree is 15-30 ms that the run
 * need not wait for (it only goes into the new baseline). Start it once gate has forked what
 * it forks before the workload (libgit2 on a thread across a fork is not safe); _join waits
 * for it, or reads it then when it was not started. Both are no-ops in no repository. */
void baseline_step_dirty_start(struct baseline_step *st);
void baseline_step_dirty_join(struct baseline_step *st);

/* A one-line description of what baseline_step_read found, for the progress line. */
void baseline_step_describe(const struct baseline_step *st, char *buf, size_t len);

/* What the judge compares the run with (judge/judge.h): st's baseline and history into *out.
 * Returns out, or NULL when there is nothing to compare with, ever (outside git, and no
 * baseline is required: no testcase for it). */
const struct judge_baseline *baseline_step_judged(const struct baseline_step *st,
                                                  const struct baseline_config *cfg,
                                                  struct judge_baseline *out);

/* Builds the baseline of this run into out (zeroed): the after-snapshot, measured at st's
 * HEAD. Returns 0, or -1 on allocation failure. */
int baseline_step_make(struct baseline *out, const struct baseline_step *st,
                       const struct snapshot *after, const char *elixir_version, int64_t timestamp,
                       int64_t test_count);

/* Writes b to the working-tree file or, with commit, commits it on top of HEAD (which must
 * still be expected_head, NULL: st->head) and stores its summary as a note on the new
 * commit; reports what was done on out, with the `git push` lines to run. Returns 0, or -1
 * with err (the library's refusal: detached HEAD, merge in progress, local edits, HEAD
 * moved). */
int baseline_step_update(struct baseline_step *st, const struct baseline *b,
                         const struct baseline_config *cfg, bool commit, const char *message,
                         const char *expected_head, FILE *out, char *err, size_t errlen);

void baseline_step_clear(struct baseline_step *st);

/* Finds the repository that contains project (a realpath) and where its baseline file is,
 * without reading it: the part of baseline_step_read that `gate baseline update --from` needs. */
int baseline_step_locate(struct baseline_step *st, const char *project,
                         const struct baseline_config *cfg, char *err, size_t errlen);

/* The notes ref of cfg as a full ref name ("refs/notes/gate" for "gate"). */
void baseline_step_notes_ref(char *buf, size_t len, const struct baseline_config *cfg);

#endif
