/* ci/git/hook.h: gate as a git hook (pre-push or pre-commit) of the repository a project is in.
 *
 * Install never overwrites: a hook already there (a file, a symlink, another tool's) is
 * moved beside ours as HOOK.gate-chained and run first, with the same arguments and, for
 * pre-push, the same refs on stdin; it can still block on its own. Uninstall puts it back.
 * Installing again over gate's own hook updates it in place and keeps the chained one.
 *
 * The hook records at install time the absolute path of the gate binary (GATE_BIN overrides
 * it when the hook runs), the project relative to the repository's root, extra arguments
 * for `gate run`, and the directories where elixir and erl were found, appended to PATH so
 * that a git GUI's bare environment still finds them. It unsets the GIT_* variables git
 * sets for hooks before running the suite, runs from any working-tree state, and
 * GATE_HOOK_SKIP=1 skips it once.
 *
 * Errors: functions return 0 or -1 with err naming the path and what to do.
 */
#ifndef GATE_CI_GIT_HOOK_H
#define GATE_CI_GIT_HOOK_H

#include <limits.h>
#include <stddef.h>

enum hook_kind { HOOK_PRE_PUSH, HOOK_PRE_COMMIT };

/* "pre-push" or "pre-commit". */
const char *hook_kind_name(enum hook_kind kind);

/* The marker on the second line of gate's hook script. */
#define HOOK_MARKER "# gate-hook 1:"
/* The suffix of the hook that gate's hook chains. */
#define HOOK_CHAINED_SUFFIX ".gate-chained"

struct hook_where {
	char workdir[PATH_MAX]; /* the repository's working tree, no trailing '/' */
	char hooks[PATH_MAX]; /* the hooks directory: core.hooksPath when set, else GIT_DIR/hooks */
};

/* Finds the repository containing dir (dir or a parent) and its hooks directory (libgit2).
 * Fails for a directory in no repository and for a bare repository. */
int hook_where_find(struct hook_where *out, const char *dir, char *err, size_t errlen);

struct hook_spec {
	enum hook_kind kind;
	const char *gate_path;   /* absolute path of the gate binary */
	const char *project;     /* the project relative to the working tree's root ("." for it) */
	const char *const *args; /* extra arguments for gate run; may be NULL */
	size_t nargs;
	const char *path_dirs; /* ':'-separated directories appended to PATH; may be NULL */
};

/* The hook script for spec, malloc'd into *out (no I/O). Every recorded value is quoted
 * for sh, so any byte but NUL is safe in it. Returns 0, or -1 on allocation failure. */
int hook_script_format(char **out, const struct hook_spec *spec);

/* Installs the hook into hooks_dir (created when missing): an existing hook that is not
 * gate's is renamed to HOOK.gate-chained first (refused when that name is taken), gate's
 * own is replaced. msg (may be NULL) says what was done. */
int hook_install(const char *hooks_dir, const struct hook_spec *spec, char *msg, size_t msglen,
                 char *err, size_t errlen);

/* Removes gate's hook of that kind from hooks_dir and puts the chained one back. Refuses
 * when there is none, or when the hook there is not gate's (it is left as it is). */
int hook_uninstall(const char *hooks_dir, enum hook_kind kind, char *msg, size_t msglen, char *err,
                   size_t errlen);

#endif
