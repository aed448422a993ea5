/* tests/test_consolidate.c: one cause, one failing finding across rule families
 * (rules/consolidate.c): the structure rules, growth, the baseline's and trend's rows and the
 * tags' limits, on hand-built snapshots. */
#include "tests/judge_fixture.h"
#include "tests/rules_fixture.h"

#include "model/finding.h"
#include "rules/consolidate.h"

static size_t failing(const struct findings *f)
{
	size_t n = 0;
	for (size_t i = 0; i < f->count; i++)
		if (f->items[i].verdict == VERDICT_FAIL) {
			print_message("  failing: %s/%s: %s\n", f->items[i].rule,
			              f->items[i].subject, f->items[i].message);
			n++;
		}
	return n;
}

static void context_of(const struct finding *x, const char *by)
{
	if (x->verdict != VERDICT_PASS || !x->explained_by || !strstr(x->explained_by, by))
		fail_msg("%s/%s is not context explained by %s: %s (explained_by %s)", x->rule,
		         x->subject, by, x->message, x->explained_by ? x->explained_by : "NULL");
	has(x, "context: explained by ");
}

/* A baseline measured on a clean run: before's figures, and its named tables. */
static void base_of(struct baseline *base, const struct snapshot *b)
{
	assert_int_equal(baseline_from_snapshot(base, b, NULL), 0);
}

/* An ETS table filled with rows holding refc binaries, as the probe reports it. */
static void fill_table(struct snapshot *a, const char *name, int64_t bytes, int64_t bin,
                       bool capped_created)
{
	add_ets(a, name, NULL, "<0.200.0>", "Elixir.App.Sessions", bytes + 2000, 60000,
	        capped_created);
	a->grew_ets = realloc(a->grew_ets, (a->ngrew_ets + 1) * sizeof(*a->grew_ets));
	assert_non_null(a->grew_ets);
	struct ets_growth *g = &a->grew_ets[a->ngrew_ets++];
	memset(g, 0, sizeof(*g));
	g->name = strdup(name);
	g->id = strdup(name);
	g->owner_pid = strdup("<0.200.0>");
	g->owner_name = strdup("Elixir.App.Sessions");
	g->rows = 60000;
	g->bytes_before = 2000;
	g->bytes = bytes + 2000;
	g->bin_bytes = bin;
	g->created = capped_created;
	a->have_growth = true;
	a->mem[MEM_ETS] += bytes;
	a->mem[MEM_BINARY] += bin;
	a->mem[MEM_SYSTEM] += bytes + bin;
	a->mem[MEM_TOTAL] += bytes + bin;
}

/* Everything a merge-request run judges: the rules, the baseline and the trend, then the
 * one pass over every family. */
static void judge_mr(struct findings *f, const struct snapshot *b, const struct snapshot *a,
                     const struct rules_config *c)
{
	struct baseline base = {0}, hist[3];
	struct baseline_config bc = c->baseline;
	base_of(&base, b);
	for (int i = 0; i < 3; i++)
		base_of(&hist[i], b);
	bc.trend_window = 3;
	assert_int_equal(judge_rules(f, b, a, NULL, c), 0);
	assert_int_equal(baseline_check(f, a, &base, &bc, "HEAD:.gate/baseline.json"), 0);
	assert_int_equal(trend_check(f, a, hist, 3, &bc), 0);
	assert_int_equal(consolidate_findings(f, 0), 0);
	baseline_clear(&base);
	for (int i = 0; i < 3; i++)
		baseline_clear(&hist[i]);
}

/* A table filled by a test (created at boot, no cap): the run's ets row names the table and
 * fails; binary (its rows' refc binaries), total, system and every baseline and trend row
 * are context; the table's own baseline row is the same structure. */
static void test_ets_table_one_voice(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	rules_config_default(&c);
	deep(&b);
	add_ets(&b, "sessions", NULL, "<0.200.0>", "Elixir.App.Sessions", 2000, 0, false);
	deep(&a);
	fill_table(&a, "sessions", 6700000, 8600000, false);
	judge_mr(&f, &b, &a, &c);
	assert_int_equal(failing(&f), 1);
	const struct finding *ets = expect(&f, "growth", "ets", VERDICT_FAIL);
	assert_ptr_equal(ets, &f.items[0]); /* the title CI shows */
	has(ets, "ETS table sessions (owner Elixir.App.Sessions) +60 000 rows, +6.7 MB, holding "
	         "~8.6 MB of refc binaries");
	assert_string_equal(ets->structure_key, "ets:sessions");
	assert_true(ets->explains[MEM_BINARY] >= 8600000);
	context_of(expect(&f, "growth", "binary", VERDICT_PASS), "ETS table sessions");
	context_of(expect(&f, "baseline", "ets:sessions", VERDICT_PASS), "ETS table sessions");
	context_of(expect(&f, "baseline", "ets", VERDICT_PASS), "ETS table sessions");
	context_of(expect(&f, "baseline", "binary", VERDICT_PASS), "ETS table sessions (+8.6 MB)");
	context_of(expect(&f, "baseline", "system", VERDICT_PASS), "ETS table sessions");
	context_of(expect(&f, "baseline", "total", VERDICT_PASS), "ETS table sessions");
	context_of(expect(&f, "trend", "total", VERDICT_PASS), "ETS table sessions");
	/* once more changes nothing */
	assert_int_equal(consolidate_findings(&f, 0), 0);
	assert_int_equal(failing(&f), 1);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

/* A table over its cap, also left alive: one structure, one failure (the cap's, first); the
 * growth and baseline rows of ets and binary are context. */
static void test_table_cap_and_left_alive_one_structure(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	rules_config_default(&c);
	struct ets_table_limit *t = ets_config_table_add(&c.ets, "corpus_*");
	assert_non_null(t);
	t->max_bytes = 2000000;
	deep(&b);
	deep(&a);
	fill_table(&a, "corpus_cache", 7800000, 3000000, true);
	judge_mr(&f, &b, &a, &c);
	assert_int_equal(failing(&f), 1);
	expect(&f, "ets", "table corpus_cache", VERDICT_FAIL);
	context_of(expect(&f, "ets", "left_alive corpus_cache", VERDICT_PASS),
	           "ETS table corpus_cache");
	context_of(expect(&f, "growth", "binary", VERDICT_PASS), "ETS table corpus_cache");
	context_of(expect(&f, "baseline", "binary", VERDICT_PASS), "ETS table corpus_cache");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

/* Two independent leaks, two findings: a table and a process holding binaries. */
static void test_two_leaks_two_findings(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	rules_config_default(&c);
	deep(&b);
	add_ets(&b, "sessions", NULL, "<0.200.0>", "Elixir.App.Sessions", 2000, 0, false);
	deep(&a);
	fill_table(&a, "sessions", 6700000, 0, false);
	struct proc_info *p = add_proc(&a, "<0.120.0>", "Elixir.App.Holder", NULL);
	p->bin_bytes = 19000000;
	p->bin_refs = 300;
	a.mem[MEM_BINARY] += 19000000;
	a.mem[MEM_SYSTEM] += 19000000;
	a.mem[MEM_TOTAL] += 19000000;
	judge_mr(&f, &b, &a, &c);
	assert_int_equal(failing(&f), 2);
	expect(&f, "binary", "process App.Holder", VERDICT_FAIL);
	expect(&f, "growth", "ets", VERDICT_FAIL);
	context_of(expect(&f, "baseline", "binary", VERDICT_PASS), "the binaries of process");
	const struct finding *total = expect(&f, "baseline", "total", VERDICT_PASS);
	context_of(total, "ETS table sessions");
	has(total, "the binaries of process App.Holder");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

/* No structure explains it: the most specific category fails; total and system, and the
 * baseline's rows of the same growth, are context explained by that row. */
static void test_no_structure_most_specific_category(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	rules_config_default(&c);
	deep(&b);
	deep(&a);
	a.mem[MEM_BINARY] += 5000000;
	a.mem[MEM_SYSTEM] += 5000000;
	a.mem[MEM_TOTAL] += 5000000;
	judge_mr(&f, &b, &a, &c);
	assert_int_equal(failing(&f), 1);
	const struct finding *bin = expect(&f, "growth", "binary", VERDICT_FAIL);
	assert_null(bin->structure_key);
	assert_int_equal(bin->explains[MEM_TOTAL], 5000000);
	context_of(expect(&f, "baseline", "binary", VERDICT_PASS), "growth binary (+5.0 MB)");
	context_of(expect(&f, "baseline", "system", VERDICT_PASS), "growth binary");
	context_of(expect(&f, "baseline", "total", VERDICT_PASS), "growth binary");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

/* A creep since the baseline, nothing in the run: the baseline's most specific row fails,
 * its system and total rows are context explained by it. */
static void test_baseline_only_creep(void **state)
{
	(void)state;
	struct findings f = {0};
	struct snapshot b, a;
	struct baseline base = {0};
	struct baseline_config bc;
	baseline_config_default(&bc);
	snap(&b);
	snap(&a);
	base_of(&base, &b);
	a.mem[MEM_ETS] += 4000000;
	a.mem[MEM_SYSTEM] += 4000000;
	a.mem[MEM_TOTAL] += 4000000;
	assert_int_equal(baseline_check(&f, &a, &base, &bc, "HEAD:x"), 0);
	assert_int_equal(consolidate_findings(&f, 0), 0);
	assert_int_equal(failing(&f), 1);
	expect(&f, "baseline", "ets", VERDICT_FAIL);
	context_of(expect(&f, "baseline", "system", VERDICT_PASS), "baseline ets (+4.0 MB)");
	context_of(expect(&f, "baseline", "total", VERDICT_PASS), "baseline ets");
	findings_clear(&f);
	baseline_clear(&base);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* --repeat in the merge-request configuration: the table grew 3 MB in each of 3 runs; the
 * rules judge runs 2..3 (the before pair starts after run 1), the baseline compares all 3
 * runs with a clean run. The table's finding explains two thirds of the baseline's ets row:
 * more evidence for it, not a second cause, though the rest (3 MB) is above the row's
 * floor. A baseline row the causes explain under half of still fails on its own. */
static void test_baseline_row_most_explained(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot clean, b, a;
	struct findings f = {0};
	struct baseline base = {0};
	struct baseline_config bc;
	rules_config_default(&c);
	baseline_config_default(&bc);
	deep(&clean);
	add_ets(&clean, "sessions", NULL, "<0.200.0>", "Elixir.App.Sessions", 2000, 0, false);
	base_of(&base, &clean);
	for (int k = 0; k < 2; k++) {
		deep(k ? &a : &b);
		struct snapshot *s = k ? &a : &b;
		add_ets(s, "sessions", NULL, "<0.200.0>", "Elixir.App.Sessions", 2000, 0, false);
		/* run 1's 3 MB: in the baseline's window, not in the rules' */
		s->mem[MEM_ETS] += 3000000;
		s->mem[MEM_SYSTEM] += 3000000;
		s->mem[MEM_TOTAL] += 3000000;
	}
	fill_table(&a, "sessions", 6000000, 0, false);
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(baseline_check(&f, &a, &base, &bc, "HEAD:x"), 0);
	assert_int_equal(consolidate_findings(&f, 0), 0);
	assert_int_equal(failing(&f), 1);
	expect(&f, "growth", "ets", VERDICT_FAIL);
	context_of(expect(&f, "baseline", "ets", VERDICT_PASS), "ETS table sessions (+6.0 MB)");
	context_of(expect(&f, "baseline", "total", VERDICT_PASS), "ETS table sessions");
	findings_clear(&f);
	snapshot_clear(&a);

	/* a creep of 9 MB more since the baseline, before this run, that the run's 2 MB table
	 * does not explain: two causes */
	for (int k = 0; k < 2; k++) {
		struct snapshot *s = k ? &a : &b;
		if (k)
			deep(&a);
		if (k)
			add_ets(&a, "sessions", NULL, "<0.200.0>", "Elixir.App.Sessions", 2000, 0,
			        false);
		s->mem[MEM_ETS] += 9000000 + (k ? 3000000 : 0);
		s->mem[MEM_SYSTEM] += 9000000 + (k ? 3000000 : 0);
		s->mem[MEM_TOTAL] += 9000000 + (k ? 3000000 : 0);
	}
	fill_table(&a, "sessions", 2000000, 0, false);
	assert_int_equal(judge_rules(&f, &b, &a, NULL, &c), 0);
	assert_int_equal(baseline_check(&f, &a, &base, &bc, "HEAD:x"), 0);
	assert_int_equal(consolidate_findings(&f, 0), 0);
	expect(&f, "baseline", "ets", VERDICT_FAIL);
	findings_clear(&f);
	baseline_clear(&base);
	snapshot_clear(&a);
	snapshot_clear(&b);
	snapshot_clear(&clean);
	rules_config_clear(&c);
}

/* A tag's max_growth judged again net of the structure its test grew: context; a tag over
 * its processes limit is its own. */
static void test_tag_limit_explained(void **state)
{
	(void)state;
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "ets", "table sessions", VERDICT_FAIL, 0, 6000000, 0, -1,
	                              "ETS table sessions grew"),
	                 0);
	assert_int_equal(consolidate_name(&f.items[0], "ets:sessions", "ETS table sessions",
	                                  MEM_ETS, 6000000),
	                 0);
	assert_int_equal(findings_add(&f, "tag", "App.SessionsTest \"opens\"", VERDICT_FAIL, 0,
	                              6100000, 0, -1, "grew +6.1 MB, max_growth 1.0 MB"),
	                 0);
	f.items[1].floor = 1000000;
	f.items[1].judges =
	        1u << MEM_PROCESSES_USED | 1u << MEM_ETS | 1u << MEM_BINARY | 1u << MEM_ATOM_USED;
	assert_int_equal(findings_add(&f, "tag", "App.SpawnTest \"spawns\"", VERDICT_FAIL, 0, 0, 0,
	                              -1, "left processes +900, max_processes 10"),
	                 0);
	assert_int_equal(consolidate_findings(&f, 0), 0);
	assert_int_equal(failing(&f), 2);
	context_of(expect(&f, "tag", "App.SessionsTest \"opens\"", VERDICT_PASS),
	           "ETS table sessions (+6.0 MB)");
	expect(&f, "tag", "App.SpawnTest \"spawns\"", VERDICT_FAIL);
	findings_clear(&f);
}

/* persistent_term's values are in the rest of system, the refc binaries they reference in
 * binary (measured in the node): both are the entries' */
static void test_pterm_explains_system_and_binary(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	rules_config_default(&c);
	deep(&b);
	deep(&a);
	b.have_pterm = a.have_pterm = true;
	b.have_persistent_term = a.have_persistent_term = true;
	a.pterm_count = 4000;
	a.pterm_memory = a.persistent_term_memory = 3000000;
	a.pterm_new = calloc(1, sizeof(*a.pterm_new));
	assert_non_null(a.pterm_new);
	a.npterm_new = 1;
	a.pterm_new[0].key = strdup("{App.Settings, _}");
	a.pterm_new[0].example = strdup("{App.Settings, 1}");
	a.pterm_new[0].count = 4000;
	a.pterm_new[0].bin_bytes = 1600000;
	a.mem[MEM_BINARY] += 1600000;
	a.mem[MEM_SYSTEM] += 3000000 + 1600000;
	a.mem[MEM_TOTAL] += 3000000 + 1600000;
	judge_mr(&f, &b, &a, &c);
	assert_int_equal(failing(&f), 1);
	expect(&f, "persistent_term", "growth", VERDICT_FAIL);
	context_of(expect(&f, "growth", "binary", VERDICT_PASS),
	           "persistent_term {App.Settings, _}");
	expect(&f, "growth", "system", VERDICT_PASS);
	context_of(expect(&f, "baseline", "system", VERDICT_PASS), "persistent_term");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

/* 400 small tables of one name and owner: judged on their total, named as a group. */
static void test_table_group_named(void **state)
{
	(void)state;
	struct rules_config c;
	struct snapshot b, a;
	struct findings f = {0};
	rules_config_default(&c);
	deep(&b);
	deep(&a);
	a.ets_groups = calloc(1, sizeof(*a.ets_groups));
	assert_non_null(a.ets_groups);
	a.nets_groups = 1;
	a.ets_groups[0] = (struct ets_group){.name = strdup("leaked"),
	                                     .owner_pid = strdup("<0.171.0>"),
	                                     .owner_name = strdup("Elixir.App.Holder"),
	                                     .owner_call = strdup("App.Holder:init/1"),
	                                     .module = strdup("Elixir.App.TablesTest"),
	                                     .count = 400,
	                                     .bytes = 2300000};
	for (int i = 0; i < 3; i++)
		add_ets(&a, "leaked", "#Ref<0.1>", "<0.171.0>", "Elixir.App.Holder", 5700, 40,
		        true);
	a.mem[MEM_ETS] += 2300000;
	a.mem[MEM_SYSTEM] += 2300000;
	a.mem[MEM_TOTAL] += 2300000;
	judge_mr(&f, &b, &a, &c);
	assert_int_equal(failing(&f), 1);
	const struct finding *g = expect(&f, "ets", "left_alive group leaked", VERDICT_FAIL);
	has(g, "400 ETS tables `leaked` (owner App.Holder) created during the run still alive, "
	       "2.3 MB together, from test module App.TablesTest");
	assert_string_equal(g->culprit, "Elixir.App.TablesTest");
	context_of(expect(&f, "growth", "ets", VERDICT_PASS), "400 ETS tables leaked");
	context_of(expect(&f, "baseline", "ets", VERDICT_PASS), "400 ETS tables leaked");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
	rules_config_clear(&c);
}

/* A process holding 30 000 monitors is named with the count; the other end of the same
 * monitors is said with it, not as a second structure; a table called monitors is none. */
static void test_monitors_both_ends_one(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct drill_item items[DRILL_MAX];
	deep(&b);
	deep(&a);
	a.have_growth = true;
	a.grew_procs = calloc(2, sizeof(*a.grew_procs));
	assert_non_null(a.grew_procs);
	a.ngrew_procs = 2;
	a.grew_procs[0] = (struct proc_growth){.pid = strdup("<0.174.0>"),
	                                       .name = strdup("Elixir.App.Pool"),
	                                       .initial_call = strdup("App.Pool:init/1"),
	                                       .memory_before = 10000,
	                                       .memory = 1910000,
	                                       .monitors = 30000,
	                                       .born = true};
	a.grew_procs[1] = (struct proc_growth){.pid = strdup("<0.175.0>"),
	                                       .initial_call = strdup("erlang:apply/2"),
	                                       .memory_before = 3000,
	                                       .memory = 1903000,
	                                       .monitored_by = 30000};
	add_ets(&a, "monitors", "#Ref<0.9>", "<0.174.0>", "Elixir.App.Pool", 1500, 10, false);
	size_t n = drilldown_list(items, DRILL_MAX, &b, &a);
	assert_int_equal(n, 1);
	if (!strstr(items[0].text, "holds 30 000 monitors (+30 000), memory +1.9 MB, born during "
	                           "the run (the other end: <0.175.0>, monitored 30 000 times, "
	                           "+1.9 MB)"))
		fail_msg("%s", items[0].text);
	assert_int_equal(items[0].by_cat[MEM_PROCESSES_USED], 1900000 + 1900000);
	assert_null(strstr(items[0].text, "ETS table monitors"));
	snapshot_clear(&a);
	snapshot_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_ets_table_one_voice),
	        cmocka_unit_test(test_table_cap_and_left_alive_one_structure),
	        cmocka_unit_test(test_two_leaks_two_findings),
	        cmocka_unit_test(test_no_structure_most_specific_category),
	        cmocka_unit_test(test_baseline_only_creep),
	        cmocka_unit_test(test_baseline_row_most_explained),
	        cmocka_unit_test(test_tag_limit_explained),
	        cmocka_unit_test(test_pterm_explains_system_and_binary),
	        cmocka_unit_test(test_table_group_named),
	        cmocka_unit_test(test_monitors_both_ends_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
