/* tests/test_rules.c: the ets and binary rules, and the judge's rule steps, on hand-built snapshots
 * (tests/test_rules_process.c: the process, atom and allocator rules). */
#include "model/finding.h"
#include "model/tests.h"
#include "tests/judge_fixture.h"
#include "tests/rules_fixture.h"

/* ---- shared helpers ---- */

static void test_helpers(void **state)
{
	(void)state;
	char buf[64];
	static const struct {
		int64_t n;
		const char *s;
	} counts[] = {
	        {0, "0"},
	        {7, "7"},
	        {999, "999"},
	        {1000, "1 000"},
	        {60000, "60 000"},
	        {123456, "123 456"},
	        {1048576, "1 048 576"},
	        {-1234, "-1 234"},
	        {INT64_MIN, "-9 223 372 036 854 775 808"},
	};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		rules_count_format(buf, sizeof(buf), counts[i].n);
		assert_string_equal(buf, counts[i].s);
	}
	rules_count_format(buf, 4, 123456);
	assert_string_equal(buf, "123");

	assert_string_equal(rules_display("Elixir.Foo.Bar"), "Foo.Bar");
	assert_string_equal(rules_display("Elixir."), "Elixir.");
	assert_string_equal(rules_display("gen_server"), "gen_server");
	assert_null(rules_display(NULL));

	struct proc_info p = {0};
	rules_proc_label(buf, sizeof(buf), &p);
	assert_string_equal(buf, "?");
	assert_string_equal(rules_proc_subject(&p), "?");
	p.pid = "<0.9.0>";
	rules_proc_label(buf, sizeof(buf), &p);
	assert_string_equal(buf, "<0.9.0>");
	p.initial_call = "Elixir.Foo.Server:init/1";
	rules_proc_label(buf, sizeof(buf), &p);
	assert_string_equal(buf, "<0.9.0> (Foo.Server:init/1)");
	assert_string_equal(rules_proc_subject(&p), "<0.9.0>");
	p.name = "Elixir.Foo.Server";
	rules_proc_label(buf, sizeof(buf), &p);
	assert_string_equal(buf, "Foo.Server (<0.9.0>)");
	assert_string_equal(rules_proc_subject(&p), "Foo.Server");

	/* ranking: largest first, ties in the order added */
	struct culprits c = {0};
	static const int64_t keys[] = {5, 9, 5, 1, 9, 40};
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(culprits_add(&c, i, keys[i]), 0);
	culprits_sort(&c);
	static const size_t order[] = {5, 1, 4, 0, 2, 3};
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(c.items[i].index, order[i]);
	struct findings f = {0};
	assert_int_equal(culprits_add_more(&f, "r", "s", &c, "things"), 0);
	assert_int_equal(f.count, 0); /* 6 <= RULES_MAX_CULPRITS */
	for (size_t i = 0; i < 20; i++)
		assert_int_equal(culprits_add(&c, 10 + i, 0), 0);
	assert_int_equal(culprits_add_more(&f, "r", "s", &c, "things"), 0);
	assert_int_equal(f.count, 1);
	assert_int_equal(f.items[0].verdict, VERDICT_FAIL);
	assert_string_equal(f.items[0].message, "and 16 more things; the 10 worst are named above");
	findings_clear(&f);
	culprits_clear(&c);
	culprits_clear(&c);
	culprits_clear(NULL);
}

/* ---- ets ---- */

static void test_ets_defaults(void **state)
{
	(void)state;
	struct ets_config c;
	ets_config_default(&c);
	assert_int_equal(c.max_total, RULES_OFF);
	assert_int_equal(c.max_left_alive, 0);
	assert_int_equal(c.left_alive_floor, 1000000);
	assert_int_equal(c.ntables, 0);
	assert_null(c.tables);
	struct ets_table_limit *t = ets_config_table_add(&c, "corpus_*");
	assert_non_null(t);
	assert_string_equal(t->name, "corpus_*");
	assert_int_equal(t->max_bytes, RULES_OFF);
	assert_int_equal(t->max_size, RULES_OFF);
	assert_true(t->max_growth_pct < 0);
	assert_int_equal(c.ntables, 1);
	ets_config_clear(&c);
	assert_int_equal(c.ntables, 0);
	ets_config_clear(&c);
	ets_config_clear(NULL);
}

/* The floor: a created table of exactly left_alive_floor bytes counts, one byte less not. */
static void test_ets_left_alive_floor(void **state)
{
	(void)state;
	struct ets_config c;
	struct snapshot b, a;
	struct findings f = {0};

	ets_config_default(&c);
	deep(&b);
	deep(&a);
	add_ets(&a, "sessions", NULL, "<0.250.0>", "Elixir.LeakEts.Sessions", 999999, 60000, true);
	add_ets(&a, "big_but_old", NULL, "<0.42.0>", NULL, 50000000, 10, false);
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "ets", "left_alive", VERDICT_PASS);
	has(x, "1 ETS table created during the run is still alive, 0 of at least 1.0 MB (limit 0)");
	assert_int_equal(count(&f, "ets", ANY), 1);
	findings_clear(&f);

	a.ets[a.nets - 2].memory = 1000000;
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	x = expect(&f, "ets", "left_alive sessions", VERDICT_FAIL);
	assert_string_equal(x->message,
	                    "ETS table sessions (owner LeakEts.Sessions) was created during the "
	                    "run and left alive with 1.0 MB in 60 000 rows; 1 such tables of at "
	                    "least 1.0 MB, max_left_alive 0");
	assert_int_equal(x->after, 1000000);
	assert_int_equal(x->floor, 1000000);
	assert_null(find(&f, "ets", "left_alive"));
	assert_int_equal(findings_failed(&f), 1);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* The count: max_left_alive such tables pass, one more fails, each named. */
static void test_ets_left_alive_count(void **state)
{
	(void)state;
	struct ets_config c;
	struct snapshot b, a;
	struct findings f = {0};

	ets_config_default(&c);
	c.max_left_alive = 2;
	deep(&b);
	deep(&a);
	add_ets(&a, "t1", "#Ref<0.1.2.3>", "<0.300.0>", NULL, 3000000, 10, true);
	add_ets(&a, "t2", "#Ref<0.1.2.4>", "<0.301.0>", NULL, 5000000, 20, true);
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	has(expect(&f, "ets", "left_alive", VERDICT_PASS), "2 of at least 1.0 MB (limit 2)");
	findings_clear(&f);

	add_ets(&a, NULL, "#Ref<0.1.2.5>", NULL, NULL, 4000000, 30, true);
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	assert_int_equal(count(&f, "ets", VERDICT_FAIL), 3);
	assert_int_equal(count(&f, "ets", ANY), 3);
	/* largest first; a missing owner shows as ?, a missing name as the id */
	assert_string_equal(f.items[0].subject, "left_alive t2");
	assert_string_equal(f.items[1].subject, "left_alive #Ref<0.1.2.5>");
	assert_string_equal(f.items[2].subject, "left_alive t1");
	has(&f.items[0], "ETS table t2 (owner <0.301.0>) was created during the run");
	has(&f.items[0], "3 such tables of at least 1.0 MB, max_left_alive 2");
	has(&f.items[1], "ETS table #Ref<0.1.2.5> (owner ?)");
	findings_clear(&f);

	c.max_left_alive = RULES_OFF;
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 0);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* More culprits than RULES_MAX_CULPRITS: the worst are named, then one "and N more". */
static void test_ets_culprit_cap(void **state)
{
	(void)state;
	struct ets_config c;
	struct snapshot b, a;
	struct findings f = {0};
	char name[32];

	ets_config_default(&c);
	deep(&b);
	deep(&a);
	/* fifteen owners (one owner's tables are one group: test_onecause.c) */
	for (int i = 0; i < 15; i++) {
		char owner[32];
		snprintf(name, sizeof(name), "leak_%02d", i);
		snprintf(owner, sizeof(owner), "<0.%d.0>", 400 + i);
		add_ets(&a, name, NULL, owner, NULL, 1000000 + i * 1000, i, true);
	}
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, RULES_MAX_CULPRITS + 1);
	assert_int_equal(findings_failed(&f), RULES_MAX_CULPRITS + 1);
	for (int k = 0; k < RULES_MAX_CULPRITS; k++) {
		snprintf(name, sizeof(name), "left_alive leak_%02d", 14 - k);
		assert_string_equal(f.items[k].subject, name);
		has(&f.items[k], "15 such tables");
	}
	const struct finding *more = &f.items[RULES_MAX_CULPRITS];
	assert_string_equal(more->subject, "left_alive");
	assert_string_equal(more->message, "and 5 more ETS tables created during the run and left "
	                                   "alive; the 10 worst are named above");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void test_ets_total(void **state)
{
	(void)state;
	struct ets_config c;
	struct snapshot b, a;
	struct findings f = {0};

	ets_config_default(&c);
	c.max_left_alive = RULES_OFF;
	deep(&b);
	deep(&a);
	b.mem[MEM_ETS] = 600000;
	a.mem[MEM_ETS] = 2000000;
	add_ets(&a, "corpus_cache", NULL, "<0.200.0>", "Elixir.LeakEts.Corpus", 1500000, 60000,
	        true);
	/* off by default: no finding at all */
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 0);

	c.max_total = 2000000;
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	assert_string_equal(expect(&f, "ets", "total", VERDICT_PASS)->message,
	                    "ETS total grew 600.0 kB -> 2.0 MB, within the cap of 2.0 MB");
	findings_clear(&f);

	a.mem[MEM_ETS] = 2000001;
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "ets", "total", VERDICT_FAIL);
	assert_string_equal(
	        x->message,
	        "ETS total grew 600.0 kB -> 2.0 MB, cap 2.0 MB; largest tables: "
	        "corpus_cache 1.5 MB (owner LeakEts.Corpus), ac_tab 7.0 kB (owner "
	        "application_controller), file_io_servers 1.0 kB (owner file_server_2)");
	assert_int_equal(x->before, 600000);
	assert_int_equal(x->after, 2000001);
	findings_clear(&f);

	/* a light after-snapshot still has the figure: judged, without the table list */
	struct snapshot light;
	snap(&light);
	light.mem[MEM_ETS] = 3000000;
	assert_int_equal(ets_check(&f, &b, &light, &c), 0);
	x = expect(&f, "ets", "total", VERDICT_FAIL);
	assert_string_equal(x->message, "ETS total grew 600.0 kB -> 3.0 MB, cap 2.0 MB");
	findings_clear(&f);

	/* not reported: skipped; missing in before only: judged on the after figure */
	light.have[MEM_ETS] = false;
	assert_int_equal(ets_check(&f, &b, &light, &c), 0);
	has(expect(&f, "ets", "total", VERDICT_SKIP), "not reported");
	findings_clear(&f);
	b.have[MEM_ETS] = false;
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	has(expect(&f, "ets", "total", VERDICT_FAIL), "ETS total is 2.0 MB, cap 2.0 MB");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void test_ets_table_bytes_and_rows(void **state)
{
	(void)state;
	struct ets_config c;
	struct snapshot b, a;
	struct findings f = {0};

	ets_config_default(&c);
	c.max_left_alive = RULES_OFF;
	struct ets_table_limit *t = ets_config_table_add(&c, "corpus_*");
	assert_non_null(t);
	t->max_bytes = 2000000;
	t = ets_config_table_add(&c, "sessions");
	assert_non_null(t);
	t->max_size = 100;

	deep(&b);
	deep(&a);
	add_ets(&b, "corpus_cache", NULL, "<0.200.0>", "Elixir.LeakEts.Corpus", 600000, 1000,
	        false);
	add_ets(&a, "corpus_cache", NULL, "<0.200.0>", "Elixir.LeakEts.Corpus", 2000000, 61000,
	        false);
	add_ets(&a, "xcorpus_cache", NULL, "<0.201.0>", NULL, 90000000, 1, false);
	add_ets(&a, "sessions", NULL, "<0.202.0>", NULL, 5000, 100, true);
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 2);
	assert_string_equal(expect(&f, "ets", "table corpus_*", VERDICT_PASS)->message,
	                    "1 ETS table matching corpus_* within 2.0 MB (largest: corpus_cache, "
	                    "2.0 MB, 61 000 rows)");
	has(expect(&f, "ets", "table sessions", VERDICT_PASS),
	    "1 ETS table matching sessions within 100 rows");
	findings_clear(&f);

	a.ets[a.nets - 3].memory = 2000001;
	a.ets[a.nets - 1].size = 101;
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 2);
	const struct finding *x = expect(&f, "ets", "table corpus_cache", VERDICT_FAIL);
	assert_string_equal(x->message, "ETS table corpus_cache (owner LeakEts.Corpus) grew "
	                                "600.0 kB -> 2.0 MB (+60 000 rows), cap 2.0 MB (for "
	                                "tables matching corpus_*)");
	assert_int_equal(x->before, 600000);
	assert_int_equal(x->after, 2000001);
	assert_int_equal(x->floor, 2000000);
	assert_true(x->max_pct < 0);
	/* an exact name is not repeated; a table only in after counts from 0 */
	x = expect(&f, "ets", "table sessions", VERDICT_FAIL);
	assert_string_equal(x->message, "ETS table sessions (owner <0.202.0>) grew 0 B -> 5.0 kB "
	                                "(+101 rows, created during the run), cap 100 rows");
	findings_clear(&f);

	/* no table matches: a pass that says so; a light snapshot: a skip */
	free(c.tables[1].name);
	c.tables[1].name = strdup("nothing_*");
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	assert_string_equal(expect(&f, "ets", "table nothing_*", VERDICT_PASS)->message,
	                    "no ETS table matches nothing_* (limits 100 rows)");
	findings_clear(&f);
	struct snapshot light;
	snap(&light);
	assert_int_equal(ets_check(&f, &b, &light, &c), 0);
	assert_int_equal(f.count, 2);
	has(expect(&f, "ets", "table corpus_*", VERDICT_SKIP), "lists no ETS tables");
	expect(&f, "ets", "table nothing_*", VERDICT_SKIP);
	assert_int_equal(findings_failed(&f), 0);
	findings_clear(&f);
	ets_config_clear(&c);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void test_ets_table_growth(void **state)
{
	(void)state;
	struct ets_config c;
	struct snapshot b, a;
	struct findings f = {0};

	ets_config_default(&c);
	c.max_left_alive = RULES_OFF;
	struct ets_table_limit *t = ets_config_table_add(&c, "cache*");
	assert_non_null(t);
	t->max_growth_pct = 50;

	deep(&b);
	deep(&a);
	/* two unnamed tables called cache: the same table (id) is compared, not the first */
	add_ets(&b, "cache", "#Ref<0.0.0.1>", "<0.10.0>", NULL, 100000, 1, false);
	add_ets(&b, "cache", "#Ref<0.0.0.2>", "<0.11.0>", NULL, 1000, 1, false);
	add_ets(&a, "cache", "#Ref<0.0.0.2>", "<0.11.0>", NULL, 1500, 3, false);
	/* recreated: a new id, matched by name to the first of that name */
	add_ets(&a, "cache_b", "#Ref<0.0.0.9>", "<0.12.0>", NULL, 0, 0, true);
	add_ets(&b, "cache_b", "#Ref<0.0.0.3>", "<0.12.0>", NULL, 4000, 0, false);
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	has(expect(&f, "ets", "table cache*", VERDICT_PASS),
	    "2 ETS tables matching cache* within +50 % growth");
	findings_clear(&f);

	a.ets[a.nets - 2].memory = 1501;
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "ets", "table cache", VERDICT_FAIL);
	assert_string_equal(x->message, "ETS table cache (owner <0.11.0>) grew 1.0 kB -> 1.5 kB "
	                                "(+2 rows), growth +50.1 % above the limit of +50 % (for "
	                                "tables matching cache*)");
	assert_int_equal(x->before, 1000);
	assert_true(x->max_pct == 50);
	assert_int_equal(count(&f, "ets", ANY), 1);
	findings_clear(&f);

	/* a table created during the run grows from nothing */
	add_ets(&a, "cache_new", "#Ref<0.0.0.7>", "<0.13.0>", NULL, 1, 0, true);
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	has(expect(&f, "ets", "table cache_new", VERDICT_FAIL),
	    "grew 0 B -> 1 B (+0 rows, created during the run), growth from nothing above the "
	    "limit of +50 %");
	assert_int_equal(findings_failed(&f), 2);
	findings_clear(&f);

	/* several limits broken at once are all named; a second entry applies as well */
	t->max_bytes = 1000;
	t->max_size = 2;
	t = ets_config_table_add(&c, "*");
	assert_non_null(t);
	t->max_bytes = 1000000;
	assert_int_equal(ets_check(&f, &b, &a, &c), 0);
	has(expect(&f, "ets", "table cache", VERDICT_FAIL),
	    "cap 1.0 kB; cap 2 rows; growth +50.1 % above the limit of +50 %");
	expect(&f, "ets", "table *", VERDICT_PASS);
	findings_clear(&f);
	ets_config_clear(&c);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* ---- binary ---- */

static void test_binary_defaults(void **state)
{
	(void)state;
	struct binary_config c;
	binary_config_default(&c);
	assert_int_equal(c.max_refs_per_process, 50000);
	assert_int_equal(c.max_bytes_per_process, 10000000);
}

static void test_binary_boundaries(void **state)
{
	(void)state;
	struct binary_config c;
	struct snapshot b, a;
	struct findings f = {0};
	struct proc_info *p;

	binary_config_default(&c);
	deep(&b);
	deep(&a);
	p = add_proc(&b, "<0.120.0>", "Elixir.LeakBin.Holder", "Elixir.LeakBin.Holder:init/1");
	p->bin_bytes = 100000;
	p = add_proc(&a, "<0.120.0>", "Elixir.LeakBin.Holder", "Elixir.LeakBin.Holder:init/1");
	p->bin_refs = 50000;
	p->bin_bytes = 10000000;
	p = add_proc(&a, "<0.121.0>", NULL, "Elixir.LeakBin.Worker:init/1");
	p->bin_refs = 3;
	p->bin_bytes = 5000;
	assert_int_equal(binary_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 1);
	assert_string_equal(
	        expect(&f, "binary", "process", VERDICT_PASS)->message,
	        "no process holds more than 50 000 refs and 10.0 MB of refc binaries "
	        "after GC (most: LeakBin.Holder (<0.120.0>) with 50 000 refs, 10.0 MB)");
	findings_clear(&f);

	/* refs + 1 */
	a.procs[a.nprocs - 2].bin_refs = 50001;
	assert_int_equal(binary_check(&f, &b, &a, &c), 0);
	const struct finding *x = expect(&f, "binary", "process LeakBin.Holder", VERDICT_FAIL);
	assert_string_equal(x->message,
	                    "process LeakBin.Holder (<0.120.0>) holds 50 001 refc "
	                    "binaries of 10.0 MB after GC, limit 50 000 refs and 10.0 MB");
	assert_int_equal(x->before, 100000);
	assert_int_equal(x->after, 10000000);
	assert_int_equal(f.count, 1);
	findings_clear(&f);

	/* bytes + 1, with what GC freed; an unregistered process is named by pid and call */
	a.procs[a.nprocs - 2].bin_refs = 300;
	p = &a.procs[a.nprocs - 1];
	p->bin_bytes = 10000001;
	p->bin_refs = 301;
	p->bin_bytes_before_gc = 11200001;
	p->bin_refs_before_gc = 1801;
	assert_int_equal(binary_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 1);
	x = expect(&f, "binary", "process <0.121.0>", VERDICT_FAIL);
	assert_string_equal(x->message,
	                    "process <0.121.0> (LeakBin.Worker:init/1) holds 301 refc binaries of "
	                    "10.0 MB after GC (GC freed 1.2 MB in 1 500 refs), limit 50 000 refs "
	                    "and 10.0 MB");
	assert_int_equal(x->before, 0); /* not in the before-snapshot's lists */
	findings_clear(&f);

	/* one limit off: the other still applies; both off: no finding */
	c.max_bytes_per_process = RULES_OFF;
	assert_int_equal(binary_check(&f, &b, &a, &c), 0);
	has(expect(&f, "binary", "process", VERDICT_PASS), "more than 50 000 refs of refc");
	findings_clear(&f);
	c.max_refs_per_process = RULES_OFF;
	assert_int_equal(binary_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 0);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void test_binary_skip_and_cap(void **state)
{
	(void)state;
	struct binary_config c;
	struct snapshot b, a;
	struct findings f = {0};
	char pid[32];

	binary_config_default(&c);
	snap(&b);
	snap(&a);
	assert_int_equal(binary_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, 1);
	has(expect(&f, "binary", "process", VERDICT_SKIP), "no per-process data");
	findings_clear(&f);

	deep(&a);
	for (int i = 0; i < 12; i++) {
		snprintf(pid, sizeof(pid), "<0.%d.0>", 500 + i);
		struct proc_info *p = add_proc(&a, pid, NULL, NULL);
		p->bin_bytes = 20000000 + i;
		p->bin_refs = 10;
	}
	assert_int_equal(binary_check(&f, &b, &a, &c), 0);
	assert_int_equal(f.count, RULES_MAX_CULPRITS + 1);
	assert_string_equal(f.items[0].subject, "process <0.511.0>");
	has(&f.items[0], "process <0.511.0> holds 10 refc binaries of 20.0 MB");
	assert_string_equal(f.items[RULES_MAX_CULPRITS].subject, "process");
	has(&f.items[RULES_MAX_CULPRITS], "and 2 more processes over the binary limits");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* ---- all of them ---- */

static void test_rules_config_default(void **state)
{
	(void)state;
	struct rules_config c;
	struct growth_config g;

	rules_config_default(&c);
	growth_config_default(&g);
	assert_int_equal(c.growth.live_totals, g.live_totals);
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		assert_int_equal(c.growth.cat[i].enabled, g.cat[i].enabled);
		assert_true(c.growth.cat[i].max_pct == g.cat[i].max_pct);
		assert_int_equal(c.growth.cat[i].floor_bytes, g.cat[i].floor_bytes);
	}
	assert_int_equal(c.ets.max_total, RULES_OFF);
	assert_int_equal(c.binary.max_refs_per_process, 50000);
	assert_int_equal(c.process.max_born, 100);
	assert_int_equal(c.atom.per_test, 5);
	assert_true(c.allocator.max_fragmentation_pct == 75.0);
	assert_null(c.baseline.path);
	assert_int_equal(c.baseline.trend_window, 10);
	rules_config_clear(&c);
	rules_config_clear(&c);
}

/* The defaults on a clean run: with deep data everything passes; a light snapshot skips the
 * deep checks and fails nothing. */
static void test_judge_rules_clean(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	struct test_run run = {0};

	rules_config_default(&c);
	add_tests(&run, 31);
	deep(&b);
	deep(&a);
	a.atom_count = b.atom_count + 400;
	a.born_count = 3;
	a.born_memory = 30000;
	add_group(&a, "Elixir.Logger.Backends.Console:init/1", 1, 10000, "<0.90.0>");
	add_ets(&a, "lazy_registry", "#Ref<0.9.9.9>", "<0.90.0>", NULL, 20000, 12, true);
	/* the diff against the before set: one port opened and kept, a few persistent terms */
	b.have_pterm = a.have_pterm = true;
	b.pterm_count = 20;
	a.pterm_count = 24;
	b.pterm_memory = 30000;
	a.pterm_memory = 31000;
	a.have_growth = true;
	a.ports_opened = 1;
	/* the suite's test modules and what it loaded from disk; a mock created at run time */
	a.have_code_new = true;
	a.code_test = (struct code_class){12, 600000, 0};
	a.code_disk = (struct code_class){40, 1400000, 0};
	a.code_created = (struct code_class){1, 4000, 0};
	assert_int_equal(judge_rules(&f, &b, &a, &run, &c), 0);
	assert_int_equal(findings_failed(&f), 0);
	for (size_t i = 0; i < f.count; i++)
		if (f.items[i].verdict != VERDICT_PASS)
			fail_msg("%s/%s: %s", f.items[i].rule, f.items[i].subject,
			         f.items[i].message);
	/* growth first, then one finding per family that is on by default */
	assert_string_equal(f.items[0].rule, "growth");
	assert_int_equal(count(&f, "growth", ANY), MEM_CAT_COUNT - 2);
	assert_int_equal(count(&f, "ets", ANY), 1);
	assert_int_equal(count(&f, "binary", ANY), 1);
	assert_int_equal(count(&f, "process", ANY), 3);
	assert_int_equal(count(&f, "atom", ANY), 2);
	assert_int_equal(count(&f, "allocator", ANY), 1);
	assert_int_equal(count(&f, "ports", ANY), 1);
	assert_int_equal(count(&f, "persistent_term", ANY), 1);
	assert_int_equal(count(&f, "modules", VERDICT_PASS), 1);
	/* the structure rule: processes, tables and born groups, each on its own past */
	assert_int_equal(count(&f, "structure", ANY), 3);
	assert_int_equal(f.count, MEM_CAT_COUNT - 2 + 14);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);

	/* light snapshots: the deep families skip, atoms are still judged */
	snap(&b);
	snap(&a);
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(findings_failed(&f), 0);
	assert_int_equal(count(&f, "ets", VERDICT_SKIP), 1);
	assert_int_equal(count(&f, "binary", VERDICT_SKIP), 1);
	assert_int_equal(count(&f, "process", VERDICT_SKIP), 3);
	assert_int_equal(count(&f, "allocator", VERDICT_SKIP), 1);
	assert_int_equal(count(&f, "ports", VERDICT_SKIP), 1);
	assert_int_equal(count(&f, "modules", VERDICT_SKIP), 1);
	assert_int_equal(count(&f, "persistent_term", VERDICT_SKIP), 1);
	assert_int_equal(count(&f, "atom", VERDICT_PASS), 2);
	findings_clear(&f);
	test_run_clear(&run);
	rules_config_clear(&c);
}

/* A big clean suite: 20 000 tests whose names are 20 100 new atoms (+1.2 MB of atom text,
 * over atom_used's 1 MB floor) within the atom rule's per-test allowance. The atom rows pass
 * as context, and total, which those atoms grew too, counts them as explained, never as
 * "the failing rows". */
static void test_judge_rules_atoms_of_a_big_suite(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	struct test_run run = {0};

	rules_config_default(&c);
	add_tests(&run, 20000);
	snap(&b);
	snap(&a);
	b.mem[MEM_ATOM_USED] = 578000;
	a.mem[MEM_ATOM_USED] = 1806000;
	b.mem[MEM_ATOM] = 600000;
	a.mem[MEM_ATOM] = 1830000;
	b.mem[MEM_TOTAL] = 10000000;
	a.mem[MEM_TOTAL] = 10000000 + 1230000 + 1900000; /* the atoms' text and their entries */
	b.mem[MEM_SYSTEM] = 10000000;
	a.mem[MEM_SYSTEM] = 10000000 + 1230000 + 1900000;
	a.atom_count = b.atom_count + 20100;
	assert_int_equal(judge_rules(&f, &b, &a, &run, &c), 0);
	for (size_t i = 0; i < f.count; i++)
		if (f.items[i].verdict == VERDICT_FAIL)
			fail_msg("%s/%s: %s", f.items[i].rule, f.items[i].subject,
			         f.items[i].message);
	const struct finding *row = expect(&f, "growth", "atom_used", VERDICT_PASS);
	has(row, "context: explained by the run's +20 100 atoms, within the atom rule's limit");
	const struct finding *total = expect(&f, "growth", "total", VERDICT_PASS);
	if (strstr(total->message, "failing"))
		fail_msg("total cites failing rows: %s", total->message);
	has(total, "atom_used +1.2 MB (the run's atoms, within the atom rule's limit)");
	findings_clear(&f);

	/* the rest of system grew 2.5 MB beyond the atoms' entries: it fails on its own, its
	 * entries subtracted once */
	a.mem[MEM_TOTAL] += 2500000;
	a.mem[MEM_SYSTEM] += 2500000;
	assert_int_equal(judge_rules(&f, &b, &a, &run, &c), 0);
	has(expect(&f, "growth", "system", VERDICT_FAIL), "the atom table's entries +1.9 MB");
	findings_clear(&f);
	test_run_clear(&run);
	rules_config_clear(&c);
}

/* A leaky run fails the families it should, naming the culprits. */
static void test_judge_rules_leak(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	struct proc_info *p;

	rules_config_default(&c);
	struct ets_table_limit *t = ets_config_table_add(&c.ets, "corpus_*");
	assert_non_null(t);
	t->max_bytes = 2000000;
	deep(&b);
	deep(&a);
	add_ets(&a, "corpus_cache", NULL, "<0.200.0>", "Elixir.LeakEts.Corpus", 7800000, 60000,
	        true);
	p = add_proc(&a, "<0.120.0>", "Elixir.LeakBin.Holder", NULL);
	p->bin_bytes = 19000000;
	p->bin_refs = 300;
	a.mem[MEM_ETS] += 7800000;
	a.mem[MEM_BINARY] += 19000000;
	a.mem[MEM_SYSTEM] += 7800000 + 19000000;
	a.mem[MEM_TOTAL] += 7800000 + 19000000;
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	/* one leak, one finding: the table and the holder fail; the ets and binary
	 * rows, and total, repeat their growth and pass as context, saying so */
	has(expect(&f, "growth", "ets", VERDICT_PASS),
	    "+7.8 MB of it is in ETS table corpus_cache");
	has(expect(&f, "growth", "ets", VERDICT_PASS), "context");
	has(expect(&f, "growth", "binary", VERDICT_PASS),
	    "+19.0 MB of it is in the binaries of process LeakBin.Holder");
	has(expect(&f, "growth", "total", VERDICT_PASS), "context");
	expect(&f, "growth", "system", VERDICT_PASS);
	assert_int_equal(findings_failed(&f), 3);
	/* the most specific first: every failure before every pass */
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(f.items[i].verdict, VERDICT_FAIL);
		assert_string_not_equal(f.items[i].rule, "growth");
	}
	has(expect(&f, "ets", "table corpus_cache", VERDICT_FAIL),
	    "ETS table corpus_cache (owner LeakEts.Corpus) grew 0 B -> 7.8 MB (+60 000 rows, "
	    "created during the run), cap 2.0 MB");
	expect(&f, "ets", "left_alive corpus_cache", VERDICT_FAIL);
	has(expect(&f, "binary", "process LeakBin.Holder", VERDICT_FAIL),
	    "process LeakBin.Holder (<0.120.0>) holds 300 refc binaries of 19.0 MB after GC");
	expect(&f, "process", "memory", VERDICT_PASS);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_helpers),
	        cmocka_unit_test(test_ets_defaults),
	        cmocka_unit_test(test_ets_left_alive_floor),
	        cmocka_unit_test(test_ets_left_alive_count),
	        cmocka_unit_test(test_ets_culprit_cap),
	        cmocka_unit_test(test_ets_total),
	        cmocka_unit_test(test_ets_table_bytes_and_rows),
	        cmocka_unit_test(test_ets_table_growth),
	        cmocka_unit_test(test_binary_defaults),
	        cmocka_unit_test(test_binary_boundaries),
	        cmocka_unit_test(test_binary_skip_and_cap),
	        cmocka_unit_test(test_rules_config_default),
	        cmocka_unit_test(test_judge_rules_clean),
	        cmocka_unit_test(test_judge_rules_atoms_of_a_big_suite),
	        cmocka_unit_test(test_judge_rules_leak),
	};
	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
