/* tests/test_origins.c: the fine level's rules on hand-built snapshots: allocation
 * origins named in the finding they explain, RSS beyond what the BEAM mapped, the run's peak
 * and the largest heaps. */
#include "tests/rules_fixture.h"

#include "model/finding.h"
#include "model/tests.h"
#include "rules/origins.h"
#include "rules/peak.h"
#include "rules/rss.h"
#include "rules/tags.h"

/* A fine level with RSS and what the BEAM mapped. */
static void fine(struct snapshot *s, int64_t rss, int64_t mapped)
{
	s->fine.have = s->fine.have_rss = s->fine.have_mapped = true;
	s->fine.rss = s->fine.hwm = rss;
	s->fine.mapped = mapped;
	s->fine.allocated = mapped / 2;
	s->fine.hist_start = 128;
	s->fine.have_origins = true;
}

/* One {origin, type} with n blocks in bucket k (hist_start 128, 18 buckets). */
static void origin(struct snapshot *s, const char *org, const char *type, size_t k, int64_t n)
{
	struct fine_level *f = &s->fine;
	f->origins = realloc(f->origins, (f->norigins + 1) * sizeof(*f->origins));
	assert_non_null(f->origins);
	struct alloc_origin *o = &f->origins[f->norigins++];
	memset(o, 0, sizeof(*o));
	o->origin = strdup(org);
	o->type = strdup(type);
	o->nhist = 18;
	o->hist[k] = n;
}

static void test_origins_grown(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct origin_growth g[3];
	snap(&b);
	snap(&a);
	fine(&b, 60000000, 30000000);
	fine(&a, 60000000, 30000000);
	origin(&b, "system", "nif_internal", 3, 100);
	origin(&a, "system", "nif_internal", 3, 120);
	/* enif_alloc(1000): bucket 3 holds [512, 1024) with hist_start 128 */
	origin(&a, "Elixir.FineNif.Native", "nif_internal", 3, 30000);
	origin(&a, "tcp_inet", "drv_binary", 10, 2); /* 2 x [64 kB, 128 kB): under the floor */
	size_t n = origins_grown(g, 3, &b, &a);
	assert_int_equal(n, 1);
	assert_string_equal(g[0].origin, "Elixir.FineNif.Native");
	assert_int_equal(g[0].blocks, 30000);
	assert_int_equal(g[0].low, 30000 * 512);
	assert_int_equal(g[0].high, 30000 * 1024);
	char buf[256];
	origins_format(buf, sizeof(buf), &g[0]);
	assert_string_equal(buf,
	                    "NIF FineNif.Native: +30 000 blocks (15.4 MB-30.7 MB, nif_internal)");
	/* a snapshot without origins (instrument missing): nothing, no guess */
	b.fine.have_origins = false;
	assert_int_equal(origins_grown(g, 3, &b, &a), 0);
	snapshot_clear(&b);
	snapshot_clear(&a);
}

static void test_origins_open_bucket(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct origin_growth g[1];
	snap(&b);
	snap(&a);
	fine(&b, 1, 1);
	fine(&a, 1, 1);
	origin(&a, "system", "binary", 17, 1); /* the last bucket: 128 << 16 = 8 MB and up */
	assert_int_equal(origins_grown(g, 1, &b, &a), 1);
	assert_true(g[0].open);
	char buf[256];
	origins_format(buf, sizeof(buf), &g[0]);
	assert_string_equal(buf, "the runtime: +1 blocks (at least 8.4 MB, binary)");
	snapshot_clear(&b);
	snapshot_clear(&a);
}

/* The origin goes first in the failing system finding; a passing one is left alone; no
 * finding is added. */
static void test_origins_check(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct fine_config c;
	fine_config_default(&c);
	snap(&b);
	snap(&a);
	fine(&b, 1, 1);
	fine(&a, 1, 1);
	origin(&a, "Elixir.FineNif.Native", "nif_internal", 3, 30000);
	assert_int_equal(findings_add(&f, "growth", "system", VERDICT_FAIL, 20000000, 50000000, 0,
	                              10, "system grew"),
	                 0);
	assert_int_equal(findings_add(&f, "growth", "ets", VERDICT_FAIL, 0, 9, 0, 10, "ets grew"),
	                 0);
	assert_int_equal(findings_add(&f, "growth", "total", VERDICT_PASS, 0, 9, 0, 10, "fine"), 0);
	findings_show(&f, 0, UNIT_BYTES, SHOW_CATEGORY);
	assert_int_equal(origins_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 3);
	assert_string_equal(f.items[0].message,
	                    "allocated by NIF FineNif.Native: +30 000 blocks (15.4 MB-30.7 MB, "
	                    "nif_internal); system grew");
	assert_string_equal(f.items[1].message, "ets grew");
	assert_string_equal(f.items[2].message, "fine");
	findings_clear(&f);
	snapshot_clear(&b);
	snapshot_clear(&a);
}

/* The runtime's own blocks (a process's binaries) name no code: a failing binary row whose
 * growth only the runtime allocated keeps its own message. */
static void test_origins_runtime_only(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct fine_config c;
	fine_config_default(&c);
	snap(&b);
	snap(&a);
	fine(&b, 1, 1);
	fine(&a, 1, 1);
	origin(&a, "system", "binary", 10, 317);
	assert_int_equal(findings_add(&f, "growth", "binary", VERDICT_FAIL, 0, 3000000, 0, 10,
	                              "process Settle.Keeper holds +3.0 MB"),
	                 0);
	findings_show(&f, 0, UNIT_BYTES, SHOW_CATEGORY);
	assert_int_equal(origins_check(&f, &b, &a, &c), 0);
	assert_string_equal(f.items[0].message, "process Settle.Keeper holds +3.0 MB");
	findings_clear(&f);
	snapshot_clear(&b);
	snapshot_clear(&a);
}

static void test_rss(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct fine_config c;
	fine_config_default(&c);
	assert_int_equal(c.rss_max_unaccounted, RULES_OFF); /* opt-in */
	c.rss_max_unaccounted = 32000000;
	snap(&b);
	snap(&a);
	/* a NIF's malloc: RSS +60 MB, the BEAM mapped +1 MB */
	fine(&b, 62000000, 40000000);
	fine(&a, 122000000, 41000000);
	a.fine.peak_note = NULL;
	assert_int_equal(rss_unaccounted(&b, &a), 59000000);
	assert_int_equal(rss_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "rss", "outside the BEAM", VERDICT_FAIL);
	has(x, "RSS 62.0 MB -> 122.0 MB (+60.0 MB)");
	has(x, "+1.0 MB (carriers +500.0 kB): +59.0 MB outside");
	has(x, "+59.0 MB outside the BEAM's allocators (a NIF's malloc");
	has(x, "limit 32.0 MB");
	assert_int_equal(x->delta, 59000000);
	findings_clear(&f);

	/* a transient peak: RSS +700 MB, all of it mapped by the BEAM (mseg's cache) */
	a.fine.rss = 762000000;
	a.fine.mapped = 745000000;
	assert_int_equal(rss_check(&f, &b, &a, &c), 0);
	expect(&f, "rss", "outside the BEAM", VERDICT_PASS);
	findings_clear(&f);

	/* off: reported, not judged */
	a.fine.rss = 122000000;
	a.fine.mapped = 41000000;
	c.rss_max_unaccounted = RULES_OFF;
	assert_int_equal(rss_check(&f, &b, &a, &c), 0);
	has(expect(&f, "rss", "outside the BEAM", VERDICT_PASS), "not judged");
	findings_clear(&f);

	/* no /proc in the node: said, not skipped silently */
	a.fine.have_rss = false;
	a.fine.no_rss = strdup("cannot read /proc/self/status in the node");
	assert_int_equal(rss_check(&f, &b, &a, &c), 0);
	has(expect(&f, "rss", "outside the BEAM", VERDICT_SKIP), "cannot read /proc/self/status");
	findings_clear(&f);

	/* an older probe (no fine level): nothing */
	a.fine.have = false;
	assert_int_equal(rss_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 0);
	snapshot_clear(&b);
	snapshot_clear(&a);
}

static void test_rss_culprit(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct fine_config c;
	fine_config_default(&c);
	c.rss_max_unaccounted = 32000000; /* opt-in */
	snap(&b);
	snap(&a);
	fine(&b, 62000000, 40000000);
	fine(&a, 122000000, 40000000);
	a.fine.rss_grew = calloc(2, sizeof(*a.fine.rss_grew));
	a.fine.nrss_grew = 2;
	a.fine.rss_grew[0] = (struct rss_grower){strdup("Elixir.FineNif.NativeTest"), 59500000};
	a.fine.rss_grew[1] = (struct rss_grower){strdup("Elixir.FineNif.PeakTest"), 400000};
	assert_int_equal(rss_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "rss", "outside the BEAM", VERDICT_FAIL);
	has(x, "likely culprit: FineNif.NativeTest (RSS +59.5 MB while it ran)");
	assert_string_equal(x->culprit, "Elixir.FineNif.NativeTest");
	assert_null(x->culprit_test);
	findings_clear(&f);
	/* no module holds half of it: said so, no culprit */
	a.fine.rss_grew[0].bytes = 20000000;
	assert_int_equal(rss_check(&f, &b, &a, &c), 0);
	x = expect(&f, "rss", "outside the BEAM", VERDICT_FAIL);
	assert_null(x->culprit);
	has(x, "no test module's RSS grew by half of it");
	findings_clear(&f);
	snapshot_clear(&b);
	snapshot_clear(&a);
}

/* The allocated peak: an upper bound, raised by the run or not; nothing from an older probe;
 * in the run's peak finding. */
static void test_peak_allocated(void **state)
{
	(void)state;
	struct fine_level f = {0};
	char buf[256];
	peak_allocated(buf, sizeof(buf), &f);
	assert_string_equal(buf, "");
	f.have_allocated_max = true;
	f.allocated_max = 640000000;
	f.allocated_max_before = 46000000;
	peak_allocated(buf, sizeof(buf), &f);
	assert_string_equal(buf, "allocated peak (carriers) at most 640.0 MB, raised by the run "
	                         "(46.0 MB before it)");
	f.allocated_max_before = 640000000;
	peak_allocated(buf, sizeof(buf), &f);
	assert_string_equal(buf, "allocated peak (carriers) not raised by the run: at most 640.0 "
	                         "MB since the node started, set before it");
}

/* The tracker's report: one window (a test module with one test) and one heap. */
static void peak_report(struct snapshot *a, int64_t peak)
{
	struct fine_level *f = &a->fine;
	f->have_peak = f->hwm_reset = true;
	f->peak = peak;
	f->rss_before = 62000000;
	f->monitor = strdup("gate");
	f->heap_watch = 64000000;
	f->windows = calloc(1, sizeof(*f->windows));
	f->nwindows = 1;
	f->windows[0] = (struct peak_window){
	        peak, 64000000, strdup("Elixir.FineNif.PeakTest"),
	        strdup("Elixir.FineNif.PeakTest\ttest builds a big list for a moment")};
	f->heaps = calloc(1, sizeof(*f->heaps));
	f->nheaps = 1;
	f->heaps[0] =
	        (struct heap_seen){strdup("<0.200.0>"), strdup("Elixir.FineNif.Batcher"),
	                           strdup("Elixir.FineNif.PeakTest\ttest sums a batch"), 126800000};
}

static void test_peak(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct fine_config c;
	fine_config_default(&c);
	assert_int_equal(c.peak_max, RULES_OFF);
	assert_int_equal(c.max_heap, RULES_OFF);
	snap(&b);
	snap(&a);
	fine(&b, 62000000, 40000000);
	fine(&a, 70000000, 45000000);
	peak_report(&a, 801000000);
	/* off by default: context */
	assert_int_equal(peak_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "peak", "run", VERDICT_PASS);
	has(x, "peak RSS 801.0 MB during the run (62.0 MB at its start) in FineNif.PeakTest, "
	       "test \"test builds a big list for a moment\"");
	has(x, "largest heap: FineNif.Batcher (<0.200.0>) reached a heap of 126.8 MB during "
	       "FineNif.PeakTest test \"test sums a batch\"");
	has(x, "not judged");
	assert_null(x->culprit); /* where it fell is context: no culprit for a passing peak */
	assert_null(find(&f, "heap", "heap"));
	findings_clear(&f);
	/* the allocated peak goes with it when the probe sent it */
	a.fine.have_allocated_max = true;
	a.fine.allocated_max = 640000000;
	a.fine.allocated_max_before = 46000000;
	assert_int_equal(peak_check(&f, &b, &a, &c), 0);
	has(expect(&f, "peak", "run", VERDICT_PASS),
	    "; allocated peak (carriers) at most 640.0 MB, raised by the run (46.0 MB before it)");
	findings_clear(&f);
	a.fine.have_allocated_max = false;

	/* [peak] max and [process] max_heap */
	c.peak_max = 500000000;
	c.max_heap = 100000000;
	assert_int_equal(peak_check(&f, &b, &a, &c), 0);
	x = expect(&f, "peak", "run", VERDICT_FAIL);
	assert_string_equal(x->culprit, "Elixir.FineNif.PeakTest");
	assert_string_equal(x->culprit_test, "test builds a big list for a moment");
	x = expect(&f, "heap", "heap FineNif.Batcher", VERDICT_FAIL);
	has(x, "process FineNif.Batcher (<0.200.0>) reached a heap of 126.8 MB during "
	       "FineNif.PeakTest test \"test sums a batch\", over the limit 100.0 MB");
	assert_string_equal(x->culprit_test, "test sums a batch");
	assert_int_equal(findings_failed(&f), 2);
	findings_clear(&f);

	/* under both limits */
	c.peak_max = 900000000;
	c.max_heap = 200000000;
	assert_int_equal(peak_check(&f, &b, &a, &c), 0);
	expect(&f, "peak", "run", VERDICT_PASS);
	expect(&f, "heap", "heap", VERDICT_PASS);
	assert_int_equal(findings_failed(&f), 0);
	findings_clear(&f);
	snapshot_clear(&b);
	snapshot_clear(&a);
}

/* The suite's own system monitor is kept, and max_heap says it was not judged. */
static void test_peak_suite_monitor(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct fine_config c;
	fine_config_default(&c);
	c.max_heap = 100000000;
	snap(&b);
	snap(&a);
	fine(&b, 62000000, 40000000);
	fine(&a, 70000000, 45000000);
	peak_report(&a, 300000000);
	free(a.fine.monitor);
	a.fine.monitor = strdup("the node's own system monitor <0.99.0> was kept: gate watched "
	                        "no heaps (a node has one system monitor)");
	a.fine.nheaps = 0;
	assert_int_equal(peak_check(&f, &b, &a, &c), 0);
	has(expect(&f, "heap", "heap", VERDICT_SKIP), "own system monitor <0.99.0> was kept");
	findings_clear(&f);
	a.fine.nheaps = 1;
	snapshot_clear(&b);
	snapshot_clear(&a);
}

/* No /proc: the peak is said to be unmeasured. */
static void test_peak_unmeasured(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct fine_config c;
	fine_config_default(&c);
	c.peak_max = 100;
	snap(&b);
	snap(&a);
	fine(&b, 1, 1);
	fine(&a, 1, 1);
	a.fine.peak_note = strdup("cannot read /proc/self/status in the node");
	assert_int_equal(peak_check(&f, &b, &a, &c), 0);
	has(expect(&f, "peak", "run", VERDICT_SKIP), "not measured: cannot read /proc");
	findings_clear(&f);
	snapshot_clear(&b);
	snapshot_clear(&a);
}

static void test_peak_where(void **state)
{
	(void)state;
	struct fine_level f = {0};
	char buf[256];
	peak_where(buf, sizeof(buf), &f);
	assert_string_equal(buf, "");
	struct peak_window w = {10, 1, (char *)"Elixir.A\nElixir.B", (char *)""};
	f.windows = &w;
	f.nwindows = 1;
	peak_where(buf, sizeof(buf), &f);
	assert_string_equal(buf, "while 2 test modules ran side by side (A, ...)");
	w.modules = (char *)"";
	peak_where(buf, sizeof(buf), &f);
	assert_string_equal(
	        buf, "outside any test module (loading the test files, setup_all, the application, "
	             "an --exec workload)");
	w.modules = (char *)"Elixir.A";
	peak_where(buf, sizeof(buf), &f);
	assert_string_equal(buf, "in A (its tests are told apart with --per-test)");
}

/* @tag gate: [max_peak: ...]: a sync test's own window judged; an async one said not judged. */
static void test_peak_tags(void **state)
{
	(void)state;
	struct snapshot a;
	struct test_run run = {0};
	struct findings f = {0};
	char err[256];
	snap(&a);
	fine(&a, 70000000, 45000000);
	peak_report(&a, 801000000);
	/* under --repeat a test has a window per run: the highest rise is judged */
	a.fine.test_peaks = calloc(3, sizeof(*a.fine.test_peaks));
	a.fine.ntest_peaks = 3;
	a.fine.test_peaks[0] =
	        (struct test_peak){strdup("Elixir.P\ttest big"), 70000000, 64000000, true};
	a.fine.test_peaks[1] =
	        (struct test_peak){strdup("Elixir.P\ttest small"), 66000000, 64000000, true};
	a.fine.test_peaks[2] =
	        (struct test_peak){strdup("Elixir.P\ttest big"), 801000000, 64000000, true};
	const char *names[] = {"test big", "test small", "test async", "test untagged"};
	for (size_t i = 0; i < 4; i++) {
		struct test_result *t = test_run_add(&run);
		assert_non_null(t);
		t->module = strdup("Elixir.P");
		t->name = strdup(names[i]);
		t->state = TEST_PASSED;
		t->async = i == 2;
		t->gate_tag = i < 3 ? strdup("max_peak=100 MB") : NULL;
	}
	assert_int_equal(peak_tags_check(&f, &a, &run, err, sizeof(err)), 0);
	assert_int_equal(f.count, 3);
	const struct finding *x = expect(&f, "peak", "P \"test big\"", VERDICT_FAIL);
	has(x, "P \"test big\" peaked at RSS 801.0 MB, +737.0 MB above its start, over its @tag "
	       "gate max_peak 100.0 MB");
	assert_string_equal(x->culprit_test, "test big");
	has(expect(&f, "peak", "P \"test small\"", VERDICT_PASS),
	    "+2.0 MB above its start, within");
	has(expect(&f, "peak", "P \"test async\"", VERDICT_SKIP),
	    "an async test shares its window");
	findings_clear(&f);
	/* a size that does not parse: -2, naming the key and the fix */
	free(run.tests[3].gate_tag);
	run.tests[3].gate_tag = strdup("max_peak=lots");
	assert_int_equal(peak_tags_check(&f, &a, &run, err, sizeof(err)), -2);
	assert_non_null(
	        strstr(err, "max_peak: \"lots\" is not a size; write e.g. max_peak: \"1 MB\""));
	findings_clear(&f);
	test_run_clear(&run);
	snapshot_clear(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_origins_grown),
	        cmocka_unit_test(test_origins_open_bucket),
	        cmocka_unit_test(test_origins_check),
	        cmocka_unit_test(test_origins_runtime_only),
	        cmocka_unit_test(test_rss),
	        cmocka_unit_test(test_rss_culprit),
	        cmocka_unit_test(test_peak),
	        cmocka_unit_test(test_peak_suite_monitor),
	        cmocka_unit_test(test_peak_unmeasured),
	        cmocka_unit_test(test_peak_where),
	        cmocka_unit_test(test_peak_allocated),
	        cmocka_unit_test(test_peak_tags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
