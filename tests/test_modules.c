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
	pair(&b, &a, 4000000, 2000000, (struct code_class){10, 1000000, 0},
	     (struct code_class){30, 2000000, 0}, (struct code_class){100, 1000000, 0});
	growth_code_split(&b, &a, &s);
	assert_int_equal(s.created, 1000000 + 500000);
	assert_int_equal(s.suite, 3000000 + 1500000);
	snapshot_clear(&a);
	snapshot_clear(&b);

	/* code grew twice what the new modules hold: half of it stays unexplained */
	pair(&b, &a, 8000000, 0, (struct code_class){10, 4000000, 0}, (struct code_class){0, 0, 0},
	     (struct code_class){0, 0, 0});
	growth_code_split(&b, &a, &s);
	assert_int_equal(s.suite, 4000000);
	assert_int_equal(s.created, 0);
	snapshot_clear(&a);
	snapshot_clear(&b);

	/* without origins (an older probe), nothing is explained */
	pair(&b, &a, 8000000, 0, (struct code_class){10, 4000000, 0}, (struct code_class){0, 0, 0},
	     (struct code_class){0, 0, 0});
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
	pair(&b, &a, 10000000, 9700000, (struct code_class){1510, 8000000, 0},
	     (struct code_class){48, 2000000, 0}, (struct code_class){0, 0, 0});
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(findings_failed(&f), 0);
	const struct finding *code = expect(&f, "growth", "code", VERDICT_PASS);
	has(code,
	    "the suite's own modules +19.7 MB (1 510 modules compiled from this suite's files, "
	    "48 modules loaded from disk)");
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
	pair(&b, &a, 4000000, 2600000, (struct code_class){2, 100000, 0},
	     (struct code_class){17, 300000, 0}, (struct code_class){1500, 3600000, 0});
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

/* A suite whose tests define modules with large binary literals (schemas compiled inside test
 * bodies): +3.1 MB of binary that no process, table or term holds. The refc bytes the probe read
 * from those modules' object code are set aside, named, and the row and total pass; what is
 * left that nothing holds is said as such. */
static void test_literals_set_aside(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct rules_config c;
	rules_config_default(&c);
	pair(&b, &a, 750000, 200000, (struct code_class){43, 600000, 3077500},
	     (struct code_class){3, 70000, 0}, (struct code_class){0, 0, 0});
	a.have_code_lits = true;
	b.mem[MEM_BINARY] = 1100000;
	a.mem[MEM_BINARY] = 1100000 + 3100000;
	a.mem[MEM_SYSTEM] += 3100000;
	a.mem[MEM_TOTAL] += 3100000;
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(findings_failed(&f), 0);
	const struct finding *bin = expect(&f, "growth", "binary", VERDICT_PASS);
	has(bin, "less the literals of loaded modules +3.1 MB (of 43 modules of this suite and 3 "
	         "loaded from disk): judged +22.5 kB");
	has(expect(&f, "growth", "total", VERDICT_PASS), "their literals' binaries +3.1 MB");
	findings_clear(&f);

	/* the probe could not read them (an older probe, or nothing watched): judged as before */
	a.have_code_lits = false;
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	expect(&f, "growth", "binary", VERDICT_FAIL);
	findings_clear(&f);

	/* literals read for 1.0 MB of the 3.1 MB, and 5 modules unread: the rest fails, said as
	 * held by nothing gate sees */
	a.have_code_lits = true;
	a.code_test.lit_bytes = 1000000;
	a.code_lits_unread = 5;
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	bin = expect(&f, "growth", "binary", VERDICT_FAIL);
	has(bin, "judged +2.1 MB");
	has(bin,
	    "+2.1 MB of the judged growth is held by no process, table or term gate sees (a "
	    "port's or a NIF's buffers, or the literals of 5 modules loaded during the run whose "
	    "object code gate could not read)");
	findings_clear(&f);

	/* literals beyond the row's growth are set aside up to it, never below zero */
	a.code_test.lit_bytes = 9000000;
	a.code_lits_unread = 0;
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	has(expect(&f, "growth", "binary", VERDICT_PASS), "judged +0 B");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

/* The code server's table (code, owned by code_server) gains a row per module loaded, with
 * its object file's name: +0.8 MB for a suite that loads 1 000 modules from a long path. Set
 * aside by the ets row and by total; another table's growth is judged as before. */
static void test_code_server_table_set_aside(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct rules_config c;
	rules_config_default(&c);
	pair(&b, &a, 750000, 200000, (struct code_class){557, 17000000, 0},
	     (struct code_class){436, 1100000, 0}, (struct code_class){0, 0, 0});
	a.grew_ets = calloc(1, sizeof(*a.grew_ets));
	assert_non_null(a.grew_ets);
	a.ngrew_ets = 1;
	struct ets_growth *e = &a.grew_ets[0];
	e->name = strdup("code");
	e->owner_name = strdup("code_server");
	e->rows_before = 618;
	e->rows = 1641;
	e->bytes_before = 364712;
	e->bytes = 1137680;
	b.mem[MEM_ETS] = 680000;
	a.mem[MEM_ETS] = 680000 + 1100000;
	a.mem[MEM_SYSTEM] += 1100000;
	a.mem[MEM_TOTAL] += 1100000;
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(findings_failed(&f), 0);
	const struct finding *ets = expect(&f, "growth", "ets", VERDICT_PASS);
	has(ets, "less the code server's table +773.0 kB (+1 023 rows: the modules loaded during "
	         "the run): judged +327.0 kB");
	has(expect(&f, "growth", "total", VERDICT_PASS), "the code server's table +773.0 kB");
	findings_clear(&f);

	/* the same growth in a table of the application's: judged */
	free(e->name);
	e->name = strdup("sessions");
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	expect(&f, "growth", "ets", VERDICT_FAIL);
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
	        cmocka_unit_test(test_literals_set_aside),
	        cmocka_unit_test(test_code_server_table_set_aside),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
