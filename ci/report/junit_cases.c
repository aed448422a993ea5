/* ci/report/junit_cases.c: a comparison's rows as one JUnit testcase (SHOW_ONE_CASE). */
#include "ci/report/junit_cases.h"
#include "model/finding.h"

#include <stdio.h>

bool junit_case_same(const struct finding *a, const struct finding *b)
{
	return (a->show & SHOW_ONE_CASE) && (b->show & SHOW_ONE_CASE) && finding_same_rule(a, b);
}

/* Whether findings->items[i] stands for a testcase: not a row of a comparison whose first
 * row in the list stands for it already. */
bool junit_case_first(const struct findings *f, size_t i)
{
	for (size_t k = 0; k < i && (f->items[i].show & SHOW_ONE_CASE); k++)
		if (junit_case_same(&f->items[k], &f->items[i]))
			return false;
	return true;
}

/* The verdict of the testcase item i stands for: a comparison fails when one of its rows
 * fails, is skipped when every row is, else passes. */
enum verdict junit_case_verdict(const struct findings *f, size_t i)
{
	const struct finding *g = &f->items[i];
	bool all_skipped = true;
	if (!(g->show & SHOW_ONE_CASE))
		return g->verdict;
	for (size_t k = i; k < f->count; k++) {
		if (!junit_case_same(&f->items[k], g))
			continue;
		if (f->items[k].verdict == VERDICT_FAIL)
			return VERDICT_FAIL;
		all_skipped &= f->items[k].verdict == VERDICT_SKIP;
	}
	return all_skipped ? VERDICT_SKIP : VERDICT_PASS;
}

void junit_case_body(struct textbuf *body, const struct findings *f, size_t i,
                     const struct finding **first_fail)
{
	const struct finding *g = &f->items[i];
	size_t rows = 0, failing = 0, skipped = 0, context = 0;
	*first_fail = NULL;
	for (size_t k = i; k < f->count; k++) {
		const struct finding *r = &f->items[k];
		if (!junit_case_same(r, g))
			continue;
		rows++;
		if (r->verdict == VERDICT_FAIL) {
			if (!*first_fail)
				*first_fail = r;
			textbuf_printf(body, "%s%s: %s\n", failing++ ? "" : "rows that failed:\n",
			               r->subject ? r->subject : "?", r->message ? r->message : "");
		}
		skipped += r->verdict == VERDICT_SKIP;
		context += r->verdict == VERDICT_PASS && r->explained_by;
	}
	if (context) {
		textbuf_printf(body, "%sas context (more evidence for a cause named elsewhere):\n",
		               failing ? "\n" : "");
		for (size_t k = i; k < f->count; k++)
			if (junit_case_same(&f->items[k], g) &&
			    f->items[k].verdict == VERDICT_PASS && f->items[k].explained_by)
				textbuf_printf(body, "%s: explained by %s\n",
				               f->items[k].subject ? f->items[k].subject : "?",
				               f->items[k].explained_by);
	}
	if (rows > 1)
		textbuf_printf(body, "%s%zu rows compared: %zu failed, %zu skipped, %zu passed\n",
		               failing || context ? "\n" : "", rows, failing, skipped,
		               rows - failing - skipped);
}
