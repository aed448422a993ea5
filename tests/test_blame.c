/* tests/test_blame.c: culprits from a structure's own growth at the test modules' edges
 * (rules/blame.c) and how attribution uses them (rules/attribution.c): one module with most
 * of it is named, growth over many modules is "spread" with no culprit, a module whose
 * category grew with garbage is never named for a structure it did not grow. */
#include "tests/rules_fixture.h"

#include "model/finding.h"
#include "model/tests.h"
#include "rules/attribution.h"
#include "rules/blame.h"

/* A module of run with the structure shares given as key, value pairs (NULL-terminated). */
static void add_module(struct test_run *run, const char *module, ...)
{
	va_list ap;
	run->structs = realloc(run->structs, (run->nstructs + 1) * sizeof(*run->structs));
	assert_non_null(run->structs);
	struct module_structs *m = &run->structs[run->nstructs++];
	memset(m, 0, sizeof(*m));
	m->module = strdup(module);
	va_start(ap, module);
	for (const char *key; (key = va_arg(ap, const char *));) {
		int64_t v = va_arg(ap, int64_t);
		m->items = realloc(m->items, (m->nitems + 1) * sizeof(*m->items));
		assert_non_null(m->items);
		m->items[m->nitems++] = (struct struct_share){strdup(key), v};
	}
	va_end(ap);
	run->have_structs = true;
}

/* A failing finding naming a structure (key, label) whose growth in total is bytes. */
static void structure_finding(struct findings *f, const char *rule, const char *subject,
                              const char *key, const char *label, int64_t bytes)
{
	assert_int_equal(findings_add(f, rule, subject, VERDICT_FAIL, 0, bytes, 0, -1, "grew"), 0);
	struct finding *x = &f->items[f->count - 1];
	x->delta = bytes;
	x->structure_key = strdup(key);
	x->structure = strdup(label);
	/* as the rules explain them (rules/consolidate.h): a table's bytes in ets, a process's
	 * in processes_used or binary, and every parent */
	enum mem_cat cat = strncmp(key, "ets", 3) == 0              ? MEM_ETS
	                   : strcmp(subject, "processes_used") == 0 ? MEM_PROCESSES_USED
	                                                            : MEM_BINARY;
	x->explains[cat] = bytes;
	x->explains[MEM_TOTAL] = bytes;
}

static void test_one_module_named(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct blame b;
	add_module(&run, "Elixir.A.OneTest", "proc:<0.90.0>", (int64_t)40000, NULL);
	add_module(&run, "Elixir.A.ConnTest", "proc:<0.90.0>", (int64_t)7000000, "atoms",
	           (int64_t)12, NULL);
	add_module(&run, "Elixir.A.TwoTest", NULL);
	structure_finding(&f, "growth", "processes_used", "proc:<0.90.0>", "process <0.90.0>",
	                  6700000);
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_CULPRIT);
	assert_string_equal(b.module, "Elixir.A.ConnTest");
	char text[512];
	blame_format(text, sizeof(text), &b, &f.items[0]);
	/* the share shown never exceeds the growth judged */
	assert_string_equal(text, "; likely culprit: A.ConnTest (process <0.90.0> +6.7 MB of "
	                          "+6.7 MB, between its edges)");
	findings_clear(&f);
	test_run_clear(&run);
}

/* Twelve modules fill a journal a little each: spread, no culprit; the module whose
 * category grew most (garbage in a quiet process) is not named, and gets no annotation. */
static void test_spread_names_no_module(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	char name[64];
	for (int i = 1; i <= 12; i++) {
		snprintf(name, sizeof(name), "Elixir.A.Page%dTest", i);
		add_module(&run, name, "proc:<0.172.0>", (int64_t)210000, NULL);
	}
	add_module(&run, "Elixir.A.ErrorViewTest", "proc:<0.173.0>", (int64_t)3300000, NULL);
	/* the category at the modules' edges: the innocent module's garbage is the largest */
	run.modules = calloc(2, sizeof(*run.modules));
	assert_non_null(run.modules);
	run.nmodules = 2;
	run.modules[0].module = strdup("Elixir.A.ErrorViewTest");
	run.modules[0].delta.mem[MEM_BINARY] = 1800000;
	run.modules[1].module = strdup("Elixir.A.Page1Test");
	run.modules[1].delta.mem[MEM_BINARY] = 210000;
	structure_finding(&f, "growth", "binary", "proc:<0.172.0>", "process A.Journal", 2500000);
	struct blame b;
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_SPREAD);
	assert_int_equal(b.modules, 12);
	assert_int_equal(attribution_annotate(&f, NULL, NULL, &run), 0);
	has(&f.items[0], "; spread over 12 test modules, no single one (the most in A.Page");
	if (strstr(f.items[0].message, "ErrorView"))
		fail_msg("an innocent module is named: %s", f.items[0].message);
	assert_null(f.items[0].culprit);
	findings_clear(&f);
	test_run_clear(&run);
}

/* Without structure evidence the category's culprit stands as before; with it, a category
 * culprit the structure does not confirm is replaced. */
static void test_category_culprit_needs_the_structure(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	run.modules = calloc(2, sizeof(*run.modules));
	assert_non_null(run.modules);
	run.nmodules = 2;
	run.modules[0].module = strdup("Elixir.A.ErrorViewTest");
	run.modules[0].delta.mem[MEM_BINARY] = 2000000;
	run.modules[1].module = strdup("Elixir.A.FillTest");
	run.modules[1].delta.mem[MEM_BINARY] = 100000;
	structure_finding(&f, "growth", "binary", "proc:<0.5.0>", "process A.Keeper", 2500000);
	assert_int_equal(attribution_annotate(&f, NULL, NULL, &run), 0);
	has(&f.items[0], "likely culprit: A.ErrorViewTest (+2.0 MB binary");
	free(f.items[0].message);
	f.items[0].message = strdup("grew");
	/* the structure itself grew in FillTest alone */
	add_module(&run, "Elixir.A.ErrorViewTest", NULL);
	add_module(&run, "Elixir.A.FillTest", "proc:<0.5.0>", (int64_t)2400000, NULL);
	assert_int_equal(attribution_annotate(&f, NULL, NULL, &run), 0);
	has(&f.items[0], "; likely culprit: A.FillTest (process A.Keeper +2.4 MB of +2.5 MB, "
	                 "between its edges)");
	assert_string_equal(f.items[0].culprit, "Elixir.A.FillTest");
	findings_clear(&f);
	test_run_clear(&run);
}

/* Atoms are counted at the edges: the module that made them is named even when their text
 * is too short for its atom_used bytes to pass the category's noise floor. */
static void test_atoms_counted_per_module(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct snapshot b, a;
	snap(&b);
	snap(&a);
	a.atom_count = b.atom_count + 12542;
	add_module(&run, "Elixir.A.CleanTest", "atoms", (int64_t)40, NULL);
	add_module(&run, "Elixir.A.PropTest", "atoms", (int64_t)11600, NULL);
	run.modules = calloc(1, sizeof(*run.modules));
	assert_non_null(run.modules);
	run.nmodules = 1;
	run.modules[0].module = strdup("Elixir.A.PropTest");
	run.modules[0].delta.mem[MEM_ATOM_USED] = 200000; /* under the 256 kB noise floor */
	assert_int_equal(findings_add(&f, "atom", "growth", VERDICT_FAIL, 20000, 32542, 0, -1,
	                              "atoms +12 542"),
	                 0);
	f.items[0].delta = 230000;
	f.items[0].structure_key = strdup("atoms");
	f.items[0].structure = strdup("12 542 new atoms");
	assert_int_equal(attribution_annotate(&f, &b, &a, &run), 0);
	has(&f.items[0], "; likely culprit: A.PropTest (+11 600 of +12 542 atoms, between its "
	                 "edges)");
	findings_clear(&f);
	test_run_clear(&run);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* Ports are counted at the edges: the finding names the module that opened them. */
static void test_ports_named(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct snapshot b, a;
	snap(&b);
	snap(&a);
	a.ports_opened = 3001;
	add_module(&run, "Elixir.A.SocketsTest", "ports", (int64_t)3000, NULL);
	assert_int_equal(findings_add(&f, "ports", "open", VERDICT_FAIL, 0, 3001, 50, -1, "open"),
	                 0);
	findings_show(&f, 0, UNIT_COUNT, 0);
	f.items[0].delta = 3001;
	f.items[0].structure_key = strdup("ports");
	f.items[0].structure = strdup("3 001 ports tcp_inet");
	assert_int_equal(attribution_annotate(&f, &b, &a, &run), 0);
	has(&f.items[0], "; likely culprit: A.SocketsTest (+3 000 of +3 001 ports, between its "
	                 "edges)");
	assert_string_equal(f.items[0].culprit, "Elixir.A.SocketsTest");
	findings_clear(&f);
	test_run_clear(&run);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* Where the structure was not read (an older probe, a process past the cap, a structure
 * the edges do not read) there is no structure evidence; where it grew outside every
 * module's window, no test stands out. */
static void test_no_evidence_and_none(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct blame b;
	structure_finding(&f, "growth", "binary", "proc:<0.5.0>", "process A.Keeper", 2500000);
	structure_finding(&f, "process", "born", "born", "500 processes", 2500000);
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_NO_EVIDENCE);
	add_module(&run, "Elixir.A.OneTest", "proc:<0.5.0>", (int64_t)500000, NULL);
	add_module(&run, "Elixir.A.TwoTest", NULL);
	blame_structure(&b, &run, NULL, NULL, &f.items[1]);
	assert_int_equal(b.kind, BLAME_NO_EVIDENCE);
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_NONE); /* a fifth of it in one module: no culprit */
	char text[512];
	blame_format(text, sizeof(text), &b, &f.items[0]);
	assert_non_null(strstr(text, "; no test stands out"));
	add_module(&run, "Elixir.A.BigTest", "procs_unread", (int64_t)1, NULL);
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_NO_EVIDENCE);
	findings_clear(&f);
	test_run_clear(&run);
}

/* Two modules each with a visible share, the larger over half but the other over a quarter
 * of it (async neighbours seeing the same growth): no single one. */
/* An ETS table's finding explains its rows' refc binaries too; the edges read the table's
 * own bytes, and so is it judged (the demo's sessions table: 4.1 MB of ets, 14.5 MB with
 * the binaries). */
static void test_table_judged_on_its_bytes(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct blame b;
	structure_finding(&f, "ets", "table demo_sessions", "ets:demo_sessions",
	                  "ETS table demo_sessions", 4100000);
	f.items[0].explains[MEM_BINARY] = 10400000;
	f.items[0].explains[MEM_TOTAL] = 14500000;
	add_module(&run, "Elixir.Demo.PricingTest", NULL);
	add_module(&run, "Elixir.Demo.SessionsTest", "ets:demo_sessions", (int64_t)4100000, NULL);
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_CULPRIT);
	assert_int_equal(b.judged, 4100000);
	findings_clear(&f);
	test_run_clear(&run);
}

static void test_close_second_is_no_culprit(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct blame b;
	structure_finding(&f, "ets", "left_alive group owner A.Planner", "ets_owner:<0.9.0>",
	                  "600 ETS tables", 6400000);
	add_module(&run, "Elixir.A.OneTest", "ets_owner:<0.9.0>", (int64_t)6400000, NULL);
	add_module(&run, "Elixir.A.TwoTest", "ets_owner:<0.9.0>", (int64_t)3000000, NULL);
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_SPREAD);
	findings_clear(&f);
	test_run_clear(&run);
}

/* Async modules running side by side each saw the growth: no single one, and not said to
 * be spread either (they may have seen the same growth); with two windows of their own it
 * is spread. */
static void test_side_by_side_is_not_spread(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct blame b;
	char text[512];
	structure_finding(&f, "growth", "binary", "proc:<0.5.0>", "process A.Keeper", 2000000);
	add_module(&run, "Elixir.A.OneTest", "proc:<0.5.0>", (int64_t)1500000, NULL);
	add_module(&run, "Elixir.A.TwoTest", "proc:<0.5.0>", (int64_t)1400000, NULL);
	run.modules = calloc(2, sizeof(*run.modules));
	assert_non_null(run.modules);
	run.nmodules = 2;
	run.modules[0] = (struct module_growth){
	        .module = strdup("Elixir.A.OneTest"), .async = true, .overlapped = 1};
	run.modules[1] = (struct module_growth){
	        .module = strdup("Elixir.A.TwoTest"), .async = true, .overlapped = 1};
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_SPREAD);
	assert_true(b.side_by_side);
	blame_format(text, sizeof(text), &b, &f.items[0]);
	assert_non_null(strstr(text, "; no test stands out: 2 async test modules running side by "
	                             "side saw it grow, no single one"));
	run.modules[0].async = run.modules[1].async = false; /* each ran alone */
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_false(b.side_by_side);
	findings_clear(&f);
	test_run_clear(&run);
}

/* --repeat 3: the rules judged runs 2..3, the edges are run 3's: a module with a whole
 * run's growth is the culprit of a run's share. */
static void test_repeat_judges_a_run(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct blame b;
	char text[512];
	structure_finding(&f, "binary", "holder", "proc:<0.5.0>", "process A.Holder", 38000000);
	add_module(&run, "Elixir.A.CleanTest", NULL);
	add_module(&run, "Elixir.A.BinaryTest", "proc:<0.5.0>", (int64_t)18500000, NULL);
	run.judged_runs = 4; /* --repeat 5: half a run would not do */
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_CULPRIT);
	assert_int_equal(b.judged, 9500000);
	blame_format(text, sizeof(text), &b, &f.items[0]);
	assert_string_equal(text, "; likely culprit: A.BinaryTest (process A.Holder +9.5 MB of "
	                          "+9.5 MB a run, between its edges)");
	findings_clear(&f);
	test_run_clear(&run);
}

/* The module whose processes left the structure behind (spawn ancestry) is said as its
 * starter when another module grew it; a module that left other processes behind holding
 * bytes of the same category is no evidence for it. */
static void test_ancestry_only_of_the_structure(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct snapshot a;
	snap(&a);
	a.owners = calloc(1, sizeof(*a.owners));
	assert_non_null(a.owners);
	a.nowners = 1;
	a.owners[0] = (struct module_owner){
	        .module = strdup("Elixir.A.LeftTest"), .processes = 3, .bin_bytes = 2400000};
	a.grew_procs = calloc(1, sizeof(*a.grew_procs));
	assert_non_null(a.grew_procs);
	a.ngrew_procs = 1;
	a.grew_procs[0] = (struct proc_growth){
	        .pid = strdup("<0.5.0>"), .module = strdup("Elixir.A.LeftTest"), .bin = 2400000};
	add_module(&run, "Elixir.A.LeftTest", "proc:<0.5.0>", (int64_t)300000, NULL);
	add_module(&run, "Elixir.A.FillTest", "proc:<0.5.0>", (int64_t)1800000, NULL);
	structure_finding(&f, "binary", "holder", "proc:<0.5.0>", "process <0.5.0>", 2400000);
	assert_int_equal(attribution_annotate(&f, NULL, &a, &run), 0);
	/* LeftTest started the process, FillTest grew it: the growth names FillTest, and who
	 * started it is said */
	has(&f.items[0], "likely culprit: A.FillTest (process <0.5.0> +1.8 MB of +2.4 MB, between "
	                 "its edges; started by A.LeftTest)");
	/* the structure is not LeftTest's: its processes' binaries are no evidence for it */
	free(a.grew_procs[0].module);
	a.grew_procs[0].module = NULL;
	free(f.items[0].message);
	f.items[0].message = strdup("grew");
	free(f.items[0].culprit);
	f.items[0].culprit = NULL;
	assert_int_equal(attribution_annotate(&f, NULL, &a, &run), 0);
	has(&f.items[0], "; likely culprit: A.FillTest (process <0.5.0> +1.8 MB of +2.4 MB, "
	                 "between its edges)");
	findings_clear(&f);
	test_run_clear(&run);
	snapshot_clear(&a);
}

/* A process's memory read without GC grows in steps: a leak every module fills shows its
 * largest step in one module's window, the smaller steps in the others'. No culprit. */
static void test_heap_steps_are_no_culprit(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct blame b;
	structure_finding(&f, "growth", "processes_used", "proc:<0.1240.0>",
	                  "process GatePlant.Stats", 4100000);
	add_module(&run, "Elixir.A.ResetTest", "proc:<0.1240.0>", (int64_t)4300000, NULL);
	add_module(&run, "Elixir.A.ConfirmTest", "proc:<0.1240.0>", (int64_t)972000, NULL);
	add_module(&run, "Elixir.A.SessionTest", "proc:<0.1240.0>", (int64_t)970000, NULL);
	add_module(&run, "Elixir.A.AuthTest", "proc:<0.1240.0>", (int64_t)828000, NULL);
	add_module(&run, "Elixir.A.SettingsTest", "proc:<0.1240.0>", (int64_t)688000, NULL);
	blame_structure(&b, &run, NULL, NULL, &f.items[0]);
	assert_int_equal(b.kind, BLAME_SPREAD);
	assert_int_equal(b.modules, 5);
	findings_clear(&f);
	test_run_clear(&run);
}

/* A module whose every test that ran is exempt (@tag gate: false) is never named, and its
 * share counts for nothing: no test stands out. */
static void test_exempt_module_never_named(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	structure_finding(&f, "growth", "ets", "ets:tags_store", "ETS table tags_store", 3000000);
	add_module(&run, "Elixir.A.LimitsTest", "ets:tags_store", (int64_t)3000000, NULL);
	struct test_result *t = test_run_add(&run);
	assert_non_null(t);
	t->module = strdup("Elixir.A.LimitsTest");
	t->name = strdup("test fills the store");
	t->gate_tag = strdup("false");
	t->state = TEST_PASSED;
	assert_int_equal(attribution_annotate(&f, NULL, NULL, &run), 0);
	has(&f.items[0], "; no test stands out");
	if (strstr(f.items[0].message, "LimitsTest"))
		fail_msg("an exempt module is named: %s", f.items[0].message);
	assert_null(f.items[0].culprit);
	findings_clear(&f);
	test_run_clear(&run);
}

/* Async neighbours seeing the same growth are no evidence against the module whose
 * processes own the table (spawn ancestry), even when the table's own ancestry was not
 * shipped. */
static void test_side_by_side_leaves_ancestry_standing(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings f = {0};
	struct snapshot a;
	snap(&a);
	a.owners = calloc(1, sizeof(*a.owners));
	assert_non_null(a.owners);
	a.nowners = 1;
	a.owners[0] = (struct module_owner){
	        .module = strdup("Elixir.A.LeakAsyncTest"), .tables = 1, .table_bytes = 2600000};
	add_module(&run, "Elixir.A.LeakAsyncTest", "ets:attrib_cache", (int64_t)2600000, NULL);
	add_module(&run, "Elixir.A.CleanAsyncTest", "ets:attrib_cache", (int64_t)2600000, NULL);
	run.modules = calloc(2, sizeof(*run.modules));
	assert_non_null(run.modules);
	run.nmodules = 2;
	run.modules[0] = (struct module_growth){
	        .module = strdup("Elixir.A.LeakAsyncTest"), .async = true, .overlapped = 1};
	run.modules[1] = (struct module_growth){
	        .module = strdup("Elixir.A.CleanAsyncTest"), .async = true, .overlapped = 1};
	structure_finding(&f, "ets", "left_alive attrib_cache", "ets:attrib_cache",
	                  "ETS table attrib_cache", 2600000);
	assert_int_equal(attribution_annotate(&f, NULL, &a, &run), 0);
	has(&f.items[0],
	    "likely culprit: A.LeakAsyncTest (its processes own 1 ETS table of 2.6 MB");
	findings_clear(&f);
	test_run_clear(&run);
	snapshot_clear(&a);
}

/* A server one module started (its setup_all) and another fed: the feeder is the culprit and
 * the starter stays as context; a server its starter grew itself keeps the starter's words. */
static void test_feeder_blamed_starter_said(void **state)
{
	(void)state;
	struct snapshot a;
	snap(&a);
	a.owners = calloc(1, sizeof(*a.owners));
	a.inside = calloc(1, sizeof(*a.inside));
	assert_true(a.owners && a.inside);
	a.nowners = a.ninside = 1;
	a.owners[0] = (struct module_owner){
	        .module = strdup("Elixir.A.StarterTest"), .processes = 1, .memory = 2500000};
	a.inside[0].pid = strdup("<0.407.0>");
	a.inside[0].started.module = strdup("Elixir.A.StarterTest");
	for (int fed = 0; fed < 2; fed++) {
		struct test_run run = {0};
		struct findings f = {0};
		const char *grower = fed ? "Elixir.A.FeederTest" : "Elixir.A.StarterTest";
		add_module(&run, "Elixir.A.StarterTest", NULL);
		add_module(&run, grower, "proc:<0.407.0>", (int64_t)2500000, NULL);
		structure_finding(&f, "growth", "processes_used", "proc:<0.407.0>",
		                  "process A.Store", 2500000);
		assert_int_equal(attribution_annotate(&f, NULL, &a, &run), 0);
		if (fed) {
			has(&f.items[0], "likely culprit: A.FeederTest (process A.Store +2.5 MB of "
			                 "+2.5 MB, between its edges; started by A.StarterTest)");
			assert_string_equal(f.items[0].culprit, "Elixir.A.FeederTest");
		} else {
			has(&f.items[0],
			    "likely culprit: A.StarterTest (left 1 process alive, 2.5 MB)");
			assert_string_equal(f.items[0].culprit, "Elixir.A.StarterTest");
		}
		findings_clear(&f);
		test_run_clear(&run);
	}
	snapshot_clear(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_one_module_named),
	        cmocka_unit_test(test_spread_names_no_module),
	        cmocka_unit_test(test_category_culprit_needs_the_structure),
	        cmocka_unit_test(test_atoms_counted_per_module),
	        cmocka_unit_test(test_ports_named),
	        cmocka_unit_test(test_no_evidence_and_none),
	        cmocka_unit_test(test_table_judged_on_its_bytes),
	        cmocka_unit_test(test_close_second_is_no_culprit),
	        cmocka_unit_test(test_side_by_side_is_not_spread),
	        cmocka_unit_test(test_repeat_judges_a_run),
	        cmocka_unit_test(test_ancestry_only_of_the_structure),
	        cmocka_unit_test(test_heap_steps_are_no_culprit),
	        cmocka_unit_test(test_exempt_module_never_named),
	        cmocka_unit_test(test_side_by_side_leaves_ancestry_standing),
	        cmocka_unit_test(test_feeder_blamed_starter_said),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
