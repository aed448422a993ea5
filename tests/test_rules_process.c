/* tests/test_rules_process.c: the process, atom and allocator rules on hand-built snapshots
 * (split from tests/test_rules.c). */
#include "model/finding.h"
#include "model/tests.h"
#include "tests/rules_fixture.h"

/* ---- process ---- */

static void test_process_defaults(void **state)
{
	(void)state;
	struct process_config c;
	process_config_default(&c);
	assert_int_equal(c.max_born, 100);
	assert_int_equal(c.max_mailbox, 10000);
	assert_int_equal(c.max_memory, 100000000);
}

static void test_process_born(void **state)
{
	(void)state;
	struct process_config c;
	struct snapshot b, a;
	struct findings f = {0};

	process_config_default(&c);
	deep(&b);
	deep(&a);
	a.born_count = 100;
	a.born_memory = 1200000;
	add_group(&a, "Elixir.Foo.Worker:init/1", 60, 800000, "<0.300.0>");
	add_group(&a, "Elixir.Registry.Partition", 40, 400000, NULL);
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 3);
	assert_string_equal(
	        expect(&f, "process", "born", VERDICT_PASS)->message,
	        "100 processes born during the run are still alive, using 1.2 MB, limit "
	        "100");
	expect(&f, "process", "mailbox", VERDICT_PASS);
	expect(&f, "process", "memory", VERDICT_PASS);
	findings_clear(&f);

	a.born_count = 101;
	add_group(&a, "Elixir.Foo.Leak:init/1", 70, 7000000, "<0.301.0>");
	for (int i = 0; i < 5; i++)
		add_group(&a, "proc_lib:init_p/5", 1, 2000, NULL);
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "process", "born", VERDICT_FAIL);
	assert_string_equal(
	        x->message,
	        "101 processes born during the run are still alive, using 1.2 MB, limit "
	        "100; largest groups: Foo.Leak:init/1 x 70 (7.0 MB, e.g. <0.301.0>), "
	        "Foo.Worker:init/1 x 60 (800.0 kB, e.g. <0.300.0>), Registry.Partition "
	        "x 40 (400.0 kB), proc_lib:init_p/5 x 1 (2.0 kB), proc_lib:init_p/5 x 1 "
	        "(2.0 kB) and 3 more groups");
	assert_int_equal(x->after, 1200000);
	assert_int_equal(findings_failed(&f), 1);
	findings_clear(&f);

	/* a group whose starter is known: the test, its file and line, in the group's figures
	 * (once: not its code, which the group's key says) */
	struct proc_group *g = &a.born[a.nborn - 6]; /* Foo.Leak:init/1 */
	g->started.test = strdup("test leaks");
	g->started.file = strdup("test/leak_test.exs");
	g->started.line = 12;
	g->started.module = strdup("Elixir.Foo.LeakTest");
	g->started.code = strdup("Elixir.Foo.Leak:init/1");
	/* and a second group the same test started, through a supervisor: the test said once */
	struct proc_group *w = &a.born[0]; /* Foo.Worker:init/1 */
	w->started.test = strdup("test leaks");
	w->started.file = strdup("test/leak_test.exs");
	w->started.line = 12;
	w->started.module = strdup("Elixir.Foo.LeakTest");
	w->started.by = strdup("Foo.Sup");
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	has(expect(&f, "process", "born", VERDICT_FAIL),
	    "Foo.Worker:init/1 x 60 (800.0 kB, e.g. <0.300.0>; started by the same test, via "
	    "Foo.Sup)");
	has(expect(&f, "process", "born", VERDICT_FAIL),
	    "largest groups: Foo.Leak:init/1 x 70 (7.0 MB, e.g. <0.301.0>; started by ");
	has(expect(&f, "process", "born", VERDICT_FAIL),
	    "\"test leaks\" (test/leak_test.exs:12, in Foo.LeakTest)), Foo.Worker:init/1 x 60");
	findings_clear(&f);

	a.born_count = 1;
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	has(expect(&f, "process", "born", VERDICT_PASS), "1 process born during the run is still");
	findings_clear(&f);
	c.max_born = RULES_OFF;
	a.born_count = 1000000;
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	assert_null(find(&f, "process", "born"));
	assert_int_equal(findings_failed(&f), 0);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void test_process_mailbox(void **state)
{
	(void)state;
	struct process_config c;
	struct snapshot b, a;
	struct findings f = {0};
	struct proc_info *p;

	process_config_default(&c);
	deep(&b);
	deep(&a);
	p = add_proc(&a, "<0.200.0>", "Elixir.Foo.Sink", "Elixir.Foo.Sink:init/1");
	p->message_queue_len = 10000;
	p->memory = 1000000;
	p->current_function = strdup("gen_server:loop/7");
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	assert_string_equal(expect(&f, "process", "mailbox", VERDICT_PASS)->message,
	                    "no process has more than 10 000 messages in its mailbox (longest: "
	                    "Foo.Sink (<0.200.0>) with 10 000)");
	findings_clear(&f);

	a.procs[a.nprocs - 1].message_queue_len = 10001;
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "process", "mailbox Foo.Sink", VERDICT_FAIL);
	assert_string_equal(x->message,
	                    "process Foo.Sink (<0.200.0>) has 10 001 messages in its "
	                    "mailbox, limit 10 000 (memory 1.0 MB, in gen_server:loop/7)");
	assert_null(find(&f, "process", "mailbox"));
	findings_clear(&f);

	/* twelve long mailboxes: ten named, longest first */
	for (int i = 0; i < 11; i++) {
		char pid[32];
		snprintf(pid, sizeof(pid), "<0.%d.0>", 600 + i);
		p = add_proc(&a, pid, NULL, NULL);
		p->message_queue_len = 20000 + i;
	}
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	assert_int_equal(count(&f, "process", VERDICT_FAIL), RULES_MAX_CULPRITS + 1);
	expect(&f, "process", "mailbox <0.610.0>", VERDICT_FAIL);
	assert_null(find(&f, "process", "mailbox Foo.Sink")); /* the shortest of the twelve */
	has(expect(&f, "process", "mailbox", VERDICT_FAIL),
	    "and 2 more processes with long mailboxes");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void test_process_memory(void **state)
{
	(void)state;
	struct process_config c;
	struct snapshot b, a;
	struct findings f = {0};
	struct proc_info *p;

	process_config_default(&c);
	deep(&b);
	deep(&a);
	p = add_proc(&b, "<0.210.0>", "Elixir.Foo.Cache", NULL);
	p->memory = 1000000;
	p = add_proc(&a, "<0.210.0>", "Elixir.Foo.Cache", NULL);
	p->memory = 100000000;
	p->total_heap_size = 90000000;
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	assert_string_equal(expect(&f, "process", "memory", VERDICT_PASS)->message,
	                    "no process uses more than 100.0 MB after GC (largest: Foo.Cache "
	                    "(<0.210.0>) with 100.0 MB)");
	findings_clear(&f);

	a.procs[a.nprocs - 1].memory = 100000001;
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "process", "memory Foo.Cache", VERDICT_FAIL);
	assert_string_equal(x->message, "process Foo.Cache (<0.210.0>) uses 100.0 MB after GC "
	                                "(heap 90.0 MB), limit 100.0 MB; it used 1.0 MB before the "
	                                "run");
	assert_int_equal(x->before, 1000000);
	assert_int_equal(x->after, 100000001);
	assert_int_equal(x->floor, 100000000);
	findings_clear(&f);

	/* not in the before lists: no "before" part; a pid-less process is "?" */
	free(b.procs[b.nprocs - 1].pid);
	b.procs[b.nprocs - 1].pid = NULL;
	free(a.procs[a.nprocs - 1].name);
	a.procs[a.nprocs - 1].name = NULL;
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	assert_string_equal(expect(&f, "process", "memory <0.210.0>", VERDICT_FAIL)->message,
	                    "process <0.210.0> uses 100.0 MB after GC (heap 90.0 MB), limit "
	                    "100.0 MB");
	findings_clear(&f);
	free(a.procs[a.nprocs - 1].pid);
	a.procs[a.nprocs - 1].pid = NULL;
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	has(expect(&f, "process", "memory ?", VERDICT_FAIL), "process ? uses 100.0 MB");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void test_process_skip(void **state)
{
	(void)state;
	struct process_config c;
	struct snapshot b, a;
	struct findings f = {0};

	process_config_default(&c);
	snap(&b);
	snap(&a);
	a.born_count = 5000; /* without per-process data, not trusted */
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 3);
	has(expect(&f, "process", "born", VERDICT_SKIP), "no per-process data");
	expect(&f, "process", "mailbox", VERDICT_SKIP);
	expect(&f, "process", "memory", VERDICT_SKIP);
	findings_clear(&f);
	c.max_born = c.max_mailbox = c.max_memory = RULES_OFF;
	assert_int_equal(process_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 0);
}

/* ---- atom ---- */

static void test_atom_defaults(void **state)
{
	(void)state;
	struct atom_config c;
	atom_config_default(&c);
	assert_int_equal(c.max_growth, 10000);
	assert_int_equal(c.per_test, 5);
	assert_true(c.max_usage_pct == 80.0);
}

static void test_atom_growth(void **state)
{
	(void)state;
	struct atom_config c;
	struct snapshot b, a;
	struct findings f = {0};
	struct test_run run = {0};

	atom_config_default(&c);
	c.max_usage_pct = -1;
	snap(&b);
	snap(&a);
	add_tests(&run, 31);
	b.atom_count = 20000;
	a.atom_count = 20000 + 10155; /* 10 000 + 5 x 31 */
	a.mem[MEM_ATOM_USED] = 10500000;
	assert_int_equal(atom_check(&f, &b, &a, &run, &c), 0);
	assert_int_equal(f.count, 1);
	const struct finding *x = expect(&f, "atom", "growth", VERDICT_PASS);
	assert_string_equal(x->message, "atom count grew 20 000 -> 30 155 (+10 155 atoms), limit "
	                                "+10 155 (10 000 + 5 x 31 tests)");
	assert_int_equal(x->before, 10000000);
	assert_int_equal(x->after, 10500000);
	findings_clear(&f);

	a.atom_count++;
	assert_int_equal(atom_check(&f, &b, &a, &run, &c), 0);
	x = expect(&f, "atom", "growth", VERDICT_FAIL);
	assert_string_equal(x->message, "atom count grew 20 000 -> 30 156 (+10 156 atoms), limit "
	                                "+10 155 (10 000 + 5 x 31 tests); atoms are never "
	                                "collected: look for String.to_atom/1 or binary_to_atom/2 "
	                                "on data");
	findings_clear(&f);

	/* no run: no per-test allowance */
	a.atom_count = 30001;
	assert_int_equal(atom_check(&f, &b, &a, NULL, &c), 0);
	has(expect(&f, "atom", "growth", VERDICT_FAIL), "limit +10 000 (10 000 + 5 x 0 tests)");
	findings_clear(&f);
	a.atom_count = 30000;
	assert_int_equal(atom_check(&f, &b, &a, NULL, &c), 0);
	expect(&f, "atom", "growth", VERDICT_PASS);
	findings_clear(&f);

	/* a shrink (a fresh node, say) passes; a huge per_test does not overflow */
	a.atom_count = 100;
	c.per_test = INT64_C(4611686018427387903);
	assert_int_equal(atom_check(&f, &b, &a, &run, &c), 0);
	has(expect(&f, "atom", "growth", VERDICT_PASS), "atom count shrank 20 000 -> 100 (-19 900");
	findings_clear(&f);

	/* missing figures skip; off is no finding */
	c.per_test = 5;
	b.atom_count = 0;
	assert_int_equal(atom_check(&f, &b, &a, &run, &c), 0);
	has(expect(&f, "atom", "growth", VERDICT_SKIP), "not reported by the node in the before");
	findings_clear(&f);
	b.atom_count = 5;
	a.atom_count = 0;
	assert_int_equal(atom_check(&f, &b, &a, &run, &c), 0);
	has(expect(&f, "atom", "growth", VERDICT_SKIP), "in the after snapshot");
	findings_clear(&f);
	c.max_growth = RULES_OFF;
	assert_int_equal(atom_check(&f, &b, &a, &run, &c), 0);
	assert_int_equal(f.count, 0);
	test_run_clear(&run);
}

/* A suite whose tests' names are many atoms: the growth rule's atom_used row fails on its
 * bytes (20 000 names of about 45 characters: +1.2 MB, over its 1 MB floor) while the atom
 * rule, which allows 5 atoms a test, passes: the row passes as context. When the atom rule
 * fails too, the row stays failing, and other growth rows are not touched. */
static void test_atom_rows_context(void **state)
{
	(void)state;
	struct atom_config c;
	struct snapshot b, a;
	struct findings f = {0};
	struct test_run run = {0};

	atom_config_default(&c);
	c.max_usage_pct = -1;
	snap(&b);
	snap(&a);
	add_tests(&run, 20000);
	b.atom_count = 21000;
	a.atom_count = 21000 + 20100;
	assert_int_equal(findings_add(&f, "growth", "atom_used", VERDICT_FAIL, 578000, 1806000,
	                              1000000, 10, "atom_used grew"),
	                 0);
	assert_int_equal(findings_add(&f, "growth", "ets", VERDICT_FAIL, 1, 9000000, 1000000, 10,
	                              "ets grew"),
	                 0);
	/* the rest of system: +2.4 MB of 21.5 MB, 20 100 atoms' entries 1.9 MB of it: the rest
	 * 0.5 MB passes; +4.5 MB (2.6 MB beside the entries) stays failing */
	assert_int_equal(findings_add(&f, "growth", "system", VERDICT_FAIL, 21500000, 23900000,
	                              1000000, 10, "system grew"),
	                 0);
	assert_int_equal(findings_add(&f, "growth", "system", VERDICT_FAIL, 21500000, 26000000,
	                              1000000, 10, "system grew"),
	                 0);
	assert_int_equal(atom_check(&f, &b, &a, &run, &c), 0);
	assert_int_equal(atom_rows_context(&f, 0, &b, &a), 0);
	const struct finding *row = expect(&f, "growth", "atom_used", VERDICT_PASS);
	has(row, "context: explained by the run's +20 100 atoms, within the atom rule's limit");
	assert_string_equal(row->explained_by,
	                    "the run's +20 100 atoms, within the atom rule's limit");
	expect(&f, "growth", "ets", VERDICT_FAIL);
	assert_int_equal(f.items[2].verdict, VERDICT_PASS);
	assert_int_equal(f.items[3].verdict, VERDICT_FAIL);
	findings_clear(&f);

	/* 110 001 new atoms: over 10 000 + 5 x 20 000; the row is one more voice of a leak */
	a.atom_count = 21000 + 110001;
	assert_int_equal(findings_add(&f, "growth", "atom_used", VERDICT_FAIL, 578000, 7000000,
	                              1000000, 10, "atom_used grew"),
	                 0);
	assert_int_equal(atom_check(&f, &b, &a, &run, &c), 0);
	assert_int_equal(atom_rows_context(&f, 0, &b, &a), 0);
	expect(&f, "growth", "atom_used", VERDICT_FAIL);
	expect(&f, "atom", "growth", VERDICT_FAIL);
	findings_clear(&f);
	test_run_clear(&run);
}

static void test_atom_usage(void **state)
{
	(void)state;
	struct atom_config c;
	struct snapshot b, a;
	struct findings f = {0};

	atom_config_default(&c);
	c.max_growth = RULES_OFF;
	snap(&b);
	snap(&a);
	a.atom_limit = 1000;
	a.atom_count = 800;
	assert_int_equal(atom_check(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(f.count, 1);
	assert_string_equal(expect(&f, "atom", "usage", VERDICT_PASS)->message,
	                    "atom table holds 800 of 1 000 atoms (80.0 %), limit 80 %");
	findings_clear(&f);
	a.atom_count = 801;
	assert_int_equal(atom_check(&f, &b, &a, NULL, &c), 0);
	assert_string_equal(expect(&f, "atom", "usage", VERDICT_FAIL)->message,
	                    "atom table holds 801 of 1 000 atoms (80.1 %), limit 80 %; the node "
	                    "crashes when it is full (raise it with +t, or find the leak)");
	findings_clear(&f);
	a.atom_limit = 0;
	assert_int_equal(atom_check(&f, &b, &a, NULL, &c), 0);
	has(expect(&f, "atom", "usage", VERDICT_SKIP), "atom_limit not reported");
	findings_clear(&f);
	c.max_usage_pct = -1;
	assert_int_equal(atom_check(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(f.count, 0);
}

/* ---- allocator ---- */

static void test_alloc_defaults(void **state)
{
	(void)state;
	struct alloc_config c;
	alloc_config_default(&c);
	assert_true(c.max_fragmentation_pct == 75.0);
	assert_int_equal(c.waste_floor, 64000000);
}

static void test_alloc_boundaries(void **state)
{
	(void)state;
	struct alloc_config c;
	struct snapshot b, a;
	struct findings f = {0};

	alloc_config_default(&c);
	deep(&b);
	deep(&a);
	/* fragmentation exactly at the limit, waste far above the floor */
	add_alloc(&a, "binary_alloc", 400000000, 100000000, 0.75);
	/* waste exactly at the floor, fragmentation far above the limit */
	add_alloc(&a, "ets_alloc", 70000000, 6000000, 64.0 / 70.0);
	assert_int_equal(alloc_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 1);
	assert_string_equal(expect(&f, "allocator", "fragmentation", VERDICT_PASS)->message,
	                    "no allocator is over 75 % fragmented with more than 64.0 MB of waste "
	                    "(most waste: binary_alloc, 300.0 MB, 75.0 %)");
	findings_clear(&f);

	a.allocs[a.nallocs - 2].fragmentation = 0.7501;
	a.allocs[a.nallocs - 1].blocks_size = 5999999;
	assert_int_equal(alloc_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 2);
	/* most waste first; the before figure from the same type */
	assert_string_equal(f.items[0].subject, "fragmentation binary_alloc");
	assert_string_equal(f.items[0].message,
	                    "allocator binary_alloc is 75.0 % fragmented: 400.0 MB of carriers "
	                    "hold 100.0 MB of blocks (300.0 MB wasted), limit 75 % above a waste "
	                    "floor of 64.0 MB; it wasted 500.0 kB before the run");
	assert_int_equal(f.items[0].before, 500000);
	assert_int_equal(f.items[0].after, 300000000);
	assert_int_equal(f.items[0].floor, 64000000);
	assert_true(f.items[0].max_pct == 75.0);
	assert_string_equal(f.items[1].subject, "fragmentation ets_alloc");
	assert_string_equal(f.items[1].message,
	                    "allocator ets_alloc is 91.4 % fragmented: 70.0 MB of carriers hold "
	                    "6.0 MB of blocks (64.0 MB wasted), limit 75 % above a waste floor of "
	                    "64.0 MB");
	findings_clear(&f);

	/* skip without allocator data, nothing when off */
	struct snapshot light;
	snap(&light);
	assert_int_equal(alloc_check(&f, &b, &light, &c), 0);
	has(expect(&f, "allocator", "fragmentation", VERDICT_SKIP), "no allocator data");
	findings_clear(&f);
	c.max_fragmentation_pct = -1;
	assert_int_equal(alloc_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 0);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_process_defaults),  cmocka_unit_test(test_process_born),
	        cmocka_unit_test(test_process_mailbox),   cmocka_unit_test(test_process_memory),
	        cmocka_unit_test(test_process_skip),      cmocka_unit_test(test_atom_defaults),
	        cmocka_unit_test(test_atom_growth),       cmocka_unit_test(test_atom_usage),
	        cmocka_unit_test(test_atom_rows_context), cmocka_unit_test(test_alloc_defaults),
	        cmocka_unit_test(test_alloc_boundaries),
	};
	return cmocka_run_group_tests_name("rules_process", tests, NULL, NULL);
}
