/* ci/git/hook.c: gate as a git hook: find the hooks directory, write the script, chain and
 * restore the hook that was there. */
#include "ci/git/hook.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ci/git/git2_lib.h"

#include "base/atomic.h"
#include "base/errtext.h"
#include "base/grow.h"
#include "base/readfile.h"

/* Bytes of an existing hook read to look for the marker. */
#define HOOK_HEAD_MAX 4096

const char *hook_kind_name(enum hook_kind kind)
{
	return kind == HOOK_PRE_COMMIT ? "pre-commit" : "pre-push";
}

static int lg2_fail(char *err, size_t errlen, const char *what, const char *fix)
{
	const git_error *e = git_error_last();
	errtext_set(err, errlen, NULL, "%s: %s; %s", what,
	            e && e->message ? e->message : "libgit2 failed", fix);
	return -1;
}

int hook_where_find(struct hook_where *out, const char *dir, char *err, size_t errlen)
{
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	git_buf buf = {0};
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (git2_lib_load(err, errlen) < 0)
		return -1;
	if (git_libgit2_init() < 0)
		return lg2_fail(err, errlen, "cannot initialise libgit2", "reinstall libgit2");
	int grc = git_repository_open_ext(&repo, dir, 0, NULL);
	if (grc < 0) {
		if (grc == GIT_ENOTFOUND)
			errtext_set(
			        err, errlen, NULL,
			        "%s is not in a git repository (looked there and "
			        "in its parents): a hook belongs to a repository; pass a project "
			        "inside one with -C DIR",
			        dir);
		else
			lg2_fail(err, errlen, dir, "check the repository with git status");
		goto out;
	}
	const char *wd = git_repository_workdir(repo);
	if (!wd) {
		errtext_set(err, errlen, NULL,
		            "%s is in a bare repository: it has no working tree "
		            "to test; install the hook in a clone",
		            dir);
		goto out;
	}
	snprintf(out->workdir, sizeof(out->workdir), "%s", wd);
	size_t n = strlen(out->workdir);
	while (n > 1 && out->workdir[n - 1] == '/')
		out->workdir[--n] = '\0';

	/* core.hooksPath wins, as in git; relative to the working tree's root */
	if (git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_path(&buf, cfg, "core.hooksPath") == 0 && buf.ptr && buf.ptr[0]) {
		if (buf.ptr[0] == '/')
			snprintf(out->hooks, sizeof(out->hooks), "%s", buf.ptr);
		else
			snprintf(out->hooks, sizeof(out->hooks), "%s/%s", out->workdir, buf.ptr);
	} else {
		git_buf_dispose(&buf);
		if (git_repository_item_path(&buf, repo, GIT_REPOSITORY_ITEM_HOOKS) < 0) {
			lg2_fail(err, errlen, "cannot find the repository's hooks directory",
			         "check the repository with git status");
			goto out;
		}
		snprintf(out->hooks, sizeof(out->hooks), "%s", buf.ptr);
	}
	n = strlen(out->hooks);
	while (n > 1 && out->hooks[n - 1] == '/')
		out->hooks[--n] = '\0';
	rc = 0;
out:
	git_buf_dispose(&buf);
	git_config_free(cfg);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

/* Appends s quoted for sh: '...' with every ' written as '\''. */
static void sh_quote(struct textbuf *b, const char *s)
{
	textbuf_add(b, "'", 1);
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			textbuf_add(b, "'\\''", 4);
		else
			textbuf_add(b, p, 1);
	}
	textbuf_add(b, "'", 1);
}

int hook_script_format(char **out, const struct hook_spec *spec)
{
	struct textbuf b = {0};
	const char *kind = hook_kind_name(spec->kind);

	*out = NULL;
	textbuf_printf(&b,
	               "#!/bin/sh\n" HOOK_MARKER " the memory gate as a git %s hook, "
	               "installed by `gate hook install --%s`.\n",
	               kind, kind);
	textbuf_printf(
	        &b,
	        "# `gate hook uninstall --%s` removes it and puts back the hook it chains, if "
	        "any.\n"
	        "# GATE_BIN=/path/to/gate overrides the gate binary below; GATE_HOOK_SKIP=1 skips "
	        "the gate once.\n",
	        kind);
	textbuf_printf(&b, "hook=%s\ngate_bin=", kind);
	sh_quote(&b, spec->gate_path);
	textbuf_printf(&b, "\nproject=");
	sh_quote(&b, spec->project && spec->project[0] ? spec->project : ".");
	textbuf_printf(&b, "\nextra_path=");
	sh_quote(&b, spec->path_dirs ? spec->path_dirs : "");
	textbuf_printf(&b, "\n\n");
	textbuf_printf(
	        &b,
	        "# the hook that was here before gate's runs first, with the same arguments and "
	        "stdin\n"
	        "# (as git does, only when it is executable)\n"
	        "chained=\"$(dirname -- \"$0\")/$hook" HOOK_CHAINED_SUFFIX "\"\n"
	        "if [ -x \"$chained\" ]; then\n"
	        "\tif [ \"$hook\" = pre-push ]; then\n"
	        "\t\trefs=$(mktemp \"${TMPDIR:-/tmp}/gate-hook.XXXXXX\") || exit 1\n"
	        "\t\ttrap 'rm -f \"$refs\"' EXIT\n"
	        "\t\tcat >\"$refs\"\n"
	        "\t\t\"$chained\" \"$@\" <\"$refs\" || exit $?\n"
	        "\telse\n"
	        "\t\t\"$chained\" \"$@\" || exit $?\n"
	        "\tfi\n"
	        "fi\n"
	        "if [ \"${GATE_HOOK_SKIP:-}\" = 1 ]; then\n"
	        "\techo \"gate: $hook hook: the memory gate is skipped (GATE_HOOK_SKIP=1)\" >&2\n"
	        "\texit 0\n"
	        "fi\n"
	        "root=$(git rev-parse --show-toplevel) || {\n"
	        "\techo \"gate: error: $hook hook: cannot find the repository's root (git "
	        "rev-parse "
	        "--show-toplevel failed in $(pwd))\" >&2\n"
	        "\texit 1\n"
	        "}\n"
	        "# git sets these for hooks; the suite's own git commands must not inherit them\n"
	        "unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX GIT_OBJECT_DIRECTORY "
	        "GIT_ALTERNATE_OBJECT_DIRECTORIES\n"
	        "# a git GUI starts hooks with a bare PATH: add where elixir and erl were at "
	        "install\n"
	        "PATH=\"${PATH:+$PATH:}$extra_path\"\n"
	        "export PATH\n"
	        "gate=${GATE_BIN:-$gate_bin}\n"
	        "if [ ! -x \"$gate\" ]; then\n"
	        "\techo \"gate: error: $hook hook: $gate is not an executable: set GATE_BIN, or "
	        "run "
	        "gate hook install --$hook again with the gate you use\" >&2\n"
	        "\texit 1\n"
	        "fi\n"
	        "dir=$root\n"
	        "[ \"$project\" = . ] || dir=$root/$project\n"
	        "echo \"gate: $hook hook: the memory gate on $dir (GATE_HOOK_SKIP=1 skips it)\" "
	        ">&2\n"
	        "\"$gate\" run -C \"$dir\"");
	for (size_t i = 0; i < spec->nargs; i++) {
		textbuf_add(&b, " ", 1);
		sh_quote(&b, spec->args[i]);
	}
	textbuf_printf(&b, " </dev/null\n"
	                   "rc=$?\n"
	                   "if [ \"$rc\" -ne 0 ]; then\n"
	                   "\techo \"gate: $hook hook: blocked, gate run exited $rc (1: a "
	                   "memory rule or a test "
	                   "failed, 2: gate could not run)\" >&2\n"
	                   "fi\n"
	                   "exit \"$rc\"\n");
	*out = textbuf_take(&b);
	return *out ? 0 : -1;
}

/* 1: path is gate's hook, 0: something else is there, -1: nothing there (or unreadable:
 * errno). */
static int is_gate_hook(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode))
		return 0;
	char *head = NULL;
	size_t n;
	if (readfile_bounded(path, HOOK_HEAD_MAX, READFILE_TRUNCATE, &head, &n, NULL, 0) !=
	    READFILE_OK)
		return 0;
	const char *nl = strchr(head, '\n');
	int ours = nl && strncmp(nl + 1, HOOK_MARKER, strlen(HOOK_MARKER)) == 0;
	free(head);
	return ours;
}

/* hooks_dir/KIND and hooks_dir/KIND.gate-chained */
static void hook_paths(char *target, size_t tlen, char *chained, size_t clen, const char *hooks_dir,
                       enum hook_kind kind)
{
	snprintf(target, tlen, "%s/%s", hooks_dir, hook_kind_name(kind));
	snprintf(chained, clen, "%s/%s%s", hooks_dir, hook_kind_name(kind), HOOK_CHAINED_SUFFIX);
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

int hook_install(const char *hooks_dir, const struct hook_spec *spec, char *msg, size_t msglen,
                 char *err, size_t errlen)
{
	char target[PATH_MAX + 32], chained[PATH_MAX + 64];
	const char *kind = hook_kind_name(spec->kind);
	char *script = NULL;
	struct atomic_file t = {0};
	bool moved = false;
	int rc = -1;
	char dummy[1];

	if (!msg) {
		msg = dummy;
		msglen = sizeof(dummy);
	}
	hook_paths(target, sizeof(target), chained, sizeof(chained), hooks_dir, spec->kind);
	if (hook_script_format(&script, spec) < 0) {
		errtext_set(err, errlen, target, "out of memory");
		return -1;
	}
	/* write the new script first: nothing is moved unless it could be written */
	if (atomic_file_write(&t, target, script, strlen(script), true, err, errlen) < 0)
		goto out;
	int ours = is_gate_hook(target);
	if (ours == 0) {
		if (exists(chained)) {
			errtext_set(
			        err, errlen, target,
			        "a %s hook is there and %s exists too: gate "
			        "chains the existing hook under that name; move one of them away "
			        "and install again",
			        kind, chained);
			goto out;
		}
		if (rename(target, chained) < 0) {
			errtext_set(err, errlen, target, "cannot move the existing hook to %s: %s",
			            chained, strerror(errno));
			goto out;
		}
		moved = true;
	}
	if (atomic_file_commit(&t, err, errlen) < 0) {
		if (moved && rename(chained, target) < 0)
			errtext_set(err, errlen, target,
			            "could not be written and the old hook could "
			            "not be put back from %s (%s): move it back by hand",
			            chained, strerror(errno));
		goto out;
	}
	if (ours == 1)
		snprintf(msg, msglen, "updated gate's %s hook %s%s", kind, target,
		         exists(chained) ? " (it still runs the chained hook first)" : "");
	else if (moved)
		snprintf(msg, msglen,
		         "installed the %s hook %s; "
		         "the hook that was there is kept as %s and runs first",
		         kind, target, chained);
	else
		snprintf(msg, msglen, "installed the %s hook %s", kind, target);
	rc = 0;
out:
	atomic_file_abort(&t);
	free(script);
	return rc;
}

int hook_uninstall(const char *hooks_dir, enum hook_kind kind, char *msg, size_t msglen, char *err,
                   size_t errlen)
{
	char target[PATH_MAX + 32], chained[PATH_MAX + 64];
	const char *name = hook_kind_name(kind);
	char dummy[1];

	if (!msg) {
		msg = dummy;
		msglen = sizeof(dummy);
	}
	hook_paths(target, sizeof(target), chained, sizeof(chained), hooks_dir, kind);
	int ours = is_gate_hook(target);
	if (ours < 0) {
		errtext_set(err, errlen, target,
		            "no %s hook is installed here: nothing to uninstall", name);
		return -1;
	}
	if (ours == 0) {
		errtext_set(err, errlen, target,
		            "this %s hook is not gate's (no \"%s\" line): left "
		            "as it is",
		            name, HOOK_MARKER);
		return -1;
	}
	if (exists(chained)) {
		if (rename(chained, target) < 0) {
			errtext_set(err, errlen, target,
			            "cannot put back the chained hook %s: %s; "
			            "move it to %s by hand",
			            chained, strerror(errno), target);
			return -1;
		}
		snprintf(msg, msglen, "removed gate's %s hook; %s is back as %s", name, chained,
		         target);
		return 0;
	}
	if (unlink(target) < 0) {
		errtext_set(err, errlen, target, "cannot remove gate's hook: %s", strerror(errno));
		return -1;
	}
	snprintf(msg, msglen, "removed gate's %s hook %s", name, target);
	return 0;
}
