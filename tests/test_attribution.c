/* tests/test_attribution.c: growth per test module (sync alone, async split by who was busy)
 * and the culprit text failing rules get (rules/attribution.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/attribution.h"

#define EV(edge_, mod, async_, at, total, procs)                                                   \
	{                                                                                          \
		.edge = (edge_), .has_mem = true, .module = (mod), .async = (async_),              \
		.at_us = (at), .mem = {[MEM_TOTAL] = (total), [MEM_BINARY] = (total)},             \
		.processes = (procs)                                                               \
	}
/* an async test's edge: its time only */
#define TE(edge_, mod, at)                                                                         \
	{                                                                                          \
		.edge = (edge_), .module = (mod), .async = true, .at_us = (at)                     \
	}

static const struct module_growth *find(const struct test_run *run, const char *module)
{
	for (size_t i = 0; i < run->nmodules; i++)
		if (strcmp(run->modules[i].module, module) == 0)
			return &run->modules[i];
	fail_msg("no module %s", module);
	return NULL;
}

/* Sync modules run alone: each gets what grew between its own edges; what grew between
 * two modules is nobody's. */
static void test_sync_modules(void **state)
{
	(void)state;
	struct test_run run = {0};
	const struct module_event ev[] = {
	        EV(EDGE_MODULE_START, "Elixir.CleanTest", false, 0, 100, 10),
	        EV(EDGE_MODULE_FINISH, "Elixir.CleanTest", false, 5, 110, 10),
	        EV(EDGE_MODULE_START, "Elixir.LeakTest", false, 6, 5000, 10),
	        EV(EDGE_MODULE_FINISH, "Elixir.LeakTest", false, 16, 905000, 210),
	};
	assert_int_equal(attribution_build(&run, ev, 4), 0);
	assert_int_equal(run.nmodules, 2);
	assert_int_equal(find(&run, "Elixir.CleanTest")->delta.mem[MEM_TOTAL], 10);
	assert_int_equal(find(&run, "Elixir.LeakTest")->delta.mem[MEM_TOTAL], 900000);
	assert_int_equal(find(&run, "Elixir.LeakTest")->delta.processes, 200);
	assert_int_equal(find(&run, "Elixir.LeakTest")->time_us, 10);
	assert_true(find(&run, "Elixir.LeakTest")->finished);
	size_t top[5];
	assert_int_equal(attribution_rank(&run, MEM_TOTAL, false, top, 5), 2);
	assert_string_equal(run.modules[top[0]].module, "Elixir.LeakTest");
	assert_int_equal(attribution_rank(&run, ATTRIBUTION_KEY_PROCESSES, false, top, 5), 1);
	assert_string_equal(run.modules[top[0]].module, "Elixir.LeakTest");
	test_run_clear(&run);
}

/* Async modules overlap: the growth between two module edges goes to the modules running,
 * in proportion to how long each was busy (in its setup_all or a test) in that stretch. */
static void test_async_split_by_busy(void **state)
{
	(void)state;
	struct test_run run = {0};
	const struct module_event ev[] = {
	        EV(EDGE_MODULE_START, "Elixir.A", true, 0, 0, 0),
	        EV(EDGE_MODULE_START, "Elixir.Leak", true, 100, 1000, 0), /* A alone: +1000 */
	        TE(EDGE_TEST_START, "Elixir.A", 100),  /* A busy in setup 0..100 (counted above) */
	        TE(EDGE_TEST_FINISH, "Elixir.A", 110), /* A busy 10 */
	        TE(EDGE_TEST_START, "Elixir.Leak", 120), /* Leak in setup 100..120: 20 */
	        TE(EDGE_TEST_START, "Elixir.A", 150),
	        TE(EDGE_TEST_FINISH, "Elixir.A", 160),    /* A busy 10 more: 20 in all */
	        TE(EDGE_TEST_FINISH, "Elixir.Leak", 280), /* Leak busy 160 more: 180 in all */
	        /* A finishes at 300 with +100 000 since 100: A 20/200, Leak 180/200 */
	        EV(EDGE_MODULE_FINISH, "Elixir.A", true, 300, 101000, 0),
	        /* Leak alone and idle after its last test: all of it, evenly among one */
	        EV(EDGE_MODULE_FINISH, "Elixir.Leak", true, 310, 101010, 0),
	};
	assert_int_equal(attribution_build(&run, ev, sizeof(ev) / sizeof(ev[0])), 0);
	const struct module_growth *a = find(&run, "Elixir.A");
	const struct module_growth *leak = find(&run, "Elixir.Leak");
	assert_int_equal(a->delta.mem[MEM_TOTAL], 1000 + 10000);
	assert_int_equal(leak->delta.mem[MEM_TOTAL], 90000 + 10);
	assert_int_equal(a->overlapped, 1);
	assert_int_equal(leak->overlapped, 1);
	size_t top[2];
	assert_int_equal(attribution_rank(&run, MEM_BINARY, false, top, 2), 2);
	assert_string_equal(run.modules[top[0]].module, "Elixir.Leak");
	test_run_clear(&run);
}

/* A finish with no start is ignored; a module that never finished has no duration. */
static void test_unmatched_edges(void **state)
{
	(void)state;
	struct test_run run = {0};
	const struct module_event ev[] = {
	        EV(EDGE_MODULE_FINISH, "Elixir.Ghost", false, 0, 0, 0),
	        TE(EDGE_TEST_START, "Elixir.Ghost", 1),
	        EV(EDGE_MODULE_START, "Elixir.Cut", false, 2, 0, 0),
	        TE(EDGE_TEST_FINISH, "Elixir.Cut", 3),
	        EV(EDGE_MODULE_START, "Elixir.Other", false, 4, 40, 0),
	};
	assert_int_equal(attribution_build(&run, ev, 5), 0);
	assert_int_equal(run.nmodules, 2);
	assert_int_equal(run.modules[0].delta.mem[MEM_TOTAL], 40);
	assert_false(run.modules[0].finished);
	assert_int_equal(run.modules[0].time_us, 0);
	test_run_clear(&run);
}

/* The formatter hands an async module's tests that ended between two edges with figures on as
 * one test (the first one's start, the sum of their lengths), and a test still running at such
 * an edge as its own start (its finish follows as it comes): every module's share is what the
 * edges one by one give. */
static void test_async_edges_held_per_stretch(void **state)
{
	(void)state;
	struct test_run each = {0}, held = {0};
	const struct module_event one_by_one[] = {
	        EV(EDGE_MODULE_START, "Elixir.A", true, 0, 0, 0),
	        EV(EDGE_MODULE_START, "Elixir.B", true, 100, 1000, 0),
	        TE(EDGE_TEST_START, "Elixir.A", 100),
	        TE(EDGE_TEST_FINISH, "Elixir.A", 110),
	        TE(EDGE_TEST_START, "Elixir.B", 120),
	        TE(EDGE_TEST_FINISH, "Elixir.B", 140),
	        TE(EDGE_TEST_START, "Elixir.A", 150),
	        TE(EDGE_TEST_FINISH, "Elixir.A", 160),
	        TE(EDGE_TEST_START, "Elixir.B", 170),
	        TE(EDGE_TEST_START, "Elixir.A", 200),
	        TE(EDGE_TEST_FINISH, "Elixir.B", 230),
	        TE(EDGE_TEST_START, "Elixir.B", 240),
	        EV(EDGE_MODULE_START, "Elixir.C", true, 250, 51000, 0),
	        TE(EDGE_TEST_FINISH, "Elixir.A", 260),
	        TE(EDGE_TEST_START, "Elixir.A", 270),
	        TE(EDGE_TEST_FINISH, "Elixir.A", 290),
	        TE(EDGE_TEST_FINISH, "Elixir.B", 300),
	        EV(EDGE_MODULE_FINISH, "Elixir.A", true, 300, 101000, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.B", true, 320, 102000, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.C", true, 330, 102500, 0),
	};
	const struct module_event per_stretch[] = {
	        EV(EDGE_MODULE_START, "Elixir.A", true, 0, 0, 0),
	        EV(EDGE_MODULE_START, "Elixir.B", true, 100, 1000, 0),
	        /* A: 100..110 and 150..160 ended, 200 running; B: 120..140, 170..230, 240 */
	        TE(EDGE_TEST_START, "Elixir.A", 100),
	        TE(EDGE_TEST_FINISH, "Elixir.A", 120),
	        TE(EDGE_TEST_START, "Elixir.A", 200),
	        TE(EDGE_TEST_START, "Elixir.B", 120),
	        TE(EDGE_TEST_FINISH, "Elixir.B", 200),
	        TE(EDGE_TEST_START, "Elixir.B", 240),
	        EV(EDGE_MODULE_START, "Elixir.C", true, 250, 51000, 0),
	        /* the running ones finish as they come; A's 270..290 is held */
	        TE(EDGE_TEST_FINISH, "Elixir.A", 260),
	        TE(EDGE_TEST_FINISH, "Elixir.B", 300),
	        TE(EDGE_TEST_START, "Elixir.A", 270),
	        TE(EDGE_TEST_FINISH, "Elixir.A", 290),
	        EV(EDGE_MODULE_FINISH, "Elixir.A", true, 300, 101000, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.B", true, 320, 102000, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.C", true, 330, 102500, 0),
	};
	assert_int_equal(
	        attribution_build(&each, one_by_one, sizeof(one_by_one) / sizeof(one_by_one[0])),
	        0);
	assert_int_equal(
	        attribution_build(&held, per_stretch, sizeof(per_stretch) / sizeof(per_stretch[0])),
	        0);
	assert_int_equal(held.nmodules, 3);
	assert_int_equal(each.nmodules, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct module_growth *e = &each.modules[i], *h = find(&held, e->module);
		for (int c = 0; c < MEM_CAT_COUNT; c++)
			assert_int_equal(h->delta.mem[c], e->delta.mem[c]);
		assert_int_equal(h->time_us, e->time_us);
		assert_int_equal(h->overlapped, e->overlapped);
	}
	/* A was alone 0..100 (+1000) and busy 20 of 100..250 (C idle, B 80 + 10 of setup) */
	assert_int_equal(find(&held, "Elixir.A")->delta.mem[MEM_TOTAL] > 1000, true);
	test_run_clear(&each);
	test_run_clear(&held);
}

/* A module's growth found by name among the run's sorted ones: the first listed of a name
 * (as a pass in order finds it), none for a name not there. */
static void test_module_find_sorted(void **state)
{
	(void)state;
	struct test_run run = {0};
	const char *names[] = {"Elixir.C", "Elixir.A", "Elixir.B", "Elixir.A", "Elixir.AA"};
	size_t n = sizeof(names) / sizeof(names[0]);

	assert_null(attribution_modules_sorted(&run));
	run.modules = calloc(n, sizeof(*run.modules));
	assert_non_null(run.modules);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(run.modules[i].module = strdup(names[i]));
		run.modules[i].time_us = (int64_t)i;
	}
	run.nmodules = n;
	const struct module_growth **s = attribution_modules_sorted(&run);
	assert_non_null(s);
	for (size_t i = 0; i < n; i++) {
		const struct module_growth *m = attribution_module_find(s, n, names[i]);
		assert_non_null(m);
		assert_string_equal(m->module, names[i]);
		assert_int_equal(m->time_us, i == 3 ? 1 : (int64_t)i);
	}
	assert_null(attribution_module_find(s, n, "Elixir.B0"));
	assert_null(attribution_module_find(s, n, "Elixir."));
	assert_null(attribution_module_find(s, n, "Elixir.D"));
	assert_null(attribution_module_find(s, n, NULL));
	assert_null(attribution_module_find(NULL, 0, "Elixir.A"));
	free(s);
	test_run_clear(&run);
}

/* The culprit text: the module that grew the failing category is named first, and the born
 * groups, created tables and binary holders of the after-snapshot are listed. */
static void test_annotate(void **state)
{
	(void)state;
	struct findings f = {0};
	struct test_run run = {0};
	struct snapshot after = {0};
	const struct module_event ev[] = {
	        EV(EDGE_MODULE_START, "Elixir.CleanTest", false, 0, 0, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.CleanTest", false, 1, 10, 0),
	        EV(EDGE_MODULE_START, "Elixir.LeakTest", false, 2, 10, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.LeakTest", false, 3, 20000010, 300),
	};
	struct ets_info tables[1] = {{.name = "cache",
	                              .size = 5,
	                              .memory = 3000000,
	                              .owner_pid = "<0.9.0>",
	                              .owner_name = "Elixir.Holder",
	                              .created = true}};
	after.ets = tables;
	after.nets = 1;
	after.born_count = 300;
	assert_int_equal(attribution_build(&run, ev, 4), 0);
	run.attribution = ATTRIBUTION_MODULE;
	run.attribution_sync = true;
	assert_int_equal(findings_add(&f, "growth", "binary", VERDICT_FAIL, 0, 20000000, 0, 10,
	                              "binary grew"),
	                 0);
	assert_int_equal(findings_add(&f, "growth", "ets", VERDICT_PASS, 0, 0, 0, 10, "ok"), 0);
	assert_int_equal(findings_add(&f, "process", "born", VERDICT_FAIL, 0, 300, 0, -1,
	                              "300 processes born"),
	                 0);
	assert_int_equal(attribution_annotate(&f, NULL, &after, &run), 0);
	assert_string_equal(f.items[0].message,
	                    "binary grew; likely culprit: LeakTest (+20.0 MB binary of +20.0 MB "
	                    "judged)");
	assert_non_null(strstr(f.items[0].detail, "  1. LeakTest (sync) +20.0 MB binary"));
	/* CleanTest grew 10 B: named second */
	assert_non_null(strstr(f.items[0].detail, "  2. CleanTest (sync) +10 B binary"));
	assert_null(strstr(f.items[0].detail, "approximate"));
	assert_non_null(strstr(f.items[0].detail, "cache, 5 rows, 3.0 MB, owner Holder (<0.9.0>)"));
	assert_null(f.items[1].detail);
	assert_string_equal(f.items[1].message, "ok");
	/* the process rule ranks by the process count */
	assert_string_equal(f.items[2].message,
	                    "300 processes born; likely culprit: LeakTest (+300 processes of 300 "
	                    "judged)");
	findings_clear(&f);

	/* a count (the ports rule's) is no memory: no test's bytes are evidence for it, and the
	 * rule named its culprit itself */
	assert_int_equal(findings_add(&f, "ports", "open", VERDICT_FAIL, 0, 300, 50, -1,
	                              "port cat x 300 from test module LeakTest"),
	                 0);
	findings_show(&f, 0, UNIT_COUNT, 0);
	assert_int_equal(attribution_key(&f.items[0]), ATTRIBUTION_KEY_NONE);
	assert_int_equal(attribution_annotate(&f, NULL, &after, &run), 0);
	assert_string_equal(f.items[0].message, "port cat x 300 from test module LeakTest");
	assert_null(f.items[0].detail);
	findings_clear(&f);

	/* without the hook the edges are approximate, and the text says so */
	run.attribution_sync = false;
	assert_int_equal(findings_add(&f, "growth", "total", VERDICT_FAIL, 0, 1, 0, 10, "t"), 0);
	assert_int_equal(attribution_annotate(&f, NULL, NULL, &run), 0);
	assert_non_null(strstr(f.items[0].detail, "approximate edges"));
	findings_clear(&f);
	test_run_clear(&run);
}

/* What a module left behind (spawn ancestry) names it first, also against the growth
 * intervals, unless it is under a quarter of what the finding judged. */
static void test_owner_evidence(void **state)
{
	(void)state;
	struct findings f = {0};
	struct test_run run = {0};
	struct snapshot after = {0};
	const struct module_event ev[] = {
	        /* by the intervals, Busy grew binary most */
	        EV(EDGE_MODULE_START, "Elixir.Busy", true, 0, 0, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.Busy", true, 1, 9000000, 0),
	};
	struct module_owner owners[2] = {
	        {.module = "Elixir.Quiet",
	         .processes = 201,
	         .memory = 583000,
	         .bin_bytes = 19700000,
	         .tables = 1,
	         .table_bytes = 2600000},
	        {.module = "Elixir.Busy", .processes = 1, .memory = 3000, .bin_bytes = 100},
	};
	after.owners = owners;
	after.nowners = 2;
	after.born_count = 202;
	assert_int_equal(attribution_build(&run, ev, 2), 0);
	run.attribution = ATTRIBUTION_MODULE;
	run.attribution_sync = true;
	assert_int_equal(findings_add(&f, "growth", "binary", VERDICT_FAIL, 0, 20000000, 0, 10,
	                              "binary grew"),
	                 0);
	f.items[0].delta = 20000000;
	assert_int_equal(findings_add(&f, "process", "born", VERDICT_FAIL, 0, 202, 0, -1, "born"),
	                 0);
	f.items[1].delta = 202;
	/* 100 MB of ets growth: Quiet's 2.6 MB is under a quarter, the intervals decide */
	assert_int_equal(
	        findings_add(&f, "growth", "ets", VERDICT_FAIL, 0, 100000000, 0, 10, "ets"), 0);
	f.items[2].delta = 100000000;
	assert_int_equal(attribution_annotate(&f, NULL, &after, &run), 0);
	assert_string_equal(f.items[0].message, "binary grew; likely culprit: Quiet (its processes "
	                                        "hold 19.7 MB of refc binaries)");
	assert_non_null(strstr(f.items[0].detail, "test modules that left it behind"));
	assert_non_null(strstr(f.items[0].detail, "  1. Quiet its processes hold 19.7 MB"));
	assert_non_null(strstr(f.items[0].detail, "  2. Busy its processes hold 100 B"));
	assert_string_equal(f.items[1].message,
	                    "born; likely culprit: Quiet (left 201 processes alive, 583.0 kB)");
	assert_null(strstr(f.items[2].message, "Quiet"));
	assert_int_equal(attribution_owner_value(&owners[0], MEM_ATOM_USED), -1);
	after.owners = NULL; /* on the stack */
	after.nowners = 0;
	findings_clear(&f);
	test_run_clear(&run);
}

/* Culprits only with evidence. A module measured growing more than the whole run
 * (garbage between edges without GC: plug's +28.6 MB against +4.2 MB), under the noise floor,
 * or under a quarter of the judged growth is never named; the text says no test stands out
 * and the detail lists no figure larger than the judged growth. */
static void test_evidence(void **state)
{
	(void)state;
	struct findings f = {0};
	struct test_run run = {0};
	const struct module_event ev[] = {
	        EV(EDGE_MODULE_START, "Elixir.Churn", false, 0, 0, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.Churn", false, 1, 28600000, 0),
	        EV(EDGE_MODULE_START, "Elixir.Small", false, 2, 28600000, 0),
	        EV(EDGE_MODULE_FINISH, "Elixir.Small", false, 3, 28600000 + 200000, 0),
	};
	assert_true(attribution_evidence(4200000, 4200000, MEM_TOTAL));
	assert_true(attribution_evidence(1050000, 4200000, MEM_TOTAL));   /* a quarter */
	assert_false(attribution_evidence(1000000, 4200000, MEM_TOTAL));  /* less */
	assert_false(attribution_evidence(28600000, 4200000, MEM_TOTAL)); /* more than the whole */
	assert_true(attribution_evidence(4400000, 4200000, MEM_TOTAL));   /* garbage at its edges */
	assert_true(attribution_evidence(8600000, 4200000, MEM_TOTAL));   /* twice, plus noise */
	assert_false(attribution_evidence(8700000, 4200000, MEM_TOTAL));
	assert_false(attribution_evidence(200000, 300000, MEM_TOTAL)); /* under the noise */
	assert_false(attribution_evidence(5, 5, ATTRIBUTION_KEY_PROCESSES));
	assert_true(attribution_evidence(500, 500, ATTRIBUTION_KEY_PROCESSES));
	assert_false(attribution_evidence(1, 0, MEM_TOTAL));

	assert_int_equal(attribution_build(&run, ev, 4), 0);
	run.attribution = ATTRIBUTION_MODULE;
	run.attribution_sync = true;
	assert_int_equal(findings_add(&f, "growth", "total", VERDICT_FAIL, 25000000, 29200000, 0,
	                              10, "total grew"),
	                 0);
	assert_int_equal(attribution_annotate(&f, NULL, NULL, &run), 0);
	assert_non_null(strstr(f.items[0].message, "; no test stands out"));
	assert_null(strstr(f.items[0].message, "Churn"));
	/* the lists leave out the module measured above the whole growth */
	assert_true(!f.items[0].detail || !strstr(f.items[0].detail, "Churn"));
	findings_clear(&f);

	/* per test: a test measured at 5x the whole growth is not named either */
	struct test_result *t = test_run_add(&run);
	t->module = strdup("Elixir.Churn");
	t->name = strdup("test churns");
	t->measured = true;
	t->delta.mem[MEM_BINARY] = 5 * 2000000;
	run.attribution = ATTRIBUTION_TEST;
	assert_int_equal(findings_add(&f, "growth", "binary", VERDICT_FAIL, 0, 2000000, 0, 10,
	                              "binary grew"),
	                 0);
	assert_int_equal(attribution_annotate(&f, NULL, NULL, &run), 0);
	assert_non_null(strstr(f.items[0].message, "; no test stands out"));
	assert_null(strstr(f.items[0].message, "churns"));
	findings_clear(&f);

	/* a consistent share is named, with a figure no larger than the judged growth */
	t->delta.mem[MEM_BINARY] = 2600000;
	assert_int_equal(findings_add(&f, "growth", "binary", VERDICT_FAIL, 0, 2000000, 0, 10,
	                              "binary grew"),
	                 0);
	assert_int_equal(attribution_annotate(&f, NULL, NULL, &run), 0);
	assert_string_equal(f.items[0].message,
	                    "binary grew; likely culprit: Churn \"test churns\" "
	                    "(+2.0 MB binary of +2.0 MB judged)");
	findings_clear(&f);
	test_run_clear(&run);
}

/* Per test: the measured tests are ranked; unmeasured ones never are. */
static void test_rank_tests(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct test_result *a = test_run_add(&run), *b = test_run_add(&run),
	                   *c = test_run_add(&run);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	a->measured = true;
	a->delta.mem[MEM_ETS] = 10;
	b->delta.mem[MEM_ETS] = 1000; /* not measured */
	c->measured = true;
	c->delta.mem[MEM_ETS] = 500;
	size_t top[3];
	assert_int_equal(attribution_rank(&run, MEM_ETS, true, top, 3), 2);
	assert_int_equal(top[0], 2);
	assert_int_equal(top[1], 0);
	assert_int_equal(attribution_rank(&run, -1, true, top, 3), 0);
	char buf[64];
	attribution_value_format(buf, sizeof(buf), MEM_ETS, 2600000);
	assert_string_equal(buf, "+2.6 MB ets");
	attribution_value_format(buf, sizeof(buf), ATTRIBUTION_KEY_PROCESSES, -3);
	assert_string_equal(buf, "-3 processes");
	test_run_clear(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_sync_modules),
	        cmocka_unit_test(test_async_split_by_busy),
	        cmocka_unit_test(test_unmatched_edges),
	        cmocka_unit_test(test_annotate),
	        cmocka_unit_test(test_evidence),
	        cmocka_unit_test(test_owner_evidence),
	        cmocka_unit_test(test_rank_tests),
	        cmocka_unit_test(test_async_edges_held_per_stretch),
	        cmocka_unit_test(test_module_find_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
