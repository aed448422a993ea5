/* rules/tags.c: limits written in the tests (ExUnit tags), severity, and finding locations. */
#include "rules/tags.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/consolidate.h"
#include "rules/culprits.h"

static const char *const severity_names[SEVERITY_RULE_COUNT] = {
        "growth",          "ets",      "binary", "process", "atom",    "allocator", "ports",
        "persistent_term", "baseline", "trend",  "tag",     "modules",
};

const char *severity_rule_name(enum severity_rule r)
{
	return (int)r >= 0 && r < SEVERITY_RULE_COUNT ? severity_names[r] : NULL;
}

/* "1 MB", "512kB", "1.5 MiB", "2000000" (bytes); -1 when it is none of these. */
static int64_t size_parse(const char *s)
{
	static const struct {
		const char *unit;
		double factor;
	} units[] = {
	        {"B", 1},    {"kB", 1e3},     {"KB", 1e3},        {"MB", 1e6},
	        {"GB", 1e9}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
	};
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -1;
	while (*end == ' ')
		end++;
	double f = 0;
	if (*end == '\0')
		f = strchr(s, '.') ? 0 : 1; /* a bare number is bytes, and whole */
	for (size_t i = 0; *end && i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0)
			f = units[i].factor;
	if (f == 0 || v * f >= (double)MODEL_FIGURE_MAX)
		return -1;
	return (int64_t)(v * f + 0.5);
}

static int64_t count_parse(const char *s)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < 0 || v >= MODEL_FIGURE_MAX)
		return -1;
	return (int64_t)v;
}

int tags_parse(const char *tag, struct tag_limits *out, char *err, size_t errlen)
{
	static const char keys[] = "max_growth, max_processes, max_ets_tables, severity, max_peak";
	*out = (struct tag_limits){false, -1, -1, -1, false, -1};
	if (!tag)
		return 0;
	if (strcmp(tag, "false") == 0) {
		out->exempt = true;
		return 0;
	}
	if (tag[0] == '!') {
		snprintf(err, errlen,
		         "gate: %s is not a keyword list; write e.g. @tag gate: "
		         "[max_growth: \"1 MB\"], or @tag gate: false to exempt the test",
		         tag + 1);
		return -1;
	}
	const char *p = tag;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char line[512], *eq;
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "a gate tag entry is too long (%zu bytes)", n);
			return -1;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (nl ? 1 : 0);
		if (!n)
			continue;
		if (!(eq = strchr(line, '='))) {
			snprintf(err, errlen, "gate tag entry \"%s\" has no value", line);
			return -1;
		}
		*eq = '\0';
		const char *k = line, *v = eq + 1;
		int64_t x;
		if (strcmp(k, "max_growth") == 0 ||
		    strcmp(k, "max_peak") == 0) { /* both are sizes */
			if ((x = size_parse(v)) < 0) {
				snprintf(err, errlen,
				         "gate: %s: \"%s\" is not a size; write e.g. "
				         "%s: \"1 MB\" (units B, kB, MB, GB, KiB, MiB, "
				         "GiB) or "
				         "an integer of bytes",
				         k, v, k);
				return -1;
			}
			*(k[4] == 'g' ? &out->max_growth : &out->max_peak) = x;
		} else if (strcmp(k, "max_processes") == 0 || strcmp(k, "max_ets_tables") == 0) {
			if ((x = count_parse(v)) < 0) {
				snprintf(err, errlen,
				         "gate: %s: \"%s\" is not a count; write e.g. %s: 0", k, v,
				         k);
				return -1;
			}
			*(k[4] == 'p' ? &out->max_processes : &out->max_ets_tables) = x;
		} else if (strcmp(k, "severity") == 0) {
			if (strcmp(v, "warn") == 0)
				out->warn = true;
			else if (strcmp(v, "error") != 0) {
				snprintf(err, errlen,
				         "gate: severity: \"%s\" is neither error nor warn; "
				         "write severity: :warn",
				         v);
				return -1;
			}
		} else {
			snprintf(err, errlen, "gate: unknown key %s; the keys are %s", k, keys);
			return -1;
		}
	}
	return 0;
}

bool tags_test_exempt(const struct test_result *t)
{
	return t && t->gate_tag && strcmp(t->gate_tag, "false") == 0;
}

bool tags_module_exempt(const struct test_run *run, const char *module)
{
	bool any = false;
	if (!run || !module)
		return false;
	for (size_t i = 0; i < run->count; i++) {
		const struct test_result *t = &run->tests[i];
		if (!t->module || strcmp(t->module, module) != 0 ||
		    (t->state != TEST_PASSED && t->state != TEST_FAILED))
			continue; /* only the tests that ran */
		if (!tags_test_exempt(t))
			return false;
		any = true;
	}
	return any;
}

struct named {
	const char *name;
	size_t index;
};

static int named_cmp(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

int tags_modules_exempt(const struct test_run *run, bool *out)
{
	size_t m = run ? run->nmodules : 0, groups = 0;
	struct named *by = m ? malloc(m * sizeof(*by)) : NULL;
	size_t *group = m ? malloc(m * sizeof(*group)) : NULL;
	/* per distinct name: a test of it ran, and every one that ran is exempt */
	bool *any = m ? calloc(m, sizeof(*any)) : NULL, *all = m ? malloc(m * sizeof(*all)) : NULL;
	int rc = -1;

	if (m && (!by || !group || !any || !all))
		goto out;
	for (size_t i = 0; i < m; i++)
		by[i] = (struct named){run->modules[i].module ? run->modules[i].module : "", i};
	qsort(by, m, sizeof(*by), named_cmp);
	/* by[] holds each distinct name once from here on, group[] maps a module to it */
	for (size_t i = 0; i < m; i++) {
		if (!groups || strcmp(by[groups - 1].name, by[i].name) != 0) {
			by[groups] = by[i];
			all[groups++] = true;
		}
		group[by[i].index] = groups - 1;
	}
	for (size_t i = 0; i < run->count; i++) {
		const struct test_result *t = &run->tests[i];
		if (!t->module || (t->state != TEST_PASSED && t->state != TEST_FAILED))
			continue; /* only the tests that ran */
		struct named key = {t->module, 0};
		const struct named *g = bsearch(&key, by, groups, sizeof(*by), named_cmp);
		if (!g)
			continue;
		any[g - by] = true;
		all[g - by] = all[g - by] && tags_test_exempt(t);
	}
	for (size_t i = 0; i < m; i++)
		out[i] = any[group[i]] && all[group[i]];
	rc = 0;
out:
	free(by);
	free(group);
	free(any);
	free(all);
	return rc;
}

int64_t tags_judged_growth(const struct mem_delta *d)
{
	return d->mem[MEM_PROCESSES_USED] + d->mem[MEM_ETS] + d->mem[MEM_BINARY] +
	       d->mem[MEM_ATOM_USED];
}

static void where_format(char *buf, size_t len, const struct test_result *t)
{
	if (t->file && *t->file && t->line > 0)
		snprintf(buf, len, "%s:%d", t->file, t->line);
	else if (t->file && *t->file)
		snprintf(buf, len, "%s", t->file);
	else
		snprintf(buf, len, "%s", rules_display(t->module));
}

/* "ets +4.1 MB, binary +8.0 MB": the categories of a tag's judged growth that grew. */
static void parts_format(char *buf, size_t len, const struct mem_delta *d)
{
	static const enum mem_cat cats[] = {MEM_ETS, MEM_BINARY, MEM_PROCESSES_USED, MEM_ATOM_USED};
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]) && o < len; i++) {
		char b[32];
		if (d->mem[cats[i]] <= 0)
			continue;
		model_bytes_format(b, sizeof(b), d->mem[cats[i]]);
		o += (size_t)snprintf(buf + o, len - o, "%s%s +%s", o ? ", " : "",
		                      mem_cat_name(cats[i]), b);
	}
}

static int set_culprit(struct finding *f, const struct test_result *t)
{
	f->culprit = t->module ? strdup(t->module) : NULL;
	f->culprit_test = t->name ? strdup(t->name) : NULL;
	f->file = t->file && *t->file ? strdup(t->file) : NULL;
	f->line = t->line;
	return (t->module && !f->culprit) || (t->name && !f->culprit_test) ||
	                       (t->file && *t->file && !f->file)
	               ? -1
	               : 0;
}

/* the structure that grew most in a failing tagged test's window (the probe's "ETS table NAME
 * (owner ...) ..." or "process PID (...) ..."), as the structure the finding names
 * (rules/consolidate.h), explaining its judged growth: the same cause as the table's or the
 * process's finding, and the growth rows it explains are context. */
static int tag_structure(struct finding *f, const char *grew, int64_t judged)
{
	char key[300], label[300];
	size_t n;
	enum mem_cat cat;
	if (!grew)
		return 0;
	if (strncmp(grew, "ETS table ", 10) == 0) {
		n = strcspn(grew + 10, " ;");
		snprintf(key, sizeof(key), "ets:%.*s", (int)n, grew + 10);
		snprintf(label, sizeof(label), "ETS table %.*s", (int)n, grew + 10);
		cat = MEM_ETS;
	} else if (strncmp(grew, "process ", 8) == 0) {
		n = strcspn(grew + 8, " ;");
		snprintf(key, sizeof(key), "proc:%.*s", (int)n, grew + 8);
		snprintf(label, sizeof(label), "process %.*s", (int)n, grew + 8);
		cat = MEM_PROCESSES_USED;
	} else {
		return 0;
	}
	return consolidate_name(f, key, label, cat, judged);
}

/* One tagged test's finding. */
static int check_one(struct findings *out, const struct test_result *t,
                     const struct tag_limits *lim, bool warn_rule)
{
	char msg[2048], subject[512], where[512], name[400];
	char over[768] = "", within[512] = "";
	size_t oo = 0, wo = 0;
	enum verdict v = VERDICT_PASS;
	int64_t judged = 0, limit = 0;

	snprintf(name, sizeof(name), "%s \"%s\"", rules_display(t->module), t->name ? t->name : "");
	snprintf(subject, sizeof(subject), "%s", name);
	where_format(where, sizeof(where), t);
	if (!t->measured) {
		snprintf(msg, sizeof(msg),
		         "%s (%s) was not measured: its limits need gate's hook in "
		         "ExUnit.EventManager (an ExUnit with debug info)",
		         name, where);
		if (findings_add(out, "tag", subject, VERDICT_SKIP, 0, 0, 0, -1, msg) < 0)
			return -1;
		return set_culprit(&out->items[out->count - 1], t);
	}
	struct {
		const char *key;
		int64_t got, max;
		bool bytes;
	} checks[] = {
	        {"max_growth", tags_judged_growth(&t->delta), lim->max_growth, true},
	        {"max_processes", t->delta.processes, lim->max_processes, false},
	        {"max_ets_tables", t->delta.ets_tables, lim->max_ets_tables, false},
	};
	for (size_t i = 0; i < 3; i++) {
		char g[32], m[32];
		if (checks[i].max < 0)
			continue;
		if (checks[i].bytes) {
			model_bytes_format(g, sizeof(g), checks[i].got);
			model_bytes_format(m, sizeof(m), checks[i].max);
			judged = checks[i].got;
			limit = checks[i].max;
		} else {
			rules_count_format(g, sizeof(g), checks[i].got);
			rules_count_format(m, sizeof(m), checks[i].max);
		}
		const char *what = checks[i].bytes ? "grew"
		                   : i == 1        ? "left processes"
		                                   : "left ETS tables";
		if (checks[i].got > checks[i].max) {
			v = VERDICT_FAIL;
			if (oo < sizeof(over))
				oo += (size_t)snprintf(over + oo, sizeof(over) - oo,
				                       "%s%s %s%s, %s %s", oo ? "; " : "", what,
				                       checks[i].bytes ? "+" : "", g, checks[i].key,
				                       m);
		} else if (wo < sizeof(within)) {
			wo += (size_t)snprintf(within + wo, sizeof(within) - wo,
			                       "%s%s %s%s (%s %s)", wo ? ", " : "", what,
			                       checks[i].bytes && checks[i].got >= 0 ? "+" : "", g,
			                       checks[i].key, m);
		}
	}
	char parts[256];
	parts_format(parts, sizeof(parts), &t->delta);
	const char *async = t->async ? " (async: the node's growth over the test's run, tests "
	                               "running alongside included)"
	                             : "";
	if (v == VERDICT_FAIL)
		snprintf(msg, sizeof(msg), "%s%s%s %s%s%s%s, limits from its @tag gate%s",
		         t->gate_grew && *t->gate_grew ? t->gate_grew : "",
		         t->gate_grew && *t->gate_grew ? "; " : "", name, over, *parts ? " (" : "",
		         parts, *parts ? ")" : "", async);
	else
		snprintf(msg, sizeof(msg), "%s within its @tag gate limits: %s%s", name, within,
		         async);
	if (findings_add(out, "tag", subject, v, 0, judged, 0, -1, msg) < 0)
		return -1;
	struct finding *f = &out->items[out->count - 1];
	f->floor = limit;
	/* judged on bytes alone, it is judged again net of the structures that explain them
	 * (rules/consolidate.h); a count over its limit is its own */
	if (lim->max_growth >= 0 &&
	    (v != VERDICT_FAIL ||
	     ((lim->max_processes < 0 || t->delta.processes <= lim->max_processes) &&
	      (lim->max_ets_tables < 0 || t->delta.ets_tables <= lim->max_ets_tables))))
		f->judges = 1u << MEM_PROCESSES_USED | 1u << MEM_ETS | 1u << MEM_BINARY |
		            1u << MEM_ATOM_USED;
	if (v == VERDICT_FAIL && tag_structure(f, t->gate_grew, judged) < 0)
		return -1;
	if (v == VERDICT_FAIL && (lim->warn || warn_rule))
		f->warned = true; /* severity_apply turns it into a warning */
	return set_culprit(f, t);
}

int tags_check(struct findings *out, const struct test_run *run, const struct severity_config *cfg,
               char *err, size_t errlen)
{
	size_t start = out->count;
	if (!run)
		return 0;
	for (size_t i = 0; i < run->count; i++) {
		const struct test_result *t = &run->tests[i];
		struct tag_limits lim;
		char why[512];
		if (!t->gate_tag || (t->state != TEST_PASSED && t->state != TEST_FAILED))
			continue; /* untagged, or it did not run */
		if (tags_parse(t->gate_tag, &lim, why, sizeof(why)) < 0) {
			char where[512];
			where_format(where, sizeof(where), t);
			snprintf(err, errlen, "%s: %s \"%s\": %s", where, rules_display(t->module),
			         t->name ? t->name : "", why);
			return -2;
		}
		if (lim.exempt ||
		    (lim.max_growth < 0 && lim.max_processes < 0 && lim.max_ets_tables < 0))
			continue;
		if (check_one(out, t, &lim, cfg && cfg->warn[SEVERITY_TAG]) < 0)
			return -1;
	}
	/* the failing tag findings go first (the most specific findings there are), the
	 * passing ones last */
	size_t n = out->count - start, k = 0;
	if (!n)
		return 0;
	struct finding *res = malloc(out->count * sizeof(*res));
	if (!res)
		return -1;
	for (size_t i = start; i < out->count; i++)
		if (out->items[i].verdict == VERDICT_FAIL)
			res[k++] = out->items[i];
	memcpy(res + k, out->items, start * sizeof(*res));
	k += start;
	for (size_t i = start; i < out->count; i++)
		if (out->items[i].verdict != VERDICT_FAIL)
			res[k++] = out->items[i];
	memcpy(out->items, res, out->count * sizeof(*res));
	free(res);
	return 0;
}

int severity_apply(struct findings *out, const struct severity_config *cfg, bool warn_only)
{
	int n = 0;
	for (size_t i = 0; i < out->count; i++) {
		struct finding *f = &out->items[i];
		bool warn = warn_only || f->warned;
		for (int r = 0; !warn && cfg && r < SEVERITY_RULE_COUNT; r++)
			if (cfg->warn[r] && f->rule && strcmp(f->rule, severity_names[r]) == 0)
				warn = true;
		if (f->verdict != VERDICT_FAIL || !warn) {
			if (f->verdict != VERDICT_FAIL)
				f->warned = false;
			continue;
		}
		if (finding_part_add(f, PART_WARNING, true, NULL, "warning: ") < 0)
			return -1;
		f->verdict = VERDICT_SKIP;
		f->warned = true;
		n++;
	}
	return n;
}

/* The table a finding is about: "table NAME" (ets rule) or "ets:NAME" (baseline); NULL. */
static const char *table_of(const struct finding *f)
{
	if (!f->subject)
		return NULL;
	if (strncmp(f->subject, "table ", 6) == 0)
		return f->subject + 6;
	if (strncmp(f->subject, "ets:", 4) == 0)
		return f->subject + 4;
	return NULL;
}

/* Whether the test module (as ExUnit names it: "Elixir.Foo.BarTest") is the culprit, named
 * so or as a snapshot shows modules (rules_display's "Foo.BarTest": the ports' owners). */
static bool culprit_is(const char *module, const char *culprit)
{
	return strcmp(module, culprit) == 0 || strcmp(rules_display(module), culprit) == 0;
}

int tags_locate(struct findings *out, const struct test_run *run)
{
	if (!run)
		return 0;
	for (size_t i = 0; i < out->count; i++) {
		struct finding *f = &out->items[i];
		const struct test_result *best = NULL;
		if (f->file || !f->culprit)
			continue;
		for (size_t k = 0; k < run->count; k++) {
			const struct test_result *t = &run->tests[k];
			if (!t->module || !culprit_is(t->module, f->culprit) || !t->file ||
			    !*t->file)
				continue;
			if (f->culprit_test && t->name && strcmp(t->name, f->culprit_test) == 0) {
				best = t;
				break;
			}
			if (!best || (t->line > 0 && (best->line <= 0 || t->line < best->line)))
				best = t;
		}
		if (!best)
			continue;
		if (!(f->file = strdup(best->file)))
			return -1;
		f->line = best->line;
		/* the culprit spelt as ExUnit does, as model.h says */
		if (strcmp(f->culprit, best->module) != 0) {
			char *m = strdup(best->module);
			if (!m)
				return -1;
			free(f->culprit);
			f->culprit = m;
		}
	}
	/* a finding about a table no test stands out for (the baseline's row of it) points where
	 * another finding about the same table does */
	for (size_t i = 0; i < out->count; i++) {
		struct finding *f = &out->items[i];
		const char *t = table_of(f);
		if (f->file || !t)
			continue;
		for (size_t k = 0; k < out->count; k++) {
			const struct finding *g = &out->items[k];
			const char *u = table_of(g);
			if (k == i || !g->file || !u || strcmp(t, u) != 0)
				continue;
			if (!(f->file = strdup(g->file)) ||
			    (g->culprit && !f->culprit && !(f->culprit = strdup(g->culprit))))
				return -1;
			f->line = g->line;
			break;
		}
	}
	return 0;
}
