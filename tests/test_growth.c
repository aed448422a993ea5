/* tests/test_growth.c: the growth rule on hand-built snapshots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rules/growth.h"

static void snap(struct snapshot *s, int64_t base)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		s->mem[i] = base;
		s->have[i] = true;
	}
}

static const struct finding *find(const struct findings *f, const char *subject)
{
	for (size_t i = 0; i < f->count; i++)
		if (strcmp(f->items[i].subject, subject) == 0)
			return &f->items[i];
	return NULL;
}

static struct growth_config plain(double pct, int64_t floor)
{
	struct growth_config c;
	growth_config_default(&c);
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		c.cat[i].enabled = true;
		c.cat[i].max_pct = pct;
		c.cat[i].floor_bytes = floor;
	}
	c.live_totals = false;
	return c;
}

static void test_defaults_documented(void **state)
{
	(void)state;
	struct growth_config c;
	growth_config_default(&c);
	assert_false(c.cat[MEM_PROCESSES].enabled);
	assert_false(c.cat[MEM_ATOM].enabled);
	assert_true(c.cat[MEM_PROCESSES_USED].enabled);
	assert_true(c.cat[MEM_BINARY].max_pct == 10.0);
	assert_int_equal(c.cat[MEM_BINARY].floor_bytes, 1000000);
	assert_true(c.cat[MEM_CODE].max_pct == 50.0);
	assert_int_equal(c.cat[MEM_CODE].floor_bytes, 8000000);
	assert_true(c.live_totals);
}

/* Exactly at the limit passes; one byte more fails. */
static void test_boundary(void **state)
{
	(void)state;
	struct growth_config c = plain(10.0, 1000);
	struct snapshot b, a;
	struct findings f = { 0 };
	snap(&b, 100000);
	snap(&a, 110000); /* +10 000 = exactly +10 % */
	a.mem[MEM_ETS] = 110001;
	assert_int_equal(growth_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, MEM_CAT_COUNT);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_PASS);
	const struct finding *ets = find(&f, "ets");
	assert_int_equal(ets->verdict, VERDICT_FAIL);
	assert_int_equal(ets->delta, 10001);
	assert_non_null(strstr(ets->message, "ets grew 100.0 kB -> 110.0 kB"));
	assert_non_null(strstr(ets->message, "limit +10.0 %"));
	assert_int_equal(findings_failed(&f), 1);
	findings_clear(&f);
}

/* A huge relative growth under the floor never fails; over the floor it does. */
static void test_floor(void **state)
{
	(void)state;
	struct growth_config c = plain(10.0, 1000000);
	struct snapshot b, a;
	struct findings f = { 0 };
	snap(&b, 20000);
	snap(&a, 20000);
	a.mem[MEM_BINARY] = 1020000; /* +1 000 000: exactly the floor */
	a.mem[MEM_ETS] = 1020001;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_PASS);
	assert_int_equal(find(&f, "ets")->verdict, VERDICT_FAIL);
	findings_clear(&f);
}

static void test_missing_category_skips(void **state)
{
	(void)state;
	struct growth_config c = plain(10.0, 0);
	struct snapshot b, a;
	struct findings f = { 0 };
	snap(&b, 1000);
	snap(&a, 5000);
	a.have[MEM_CODE] = false;
	b.have[MEM_ETS] = false;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "code")->verdict, VERDICT_SKIP);
	assert_non_null(strstr(find(&f, "code")->message, "after"));
	assert_int_equal(find(&f, "ets")->verdict, VERDICT_SKIP);
	assert_non_null(strstr(find(&f, "ets")->message, "before"));
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_FAIL);
	findings_clear(&f);
}

static void test_disabled_category_absent(void **state)
{
	(void)state;
	struct growth_config c = plain(10.0, 0);
	c.cat[MEM_BINARY].enabled = false;
	struct snapshot b, a;
	struct findings f = { 0 };
	snap(&b, 1000);
	snap(&a, 1000);
	growth_check(&f, &b, &a, &c);
	assert_null(find(&f, "binary"));
	assert_int_equal(f.count, MEM_CAT_COUNT - 1);
	findings_clear(&f);
}

/* From zero: any growth over the floor fails, no division by zero. */
static void test_from_zero(void **state)
{
	(void)state;
	struct growth_config c = plain(10.0, 100);
	struct snapshot b, a;
	struct findings f = { 0 };
	snap(&b, 0);
	snap(&a, 0);
	a.mem[MEM_ETS] = 101;
	a.mem[MEM_BINARY] = 100;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "ets")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_PASS);
	findings_clear(&f);
}

/* live_totals: code growth and free heap growth are taken out of total and system only. */
static void test_live_totals(void **state)
{
	(void)state;
	struct growth_config c = plain(10.0, 1000);
	c.live_totals = true;
	struct snapshot b, a;
	struct findings f = { 0 };
	snap(&b, 0);
	b.mem[MEM_TOTAL] = 100000;
	b.mem[MEM_SYSTEM] = 80000;
	b.mem[MEM_CODE] = 50000;
	b.mem[MEM_PROCESSES] = 20000;
	b.mem[MEM_PROCESSES_USED] = 20000;
	a = b;
	/* code +20 000, processes allocated +15 000 of which used +0 */
	a.mem[MEM_CODE] += 20000;
	a.mem[MEM_SYSTEM] += 20000;
	a.mem[MEM_PROCESSES] += 15000;
	a.mem[MEM_TOTAL] += 35000;
	c.cat[MEM_CODE].max_pct = 100;
	c.cat[MEM_PROCESSES].enabled = false;
	growth_check(&f, &b, &a, &c);
	const struct finding *total = find(&f, "total"), *system = find(&f, "system");
	assert_int_equal(total->delta, 0);
	assert_int_equal(total->verdict, VERDICT_PASS);
	assert_non_null(strstr(total->message, "net of code and free heap growth"));
	assert_int_equal(system->delta, 0);
	assert_non_null(strstr(system->message, "(net of code growth)"));
	assert_int_equal(find(&f, "code")->delta, 20000);
	findings_clear(&f);

	/* the same growth without live_totals fails total and system */
	c.live_totals = false;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "system")->verdict, VERDICT_FAIL);
	findings_clear(&f);

	/* a real leak on top of code growth still fails total */
	c.live_totals = true;
	a.mem[MEM_BINARY] += 30000;
	a.mem[MEM_SYSTEM] += 30000;
	a.mem[MEM_TOTAL] += 30000;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "total")->delta, 30000);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "system")->verdict, VERDICT_FAIL);
	findings_clear(&f);

	/* shrinking code is not netted: it would hide growth elsewhere */
	a = b;
	a.mem[MEM_CODE] -= 20000;
	a.mem[MEM_SYSTEM] += 15000;
	a.mem[MEM_TOTAL] += 15000;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "total")->delta, 15000);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_FAIL);
	findings_clear(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_documented),
		cmocka_unit_test(test_boundary),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_missing_category_skips),
		cmocka_unit_test(test_disabled_category_absent),
		cmocka_unit_test(test_from_zero),
		cmocka_unit_test(test_live_totals),
	};
	return cmocka_run_group_tests_name("growth", tests, NULL, NULL);
}
