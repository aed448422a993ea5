/* tests/test_growth.c: the growth rule on hand-built snapshots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "model/finding.h"
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
	assert_int_equal(c.cat[MEM_CODE].floor_bytes, 16000000);
	assert_true(c.live_totals);
}

/* Exactly at the limit passes; one byte more fails. */
static void test_boundary(void **state)
{
	(void)state;
	struct growth_config c = plain(10.0, 1000);
	struct snapshot b, a;
	struct findings f = {0};
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
	struct findings f = {0};
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
	struct findings f = {0};
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
	struct findings f = {0};
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
	struct findings f = {0};
	snap(&b, 0);
	snap(&a, 0);
	a.mem[MEM_ETS] = 101;
	a.mem[MEM_BINARY] = 100;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "ets")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_PASS);
	findings_clear(&f);
}

/* live_totals (the honest memory model): system is judged on its rest (less code, ets, binary and
 * atom, which have rows of their own), total net of code loading, free heap space and every
 * failing leaf; each says what it subtracted, and grew - subtracted = judged. */
static void test_live_totals(void **state)
{
	(void)state;
	struct growth_config c = plain(10.0, 1000);
	c.live_totals = true;
	struct snapshot b, a;
	struct findings f = {0};
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
	assert_int_equal(finding_raw_delta(total), 35000);
	assert_non_null(strstr(total->explained, "code +20.0 kB (modules the suite loaded)"));
	assert_non_null(strstr(total->explained, "free heap +15.0 kB"));
	assert_int_equal(system->delta, 0);
	assert_non_null(strstr(system->message, "the rest of system grew +0 B"));
	assert_non_null(strstr(system->explained, "code +20.0 kB"));
	assert_int_equal(find(&f, "code")->delta, 20000);
	assert_null(find(&f, "code")->explained);
	findings_clear(&f);

	/* the same growth without live_totals fails total and system */
	c.live_totals = false;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "system")->verdict, VERDICT_FAIL);
	findings_clear(&f);

	/* a leak in a leaf fails that leaf; total and system repeat it and pass as context */
	c.live_totals = true;
	a.mem[MEM_BINARY] += 30000;
	a.mem[MEM_SYSTEM] += 30000;
	a.mem[MEM_TOTAL] += 30000;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "total")->delta, 0);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_PASS);
	assert_non_null(strstr(find(&f, "total")->message, "context"));
	assert_non_null(strstr(find(&f, "total")->explained, "binary +30.0 kB"));
	assert_int_equal(find(&f, "system")->delta, 0);
	assert_int_equal(find(&f, "system")->verdict, VERDICT_PASS);
	assert_int_equal(findings_failed(&f), 1);
	findings_clear(&f);

	/* growth no leaf judges (the rest of system) fails system; total repeats it */
	a = b;
	a.mem[MEM_SYSTEM] += 30000;
	a.mem[MEM_TOTAL] += 30000;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "system")->delta, 30000);
	assert_int_equal(find(&f, "system")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_PASS);
	assert_int_equal(findings_failed(&f), 1);
	findings_clear(&f);

	/* growth spread over leaves, each under its floor, fails total: nothing else judges it */
	c = plain(10.0, 25000);
	c.live_totals = true;
	c.cat[MEM_PROCESSES].enabled = false;
	a = b;
	a.mem[MEM_ETS] += 20000;
	a.mem[MEM_BINARY] += 20000;
	a.mem[MEM_SYSTEM] += 40000;
	a.mem[MEM_TOTAL] += 40000;
	b.mem[MEM_ETS] = b.mem[MEM_BINARY] = 1000;
	a.mem[MEM_ETS] += 1000;
	a.mem[MEM_BINARY] += 1000;
	growth_check(&f, &b, &a, &c);
	assert_int_equal(find(&f, "ets")->verdict, VERDICT_PASS);
	assert_int_equal(find(&f, "binary")->verdict, VERDICT_PASS);
	assert_int_equal(find(&f, "system")->verdict, VERDICT_PASS);
	assert_int_equal(find(&f, "total")->delta, 40000);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_FAIL);
	findings_clear(&f);
}

/* Code is judged with its literals: the literal area in use (literal_alloc's blocks) less
 * persistent_term's values, which live there too and are no code. */
static void test_code_literals(void **state)
{
	(void)state;
	struct growth_config c;
	growth_config_default(&c);
	struct snapshot b, a;
	struct findings f = {0};
	struct alloc_info lb = {
	        .type = "literal_alloc", .carriers_size = 4000000, .blocks_size = 2000000};
	struct alloc_info la = {
	        .type = "literal_alloc", .carriers_size = 8000000, .blocks_size = 6000000};
	snap(&b, 10000000);
	b.mem[MEM_TOTAL] = 30000000;
	b.mem[MEM_SYSTEM] = 24000000;
	b.mem[MEM_PROCESSES] = b.mem[MEM_PROCESSES_USED] = 6000000;
	b.mem[MEM_CODE] = 12000000;
	b.mem[MEM_ETS] = b.mem[MEM_BINARY] = b.mem[MEM_ATOM] = b.mem[MEM_ATOM_USED] = 500000;
	a = b;
	b.allocs = &lb;
	b.nallocs = 1;
	a.allocs = &la;
	a.nallocs = 1;
	b.have_persistent_term = a.have_persistent_term = true;
	b.persistent_term_memory = 100000;
	a.persistent_term_memory = 100000;
	/* a suite loads +2 MB of code and +4 MB of literals: system and total grow +6 MB */
	a.mem[MEM_CODE] += 2000000;
	a.mem[MEM_SYSTEM] += 6000000;
	a.mem[MEM_TOTAL] += 6000000;
	assert_int_equal(growth_code_literals(&b), 1900000);
	assert_int_equal(growth_check(&f, &b, &a, &c), 0);
	const struct finding *code = find(&f, "code");
	assert_int_equal(code->before, 12000000 + 1900000);
	assert_int_equal(code->delta, 6000000);
	assert_non_null(strstr(code->message, "code and literals grew"));
	assert_int_equal(find(&f, "system")->delta, 0);
	assert_int_equal(find(&f, "total")->delta, 0);
	assert_int_equal(findings_failed(&f), 0);
	findings_clear(&f);

	/* the same +4 MB in the literal area from persistent_term is no code: system fails */
	a.persistent_term_memory += 4000000;
	assert_int_equal(growth_check(&f, &b, &a, &c), 0);
	assert_int_equal(find(&f, "code")->delta, 2000000);
	assert_int_equal(find(&f, "system")->delta, 4000000);
	assert_int_equal(find(&f, "system")->verdict, VERDICT_FAIL);
	assert_int_equal(find(&f, "total")->verdict, VERDICT_PASS);
	findings_clear(&f);
	b.allocs = a.allocs = NULL; /* on the stack */
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
	        cmocka_unit_test(test_code_literals),
	};
	return cmocka_run_group_tests_name("growth", tests, NULL, NULL);
}
