/* ci/report/markdown.c: the Markdown step summary. */
#include "ci/report/markdown.h"

#include "ci/report/fine_text.h" /* the fine level's lines (md_fine) */
#include "model/verdict.h"
#include "rules/explain.h"

#include <stdlib.h>
#include <string.h>

/* Room kept for the closing note when the text is cut. */
#define RESERVE 1024

/* Appends s as one line of Markdown text, at most max_chars characters (then "…"); runs
 * of white space (newlines, indentation) become one space, none at the ends. */
static void md_text(struct textbuf *b, const char *s, size_t max_chars)
{
	char out[8192];
	size_t o = 0, chars = 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	uint32_t cp;
	bool space = false;

	while ((cp = report_text_next(&p)) != 0) {
		if (o + 16 > sizeof(out))
			break;
		if (cp == ' ' || cp == '\n' || cp == '\r' || cp == '\t') {
			space = o > 0;
			continue;
		}
		if (space) {
			out[o++] = ' ';
			space = false;
		}
		if (chars == max_chars) {
			o += report_utf8_put(out + o, 0x2026);
			break;
		}
		chars++;
		switch (cp) {
		case '<':
			memcpy(out + o, "&lt;", 4);
			o += 4;
			break;
		case '>':
			memcpy(out + o, "&gt;", 4);
			o += 4;
			break;
		case '&':
			memcpy(out + o, "&amp;", 5);
			o += 5;
			break;
		case '|':
		case '\\':
		case '`':
		case '*':
		case '_':
		case '[':
		case ']':
		case '#':
		case '!':
		case '~':
		case ':':
		case '$':
			/* what starts markup mid-line: tables, code, emphasis, links and images,
			 * strikethrough, autolinks (http:), math; CommonMark lets any ASCII
			 * punctuation be escaped. Our text never starts a line. */
			out[o++] = '\\';
			out[o++] = (char)cp;
			break;
		default: o += report_utf8_put(out + o, cp); break;
		}
	}
	textbuf_add(b, out, o);
}

static const char *verdict_cell(enum verdict v)
{
	switch (v) {
	case VERDICT_PASS: return "\xE2\x9C\x85 pass";             /* ✅ */
	case VERDICT_FAIL: return "\xE2\x9D\x8C **FAIL**";         /* ❌ */
	case VERDICT_SKIP: return "\xE2\x8F\xAD\xEF\xB8\x8F skip"; /* ⏭️ */
	}
	return "?";
}

/* A row of the memory table, as its rule says (model/finding.h). */
static bool is_category(const struct finding *f)
{
	return f->show & SHOW_CATEGORY;
}

static void md_category_table(struct textbuf *b, const struct findings *fs)
{
	bool any = false, adjusted = false;
	for (size_t i = 0; i < fs->count; i++) {
		const struct finding *f = &fs->items[i];
		if (!is_category(f))
			continue;
		if (!any)
			textbuf_printf(
			        b, "| category | before | after | delta | %% | limit | verdict |\n"
			           "| :-- | --: | --: | --: | --: | :-- | :-- |\n");
		any = true;
		char bef[32] = "-", aft[32] = "-", del[40] = "-", d[32], pct[32] = "-", fl[32],
		     lim[64];
		if (f->verdict != VERDICT_SKIP) {
			finding_figure_format(bef, sizeof(bef), f, f->before);
			finding_figure_format(aft, sizeof(aft), f, f->after);
			finding_figure_format(d, sizeof(d), f, f->delta);
			bool adj = f->delta != finding_raw_delta(f);
			adjusted = adjusted || adj;
			snprintf(del, sizeof(del), "%s%s%s", f->delta > 0 ? "+" : "", d,
			         adj ? "\\*" : "");
			report_pct_format(pct, sizeof(pct), f->before, f->delta);
		}
		finding_figure_format(fl, sizeof(fl), f, f->floor);
		if (f->max_pct >= 0)
			snprintf(lim, sizeof(lim), "+%g %%, floor %s", f->max_pct, fl);
		else
			snprintf(lim, sizeof(lim), "floor %s", fl);
		textbuf_add(b, "| ", 2);
		md_text(b, f->subject, 40);
		textbuf_printf(b, " | %s | %s | %s | %s | %s | %s |\n", bef, aft, del, pct, lim,
		               verdict_cell(f->verdict));
	}
	if (!any)
		textbuf_printf(b, "No memory categories were judged.\n");
	else if (adjusted)
		textbuf_printf(b, "\n\\* judged: what grew (after - before) less what the "
		                  "memory model explains (code and literals, free heap space, "
		                  "rows of their own, structures failing on their own)\n");
}

/* One row per rule whose findings are not rows of the memory table, in order of first
 * appearance. */
static void md_rule_table(struct textbuf *b, const struct findings *fs)
{
	bool any = false;
	for (size_t i = 0; i < fs->count && !b->full; i++) {
		const struct finding *f = &fs->items[i];
		if (is_category(f))
			continue;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !is_category(&fs->items[k]) && finding_same_rule(&fs->items[k], f);
		if (seen)
			continue;
		size_t total = 0, failed = 0, skipped = 0;
		for (size_t j = i; j < fs->count; j++) {
			const struct finding *g = &fs->items[j];
			if (is_category(g) || !finding_same_rule(g, f))
				continue;
			total++;
			failed += g->verdict == VERDICT_FAIL;
			skipped += g->verdict == VERDICT_SKIP;
		}
		if (!any)
			textbuf_printf(b, "\n| rule | checks | failed | skipped | verdict |\n"
			                  "| :-- | --: | --: | --: | :-- |\n");
		any = true;
		textbuf_add(b, "| ", 2);
		md_text(b, finding_rule_name(f), 40);
		textbuf_printf(b, " | %zu | %zu | %zu | %s |\n", total, failed, skipped,
		               verdict_cell(failed             ? VERDICT_FAIL
		                            : skipped == total ? VERDICT_SKIP
		                                               : VERDICT_PASS));
	}
}

/* Whether the line [p, p + n) is among the first nseen lines seen already. */
static bool line_seen(const char *const *seen, const size_t *seen_len, size_t nseen, const char *p,
                      size_t n)
{
	for (size_t k = 0; k < nseen; k++)
		if (seen_len[k] == n && memcmp(seen[k], p, n) == 0)
			return true;
	return false;
}

/* Every failing finding's message and the command that explains its rule, then its detail lines
 * (the likely culprits) as sub-items; a detail line already shown under an earlier finding is not
 * repeated. */
static void md_culprits(struct textbuf *b, const struct findings *fs)
{
	size_t failed = findings_failed(fs), shown = 0, nseen = 0;
	const char *seen[MARKDOWN_DETAIL_MAX * 4];
	size_t seen_len[MARKDOWN_DETAIL_MAX * 4];
	if (!failed)
		return;
	textbuf_printf(b, "\n#### Culprits\n\n");
	for (size_t i = 0; i < fs->count && shown < MARKDOWN_LIST_MAX; i++) {
		const struct finding *f = &fs->items[i];
		if (f->verdict != VERDICT_FAIL)
			continue;
		textbuf_add(b, "- **", 4);
		md_text(b, finding_rule_name(f), 40);
		textbuf_add(b, " ", 1);
		md_text(b, f->subject, 80);
		textbuf_add(b, "**: ", 4);
		const struct finding_part *acting[2];
		size_t head = finding_acting_split(f, acting);
		if (f->message) {
			char *m = strndup(f->message, head);
			md_text(b, m ? m : f->message, 600);
			free(m);
		} else {
			textbuf_printf(b, "failed");
		}
		const struct rule_explain *e = rule_explain_for(f->rule, f->subject);
		if (e) /* the command that explains the rule: its usual causes and fixes */
			textbuf_printf(b, " (`%s%s`)", EXPLAIN_HINT, e->rule);
		textbuf_add(b, "\n", 1);
		/* what acts on it, never cut with the sentence */
		for (int k = 0; k < 2; k++)
			if (acting[k]) {
				textbuf_add(b, "  - ", 4);
				md_text(b, acting[k]->text, 1000);
				textbuf_add(b, "\n", 1);
			}
		size_t lines = 0;
		for (const char *p = f->detail; p && *p && lines < MARKDOWN_DETAIL_MAX;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			size_t lead = strspn(p, " \t");
			if (n > lead && !line_seen(seen, seen_len, nseen, p + lead, n - lead)) {
				char line[1024];
				snprintf(line, sizeof(line), "%.*s", (int)(n - lead), p + lead);
				textbuf_add(b, "  - ", 4);
				md_text(b, line, 300);
				textbuf_add(b, "\n", 1);
				lines++;
				if (nseen < sizeof(seen) / sizeof(seen[0])) {
					seen[nseen] = p + lead;
					seen_len[nseen++] = n - lead;
				}
			}
			p += n + (nl ? 1 : 0);
		}
		shown++;
	}
	if (failed > shown)
		textbuf_printf(b, "- and %zu more\n", failed - shown);
}

static void md_top_growing(struct textbuf *b, const struct test_run *run)
{
	size_t top[REPORT_TOP_GROWING];
	bool tests;
	size_t n = report_top_growing(run, top, REPORT_TOP_GROWING, &tests);
	if (!n)
		return;
	textbuf_printf(b,
	               "\n#### Top growing %s (by total)\n\n| # | %s | total | processes | "
	               "binary | ets | processes born | ETS tables |\n| --: | :-- | --: | --: | "
	               "--: | --: | --: | --: |\n",
	               tests ? "tests" : "test modules", tests ? "test" : "module");
	for (size_t i = 0; i < n; i++) {
		char label[600], v[4][32];
		const struct mem_delta *d =
		        report_growing_entry(label, sizeof(label), run, top[i], tests);
		static const int cats[4] = {MEM_TOTAL, MEM_PROCESSES, MEM_BINARY, MEM_ETS};
		for (int k = 0; k < 4; k++) {
			char x[32];
			model_bytes_format(x, sizeof(x), d->mem[cats[k]]);
			snprintf(v[k], sizeof(v[k]), "%s%s", d->mem[cats[k]] > 0 ? "+" : "", x);
		}
		textbuf_printf(b, "| %zu | ", i + 1);
		md_text(b, label, 200);
		textbuf_printf(b, " | %s | %s | %s | %s | %+lld | %+lld |\n", v[0], v[1], v[2],
		               v[3], (long long)d->processes, (long long)d->ets_tables);
	}
}

static void md_tests(struct textbuf *b, const struct test_run *run, const char *root)
{
	struct test_counts c = test_run_count(run);
	size_t bad = c.failed + c.invalid, shown = 0;

	textbuf_printf(b, "\n#### Tests\n\n%zu %s: %zu passed, %zu failed, %zu skipped", c.total,
	               c.total == 1 ? "test" : "tests", c.passed, c.failed, c.skipped);
	if (c.invalid)
		textbuf_printf(b, ", %zu invalid (setup\\_all failed)", c.invalid);
	textbuf_printf(b, "%s\n",
	               run->finished ? ""
	                             : " (ExUnit did not report the end of the "
	                               "suite: the results are partial)");
	if (!bad)
		return;
	textbuf_printf(b, "\n| failed test | where | message |\n| :-- | :-- | :-- |\n");
	for (size_t i = 0; i < run->count && shown < MARKDOWN_LIST_MAX; i++) {
		const struct test_result *t = &run->tests[i];
		if (t->state != TEST_FAILED && t->state != TEST_INVALID)
			continue;
		textbuf_add(b, "| ", 2);
		md_text(b, report_module_name(t->module), 80);
		textbuf_add(b, ": ", 2);
		md_text(b, t->name, 160);
		textbuf_add(b, " | ", 3);
		if (t->file) {
			const char *file = report_path_rel(t->file, root);
			size_t fl = strlen(file);
			md_text(b, fl > 80 ? file + fl - 80 : file, 80);
			if (t->line > 0)
				textbuf_printf(b, ":%d", t->line);
		}
		textbuf_add(b, " | ", 3);
		if (t->state == TEST_INVALID)
			textbuf_printf(b, "setup\\_all failed: ");
		md_text(b, t->message, 300);
		textbuf_add(b, " |\n", 3);
		shown++;
	}
	if (bad > shown)
		textbuf_printf(b, "\nand %zu more failed tests\n", bad - shown);
}

/* The checks that passed as context (more evidence for a cause failing above), each with
 * what explains it, after the culprits. */
static void md_context(struct textbuf *b, const struct findings *fs)
{
	size_t n = 0;
	for (size_t i = 0; i < fs->count; i++)
		n += fs->items[i].verdict == VERDICT_PASS && fs->items[i].explained_by;
	if (!n)
		return;
	textbuf_printf(b, "\n#### Context (the same growth, judged by the failure above)\n\n");
	for (size_t i = 0, shown = 0; i < fs->count && shown < MARKDOWN_LIST_MAX; i++) {
		const struct finding *f = &fs->items[i];
		if (f->verdict != VERDICT_PASS || !f->explained_by)
			continue;
		textbuf_add(b, "- ", 2);
		md_text(b, finding_rule_name(f), 40);
		textbuf_add(b, " ", 1);
		md_text(b, f->subject, 80);
		textbuf_printf(b, ": explained by ");
		md_text(b, f->explained_by, 300);
		textbuf_add(b, "\n", 1);
		shown++;
	}
}

/* Warnings: each warned finding's message, after the culprits. */
static void md_warnings(struct textbuf *b, const struct findings *fs)
{
	size_t n = 0;
	for (size_t i = 0; i < fs->count; i++)
		n += fs->items[i].warned;
	if (!n)
		return;
	textbuf_printf(b, "\n#### \xE2\x9A\xA0\xEF\xB8\x8F Warnings (severity warn: never "
	                  "failing the gate)\n\n");
	for (size_t i = 0; i < fs->count; i++) {
		if (!fs->items[i].warned)
			continue;
		textbuf_printf(b, "- ");
		md_text(b, fs->items[i].message, 2000);
		textbuf_add(b, "\n", 1);
	}
}

/* RSS against the allocators, the peak, heaps and origins (ci/report/fine_text.h). */
static void md_fine(struct textbuf *b, const struct report_data *d)
{
	char lines[FINE_TEXT_LINES][512];
	size_t n = fine_text_lines(lines, FINE_TEXT_LINES, d->before, d->after);
	if (n)
		textbuf_printf(b, "\n#### Node memory (OS and allocators)\n\n");
	for (size_t i = 0; i < n; i++) {
		textbuf_printf(b, "- ");
		md_text(b, lines[i], 600);
		textbuf_add(b, "\n", 1);
	}
}

/* what grew in each partition's node and in the whole suite (their sum). */
static void md_parts_growth(struct textbuf *b, const struct report_data *d)
{
	static const enum mem_cat cats[] = {MEM_TOTAL, MEM_PROCESSES_USED, MEM_BINARY,
	                                    MEM_ETS,   MEM_ATOM_USED,      MEM_CODE};
	textbuf_printf(b, "\n#### What grew, per partition and in the whole suite\n\n"
	                  "| category |");
	for (size_t i = 0; i < d->nparts; i++) {
		textbuf_add(b, " ", 1);
		md_text(b, d->parts[i].label, 60);
		textbuf_add(b, " |", 2);
	}
	textbuf_printf(b, " whole |\n| :-- |");
	for (size_t i = 0; i <= d->nparts; i++)
		textbuf_printf(b, " --: |");
	textbuf_add(b, "\n", 1);
	for (size_t c = 0; c < sizeof(cats) / sizeof(cats[0]); c++) {
		int64_t sum = 0;
		bool any = false;
		textbuf_printf(b, "| %s |", mem_cat_name(cats[c]));
		for (size_t i = 0; i < d->nparts; i++) {
			const struct snapshot *x = d->parts[i].before, *y = d->parts[i].after;
			char v[32] = "-";
			if (x && y && x->have[cats[c]] && y->have[cats[c]]) {
				int64_t delta = y->mem[cats[c]] - x->mem[cats[c]];
				model_bytes_format(v, sizeof(v), delta);
				textbuf_printf(b, " %s%s |", delta > 0 ? "+" : "", v);
				sum += delta;
				any = true;
			} else {
				textbuf_printf(b, " %s |", v);
			}
		}
		char w[32] = "-";
		if (any)
			model_bytes_format(w, sizeof(w), sum);
		textbuf_printf(b, " %s%s |\n", any && sum > 0 ? "+" : "", w);
	}
	textbuf_printf(b, "\nEach partition ran in a node of its own: a finding is that "
	                  "partition's; the whole is their sum.\n");
}

int markdown_summary_format(struct textbuf *b, const struct report_data *d)
{
	enum gate_verdict v = report_verdict(d);
	char why[256];

	b->limit = MARKDOWN_SUMMARY_MAX - RESERVE;
	report_why(why, sizeof(why), d);
	textbuf_printf(b, "### %s gate: %s%s%s%s\n\n",
	               v == GATE_PASSED ? "\xE2\x9C\x85" : "\xE2\x9D\x8C", model_verdict_name(v),
	               why[0] ? " (" : "", why, why[0] ? ")" : "");
	if (d->project) {
		textbuf_printf(b, "Project ");
		md_text(b, d->project, 120);
	}
	if (d->node) {
		textbuf_printf(b, "%snode ", d->project ? ", " : "");
		md_text(b, d->node, 120);
	}
	if (d->gate_version) {
		textbuf_printf(b, "%sgate ", d->project || d->node ? ", " : "");
		md_text(b, d->gate_version, 40);
	}
	if (d->project || d->node || d->gate_version)
		textbuf_add(b, "\n", 1);
	if (d->error) {
		textbuf_printf(b, "\n**gate could not run:** ");
		md_text(b, d->error, 2000);
		textbuf_add(b, "\n", 1);
	}
	if (d->parts && d->nparts)
		md_parts_growth(b, d);
	if (d->findings && d->findings->count) {
		textbuf_printf(b, "\n#### Memory (erlang:memory after GC, before and after the "
		                  "suite)\n\n");
		md_category_table(b, d->findings);
		md_rule_table(b, d->findings);
		md_culprits(b, d->findings);
		md_context(b, d->findings);
		md_warnings(b, d->findings);
	}
	md_fine(b, d);
	if (d->baseline_where) {
		textbuf_printf(b, "\nBaseline: ");
		md_text(b, d->baseline_where, 300);
		textbuf_add(b, "\n", 1);
	}
	if (d->tests)
		md_top_growing(b, d->tests);
	if (d->tests)
		md_tests(b, d->tests, d->root);
	if (d->junit_path) {
		textbuf_printf(b, "\nJUnit: ");
		md_text(b, d->junit_path, 300);
		textbuf_add(b, "\n", 1);
	}
	if (b->oom) {
		textbuf_free(b);
		return -1;
	}
	if (b->full) {
		b->limit = MARKDOWN_SUMMARY_MAX;
		b->full = false;
		textbuf_printf(b,
		               "\n\n_The summary was cut at %d kB; the JUnit report has every "
		               "finding and test._\n",
		               (MARKDOWN_SUMMARY_MAX - RESERVE) / 1024);
	}
	if (b->oom) {
		textbuf_free(b);
		return -1;
	}
	return 0;
}

int markdown_summary_write(FILE *f, const struct report_data *d)
{
	struct textbuf b = {0};
	if (markdown_summary_format(&b, d) < 0)
		return -1;
	size_t n = b.len ? fwrite(b.s, 1, b.len, f) : 0;
	int rc = n == b.len ? 0 : -1;
	textbuf_free(&b);
	return rc;
}
