/* ci/git/baseline_git_internal.h: what the files of the baseline in git share, private to them
 * (callers use ci/git/baseline_git.h): the repository behind the opaque handle, libgit2's errors
 * turned into our text, commit ids as text, the path check, revisions and the author.
 * Defined in ci/git/baseline_git.c. Errors as in baseline_git.h: BASELINE_OK or BASELINE_ERROR
 * with err naming what failed, where, and the fix. */
#ifndef GATE_CI_GIT_BASELINE_GIT_INTERNAL_H
#define GATE_CI_GIT_BASELINE_GIT_INTERNAL_H

#include <stddef.h>

#include "ci/git/git2_lib.h"

#include "base/errtext.h"
#include "ci/store/baseline_file.h"

struct baseline_repo {
	git_repository *repo;
};

/* A commit id as text: 40 hex digits and the NUL (BASELINE_OID_HEX). */
#define BGIT_HEX (GIT_OID_HEXSZ + 1)

/* messages here name their subject themselves: no "NAME: " prefix */
#define set_err(err, errlen, ...) errtext_set(err, errlen, NULL, __VA_ARGS__)

/* Fills err with "WHAT: libgit2's reason[; FIX]", the reason from git_error_last() (or the
 * code); returns BASELINE_ERROR. */
int bgit_fail(char *err, size_t errlen, int code, const char *fix, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

void bgit_oid_hex(char out[BGIT_HEX], const git_oid *id);
/* 7 digits, like git's default abbreviation. */
void bgit_short_hex(char out[16], const git_oid *id);

/* A repository path gate reads and writes: relative, no "." / ".." / empty components,
 * nothing inside .git. */
int bgit_check_path(const char *path, char *err, size_t errlen);

/* Resolves ref to a commit (the caller frees it). GIT_ENOTFOUND when the ref does not exist,
 * GIT_EPEEL when it names something else; libgit2's code otherwise. */
int bgit_resolve_commit(git_commit **out, git_repository *repo, const char *ref);

/* The author and committer: GATE_AUTHOR_NAME / GATE_AUTHOR_EMAIL, else user.name /
 * user.email from git config. */
int bgit_signature(git_signature **out, git_repository *repo, char *err, size_t errlen);

#endif
