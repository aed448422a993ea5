/* tests/report_fixture.h: one run's model for the CI writers' tests (Markdown, HTML,
 * annotations), with hostile text from the suite when asked, and golden-file helpers.
 * Header-only: each test is one program. */
#ifndef GATE_TESTS_REPORT_FIXTURE_H
#define GATE_TESTS_REPORT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/report/report.h"
#include "model/finding.h"
#include "model/tests.h"

/* A test name that tries every trick on every writer: HTML and XML markup, a CDATA end,
 * table pipes, a newline that starts a GitHub workflow command, CR, '%' escapes, ANSI
 * colour, invalid UTF-8 (a lone continuation byte, an overlong, a surrogate) and a C1
 * control. */
#define RFX_HOSTILE_NAME                                                                           \
	"test <script>alert(1)</script> ]]> | pipe\n::set-output name=x::y\r%0A,: "                \
	"\033[31mred\033[0m \x80 \xC0\xAF \xED\xA0\x80 \xC2\x85 [link](javascript:x) *b* _i_"

struct rfx {
	struct findings findings;
	struct test_run run;
	struct snapshot before, after;
	struct baseline hist[3];
	struct report_data d;
};

static inline char *rfx_dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static inline void rfx_test(struct test_run *run, const char *module, const char *name,
                            const char *file, int line, enum test_state st, const char *msg)
{
	struct test_result *t = test_run_add(run);
	if (!t)
		abort();
	t->module = rfx_dup(module);
	t->name = rfx_dup(name);
	t->file = rfx_dup(file);
	t->line = line;
	t->state = st;
	t->message = rfx_dup(msg);
}

/* Fills x with fixed figures; hostile adds a failed test and a finding with hostile text. */
static inline void rfx_build(struct rfx *x, bool hostile)
{
	memset(x, 0, sizeof(*x));
	static const int64_t before[MEM_CAT_COUNT] = {26400000, 3900000, 3800000,  22500000, 598200,
	                                              592400,   40800,   14300000, 712700};
	static const int64_t after[MEM_CAT_COUNT] = {42300000, 3800000, 3700000,  38500000, 598200,
	                                             594200,   8700000, 14400000, 7900000};
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		x->before.mem[c] = before[c];
		x->after.mem[c] = after[c];
		x->before.have[c] = x->after.have[c] = true;
		if (c == MEM_PROCESSES || c == MEM_ATOM)
			continue;
		bool fail = c == MEM_BINARY || c == MEM_ETS;
		char msg[256];
		snprintf(msg, sizeof(msg), "%s grew %lld -> %lld bytes",
		         mem_cat_name((enum mem_cat)c), (long long)before[c], (long long)after[c]);
		if (findings_add(&x->findings, "growth", mem_cat_name((enum mem_cat)c),
		                 fail ? VERDICT_FAIL : VERDICT_PASS, before[c], after[c], 1000000,
		                 c == MEM_CODE ? 50 : 10, msg) < 0)
			abort();
		/* shown as the growth rule shows its findings (rules/growth.c) */
		findings_show(&x->findings, x->findings.count - 1, UNIT_BYTES,
		              SHOW_CATEGORY | SHOW_FIGURES);
	}
	if (findings_add(&x->findings, "ets", "table corpus_cache", VERDICT_FAIL, 2400, 6700000, 0,
	                 -1,
	                 "ETS table corpus_cache (owner LeakEts.Corpus) grew 2.4 kB -> 6.7 MB "
	                 "(+60 000 rows), cap 2.0 MB") < 0 ||
	    findings_add(&x->findings, "process", "born", VERDICT_PASS, 0, 0, 0, -1,
	                 "0 processes born during the run are still alive") < 0 ||
	    findings_add(&x->findings, "baseline", "baseline", VERDICT_SKIP, 0, 0, 0, -1,
	                 "no baseline at HEAD:.gate/baseline.json: nothing to compare with") < 0)
		abort();

	/* the attribution's culprit lists, the same lines under two findings (shown once) */
	static const char detail[] =
	        "    test modules that grew ets most (light snapshots at their "
	        "edges, no GC):\n      1. Demo.CacheTest (sync) +7.1 MB ets, "
	        "+1 processes, +1 ETS tables\n";
	for (size_t i = 0; i < x->findings.count; i++) {
		struct finding *f = &x->findings.items[i];
		if (f->verdict == VERDICT_FAIL && (strcmp(f->subject, "ets") == 0 ||
		                                   strcmp(f->subject, "table corpus_cache") == 0))
			f->detail = rfx_dup(detail);
	}
	x->run.attribution = ATTRIBUTION_MODULE;
	x->run.attribution_sync = true;
	x->run.nmodules = 2;
	x->run.modules = calloc(2, sizeof(*x->run.modules));
	x->run.modules[0] = (struct module_growth){
	        .module = rfx_dup("Elixir.Demo.CacheTest"),
	        .finished = true,
	        .delta = {.mem = {[MEM_TOTAL] = 7300000, [MEM_ETS] = 7100000},
	                  .processes = 1,
	                  .ets_tables = 1}};
	x->run.modules[1] = (struct module_growth){.module = rfx_dup("Elixir.Demo.SlowTest"),
	                                           .async = true,
	                                           .overlapped = 1,
	                                           .finished = true,
	                                           .delta = {.mem = {[MEM_TOTAL] = 12000}}};

	x->after.nprocs = 2;
	x->after.procs = calloc(2, sizeof(*x->after.procs));
	x->after.procs[0] = (struct proc_info){.pid = rfx_dup("<0.50.0>"),
	                                       .name = rfx_dup("code_server"),
	                                       .current_function = rfx_dup("code_server:loop/1"),
	                                       .memory = 55100};
	x->after.procs[1] =
	        (struct proc_info){.pid = rfx_dup("<0.120.0>"),
	                           .initial_call = rfx_dup("Elixir.LeakEts.Corpus:init/1"),
	                           .current_function = rfx_dup("gen_server:loop/7"),
	                           .memory = 910000,
	                           .message_queue_len = 3,
	                           .bin_bytes = 4096,
	                           .born = true};
	x->before.nets = 1;
	x->before.ets = calloc(1, sizeof(*x->before.ets));
	x->before.ets[0] = (struct ets_info){.name = rfx_dup("corpus_cache"),
	                                     .id = rfx_dup("corpus_cache"),
	                                     .named = true,
	                                     .size = 1,
	                                     .memory = 2400};
	x->after.nets = 2;
	x->after.ets = calloc(2, sizeof(*x->after.ets));
	x->after.ets[0] = (struct ets_info){.name = rfx_dup("corpus_cache"),
	                                    .id = rfx_dup("corpus_cache"),
	                                    .named = true,
	                                    .size = 60000,
	                                    .memory = 6700000,
	                                    .owner_name = rfx_dup("LeakEts.Corpus")};
	x->after.ets[1] = (struct ets_info){.name = rfx_dup("sessions"),
	                                    .id = rfx_dup("#Ref<0.1>"),
	                                    .size = 3,
	                                    .memory = 4000,
	                                    .created = true,
	                                    .owner_pid = rfx_dup("<0.130.0>")};

	x->run.finished = true;
	rfx_test(&x->run, "Elixir.Demo.CacheTest", "test the cache holds what was put",
	         "/ws/proj/test/cache_test.exs", 4, TEST_PASSED, NULL);
	rfx_test(&x->run, "Elixir.Demo.CacheTest", "test the answer is right",
	         "/ws/proj/test/cache_test.exs", 12, TEST_FAILED,
	         "Assertion with == failed\ncode: assert 41 == 42\nleft: 41 | right: 42");
	rfx_test(&x->run, "Elixir.Demo.SlowTest", "test slow", NULL, 0, TEST_SKIPPED, "skipped");

	static const int64_t totals[3] = {40100000, 41800000, 40900000};
	for (int i = 0; i < 3; i++) {
		char commit[41];
		snprintf(commit, sizeof(commit), "%040d", i + 1);
		x->hist[i].commit = rfx_dup(commit);
		x->hist[i].timestamp = 1764672000 + 86400 * i;
		x->hist[i].test_count = 30 + i;
		x->hist[i].mem[MEM_TOTAL] = totals[i];
		x->hist[i].have[MEM_TOTAL] = true;
	}

	if (hostile) {
		rfx_test(&x->run, "Elixir.Evil<b>Mod</b>", RFX_HOSTILE_NAME,
		         "/ws/proj/test/evil,test:1.exs", 7, TEST_FAILED, RFX_HOSTILE_NAME);
		if (findings_add(&x->findings, "process", RFX_HOSTILE_NAME, VERDICT_FAIL, 0, 1, 0,
		                 -1, RFX_HOSTILE_NAME) < 0)
			abort();
	}

	x->d = (struct report_data){
	        .project = "demo",
	        .node = "gate_0123456789abcdef@127.0.0.1",
	        .gate_version = "0.1.0",
	        .started = 1764849600, /* 2025-12-04 12:00:00 UTC */
	        .before = &x->before,
	        .after = &x->after,
	        .findings = &x->findings,
	        .tests = &x->run,
	        .history = x->hist,
	        .nhistory = 3,
	        .baseline_where = "origin/main:.gate/baseline.json at commit 1a2b3c4d5e6f",
	        .junit_path = "_build/gate/junit.xml",
	        .root = "/ws/proj/",
	};
}

static inline void rfx_clear(struct rfx *x)
{
	findings_clear(&x->findings);
	test_run_clear(&x->run);
	snapshot_clear(&x->before);
	snapshot_clear(&x->after);
	for (int i = 0; i < 3; i++)
		baseline_clear(&x->hist[i]);
}

/* Compares text with the golden file at path (tests run from the repository's root);
 * GATE_UPDATE_GOLDEN=1 rewrites the file instead. Returns NULL when equal, else a message. */
static inline const char *rfx_golden(const char *path, const char *text, size_t len)
{
	static char msg[512];
	if (getenv("GATE_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
			return "cannot write the golden file";
		return NULL;
	}
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(msg, sizeof(msg), "no golden file %s (GATE_UPDATE_GOLDEN=1 writes it)",
		         path);
		return msg;
	}
	char *want = malloc(len + 2);
	size_t n = want ? fread(want, 1, len + 1, f) : 0;
	fclose(f);
	bool same = want && n == len && memcmp(want, text, len) == 0;
	size_t at = 0;
	while (want && at < n && at < len && want[at] == text[at])
		at++;
	free(want);
	if (same)
		return NULL;
	snprintf(msg, sizeof(msg),
	         "%s differs at byte %zu (got %zu bytes, golden %zu): check the "
	         "output, then GATE_UPDATE_GOLDEN=1 to accept it",
	         path, at, len, n);
	return msg;
}

#endif
