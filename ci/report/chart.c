/* ci/report/chart.c: --repeat's runs and --sample's time series in the HTML report (see chart.h).
 */
#include "ci/report/chart.h"
#include "model/figures.h"
#include "model/snapshot.h"

#include <stdint.h>

static void bytes(FILE *out, int64_t n)
{
	char b[32];
	model_bytes_format(b, sizeof(b), n);
	fputs(b, out);
}

/* A section's id and the words of its title: the run's own (of NULL), or one merged
 * partition's (index i, of its label, which gate made: "partition 1/2"). */
static void section_open(FILE *out, const char *id, const char *title, const char *of, size_t i)
{
	if (of)
		fprintf(out, "<section id=\"%s-%zu\">\n<h2>%s of ", id, i + 1, title);
	else
		fprintf(out, "<section id=\"%s\">\n<h2>%s", id, title);
	for (; of && *of; of++) /* escaped as text, whatever it holds */
		if (*of == '<' || *of == '>' || *of == '&' || *of == '"')
			fprintf(out, "&#%d;", *of);
		else
			fputc(*of, out);
}

static void runs_section(FILE *out, const struct repeat_data *d, const char *of, size_t i)
{
	section_open(out, "runs", "Runs", of, i);
	fprintf(out,
	        " (--repeat %zu)</h2>\n<p class=\"meta\">The "
	        "figures after each run (GC'd) and their growth over the run before. Run 1 is "
	        "the warm-up; the rules judge the smallest growth of runs 2..%zu, %zu times."
	        "</p>\n<table>\n<thead><tr><th>run</th><th class=\"n\">tests</th>"
	        "<th class=\"n\">failed</th>",
	        d->n, d->n, d->n - 1);
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		fprintf(out, "<th class=\"n\">%s</th>", mem_cat_name((enum mem_cat)c));
	fputs("</tr></thead>\n<tbody>\n", out);
	for (size_t k = 0; k <= d->n; k++) {
		const struct repeat_point *p = repeat_point_at(d, k);
		fprintf(out, "<tr class=\"run\" data-run=\"%zu\"><td>%s", k, k ? "" : "before");
		if (k)
			fprintf(out, "%zu%s", k, k == 1 ? " (warm-up)" : "");
		if (k)
			fprintf(out, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>",
			        d->runs[k - 1].tests, d->runs[k - 1].failed);
		else
			fputs("</td><td class=\"n\">-</td><td class=\"n\">-</td>", out);
		for (int c = 0; c < MEM_CAT_COUNT; c++) {
			fputs("<td class=\"n\">", out);
			if (!p->have[c]) {
				fputs("-</td>", out);
				continue;
			}
			bytes(out, p->mem[c]);
			if (k) {
				int64_t g = repeat_run_growth(d, k, (enum mem_cat)c);
				fputs(g >= 0 ? "<br>+" : "<br>", out);
				bytes(out, g);
			}
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</tbody>\n</table>\n</section>\n", out);
}

/* One category's series: a polyline over time, the range on the left axis. */
static void series_svg(FILE *out, const struct sample_series *s, enum mem_cat c)
{
	const int W = 700, H = 160, left = 80, right = 20, top = 14, bottom = 30;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < s->n; i++) {
		int64_t v = s->items[i].mem[c];
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (hi == lo) {
		hi += hi / 20 + 1;
		lo = lo > lo / 20 + 1 ? lo - lo / 20 - 1 : 0;
	}
	int64_t t0 = s->items[0].t_ms, t1 = s->items[s->n - 1].t_ms;
	double pw = W - left - right, ph = H - top - bottom;
	double span = t1 > t0 ? (double)(t1 - t0) : 1;
	const char *name = mem_cat_name(c);
	fprintf(out,
	        "<figure class=\"series\" data-category=\"%s\"><figcaption>%s</figcaption>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s over time, %zu samples\" "
	        "data-points=\"%zu\">\n",
	        name, name, W, H, W, H, name, s->n, s->n);
	fprintf(out,
	        "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
	        "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
	        left, top, left, H - bottom, left, H - bottom, W - right, H - bottom);
	fprintf(out, "<text x=\"4\" y=\"%d\">", top + 4);
	bytes(out, hi);
	fprintf(out, "</text><text x=\"4\" y=\"%d\">", H - bottom);
	bytes(out, lo);
	fprintf(out,
	        "</text><text x=\"%d\" y=\"%d\">0 s</text><text x=\"%d\" y=\"%d\" "
	        "text-anchor=\"end\">%.1f s</text>\n",
	        left, H - bottom + 18, W - right, H - bottom + 18, span / 1000.0);
	fputs("<polyline class=\"line\" points=\"", out);
	for (size_t i = 0; i < s->n; i++) {
		double x = left + pw * (double)(s->items[i].t_ms - t0) / span;
		double y = top + ph * (1.0 - (double)(s->items[i].mem[c] - lo) / (double)(hi - lo));
		fprintf(out, "%s%.1f,%.1f", i ? " " : "", x, y);
	}
	fputs("\"/>\n</svg></figure>\n", out);
}

static void samples_section(FILE *out, const struct sample_series *s, const char *of, size_t i)
{
	section_open(out, "samples", "During the run", of, i);
	fprintf(out,
	        " (--sample)</h2>\n<p "
	        "class=\"meta\">%zu light snapshots (erlang:memory, no GC), one every %lld ms",
	        s->n, (long long)s->interval_ms);
	if (s->n)
		fprintf(out, " over %.1f s",
		        (double)(s->items[s->n - 1].t_ms - s->items[0].t_ms) / 1000.0);
	fputs(".</p>\n", out);
	if (s->n >= 2)
		for (int c = 0; c < MEM_CAT_COUNT; c++)
			series_svg(out, s, (enum mem_cat)c);
	fputs("</section>\n", out);
}

void chart_html_write(FILE *out, const struct report_data *d)
{
	if (d->repeat && d->repeat->n)
		runs_section(out, d->repeat, NULL, 0);
	if (d->samples)
		samples_section(out, d->samples, NULL, 0);
	/* a merged run: each partition's, in its own node */
	for (size_t i = 0; i < d->nnodes; i++) {
		if (d->nodes[i].repeat && d->nodes[i].repeat->n)
			runs_section(out, d->nodes[i].repeat, d->nodes[i].name, i);
		if (d->nodes[i].samples)
			samples_section(out, d->nodes[i].samples, d->nodes[i].name, i);
	}
}
