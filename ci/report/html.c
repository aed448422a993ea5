/* ci/report/html.c: the self-contained HTML report. */
#include "ci/report/chart.h"
#include "ci/report/fine_text.h" /* the fine level's lines (html_fine) */
#include "ci/report/html.h"

#include "model/verdict.h"
#include "rules/drilldown.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char css[] =
        "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;"
        "max-width:64em;padding:0 1em;color:#1f2328;background:#fff}"
        "h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;"
        "border-bottom:1px solid #d0d7de;padding-bottom:.2em}"
        ".passed{color:#1a7f37}.failed{color:#cf222e}.error{color:#9a6700}.skip{color:#9a6700}"
        ".meta{color:#59636e}table{border-collapse:collapse;width:100%}"
        "th,td{text-align:left;padding:.25em .5em;border-bottom:1px solid #eaeef2;"
        "vertical-align:top}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;"
        "white-space:nowrap}pre{white-space:pre-wrap;word-break:break-word;margin:0;"
        "font-size:12px;background:#f6f8fa;padding:.4em}"
        "svg text{font:12px system-ui,sans-serif;fill:#1f2328}"
        ".bar-before{fill:#afb8c1}.bar-after{fill:#0969da}.bar-after.fail{fill:#cf222e}"
        ".line{fill:none;stroke:#0969da;stroke-width:2}.point{fill:#0969da}"
        ".current{fill:#cf222e}.axis{stroke:#8c959f;stroke-width:1}"
        ".legend rect{stroke:none}summary{cursor:pointer;margin:.5em "
        "0}pre.detail{background:none;padding:.2em 0 0;color:#59636e}\n";

static const char *html_escape(uint32_t cp, void *arg)
{
	(void)arg;
	switch (cp) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	case '\r': return ""; /* '\n' ends the line */
	}
	return NULL;
}

/* Writes s escaped for HTML text and attribute values, at most max_chars characters. */
static void h(FILE *out, const char *s, size_t max_chars)
{
	report_text_write(out, s, max_chars, html_escape, NULL);
}

static void bytes(FILE *out, int64_t n)
{
	char b[32];
	model_bytes_format(b, sizeof(b), n);
	fputs(b, out);
}

/* One figure of f, in its unit (bytes, or a count). */
static void figure(FILE *out, const struct finding *f, int64_t n)
{
	char b[32];
	finding_figure_format(b, sizeof(b), f, n);
	fputs(b, out);
}

static const char *verdict_class(enum verdict v)
{
	return v == VERDICT_FAIL ? "failed" : v == VERDICT_SKIP ? "skip" : "passed";
}

static void html_head(FILE *out, const struct report_data *d, enum gate_verdict v)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
	      "<title>gate: ",
	      out);
	fputs(model_verdict_name(v), out);
	if (d->project) {
		fputs(" \xE2\x80\x94 ", out);
		h(out, d->project, 120);
	}
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", css);
}

static void html_header(FILE *out, const struct report_data *d, enum gate_verdict v)
{
	char why[256];
	report_why(why, sizeof(why), d);
	fprintf(out, "<header>\n<h1 id=\"verdict\" class=\"%s\">gate: %s</h1>\n",
	        v == GATE_PASSED   ? "passed"
	        : v == GATE_FAILED ? "failed"
	                           : "error",
	        model_verdict_name(v));
	if (why[0])
		fprintf(out, "<p>%s</p>\n", why);
	fputs("<p class=\"meta\">", out);
	const char *sep = "";
	if (d->project) {
		fputs("project <strong>", out);
		h(out, d->project, 120);
		fputs("</strong>", out);
		sep = " \xC2\xB7 ";
	}
	if (d->node) {
		fprintf(out, "%snode ", sep);
		h(out, d->node, 120);
		sep = " \xC2\xB7 ";
	}
	if (d->started > 0) {
		time_t t = (time_t)d->started;
		struct tm tm;
		char when[64];
		if (gmtime_r(&t, &tm) &&
		    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm)) {
			fprintf(out, "%sstarted %s", sep, when);
			sep = " \xC2\xB7 ";
		}
	}
	if (d->gate_version) {
		fprintf(out, "%sgate ", sep);
		h(out, d->gate_version, 40);
	}
	fputs("</p>\n</header>\n", out);
	if (d->error) {
		fputs("<section id=\"error\">\n<h2 class=\"error\">gate could not run</h2>\n<pre>",
		      out);
		h(out, d->error, HTML_MESSAGE_MAX);
		fputs("</pre>\n</section>\n", out);
	}
}

/* The finding of the memory table's category name (model/finding.h's SHOW_CATEGORY), or NULL. */
static const struct finding *growth_of(const struct findings *fs, const char *name)
{
	for (size_t i = 0; fs && i < fs->count; i++) {
		const struct finding *f = &fs->items[i];
		if ((f->show & SHOW_CATEGORY) && f->subject && strcmp(f->subject, name) == 0)
			return f;
	}
	return NULL;
}

/* One row per category: the before and after bars, each pair scaled to its larger value. */
/* What grew: the structures that grew most, at the top, before the bars. */
static void html_what_grew(FILE *out, const struct snapshot *b, const struct snapshot *a)
{
	struct drill_item *items = malloc(HTML_TOP_MAX * sizeof(*items));
	size_t n = items ? drilldown_list(items, HTML_TOP_MAX, b, a) : 0;
	if (n) {
		fputs("<section id=\"what-grew\">\n<h2>What grew</h2>\n<table>\n"
		      "<thead><tr><th>kind</th><th>structure</th><th class=\"n\">bytes</th></tr>"
		      "</thead>\n<tbody>\n",
		      out);
		for (size_t i = 0; i < n; i++) {
			fputs("<tr class=\"grew\"><td>", out);
			h(out, drill_kind_name(items[i].kind), 40);
			fputs("</td><td>", out);
			h(out, items[i].text, 400);
			fputs("</td><td class=\"n\">", out);
			bytes(out, items[i].bytes);
			fputs("</td></tr>\n", out);
		}
		fputs("</tbody>\n</table>\n</section>\n", out);
	}
	free(items);
}

static void html_categories(FILE *out, const struct report_data *d)
{
	const struct snapshot *b = d->before, *a = d->after;
	int rows = 0;
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		rows += b->have[c] || a->have[c];
	if (!rows)
		return;
	const int row_h = 36, label_w = 130, bar_w = 320, width = 720;
	fprintf(out,
	        "<section id=\"categories\">\n<h2>Memory by category (erlang:memory after "
	        "GC)</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"before and after bars per "
	        "category\">\n",
	        width, rows * row_h + 24, width, rows * row_h + 24);
	fputs("<g class=\"legend\"><rect class=\"bar-before\" x=\"130\" y=\"2\" width=\"12\" "
	      "height=\"10\"/><text x=\"146\" y=\"11\">before</text><rect class=\"bar-after\" "
	      "x=\"200\" y=\"2\" width=\"12\" height=\"10\"/><text x=\"216\" y=\"11\">after</text>"
	      "</g>\n",
	      out);
	int y = 20;
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		if (!b->have[c] && !a->have[c])
			continue;
		const char *name = mem_cat_name((enum mem_cat)c);
		int64_t bv = b->have[c] ? b->mem[c] : 0, av = a->have[c] ? a->mem[c] : 0;
		int64_t mx = bv > av ? bv : av;
		double bw = mx > 0 ? (double)bar_w * (double)bv / (double)mx : 0;
		double aw = mx > 0 ? (double)bar_w * (double)av / (double)mx : 0;
		const struct finding *g = growth_of(d->findings, name);
		bool fail = g && g->verdict == VERDICT_FAIL;
		char pct[32];
		report_pct_format(pct, sizeof(pct), bv, av - bv);
		if (g) /* one source of numbers: the rule's judged growth, as its row says */
			report_pct_format(pct, sizeof(pct), g->before, g->delta);
		fprintf(out,
		        "<g class=\"category\" data-category=\"%s\"><text x=\"0\" "
		        "y=\"%d\">%s</text>",
		        name, y + 14, name);
		fprintf(out,
		        "<rect class=\"bar-before\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
		        "height=\"12\"><title>before: ",
		        label_w, y + 2, bw);
		bytes(out, bv);
		fprintf(out,
		        "</title></rect><rect class=\"bar-after%s\" x=\"%d\" y=\"%d\" "
		        "width=\"%.1f\" height=\"12\"><title>after: ",
		        fail ? " fail" : "", label_w, y + 16, aw);
		bytes(out, av);
		fprintf(out, "</title></rect><text x=\"%d\" y=\"%d\">", label_w + bar_w + 10,
		        y + 14);
		bytes(out, bv);
		fputs(" \xE2\x86\x92 ", out);
		bytes(out, av);
		fprintf(out, " (%s%s)%s</text></g>\n", pct,
		        g && finding_adjusted(g) ? " judged" : "", fail ? " FAIL" : "");
		y += row_h;
	}
	fputs("</svg>\n</section>\n", out);
}

static void rules_table_head(FILE *out)
{
	fputs("<table>\n<thead><tr><th>rule</th><th>subject</th><th>verdict</th><th class=\"n\">"
	      "before</th><th class=\"n\">after</th><th>message</th></tr></thead>\n<tbody>\n",
	      out);
}

/* ---- a reviewer's attention ---- */

/* Whether the block [p, p+n) (a heading line and its indented lines) is in the detail of a
 * finding before i (shown above it). */
static bool block_seen(const struct findings *fs, size_t i, const char *p, size_t n)
{
	for (size_t k = 0; k < i; k++) {
		for (const char *q = fs->items[k].detail; q && *q;
		     q = strchr(q, '\n'), q = q ? q + 1 : NULL)
			/* the same lines, and the block ends there too (no indented line follows)
			 */
			if (strncmp(q, p, n) == 0 && q[n] != ' ')
				return true;
	}
	return false;
}

/* A finding's culprit lists, each list (a heading line and its indented lines) once: a list
 * an earlier row printed is not repeated (one leak's lists used to repeat under every row
 * it touched), and a line says how many were left out. */
static void html_detail_once(FILE *out, const struct findings *fs, size_t i)
{
	const char *d = fs->items[i].detail;
	size_t dropped = 0;
	bool open = false;
	if (!d)
		return;
	for (const char *p = d; *p;) {
		/* the block: this line and the indented lines after it */
		const char *e = strchr(p, '\n');
		e = e ? e + 1 : p + strlen(p);
		while (*e == ' ')
			if (!(e = strchr(e, '\n')) || !*++e)
				break;
		if (!e)
			e = p + strlen(p);
		size_t n = (size_t)(e - p);
		if (block_seen(fs, i, p, n)) {
			dropped++;
		} else {
			char *blk = strndup(p, n);
			if (!open)
				fputs("<pre class=\"detail\">", out);
			open = true;
			h(out, blk ? blk : "", HTML_MESSAGE_MAX);
			free(blk);
		}
		p = e;
	}
	if (open)
		fputs("</pre>", out);
	if (dropped)
		fprintf(out, "<p class=\"detail\">and %zu culprit list%s shown above</p>", dropped,
		        dropped == 1 ? "" : "s");
}

/* The headline under the verdict: what grew and who grew it (each failing or warned
 * finding's first line, which names the structure, and the culprit test's file and line),
 * and the failed tests with theirs, so that a reviewer reads the cause before any chart. */
static void html_headline(FILE *out, const struct report_data *d)
{
	size_t nf = 0, nt = 0;
	for (size_t i = 0; d->findings && i < d->findings->count; i++)
		nf += d->findings->items[i].verdict == VERDICT_FAIL || d->findings->items[i].warned;
	for (size_t i = 0; d->tests && i < d->tests->count; i++)
		nt += d->tests->tests[i].state == TEST_FAILED ||
		      d->tests->tests[i].state == TEST_INVALID;
	if (!nf && !nt)
		return;
	fputs("<section id=\"headline\">\n", out);
	if (nf) {
		size_t shown = 0;
		fputs("<h2>What grew, who grew it</h2>\n<ol class=\"headline\">\n", out);
		for (size_t i = 0; i < d->findings->count && shown < HTML_HEADLINE_MAX; i++) {
			const struct finding *f = &d->findings->items[i];
			if (f->verdict != VERDICT_FAIL && !f->warned)
				continue;
			fprintf(out, "<li class=\"%s\"><strong>", f->warned ? "warn" : "fail");
			h(out, finding_rule_name(f), 60);
			fputs(" ", out);
			h(out, f->subject, 200);
			fputs("</strong>: ", out);
			h(out, f->message, HTML_MESSAGE_MAX);
			if (f->file) {
				fputs(" <span class=\"where\">at ", out);
				h(out, report_path_rel(f->file, d->root), 400);
				if (f->line > 0)
					fprintf(out, ":%d", f->line);
				fputs("</span>", out);
			}
			fputs("</li>\n", out);
			shown++;
		}
		fputs("</ol>\n", out);
		if (nf > shown)
			fprintf(out, "<p>and %zu more below</p>\n", nf - shown);
	}
	if (nt) {
		size_t shown = 0;
		fprintf(out, "<h2>Failed tests (%zu)</h2>\n<ul class=\"failed-tests\">\n", nt);
		for (size_t i = 0; i < d->tests->count && shown < HTML_HEADLINE_MAX; i++) {
			const struct test_result *t = &d->tests->tests[i];
			if (t->state != TEST_FAILED && t->state != TEST_INVALID)
				continue;
			fputs("<li>", out);
			h(out, report_module_name(t->module), 200);
			fputs(": ", out);
			h(out, t->name, 400);
			fputs(" <span class=\"where\">", out);
			h(out, report_path_rel(t->file, d->root), 400);
			if (t->line > 0)
				fprintf(out, ":%d", t->line);
			fputs("</span>: ", out);
			h(out, t->reason && *t->reason ? t->reason : "failed", 300);
			fputs("</li>\n", out);
			shown++;
		}
		fputs("</ul>\n", out);
		if (nt > shown)
			fprintf(out, "<p>and %zu more in Tests below</p>\n", nt - shown);
	}
	fputs("</section>\n", out);
}

/* The failing findings in a table, the others folded away under <details>. */
static void html_rules(FILE *out, const struct findings *fs)
{
	size_t shown = 0, failed = findings_failed(fs);
	fputs("<section id=\"rules\">\n<h2>Rule verdicts</h2>\n", out);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0 && failed)
			rules_table_head(out);
		if (pass == 0 && !failed)
			fputs("<p class=\"passed\">Every memory rule passed.</p>\n", out);
		if (pass == 1 && fs->count > failed) {
			fprintf(out,
			        "<details%s><summary>%zu passing or skipped checks</summary>\n",
			        failed ? "" : " open=\"open\"", fs->count - failed);
			rules_table_head(out);
		}
		if ((pass == 0 && !failed) || (pass == 1 && fs->count == failed))
			continue;
		for (size_t i = 0; i < fs->count && shown < HTML_ROWS_MAX; i++) {
			const struct finding *f = &fs->items[i];
			if ((f->verdict == VERDICT_FAIL) != (pass == 0))
				continue;
			fprintf(out, "<tr class=\"finding finding-%s\"><td>",
			        verdict_name(f->verdict));
			h(out, finding_rule_name(f), 60);
			fputs("</td><td>", out);
			h(out, f->subject, 200);
			fprintf(out, "</td><td class=\"%s\">%s</td><td class=\"n\">",
			        verdict_class(f->verdict), verdict_name(f->verdict));
			if (f->verdict != VERDICT_SKIP) {
				figure(out, f, f->before);
				fputs("</td><td class=\"n\">", out);
				figure(out, f, f->after);
			} else {
				fputs("-</td><td class=\"n\">-", out);
			}
			fputs("</td><td>", out);
			h(out, f->message, HTML_MESSAGE_MAX);
			html_detail_once(out, fs, i);
			fputs("</td></tr>\n", out);
			shown++;
		}
		fputs("</tbody>\n</table>\n", out);
		if (pass == 1)
			fputs("</details>\n", out);
	}
	if (fs->count > shown)
		fprintf(out, "<p>and %zu more (the JUnit report has them all)</p>\n",
		        fs->count - shown);
	fputs("</section>\n", out);
}

static int by_memory_desc(const void *x, const void *y)
{
	const struct proc_info *a = *(const struct proc_info *const *)x;
	const struct proc_info *b = *(const struct proc_info *const *)y;
	return a->memory < b->memory ? 1 : a->memory > b->memory ? -1 : 0;
}

static void html_processes(FILE *out, const struct snapshot *a)
{
	if (!a->nprocs)
		return;
	const struct proc_info **top = calloc(a->nprocs, sizeof(*top));
	if (!top)
		return;
	for (size_t i = 0; i < a->nprocs; i++)
		top[i] = &a->procs[i];
	qsort(top, a->nprocs, sizeof(*top), by_memory_desc);
	fputs("<section id=\"processes\">\n<h2>Top processes after the run</h2>\n<table>\n"
	      "<thead><tr><th>process</th><th>pid</th><th class=\"n\">memory</th>"
	      "<th class=\"n\">mailbox</th><th class=\"n\">refc binaries</th><th>current function"
	      "</th></tr></thead>\n<tbody>\n",
	      out);
	for (size_t i = 0; i < a->nprocs && i < HTML_TOP_MAX; i++) {
		const struct proc_info *p = top[i];
		fputs("<tr class=\"process\"><td>", out);
		h(out, p->name ? p->name : p->initial_call ? p->initial_call : "?", 120);
		if (p->born)
			fputs(" <em>(born during the run)</em>", out);
		fputs("</td><td>", out);
		h(out, p->pid, 40);
		fputs("</td><td class=\"n\">", out);
		bytes(out, p->memory);
		fprintf(out, "</td><td class=\"n\">%lld</td><td class=\"n\">",
		        (long long)p->message_queue_len);
		bytes(out, p->bin_bytes);
		fputs("</td><td>", out);
		h(out, p->current_function, 120);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody>\n</table>\n</section>\n", out);
	free(top);
}

/* The same table in the before-snapshot: by id, else the first of that name. */
static const struct ets_info *ets_before(const struct snapshot *b, const struct ets_info *t)
{
	const struct ets_info *by_name = NULL;
	for (size_t i = 0; i < b->nets; i++) {
		const struct ets_info *e = &b->ets[i];
		if (e->id && t->id && strcmp(e->id, t->id) == 0)
			return e;
		if (!by_name && e->name && t->name && strcmp(e->name, t->name) == 0)
			by_name = e;
	}
	return by_name;
}

static int ets_by_memory_desc(const void *x, const void *y)
{
	const struct ets_info *a = *(const struct ets_info *const *)x;
	const struct ets_info *b = *(const struct ets_info *const *)y;
	return a->memory < b->memory ? 1 : a->memory > b->memory ? -1 : 0;
}

static void html_ets(FILE *out, const struct snapshot *b, const struct snapshot *a)
{
	if (!a->nets)
		return;
	const struct ets_info **top = calloc(a->nets, sizeof(*top));
	if (!top)
		return;
	for (size_t i = 0; i < a->nets; i++)
		top[i] = &a->ets[i];
	qsort(top, a->nets, sizeof(*top), ets_by_memory_desc);
	fputs("<section id=\"ets\">\n<h2>Largest ETS tables after the run</h2>\n<table>\n"
	      "<thead><tr><th>table</th><th>owner</th><th class=\"n\">rows</th>"
	      "<th class=\"n\">memory before</th><th class=\"n\">memory after</th></tr></thead>\n"
	      "<tbody>\n",
	      out);
	for (size_t i = 0; i < a->nets && i < HTML_TOP_MAX; i++) {
		const struct ets_info *t = top[i];
		const struct ets_info *was = ets_before(b, t);
		fputs("<tr class=\"ets\"><td>", out);
		h(out, t->name, 120);
		if (t->created)
			fputs(" <em>(created during the run)</em>", out);
		fputs("</td><td>", out);
		h(out, t->owner_name ? t->owner_name : t->owner_pid, 120);
		fprintf(out, "</td><td class=\"n\">%lld</td><td class=\"n\">", (long long)t->size);
		if (was && !t->created)
			bytes(out, was->memory);
		else
			fputs("-", out);
		fputs("</td><td class=\"n\">", out);
		bytes(out, t->memory);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody>\n</table>\n</section>\n", out);
	free(top);
}

static void html_top_growing(FILE *out, const struct test_run *run)
{
	size_t top[REPORT_TOP_GROWING];
	bool tests;
	size_t n = report_top_growing(run, top, REPORT_TOP_GROWING, &tests);
	if (!n)
		return;
	fprintf(out,
	        "<section id=\"top-growing\">\n<h2>Top growing %s (by total)</h2>\n<table>\n"
	        "<thead><tr><th class=\"n\">#</th><th>%s</th><th class=\"n\">total</th>"
	        "<th class=\"n\">processes</th><th class=\"n\">binary</th><th class=\"n\">ets"
	        "</th><th class=\"n\">processes born</th><th class=\"n\">ETS tables</th></tr>"
	        "</thead>\n<tbody>\n",
	        tests ? "tests" : "test modules", tests ? "test" : "module");
	for (size_t i = 0; i < n; i++) {
		char label[600];
		const struct mem_delta *d =
		        report_growing_entry(label, sizeof(label), run, top[i], tests);
		static const int cats[4] = {MEM_TOTAL, MEM_PROCESSES, MEM_BINARY, MEM_ETS};
		fprintf(out, "<tr class=\"growing\"><td class=\"n\">%zu</td><td>", i + 1);
		h(out, label, 300);
		fputs("</td>", out);
		for (int k = 0; k < 4; k++) {
			fprintf(out, "<td class=\"n\">%s", d->mem[cats[k]] > 0 ? "+" : "");
			bytes(out, d->mem[cats[k]]);
			fputs("</td>", out);
		}
		fprintf(out, "<td class=\"n\">%+lld</td><td class=\"n\">%+lld</td></tr>\n",
		        (long long)d->processes, (long long)d->ets_tables);
	}
	fputs("</tbody>\n</table>\n</section>\n", out);
}

static void date_of(char *buf, size_t len, int64_t ts)
{
	time_t t = (time_t)ts;
	struct tm tm;
	if (ts <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, len, "?");
}

/* The total of every noted run, oldest first, as a line with one point each, and this run's
 * after-snapshot beside them. */
static void html_trend(FILE *out, const struct report_data *d)
{
	const int W = 700, H = 260, left = 80, right = 100, top = 20, bottom = 40;
	size_t n = d->nhistory;
	bool cur = d->after && d->after->have[MEM_TOTAL];

	fputs("<section id=\"trend\">\n<h2>Baseline trend (total memory of the noted runs)</h2>\n",
	      out);
	if (d->baseline_where) {
		fputs("<p class=\"meta\">baseline: ", out);
		h(out, d->baseline_where, 300);
		fputs("</p>\n", out);
	}
	if (n == 0) {
		fputs("<p id=\"trend-empty\">No history yet: each <code>gate run --update-baseline "
		      "--commit</code> on the main branch adds a noted run under refs/notes/gate "
		      "(fetch it with <code>git fetch origin "
		      "refs/notes/gate:refs/notes/gate</code>)."
		      "</p>\n</section>\n",
		      out);
		return;
	}
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		int64_t v = d->history[i].mem[MEM_TOTAL];
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (cur) {
		int64_t v = d->after->mem[MEM_TOTAL];
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (hi == lo) {
		hi += hi / 20 + 1;
		lo -= lo / 20 + 1;
	}
	double pw = W - left - right, ph = H - top - bottom;
	/* x: noted runs evenly spaced, the current run one step after the last */
	double step = pw / (double)(n + (cur ? 1 : 0) > 1 ? n + (cur ? 1 : 0) - 1 : 1);
#define X(i) ((double)left + (n + (cur ? 1 : 0) > 1 ? step * (double)(i) : pw / 2))
#define Y(v) ((double)top + ph * (1.0 - (double)((v)-lo) / (double)(hi - lo)))
	fprintf(out,
	        "<svg id=\"trend-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	        "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"total memory "
	        "of %zu noted runs\" data-points=\"%zu\">\n",
	        W, H, W, H, n, n);
	fprintf(out,
	        "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
	        "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
	        left, top, left, H - bottom, left, H - bottom, W - right / 2, H - bottom);
	fprintf(out, "<text x=\"4\" y=\"%d\">", top + 4);
	bytes(out, hi);
	fprintf(out, "</text><text x=\"4\" y=\"%d\">", H - bottom);
	bytes(out, lo);
	fputs("</text>\n", out);
	if (n > 1) {
		fputs("<polyline class=\"line\" points=\"", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s%.1f,%.1f", i ? " " : "", X(i),
			        Y(d->history[i].mem[MEM_TOTAL]));
		fputs("\"/>\n", out);
	}
	for (size_t i = 0; i < n; i++) {
		const struct baseline *b = &d->history[i];
		char when[32];
		date_of(when, sizeof(when), b->timestamp);
		fprintf(out, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>",
		        X(i), Y(b->mem[MEM_TOTAL]));
		h(out, b->commit ? b->commit : "?", 12);
		fprintf(out, " %s: total ", when);
		bytes(out, b->mem[MEM_TOTAL]);
		fprintf(out, ", %lld tests</title></circle>\n", (long long)b->test_count);
	}
	char first[32], last[32];
	date_of(first, sizeof(first), d->history[0].timestamp);
	date_of(last, sizeof(last), d->history[n - 1].timestamp);
	fprintf(out, "<text x=\"%d\" y=\"%d\">%s</text>", left, H - bottom + 18, first);
	if (n > 1)
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\">%s</text>", X(n - 1),
		        H - bottom + 34, last);
	fputs("\n", out);
	if (cur) {
		double cx = X(n), cy = Y(d->after->mem[MEM_TOTAL]);
		fprintf(out,
		        "<path class=\"current\" d=\"M%.1f %.1fl6 6l-6 6l-6 -6z\"><title>this "
		        "run: total ",
		        cx, cy - 6);
		bytes(out, d->after->mem[MEM_TOTAL]);
		fprintf(out,
		        "</title></path><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">this "
		        "run</text>\n",
		        cx, H - bottom + 18);
	}
#undef X
#undef Y
	fputs("</svg>\n", out);
	fprintf(out, "<p class=\"meta\">%zu noted run%s, oldest first%s.</p>\n</section>\n", n,
	        n == 1 ? "" : "s", cur ? "; the diamond is this run's after-snapshot" : "");
}

static void html_tests(FILE *out, const struct test_run *run, const char *root)
{
	struct test_counts c = test_run_count(run);
	size_t bad = c.failed + c.invalid, shown = 0;
	fprintf(out,
	        "<section id=\"tests\">\n<h2>Tests</h2>\n<p>%zu %s: %zu passed, "
	        "<span class=\"%s\">%zu failed</span>, %zu skipped%s%s</p>\n",
	        c.total, c.total == 1 ? "test" : "tests", c.passed, bad ? "failed" : "passed",
	        c.failed, c.skipped, c.invalid ? ", setup_all failed for some" : "",
	        run->finished ? "" : " (ExUnit did not report the end of the suite: partial)");
	if (bad) {
		fputs("<table>\n<thead><tr><th>failed test</th><th>where</th><th>message</th></tr>"
		      "</thead>\n<tbody>\n",
		      out);
		for (size_t i = 0; i < run->count && shown < HTML_ROWS_MAX; i++) {
			const struct test_result *t = &run->tests[i];
			if (t->state != TEST_FAILED && t->state != TEST_INVALID)
				continue;
			fputs("<tr class=\"failed-test\"><td>", out);
			h(out, report_module_name(t->module), 200);
			fputs(": ", out);
			h(out, t->name, 400);
			fputs("</td><td>", out);
			h(out, report_path_rel(t->file, root), 400);
			if (t->line > 0)
				fprintf(out, ":%d", t->line);
			fputs("</td><td><pre>", out);
			if (t->state == TEST_INVALID)
				fputs("setup_all failed: ", out);
			h(out, t->message, HTML_MESSAGE_MAX);
			fputs("</pre></td></tr>\n", out);
			shown++;
		}
		fputs("</tbody>\n</table>\n", out);
		if (bad > shown)
			fprintf(out, "<p>and %zu more failed tests</p>\n", bad - shown);
	}
	fputs("</section>\n", out);
}

/* RSS against the allocators, the peak, heaps and origins (ci/report/fine_text.h). */
static void html_fine(FILE *out, const struct report_data *d)
{
	char lines[FINE_TEXT_LINES][512];
	size_t n = fine_text_lines(lines, FINE_TEXT_LINES, d->before, d->after);
	if (!n)
		return;
	fputs("<section id=\"fine\">\n<h2>Node memory (OS and allocators)</h2>\n<ul>\n", out);
	for (size_t i = 0; i < n; i++) {
		fputs("<li>", out);
		h(out, lines[i], 600);
		fputs("</li>\n", out);
	}
	fputs("</ul>\n</section>\n", out);
}

int html_report_write(FILE *out, const struct report_data *d)
{
	enum gate_verdict v = report_verdict(d);

	html_head(out, d, v);
	html_header(out, d, v);
	html_headline(out, d);
	if (d->before && d->after)
		html_what_grew(out, d->before, d->after);
	if (d->before && d->after)
		html_categories(out, d);
	html_fine(out, d);
	if (d->findings && d->findings->count)
		html_rules(out, d->findings);
	if (d->after)
		html_processes(out, d->after);
	if (d->after && d->before)
		html_ets(out, d->before, d->after);
	if (!d->error || d->nhistory)
		html_trend(out, d);
	chart_html_write(out, d); /* --repeat's runs, --sample's series */
	if (d->tests)
		html_top_growing(out, d->tests);
	if (d->tests)
		html_tests(out, d->tests, d->root);
	if (d->junit_path) {
		fputs("<footer class=\"meta\"><p>JUnit report: ", out);
		h(out, d->junit_path, 400);
		fputs("</p></footer>\n", out);
	}
	fputs("</body>\n</html>\n", out);
	return ferror(out) ? -1 : 0;
}
