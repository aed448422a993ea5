/* ci/store/run_json.c: the run result as JSON (see run_json.h). */
#include "ci/store/run_json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/atomic.h"
#include "base/json_stdout.h"
#include "base/errtext.h"
#include "base/grow.h"
#include "base/utf8.h"
#include "ci/report/iterations.h"
#include "ci/store/fine_json.h" /* the run's "peak" and "rss" */
#include "ci/store/json_text.h"
#include "ci/store/snapshot_json.h"
#include "model/finding.h"
#include "model/tests.h"

/* ---- every test, as `gate merge` needs it to write the merged JUnit report ----
 * Written as text, not built as jansson objects: at 10 000 tests, building them and dumping
 * them took 100 of the document's 117 ms (gate's own time after the suite, while bare `mix
 * test` has exited). The document holds a placeholder string in their place ("cases" of
 * "tests"), and the text below replaces it: what jansson's dump would give (keys sorted, the
 * same indentation, the same escapes), but for text that is not UTF-8, where jansson gives up
 * on the whole document: here each invalid byte becomes U+FFFD. */
/* The placeholder carries 64 random bits, so that no text from the node (a table's name, a
 * finding's words) can pass for it: "\x01gate-cases-HEX\x01", which jansson dumps as
 * "\u0001gate-cases-HEX\u0001" (with its quotes). */
struct cases_placeholder {
	char value[64];  /* the string put in the document */
	char dumped[64]; /* how jansson's dump writes it */
};

static void cases_placeholder_make(struct cases_placeholder *p)
{
	uint64_t r = 0;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid() << 32 ^
		    (uint64_t)(uintptr_t)p;
	}
	snprintf(p->value, sizeof(p->value), "\x01gate-cases-%016llx\x01", (unsigned long long)r);
	snprintf(p->dumped, sizeof(p->dumped), "\"\\u0001gate-cases-%016llx\\u0001\"",
	         (unsigned long long)r);
}

/* s as a JSON string (null for NULL) */
static void text_json_string(struct textbuf *b, const char *s)
{
	if (!s) {
		textbuf_add(b, "null", 4);
		return;
	}
	textbuf_add(b, "\"", 1);
	const unsigned char *p = (const unsigned char *)s, *plain = p;
	while (*p) {
		uint32_t cp;
		size_t n = utf8_next(p, &cp);
		bool invalid = cp == 0xFFFD && n == 1;
		if (!invalid && cp >= 0x20 && cp != '"' && cp != '\\') {
			p += n;
			continue;
		}
		textbuf_add(b, (const char *)plain, (size_t)(p - plain));
		switch (cp) {
		case '"': textbuf_add(b, "\\\"", 2); break;
		case '\\': textbuf_add(b, "\\\\", 2); break;
		case '\b': textbuf_add(b, "\\b", 2); break;
		case '\f': textbuf_add(b, "\\f", 2); break;
		case '\n': textbuf_add(b, "\\n", 2); break;
		case '\r': textbuf_add(b, "\\r", 2); break;
		case '\t': textbuf_add(b, "\\t", 2); break;
		default:
			if (invalid)
				textbuf_add(b, "\xef\xbf\xbd", 3);
			else
				textbuf_printf(b, "\\u%04X", (unsigned)cp);
		}
		p += n;
		plain = p;
	}
	textbuf_add(b, (const char *)plain, (size_t)(p - plain));
	textbuf_add(b, "\"", 1);
}

static void text_indent(struct textbuf *b, size_t n)
{
	static const char spaces[] = "                                ";
	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		textbuf_add(b, spaces, sizeof(spaces) - 1);
	textbuf_add(b, spaces, n);
}

/* the "cases" array, its closing bracket at column col (its elements two further in) */
/* one `"key": "value",` line of a case, at column col */
static void case_string(struct textbuf *b, size_t col, const char *key, const char *value)
{
	text_indent(b, col);
	textbuf_printf(b, "\"%s\": ", key);
	text_json_string(b, value);
	textbuf_add(b, ",\n", 2);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* a measured test's own growth (--per-test), "delta": {...} in sorted keys, or null */
static void case_delta(struct textbuf *b, size_t col, const struct test_result *t)
{
	text_indent(b, col);
	if (!t->measured) {
		textbuf_add(b, "\"delta\": null,\n", 15);
		return;
	}
	const char *keys[MEM_CAT_COUNT + 2];
	size_t n = 0;
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		keys[n++] = mem_cat_name((enum mem_cat)c);
	keys[n++] = "ets_tables";
	keys[n++] = "process_count";
	qsort(keys, n, sizeof(keys[0]), key_cmp);
	textbuf_add(b, "\"delta\": {\n", 11);
	for (size_t i = 0; i < n; i++) {
		int cat = mem_cat_from_name(keys[i]);
		int64_t v = cat >= 0                             ? t->delta.mem[cat]
		            : strcmp(keys[i], "ets_tables") == 0 ? t->delta.ets_tables
		                                                 : t->delta.processes;
		text_indent(b, col + 2);
		textbuf_printf(b, "\"%s\": %lld%s\n", keys[i], (long long)v, i + 1 < n ? "," : "");
	}
	text_indent(b, col);
	textbuf_add(b, "},\n", 3);
}

static void cases_text(struct textbuf *b, const struct test_run *run, size_t col)
{
	if (!run || run->count == 0) {
		textbuf_add(b, "[]", 2);
		return;
	}
	textbuf_add(b, "[\n", 2);
	for (size_t i = 0; i < run->count; i++) {
		const struct test_result *t = &run->tests[i];
		text_indent(b, col + 2);
		textbuf_add(b, "{\n", 2);
		/* the keys in jansson's sorted order */
		case_string(b, col + 4, "app", t->app && *t->app ? t->app : NULL);
		text_indent(b, col + 4);
		textbuf_printf(b, "\"async\": %s,\n", t->async ? "true" : "false");
		case_delta(b, col + 4, t);
		case_string(b, col + 4, "file", t->file);
		text_indent(b, col + 4);
		textbuf_printf(b, "\"line\": %d,\n", t->line);
		text_indent(b, col + 4);
		textbuf_printf(b, "\"measured\": %s,\n", t->measured ? "true" : "false");
		case_string(b, col + 4, "message", t->message);
		case_string(b, col + 4, "module", t->module);
		case_string(b, col + 4, "name", t->name);
		case_string(b, col + 4, "reason", t->reason);
		case_string(b, col + 4, "state", test_state_name(t->state));
		text_indent(b, col + 4);
		textbuf_printf(b, "\"time_us\": %lld\n", (long long)t->time_us);
		text_indent(b, col + 2);
		textbuf_add(b, i + 1 < run->count ? "},\n" : "}\n", i + 1 < run->count ? 3 : 2);
	}
	text_indent(b, col);
	textbuf_add(b, "]", 1);
}

/* text (len bytes, jansson's dump; taken) with the placeholder replaced by the cases.
 * Returns the new text (malloc'd, *len updated), or NULL with why (out of memory; no
 * placeholder, which cannot happen: a document without its cases would be no run's). */
static char *cases_splice(char *text, size_t *len, const struct test_run *run,
                          const struct cases_placeholder *ph, char *why, size_t whylen)
{
	size_t phlen = strlen(ph->dumped);
	const char *at = memmem(text, *len, ph->dumped, phlen);
	if (!at) {
		free(text);
		snprintf(why, whylen,
		         "internal error: the tests' cases have no place in the document");
		return NULL;
	}
	/* the column of the line that holds the "cases" key */
	const char *line = at;
	while (line > text && line[-1] != '\n')
		line--;
	size_t col = 0;
	while (line + col < at && line[col] == ' ')
		col++;
	struct textbuf b = {0};
	textbuf_add(&b, text, (size_t)(at - text));
	cases_text(&b, run, col);
	const char *rest = at + phlen;
	textbuf_add(&b, rest, *len - (size_t)(rest - text));
	free(text);
	if (b.oom) {
		textbuf_free(&b);
		return NULL;
	}
	*len = b.len;
	return textbuf_take(&b);
}

/* each test module's attributed growth (the JUnit's suite properties, the summary's top
 * growing), so that `gate merge` reports it as the partition's run did */
static json_t *delta_json(const struct mem_delta *d)
{
	json_t *o = json_object();
	for (int c = 0; o && c < MEM_CAT_COUNT; c++)
		if (json_object_set_new(o, mem_cat_name((enum mem_cat)c),
		                        json_integer((json_int_t)d->mem[c])) < 0) {
			json_decref(o);
			return NULL;
		}
	/* the count of processes under a key of its own: "processes" is erlang:memory's */
	if (o &&
	    (json_object_set_new(o, "process_count", json_integer((json_int_t)d->processes)) < 0 ||
	     json_object_set_new(o, "ets_tables", json_integer((json_int_t)d->ets_tables)) < 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *modules_json(const struct test_run *run)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < run->nmodules; i++) {
		const struct module_growth *m = &run->modules[i];
		json_t *o = json_pack("{s:s?, s:b, s:b, s:I, s:I, s:o}", "module", m->module,
		                      "async", m->async, "finished", m->finished, "overlapped",
		                      (json_int_t)m->overlapped, "time_us", (json_int_t)m->time_us,
		                      "delta", delta_json(&m->delta));
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *tests_json(const struct test_run *run, const struct cases_placeholder *ph)
{
	struct test_counts tc = test_run_count(run);
	json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I}", "total", (json_int_t)tc.total, "passed",
	                      (json_int_t)tc.passed, "failed", (json_int_t)tc.failed, "skipped",
	                      (json_int_t)tc.skipped, "invalid", (json_int_t)tc.invalid);
	if (!o)
		return NULL;
	/* what the verdict is made of besides the counts (model_verdict_tally) */
	/* the cases are spliced in as text (cases_splice) */
	int bad = json_object_set_new(o, "cases", json_string(ph->value));
	bad |= json_object_set_new(o, "finished", json_boolean(run->finished));
	bad |= json_object_set_new(o, "suite_ran", json_boolean(run->suite_ran));
	bad |= json_object_set_new(o, "mix_reported", json_boolean(run->mix_reported));
	bad |= json_object_set_new(o, "mix_status", json_integer(run->mix_status));
	bad |= json_object_set_new(o, "mix_reason",
	                           run->mix_reason ? json_string(run->mix_reason) : json_null());
	bad |= json_object_set_new(o, "mix_explained", json_boolean(run->mix_explained));
	bad |= json_object_set_new(o, "seed", json_integer((json_int_t)run->seed));
	bad |= json_object_set_new(o, "modules", modules_json(run));
	bad |= json_object_set_new(o, "attribution",
	                           json_string(run->attribution == ATTRIBUTION_TEST     ? "test"
	                                       : run->attribution == ATTRIBUTION_MODULE ? "module"
	                                                                                : "off"));
	bad |= json_object_set_new(o, "attribution_sync", json_boolean(run->attribution_sync));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* the rest of a finding, so that `gate merge` reports it as the run did */
static int finding_more_json(json_t *o, const struct finding *f)
{
	int bad =
	        json_object_set_new(o, "detail", f->detail ? json_string(f->detail) : json_null());
	bad |= json_object_set_new(o, "explained",
	                           f->explained ? json_string(f->explained) : json_null());
	bad |= json_object_set_new(o, "warned", json_boolean(f->warned));
	bad |= json_object_set_new(o, "culprit",
	                           f->culprit ? json_string(f->culprit) : json_null());
	bad |= json_object_set_new(o, "culprit_test",
	                           f->culprit_test ? json_string(f->culprit_test) : json_null());
	bad |= json_object_set_new(o, "file", f->file ? json_string(f->file) : json_null());
	bad |= json_object_set_new(o, "line", json_integer(f->line));
	bad |= json_object_set_new(o, "unit",
	                           json_string(f->unit == UNIT_COUNT ? "count" : "bytes"));
	bad |= json_object_set_new(o, "show", json_integer((json_int_t)f->show));
	/* the structure a finding names, and what explains one that is context */
	if (f->structure_key) {
		bad |= json_object_set_new(o, "structure_key", json_string(f->structure_key));
		bad |= json_object_set_new(
		        o, "structure",
		        json_string(f->structure ? f->structure : f->structure_key));
	}
	if (f->explained_by)
		bad |= json_object_set_new(o, "explained_by", json_string(f->explained_by));
	/* what acts on it, also apart from the message: the culprit's file run alone
	 * (--confirm), the command that reproduces it */
	for (size_t k = 0; k < f->nparts; k++) {
		const struct finding_part *p = &f->parts[k];
		if ((p->kind == PART_CONFIRM || p->kind == PART_REPRODUCE) && p->text)
			bad |= json_object_set_new(
			        o, p->kind == PART_CONFIRM ? "confirm" : "reproduce",
			        json_string(p->text));
	}
	return bad ? -1 : 0;
}

static json_t *findings_json(const struct findings *fs)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < fs->count; i++) {
		const struct finding *f = &fs->items[i];
		json_t *o = json_pack("{s:s?, s:s?, s:s, s:I, s:I, s:I, s:I, s:f, s:s?}", "rule",
		                      f->rule, "subject", f->subject, "verdict",
		                      verdict_name(f->verdict), "before", (json_int_t)f->before,
		                      "after", (json_int_t)f->after, "delta", (json_int_t)f->delta,
		                      "floor", (json_int_t)f->floor, "max_pct", f->max_pct,
		                      "message", f->message);
		if (o && finding_more_json(o, f) < 0) {
			json_decref(o);
			o = NULL;
		}
		/* json_array_append_new takes o even when it fails */
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* a merged run's partitions: each one's --repeat runs and --sample series */
static json_t *parts_json(const struct run_json_part *p, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		json_t *o = json_pack(
		        "{s:i, s:o, s:o}", "k", p[i].k, "iterations",
		        p[i].iterations ? iterations_json(p[i].iterations) : json_null(), "samples",
		        p[i].samples ? samples_json(p[i].samples) : json_null());
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* a cluster's nodes: each one's verdict, findings and snapshots */
static json_t *nodes_json(const struct run_json_node *nd, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		bool passed = !nd[i].error && (!nd[i].findings || !findings_failed(nd[i].findings));
		static const struct findings none = {0};
		json_t *o =
		        json_pack("{s:s, s:o, s:s, s:o, s:o, s:o}", "node", nd[i].name, "error",
		                  nd[i].error ? json_string(nd[i].error) : json_null(), "verdict",
		                  passed ? "passed" : "failed", "findings",
		                  findings_json(nd[i].findings ? nd[i].findings : &none), "before",
		                  nd[i].before ? snapshot_json(nd[i].before) : json_null(), "after",
		                  nd[i].after ? snapshot_json(nd[i].after) : json_null());
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

void run_json_digest(char out[17], const char *text, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)text[i];
		h *= 1099511628211ULL;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The document; NULL when out of memory. */
static json_t *run_json_build(const struct run_json *d, const struct cases_placeholder *ph,
                              char *err, size_t errlen)
{
	json_t *root = json_object();
	json_t *base = d->baseline ? baseline_json(d->baseline, err, errlen) : json_null();
	if (!root || !base) {
		json_decref(root);
		json_decref(base);
		return NULL;
	}
	/* json_object_set_new takes the value even when it fails; a NULL value fails it */
	int bad = json_object_set_new(root, "baseline", base);
	bad |= json_object_set_new(root, "format", json_string(RUN_JSON_FORMAT));
	bad |= json_object_set_new(root, "gate", json_string(d->gate_version));
	bad |= json_object_set_new(root, "project", json_string(d->project));
	bad |= json_object_set_new(root, "commit",
	                           d->commit ? json_string(d->commit) : json_null());
	bad |= json_object_set_new(root, "verdict", json_string(d->passed ? "passed" : "failed"));
	bad |= json_object_set_new(root, "started", json_integer((json_int_t)d->started));
	bad |= json_object_set_new(root, "tests", tests_json(d->tests, ph));
	bad |= json_object_set_new(root, "findings", findings_json(d->findings));
	bad |= json_object_set_new(root, "before",
	                           d->before ? snapshot_json(d->before) : json_null());
	bad |= json_object_set_new(root, "after", d->after ? snapshot_json(d->after) : json_null());
	/* the run's peak and RSS against the allocators */
	bad |= json_object_set_new(root, "peak", d->after ? fine_json_peak(d->after) : json_null());
	bad |= json_object_set_new(root, "rss", fine_json_rss(d->before, d->after));
	/* for `gate merge`: which partition, the configuration, where the test files are */
	bad |= json_object_set_new(
	        root, "partition",
	        d->partition > 0 ? json_pack("{s:i, s:i}", "k", d->partition, "n", d->partitions)
	                         : json_null());
	bad |= json_object_set_new(root, "config_digest",
	                           d->config_digest ? json_string(d->config_digest) : json_null());
	bad |= json_object_set_new(root, "repo_root",
	                           d->repo_root ? json_string(d->repo_root) : json_null());
	if (d->merged) {
		json_t *m = json_array();
		for (size_t i = 0; m && i < d->nmerged; i++)
			if (json_array_append_new(m, json_integer(d->merged[i])) < 0) {
				json_decref(m);
				m = NULL;
			}
		bad |= json_object_set_new(root, "merged", m);
	}
	if (d->parts)
		bad |= json_object_set_new(root, "partitions", parts_json(d->parts, d->nparts));
	if (d->nodes)
		bad |= json_object_set_new(root, "nodes", nodes_json(d->nodes, d->nnodes));
	if (d->iterations)
		bad |= json_object_set_new(root, "iterations", iterations_json(d->iterations));
	if (d->samples)
		bad |= json_object_set_new(root, "samples", samples_json(d->samples));
	if (bad) {
		errtext_set(err, errlen, NULL, "out of memory");
		json_decref(root);
		return NULL;
	}
	return root;
}

int run_json_write(const char *path, const struct run_json *d, char *err, size_t errlen)
{
	char why[1024] = "out of memory";
	struct cases_placeholder ph;
	cases_placeholder_make(&ph);
	json_t *root = run_json_build(d, &ph, why, sizeof(why));
	size_t len = 0;
	char *text = root ? json_text(root, JSON_SORT_KEYS | JSON_INDENT(2), &len) : NULL;
	json_decref(root);
	if (text)
		text = cases_splice(text, &len, d->tests, &ph, why, sizeof(why));
	if (!text) {
		errtext_set(err, errlen, "--json", "%s: %s", path, why);
		return -1;
	}
	int rc = strcmp(path, "-") == 0
	                 ? json_stdout_write(text, len, why, sizeof(why))
	                 : atomic_file_replace_report(path, text, len, why, sizeof(why));
	free(text);
	if (rc < 0)
		errtext_set(err, errlen, "--json", "%s", why);
	return rc;
}
