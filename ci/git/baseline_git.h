/* ci/git/baseline_git.h: the baseline in git (libgit2): read it at a ref without a checkout,
 * commit only that file on top of HEAD, keep each run's summary as a git note, and read the
 * notes back as the history the trend rule needs.
 *
 * The caller never sees a libgit2 type: a repository is an opaque struct baseline_repo and
 * commits are 40-digit hex strings. Errors: functions return BASELINE_OK (0) or a negative
 * enum baseline_rc (ci/store/baseline_file.h) with err holding what failed, which ref or path,
 * libgit2's own reason, and what to do (err may be NULL). Every BASELINE_ERROR is an exit 2.
 * Ownership: struct baseline / struct baseline_history outputs are the caller's to clear.
 *
 * How gate uses it (the lead wires the CLI):
 *   gate run:       baseline_git_open; baseline_git_head (remember it: the HEAD measured);
 *                   baseline_git_read (ref from --baseline-ref, fallback_to_head when the ref
 *                   is the configured default); baseline_check with src.where;
 *                   baseline_git_history + trend_check.
 *   --update-baseline --commit / gate baseline update --commit:
 *                   baseline_from_snapshot (commit = the HEAD measured); baseline_git_commit
 *                   (expected_head = that HEAD; it writes the working-tree file itself, so do
 *                   not call baseline_write first); baseline_git_note_write on the new commit.
 *   gate baseline update (no --commit): baseline_write to workdir + path.
 *   gate baseline history [-n N] [--json]: baseline_git_history, baseline_history_format_json.
 *   --baseline-ref worktree outside a repository: baseline_read_file, no repository needed.
 */
#ifndef GATE_CI_GIT_BASELINE_GIT_H
#define GATE_CI_GIT_BASELINE_GIT_H

#include <stdbool.h>
#include <stddef.h>

#include "ci/store/baseline_file.h"
#include "rules/baseline.h"

/* A commit id as text: 40 hex digits and the NUL. */
#define BASELINE_OID_HEX 41

/* Walk at most this many first-parent commits for the history unless told otherwise. */
#define BASELINE_HISTORY_MAX_WALK 10000

/* Returned by baseline_git_commit when HEAD already holds exactly these bytes: no commit. */
#define BASELINE_UNCHANGED 1

struct baseline_repo; /* a libgit2 repository, and gate's share of libgit2's init count */

/* Opens the repository that contains dir (dir itself or a parent). BASELINE_ERROR naming dir
 * when there is none, or when it is not a valid repository. */
int baseline_git_open(struct baseline_repo **out, const char *dir, char *err, size_t errlen);
/* Closes it and drops gate's share of libgit2. NULL is a no-op. */
void baseline_git_close(struct baseline_repo *repo);

/* The working tree's root, ending with "/" (borrowed, valid until close); NULL when bare. */
const char *baseline_git_workdir(const struct baseline_repo *repo);

/* The repository-relative form of path (relative to dir, e.g. the Mix project inside a
 * monorepo), for the path arguments below: "apps/foo/.gate/baseline.json". Fails when the
 * result would be outside the working tree. */
int baseline_git_relpath(char *out, size_t outlen, const struct baseline_repo *repo,
                         const char *dir, const char *path, char *err, size_t errlen);

/* The commit HEAD points to. BASELINE_ERROR when HEAD is unborn (no commits yet). */
int baseline_git_head(char out[BASELINE_OID_HEX], struct baseline_repo *repo, char *err,
                      size_t errlen);

/* 1 when head (hex) has the commit measured (hex) as a parent and differs from it
 * only in files under dir (repository-relative, e.g. ".gate"): the baseline branch's "gate:
 * measure X" merge, or an earlier baseline commit on X; then the figures measured at X
 * belong to head's code too. 0 when not, -1 when either cannot be read. */
int baseline_git_measured_under(struct baseline_repo *repo, const char *measured, const char *head,
                                const char *dir);

/* Where baseline_git_read found (or looked for) the baseline. */
struct baseline_source {
	char ref[256];                 /* as asked, "HEAD" after the fallback, or "worktree" */
	char commit[BASELINE_OID_HEX]; /* what ref resolved to; "" for the working tree */
	bool fell_back;                /* the asked ref does not exist; HEAD was read */
	char where[768];               /* "REF:PATH" for messages (baseline_check's source) */
};

/* Reads the baseline at path (repository-relative; NULL: BASELINE_DEFAULT_PATH) as of ref
 * (NULL: BASELINE_DEFAULT_REF) from the object database, without a checkout; works in a
 * shallow clone that has ref. ref "worktree" reads the working-tree file instead.
 * fallback_to_head: when ref does not exist, read HEAD instead (src->fell_back says so;
 * an unborn HEAD then counts as a missing baseline). Returns
 *   BASELINE_OK       out holds the baseline;
 *   BASELINE_MISSING  ref exists but has no file at path (err says "no baseline at REF:PATH");
 *   BASELINE_ERROR    ref does not exist (named), path is a directory/submodule/symlink
 *                     at ref, the blob is not a valid baseline, a libgit2 failure.
 * src is filled as far as the lookup got, in every case. */
int baseline_git_read(struct baseline *out, struct baseline_source *src, struct baseline_repo *repo,
                      const char *ref, bool fallback_to_head, const char *path, char *err,
                      size_t errlen);

struct baseline_commit_opts {
	const char *path;          /* repository-relative; NULL: BASELINE_DEFAULT_PATH */
	const char *expected_head; /* HEAD as the caller read it before the run (hex); NULL:
	                              only the atomic check against HEAD at the call */
	const char *message;       /* NULL: "gate: update the memory baseline" */
	bool skip_ci;              /* append " [skip ci]" to the subject line */
	unsigned flags;            /* BASELINE_WRITE_FORCE: replace an unreadable old file */
	bool measured_dirty;       /* the run measured a working tree with local changes: the
	                              default message says "measured at X with local changes" */
	char *notice;              /* out, may be NULL: what the user must be told although the
	                              commit worked (one line each): an interrupted earlier commit
	                              finished or undone, git hooks not run, commit.gpgsign not
	                              honoured */
	size_t notice_len;
	/* several baseline files in the one commit (gate merge: every partition's), each checked,
	 * written and journalled as the one file is; path and b are then not used. nfiles 0: the
	 * one file b at path. */
	const struct baseline_commit_file *files;
	size_t nfiles;
};

/* One file of a several-file baseline commit. */
struct baseline_commit_file {
	const char *path; /* repository-relative */
	const struct baseline *b;
};

/* Commits b as the file at opts->path (or opts->files, each as its own file), and nothing
 * else, on top of HEAD's branch: the new
 * tree is HEAD's tree with the new blob (intermediate trees created), the index entry of
 * that path is set to the new blob, and the working-tree file is replaced atomically with
 * the same bytes. The branch moves only if it still points at the HEAD read at the start
 * (compare-and-swap).
 * Crash-consistent: before the first change a journal (GITDIR/gate-baseline-commit) is
 * written and git's index.lock taken (refused when another process holds it); the index is
 * re-read under that lock and only the baseline's entry is changed, so concurrent staging
 * is kept. Killed at any instant, the repository is as before or committed, and the next
 * call (or baseline_git_recover) finishes or undoes the update and says so in notice.
 * Hooks and signing are not run (libgit2): notice says so when they are configured.
 * Refuses (BASELINE_ERROR, nothing changed) on: a bare repository, an unborn or detached
 * HEAD, a merge/rebase/cherry-pick/revert/bisect/am in progress, local changes to that path
 * in the index or the working tree (untracked included), HEAD not at expected_head, HEAD
 * moving during the call, a held index.lock, another gate committing in the same repository,
 * a clean/smudge filter (.gitattributes filter=) on the path, an old file this gate cannot
 * read (unless BASELINE_WRITE_FORCE). Author and committer: GATE_AUTHOR_NAME / GATE_AUTHOR_EMAIL
 * when set, else git config user.name / user.email. Returns BASELINE_OK with out = the new commit,
 * or BASELINE_UNCHANGED with out = HEAD when HEAD's file already has these bytes. An error after
 * the branch moved (renaming the file, writing the index) says what is left to do by hand. */
int baseline_git_commit(char out[BASELINE_OID_HEX], struct baseline_repo *repo,
                        const struct baseline *b, const struct baseline_commit_opts *opts,
                        char *err, size_t errlen);

/* Finishes or undoes a baseline commit that a killed gate left half done (its journal under
 * the git dir): finished when the branch had moved, undone when not. Returns 0 when there
 * was nothing to do (or a live gate is at work), 1 with msg saying what was done, or
 * BASELINE_ERROR (the journal is kept; err says what is left and how to fix it by hand). */
int baseline_git_recover(struct baseline_repo *repo, char *msg, size_t msglen, char *err,
                         size_t errlen);

/* 1 when the working tree has local changes (staged, unstaged or untracked) other than at
 * path (NULL: BASELINE_DEFAULT_PATH), 0 when clean, -1 when git status cannot be read. */
int baseline_git_worktree_dirty(struct baseline_repo *repo, const char *path);

/* For tests: called with the name of each step of baseline_git_commit after it is done
 * ("journal", "locked", "tmp", "branch", "file", "index-written", "indexed", "unlocked"),
 * so a test can kill the process there. NULL (the default) in gate. */
extern void (*baseline_git_fault)(const char *step);

/* Stores b's summary (baseline_summary_format) as the note of commit (hex) under notes_ref
 * (NULL: BASELINE_DEFAULT_NOTES_REF; "gate" means "refs/notes/gate"). An existing note is
 * replaced when overwrite, else BASELINE_ERROR. Same author rules as baseline_git_commit. */
int baseline_git_note_write(struct baseline_repo *repo, const char *notes_ref, const char *commit,
                            const struct baseline *b, bool overwrite, char *err, size_t errlen);

/* `gate merge --commit`'s note: the whole suite's summary (whole) with each
 * partition's under "partitions" {"K": summary} (parts[i] of partition ks[i]), so that the
 * history shows the merged run and a partition's trend reads its own figures
 * (baseline_git_history_partition). Never overwrites a note. */
int baseline_git_note_write_parts(struct baseline_repo *repo, const char *notes_ref,
                                  const char *commit, const struct baseline *whole,
                                  const struct baseline *const *parts, const int *ks, size_t n,
                                  char *err, size_t errlen);

/* Reads the note of commit under notes_ref as a summary. BASELINE_MISSING when there is
 * none; BASELINE_ERROR when it is not a summary this gate can read. */
int baseline_git_note_read(struct baseline *out, struct baseline_repo *repo, const char *notes_ref,
                           const char *commit, char *err, size_t errlen);

/* The history: the notes on the first-parent chain from a commit, oldest first. */
struct baseline_history {
	struct baseline *items;          /* summaries, oldest first (trend_check's input) */
	char (*noted)[BASELINE_OID_HEX]; /* noted[i]: the commit items[i] is the note of */
	size_t count;
	size_t walked;            /* commits looked at */
	bool notes_ref_missing;   /* the notes ref does not exist (not fetched? none written?) */
	bool shallow_end;         /* the walk reached the boundary of a shallow clone */
	size_t unreadable;        /* notes skipped because they are not summaries we read */
	char unreadable_why[512]; /* why the newest of them was skipped */
};

/* Walks the first parents from `from` (a revision; NULL: "HEAD") over at most max_walk
 * commits (0: BASELINE_HISTORY_MAX_WALK) and collects the newest max_entries notes
 * (0: no limit). An unborn HEAD or a missing notes ref give an empty history, not an error.
 * out must be zeroed; on failure it is cleared. */
int baseline_git_history(struct baseline_history *out, struct baseline_repo *repo,
                         const char *notes_ref, const char *from, size_t max_entries,
                         size_t max_walk, char *err, size_t errlen);
/* the same for partition k of a partitioned suite (k 0: baseline_git_history): a
 * merged run's note gives partition k's own summary, and is left out when it has none; any
 * other note is read whole, as before. */
int baseline_git_history_partition(struct baseline_history *out, struct baseline_repo *repo,
                                   const char *notes_ref, const char *from, size_t max_entries,
                                   size_t max_walk, int partition, char *err, size_t errlen);
void baseline_history_clear(struct baseline_history *h);

/* `gate baseline history --json`: an array, oldest first, of the summaries, each with
 * "noted_commit" added; sorted keys, 2-space indent, trailing newline. *out is malloc'd. */
int baseline_history_format_json(char **out, const struct baseline_history *h, char *err,
                                 size_t errlen);

#endif
