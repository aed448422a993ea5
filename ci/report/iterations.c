/* ci/report/iterations.c: --repeat's runs and --sample's series, as text and JSON. */
#include "ci/report/iterations.h"
#include "model/figures.h"
#include "model/snapshot.h"

#include <string.h>

#define C_BOLD "\033[1m"
#define C_RESET "\033[0m"

/* the categories the table shows: the ones the default rules judge */
static const enum mem_cat shown[] = {MEM_TOTAL, MEM_PROCESSES_USED, MEM_BINARY,   MEM_ETS,
                                     MEM_CODE,  MEM_SYSTEM,         MEM_ATOM_USED};
#define NSHOWN (sizeof(shown) / sizeof(shown[0]))

void iterations_print(FILE *out, const struct repeat_data *d, const char *of, bool color)
{
	char b[32], g[32], cell[48];
	fprintf(out,
	        "\n%sRuns%s%s (--repeat %zu)%s: the figures after each run (GC'd) and their "
	        "growth over the run before; run 1 is the warm-up\n",
	        color ? C_BOLD : "", of ? " of " : "", of ? of : "", d->n, color ? C_RESET : "");
	fprintf(out, "  %-8s %7s", "run", "tests");
	for (size_t i = 0; i < NSHOWN; i++)
		fprintf(out, " %22s", mem_cat_name(shown[i]));
	fputc('\n', out);
	for (size_t k = 0; k <= d->n; k++) {
		const struct repeat_point *p = repeat_point_at(d, k);
		char label[16], tests[24];
		snprintf(label, sizeof(label), k ? "%zu%s" : "before", k, k == 1 ? " (warm)" : "");
		if (k)
			snprintf(tests, sizeof(tests), "%zu%s", d->runs[k - 1].tests,
			         d->runs[k - 1].failed ? "!" : "");
		else
			snprintf(tests, sizeof(tests), "-");
		fprintf(out, "  %-8s %7s", label, tests);
		for (size_t i = 0; i < NSHOWN; i++) {
			enum mem_cat c = shown[i];
			if (!p->have[c]) {
				fprintf(out, " %22s", "-");
				continue;
			}
			model_bytes_format(b, sizeof(b), p->mem[c]);
			if (k) {
				int64_t gr = repeat_run_growth(d, k, c);
				model_bytes_format(g, sizeof(g), gr);
				snprintf(cell, sizeof(cell), "%s (%s%s)", b, gr >= 0 ? "+" : "", g);
			} else {
				snprintf(cell, sizeof(cell), "%s", b);
			}
			fprintf(out, " %22s", cell);
		}
		fputc('\n', out);
	}
	fprintf(out, "  judged: the smallest growth of runs 2..%zu, times %zu:", d->n, d->n - 1);
	for (size_t i = 0; i < NSHOWN; i++) {
		int64_t m = repeat_continuing(d, shown[i]);
		model_bytes_format(g, sizeof(g), m * (int64_t)(d->n - 1));
		fprintf(out, " %s %s%s%s", mem_cat_name(shown[i]), m >= 0 ? "+" : "", g,
		        i + 1 < NSHOWN ? "," : "\n");
	}
}

static json_t *mem_json(const int64_t *mem, const bool *have)
{
	json_t *o = json_object();
	for (int c = 0; o && c < MEM_CAT_COUNT; c++)
		if (!have || have[c])
			json_object_set_new(o, mem_cat_name((enum mem_cat)c),
			                    json_integer((json_int_t)mem[c]));
	return o;
}

json_t *iterations_json(const struct repeat_data *d)
{
	json_t *a = json_array();
	for (size_t k = 0; a && k <= d->n; k++) {
		const struct repeat_point *p = repeat_point_at(d, k);
		int64_t delta[MEM_CAT_COUNT];
		for (int c = 0; c < MEM_CAT_COUNT; c++)
			delta[c] = repeat_run_growth(d, k, (enum mem_cat)c);
		json_t *o = json_pack("{s:I, s:b, s:I, s:I, s:I}", "run", (json_int_t)k, "warmup",
		                      k == 1, "process_count", (json_int_t)p->process_count,
		                      "ets_count", (json_int_t)p->ets_count, "atom_count",
		                      (json_int_t)p->atom_count);
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
		json_object_set_new(o, "memory", mem_json(p->mem, p->have));
		if (k) {
			const struct repeat_run *r = &d->runs[k - 1];
			json_object_set_new(o, "delta", mem_json(delta, p->have));
			json_object_set_new(o, "tests", json_integer((json_int_t)r->tests));
			json_object_set_new(o, "failed", json_integer((json_int_t)r->failed));
			json_object_set_new(o, "wall_ms",
			                    json_integer((json_int_t)(r->wall_us / 1000)));
		}
	}
	return a;
}

json_t *samples_json(const struct sample_series *s)
{
	json_t *root = json_pack("{s:I, s:I}", "interval_ms", (json_int_t)s->interval_ms, "count",
	                         (json_int_t)s->n);
	json_t *a = json_array();
	if (!root || !a) {
		json_decref(root);
		json_decref(a);
		return NULL;
	}
	json_object_set_new(root, "samples", a);
	for (size_t i = 0; i < s->n; i++) {
		const struct sample *x = &s->items[i];
		json_t *o =
		        json_pack("{s:I, s:I, s:I, s:I, s:I}", "t_ms", (json_int_t)x->t_ms,
		                  "process_count", (json_int_t)x->process_count, "ets_count",
		                  (json_int_t)x->ets_count, "atom_count", (json_int_t)x->atom_count,
		                  "port_count", (json_int_t)x->port_count);
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(root);
			return NULL;
		}
		json_object_set_new(o, "memory", mem_json(x->mem, NULL));
	}
	return root;
}
