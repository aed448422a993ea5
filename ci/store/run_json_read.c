/* ci/store/run_json_read.c: a run result read back for `gate merge` (see run_json_read.h). */
#include "ci/store/run_json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "base/errtext.h"
#include "base/readfile.h"
#include "ci/store/baseline_file.h"
#include "ci/store/run_json.h"
#include "model/finding.h"
#include "model/tests.h"

/* What the parse of one document shares: the file's name for messages, the object being read
 * ("tests.cases[3]": where a key is, in messages) and the error. */
struct rd {
	const char *name;
	char where[64];
	char *err;
	size_t errlen;
	bool failed;
};

/* Says what is wrong at key, inside rd->where (once: the first problem is the one named). */
static void bad(struct rd *rd, const char *key, const char *what)
{
	if (rd->failed)
		return;
	rd->failed = true;
	errtext_set(rd->err, rd->errlen, rd->name,
	            "\"%s%s%s\" %s; the file is not as gate run --json writes it (rerun the job, "
	            "or give the file it wrote)",
	            rd->where, rd->where[0] && key[0] ? "." : "", key, what);
}

/* The object read from now on, for messages: a key, or a key and an index. */
static void at(struct rd *rd, const char *key, long index)
{
	if (index < 0)
		snprintf(rd->where, sizeof(rd->where), "%s", key);
	else
		snprintf(rd->where, sizeof(rd->where), "%s[%ld]", key, index);
}

/* A copy of the string at key, NULL when absent or null; a wrong type is an error. */
static char *str_dup(struct rd *rd, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v)) {
		bad(rd, key, "is not a string");
		return NULL;
	}
	char *s = strdup(json_string_value(v));
	if (!s)
		bad(rd, key, "could not be copied: out of memory");
	return s;
}

/* The integer at key in [min, max]; def when absent. */
static int64_t int_get(struct rd *rd, const json_t *o, const char *key, int64_t def, int64_t min,
                       int64_t max)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return def;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
		bad(rd, key, "is not an integer in range");
		return def;
	}
	return (int64_t)json_integer_value(v);
}

static bool bool_get(struct rd *rd, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return false;
	if (!json_is_boolean(v))
		bad(rd, key, "is not true or false");
	return json_is_true(v);
}

static int state_from_name(const char *s)
{
	static const enum test_state all[] = {TEST_PASSED, TEST_FAILED, TEST_SKIPPED, TEST_EXCLUDED,
	                                      TEST_INVALID};
	for (size_t i = 0; s && i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(s, test_state_name(all[i])) == 0)
			return (int)all[i];
	return -1;
}

static int verdict_from_name(const char *s)
{
	static const enum verdict all[] = {VERDICT_PASS, VERDICT_FAIL, VERDICT_SKIP};
	for (size_t i = 0; s && i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(s, verdict_name(all[i])) == 0)
			return (int)all[i];
	return -1;
}

static void read_case(struct rd *rd, struct test_run *run, const json_t *c)
{
	struct test_result *t = test_run_add(run);
	if (!t) {
		bad(rd, "tests.cases", "could not be read: out of memory");
		return;
	}
	if (!json_is_object(c)) {
		bad(rd, "tests.cases", "holds something that is not a test");
		return;
	}
	at(rd, "tests.cases", (long)(run->count - 1));
	t->module = str_dup(rd, c, "module");
	t->name = str_dup(rd, c, "name");
	t->file = str_dup(rd, c, "file");
	t->line = (int)int_get(rd, c, "line", 0, 0, INT32_MAX);
	t->time_us = int_get(rd, c, "time_us", 0, 0, MODEL_FIGURE_MAX);
	t->message = str_dup(rd, c, "message");
	t->reason = str_dup(rd, c, "reason");
	t->app = str_dup(rd, c, "app");
	/* --per-test: the test's own growth, as the partition's summary ranked it */
	t->async = bool_get(rd, c, "async");
	t->measured = bool_get(rd, c, "measured");
	const json_t *d = json_object_get(c, "delta");
	if (t->measured && !json_is_object(d))
		bad(rd, "delta", "is missing for a measured test");
	if (t->measured && json_is_object(d)) {
		for (int k = 0; k < MEM_CAT_COUNT; k++)
			t->delta.mem[k] = int_get(rd, d, mem_cat_name((enum mem_cat)k), 0,
			                          -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
		t->delta.processes =
		        int_get(rd, d, "process_count", 0, -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
		t->delta.ets_tables =
		        int_get(rd, d, "ets_tables", 0, -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
	}
	int st = state_from_name(json_string_value(json_object_get(c, "state")));
	if (st < 0)
		bad(rd, "state", "is not passed, failed, skipped, excluded or invalid");
	else
		t->state = (enum test_state)st;
	if (!t->module || !t->name)
		bad(rd, "module", "or \"name\" is missing");
}

static void read_module(struct rd *rd, struct test_run *run, const json_t *o)
{
	const json_t *d = json_object_get(o, "delta");
	if (!json_is_object(o) || !json_is_string(json_object_get(o, "module")) ||
	    !json_is_object(d)) {
		bad(rd, "tests.modules[]", "lacks its module or delta");
		return;
	}
	struct module_growth *g = realloc(run->modules, (run->nmodules + 1) * sizeof(*g));
	if (!g) {
		bad(rd, "tests.modules", "could not be read: out of memory");
		return;
	}
	run->modules = g;
	g = &run->modules[run->nmodules++];
	memset(g, 0, sizeof(*g));
	at(rd, "tests.modules", (long)(run->nmodules - 1));
	g->module = str_dup(rd, o, "module");
	g->async = bool_get(rd, o, "async");
	g->finished = bool_get(rd, o, "finished");
	g->overlapped = (size_t)int_get(rd, o, "overlapped", 0, 0, INT32_MAX);
	g->time_us = int_get(rd, o, "time_us", 0, 0, MODEL_FIGURE_MAX);
	strncat(rd->where, ".delta", sizeof(rd->where) - strlen(rd->where) - 1);
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		g->delta.mem[c] = int_get(rd, d, mem_cat_name((enum mem_cat)c), 0,
		                          -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
	g->delta.processes =
	        int_get(rd, d, "process_count", 0, -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
	g->delta.ets_tables = int_get(rd, d, "ets_tables", 0, -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
}

/* The attribution the run measured with, and each module's growth. */
static void read_attribution(struct rd *rd, struct test_run *run, const json_t *o)
{
	const char *a = json_string_value(json_object_get(o, "attribution"));
	run->attribution = a && strcmp(a, "test") == 0     ? ATTRIBUTION_TEST
	                   : a && strcmp(a, "module") == 0 ? ATTRIBUTION_MODULE
	                                                   : ATTRIBUTION_OFF;
	run->attribution_sync = bool_get(rd, o, "attribution_sync");
	const json_t *mods = json_object_get(o, "modules");
	size_t i;
	const json_t *m;
	json_array_foreach(mods, i, m)
	{
		if (rd->failed)
			return;
		read_module(rd, run, m);
	}
}

static void read_tests(struct rd *rd, struct run_result *r, const json_t *o)
{
	const json_t *cases = json_object_get(o, "cases");
	if (!json_is_object(o) || !json_is_array(cases)) {
		bad(rd, "tests.cases", "is missing");
		return;
	}
	size_t i;
	const json_t *c;
	json_array_foreach(cases, i, c)
	{
		if (rd->failed)
			return;
		read_case(rd, &r->tests, c);
	}
	at(rd, "tests", -1);
	r->tests.finished = bool_get(rd, o, "finished");
	r->tests.suite_ran = bool_get(rd, o, "suite_ran");
	r->tests.mix_reported = bool_get(rd, o, "mix_reported");
	r->tests.mix_status = (int)int_get(rd, o, "mix_status", 0, 0, 255);
	r->tests.mix_reason = str_dup(rd, o, "mix_reason");
	r->tests.mix_explained = bool_get(rd, o, "mix_explained");
	r->tests.seed = int_get(rd, o, "seed", 0, INT64_MIN, INT64_MAX);
	read_attribution(rd, &r->tests, o);
	r->tests.load_us = -1;
	rd->where[0] = '\0';
}

static void read_finding(struct rd *rd, struct findings *fs, const json_t *o)
{
	if (!json_is_object(o)) {
		bad(rd, "", "is not a finding (an object)");
		return;
	}
	const char *rule = json_string_value(json_object_get(o, "rule"));
	const char *subject = json_string_value(json_object_get(o, "subject"));
	const char *message = json_string_value(json_object_get(o, "message"));
	int v = verdict_from_name(json_string_value(json_object_get(o, "verdict")));
	const json_t *pct = json_object_get(o, "max_pct");
	if (v < 0 || !json_is_number(pct)) {
		bad(rd, "verdict",
		    "or \"max_pct\" is missing or wrong (a verdict is pass, FAIL or skip)");
		return;
	}
	/* the figures in the model's range (what gate writes): their differences and their sums
	 * over the partitions are computed without overflow */
	int64_t before = int_get(rd, o, "before", 0, -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
	int64_t after = int_get(rd, o, "after", 0, -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
	int64_t floor = int_get(rd, o, "floor", 0, -MODEL_FIGURE_MAX, MODEL_FIGURE_MAX);
	if (rd->failed || findings_add(fs, rule, subject, (enum verdict)v, before, after, floor,
	                               json_number_value(pct), message) < 0) {
		bad(rd, "", "could not be read: out of memory");
		return;
	}
	struct finding *f = &fs->items[fs->count - 1];
	f->delta = int_get(rd, o, "delta", f->delta, -2 * MODEL_FIGURE_MAX, 2 * MODEL_FIGURE_MAX);
	f->detail = str_dup(rd, o, "detail");
	f->explained = str_dup(rd, o, "explained");
	f->warned = bool_get(rd, o, "warned");
	f->culprit = str_dup(rd, o, "culprit");
	f->culprit_test = str_dup(rd, o, "culprit_test");
	f->file = str_dup(rd, o, "file");
	f->line = (int)int_get(rd, o, "line", 0, 0, INT32_MAX);
	const char *unit = json_string_value(json_object_get(o, "unit"));
	f->unit = unit && strcmp(unit, "count") == 0 ? UNIT_COUNT : UNIT_BYTES;
	f->show = (unsigned)int_get(rd, o, "show", 0, 0, UINT32_MAX);
	/* what the partition's consolidation said, carried into the merged reports */
	f->structure_key = str_dup(rd, o, "structure_key");
	f->structure = str_dup(rd, o, "structure");
	f->explained_by = str_dup(rd, o, "explained_by");
}

/* The erlang:memory figures of a snapshot object, and its node. */
static void read_memory(struct rd *rd, struct snapshot *s, const json_t *o, const char *key)
{
	if (!o || json_is_null(o))
		return;
	const json_t *mem = json_object_get(o, "memory");
	if (!json_is_object(o) || !json_is_object(mem)) {
		bad(rd, key, "has no \"memory\" object");
		return;
	}
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)mem, k, v)
	{
		int cat = mem_cat_from_name(k);
		if (cat < 0)
			continue; /* a category a newer OTP reports: not ours to merge */
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > MODEL_FIGURE_MAX) {
			snprintf(rd->where, sizeof(rd->where), "%s.memory", key);
			bad(rd, k, "is not a byte count (0 to 2^50)");
			return;
		}
		s->mem[cat] = (int64_t)json_integer_value(v);
		s->have[cat] = true;
	}
	const char *node = json_string_value(json_object_get(o, "node"));
	if (node)
		snprintf(s->node, sizeof(s->node), "%s", node);
}

static void read_baseline(struct rd *rd, struct run_result *r, const json_t *b)
{
	if (!b || json_is_null(b))
		return;
	char *text = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
	char name[1024], why[2048];
	if (!text) {
		bad(rd, "baseline", "could not be read: out of memory");
		return;
	}
	snprintf(name, sizeof(name), "%s:baseline", rd->name);
	if (baseline_parse(&r->baseline, text, strlen(text), name, why, sizeof(why)) !=
	    BASELINE_OK) {
		if (!rd->failed)
			errtext_set(rd->err, rd->errlen, NULL, "%s", why);
		rd->failed = true;
	} else {
		r->have_baseline = true;
	}
	free(text);
}

/* The "memory" object of an iterations or samples entry into mem (and have, when given). */
static void read_mem_map(struct rd *rd, const json_t *o, int64_t *mem, bool *have)
{
	const json_t *m = json_object_get(o, "memory");
	if (!json_is_object(m)) {
		bad(rd, "memory", "is missing");
		return;
	}
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		const json_t *v = json_object_get(m, mem_cat_name((enum mem_cat)c));
		if (!v)
			continue;
		mem[c] = int_get(rd, m, mem_cat_name((enum mem_cat)c), 0, 0, MODEL_FIGURE_MAX);
		if (have)
			have[c] = true;
	}
}

/* --repeat's runs: [{run, memory, process_count, ets_count, atom_count, tests, failed,
 * wall_ms}], run 0 the before-snapshot (ci/report/iterations.h). */
static void read_iterations(struct rd *rd, struct run_result *r, const json_t *a)
{
	if (!a || json_is_null(a))
		return;
	if (!json_is_array(a) || json_array_size(a) < 2) {
		bad(rd, "iterations", "is not a list of runs (the before-snapshot and run 1..N)");
		return;
	}
	struct repeat_data *d = &r->iterations;
	size_t n = json_array_size(a) - 1;
	d->runs = calloc(n, sizeof(*d->runs));
	if (!d->runs) {
		bad(rd, "iterations", "could not be read: out of memory");
		return;
	}
	d->cap = n;
	size_t k;
	const json_t *o;
	json_array_foreach(a, k, o)
	{
		at(rd, "iterations", (long)k);
		if (!json_is_object(o) || int_get(rd, o, "run", -1, 0, INT32_MAX) != (int64_t)k) {
			bad(rd, "run", "is not the entry's place in the list");
			return;
		}
		struct repeat_point *p = k ? &d->runs[k - 1].after : &d->start;
		read_mem_map(rd, o, p->mem, p->have);
		p->process_count = int_get(rd, o, "process_count", 0, 0, MODEL_FIGURE_MAX);
		p->ets_count = int_get(rd, o, "ets_count", 0, 0, MODEL_FIGURE_MAX);
		p->atom_count = int_get(rd, o, "atom_count", 0, 0, MODEL_FIGURE_MAX);
		if (k) {
			struct repeat_run *run = &d->runs[k - 1];
			run->tests = (size_t)int_get(rd, o, "tests", 0, 0, MODEL_FIGURE_MAX);
			run->failed = (size_t)int_get(rd, o, "failed", 0, 0, MODEL_FIGURE_MAX);
			run->wall_us =
			        int_get(rd, o, "wall_ms", 0, 0, MODEL_FIGURE_MAX / 1000) * 1000;
			d->n = k;
		}
		if (rd->failed)
			return;
	}
	rd->where[0] = '\0';
	r->have_iterations = true;
}

/* --sample's series: {interval_ms, count, samples: [{t_ms, memory, process_count, ets_count,
 * atom_count, port_count}]} (ci/report/iterations.h). */
static void read_samples(struct rd *rd, struct run_result *r, const json_t *o)
{
	if (!o || json_is_null(o))
		return;
	const json_t *a = json_object_get(o, "samples");
	if (!json_is_object(o) || !json_is_array(a)) {
		bad(rd, "samples", "is not an object with a list \"samples\"");
		return;
	}
	struct sample_series *s = &r->samples;
	at(rd, "samples", -1);
	s->interval_ms = int_get(rd, o, "interval_ms", 0, 1, MODEL_FIGURE_MAX);
	s->items = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*s->items));
	if (!s->items) {
		bad(rd, "samples", "could not be read: out of memory");
		return;
	}
	size_t i;
	const json_t *x;
	json_array_foreach(a, i, x)
	{
		at(rd, "samples.samples", (long)i);
		if (!json_is_object(x)) {
			bad(rd, "", "is not a sample (an object)");
			return;
		}
		struct sample *it = &s->items[i];
		it->t_ms = int_get(rd, x, "t_ms", 0, 0, MODEL_FIGURE_MAX);
		read_mem_map(rd, x, it->mem, NULL);
		it->process_count = int_get(rd, x, "process_count", 0, 0, MODEL_FIGURE_MAX);
		it->ets_count = int_get(rd, x, "ets_count", 0, 0, MODEL_FIGURE_MAX);
		it->atom_count = int_get(rd, x, "atom_count", 0, 0, MODEL_FIGURE_MAX);
		it->port_count = int_get(rd, x, "port_count", 0, 0, MODEL_FIGURE_MAX);
		if (rd->failed)
			return;
		s->n = i + 1;
	}
	rd->where[0] = '\0';
	r->have_samples = true;
}

/* "format": "gate.run/N" with N this gate reads (2); 0 or -1 with the refusal said. */
static int read_format(struct rd *rd, struct run_result *r, const json_t *root)
{
	const char *fmt = json_string_value(json_object_get(root, "format"));
	int n = 0, used = 0;
	if (!json_is_object(root) || !fmt || sscanf(fmt, "gate.run/%d%n", &n, &used) != 1 ||
	    fmt[used] != '\0' || n < 1) {
		errtext_set(rd->err, rd->errlen, rd->name,
		            "not a gate run result (no \"format\": \"gate.run/N\"); give the "
		            "file `gate run --json FILE` wrote in each partition's job");
		return -1;
	}
	if (n > RUN_JSON_VERSION) {
		errtext_set(rd->err, rd->errlen, rd->name,
		            "format %s is newer than this gate reads (up to %s); merge with the "
		            "gate version that wrote it (\"gate\": %s)",
		            fmt, RUN_JSON_FORMAT,
		            json_string_value(json_object_get(root, "gate"))
		                    ? json_string_value(json_object_get(root, "gate"))
		                    : "unknown");
		return -1;
	}
	if (n < RUN_JSON_VERSION) {
		errtext_set(rd->err, rd->errlen, rd->name,
		            "format %s lacks what merging needs (the partition, every test, the "
		            "configuration digest); rerun the partition with this gate",
		            fmt);
		return -1;
	}
	r->version = n; /* only now: a refused result stays zeroed, as run_result_parse says */
	return 0;
}

static void read_partition(struct rd *rd, struct run_result *r, const json_t *p)
{
	if (!p || json_is_null(p))
		return;
	if (!json_is_object(p)) {
		bad(rd, "partition", "is not an object {\"k\", \"n\"}");
		return;
	}
	at(rd, "partition", -1);
	r->partition = (int)int_get(rd, p, "k", 0, 1, 1000000);
	r->partitions = (int)int_get(rd, p, "n", 0, 2, 1000000);
	if (!rd->failed && (r->partition < 1 || r->partition > r->partitions))
		bad(rd, "k", "is not from 1 to \"n\"");
	rd->where[0] = '\0';
}

int run_result_parse(struct run_result *out, const char *text, size_t len, const char *name,
                     char *err, size_t errlen)
{
	struct rd rd = {.name = name, .err = err, .errlen = errlen};
	json_error_t jerr;
	memset(out, 0, sizeof(*out));
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		/* an empty or cut-short file is an artifact that did not arrive whole (a job
		 * killed while writing, an upload or download that stopped): say that, and
		 * its fix, rather than "not a result" */
		size_t blank = 0;
		while (blank < len && strchr(" \t\r\n", text[blank]) && text[blank])
			blank++;
		if (blank == len)
			errtext_set(
			        err, errlen, name,
			        "the file is empty: not a gate run result; that partition's job "
			        "wrote nothing whole (see its log), rerun it or download its "
			        "result again");
		else if (json_error_code(&jerr) == json_error_premature_end_of_input ||
		         (size_t)jerr.position >= len) /* a token cut at the end: "fals" */
			errtext_set(err, errlen, name,
			            "line %d column %d: %s: the result is cut short (%zu bytes); "
			            "download that partition's result again, or rerun its job",
			            jerr.line, jerr.column, jerr.text, len);
		else
			errtext_set(err, errlen, name,
			            "line %d column %d: %s: not a gate run result (give the file "
			            "`gate run --json FILE` wrote)",
			            jerr.line, jerr.column, jerr.text);
		return -1;
	}
	if (read_format(&rd, out, root) < 0) {
		json_decref(root);
		return -1;
	}
	out->name = strdup(name);
	out->gate_version = str_dup(&rd, root, "gate");
	out->project = str_dup(&rd, root, "project");
	out->commit = str_dup(&rd, root, "commit");
	out->config_digest = str_dup(&rd, root, "config_digest");
	out->repo_root = str_dup(&rd, root, "repo_root");
	const char *verdict = json_string_value(json_object_get(root, "verdict"));
	if (!verdict || (strcmp(verdict, "passed") != 0 && strcmp(verdict, "failed") != 0))
		bad(&rd, "verdict", "is not \"passed\" or \"failed\"");
	out->passed = verdict && strcmp(verdict, "passed") == 0;
	out->started = int_get(&rd, root, "started", 0, 0, INT64_MAX);
	if (!out->name || !out->gate_version || !out->config_digest)
		bad(&rd, !out->gate_version ? "gate" : "config_digest", "is missing");
	read_partition(&rd, out, json_object_get(root, "partition"));
	out->merged_output = json_is_array(json_object_get(root, "merged"));
	read_tests(&rd, out, json_object_get(root, "tests"));
	out->tests.partition = out->partition;
	const json_t *fs = json_object_get(root, "findings");
	if (!json_is_array(fs))
		bad(&rd, "findings", "is not a list");
	size_t i;
	const json_t *f;
	json_array_foreach(fs, i, f)
	{
		if (rd.failed)
			break;
		at(&rd, "findings", (long)i);
		read_finding(&rd, &out->findings, f);
	}
	rd.where[0] = '\0';
	read_memory(&rd, &out->before, json_object_get(root, "before"), "before");
	read_memory(&rd, &out->after, json_object_get(root, "after"), "after");
	read_baseline(&rd, out, json_object_get(root, "baseline"));
	read_iterations(&rd, out, json_object_get(root, "iterations"));
	read_samples(&rd, out, json_object_get(root, "samples"));
	json_decref(root);
	if (rd.failed) {
		run_result_clear(out);
		return -1;
	}
	for (size_t t = 0; t < out->tests.count; t++)
		out->tests.tests[t].partition = out->partition;
	return 0;
}

int run_result_read(struct run_result *out, const char *path, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	memset(out, 0, sizeof(*out));
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > RUN_RESULT_MAX) {
		errtext_set(err, errlen, path,
		            "%lld bytes, more than the %d bytes a result may have (64 MB): not a "
		            "result gate wrote; give each partition's `gate run --json` file",
		            (long long)st.st_size, RUN_RESULT_MAX);
		return -1;
	}
	switch (readfile_bounded(path, RUN_RESULT_MAX, 0, &text, &len, err, errlen)) {
	case READFILE_OK: break;
	case READFILE_MISSING:
	case READFILE_ERROR: free(text); return -1;
	}
	int rc = run_result_parse(out, text, len, path, err, errlen);
	free(text);
	return rc;
}

void run_result_clear(struct run_result *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->gate_version);
	free(r->project);
	free(r->commit);
	free(r->config_digest);
	free(r->repo_root);
	test_run_clear(&r->tests);
	findings_clear(&r->findings);
	snapshot_clear(&r->before);
	snapshot_clear(&r->after);
	baseline_clear(&r->baseline);
	repeat_data_clear(&r->iterations);
	sample_series_clear(&r->samples);
	memset(r, 0, sizeof(*r));
}
