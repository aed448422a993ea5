/* tests/test_baseline_rules.c: the baseline model and the "baseline" and "trend" rules on
 * hand-built snapshots and histories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/finding.h"
#include "rules/baseline.h"

/* ---- helpers ---- */

static void snap(struct snapshot *s, int64_t base)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		s->mem[i] = base;
		s->have[i] = true;
	}
	snprintf(s->otp_release, sizeof(s->otp_release), "25");
}

static void add_ets(struct snapshot *s, const char *name, bool named, int64_t memory, int64_t size)
{
	s->ets = realloc(s->ets, (s->nets + 1) * sizeof(*s->ets));
	assert_non_null(s->ets);
	struct ets_info *e = &s->ets[s->nets++];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	e->id = strdup(named ? name : "#Ref<0.1.2.3>");
	e->named = named;
	e->memory = memory;
	e->size = size;
	s->ets_count = (int64_t)s->nets;
}

static void add_alloc(struct snapshot *s, const char *type, int64_t carriers, int64_t blocks)
{
	s->allocs = realloc(s->allocs, (s->nallocs + 1) * sizeof(*s->allocs));
	assert_non_null(s->allocs);
	struct alloc_info *a = &s->allocs[s->nallocs++];
	memset(a, 0, sizeof(*a));
	a->type = strdup(type);
	a->carriers_size = carriers;
	a->blocks_size = blocks;
}

static const struct finding *find(const struct findings *f, const char *subject)
{
	for (size_t i = 0; i < f->count; i++)
		if (strcmp(f->items[i].subject, subject) == 0)
			return &f->items[i];
	return NULL;
}

static struct baseline_config cfg_plain(double pct, int64_t floor)
{
	struct baseline_config c;
	baseline_config_default(&c);
	c.max_pct = pct;
	c.floor_bytes = floor;
	return c;
}

/* A baseline built from a snapshot with every category at base and two named tables. */
static void base_of(struct baseline *b, int64_t base)
{
	struct snapshot s;
	snap(&s, base);
	add_ets(&s, "sessions", true, base, 10);
	add_ets(&s, "cache", true, base / 2, 5);
	struct baseline_meta m = {.gate_version = "0.1.0", .commit = "abcdef1234567"};
	assert_int_equal(baseline_from_snapshot(b, &s, &m), 0);
	snapshot_clear(&s);
}

/* ---- the model ---- */

static void test_rules__config_defaults(void **state)
{
	(void)state;
	struct baseline_config c;
	memset(&c, 0x5a, sizeof(c)); /* garbage: the default must set every field */
	baseline_config_default(&c);
	assert_null(c.path);
	assert_null(c.ref);
	assert_null(c.notes_ref);
	assert_false(c.require);
	assert_false(c.skip_ci);
	assert_true(c.max_pct == 20.0);
	assert_int_equal(c.floor_bytes, 1000000);
	assert_int_equal(c.trend_window, 10);
	assert_true(c.trend_sigma == 3.0);
	assert_true(c.trend_min_pct == 10.0);
}

/* Named tables summed by name and sorted, unnamed ones left out, allocators summed by type;
 * the figures and meta copied. */
static void test_rules__from_snapshot(void **state)
{
	(void)state;
	struct snapshot s;
	struct baseline b;
	snap(&s, 1000);
	s.have[MEM_ATOM] = false;
	s.process_count = 77;
	s.atom_count = 12345;
	add_ets(&s, "zeta", true, 100, 1);
	add_ets(&s, "anon", false, 5000, 50); /* unnamed: not in a baseline */
	add_ets(&s, "alpha", true, 200, 2);
	add_ets(&s, "zeta", true, 300, 3); /* duplicate name: summed */
	add_alloc(&s, "ets_alloc", 1000, 600);
	add_alloc(&s, "binary_alloc", 2000, 100);
	add_alloc(&s, "ets_alloc", 500, 400);
	struct baseline_meta m = {.gate_version = "0.1.0",
	                          .elixir_version = "1.14.0",
	                          .commit = "0123456789abcdef0123456789abcdef01234567",
	                          .timestamp = 1796212800,
	                          .test_count = 42};
	assert_int_equal(baseline_from_snapshot(&b, &s, &m), 0);
	snapshot_clear(&s);

	assert_int_equal(b.format_version, BASELINE_FORMAT_VERSION);
	assert_string_equal(b.gate_version, "0.1.0");
	assert_string_equal(b.elixir_version, "1.14.0");
	assert_string_equal(b.otp_release, "25");
	assert_string_equal(b.commit, "0123456789abcdef0123456789abcdef01234567");
	assert_int_equal(b.timestamp, 1796212800);
	assert_int_equal(b.test_count, 42);
	assert_int_equal(b.process_count, 77);
	assert_int_equal(b.atom_count, 12345);
	assert_false(b.have[MEM_ATOM]);
	assert_true(b.have[MEM_BINARY]);
	assert_int_equal(b.mem[MEM_BINARY], 1000);

	assert_int_equal(b.nets, 2);
	assert_string_equal(b.ets[0].name, "alpha");
	assert_int_equal(b.ets[0].memory, 200);
	assert_string_equal(b.ets[1].name, "zeta");
	assert_int_equal(b.ets[1].memory, 400);
	assert_int_equal(b.ets[1].size, 4);
	assert_null(baseline_ets_find(&b, "anon"));
	assert_int_equal(baseline_ets_find(&b, "zeta")->size, 4);

	assert_int_equal(b.nallocs, 2);
	assert_string_equal(b.allocs[0].type, "binary_alloc");
	assert_string_equal(b.allocs[1].type, "ets_alloc");
	assert_int_equal(b.allocs[1].carriers_size, 1500);
	assert_int_equal(b.allocs[1].blocks_size, 1000);

	/* a deep copy survives the original */
	struct baseline c;
	assert_int_equal(baseline_copy(&c, &b), 0);
	baseline_clear(&b);
	assert_string_equal(c.ets[1].name, "zeta");
	assert_string_equal(c.allocs[0].type, "binary_alloc");
	assert_string_equal(c.commit, "0123456789abcdef0123456789abcdef01234567");
	baseline_clear(&c);
	baseline_clear(&c); /* cleared twice: still a no-op */
	baseline_clear(NULL);
}

/* A light snapshot (no ETS, no allocators, no meta) gives a baseline with only figures. */
static void test_rules__from_light_snapshot(void **state)
{
	(void)state;
	struct snapshot s;
	struct baseline b;
	snap(&s, 5);
	s.otp_release[0] = '\0';
	assert_int_equal(baseline_from_snapshot(&b, &s, NULL), 0);
	assert_int_equal(b.nets, 0);
	assert_null(b.ets);
	assert_int_equal(b.nallocs, 0);
	assert_null(b.otp_release);
	assert_null(b.commit);
	assert_int_equal(b.mem[MEM_TOTAL], 5);
	baseline_clear(&b);
}

/* ---- rule "baseline" ---- */

/* Every category and named table of the baseline gets a finding; unchanged figures pass. */
static void test_rules__baseline_pass(void **state)
{
	(void)state;
	struct baseline b;
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = cfg_plain(20.0, 1000000);
	base_of(&b, 10000000);
	snap(&a, 10000000);
	add_ets(&a, "sessions", true, 10000000, 10);
	add_ets(&a, "cache", true, 5000000, 5);
	assert_int_equal(baseline_check(&f, &a, &b, &c, "origin/main:.gate/baseline.json"), 0);
	assert_int_equal(f.count, MEM_CAT_COUNT + 2);
	assert_int_equal(findings_failed(&f), 0);
	const struct finding *t = find(&f, "ets:sessions");
	assert_non_null(t);
	assert_string_equal(t->rule, "baseline");
	assert_int_equal(t->verdict, VERDICT_PASS);
	assert_non_null(find(&f, "ets:cache"));
	assert_non_null(strstr(find(&f, "total")->message, "total 10.0 MB vs baseline 10.0 MB"));
	findings_clear(&f);
	snapshot_clear(&a);
	baseline_clear(&b);
}

/* +20 % exactly passes, one byte more fails; the message names figures and the limit. */
static void test_rules__baseline_boundary(void **state)
{
	(void)state;
	struct baseline b;
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = cfg_plain(20.0, 1000000);
	base_of(&b, 10000000);
	snap(&a, 10000000);
	a.mem[MEM_BINARY] = 12000000; /* +20.0 % */
	a.mem[MEM_ETS] = 12000001;    /* +20.00001 % */
	add_ets(&a, "sessions", true, 12000001, 11);
	add_ets(&a, "cache", true, 6000000, 5);
	assert_int_equal(baseline_check(&f, &a, &b, &c, NULL), 0);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_PASS);
	const struct finding *e = find(&f, "ets");
	assert_int_equal(e->verdict, VERDICT_FAIL);
	assert_int_equal(e->before, 10000000);
	assert_int_equal(e->after, 12000001);
	assert_int_equal(e->delta, 2000001);
	assert_int_equal(e->floor, 1000000);
	assert_true(e->max_pct == 20.0);
	assert_non_null(strstr(e->message, "ets 12.0 MB vs baseline 10.0 MB (+2.0 MB, +20.0 %)"));
	assert_non_null(strstr(e->message, "limit +20.0 % above a floor of 1.0 MB"));
	const struct finding *t = find(&f, "ets:sessions");
	assert_int_equal(t->verdict, VERDICT_FAIL);
	assert_non_null(strstr(t->message, "ETS table sessions"));
	assert_int_equal(find(&f, "ets:cache")->verdict, VERDICT_PASS); /* exactly +20 % */
	assert_int_equal(findings_failed(&f), 2);
	findings_clear(&f);
	snapshot_clear(&a);
	baseline_clear(&b);
}

/* Growth under the floor passes however large in percent; at floor + 1 it fails. */
static void test_rules__baseline_floor(void **state)
{
	(void)state;
	struct baseline b;
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = cfg_plain(20.0, 1000000);
	base_of(&b, 100000);
	snap(&a, 100000);
	a.mem[MEM_BINARY] = 1100000; /* +1 000 000 = the floor: +1000 % still passes */
	a.mem[MEM_CODE] = 1100001;
	assert_int_equal(baseline_check(&f, &a, &b, &c, NULL), 0);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_PASS);
	assert_int_equal(find(&f, "code")->verdict, VERDICT_FAIL);
	findings_clear(&f);
	snapshot_clear(&a);
	baseline_clear(&b);
}

/* A shrink passes; a category the baseline lacks is not judged; one the node did not
 * report is skipped. */
static void test_rules__baseline_categories(void **state)
{
	(void)state;
	struct baseline b;
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = cfg_plain(20.0, 0);
	base_of(&b, 10000000);
	b.have[MEM_ATOM] = false;
	snap(&a, 5000000);
	a.have[MEM_CODE] = false;
	add_ets(&a, "sessions", true, 1, 1);
	add_ets(&a, "cache", true, 1, 1);
	assert_int_equal(baseline_check(&f, &a, &b, &c, NULL), 0);
	assert_null(find(&f, "atom"));
	assert_int_equal(find(&f, "code")->verdict, VERDICT_SKIP);
	assert_non_null(strstr(find(&f, "code")->message, "not reported"));
	assert_int_equal(find(&f, "total")->verdict, VERDICT_PASS);
	assert_int_equal(f.count, MEM_CAT_COUNT - 1 + 2);
	findings_clear(&f);
	snapshot_clear(&a);
	baseline_clear(&b);
}

/* A baseline table absent from a complete listing is gone (passes at 0 bytes); absent from a
 * partial listing (the probe's cap) it is unknown (skipped, saying why). */
static void test_rules__baseline_table_absent(void **state)
{
	(void)state;
	struct baseline b;
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = cfg_plain(20.0, 0);
	base_of(&b, 10000000);
	snap(&a, 10000000);
	add_ets(&a, "sessions", true, 10000000, 10);
	add_ets(&a, "cache", false, 99999999, 10); /* same name but unnamed: not the table */
	assert_int_equal(baseline_check(&f, &a, &b, &c, NULL), 0);
	const struct finding *t = find(&f, "ets:cache");
	assert_int_equal(t->verdict, VERDICT_PASS);
	assert_int_equal(t->after, 0);
	findings_clear(&f);

	a.ets_count = 500; /* the snapshot lists 2 of 500 tables */
	assert_int_equal(baseline_check(&f, &a, &b, &c, NULL), 0);
	t = find(&f, "ets:cache");
	assert_int_equal(t->verdict, VERDICT_SKIP);
	assert_non_null(strstr(t->message, "not among the 2 largest tables"));
	assert_non_null(strstr(t->message, "of 500"));
	assert_int_equal(find(&f, "ets:sessions")->verdict, VERDICT_PASS);
	findings_clear(&f);

	snapshot_clear(&a);
	snap(&a, 10000000); /* a light snapshot: no tables listed at all */
	a.ets_count = 30;
	assert_int_equal(baseline_check(&f, &a, &b, &c, NULL), 0);
	assert_int_equal(find(&f, "ets:sessions")->verdict, VERDICT_SKIP);
	assert_non_null(strstr(find(&f, "ets:sessions")->message, "lists no ETS tables"));
	findings_clear(&f);
	snapshot_clear(&a);
	baseline_clear(&b);
}

/* No baseline: one skipped finding naming where it was looked for; failed when required. */
static void test_rules__baseline_missing(void **state)
{
	(void)state;
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = cfg_plain(20.0, 1000000);
	snap(&a, 1);
	assert_int_equal(baseline_check(&f, &a, NULL, &c, NULL), 0);
	assert_int_equal(f.count, 1);
	assert_string_equal(f.items[0].rule, "baseline");
	assert_string_equal(f.items[0].subject, "baseline");
	assert_int_equal(f.items[0].verdict, VERDICT_SKIP);
	assert_non_null(
	        strstr(f.items[0].message, "no baseline at origin/main:.gate/baseline.json"));
	findings_clear(&f);

	assert_int_equal(baseline_check(&f, &a, NULL, &c, "HEAD:apps/x/.gate/b.json"), 0);
	assert_non_null(strstr(f.items[0].message, "no baseline at HEAD:apps/x/.gate/b.json"));
	findings_clear(&f);

	c.require = true;
	char ref[] = "origin/trunk", path[] = "perf/base.json";
	c.ref = ref;
	c.path = path;
	assert_int_equal(baseline_check(&f, &a, NULL, &c, NULL), 0);
	assert_int_equal(f.count, 1);
	assert_int_equal(f.items[0].verdict, VERDICT_FAIL);
	assert_int_equal(findings_failed(&f), 1);
	assert_non_null(strstr(f.items[0].message, "no baseline at origin/trunk:perf/base.json"));
	assert_non_null(strstr(f.items[0].message, "required"));
	findings_clear(&f);
	snapshot_clear(&a);
}

/* Figures from another OTP release are still judged, and the message says so. */
static void test_rules__baseline_other_otp(void **state)
{
	(void)state;
	struct baseline b;
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = cfg_plain(20.0, 0);
	base_of(&b, 1000);
	free(b.otp_release);
	b.otp_release = strdup("24");
	snap(&a, 1000);
	assert_int_equal(baseline_check(&f, &a, &b, &c, NULL), 0);
	assert_non_null(
	        strstr(find(&f, "total")->message, "baseline measured on OTP 24, now OTP 25"));
	findings_clear(&f);
	snapshot_clear(&a);
	baseline_clear(&b);
}

/* ---- rule "trend" ---- */

static struct baseline *history_of(const int64_t *totals, size_t n)
{
	struct baseline *h = calloc(n ? n : 1, sizeof(*h));
	assert_non_null(h);
	for (size_t i = 0; i < n; i++) {
		h[i].format_version = 1;
		h[i].have[MEM_TOTAL] = true;
		h[i].mem[MEM_TOTAL] = totals[i];
		h[i].have[MEM_BINARY] = true;
		h[i].mem[MEM_BINARY] = 1000;
	}
	return h;
}

static struct baseline_config trend_cfg(int n, double k, double p)
{
	struct baseline_config c;
	baseline_config_default(&c);
	c.trend_window = n;
	c.trend_sigma = k;
	c.trend_min_pct = p;
	return c;
}

/* Off until N entries exist, saying how many there are. */
static void test_rules__trend_skip_until_n(void **state)
{
	(void)state;
	int64_t t[] = {100, 100, 100};
	struct baseline *h = history_of(t, 3);
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = trend_cfg(4, 3.0, 10.0);
	snap(&a, 1000000);
	assert_int_equal(trend_check(&f, &a, h, 3, &c), 0);
	assert_int_equal(f.count, 1);
	assert_string_equal(f.items[0].rule, "trend");
	assert_int_equal(f.items[0].verdict, VERDICT_SKIP);
	assert_non_null(strstr(f.items[0].message, "3 of 4 history entries in refs/notes/gate"));
	findings_clear(&f);

	assert_int_equal(trend_check(&f, &a, NULL, 0, &c), 0);
	assert_non_null(strstr(f.items[0].message, "0 of 4 history entries"));
	findings_clear(&f);

	c.trend_window = 0; /* the rule is off */
	assert_int_equal(trend_check(&f, &a, h, 3, &c), 0);
	assert_int_equal(f.count, 0);
	free(h);
	snapshot_clear(&a);
}

/* A flat history: the limit is p % of the mean; exactly at it passes, one byte more fails. */
static void test_rules__trend_pct_limit(void **state)
{
	(void)state;
	int64_t t[] = {5000, 1000, 1000, 1000, 1000, 1000}; /* the oldest is out of the window */
	struct baseline *h = history_of(t, 6);
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = trend_cfg(5, 3.0, 10.0);
	memset(&a, 0, sizeof(a));
	a.have[MEM_TOTAL] = true;
	a.mem[MEM_TOTAL] = 1100;
	assert_int_equal(trend_check(&f, &a, h, 6, &c), 0);
	assert_int_equal(f.count, 1); /* only categories the after-snapshot has */
	assert_int_equal(f.items[0].verdict, VERDICT_PASS);
	assert_int_equal(f.items[0].before, 1000);
	assert_int_equal(f.items[0].floor, 100);
	assert_true(f.items[0].max_pct < 0);
	findings_clear(&f);

	a.mem[MEM_TOTAL] = 1101;
	assert_int_equal(trend_check(&f, &a, h, 6, &c), 0);
	assert_int_equal(f.items[0].verdict, VERDICT_FAIL);
	assert_non_null(
	        strstr(f.items[0].message, "total 1.1 kB vs mean 1.0 kB of the last 5 runs"));
	assert_non_null(strstr(f.items[0].message, "limit 1.1 kB = mean + max(3.0 sigma, 10.0 %)"));
	findings_clear(&f);
	free(h);
}

/* A noisy history: the limit is k sigma (sample standard deviation) above the mean. */
static void test_rules__trend_sigma_limit(void **state)
{
	(void)state;
	/* mean 1000, deviations -200, 0, +200, 0: sample variance 80000/3, sigma 163.3 */
	int64_t t[] = {800, 1000, 1200, 1000};
	struct baseline *h = history_of(t, 4);
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = trend_cfg(4, 2.0, 10.0); /* 2 sigma = 326.6 > 10 % = 100 */
	memset(&a, 0, sizeof(a));
	a.have[MEM_TOTAL] = true;
	a.mem[MEM_TOTAL] = 1326;
	assert_int_equal(trend_check(&f, &a, h, 4, &c), 0);
	assert_int_equal(f.items[0].verdict, VERDICT_PASS);
	assert_int_equal(f.items[0].floor, 327);
	findings_clear(&f);
	a.mem[MEM_TOTAL] = 1327;
	assert_int_equal(trend_check(&f, &a, h, 4, &c), 0);
	assert_int_equal(f.items[0].verdict, VERDICT_FAIL);
	findings_clear(&f);
	/* a lower figure never fails */
	a.mem[MEM_TOTAL] = 10;
	assert_int_equal(trend_check(&f, &a, h, 4, &c), 0);
	assert_int_equal(f.items[0].verdict, VERDICT_PASS);
	findings_clear(&f);
	free(h);
}

/* A category that too few entries have is skipped on its own; the others are judged. */
static void test_rules__trend_category_gaps(void **state)
{
	(void)state;
	int64_t t[] = {1000, 1000, 1000};
	struct baseline *h = history_of(t, 3);
	h[1].have[MEM_BINARY] = false;
	struct snapshot a;
	struct findings f = {0};
	struct baseline_config c = trend_cfg(3, 3.0, 10.0);
	memset(&a, 0, sizeof(a));
	a.have[MEM_TOTAL] = a.have[MEM_BINARY] = true;
	a.mem[MEM_TOTAL] = 5000;
	a.mem[MEM_BINARY] = 1000;
	assert_int_equal(trend_check(&f, &a, h, 3, &c), 0);
	assert_int_equal(f.count, 2);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_SKIP);
	assert_non_null(strstr(find(&f, "binary")->message, "2 of 3 history entries have it"));
	findings_clear(&f);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_rules__config_defaults),
	        cmocka_unit_test(test_rules__from_snapshot),
	        cmocka_unit_test(test_rules__from_light_snapshot),
	        cmocka_unit_test(test_rules__baseline_pass),
	        cmocka_unit_test(test_rules__baseline_boundary),
	        cmocka_unit_test(test_rules__baseline_floor),
	        cmocka_unit_test(test_rules__baseline_categories),
	        cmocka_unit_test(test_rules__baseline_table_absent),
	        cmocka_unit_test(test_rules__baseline_missing),
	        cmocka_unit_test(test_rules__baseline_other_otp),
	        cmocka_unit_test(test_rules__trend_skip_until_n),
	        cmocka_unit_test(test_rules__trend_pct_limit),
	        cmocka_unit_test(test_rules__trend_sigma_limit),
	        cmocka_unit_test(test_rules__trend_category_gaps),
	};
	return cmocka_run_group_tests_name("baseline_rules", tests, NULL, NULL);
}
