/* rules/model.c: names, lists and formatting for the shared data model. */
#include "rules/model.h"

#include "base/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mem_cat_names[MEM_CAT_COUNT] = {
        "total",     "processes", "processes_used", "system", "atom",
        "atom_used", "binary",    "code",           "ets",
};

const char *mem_cat_name(enum mem_cat cat)
{
	if ((int)cat < 0 || cat >= MEM_CAT_COUNT)
		return NULL;
	return mem_cat_names[cat];
}

int mem_cat_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < MEM_CAT_COUNT; i++)
		if (strcmp(mem_cat_names[i], name) == 0)
			return i;
	return -1;
}

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

const char *verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_PASS: return "pass";
	case VERDICT_FAIL: return "FAIL";
	case VERDICT_SKIP: return "skip";
	}
	return "unknown";
}

void starter_clear(struct starter *s)
{
	if (!s)
		return;
	free(s->test);
	free(s->file);
	free(s->module);
	free(s->code);
	free(s->by);
	memset(s, 0, sizeof(*s));
}

static void inside_parts_free(struct inside_part *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].where);
		free(p[i].type);
		free(p[i].unit);
	}
	free(p);
}

void proc_inside_clear(struct proc_inside *in)
{
	if (!in)
		return;
	free(in->pid);
	free(in->kind);
	free(in->why);
	inside_parts_free(in->parts, in->nparts);
	inside_parts_free(in->parts_before, in->nparts_before);
	starter_clear(&in->started);
	memset(in, 0, sizeof(*in));
}

void snapshot_clear(struct snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++) {
		free(s->procs[i].pid);
		free(s->procs[i].name);
		free(s->procs[i].initial_call);
		free(s->procs[i].current_function);
	}
	free(s->procs);
	for (size_t i = 0; i < s->nborn; i++) {
		free(s->born[i].key);
		free(s->born[i].example_pid);
		starter_clear(&s->born[i].started);
	}
	free(s->born);
	for (size_t i = 0; i < s->nowners; i++)
		free(s->owners[i].module);
	free(s->owners);
	for (size_t i = 0; i < s->nets; i++) {
		free(s->ets[i].name);
		free(s->ets[i].id);
		free(s->ets[i].type);
		free(s->ets[i].protection);
		free(s->ets[i].owner_pid);
		free(s->ets[i].owner_name);
	}
	free(s->ets);
	for (size_t i = 0; i < s->nallocs; i++)
		free(s->allocs[i].type);
	free(s->allocs);
	fine_level_clear(&s->fine); /* the fine level's readings (rules/fine.c) */
	for (size_t i = 0; i < s->ngrew_procs; i++) {
		struct proc_growth *g = &s->grew_procs[i];
		free(g->pid);
		free(g->name);
		free(g->initial_call);
		free(g->current_function);
		free(g->ancestor);
		free(g->module);
	}
	free(s->grew_procs);
	for (size_t i = 0; i < s->ninside; i++)
		proc_inside_clear(&s->inside[i]);
	free(s->inside);
	for (size_t i = 0; i < s->ngrew_ets; i++) {
		struct ets_growth *g = &s->grew_ets[i];
		free(g->name);
		free(g->id);
		free(g->owner_pid);
		free(g->owner_name);
		free(g->owner_call);
		free(g->module);
	}
	free(s->grew_ets);
	struct key_group *kg[] = {s->pterm_new, s->atoms_new, s->code_groups};
	size_t nkg[] = {s->npterm_new, s->natoms_new, s->ncode_groups};
	for (size_t k = 0; k < 3; k++) {
		for (size_t i = 0; i < nkg[k]; i++) {
			free(kg[k][i].key);
			free(kg[k][i].example);
		}
		free(kg[k]);
	}
	for (size_t i = 0; i < s->nports; i++) {
		struct port_group *g = &s->ports[i];
		free(g->name);
		free(g->owner_pid);
		free(g->owner_name);
		free(g->owner_call);
		free(g->module);
	}
	free(s->ports);
	for (size_t i = 0; i < s->nets_groups; i++) {
		struct ets_group *g = &s->ets_groups[i];
		free(g->name);
		free(g->owner_pid);
		free(g->owner_name);
		free(g->owner_call);
		free(g->module);
	}
	free(s->ets_groups);
	memset(s, 0, sizeof(*s));
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

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int findings_add(struct findings *list, const char *rule, const char *subject, enum verdict verdict,
                 int64_t before, int64_t after, int64_t floor, double max_pct, const char *message)
{
	if (GROW(list->items, list->cap, list->count + 1, 16) < 0)
		return -1;
	struct finding *f = &list->items[list->count];
	f->rule = dup_or_null(rule);
	f->subject = dup_or_null(subject);
	f->message = dup_or_null(message);
	f->detail = NULL;
	f->explained = NULL;
	f->warned = false;
	f->culprit = f->culprit_test = f->file = NULL;
	f->line = 0;
	f->unit = UNIT_BYTES;
	f->show = 0;
	f->structure_key = f->structure = f->explained_by = NULL;
	memset(f->explains, 0, sizeof(f->explains));
	f->judges = 0;
	if ((rule && !f->rule) || (subject && !f->subject) || (message && !f->message)) {
		free(f->rule);
		free(f->subject);
		free(f->message);
		return -1;
	}
	f->verdict = verdict;
	f->before = before;
	f->after = after;
	f->delta = finding_raw_delta(f);
	f->floor = floor;
	f->max_pct = max_pct;
	list->count++;
	return 0;
}

/* Frees f's strings, not f. */
static void finding_free(struct finding *f)
{
	free(f->rule);
	free(f->subject);
	free(f->message);
	free(f->detail);
	free(f->explained);
	free(f->culprit);
	free(f->culprit_test);
	free(f->file);
	free(f->structure_key);
	free(f->structure);
	free(f->explained_by);
}

int findings_add_copy(struct findings *list, const struct finding *f, const char *subject)
{
	if (GROW(list->items, list->cap, list->count + 1, 16) < 0)
		return -1;
	struct finding *c = &list->items[list->count];
	*c = *f;
	c->rule = dup_or_null(f->rule);
	c->subject = dup_or_null(subject ? subject : f->subject);
	c->message = dup_or_null(f->message);
	c->detail = dup_or_null(f->detail);
	c->explained = dup_or_null(f->explained);
	c->culprit = dup_or_null(f->culprit);
	c->culprit_test = dup_or_null(f->culprit_test);
	c->file = dup_or_null(f->file);
	c->structure_key = dup_or_null(f->structure_key);
	c->structure = dup_or_null(f->structure);
	c->explained_by = dup_or_null(f->explained_by);
	if ((f->structure_key && !c->structure_key) || (f->structure && !c->structure) ||
	    (f->explained_by && !c->explained_by)) {
		finding_free(c);
		return -1;
	}
	if ((f->rule && !c->rule) || ((subject || f->subject) && !c->subject) ||
	    (f->message && !c->message) || (f->detail && !c->detail) ||
	    (f->explained && !c->explained) || (f->culprit && !c->culprit) ||
	    (f->culprit_test && !c->culprit_test) || (f->file && !c->file)) {
		finding_free(c);
		return -1;
	}
	list->count++;
	return 0;
}

int64_t finding_raw_delta(const struct finding *f)
{
	int64_t d;
	/* figures come from the node or a file: saturate rather than overflow */
	if (__builtin_sub_overflow(f->after, f->before, &d))
		d = f->after < f->before ? INT64_MIN : INT64_MAX;
	return d;
}

bool finding_adjusted(const struct finding *f)
{
	return f->delta != finding_raw_delta(f);
}

void findings_show(struct findings *list, size_t first, enum finding_unit unit, unsigned show)
{
	for (size_t i = first; i < list->count; i++) {
		list->items[i].unit = unit;
		list->items[i].show |= show;
	}
}

const char *finding_rule_name(const struct finding *f)
{
	return f->rule ? f->rule : "rule";
}

bool finding_same_rule(const struct finding *a, const struct finding *b)
{
	return a->rule && b->rule && strcmp(a->rule, b->rule) == 0;
}

void finding_figure_format(char *buf, size_t len, const struct finding *f, int64_t v)
{
	if (f->unit == UNIT_COUNT)
		model_count_format(buf, len, v);
	else
		model_bytes_format(buf, len, v);
}

void findings_clear(struct findings *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->count; i++)
		finding_free(&list->items[i]);
	free(list->items);
	memset(list, 0, sizeof(*list));
}

size_t findings_failed(const struct findings *list)
{
	size_t n = 0;
	for (size_t i = 0; i < list->count; i++)
		if (list->items[i].verdict == VERDICT_FAIL)
			n++;
	return n;
}

void model_count_format(char *buf, size_t len, int64_t n)
{
	char digits[32];
	/* the magnitude as unsigned so INT64_MIN cannot overflow */
	uint64_t mag = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
	int nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)mag);
	char out[48];
	size_t o = 0;

	if (n < 0)
		out[o++] = '-';
	for (int i = 0; i < nd; i++) {
		if (i > 0 && (nd - i) % 3 == 0)
			out[o++] = ' ';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	snprintf(buf, len, "%s", out);
}

void model_bytes_format(char *buf, size_t len, int64_t bytes)
{
	const char *sign = bytes < 0 ? "-" : "";
	/* the magnitude as unsigned so INT64_MIN cannot overflow */
	uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
	if (mag < 1000)
		snprintf(buf, len, "%s%llu B", sign, (unsigned long long)mag);
	else if (mag < 1000000)
		snprintf(buf, len, "%s%.1f kB", sign, (double)mag / 1e3);
	else if (mag < 1000000000)
		snprintf(buf, len, "%s%.1f MB", sign, (double)mag / 1e6);
	else
		snprintf(buf, len, "%s%.2f GB", sign, (double)mag / 1e9);
}
