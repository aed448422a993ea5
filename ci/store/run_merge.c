/* ci/store/run_merge.c: the partitions' results checked against each other and joined into one run
 * (see run_merge.h). */
#include "ci/store/run_merge.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"
#include "model/verdict.h"

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The first result whose string at offset off differs from r[0]'s: 0 when none. */
static size_t first_different(const struct run_result *r, size_t n, size_t off)
{
	const char *first = *(char *const *)((const char *)&r[0] + off);
	for (size_t i = 1; i < n; i++)
		if (!same_str(*(char *const *)((const char *)&r[i] + off), first))
			return i;
	return 0;
}
#define FIRST_DIFFERENT(field) first_different(r, n, offsetof(struct run_result, field))

/* A file under root (the partition job's repository) as a path relative to it, so that the
 * merged reports link it wherever the merge job checked the repository out; else file. */
static const char *under_root(const char *file, const char *root)
{
	size_t n = root ? strlen(root) : 0;
	if (file && n && strncmp(file, root, n) == 0 && file[n] == '/')
		return file + n + 1;
	return file;
}

/* The project's place in its repository ("apps/api"; "." at its root), the same in every
 * job wherever each checked the repository out (GitLab's concurrent builds differ). */
static const char *project_in_repo(const struct run_result *r)
{
	if (r->project && r->repo_root && strcmp(r->project, r->repo_root) == 0)
		return ".";
	return under_root(r->project, r->repo_root);
}

/* The results agree on what they measured: one N, one commit, one configuration, one gate. */
static int check_same(const struct run_result *r, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].partition > 0)
			continue;
		if (r[i].merged_output) {
			/* a glob over the results that also caught an earlier merge's --json */
			errtext_set(
			        err, errlen, NULL,
			        "%s is the output of gate merge --json (partitions merged), not a "
			        "partition's result; leave it out of the results (write --json "
			        "outside the results' directory)",
			        r[i].name);
			return -1;
		}
		errtext_set(
		        err, errlen, NULL,
		        "%s is not a partition's result (its run had no mix test --partitions N, "
		        "N of 2 or more, with MIX_TEST_PARTITION set: a run of --partitions 1, or "
		        "none, is the whole suite, whose own verdict and reports need no merge); "
		        "run "
		        "each job as MIX_TEST_PARTITION=k gate run --json FILE -- --partitions N",
		        r[i].name);
		return -1;
	}
	for (size_t i = 1; i < n; i++)
		if (r[i].partitions != r[0].partitions) {
			errtext_set(
			        err, errlen, NULL,
			        "%s is partition %d of %d, but %s is partition %d of %d: the "
			        "jobs ran different --partitions; run every job with the same N",
			        r[i].name, r[i].partition, r[i].partitions, r[0].name,
			        r[0].partition, r[0].partitions);
			return -1;
		}
	size_t d = FIRST_DIFFERENT(commit);
	if (d) {
		char a[32], b[32];
		snprintf(a, sizeof(a), "%.12s", r[0].commit ? r[0].commit : "no commit");
		snprintf(b, sizeof(b), "%.12s", r[d].commit ? r[d].commit : "no commit");
		errtext_set(err, errlen, NULL,
		            "different commits: %s measured %s%s, %s measured %s%s; merge the "
		            "results of one pipeline (the same commit in every partition's job)",
		            r[0].name, a, r[0].commit ? "" : " (outside git)", r[d].name, b,
		            r[d].commit ? "" : " (outside git)");
		return -1;
	}
	for (size_t i = 1; i < n; i++) {
		const char *a = project_in_repo(&r[0]), *b = project_in_repo(&r[i]);
		if (same_str(a, b))
			continue;
		errtext_set(err, errlen, NULL,
		            "different projects: %s measured %s, %s measured %s; merge the "
		            "partitions of one project (give each project's results to a merge "
		            "of its own)",
		            r[0].name, a ? a : "no project", r[i].name, b ? b : "no project");
		return -1;
	}
	d = FIRST_DIFFERENT(config_digest);
	if (d) {
		errtext_set(err, errlen, NULL,
		            "different configurations: %s was judged with gate.toml digest %s, %s "
		            "with %s; give every partition's job the same gate.toml",
		            r[0].name, r[0].config_digest, r[d].name, r[d].config_digest);
		return -1;
	}
	d = FIRST_DIFFERENT(gate_version);
	if (d) {
		errtext_set(err, errlen, NULL,
		            "different gate versions: %s was written by gate %s, %s by gate %s; "
		            "install one gate version in every job",
		            r[0].name, r[0].gate_version, r[d].name, r[d].gate_version);
		return -1;
	}
	return 0;
}

/* A test and the result it came from, for finding one test in two partitions by sorting. */
struct test_ref {
	const struct test_result *t;
	size_t result;
};

static int str_order(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

static int by_test(const void *a, const void *b)
{
	const struct test_ref *x = a, *y = b;
	int c = str_order(x->t->module, y->t->module);
	if (c == 0)
		c = str_order(x->t->name, y->t->name);
	return c ? c : (x->result > y->result) - (x->result < y->result);
}

/* No partition twice, no test in two partitions. */
static int check_once(const struct run_result *r, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (r[i].partition == r[j].partition) {
				errtext_set(err, errlen, NULL,
				            "partition %d of %d twice: %s and %s; give each "
				            "partition's result once",
				            r[i].partition, r[i].partitions, r[i].name, r[j].name);
				return -1;
			}
	/* mix test gives each test file one partition: a test in two is two different splits.
	 * Sorted, not compared pair by pair: a suite large enough to partition has tens of
	 * thousands of tests */
	size_t total = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		total += r[i].tests.count;
	if (total < 2)
		return 0;
	struct test_ref *refs = calloc(total, sizeof(*refs));
	if (!refs) {
		errtext_set(err, errlen, NULL, "out of memory checking %zu tests", total);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t a = 0; a < r[i].tests.count; a++)
			refs[k++] = (struct test_ref){&r[i].tests.tests[a], i};
	qsort(refs, total, sizeof(*refs), by_test);
	int rc = 0;
	for (size_t a = 1; a < total && rc == 0; a++) {
		const struct test_ref *x = &refs[a - 1], *y = &refs[a];
		if (x->result == y->result || str_order(x->t->module, y->t->module) != 0 ||
		    str_order(x->t->name, y->t->name) != 0)
			continue;
		const struct run_result *ri = &r[x->result], *rj = &r[y->result];
		errtext_set(err, errlen, NULL,
		            "the test %s \"%s\" ran in partition %d (%s) and in partition %d (%s): "
		            "the jobs split the suite differently; run them with the same mix test "
		            "arguments",
		            x->t->module, x->t->name, ri->partition, ri->name, rj->partition,
		            rj->name);
		rc = -1;
	}
	free(refs);
	return rc;
}

int run_merge_check(const struct run_result *r, size_t n, const bool *allow, size_t nallow,
                    char *err, size_t errlen)
{
	if (n == 0 || n > RUN_MERGE_MAX) {
		errtext_set(err, errlen, NULL, "gate merge takes 1 to %d results, not %zu",
		            RUN_MERGE_MAX, n);
		return -1;
	}
	if (check_same(r, n, err, errlen) < 0 || check_once(r, n, err, errlen) < 0)
		return -1;
	int parts = r[0].partitions;
	for (size_t k = 1; k < nallow; k++)
		if (allow[k] && (int)k > parts) {
			errtext_set(
			        err, errlen, NULL,
			        "--allow-missing %zu: the suite has %d partitions (--partitions "
			        "%d in %s); name partitions from 1 to %d",
			        k, parts, parts, r[0].name, parts);
			return -1;
		}
	for (int k = 1; k <= parts; k++) {
		bool here = false;
		for (size_t i = 0; i < n && !here; i++)
			here = r[i].partition == k;
		if (here || (allow && (size_t)k < nallow && allow[k]))
			continue;
		errtext_set(err, errlen, NULL,
		            "partition %d of %d is missing: no result given for it (the results "
		            "say --partitions %d); give its job's result too, or --allow-missing "
		            "%d if that job may be absent",
		            k, parts, parts, k);
		return -1;
	}
	return 0;
}

static int by_partition(const void *a, const void *b)
{
	const struct run_result *x = a, *y = b;
	return (x->partition > y->partition) - (x->partition < y->partition);
}

void run_merge_sort(struct run_result *r, size_t n)
{
	qsort(r, n, sizeof(*r), by_partition);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Appends a copy of t to run, its file relative to root; -1 when out of memory. */
static int test_copy(struct test_run *run, const struct test_result *t, const char *root)
{
	struct test_result *c = test_run_add(run);
	if (!c)
		return -1;
	*c = *t;
	c->module = dup_or_null(t->module);
	c->name = dup_or_null(t->name);
	c->file = dup_or_null(under_root(t->file, root));
	c->message = dup_or_null(t->message);
	c->app = dup_or_null(t->app);
	c->reason = dup_or_null(t->reason);
	c->gate_tag = dup_or_null(t->gate_tag);
	c->gate_grew = dup_or_null(t->gate_grew);
	return (t->module && !c->module) || (t->name && !c->name) || (t->file && !c->file) ||
	                       (t->message && !c->message) || (t->app && !c->app) ||
	                       (t->reason && !c->reason) || (t->gate_tag && !c->gate_tag) ||
	                       (t->gate_grew && !c->gate_grew)
	               ? -1
	               : 0;
}

/* Appends a copy of each module's attributed growth of p to t. */
static int modules_copy(struct test_run *t, const struct test_run *p)
{
	if (!p->nmodules)
		return 0;
	struct module_growth *g =
	        realloc(t->modules, (t->nmodules + p->nmodules) * sizeof(*t->modules));
	if (!g)
		return -1;
	t->modules = g;
	for (size_t k = 0; k < p->nmodules; k++) {
		struct module_growth *c = &t->modules[t->nmodules];
		*c = p->modules[k];
		c->module = dup_or_null(p->modules[k].module);
		if (p->modules[k].module && !c->module)
			return -1;
		t->nmodules++;
	}
	return 0;
}

/* The suite's flags over all partitions: finished when every one finished; mix test's status
 * is the first partition's that was not zero, explained when every non-zero one was. */
static int merge_suite(struct test_run *t, const struct run_result *r, size_t n)
{
	t->finished = true;
	t->mix_explained = true;
	t->load_us = -1;
	for (size_t i = 0; i < n; i++) {
		const struct test_run *p = &r[i].tests;
		t->finished = t->finished && p->finished;
		t->suite_ran = t->suite_ran || p->suite_ran;
		t->mix_reported = t->mix_reported || p->mix_reported;
		if (p->mix_status != 0) {
			t->mix_explained = t->mix_explained && p->mix_explained;
			if (t->mix_status == 0) {
				t->mix_status = p->mix_status;
				if (p->mix_reason && !(t->mix_reason = strdup(p->mix_reason)))
					return -1;
			}
		}
		if (i == 0) {
			t->seed = p->seed;
			t->attribution = p->attribution;
			t->attribution_sync = p->attribution_sync;
		}
		/* the attribution the partitions share: the least of them, synchronous only when
		 * every partition's was */
		if (p->attribution < t->attribution)
			t->attribution = p->attribution;
		t->attribution_sync = t->attribution_sync && p->attribution_sync;
		if (modules_copy(t, p) < 0)
			return -1;
		for (size_t k = 0; k < p->count; k++)
			if (test_copy(t, &p->tests[k], r[i].repo_root) < 0)
				return -1;
	}
	if (t->mix_status == 0)
		t->mix_explained = false;
	return 0;
}

/* The last finding's culprit file made relative to root. */
static int relative_file(struct findings *fs, const char *root)
{
	struct finding *f = &fs->items[fs->count - 1];
	const char *rel = under_root(f->file, root);
	if (rel == f->file)
		return 0;
	char *c = strdup(rel);
	if (!c)
		return -1;
	free(f->file);
	f->file = c;
	return 0;
}

/* Each partition's findings, labelled, and all of them in one list. */
static int merge_findings(struct run_merged *m, const struct run_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char label[64], subject[600];
		snprintf(label, sizeof(label), "partition %d/%d", r[i].partition, r[i].partitions);
		if (!(m->labels[i] = strdup(label)))
			return -1;
		m->present[i] = r[i].partition;
		for (size_t k = 0; k < r[i].findings.count; k++) {
			const struct finding *f = &r[i].findings.items[k];
			snprintf(subject, sizeof(subject), "%s: %s", label,
			         f->subject ? f->subject : "");
			if (findings_add_copy(&m->per[i], f, NULL) < 0 ||
			    findings_add_copy(&m->findings, f, subject) < 0 ||
			    relative_file(&m->per[i], r[i].repo_root) < 0 ||
			    relative_file(&m->findings, r[i].repo_root) < 0)
				return -1;
		}
		/* a partition that failed with no failing finding nor failing test of its own
		 * (a late error: its --json written, its baseline commit refused) fails the merge
		 * too, saying so, so that the merge never passes what a partition failed */
		struct verdict_tally vt = model_verdict_tally(&r[i].findings, &r[i].tests);
		if (!r[i].passed && model_verdict(&vt) == GATE_PASSED) {
			char msg[1024];
			snprintf(
			        msg, sizeof(msg),
			        "the run of %s failed (\"verdict\": \"failed\" in %s) for a reason "
			        "its findings and tests do not carry; see that job's log",
			        label, r[i].name);
			if (findings_add(&m->per[i], "partition", label, VERDICT_FAIL, 0, 0, 0, -1,
			                 msg) < 0 ||
			    findings_add(&m->findings, "partition", label, VERDICT_FAIL, 0, 0, 0,
			                 -1, msg) < 0)
				return -1;
			m->failed_unexplained = true;
		}
	}
	return 0;
}

int run_merge_build(struct run_merged *out, const struct run_result *r, size_t n)
{
	memset(out, 0, sizeof(*out));
	out->partitions = n ? r[0].partitions : 0;
	out->n = n;
	out->present = calloc(n ? n : 1, sizeof(*out->present));
	out->labels = calloc(n ? n : 1, sizeof(*out->labels));
	out->per = calloc(n ? n : 1, sizeof(*out->per));
	if (!out->present || !out->labels || !out->per || merge_findings(out, r, n) < 0 ||
	    merge_suite(&out->tests, r, n) < 0) {
		run_merged_clear(out);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (r[i].started > 0 && (out->started == 0 || r[i].started < out->started))
			out->started = r[i].started;
	return 0;
}

void run_merged_clear(struct run_merged *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		if (m->labels)
			free(m->labels[i]);
		if (m->per)
			findings_clear(&m->per[i]);
	}
	free(m->labels);
	free(m->per);
	free(m->present);
	findings_clear(&m->findings);
	test_run_clear(&m->tests);
	memset(m, 0, sizeof(*m));
}

void run_merge_judged_figures(struct run_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < r[i].findings.count; k++) {
			const struct finding *f = &r[i].findings.items[k];
			int cat = f->rule && f->subject && strcmp(f->rule, "growth") == 0
			                  ? mem_cat_from_name(f->subject)
			                  : -1;
			if (cat < 0 || !r[i].before.have[cat] || !r[i].after.have[cat])
				continue;
			r[i].before.mem[cat] = f->before;
			r[i].after.mem[cat] = f->after;
		}
}

void run_merge_growth_print(FILE *out, const struct run_result *r, size_t n, bool color)
{
	static const enum mem_cat cats[] = {MEM_TOTAL, MEM_PROCESSES_USED, MEM_BINARY,
	                                    MEM_ETS,   MEM_ATOM_USED,      MEM_CODE};
	const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";
	fprintf(out,
	        "%sWhat grew, per partition (each in a node of its own) and in the whole "
	        "suite (their sum)%s\n",
	        bold, reset);
	fprintf(out, "  %-16s", "category");
	for (size_t i = 0; i < n; i++) {
		char label[32];
		snprintf(label, sizeof(label), "partition %d/%d", r[i].partition, r[i].partitions);
		fprintf(out, " %16s", label);
	}
	fprintf(out, " %16s\n", "whole");
	for (size_t c = 0; c < sizeof(cats) / sizeof(cats[0]); c++) {
		enum mem_cat cat = cats[c];
		int64_t sum = 0;
		bool any = false;
		fprintf(out, "  %-16s", mem_cat_name(cat));
		for (size_t i = 0; i < n; i++) {
			char v[32] = "-";
			if (r[i].before.have[cat] && r[i].after.have[cat]) {
				int64_t d = r[i].after.mem[cat] - r[i].before.mem[cat];
				char b[32];
				model_bytes_format(b, sizeof(b), d);
				snprintf(v, sizeof(v), "%s%s", d > 0 ? "+" : "", b);
				sum += d;
				any = true;
			}
			fprintf(out, " %16s", v);
		}
		char w[32] = "-";
		if (any) {
			char b[32];
			model_bytes_format(b, sizeof(b), sum);
			snprintf(w, sizeof(w), "%s%s", sum > 0 ? "+" : "", b);
		}
		fprintf(out, " %16s\n", w);
	}
	fputc('\n', out);
}

static int dup_field(char **out, const char *s)
{
	*out = s ? strdup(s) : NULL;
	return s && !*out ? -1 : 0;
}

int run_merge_baseline_whole(struct baseline *out, const struct run_result *r, size_t n)
{
	memset(out, 0, sizeof(*out));
	const struct baseline *first = NULL;
	for (size_t i = 0; i < n && !first; i++)
		if (r[i].have_baseline)
			first = &r[i].baseline;
	if (!first)
		return -1;
	out->format_version = first->format_version;
	out->commit_dirty = false;
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		out->have[c] = true;
	for (size_t i = 0; i < n; i++) {
		const struct baseline *b = &r[i].baseline;
		if (!r[i].have_baseline)
			continue;
		for (int c = 0; c < MEM_CAT_COUNT; c++) {
			out->have[c] = out->have[c] && b->have[c];
			out->mem[c] += b->mem[c];
		}
		out->process_count += b->process_count;
		out->atom_count += b->atom_count;
		out->test_count += b->test_count;
		out->commit_dirty = out->commit_dirty || b->commit_dirty;
		if (b->timestamp > out->timestamp)
			out->timestamp = b->timestamp;
	}
	if (dup_field(&out->gate_version, first->gate_version) < 0 ||
	    dup_field(&out->otp_release, first->otp_release) < 0 ||
	    dup_field(&out->elixir_version, first->elixir_version) < 0 ||
	    dup_field(&out->commit, first->commit) < 0) {
		baseline_clear(out);
		return -1;
	}
	return 0;
}
