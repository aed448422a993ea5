/* model/verdict.c: the one verdict, and why, for the exit code and every report */
#include "model/verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct verdict_tally model_verdict_tally(const struct findings *findings,
                                         const struct test_run *tests)
{
	struct verdict_tally t = {0};
	for (size_t i = 0; findings && i < findings->count; i++) {
		const struct finding *f = &findings->items[i];
		if (f->verdict != VERDICT_FAIL)
			continue;
		if (f->show & SHOW_NODE_LOST)
			t.nodes_lost++;
		else
			t.rules++;
	}
	if (tests) {
		struct test_counts c = test_run_count(tests);
		t.tests = c.failed + c.invalid;
		t.unfinished = !tests->finished;
		t.mix_red = tests->mix_status != 0;
		/* bare mix test would be red for a reason the failed tests do not tell */
		if (tests->mix_status != 0 && !tests->mix_explained)
			t.mix_status = tests->mix_status;
	}
	return t;
}

enum gate_verdict model_verdict(const struct verdict_tally *t)
{
	if (t->error)
		return GATE_ERROR;
	if (t->rules || t->tests || t->nodes_lost || t->unfinished || t->mix_red || t->mix_status)
		return GATE_FAILED;
	return GATE_PASSED;
}

const char *model_verdict_name(enum gate_verdict v)
{
	switch (v) {
	case GATE_PASSED: return "PASSED";
	case GATE_FAILED: return "FAILED";
	case GATE_ERROR: return "ERROR";
	}
	return "?";
}

/* Appends ", "-separated text at *n, as far as it fits. */
static void why_add(char *buf, size_t len, size_t *n, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void why_add(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	if (*n + 1 >= len)
		return;
	if (*n)
		*n += (size_t)snprintf(buf + *n, len - *n, ", ");
	if (*n + 1 >= len) {
		*n = len - 1;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	*n = w < 0 ? *n : *n + (size_t)w >= len ? len - 1 : *n + (size_t)w;
}

void model_verdict_why(char *buf, size_t len, const struct verdict_tally *t)
{
	size_t n = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	if (t->error) {
		snprintf(buf, len, "gate could not run");
		return;
	}
	if (t->rules)
		why_add(buf, len, &n, "%zu memory %s", t->rules, t->rules == 1 ? "rule" : "rules");
	if (t->tests)
		why_add(buf, len, &n, "%zu %s", t->tests, t->tests == 1 ? "test" : "tests");
	if (t->nodes_lost)
		why_add(buf, len, &n, "%zu %s lost", t->nodes_lost,
		        t->nodes_lost == 1 ? "node" : "nodes");
	if (t->unfinished)
		why_add(buf, len, &n, "the test suite did not finish");
	if (t->mix_status)
		why_add(buf, len, &n, "mix test exit status %d", t->mix_status);
	else if (t->mix_red && n == 0) /* red, and nothing above says why */
		why_add(buf, len, &n, "mix test failed");
}
