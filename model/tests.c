/* model/tests.c: a suite's results: adding, counting, freeing */
#include "model/tests.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

const char *test_state_name(enum test_state state)
{
	switch (state) {
	case TEST_PASSED: return "passed";
	case TEST_FAILED: return "failed";
	case TEST_SKIPPED: return "skipped";
	case TEST_EXCLUDED: return "excluded";
	case TEST_INVALID: return "invalid";
	}
	return "unknown";
}

struct test_result *test_run_add(struct test_run *run)
{
	if (GROW(run->tests, run->cap, run->count + 1, 64) < 0)
		return NULL;
	struct test_result *r = &run->tests[run->count++];
	memset(r, 0, sizeof(*r));
	return r;
}

void test_run_clear(struct test_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->count; i++) {
		free(run->tests[i].module);
		free(run->tests[i].name);
		free(run->tests[i].file);
		free(run->tests[i].message);
		free(run->tests[i].app);
		free(run->tests[i].reason);
		free(run->tests[i].gate_tag);
		free(run->tests[i].gate_grew);
	}
	free(run->tests);
	for (size_t i = 0; i < run->nmodules; i++)
		free(run->modules[i].module);
	free(run->modules);
	for (size_t i = 0; i < run->nstructs; i++) {
		for (size_t k = 0; k < run->structs[i].nitems; k++)
			free(run->structs[i].items[k].key);
		free(run->structs[i].items);
		free(run->structs[i].module);
	}
	free(run->structs);
	free(run->attribution_error);
	free(run->mix_reason);
	memset(run, 0, sizeof(*run));
}

struct test_counts test_run_count(const struct test_run *run)
{
	struct test_counts c = {0};
	for (size_t i = 0; i < run->count; i++) {
		c.total++;
		switch (run->tests[i].state) {
		case TEST_PASSED: c.passed++; break;
		case TEST_FAILED: c.failed++; break;
		case TEST_SKIPPED:
		case TEST_EXCLUDED: c.skipped++; break;
		case TEST_INVALID: c.invalid++; break;
		}
	}
	return c;
}

bool test_run_red(const struct test_run *run)
{
	struct test_counts c = test_run_count(run);
	return c.failed || c.invalid || run->mix_status != 0;
}
