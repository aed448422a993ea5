/* ci/report/junit_cases.c: a comparison's rows as one JUnit testcase (SHOW_ONE_CASE), and
 * a failing finding's text. */
#include "ci/report/junit_cases.h"
#include "model/finding.h"
#include "rules/explain.h"

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

/* A failing finding's text: its figures when its rule says they tell it (SHOW_FIGURES, in
 * its unit), else its message; then the likely culprits (rules/attribution.c), and the
 * command that explains the rule. */
void junit_failure_body(struct textbuf *b, const struct finding *f)
{
	if (!(f->show & SHOW_FIGURES)) {
		textbuf_printf(b, "%s\n", f->message ? f->message : "");
	} else {
		char bf[32], af[32], df[32], fl[32], pct[48] = "";
		int64_t delta = f->delta; /* as the rule judged it */
		const char *unit = f->unit == UNIT_BYTES ? " bytes" : "";
		finding_figure_format(bf, sizeof(bf), f, f->before);
		finding_figure_format(af, sizeof(af), f, f->after);
		finding_figure_format(df, sizeof(df), f, delta);
		finding_figure_format(fl, sizeof(fl), f, f->floor);
		if (f->before > 0)
			snprintf(pct, sizeof(pct), ", %+.1f %%",
			         100.0 * (double)delta / (double)f->before);
		textbuf_printf(b,
		               "before: %s (%lld%s)\n"
		               "after:  %s (%lld%s)\n"
		               "delta:  %s%s (%+lld%s%s)\n",
		               bf, (long long)f->before, unit, af, (long long)f->after, unit,
		               delta > 0 ? "+" : "", df, (long long)delta, unit, pct);
		if (finding_adjusted(f)) {
			/* what grew, and what the rule took out of it (rules/growth.h) */
			char r[32];
			int64_t raw = finding_raw_delta(f);
			finding_figure_format(r, sizeof(r), f, raw);
			textbuf_printf(b, "        judged: it grew %s%s, less %s\n",
			               raw > 0 ? "+" : "", r,
			               f->explained ? f->explained : "what other rows judge");
		}
		if (f->max_pct >= 0)
			textbuf_printf(b, "limit:  +%g %% above a floor of %s\n", f->max_pct, fl);
		else
			textbuf_printf(b, "limit:  a floor of %s\n", fl);
	}
	if (f->detail)
		textbuf_printf(b, "\n%s", f->detail);
	const struct rule_explain *e = rule_explain_for(f->rule, f->subject);
	if (e)
		textbuf_printf(b, "\n%s%s: its usual causes and fixes\n", EXPLAIN_HINT, e->rule);
}
