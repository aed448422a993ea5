/* ci/report/summary.c: the console summary: growth table, failures, test counts, verdict. */
#include "ci/report/summary.h"

#include "ci/report/ansi.h"
#include "ci/report/fine_text.h" /* the fine level's lines (print_fine) */
#include "ci/report/iterations.h"
#include "ci/report/report.h"
#include "model/verdict.h"
#include "rules/attribution.h"
#include "rules/culprits.h"
#include "rules/explain.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 80
#define NAME_MAX_COLS 24 /* widest category cell before it is cut */

#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_BOLD "\033[1m"
#define C_RESET "\033[0m"

/* How the sections below print: colours, the JUnit path, the node named in a heading. */
struct summary_opts {
	bool color;
	const char *junit_path; /* "JUnit: PATH"; NULL: no such line */
	const char *node;       /* in the growth table's heading; may be NULL */
};

/* Copies in into out (size len) so that a terminal shows it as text: ANSI escapes are
 * dropped, control characters (C0, DEL, C1, newlines too) and invalid UTF-8 become '?'.
 * At most max_cols characters are kept; a cut shows as "...". Returns the characters
 * written (the display width, one column per code point). */
static size_t term_safe(char *out, size_t len, const char *in, size_t max_cols)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t o = 0, cols = 0;

	if (len == 0)
		return 0;
	for (size_t i = 0; s[i];) {
		unsigned char c = s[i];
		size_t n = 1;
		if (c == 0x1B && (n = ansi_escape_len(s + i)) > 0) {
			i += n;
			continue;
		}
		/* a well-formed sequence is copied, or shown as one '?' when it is a character
		 * a terminal may act on; a byte that starts none is one '?' */
		n = 1;
		bool ok = c >= 0x20 && c < 0x7F;
		if (c >= 0xC2 && c <= 0xF4) {
			size_t k, len_seq = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
			for (k = 1; k < len_seq && (s[i + k] & 0xC0) == 0x80; k++)
				;
			if (k == len_seq) {
				n = len_seq;
				ok = true;
				/* C1 controls (U+0080..U+009F): some terminals read them as ESC [
				 */
				if (c == 0xC2 && s[i + 1] < 0xA0)
					ok = false;
				/* overlongs, surrogates and values past U+10FFFF */
				if ((c == 0xE0 && s[i + 1] < 0xA0) ||
				    (c == 0xED && s[i + 1] >= 0xA0) ||
				    (c == 0xF0 && s[i + 1] < 0x90) ||
				    (c == 0xF4 && s[i + 1] >= 0x90))
					ok = false;
			}
		}
		if (cols + 1 > max_cols) {
			/* replace the tail with "..." when there is room for it */
			while (cols + 3 > max_cols && o > 0) {
				do
					o--;
				while (o > 0 && ((unsigned char)out[o] & 0xC0) == 0x80);
				cols--;
			}
			for (int k = 0; k < 3 && cols < max_cols && o + 1 < len; k++, cols++)
				out[o++] = '.';
			break;
		}
		size_t need = ok ? n : 1;
		if (o + need + 1 > len)
			break;
		if (ok)
			memcpy(out + o, s + i, n);
		else
			out[o] = '?';
		o += need;
		cols++;
		i += n;
	}
	out[o] = '\0';
	return cols;
}

/* Display width of text we made (ASCII, or UTF-8 that term_safe passed). */
static size_t cols_of(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* grew is after - before, as measured; subtracted is what the rule took out of it before
 * judging (listed with its reasons under the table); judged = grew - subtracted, and % is
 * judged of before */
enum { COL_CAT, COL_BEFORE, COL_AFTER, COL_RAW, COL_SUB, COL_DELTA, COL_PCT, COL_VERDICT, COLS };

static const char *const col_head[COLS] = {
        "category", "before", "after", "grew", "subtracted", "judged", "%", "verdict",
};
static const bool col_right[COLS] = {false, true, true, true, true, true, true, false};

struct row {
	char cell[COLS][NAME_MAX_COLS * 4 + 16];
	enum verdict verdict;
};

static void row_fill(struct row *r, const struct finding *f)
{
	char *name = r->cell[COL_CAT], fl[32];
	size_t name_len = sizeof(r->cell[COL_CAT]);
	int64_t delta = f->delta; /* what the rule judged, e.g. net of code growth */
	bool adjusted = finding_adjusted(f);
	bool known = f->verdict != VERDICT_SKIP;

	if (!(f->show & SHOW_CATEGORY)) {
		char both[256];
		snprintf(both, sizeof(both), "%s:%s", finding_rule_name(f),
		         f->subject ? f->subject : "");
		term_safe(name, name_len, both, NAME_MAX_COLS);
	} else {
		term_safe(name, name_len, f->subject ? f->subject : "?", NAME_MAX_COLS);
	}
	if (known) {
		finding_figure_format(r->cell[COL_BEFORE], sizeof(r->cell[0]), f, f->before);
		finding_figure_format(r->cell[COL_AFTER], sizeof(r->cell[0]), f, f->after);
		char d[32];
		int64_t raw = finding_raw_delta(f);
		finding_figure_format(d, sizeof(d), f, raw);
		snprintf(r->cell[COL_RAW], sizeof(r->cell[0]), "%s%s", raw > 0 ? "+" : "", d);
		if (adjusted) {
			int64_t sub;
			/* figures come from outside: saturate rather than overflow */
			if (__builtin_sub_overflow(raw, delta, &sub))
				sub = raw < delta ? INT64_MIN : INT64_MAX;
			/* subtracted is shown with the sign it has in grew - subtracted */
			finding_figure_format(d, sizeof(d), f, sub);
			if (sub < 0)
				d[0] = '+';
			snprintf(r->cell[COL_SUB], sizeof(r->cell[0]), "%s%s", sub > 0 ? "-" : "",
			         d);
		} else {
			snprintf(r->cell[COL_SUB], sizeof(r->cell[0]), "-");
		}
		finding_figure_format(d, sizeof(d), f, delta);
		snprintf(r->cell[COL_DELTA], sizeof(r->cell[0]), "%s%s", delta > 0 ? "+" : "", d);
		double pct = f->before > 0 ? 100.0 * (double)delta / (double)f->before : 0;
		if (f->before > 0 && pct >= 10000)
			snprintf(r->cell[COL_PCT], sizeof(r->cell[0]), ">+9999 %%");
		else if (f->before > 0)
			snprintf(r->cell[COL_PCT], sizeof(r->cell[0]), "%+.1f %%", pct);
		else
			snprintf(r->cell[COL_PCT], sizeof(r->cell[0]), "%s",
			         delta > 0 ? "new" : "-");
	} else {
		for (int c = COL_BEFORE; c <= COL_PCT; c++)
			snprintf(r->cell[c], sizeof(r->cell[0]), "-");
	}
	(void)fl;
	snprintf(r->cell[COL_VERDICT], sizeof(r->cell[0]), "%s", verdict_name(f->verdict));
	r->verdict = f->verdict;
}

static const char *verdict_color(enum verdict v)
{
	switch (v) {
	case VERDICT_PASS: return C_GREEN;
	case VERDICT_FAIL: return C_RED C_BOLD;
	case VERDICT_SKIP: return C_YELLOW;
	}
	return "";
}

static void print_cell(FILE *out, const char *text, size_t width, bool right, bool last,
                       const char *color)
{
	size_t pad = width > cols_of(text) ? width - cols_of(text) : 0;
	if (right)
		fprintf(out, "%*s", (int)pad, "");
	fprintf(out, "%s%s%s", color ? color : "", text, color ? C_RESET : "");
	if (!right && !last)
		fprintf(out, "%*s", (int)pad, "");
}

static void print_wrapped(FILE *out, const char *lead, const char *text, size_t indent);

/* Under the table, the limits, once per distinct limit: "limit: judged growth above +10 %
 * of before and above 1.0 MB fails (code: +50 %, 8.0 MB)". */
static void print_limits(FILE *out, const struct findings *findings)
{
	size_t common = SIZE_MAX, best = 0, o = 0;
	bool any = false;
	char text[2048] = "";
	/* the limit most rows share is said once; the others by category */
	for (size_t i = 0; i < findings->count; i++) {
		size_t n = 0;
		for (size_t k = 0; k < findings->count; k++)
			n += findings->items[k].max_pct == findings->items[i].max_pct &&
			     findings->items[k].floor == findings->items[i].floor;
		if (n > best) {
			best = n;
			common = i;
		}
	}
	if (common == SIZE_MAX)
		return;
	for (size_t i = 0; i < findings->count && o < sizeof(text); i++) {
		const struct finding *f = &findings->items[i], *c = &findings->items[common];
		char fl[32], pct[48] = "", name[NAME_MAX_COLS * 4 + 16];
		if (i != common && f->max_pct == c->max_pct && f->floor == c->floor)
			continue;
		model_bytes_format(fl, sizeof(fl), f->floor);
		if (i == common) {
			if (f->max_pct >= 0)
				snprintf(pct, sizeof(pct), "+%g %% of before and above ",
				         f->max_pct);
			o += (size_t)snprintf(text + o, sizeof(text) - o,
			                      "judged growth above %s%s fails", pct, fl);
			continue;
		}
		if (f->max_pct >= 0)
			snprintf(pct, sizeof(pct), "+%g %%, ", f->max_pct);
		term_safe(name, sizeof(name), f->subject ? f->subject : "?", NAME_MAX_COLS);
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s: %s%s", any ? ", " : " (",
		                      name, pct, fl);
		any = true;
	}
	if (any && o < sizeof(text))
		snprintf(text + o, sizeof(text) - o, ")");
	print_wrapped(out, "limit: ", text, 7);
}

/* Under the table: what each row subtracted from what it grew, and why (the rule's own
 * words, finding.explained), so that grew - subtracted = judged reads on its face. */
static void print_subtracted(FILE *out, const struct findings *findings)
{
	bool head = false;
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];
		char name[NAME_MAX_COLS * 4 + 16], why[1024];
		bool lits = (f->show & SHOW_WITH_LITERALS) != 0;
		if (f->verdict == VERDICT_SKIP || (!lits && !(finding_adjusted(f) && f->explained)))
			continue;
		if (!head)
			fprintf(out, "judged = grew - subtracted; subtracted, and why:\n");
		head = true;
		term_safe(name, sizeof(name), f->subject ? f->subject : "?", NAME_MAX_COLS);
		if (lits && !(finding_adjusted(f) && f->explained)) {
			char lead[NAME_MAX_COLS * 4 + 32];
			snprintf(lead, sizeof(lead), "  %s: ", name);
			print_wrapped(out, lead,
			              "nothing; its figures include the literals of loaded "
			              "modules (the literal area less persistent_term)",
			              4);
			continue;
		}
		char lead[NAME_MAX_COLS * 4 + 32], text[2048];
		term_safe(why, sizeof(why), f->explained, sizeof(why) / 4);
		/* a row passing as context says what explains it */
		if (f->verdict == VERDICT_PASS && f->explained_by) {
			char by[512];
			term_safe(by, sizeof(by), f->explained_by, sizeof(by) / 4);
			snprintf(text, sizeof(text), "%s; context: explained by %s", why, by);
		} else {
			snprintf(text, sizeof(text), "%s", why);
		}
		if (lits) {
			size_t o = strlen(text);
			snprintf(text + o, sizeof(text) - o,
			         "; its figures include the literals of loaded modules");
		}
		snprintf(lead, sizeof(lead), "  %s: ", name);
		print_wrapped(out, lead, text, 4);
	}
}

static void print_table(FILE *out, const struct findings *findings, bool color)
{
	size_t width[COLS], total = 0, gap[COLS] = {2, 2, 2, 2, 2, 2, 2, 0};
	/* when the table is too wide, gaps close to one space in this order: first between
	 * right-aligned numbers, which stay readable, last where text meets a number */
	static const int squeeze[] = {COL_BEFORE, COL_AFTER, COL_RAW, COL_SUB,
	                              COL_DELTA,  COL_CAT,   COL_PCT};
	struct row *rows = calloc(findings->count, sizeof(*rows));

	if (!rows) {
		/* no table without memory: the messages still say everything */
		fprintf(out, "(summary table left out: out of memory)\n");
		return;
	}
	for (int c = 0; c < COLS; c++)
		width[c] = strlen(col_head[c]);
	for (size_t i = 0; i < findings->count; i++) {
		row_fill(&rows[i], &findings->items[i]);
		for (int c = 0; c < COLS; c++)
			if (cols_of(rows[i].cell[c]) > width[c])
				width[c] = cols_of(rows[i].cell[c]);
	}
	for (int c = 0; c < COLS; c++)
		total += width[c] + gap[c];
	for (size_t k = 0; k < sizeof(squeeze) / sizeof(squeeze[0]) && total > WIDTH; k++) {
		gap[squeeze[k]] = 1;
		total--;
	}

	for (int c = 0; c < COLS; c++) {
		print_cell(out, col_head[c], width[c], col_right[c], c == COLS - 1,
		           color ? C_BOLD : NULL);
		if (c < COLS - 1)
			fprintf(out, "%*s", (int)gap[c], "");
	}
	fputc('\n', out);
	for (size_t i = 0; i < findings->count; i++) {
		for (int c = 0; c < COLS; c++) {
			const char *col = NULL;
			if (color && c == COL_VERDICT)
				col = verdict_color(rows[i].verdict);
			print_cell(out, rows[i].cell[c], width[c], col_right[c], c == COLS - 1,
			           col);
			if (c < COLS - 1)
				fprintf(out, "%*s", (int)gap[c], "");
		}
		fputc('\n', out);
	}
	print_limits(out, findings);
	print_subtracted(out, findings);
	free(rows);
}

/* A failing finding's sentence, cut at 500 columns, but what acts on it (the culprit's file
 * run alone, the command that reproduces it) on lines of their own, never cut away. */
static void print_failing(FILE *out, const struct finding *f, const char *raw)
{
	char head[4096], msg[2048];
	const struct finding_part *own[2];
	size_t n = finding_acting_split(f, own);
	if (f->message)
		snprintf(head, sizeof(head), "%.*s", (int)n, f->message);
	else
		snprintf(head, sizeof(head), "%s", raw);
	term_safe(msg, sizeof(msg), head, 500);
	print_wrapped(out, "  ", msg, 4);
	for (int slot = 0; slot < 2; slot++)
		if (own[slot]) {
			term_safe(msg, sizeof(msg), own[slot]->text, 1000);
			print_wrapped(out, "    ", msg, 6);
		}
}

/* Prints text word-wrapped to WIDTH: the first line after lead, the others indented by
 * indent columns. A word longer than a line gets a line of its own. */
static void print_wrapped(FILE *out, const char *lead, const char *text, size_t indent)
{
	size_t col = cols_of(lead);
	bool line_start = true;

	fputs(lead, out);
	for (const char *p = text; *p;) {
		if (*p == ' ') {
			p++;
			continue;
		}
		const char *e = p;
		size_t wcols = 0;
		for (; *e && *e != ' '; e++)
			wcols += ((unsigned char)*e & 0xC0) != 0x80;
		if (!line_start && col + 1 + wcols > WIDTH) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
			line_start = true;
		}
		if (!line_start) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, (size_t)(e - p), out);
		col += wcols;
		line_start = false;
		p = e;
	}
	fputc('\n', out);
}

/* "rules: ets pass (3), binary FAIL (1 of 2), ..." for every rule whose findings are not rows
 * of the memory table, in order. */
static void print_rule_lines(FILE *out, const struct findings *findings, bool color)
{
	const struct finding *seen[32];
	size_t nseen = 0;
	bool any = false;
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *first = &findings->items[i];
		if (!first->rule || (first->show & SHOW_CATEGORY))
			continue;
		bool dup = false;
		for (size_t k = 0; k < nseen; k++)
			dup = dup || finding_same_rule(seen[k], first);
		if (dup || nseen == sizeof(seen) / sizeof(seen[0]))
			continue;
		seen[nseen++] = first;
		const char *rule = first->rule;
		size_t total = 0, failed = 0, skipped = 0, context = 0;
		const struct finding *ctx = NULL;
		for (size_t j = i; j < findings->count; j++) {
			const struct finding *f = &findings->items[j];
			if ((f->show & SHOW_CATEGORY) || !finding_same_rule(f, first))
				continue;
			total++;
			failed += f->verdict == VERDICT_FAIL;
			skipped += f->verdict == VERDICT_SKIP;
			if (f->verdict == VERDICT_PASS && f->explained_by) {
				context++;
				ctx = ctx ? ctx : f;
			}
		}
		char name[64];
		term_safe(name, sizeof(name), rule, 20);
		fprintf(out, "%s%-16s %s%s%s", any ? "" : "\n", name,
		        color ? (failed             ? C_RED C_BOLD
		                 : skipped == total ? C_YELLOW
		                                    : C_GREEN)
		              : "",
		        failed             ? "FAIL"
		        : skipped == total ? "skip"
		                           : "pass",
		        color ? C_RESET : "");
		if (failed)
			fprintf(out, " (%zu of %zu check%s)", failed, total, total == 1 ? "" : "s");
		else
			fprintf(out, " (%zu check%s%s)", total, total == 1 ? "" : "s",
			        skipped ? ", some skipped" : "");
		if (ctx) { /* more evidence for a cause, said once */
			char by[512];
			term_safe(by, sizeof(by), ctx->explained_by, sizeof(by) / 4);
			fprintf(out, "; %zu as context: explained by %s%s", context, by,
			        context > 1 ? ", ..." : "");
		}
		fputc('\n', out);
		any = true;
	}
}

static void print_memory(FILE *out, const struct findings *findings,
                         const struct summary_opts *opts)
{
	bool color = opts && opts->color;
	char node[256];

	if (opts && opts->node) {
		term_safe(node, sizeof(node), opts->node, 60);
		fprintf(out, "Memory growth (erlang:memory on %s):\n", node);
	} else {
		fprintf(out, "Memory growth (erlang:memory):\n");
	}
	if (!findings || findings->count == 0) {
		fprintf(out, "  no memory rules were applied\n");
		return;
	}
	/* the table is for the rows of the memory table (model/finding.h's SHOW_CATEGORY); the
	 * other rules get one line each, and their failures are spelled out below */
	struct finding *rows = calloc(findings->count, sizeof(*rows));
	struct findings growth = {rows, 0, findings->count};
	for (size_t i = 0; rows && i < findings->count; i++)
		if (findings->items[i].show & SHOW_CATEGORY)
			rows[growth.count++] = findings->items[i]; /* shallow: borrowed strings */
	/* failing findings come first in the list (most specific first); the table keeps
	 * erlang:memory's order of categories, so that it reads the same on every run */
	for (size_t i = 1; rows && i < growth.count; i++) {
		struct finding x = rows[i];
		int cx = mem_cat_from_name(x.subject);
		size_t k = i;
		for (; k > 0 && mem_cat_from_name(rows[k - 1].subject) > cx; k--)
			rows[k] = rows[k - 1];
		rows[k] = x;
	}
	if (growth.count)
		print_table(out, &growth, color);
	free(rows);
	print_rule_lines(out, findings, color);

	size_t failed = findings_failed(findings);
	if (!failed)
		return;
	fprintf(out, "\n%s%s:%s\n", color ? C_RED C_BOLD : "",
	        failed == 1 ? "Failed memory rule" : "Failed memory rules", color ? C_RESET : "");
	/* the culprit lists shared by several rules (born processes, tables left alive, binary
	 * holders) are printed under the first rule that has them, not under every one */
	char *shown[256];
	size_t nshown = 0;
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];
		if (f->verdict != VERDICT_FAIL)
			continue;
		char raw[1024];
		if (!f->message) /* the subject may be a table's name, from the node */
			snprintf(raw, sizeof(raw), "%s %s failed", f->rule ? f->rule : "rule",
			         f->subject ? f->subject : "");
		print_failing(out, f, raw);
		if (f->detail) {
			/* the culprit lists, line by line, indented under the rule */
			const char *p = f->detail;
			while (*p) {
				const char *nl = strchr(p, '\n');
				size_t n = nl ? (size_t)(nl - p) : strlen(p);
				char raw[1024], line[1200];
				snprintf(raw, sizeof(raw), "%.*s",
				         (int)(n < sizeof(raw) ? n : sizeof(raw) - 1), p);
				term_safe(line, sizeof(line), raw, 300);
				p += n + (nl ? 1 : 0);
				bool seen = false;
				for (size_t k = 0; k < nshown && !seen; k++)
					seen = strcmp(shown[k], line) == 0;
				if (seen)
					continue;
				if (nshown < sizeof(shown) / sizeof(shown[0]))
					shown[nshown] = strdup(line),
					nshown += shown[nshown] != NULL;
				fprintf(out, "    %s\n", line);
			}
		}
		const struct rule_explain *e = rule_explain_for(f->rule, f->subject);
		if (e)
			fprintf(out, "    %s%s: its usual causes and fixes\n", EXPLAIN_HINT,
			        e->rule);
	}
	for (size_t k = 0; k < nshown; k++)
		free(shown[k]);
}

/* "Top growing test modules" (or tests, when measured per test): the five that grew total
 * most, with the category deltas. */
static void print_top_growing(FILE *out, const struct test_run *run, bool color)
{
	size_t top[SUMMARY_TOP_GROWING];
	bool tests = run->attribution == ATTRIBUTION_TEST;
	size_t n = attribution_rank(run, MEM_TOTAL, tests, top, SUMMARY_TOP_GROWING);
	char t[32], p[32], b[32], e[32], label[400];

	if (!run->nmodules && !tests)
		return;
	/* per test: how many were read alone (the readings keep to a budget of the run's time) */
	char how[160] = "light readings at each test's edges";
	size_t ran = 0, measured = 0;
	for (size_t i = 0; tests && i < run->count; i++) {
		ran += run->tests[i].state == TEST_PASSED || run->tests[i].state == TEST_FAILED;
		measured += run->tests[i].measured;
	}
	if (measured < ran) {
		char m[32], r[32];
		rules_count_format(m, sizeof(m), (int64_t)measured);
		rules_count_format(r, sizeof(r), (int64_t)ran);
		snprintf(how, sizeof(how),
		         "light readings at each test's edges, %s of %s tests read alone", m, r);
	}
	fprintf(out, "\n%sTop growing %s%s (by total; %s):\n", color ? C_BOLD : "",
	        tests ? "tests" : "test modules", color ? C_RESET : "",
	        tests ? how
	        : run->attribution_sync
	                ? "light snapshots at each module's edges; async modules share what grew "
	                  "while they were busy together"
	                : "approximate: light snapshots as ExUnit's events arrived");
	if (!n) {
		fprintf(out, "  none grew\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char raw[600];
		const struct mem_delta *d =
		        report_growing_entry(raw, sizeof(raw), run, top[i], tests);
		term_safe(label, sizeof(label), raw, 70);
		model_bytes_format(t, sizeof(t), d->mem[MEM_TOTAL]);
		model_bytes_format(p, sizeof(p), d->mem[MEM_PROCESSES]);
		model_bytes_format(b, sizeof(b), d->mem[MEM_BINARY]);
		model_bytes_format(e, sizeof(e), d->mem[MEM_ETS]);
		fprintf(out,
		        "  %zu. %s: total %s%s, processes %s%s, binary %s%s, ets %s%s, "
		        "%+lld procs, %+lld tables\n",
		        i + 1, label, d->mem[MEM_TOTAL] > 0 ? "+" : "", t,
		        d->mem[MEM_PROCESSES] > 0 ? "+" : "", p, d->mem[MEM_BINARY] > 0 ? "+" : "",
		        b, d->mem[MEM_ETS] > 0 ? "+" : "", e, (long long)d->processes,
		        (long long)d->ets_tables);
	}
}

static void print_tests(FILE *out, const struct test_run *run, const struct summary_opts *opts)
{
	bool color = opts && opts->color;
	struct test_counts c = test_run_count(run);
	size_t shown = 0, bad = c.failed + c.invalid;

	fprintf(out, "%zu %s: %zu passed, %s%zu failed%s, %zu skipped", c.total,
	        c.total == 1 ? "test" : "tests", c.passed, color && c.failed ? C_RED C_BOLD : "",
	        c.failed, color && c.failed ? C_RESET : "", c.skipped);
	if (c.invalid)
		fprintf(out, ", %s%zu invalid%s (setup_all failed)", color ? C_RED C_BOLD : "",
		        c.invalid, color ? C_RESET : "");
	fputc('\n', out);
	if (!run->finished)
		fprintf(out,
		        "%sExUnit did not report the end of the suite: the results are "
		        "partial%s\n",
		        color ? C_YELLOW : "", color ? C_RESET : "");

	for (size_t i = 0; i < run->count && shown < SUMMARY_FAILED_MAX; i++) {
		const struct test_result *t = &run->tests[i];
		char mod[168], name[288], file[168], where[200] = "", line[1024];
		if (t->state != TEST_FAILED && t->state != TEST_INVALID)
			continue;
		const char *m = t->module ? t->module : "?";
		if (strncmp(m, "Elixir.", 7) == 0 && m[7])
			m += 7;
		term_safe(mod, sizeof(mod), m, 40);
		term_safe(name, sizeof(name), t->name ? t->name : "?", 70);
		if (t->file) {
			/* the tail of the path says more than its head */
			const char *f = t->file;
			size_t fl = strlen(f);
			if (fl > 40)
				f += fl - 40;
			term_safe(file, sizeof(file), f, 40);
			if (t->line > 0)
				snprintf(where, sizeof(where), " (%s:%d)", file, t->line);
			else
				snprintf(where, sizeof(where), " (%s)", file);
		}
		snprintf(line, sizeof(line), "%s: %s%s%s", mod, name, where,
		         t->state == TEST_INVALID ? " [setup_all failed]" : "");
		char fitted[512];
		term_safe(fitted, sizeof(fitted), line, WIDTH - 4);
		fprintf(out, "  %s-%s %s\n", color ? C_RED : "", color ? C_RESET : "", fitted);
		shown++;
	}
	if (bad > shown)
		fprintf(out, "  and %zu more\n", bad - shown);
}

/* The tests, the JUnit path and the verdict, after the memory sections. */
/* The tests, the JUnit path and the verdict line (model/verdict.h's model_verdict of t). */
static void print_tail(FILE *out, const struct verdict_tally *t, const struct test_run *run,
                       const struct summary_opts *opts)
{
	bool color = opts && opts->color;

	if (run)
		print_tests(out, run, opts);
	else
		fprintf(out, "no test results\n");
	if (opts && opts->junit_path) {
		char path[1208];
		term_safe(path, sizeof(path), opts->junit_path, 300);
		fprintf(out, "JUnit: %s\n", path);
	}
	if (model_verdict(t) == GATE_PASSED) {
		fprintf(out, "%sgate: PASSED%s\n", color ? C_GREEN C_BOLD : "",
		        color ? C_RESET : "");
		return;
	}
	char why[200];
	model_verdict_why(why, sizeof(why), t);
	fprintf(out, "%sgate: FAILED%s (%s)\n", color ? C_RED C_BOLD : "", color ? C_RESET : "",
	        why);
}

/* Warnings: findings that failed under severity warn or --warn-only; they never fail the gate, and
 * are said here with their culprit lists. */
static void print_warnings(FILE *out, const struct findings *findings, bool color)
{
	size_t n = 0;
	for (size_t i = 0; findings && i < findings->count; i++)
		n += findings->items[i].warned;
	if (!n)
		return;
	fprintf(out, "\n%s%zu %s (severity warn, never failing the gate):%s\n", color ? C_BOLD : "",
	        n, n == 1 ? "warning" : "warnings", color ? C_RESET : "");
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];
		char msg[2048];
		if (!f->warned)
			continue;
		term_safe(msg, sizeof(msg), f->message ? f->message : "", 1000);
		print_wrapped(out, "  ", msg, 4);
	}
}

/* Whether a memory finding failed or warned: only then is ranking the test modules an
 * investigation's next step. On a clean run the light snapshots' raw figures (code loading,
 * heap not yet collected) would read as blame without evidence; they stay in the JUnit
 * properties, the Markdown summary and the HTML report. */
static bool memory_flagged(const struct findings *findings)
{
	for (size_t i = 0; findings && i < findings->count; i++)
		if (findings->items[i].verdict == VERDICT_FAIL || findings->items[i].warned)
			return true;
	return false;
}

/* RSS against the allocators, the peak, heaps and origins (ci/report/fine_text.h). */
static void print_fine(FILE *out, const struct snapshot *before, const struct snapshot *after)
{
	char lines[FINE_TEXT_LINES][512];
	size_t n = fine_text_lines(lines, FINE_TEXT_LINES, before, after);
	if (n)
		fprintf(out, "Node memory (OS and allocators):\n");
	for (size_t i = 0; i < n; i++) {
		char safe[1024];
		term_safe(safe, sizeof(safe), lines[i], 600);
		print_wrapped(out, "  ", safe, 4);
	}
	if (n)
		fputc('\n', out);
}

/* One snapshot's line: binary as measured, the sockets' buffers set aside from it, and
 * binary as judged without them. */
static void set_aside_line(FILE *out, const char *which, const struct snapshot *s)
{
	char raw[32], aside[32], judged[32];
	if (!s->have_set_aside || s->set_aside_bytes <= 0) {
		fprintf(out, "  %s: none\n", which);
		return;
	}
	model_bytes_format(raw, sizeof(raw), s->set_aside_binary_raw);
	model_bytes_format(aside, sizeof(aside), s->set_aside_bytes);
	model_bytes_format(judged, sizeof(judged), s->mem[MEM_BINARY]);
	fprintf(out, "  %s: binary %s, of which %s%s in %lld %s, judged %s\n", which, raw,
	        s->set_aside_exact ? "" : "at least ", aside, (long long)s->set_aside_sockets,
	        s->set_aside_sockets == 1 ? "socket's buffer" : "sockets' buffers", judged);
}

/* The sockets' input buffers each snapshot set aside (binary, system and total are judged
 * without them); nothing when none was. */
static void print_set_aside(FILE *out, const struct snapshot *before, const struct snapshot *after)
{
	if (!(before->have_set_aside && before->set_aside_bytes > 0) &&
	    !(after->have_set_aside && after->set_aside_bytes > 0))
		return;
	fprintf(out, "Set aside: sockets' input buffers (released at their next read; binary, "
	             "system and total judged without them):\n");
	set_aside_line(out, "before", before);
	set_aside_line(out, "after", after);
	fputc('\n', out);
}

static void print_one_node(FILE *out, const struct findings *findings, const struct test_run *run,
                           const struct summary_opts *opts)
{
	print_memory(out, findings, opts);
	print_warnings(out, findings, opts && opts->color);
	if (run && memory_flagged(findings))
		print_top_growing(out, run, opts && opts->color);
	fputc('\n', out);
	struct verdict_tally t = model_verdict_tally(findings, run);
	print_tail(out, &t, run, opts);
}

/* One line for a partition's --sample series: how many, and what total did over it. */
static void print_samples_line(FILE *out, const struct sample_series *s, const char *of)
{
	const struct sample *a = &s->items[0], *z = &s->items[s->n - 1];
	char from[32], to[32], name[128];
	model_bytes_format(from, sizeof(from), a->mem[MEM_TOTAL]);
	model_bytes_format(to, sizeof(to), z->mem[MEM_TOTAL]);
	term_safe(name, sizeof(name), of, 60);
	fprintf(out, "  Samples of %s (--sample): %zu, every %lld ms over %.1f s; total %s -> %s\n",
	        name, s->n, (long long)s->interval_ms, (double)(z->t_ms - a->t_ms) / 1000.0, from,
	        to);
}

static void print_nodes(FILE *out, const struct report_node *nodes, size_t n,
                        const struct test_run *run, const struct summary_opts *opts)
{
	struct summary_opts o = opts ? *opts : (struct summary_opts){0};
	size_t rules_failed = 0, lost = 0;
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].error) {
			char name[256], msg[2048];
			term_safe(name, sizeof(name), nodes[i].name, 60);
			term_safe(msg, sizeof(msg), nodes[i].error, 500);
			fprintf(out, "%sNode %s: lost%s\n", o.color ? C_RED C_BOLD : "", name,
			        o.color ? C_RESET : "");
			print_wrapped(out, "  ", msg, 4);
			lost++;
		} else {
			o.node = nodes[i].name;
			print_memory(out, nodes[i].findings, &o);
			print_warnings(out, nodes[i].findings, o.color);
			rules_failed += nodes[i].findings ? findings_failed(nodes[i].findings) : 0;
			/* a merged partition's --repeat runs and --sample series */
			if (nodes[i].repeat && nodes[i].repeat->n)
				iterations_print(out, nodes[i].repeat, nodes[i].name, o.color);
			if (nodes[i].samples && nodes[i].samples->n)
				print_samples_line(out, nodes[i].samples, nodes[i].name);
		}
		fputc('\n', out);
	}
	bool flagged = false;
	for (size_t i = 0; i < n; i++)
		flagged = flagged || memory_flagged(nodes[i].findings);
	if (run && flagged) { /* the suite ran in the attached node: its growing tests once */
		print_top_growing(out, run, o.color);
		fputc('\n', out);
	}
	struct verdict_tally t = model_verdict_tally(NULL, run);
	t.rules = rules_failed;
	t.nodes_lost = lost;
	print_tail(out, &t, run, opts);
}

void summary_print(FILE *out, const struct report_data *d, bool color)
{
	struct summary_opts o = {.color = color, .junit_path = d->junit_path, .node = d->node};
	if (d->repeat)
		iterations_print(out, d->repeat, NULL, color);
	if (d->nnodes) {
		print_nodes(out, d->nodes, d->nnodes, d->tests, &o);
		return;
	}
	if (d->before && d->after) {
		print_fine(out, d->before, d->after);
		print_set_aside(out, d->before, d->after);
	}
	print_one_node(out, d->findings, d->tests, &o);
}
