/* tests/baseline_git_fixture.h: what the tests of the baseline in git share (header-only:
 * each test is one program): a mkdtemp directory per test with HOME pointing there, so no user
 * config leaks in; shell helpers that log to it; a sample baseline; a repository made by the
 * git CLI; git fsck at the end. */
#ifndef GATE_TESTS_BASELINE_GIT_FIXTURE_H
#define GATE_TESTS_BASELINE_GIT_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ci/git/baseline_git.h"
#include "model/snapshot.h"
#include "tests/helpers.h"

#define TS_2026_12_02_NOON 1796212800

struct fixture {
	char dir[64];
	char repo[128];
	char log[128];
	char err[2048];
	struct baseline b;
};

/* ---- helpers ---- */

static struct fixture *g_fx; /* for the helpers' log file */

/* Runs a shell command in cwd; its output goes to the fixture's log. Returns the exit code. */
__attribute__((format(printf, 2, 3))) static inline int sh(const char *cwd, const char *fmt, ...)
{
	char cmd[4096], full[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cd '%s' && { %s ; } >>'%s' 2>&1", cwd, cmd, g_fx->log);
	int st = system(full);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The stdout of a shell command run in cwd (stderr to the log); malloc'd. */
__attribute__((format(printf, 2, 3))) static inline char *out(const char *cwd, const char *fmt, ...)
{
	char cmd[4096], full[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cd '%s' && { %s ; } 2>>'%s'", cwd, cmd, g_fx->log);
	FILE *p = popen(full, "r");
	assert_non_null(p);
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
		n += got;
		if (n + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[n] = '\0';
	pclose(p);
	return buf;
}

#define SH_OK(cwd, ...)                                                                            \
	do {                                                                                       \
		int sh_rc_ = sh(cwd, __VA_ARGS__);                                                 \
		if (sh_rc_ != 0)                                                                   \
			fail_msg("command failed (%d), see %s: " #__VA_ARGS__, sh_rc_, g_fx->log); \
	} while (0)

static inline void put(const char *repo, const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", repo, rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static inline void assert_out(const char *cwd, const char *want, const char *cmd)
{
	char *got = out(cwd, "%s", cmd);
	if (strcmp(got, want) != 0)
		fail_msg("`%s` printed <%s>, want <%s>", cmd, got, want);
	free(got);
}

/* git fsck: exit 0 and nothing broken (dangling objects are fine). */
static inline void assert_fsck(const char *repo)
{
	char *o = out(repo, "git fsck --strict --no-progress 2>&1; echo \"rc=$?\"");
	if (!strstr(o, "rc=0") || strstr(o, "error") || strstr(o, "missing") ||
	    strstr(o, "broken") || strstr(o, "warning"))
		fail_msg("git fsck in %s: %s", repo, o);
	free(o);
}

static inline void sample(struct baseline *b, int64_t tests, int64_t total)
{
	memset(b, 0, sizeof(*b));
	b->format_version = 1;
	b->gate_version = strdup("0.1.0");
	b->otp_release = strdup("25");
	b->elixir_version = strdup("1.14.0");
	b->commit = strdup("0123456789abcdef0123456789abcdef01234567");
	b->timestamp = TS_2026_12_02_NOON + tests;
	b->test_count = tests;
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		b->have[i] = true;
		b->mem[i] = total / 10 * (i + 1);
	}
	b->mem[MEM_TOTAL] = total;
	b->process_count = 60;
	b->atom_count = 15000;
	b->nets = 1;
	b->ets = calloc(1, sizeof(*b->ets));
	b->ets[0] = (struct baseline_ets){strdup("sessions"), 4096, 3};
}

static inline int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/gate_test_bgit.XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->repo, sizeof(fx->repo), "%s/repo", fx->dir);
	snprintf(fx->log, sizeof(fx->log), "%s/sh.log", fx->dir);
	/* no user or system config: only what the test sets in the repository */
	setenv("HOME", fx->dir, 1);
	setenv("XDG_CONFIG_HOME", fx->dir, 1);
	unsetenv("GATE_AUTHOR_NAME");
	unsetenv("GATE_AUTHOR_EMAIL");
	sample(&fx->b, 1, 30000000);
	g_fx = fx;
	*state = fx;
	return 0;
}

static inline int teardown(void **state)
{
	struct fixture *fx = *state;
	if (getenv("GATE_KEEP_TMP"))
		fprintf(stderr, "kept %s\n", fx->dir);
	else
		rm_rf(fx->dir);
	baseline_clear(&fx->b);
	free(fx);
	g_fx = NULL;
	return 0;
}

/* A repository on main with a few files (one executable) in one commit. */
static inline void make_repo(struct fixture *fx)
{
	SH_OK(fx->dir, "git init -q -b main repo");
	SH_OK(fx->repo, "git config user.name 'Test User' && git config user.email test@example.com"
	                " && git config commit.gpgsign false");
	SH_OK(fx->repo, "mkdir dir && printf 'a\\n' >a.txt && printf 'b\\n' >b.txt && printf "
	                "'c\\n' >dir/c.txt && printf '#!/bin/sh\\n' >run.sh && chmod +x run.sh");
	SH_OK(fx->repo, "git add -A && git commit -q -m initial");
}

static inline struct baseline_repo *open_repo(struct fixture *fx, const char *dir)
{
	struct baseline_repo *r = NULL;
	int rc = baseline_git_open(&r, dir, fx->err, sizeof(fx->err));
	if (rc != BASELINE_OK)
		fail_msg("open %s: %s", dir, fx->err);
	return r;
}

static inline void head_hex(struct fixture *fx, struct baseline_repo *r, char out[BASELINE_OID_HEX])
{
	if (baseline_git_head(out, r, fx->err, sizeof(fx->err)) != BASELINE_OK)
		fail_msg("head: %s", fx->err);
}

/* Commits fx->b (or b) at the default path expecting HEAD where it is; returns the commit. */
static inline void commit_ok(struct fixture *fx, struct baseline_repo *r, const struct baseline *b,
                             char out_commit[BASELINE_OID_HEX])
{
	char head[BASELINE_OID_HEX];
	head_hex(fx, r, head);
	struct baseline_commit_opts o = {.expected_head = head};
	int rc = baseline_git_commit(out_commit, r, b ? b : &fx->b, &o, fx->err, sizeof(fx->err));
	if (rc != BASELINE_OK)
		fail_msg("commit: rc %d: %s", rc, fx->err);
}

/* The environment of every test program: no system git config, no editor or pager, none of
 * the GIT_* variables a hook or a parent git would set. */
static inline void bgfx_env(void)
{
	setenv("LC_ALL", "C", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_EDITOR", "true", 1);
	setenv("GIT_PAGER", "cat", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	unsetenv("GIT_OBJECT_DIRECTORY");
}

#endif
