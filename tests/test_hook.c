/* tests/test_hook.c: gate's git hook in temp repositories (libgit2): install with and without
 * an existing hook, chaining, uninstall restoring it byte for byte, refusals that change
 * nothing, core.hooksPath, and the script's quoting run through sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "ci/git/hook.h"
#include "tests/helpers.h"

struct fx {
	char dir[256];
	struct hook_where w;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	git_repository *repo = NULL;
	snprintf(fx->dir, sizeof(fx->dir), "%s/gate-hook-XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fx->dir))
		return -1;
	git_libgit2_init();
	int rc = git_repository_init(&repo, fx->dir, 0);
	git_repository_free(repo);
	git_libgit2_shutdown();
	*state = fx;
	return rc;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	rm_rf(fx->dir);
	free(fx);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = calloc(1, 65536);
	size_t n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static const struct hook_spec spec = {
        .kind = HOOK_PRE_PUSH,
        .gate_path = "/opt/gate/bin/gate",
        .project = "apps/web",
};

static void test_hook__fresh_install_and_uninstall(void **state)
{
	struct fx *fx = *state;
	char err[1024], msg[1024], path[512];
	assert_int_equal(hook_where_find(&fx->w, fx->dir, err, sizeof(err)), 0);
	assert_non_null(strstr(fx->w.hooks, "/.git/hooks"));
	assert_int_equal(hook_install(fx->w.hooks, &spec, msg, sizeof(msg), err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/pre-push", fx->w.hooks);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_mode & S_IXUSR);
	char *s = slurp(path);
	assert_non_null(strstr(s, HOOK_MARKER));
	assert_non_null(strstr(s, "gate_bin='/opt/gate/bin/gate'"));
	assert_non_null(strstr(s, "project='apps/web'"));
	free(s);
	/* installing again updates in place */
	assert_int_equal(hook_install(fx->w.hooks, &spec, msg, sizeof(msg), err, sizeof(err)), 0);
	assert_non_null(strstr(msg, "updated"));
	snprintf(path, sizeof(path), "%s/pre-push" HOOK_CHAINED_SUFFIX, fx->w.hooks);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(
	        hook_uninstall(fx->w.hooks, HOOK_PRE_PUSH, msg, sizeof(msg), err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/pre-push", fx->w.hooks);
	assert_int_not_equal(access(path, F_OK), 0);
	/* nothing left to uninstall: an error naming the path */
	assert_int_equal(
	        hook_uninstall(fx->w.hooks, HOOK_PRE_PUSH, msg, sizeof(msg), err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
}

static void test_hook__existing_hook_chained_and_restored(void **state)
{
	struct fx *fx = *state;
	char err[1024], msg[1024], path[512], chained[600];
	const char *mine = "#!/bin/sh\n# the team's own pre-commit hook\nexit 0\n";
	struct hook_spec pc = spec;
	pc.kind = HOOK_PRE_COMMIT;
	assert_int_equal(hook_where_find(&fx->w, fx->dir, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/pre-commit", fx->w.hooks);
	snprintf(chained, sizeof(chained), "%s" HOOK_CHAINED_SUFFIX, path);
	put(path, mine, 0750);
	assert_int_equal(hook_install(fx->w.hooks, &pc, msg, sizeof(msg), err, sizeof(err)), 0);
	assert_non_null(strstr(msg, "kept as"));
	char *s = slurp(chained);
	assert_string_equal(s, mine);
	free(s);
	struct stat st;
	assert_int_equal(stat(chained, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	/* a hook that is not gate's cannot be uninstalled */
	put(path, "#!/bin/sh\nexit 1\n", 0755);
	assert_int_equal(
	        hook_uninstall(fx->w.hooks, HOOK_PRE_COMMIT, msg, sizeof(msg), err, sizeof(err)),
	        -1);
	assert_non_null(strstr(err, "not gate's"));
	/* a new foreign hook while one is chained: install refuses, changes nothing */
	assert_int_equal(hook_install(fx->w.hooks, &pc, msg, sizeof(msg), err, sizeof(err)), -1);
	assert_non_null(strstr(err, HOOK_CHAINED_SUFFIX));
	s = slurp(path);
	assert_string_equal(s, "#!/bin/sh\nexit 1\n");
	free(s);
	unlink(path);
	assert_int_equal(hook_install(fx->w.hooks, &pc, msg, sizeof(msg), err, sizeof(err)), 0);
	assert_int_equal(
	        hook_uninstall(fx->w.hooks, HOOK_PRE_COMMIT, msg, sizeof(msg), err, sizeof(err)),
	        0);
	s = slurp(path);
	assert_string_equal(s, mine); /* the team's hook is back, byte for byte */
	free(s);
	assert_int_not_equal(access(chained, F_OK), 0);
	/* no temp files left in the hooks directory */
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -v sample | grep -vx pre-commit",
	         fx->w.hooks);
	assert_int_not_equal(system(cmd), 0);
}

static void test_hook__hooks_path_and_not_a_repo(void **state)
{
	struct fx *fx = *state;
	char err[1024], cfg[512];
	snprintf(cfg, sizeof(cfg), "%s/.git/config", fx->dir);
	FILE *f = fopen(cfg, "a");
	assert_non_null(f);
	fputs("[core]\n\thooksPath = .githooks\n", f);
	fclose(f);
	assert_int_equal(hook_where_find(&fx->w, fx->dir, err, sizeof(err)), 0);
	char want[512];
	snprintf(want, sizeof(want), "%s/.githooks", fx->w.workdir);
	assert_string_equal(fx->w.hooks, want);
	assert_int_equal(hook_where_find(&fx->w, "/", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not in a git repository"));
}

/* The script, run by sh with GATE_BIN pointing at a recorder, passes every recorded value
 * through unchanged: quotes, spaces, $ and backquotes stay literal. */
static void test_hook__script_quoting(void **state)
{
	struct fx *fx = *state;
	char err[1024], msg[1024], rec[512], out[512], cmd[2048];
	const char *args[] = {"--", "--exclude", "it's $HOME `x`"};
	struct hook_spec s = spec;
	s.kind = HOOK_PRE_COMMIT;
	s.project = "dir with 'quote' $x";
	s.args = args;
	s.nargs = 3;
	assert_int_equal(hook_where_find(&fx->w, fx->dir, err, sizeof(err)), 0);
	assert_int_equal(hook_install(fx->w.hooks, &s, msg, sizeof(msg), err, sizeof(err)), 0);
	snprintf(rec, sizeof(rec), "%s/rec.sh", fx->dir);
	snprintf(out, sizeof(out), "%s/rec.out", fx->dir);
	char body[1024];
	snprintf(body, sizeof(body),
	         "#!/bin/sh\nfor a in \"$@\"; do printf '[%%s]\\n' \"$a\"; done >'%s'\nexit 3\n",
	         out);
	put(rec, body, 0755);
	snprintf(cmd, sizeof(cmd), "cd '%s' && GATE_BIN='%s' sh .git/hooks/pre-commit 2>/dev/null",
	         fx->dir, rec);
	int rc = system(cmd);
	assert_true(WIFEXITED(rc));
	assert_int_equal(WEXITSTATUS(rc), 3); /* gate's exit code blocks the commit */
	char *got = slurp(out);
	assert_non_null(got);
	char want[1024];
	snprintf(want, sizeof(want),
	         "[run]\n[-C]\n[%s/dir with 'quote' $x]\n[--]\n[--exclude]\n"
	         "[it's $HOME `x`]\n",
	         fx->w.workdir);
	assert_string_equal(got, want);
	free(got);
	/* GATE_HOOK_SKIP=1 skips the gate */
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && GATE_HOOK_SKIP=1 GATE_BIN=/nonexistent sh "
	         ".git/hooks/pre-commit 2>/dev/null",
	         fx->dir);
	assert_int_equal(system(cmd), 0);
	/* a gate that is gone blocks with a message, not a shell error */
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && GATE_BIN=/nonexistent sh .git/hooks/pre-commit "
	         "2>&1 | grep -q 'is not an executable: set GATE_BIN'",
	         fx->dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_hook__fresh_install_and_uninstall, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_hook__existing_hook_chained_and_restored,
	                                        setup, teardown),
	        cmocka_unit_test_setup_teardown(test_hook__hooks_path_and_not_a_repo, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_hook__script_quoting, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
