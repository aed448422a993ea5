/* ci/run_json.c: the run result as JSON (see run_json.h). */
#include "ci/run_json.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ci/atomic.h"
#include "ci/errtext.h"
#include "ci/fine_json.h" /* issue 27 */
#include "ci/iterations.h"
#include "ci/json_text.h"
#include "ci/snapshot_json.h"

static json_t *tests_json(const struct test_run *run)
{
	struct test_counts tc = test_run_count(run);
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "total", (json_int_t)tc.total, "passed",
	                 (json_int_t)tc.passed, "failed", (json_int_t)tc.failed, "skipped",
	                 (json_int_t)tc.skipped, "invalid", (json_int_t)tc.invalid);
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
		/* issue 25: the structure a finding names, and what explains one that is context */
		if (o && f->structure &&
		    json_object_set_new(o, "structure", json_string(f->structure)) < 0)
			o = (json_decref(o), NULL);
		if (o && f->explained_by &&
		    json_object_set_new(o, "explained_by", json_string(f->explained_by)) < 0)
			o = (json_decref(o), NULL);
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The document; NULL when out of memory. */
static json_t *run_json_build(const struct run_json *d, char *err, size_t errlen)
{
	json_t *root = json_object();
	json_t *base = baseline_json(d->baseline, err, errlen);
	if (!root || !base) {
		json_decref(root);
		json_decref(base);
		return NULL;
	}
	/* json_object_set_new takes the value even when it fails; a NULL value fails it */
	int bad = json_object_set_new(root, "baseline", base);
	bad |= json_object_set_new(root, "format", json_string("gate.run/1"));
	bad |= json_object_set_new(root, "gate", json_string(d->gate_version));
	bad |= json_object_set_new(root, "project", json_string(d->project));
	bad |= json_object_set_new(root, "commit",
	                           d->commit ? json_string(d->commit) : json_null());
	bad |= json_object_set_new(root, "verdict", json_string(d->passed ? "passed" : "failed"));
	bad |= json_object_set_new(root, "started", json_integer((json_int_t)d->started));
	bad |= json_object_set_new(root, "tests", tests_json(d->tests));
	bad |= json_object_set_new(root, "findings", findings_json(d->findings));
	bad |= json_object_set_new(root, "before", snapshot_json(d->before));
	bad |= json_object_set_new(root, "after", snapshot_json(d->after));
	/* issue 27: the run's peak and RSS against the allocators */
	bad |= json_object_set_new(root, "peak", d->after ? fine_json_peak(d->after) : json_null());
	bad |= json_object_set_new(root, "rss", fine_json_rss(d->before, d->after));
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
	json_t *root = run_json_build(d, why, sizeof(why));
	size_t len = 0;
	char *text = root ? json_text(root, JSON_SORT_KEYS | JSON_INDENT(2), &len) : NULL;
	json_decref(root);
	if (!text) {
		errtext_set(err, errlen, "--json", "%s: %s", path, why);
		return -1;
	}
	int rc = atomic_file_replace(path, text, len, why, sizeof(why));
	free(text);
	if (rc < 0)
		errtext_set(err, errlen, "--json", "%s", why);
	return rc;
}
