/* tests/test_onecause.c: leaks that used to speak several times speak once (rules/ets.c,
 * rules/ports.c, rules/growth.c, rules/drilldown.c, then rules/consolidate.c): a planner's
 * tables of several names under one owner, sockets with their drivers' memory, one process
 * whose heap and binaries both grew; and every leaking atom shape in the headline. */
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

static void judge(struct findings *f, const struct snapshot *b, const struct snapshot *a)
{
	struct rules_config c;
	rules_config_default(&c);
	assert_int_equal(judge_rules(f, b, a, NULL, &c), 0);
	assert_int_equal(consolidate_findings(f, 0), 0);
	rules_config_clear(&c);
}

static void grow(struct snapshot *a, enum mem_cat cat, int64_t bytes)
{
	a->mem[cat] += bytes;
	if (cat == MEM_PROCESSES_USED)
		a->mem[MEM_PROCESSES] += bytes;
	else if (cat != MEM_SYSTEM)
		a->mem[MEM_SYSTEM] += bytes;
	a->mem[MEM_TOTAL] += bytes;
}

static void add_name_group(struct snapshot *a, const char *name, int64_t count, int64_t bytes)
{
	a->ets_groups = realloc(a->ets_groups, (a->nets_groups + 1) * sizeof(*a->ets_groups));
	assert_non_null(a->ets_groups);
	a->ets_groups[a->nets_groups++] =
	        (struct ets_group){.name = strdup(name),
	                           .owner_pid = strdup("<0.170.0>"),
	                           .owner_name = strdup("Elixir.App.Planner"),
	                           .owner_call = strdup("App.Planner:init/1"),
	                           .count = count,
	                           .bytes = bytes};
}

/* A planner's tables, four names under one owner: one failing finding, the owner's. */
static void test_tables_of_one_owner_one_finding(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	deep(&b);
	deep(&a);
	const char *names[] = {"vertices", "neighbours", "frontier", "edges"};
	for (int i = 0; i < 4; i++) {
		add_name_group(&a, names[i], 150, 1600000);
		add_ets(&a, names[i], "#Ref<0.1>", "<0.170.0>", "Elixir.App.Planner", 10700, 60,
		        true);
	}
	/* a single table of another owner, under the floor: no finding */
	add_ets(&a, "small", NULL, "<0.171.0>", "Elixir.App.Other", 50000, 10, true);
	grow(&a, MEM_ETS, 6400000);
	judge(&f, &b, &a);
	assert_int_equal(failing(&f), 1);
	const struct finding *g =
	        expect(&f, "ets", "left_alive group owner App.Planner", VERDICT_FAIL);
	has(g, "600 ETS tables `vertices`, `neighbours`, `frontier` and `edges` (owner "
	       "App.Planner) created during the run still alive, 6.4 MB together");
	has(g, "1 table or group of at least 1.0 MB left alive (one owner's tables count as one)");
	assert_string_equal(g->structure_key, "ets_owner:<0.170.0>");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* Big tables of several names created by one owner, one by one in the probe's list (no
 * two of a name): one group all the same. */
static void test_single_tables_of_one_owner_one_finding(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	char name[32];
	deep(&b);
	deep(&a);
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "index_%d", i);
		add_ets(&a, name, NULL, "<0.400.0>", "Elixir.App.Indexer", 1200000, 9000, true);
	}
	grow(&a, MEM_ETS, 7200000);
	judge(&f, &b, &a);
	assert_int_equal(failing(&f), 1);
	has(expect(&f, "ets", "left_alive group owner App.Indexer", VERDICT_FAIL),
	    "6 ETS tables `index_0`, `index_1`, `index_2`, `index_3` and 2 more names (owner "
	    "App.Indexer) created during the run still alive, 7.2 MB together");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* One name, one owner: the message reads as it did. */
static void test_one_name_group_reads_as_before(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	deep(&b);
	deep(&a);
	add_name_group(&a, "leaked", 400, 2300000);
	grow(&a, MEM_ETS, 2300000);
	judge(&f, &b, &a);
	assert_int_equal(failing(&f), 1);
	has(expect(&f, "ets", "left_alive group leaked", VERDICT_FAIL),
	    "400 ETS tables `leaked` (owner App.Planner) created during the run still alive, "
	    "2.3 MB together");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* 3 001 sockets left open: the ports finding counts their drivers' memory, so the system
 * row that grew by it is context, not a second failure. */
static void test_ports_carry_their_drivers_memory(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	deep(&b);
	deep(&a);
	add_alloc(&b, "driver_alloc", 2000000, 600000, 0.7);
	add_alloc(&a, "driver_alloc", 7000000, 5100000, 0.3);
	a.have_growth = true;
	a.ports_opened = 3001;
	a.ports = calloc(1, sizeof(*a.ports));
	assert_non_null(a.ports);
	a.nports = 1;
	a.ports[0] = (struct port_group){.name = strdup("tcp_inet"),
	                                 .owner_pid = strdup("<0.171.0>"),
	                                 .owner_name = strdup("Elixir.App.Acceptor"),
	                                 .count = 3001};
	grow(&a, MEM_SYSTEM, 5200000);
	judge(&f, &b, &a);
	assert_int_equal(failing(&f), 1);
	const struct finding *p = expect(&f, "ports", "open", VERDICT_FAIL);
	has(p, "3 001 ports opened during the run are still open, limit 50; their drivers' "
	       "memory (driver_alloc) +4.5 MB");
	const struct finding *s = expect(&f, "growth", "system", VERDICT_PASS);
	if (!s->explained_by || !strstr(s->explained_by, "3 001 ports tcp_inet"))
		fail_msg("the system row is not explained by the ports: %s", s->message);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* One connection process born during the run keeps every response: its heap and its refc
 * binaries both grew (the binaries' allocation more than their size). One finding, the
 * process's, leading with the process rather than the group of processes born with it. */
static void test_one_process_one_finding(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	deep(&b);
	deep(&a);
	a.have_growth = true;
	a.grew_procs = calloc(1, sizeof(*a.grew_procs));
	assert_non_null(a.grew_procs);
	a.ngrew_procs = 1;
	a.grew_procs[0] = (struct proc_growth){.pid = strdup("<0.273.0>"),
	                                       .initial_call = strdup("App.Conn:init/1"),
	                                       .ancestor = strdup("App.Conns"),
	                                       .memory = 6700000,
	                                       .bin = 6100000,
	                                       .born = true};
	a.born_count = 6;
	a.born_memory = 6750000;
	add_group(&a, "App.Conn:init/1", 1, 6700000, "<0.273.0>");
	add_group(&a, "App.Helper", 5, 50000, "<0.274.0>");
	grow(&a, MEM_PROCESSES_USED, 6700000);
	grow(&a, MEM_BINARY, 8900000);
	judge(&f, &b, &a);
	assert_int_equal(failing(&f), 1);
	const struct finding *x = &f.items[0];
	assert_int_equal(x->verdict, VERDICT_FAIL);
	assert_string_equal(x->structure_key, "proc:<0.273.0>");
	if (strncmp(x->message, "process <0.273.0> (App.Conn:init/1", 34) != 0)
		fail_msg("the headline does not lead with the process: %s", x->message);
	if (strstr(x->message, "6 processes born"))
		fail_msg("the headline names the born group: %s", x->message);
	const struct finding *bin = expect(&f, "growth", "binary", VERDICT_PASS);
	has(bin, "context: explained by");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void add_atoms(struct snapshot *a, const char *key, int64_t count, const char *example)
{
	a->atoms_new = realloc(a->atoms_new, (a->natoms_new + 1) * sizeof(*a->atoms_new));
	assert_non_null(a->atoms_new);
	a->atoms_new[a->natoms_new++] =
	        (struct key_group){.key = strdup(key), .count = count, .example = strdup(example)};
}

/* Two atom shapes leak: both in the headline; a shape under a tenth of the growth is not. */
static void test_every_leaking_atom_shape_named(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	deep(&b);
	deep(&a);
	a.have_growth = true;
	a.atom_count = b.atom_count + 12542;
	add_atoms(&a, "prop_field_#", 8000, "prop_field_1");
	add_atoms(&a, "gen_key_#", 3600, "gen_key_1");
	add_atoms(&a, "Elixir.App.#Test", 40, "Elixir.App.OneTest");
	grow(&a, MEM_ATOM_USED, 400000);
	a.mem[MEM_ATOM] += 400000;
	judge(&f, &b, &a);
	assert_int_equal(failing(&f), 1);
	const struct finding *x = expect(&f, "atom", "growth", VERDICT_FAIL);
	has(x, "atoms +12 542: prop_field_# x 8 000 (e.g. prop_field_1), gen_key_# x 3 600 (e.g. "
	       "gen_key_1); ");
	if (strstr(x->message, "Elixir.App.#Test"))
		fail_msg("a shape under a tenth of the growth is named: %s", x->message);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_tables_of_one_owner_one_finding),
	        cmocka_unit_test(test_single_tables_of_one_owner_one_finding),
	        cmocka_unit_test(test_one_name_group_reads_as_before),
	        cmocka_unit_test(test_ports_carry_their_drivers_memory),
	        cmocka_unit_test(test_one_process_one_finding),
	        cmocka_unit_test(test_every_leaking_atom_shape_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
