/* tests/test_modules.c: the code row judged by where modules came from, and the modules rule
 * (modules created during the run), on hand-built snapshots. */
#include "model/finding.h"
#include "tests/judge_fixture.h"
#include "tests/rules_fixture.h"

/* A before/after pair whose code grew by code_grew bytes and literals by lits_grew, with the
 * after-snapshot's module origins (test, disk, created) as the probe reports them. */
static void pair(struct snapshot *b, struct snapshot *a, int64_t code_grew, int64_t lits_grew,
                 struct code_class test, struct code_class disk, struct code_class created)
{
	deep(b);
	deep(a);
	add_alloc(b, "literal_alloc", 8000000, 4000000, 0.1);
	add_alloc(a, "literal_alloc", 8000000 + lits_grew, 4000000 + lits_grew, 0.1);
	b->mem[MEM_CODE] = 16000000;
	a->mem[MEM_CODE] = 16000000 + code_grew;
	a->mem[MEM_SYSTEM] += code_grew + lits_grew;
	a->mem[MEM_TOTAL] += code_grew + lits_grew;
	a->have_growth = true;
	a->have_code_new = true;
	a->code_test = test;
	a->code_disk = disk;
	a->code_created = created;
}

static void add_code_group(struct snapshot *s, const char *shape, int64_t n, int64_t bytes,
                           const char *example)
{
	s->code_groups = realloc(s->code_groups, (s->ncode_groups + 1) * sizeof(*s->code_groups));
	assert_non_null(s->code_groups);
	struct key_group *g = &s->code_groups[s->ncode_groups++];
	memset(g, 0, sizeof(*g));
	g->key = strdup(shape);
	g->count = n;
	g->bytes = bytes;
	g->example = strdup(example);
}

/* Code is shared out by the modules' own bytes, literals in the same proportion; what grew
 * beyond the modules loaded stays the row's. */
static void test_split(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct code_split s;
	pair(&b, &a, 4000000, 2000000, (struct code_class){10, 1000000},
	     (struct code_class){30, 2000000}, (struct code_class){100, 1000000});
	growth_code_split(&b, &a, &s);
	assert_int_equal(s.created, 1000000 + 500000);
	assert_int_equal(s.suite, 3000000 + 1500000);
	snapshot_clear(&a);
	snapshot_clear(&b);

	/* code grew twice what the new modules hold: half of it stays unexplained */
	pair(&b, &a, 8000000, 0, (struct code_class){10, 4000000}, (struct code_class){0, 0},
	     (struct code_class){0, 0});
	growth_code_split(&b, &a, &s);
	assert_int_equal(s.suite, 4000000);
	assert_int_equal(s.created, 0);
	snapshot_clear(&a);
	snapshot_clear(&b);

	/* without origins (an older probe), nothing is explained */
	pair(&b, &a, 8000000, 0, (struct code_class){10, 4000000}, (struct code_class){0, 0},
	     (struct code_class){0, 0});
	a.have_code_new = false;
	growth_code_split(&b, &a, &s);
	assert_int_equal(s.suite + s.created, 0);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* An application-sized suite loads 20 MB of test modules and code from disk: context, said
 * with its counts, and no failure (the row failed on its 16 MB floor before). */
static void test_big_suite_passes(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct rules_config c;
	rules_config_default(&c);
	pair(&b, &a, 10000000, 9700000, (struct code_class){1510, 8000000},
	     (struct code_class){48, 2000000}, (struct code_class){0, 0});
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(findings_failed(&f), 0);
	const struct finding *code = expect(&f, "growth", "code", VERDICT_PASS);
	has(code, "the suite's own modules +19.7 MB (1 510 test modules of this suite, 48 modules "
	          "loaded from disk)");
	has(code, "judged +0 B");
	expect(&f, "modules", "created", VERDICT_PASS);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

/* 1 500 modules created by a template library and never purged: one failing finding naming
 * their shape; the code row and the binary their literals hold are that finding's context. */
static void test_created_leak_is_one_finding(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct rules_config c;
	rules_config_default(&c);
	pair(&b, &a, 4000000, 2600000, (struct code_class){2, 100000},
	     (struct code_class){17, 300000}, (struct code_class){1500, 3600000});
	add_code_group(&a, "CodeLeak.Tpl.*", 1500, 3600000, "CodeLeak.Tpl.T17");
	a.mem[MEM_BINARY] += 2700000; /* the templates' text, literal refc binaries */
	a.mem[MEM_SYSTEM] += 2700000;
	a.mem[MEM_TOTAL] += 2700000;
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(findings_failed(&f), 1);
	const struct finding *m = expect(&f, "modules", "created", VERDICT_FAIL);
	has(m, "CodeLeak.Tpl.* x 1 500 created during the run and still loaded");
	has(m, "of refc binaries no process or table holds");
	has(m, "1 500 modules created in all");
	assert_string_equal(m->structure_key, "modules:created");
	has(expect(&f, "growth", "code", VERDICT_PASS), "context: explained by modules created");
	has(expect(&f, "growth", "binary", VERDICT_PASS), "context: explained by modules created");
	findings_clear(&f);

	/* the same modules under the count limit, or their bytes under the floor: pass */
	c.modules.max_created = 2000;
	assert_int_equal(modules_check(&f, &b, &a, &c.modules), 0);
	expect(&f, "modules", "created", VERDICT_PASS);
	findings_clear(&f);
	c.modules.max_created = 200;
	c.modules.floor_bytes = 10000000;
	assert_int_equal(modules_check(&f, &b, &a, &c.modules), 0);
	expect(&f, "modules", "created", VERDICT_PASS);
	findings_clear(&f);
	/* off: no finding at all */
	c.modules.max_created = RULES_OFF;
	assert_int_equal(modules_check(&f, &b, &a, &c.modules), 0);
	assert_int_equal(f.count, 0);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_split),
	        cmocka_unit_test(test_big_suite_passes),
	        cmocka_unit_test(test_created_leak_is_one_finding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
