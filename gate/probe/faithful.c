/* gate/probe/faithful.c: gate run as faithful to bare `mix test` as can be. */
#include "gate/probe/faithful.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errtext.h"
#include "base/readfile.h"
#include "gate/probe/probe.h"
#include "model/tests.h"

#define DEFAULT_TEST_CAP 200000

int64_t faithful_test_cap(void)
{
	const char *v = getenv("GATE_TEST_CAP");
	if (v && *v) {
		char *end;
		long long n = strtoll(v, &end, 10);
		if (*end == '\0' && n > 0 && n <= DEFAULT_TEST_CAP)
			return n;
	}
	return DEFAULT_TEST_CAP;
}

static int dup_opt(const struct term *t, char **out)
{
	const char *s = term_text(t);
	if (!s || !*s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -1;
}

int faithful_test_decode(const struct term *extra, struct test_result *r)
{
	if (!extra || extra->type != TERM_MAP)
		return -1;
	if (dup_opt(term_map_get(extra, "app"), &r->app) < 0 ||
	    dup_opt(term_map_get(extra, "reason"), &r->reason) < 0)
		return -1;
	return 0;
}

int faithful_run_decode(const struct term *body, struct test_run *out, char *err, size_t errlen)
{
	int64_t status, dropped, partition;
	if (term_int(term_map_get(body, "exit_status"), &status) < 0)
		return 0; /* an older probe */
	out->mix_reported = true;
	out->mix_status = status >= 0 && status <= 255 ? (int)status : 1;
	out->suite_ran = term_is_atom(term_map_get(body, "suite_ran"), "true");
	out->mix_explained = term_is_atom(term_map_get(body, "exit_explained"), "true");
	if (term_int(term_map_get(body, "dropped"), &dropped) == 0 && dropped > 0)
		out->tests_dropped = dropped;
	out->test_cap = faithful_test_cap();
	if (term_int(term_map_get(body, "partition"), &partition) == 0 && partition > 0 &&
	    partition < 1000000)
		out->partition = (int)partition;
	if (out->mix_status != 0 &&
	    dup_opt(term_map_get(body, "exit_reason"), &out->mix_reason) < 0) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	return 0;
}

int faithful_prep(struct eic *c, char *const *args, size_t nargs, bool start, int timeout_ms,
                  char *err, size_t errlen)
{
	ei_x_buff a;
	struct term *root = NULL;
	const struct term *r;
	ei_x_new(&a);
	ei_x_encode_list_header(&a, 2);
	eic_encode_binaries(&a, args, nargs);
	ei_x_encode_map_header(&a, 1);
	ei_x_encode_atom(&a, "start");
	ei_x_encode_atom(&a, start ? "true" : "false");
	ei_x_encode_empty_list(&a);
	int rc = eic_rpc(c, probe_entry(), "run_prep", &a, timeout_ms, &root, &r, err, errlen);
	ei_x_free(&a);
	if (rc == EIC_OK && term_is_atom(term_tuple_at(r, 0), "error")) {
		const char *why = term_text(term_tuple_at(r, 1));
		errtext_set(err, errlen, NULL,
		            "mix test's preparation failed (the `test` alias's steps before "
		            "\"test\", or starting the applications), %s",
		            why ? why : "no reason given");
		rc = EIC_ERROR;
	} else if (rc == EIC_OK && !term_is_atom(term_tuple_at(r, 0), "ok")) {
		errtext_set(err, errlen, NULL, "gate_probe:run_prep/2 gave an unexpected reply");
		rc = EIC_ERROR;
	}
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}

int faithful_partition(char *const *args, size_t nargs)
{
	long parts = 0;
	for (size_t i = 0; i < nargs; i++) {
		if (strcmp(args[i], "--partitions") == 0 && i + 1 < nargs)
			parts = strtol(args[i + 1], NULL, 10);
		else if (strncmp(args[i], "--partitions=", 13) == 0)
			parts = strtol(args[i] + 13, NULL, 10);
	}
	const char *p = getenv("MIX_TEST_PARTITION");
	if (parts <= 1 || !p || !*p)
		return 0;
	char *end;
	long n = strtol(p, &end, 10);
	return *end == '\0' && n > 0 && n <= parts ? (int)n : 0;
}

int faithful_partitions(char *const *args, size_t nargs)
{
	if (faithful_partition(args, nargs) <= 0)
		return 0;
	long parts = 0;
	for (size_t i = 0; i < nargs; i++) {
		if (strcmp(args[i], "--partitions") == 0 && i + 1 < nargs)
			parts = strtol(args[i + 1], NULL, 10);
		else if (strncmp(args[i], "--partitions=", 13) == 0)
			parts = strtol(args[i] + 13, NULL, 10);
	}
	return parts > 1 && parts < 1000000 ? (int)parts : 0;
}

int faithful_repo_root(const char *dir, char *out, size_t len)
{
	char cur[PATH_MAX];
	if (!realpath(dir, cur))
		return -1;
	for (;;) {
		char git[PATH_MAX + 8];
		struct stat st;
		snprintf(git, sizeof(git), "%s/.git", cur);
		if (stat(git, &st) == 0) {
			snprintf(out, len, "%s", cur);
			return 0;
		}
		char *slash = strrchr(cur, '/');
		if (!slash || slash == cur)
			return -1;
		*slash = '\0';
	}
}

static const char *app_of(const struct test_run *run, const char *module)
{
	for (size_t i = 0; i < run->count; i++)
		if (run->tests[i].module && strcmp(run->tests[i].module, module) == 0)
			return run->tests[i].app && *run->tests[i].app ? run->tests[i].app : NULL;
	return NULL;
}

static int rename_with_app(char **name, const char *app)
{
	if (!app || !*name)
		return 0;
	size_t len = strlen(*name) + strlen(app) + sizeof(" (app )");
	char *s = malloc(len);
	if (!s)
		return -1;
	snprintf(s, len, "%s (app %s)", *name, app);
	free(*name);
	*name = s;
	return 0;
}

int faithful_name_apps(struct test_run *run, struct snapshot *after)
{
	const char *first = NULL;
	bool several = false;
	for (size_t i = 0; i < run->count && !several; i++) {
		const char *a = run->tests[i].app;
		if (!a || !*a)
			continue;
		if (!first)
			first = a;
		else if (strcmp(first, a) != 0)
			several = true;
	}
	if (!several)
		return 0;
	/* the growth and owners first: they look the app up by the tests' original names */
	for (size_t i = 0; i < run->nmodules; i++)
		if (rename_with_app(&run->modules[i].module, app_of(run, run->modules[i].module)) <
		    0)
			return -1;
	for (size_t i = 0; after && i < after->nowners; i++)
		if (rename_with_app(&after->owners[i].module,
		                    app_of(run, after->owners[i].module)) < 0)
			return -1;
	for (size_t i = 0; i < run->count; i++)
		if (rename_with_app(&run->tests[i].module, run->tests[i].app) < 0)
			return -1;
	return 0;
}

int faithful_baseline_partition(char **path, const char *default_path, int partition)
{
	if (partition <= 0)
		return 0;
	const char *p = *path ? *path : default_path;
	const char *slash = strrchr(p, '/');
	const char *dot = strrchr(p, '.');
	size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - p) : strlen(p);
	size_t len = strlen(p) + 32;
	char *out = malloc(len);
	if (!out)
		return -1;
	snprintf(out, len, "%.*s.partition-%d%s", (int)stem, p, partition, p + stem);
	free(*path);
	*path = out;
	return 0;
}
