/* gate/run/repeat_step.c: the loop behind `gate run --repeat N` (the judging is rules/repeat.c). */
#include "base/errtext.h"
#include "gate/probe/probe.h"
#include "gate/run/repeat_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/node/clock.h"
#include "model/figures.h"
#include "model/tests.h"

static size_t failed_of(const struct test_run *t)
{
	struct test_counts c = test_run_count(t);
	return c.failed + c.invalid;
}

/* gate_probe:repeat_reset/0: the node's working directory as for run 1, and requires left
 * half-done by the last run forgotten */
static int reset(struct session *ses, int timeout_ms, char *err, size_t errlen)
{
	struct term *root = NULL;
	const struct term *reply;
	ses->phase = "preparing the next run";
	int rc = eic_rpc0(&ses->conn, probe_entry(), "repeat_reset", timeout_ms, &root, &reply, err,
	                  errlen);
	int64_t stale = 0;
	if (rc == EIC_OK && term_int(reply, &stale) == 0 && stale > 0)
		session_progress(
		        ses,
		        "%lld file%s left half-required by a Code.require_file that "
		        "raised in the last run: forgotten, so that the next run can require "
		        "%s again",
		        (long long)stale, stale == 1 ? "" : "s", stale == 1 ? "it" : "them");
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}

int repeat_step_mark(struct session *ses, int timeout_ms, char *err, size_t errlen)
{
	struct term *root = NULL;
	const struct term *reply;
	int rc = eic_rpc0(&ses->conn, probe_entry(), "repeat_mark", timeout_ms, &root, &reply, err,
	                  errlen);
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}

int repeat_step_loop(struct repeat_step *st, struct session *ses, int rpc_timeout_ms,
                     const struct snapshot *before, struct test_run *tests, repeat_suite_fn suite,
                     void *arg, char *err, size_t errlen)
{
	repeat_point_from(&st->data.start, before);
	st->earlier = calloc(st->n, sizeof(*st->earlier));
	st->mids = calloc(st->n, sizeof(*st->mids));
	if (!st->earlier || !st->mids) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	for (size_t k = 1; k < st->n; k++) {
		/* after the warm-up: deep, and the born processes and tables are counted from here;
		 * after the later runs deep too, with their growth since run 1 (for the
		 * structures that grow in every run) */
		struct probe_snapshot_opts so = {.gc = true,
		                                 .deep = true,
		                                 .mark = k == 1 ? PROBE_MARK_BEFORE
		                                                : PROBE_MARK_AFTER,
		                                 .keep_peak = k > 1};
		struct snapshot *s = k == 1 ? &st->warm : &st->mids[st->nmids++];
		char phase[96], total[32];
		snprintf(phase, sizeof(phase),
		         "collecting garbage for the snapshot after run %zu of %zu", k, st->n);
		ses->phase = phase;
		long long t = clock_ms();
		if (probe_snapshot(&ses->conn, &so, rpc_timeout_ms, s, err, errlen) != EIC_OK)
			return -1;
		model_bytes_format(total, sizeof(total), s->mem[MEM_TOTAL]);
		session_progress(ses,
		                 "snapshot after run %zu of %zu: total %s, %lld processes "
		                 "(%lld ms)",
		                 k, st->n, total, (long long)s->process_count, clock_ms() - t);
		int rc = repeat_data_add(&st->data, s, tests->count, failed_of(tests),
		                         tests->wall_us);
		if (rc < 0) {
			errtext_set(err, errlen, NULL, "out of memory");
			return -1;
		}
		st->earlier[st->nearlier++] = *tests;
		memset(tests, 0, sizeof(*tests));
		if (reset(ses, rpc_timeout_ms, err, errlen) < 0)
			return -1;
		session_progress(ses, "run %zu of %zu (--repeat): mix test again in the same node",
		                 k + 1, st->n);
		if (suite(arg, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Appends the failed and invalid tests of an earlier run k to tests. */
static int merge_failures(struct test_run *tests, const struct test_run *from, size_t k)
{
	for (size_t i = 0; i < from->count; i++) {
		const struct test_result *t = &from->tests[i];
		if (t->state != TEST_FAILED && t->state != TEST_INVALID)
			continue;
		char suffix[32];
		snprintf(suffix, sizeof(suffix), " (run %zu)", k);
		const char *name = t->name ? t->name : "test";
		char *nm = malloc(strlen(name) + strlen(suffix) + 1);
		struct test_result *r = nm ? test_run_add(tests) : NULL;
		if (!r) {
			free(nm);
			return -1;
		}
		sprintf(nm, "%s%s", name, suffix);
		r->name = nm;
		r->module = dup_or_null(t->module);
		r->file = dup_or_null(t->file);
		r->message = dup_or_null(t->message);
		r->line = t->line;
		r->time_us = t->time_us;
		r->state = t->state;
		if ((t->module && !r->module) || (t->file && !r->file) ||
		    (t->message && !r->message))
			return -1;
	}
	return 0;
}

int repeat_step_finish(struct repeat_step *st, const struct snapshot *last, struct test_run *tests)
{
	if (repeat_data_add(&st->data, last, tests->count, failed_of(tests), tests->wall_us) < 0)
		return -1;
	if (repeat_judged_pair(&st->judged_before, &st->judged_after, &st->data, &st->warm, last) <
	    0)
		return -1;
	st->judged = true;
	tests->judged_runs = st->n > 1 ? (int)(st->n - 1) : 1;
	for (size_t k = 0; k < st->nearlier; k++)
		if (merge_failures(tests, &st->earlier[k], k + 1) < 0)
			return -1;
	return 0;
}

size_t repeat_step_runs(const struct repeat_step *st, const struct snapshot *before,
                        const struct snapshot *last, const struct snapshot **runs)
{
	size_t n = st->nmids + 2;
	if (!st->judged || n != st->n || n > REPEAT_MAX)
		return 0;
	runs[0] = before;
	runs[1] = &st->warm;
	for (size_t k = 0; k < st->nmids; k++)
		runs[k + 2] = &st->mids[k];
	runs[n] = last;
	return n;
}

void repeat_step_clear(struct repeat_step *st)
{
	if (!st)
		return;
	for (size_t k = 0; k < st->nearlier; k++)
		test_run_clear(&st->earlier[k]);
	free(st->earlier);
	snapshot_clear(&st->warm);
	for (size_t k = 0; k < st->nmids; k++)
		snapshot_clear(&st->mids[k]);
	free(st->mids);
	repeat_data_clear(&st->data);
	memset(st, 0, sizeof(*st));
}
