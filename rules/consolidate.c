/* rules/consolidate.c: one cause, one failing finding, across every rule family. */
#include "model/finding.h"
#include "rules/consolidate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(c) (1u << (c))

/* The categories that contain cat, as erlang:memory adds them up. */
static unsigned parents_of(int cat)
{
	switch (cat) {
	case MEM_PROCESSES_USED: return BIT(MEM_PROCESSES) | BIT(MEM_TOTAL);
	case MEM_ATOM_USED: return BIT(MEM_ATOM) | BIT(MEM_SYSTEM) | BIT(MEM_TOTAL);
	case MEM_ETS:
	case MEM_BINARY:
	case MEM_CODE:
	case MEM_ATOM: return BIT(MEM_SYSTEM) | BIT(MEM_TOTAL);
	case MEM_PROCESSES:
	case MEM_SYSTEM: return BIT(MEM_TOTAL);
	default: return 0;
	}
}

void consolidate_explains_add(int64_t explains[MEM_CAT_COUNT], enum mem_cat cat, int64_t bytes)
{
	if (bytes <= 0 || (int)cat < 0 || cat >= MEM_CAT_COUNT)
		return;
	unsigned p = parents_of((int)cat);
	explains[cat] += bytes;
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (p & BIT(c))
			explains[c] += bytes;
}

int consolidate_name(struct finding *f, const char *key, const char *label, enum mem_cat cat,
                     int64_t bytes)
{
	if (key) {
		char *k = strdup(key), *l = strdup(label ? label : key);
		if (!k || !l) {
			free(k);
			free(l);
			return -1;
		}
		free(f->structure_key);
		free(f->structure);
		f->structure_key = k;
		f->structure = l;
	}
	consolidate_explains_add(f->explains, cat, bytes);
	return 0;
}

unsigned consolidate_judges(const struct finding *f)
{
	int c;
	if (f->judges)
		return f->judges;
	c = mem_cat_from_name(f->subject);
	return c >= 0 ? BIT(c) : 0;
}

bool consolidate_first_of(const struct findings *out, size_t start, size_t i)
{
	const struct finding *f = &out->items[i];
	if (f->verdict != VERDICT_FAIL || !f->structure_key)
		return false;
	for (size_t k = start; k < i; k++) {
		const struct finding *g = &out->items[k];
		if (g->verdict == VERDICT_FAIL && g->structure_key &&
		    strcmp(g->structure_key, f->structure_key) == 0)
			return false;
	}
	return true;
}

int consolidate_context(struct finding *f, const char *by)
{
	size_t n = strlen(by) + 24;
	char *e = strdup(by), *t = malloc(n);
	if (!e || !t) {
		free(e);
		free(t);
		return -1;
	}
	snprintf(t, n, "context: explained by %s", by);
	int rc = finding_part_add(f, PART_CONTEXT, false, "; ", t);
	free(t);
	if (rc < 0) {
		free(e);
		return -1;
	}
	free(f->explained_by);
	f->explained_by = e;
	f->verdict = VERDICT_PASS;
	return 0;
}

/* ---- order ---- */

/* The order failing findings are reported and taken as causes in: 0 a named structure (or a
 * finding that is no category's: an allocator, a lost node); 1..9 a category row of the run,
 * the structures' usual containers first (ETS rows hold binaries, process state holds
 * binaries), total last; 20 a tag's limit; 30.. the baseline's and trend's rows (a table's,
 * then the categories in the same order); 100 what passed or was skipped. */
static int rank(const struct finding *f)
{
	static const int leaf_order[MEM_CAT_COUNT] = {
	        [MEM_ETS] = 1,       [MEM_PROCESSES_USED] = 2, [MEM_BINARY] = 3,
	        [MEM_ATOM_USED] = 4, [MEM_CODE] = 5,           [MEM_SYSTEM] = 6,
	        [MEM_PROCESSES] = 7, [MEM_ATOM] = 8,           [MEM_TOTAL] = 9,
	};
	int c = mem_cat_from_name(f->subject);
	if (f->verdict != VERDICT_FAIL)
		return 100;
	if (f->show & SHOW_REGRESSION)
		return 30 + (c >= 0 ? leaf_order[c] : 0);
	if (f->structure_key)
		return 0; /* a tag that names what grew in its test is a structure's finding */
	if (f->judges)
		return 20;
	return c >= 0 ? leaf_order[c] : 0;
}

int consolidate_order(struct findings *out, size_t start)
{
	size_t n = out->count - start, k = 0;
	struct finding *sorted;
	if (n < 2)
		return 0;
	if (!(sorted = malloc(n * sizeof(*sorted))))
		return -1;
	/* stable: equal ranks keep the order the rules appended them in */
	for (int r = 0; r <= 100; r++)
		for (size_t i = start; i < out->count; i++)
			if (rank(&out->items[i]) == r)
				sorted[k++] = out->items[i];
	memcpy(out->items + start, sorted, n * sizeof(*sorted));
	free(sorted);
	return 0;
}

/* ---- the pass ---- */

static bool any_explains(const struct finding *f)
{
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (f->explains[c])
			return true;
	return false;
}

/* Whether f fails with net judged instead of its delta, by its own limits: above its floor,
 * and above max_pct of its before figure when it has one. */
static bool fails_with(const struct finding *f, int64_t net)
{
	if (net <= f->floor)
		return false;
	if (f->max_pct < 0)
		return true;
	double pct = f->before > 0 ? 100.0 * (double)net / (double)f->before : 1e9;
	return pct > f->max_pct;
}

static int64_t share(const struct finding *g, unsigned cats)
{
	int64_t v = 0;
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (cats & BIT(c))
			v += g->explains[c];
	return v;
}

/* "ETS table sessions (+6.7 MB)", the cause of a finding judging cats, into buf. */
static void cause_text(char *buf, size_t len, const struct finding *g, int64_t bytes)
{
	char b[32];
	model_bytes_format(b, sizeof(b), bytes);
	if (g->structure)
		snprintf(buf, len, "%s (+%s)", g->structure, b);
	else
		snprintf(buf, len, "%s %s (+%s)", finding_rule_name(g),
		         g->subject ? g->subject : "", b);
}

/* What the causes so far explain of f's categories, and which they are ("A, B and 2 more"). */
static int64_t explained_by(char *by, size_t len, const struct findings *out, const size_t *causes,
                            size_t ncauses, unsigned cats)
{
	int64_t sum = 0;
	size_t named = 0, more = 0, o = 0;
	by[0] = '\0';
	for (size_t k = 0; k < ncauses; k++) {
		const struct finding *g = &out->items[causes[k]];
		int64_t v = share(g, cats);
		if (v <= 0)
			continue;
		sum += v;
		if (named == 2) {
			more++;
			continue;
		}
		char t[600];
		cause_text(t, sizeof(t), g, v);
		if (o < len)
			o += (size_t)snprintf(by + o, len - o, "%s%s", named ? ", " : "", t);
		named++;
	}
	if (more && o < len)
		snprintf(by + o, len - o, " and %zu more", more);
	return sum;
}

/* A baseline or trend row (its after-snapshot against a clean main branch's) most of whose
 * growth the causes explain is more evidence for them, not a cause of its own, even when
 * the rest is above its floor: under --repeat N the causes explain what grew in runs 2..N,
 * which is (N-1)/N >= 1/2 of a leak that grows in every run, while the row compares all N
 * runs with one clean run (a table or tasks filled per request, 2 findings at --repeat 3 on
 * the Phoenix app). A growth row is judged on the same window as its causes: net, as ever. */
static bool most_of(const struct finding *f, int64_t sum)
{
	return (f->show & SHOW_REGRESSION) && sum > 0 && 2 * sum >= f->delta;
}

/* A failing finding judging cats that stays failing: a cause, explaining what it judged. */
static void as_cause(struct finding *f, unsigned cats, int64_t net)
{
	if (any_explains(f))
		return;
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (cats & BIT(c)) {
			consolidate_explains_add(f->explains, (enum mem_cat)c, net);
			break; /* several categories (a tag): the first stands for their sum */
		}
}

int consolidate_findings(struct findings *out, size_t start)
{
	size_t *causes, ncauses = 0;
	char by[1024];
	if (consolidate_order(out, start) < 0)
		return -1;
	if (!(causes = malloc((out->count - start + 1) * sizeof(*causes))))
		return -1;
	for (size_t i = start; i < out->count; i++) {
		struct finding *f = &out->items[i];
		unsigned cats = consolidate_judges(f);
		if (f->verdict != VERDICT_FAIL)
			continue;
		if (f->structure_key && !consolidate_first_of(out, start, i)) {
			/* the same structure as a cause before it: evidence, not another cause */
			for (size_t k = 0; k < ncauses; k++) {
				const struct finding *g = &out->items[causes[k]];
				if (!g->structure_key || strcmp(g->structure_key, f->structure_key))
					continue;
				int64_t v = share(g, cats ? cats : BIT(MEM_TOTAL));
				cause_text(by, sizeof(by), g, v > 0 ? v : finding_raw_delta(f));
				break;
			}
			if (consolidate_context(f, by) < 0)
				goto oom;
			continue;
		}
		/* a category row its own rule judged net of the causes already (growth) is one */
		if (cats && !any_explains(f)) {
			int64_t sum = explained_by(by, sizeof(by), out, causes, ncauses, cats);
			int64_t net = f->delta - sum;
			if (sum > 0 && (!fails_with(f, net) || most_of(f, sum))) {
				if (consolidate_context(f, by) < 0)
					goto oom;
				continue;
			}
			as_cause(f, cats, net);
		}
		causes[ncauses++] = i;
	}
	free(causes);
	return consolidate_order(out, start);
oom:
	free(causes);
	return -1;
}
