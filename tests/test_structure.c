/* tests/test_structure.c: the pure parts of the structure rule (each structure judged on
 * its own past), its consolidation with the growth rows (one leak, one finding), the
 * structures that grow in every run of --repeat, and their configuration keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gate/config/config.h"
#include "model/finding.h"
#include "rules/consolidate.h"
#include "rules/repeat.h"
#include "rules/rules.h"
#include "rules/structure.h"
#include "tests/judge_fixture.h"

static const struct finding *find(const struct findings *f, const char *rule, const char *subject)
{
	for (size_t i = 0; i < f->count; i++)
		if (strcmp(f->items[i].rule, rule) == 0 &&
		    strcmp(f->items[i].subject, subject) == 0)
			return &f->items[i];
	return NULL;
}

static size_t failed_of_rule(const struct findings *f, const char *rule)
{
	size_t n = 0;
	for (size_t i = 0; i < f->count; i++)
		if (f->items[i].verdict == VERDICT_FAIL && strcmp(f->items[i].rule, rule) == 0)
			n++;
	return n;
}

static void figures(struct snapshot *s, int64_t binary)
{
	memset(s, 0, sizeof(*s));
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		s->mem[c] = 20000000;
		s->have[c] = true;
	}
	s->mem[MEM_BINARY] = binary;
	s->mem[MEM_SYSTEM] = 20000000 + binary;
	s->mem[MEM_TOTAL] = s->mem[MEM_SYSTEM] + s->mem[MEM_PROCESSES];
	s->process_count = 200;
	s->atom_count = 20000;
}

/* static storage: the snapshots borrow these (never snapshot_clear them) */
static struct proc_growth keeper = {.pid = "<0.500.0>",
                                    .name = "Elixir.App.BodyKeeper",
                                    .initial_call = "Elixir.App.BodyKeeper:init/1",
                                    .memory_before = 2800,
                                    .memory = 14000,
                                    .bin_before = 35,
                                    .bin = 9000000};
static struct proc_growth small = {.pid = "<0.501.0>",
                                   .memory_before = 3000,
                                   .memory = 600000,
                                   .bin_before = 0,
                                   .bin = 300000};
static struct proc_growth big_before = {.pid = "<0.502.0>",
                                        .name = "Elixir.App.Big",
                                        .memory_before = 20000000,
                                        .memory = 30000000};

/* a Phoenix + Ecto app's case: binary shrank by 30 MB in total (the ports' buffers), a
 * server's refc binaries went from 35 B to 9 MB: the server fails, named, judged on its own */
static void test_process_on_its_own_past(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct structure_config cfg;
	struct findings out = {0};
	struct proc_growth procs[] = {keeper, small, big_before};
	structure_config_default(&cfg);
	figures(&b, 39500000);
	figures(&a, 9200000);
	a.have_growth = true;
	a.grew_procs = procs;
	a.ngrew_procs = 3;
	assert_int_equal(structure_check(&out, &b, &a, &cfg), 0);
	const struct finding *f = find(&out, "structure", "process App.BodyKeeper");
	assert_non_null(f);
	assert_int_equal(f->verdict, VERDICT_FAIL);
	assert_int_equal(f->before, 2835);
	assert_int_equal(f->after, 9014000);
	assert_non_null(strstr(f->message, "refc binaries 35 B -> 9.0 MB"));
	/* 0.9 MB of growth is under the floor; 20 -> 30 MB is +50 %, under +100 % */
	assert_null(find(&out, "structure", "process <0.501.0>"));
	assert_null(find(&out, "structure", "process App.Big"));
	assert_int_equal(failed_of_rule(&out, "structure"), 1);
	findings_clear(&out);

	/* the floor off: no process family at all */
	cfg.process_floor = RULES_OFF;
	assert_int_equal(structure_check(&out, &b, &a, &cfg), 0);
	assert_null(find(&out, "structure", "process App.BodyKeeper"));
	findings_clear(&out);
}

static void test_tables_groups_and_light(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct structure_config cfg;
	struct findings out = {0};
	struct ets_growth tabs[] = {
	        {.name = "page_cache",
	         .id = "#Ref<0.1.2.3>",
	         .owner_name = "Elixir.App.Cache",
	         .rows_before = 0,
	         .rows = 60000,
	         .bytes_before = 1000,
	         .bytes = 6000000},
	        {.name = "ok_cache",
	         .rows_before = 10,
	         .rows = 20,
	         .bytes_before = 5000000,
	         .bytes = 9000000},
	};
	struct proc_group born[] = {{.key = "Elixir.App.Worker:init/1",
	                             .count = 900,
	                             .memory = 5000000,
	                             .example_pid = "<0.9.0>"}};
	structure_config_default(&cfg);
	figures(&b, 100000);
	figures(&a, 100000);
	a.have_growth = true;
	a.grew_ets = tabs;
	a.ngrew_ets = 2;
	a.born = born;
	a.nborn = 1;
	assert_int_equal(structure_check(&out, &b, &a, &cfg), 0);
	const struct finding *t = find(&out, "structure", "table page_cache");
	assert_non_null(t);
	assert_int_equal(t->verdict, VERDICT_FAIL);
	assert_non_null(strstr(t->message, "+60 000 rows"));
	/* +4 MB but only +80 % of its own 5 MB */
	assert_null(find(&out, "structure", "table ok_cache"));
	const struct finding *g = find(&out, "structure", "group App.Worker:init/1");
	assert_non_null(g);
	assert_int_equal(g->verdict, VERDICT_FAIL);
	findings_clear(&out);

	/* the process rule's "born" failing names the group already: not failed twice */
	assert_int_equal(
	        findings_add(&out, "process", "born", VERDICT_FAIL, 0, 5000000, 0, -1, "x"), 0);
	assert_int_equal(structure_check(&out, &b, &a, &cfg), 0);
	assert_null(find(&out, "structure", "group App.Worker:init/1"));
	findings_clear(&out);

	/* a light after-snapshot: one SKIP */
	a.have_growth = false;
	assert_int_equal(structure_check(&out, &b, &a, &cfg), 0);
	assert_int_equal(out.count, 1);
	assert_int_equal(out.items[0].verdict, VERDICT_SKIP);
	findings_clear(&out);
}

/* one leak, one finding: where binary grew by the server's 9 MB, its row fails and names the
 * server (drilldown), the structure rule adds nothing; where binary shrank by 30 MB in total
 * (a release elsewhere), the row passes and the structure rule names the server */
static void test_one_leak_one_finding(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct rules_config cfg;
	struct findings out = {0};
	struct proc_growth procs[] = {keeper};
	struct proc_info pinfo = {.pid = "<0.500.0>",
	                          .name = "Elixir.App.BodyKeeper",
	                          .memory = 14000,
	                          .bin_refs = 150,
	                          .bin_bytes = 9000000};
	rules_config_default(&cfg);
	figures(&b, 100000);
	figures(&a, 9100000);
	a.have_growth = true;
	a.grew_procs = procs;
	a.ngrew_procs = 1;
	a.procs = &pinfo;
	a.nprocs = 1;
	b.procs = &pinfo;
	b.nprocs = 1;
	assert_int_equal(judge_rules(&out, &b, &a, NULL, &cfg), 0);
	assert_int_equal(findings_failed(&out), 1);
	const struct finding *bin = find(&out, "growth", "binary");
	assert_non_null(bin);
	assert_int_equal(bin->verdict, VERDICT_FAIL);
	assert_non_null(strstr(bin->message, "App.BodyKeeper"));
	assert_null(find(&out, "structure", "process App.BodyKeeper"));
	findings_clear(&out);

	figures(&b, 39500000);
	b.procs = &pinfo;
	b.nprocs = 1;
	assert_int_equal(judge_rules(&out, &b, &a, NULL, &cfg), 0);
	assert_int_equal(findings_failed(&out), 1);
	const struct finding *f = find(&out, "structure", "process App.BodyKeeper");
	assert_non_null(f);
	assert_int_equal(f->verdict, VERDICT_FAIL);
	bin = find(&out, "growth", "binary");
	assert_non_null(bin);
	assert_int_equal(bin->verdict, VERDICT_PASS);
	findings_clear(&out);
	rules_config_clear(&cfg);
}

/* ---- --repeat: a structure that grows in every run ---- */

#define RUNS 4

static struct ets_info tables[RUNS + 1][1];
static struct snapshot snaps[RUNS + 1];

/* rows[k]: the table's rows after run k (rows[0]: the before-snapshot), 80 B per row */
static void ets_runs(const int64_t *rows, size_t n)
{
	for (size_t k = 0; k <= n; k++) {
		figures(&snaps[k], 100000);
		snaps[k].have_growth = k >= 2;
		tables[k][0] = (struct ets_info){.name = "sessions",
		                                 .id = "#Ref<0.1.2.3>",
		                                 .owner_pid = "<0.77.0>",
		                                 .size = rows[k],
		                                 .memory = 2000 + 80 * rows[k]};
		snaps[k].ets = tables[k];
		snaps[k].nets = 1;
	}
}

static int judge_runs(struct findings *out, size_t n)
{
	const struct snapshot *p[RUNS + 1];
	struct structure_config cfg;
	structure_config_default(&cfg);
	for (size_t k = 0; k <= n; k++)
		p[k] = &snaps[k];
	return repeat_structures_check(out, p, n, &cfg);
}

static void test_repeat_table_every_run_fails(void **state)
{
	(void)state;
	struct findings out = {0};
	int64_t rows[] = {0, 312, 624, 935};
	ets_runs(rows, 3);
	assert_int_equal(judge_runs(&out, 3), 0);
	const struct finding *f = find(&out, "structure", "table sessions");
	assert_non_null(f);
	assert_int_equal(f->verdict, VERDICT_FAIL);
	assert_non_null(strstr(f->message, "ETS table sessions"));
	assert_non_null(strstr(f->message, "+311 rows in each of 3 runs (+312, +312, +311)"));
	assert_int_equal(failed_of_rule(&out, "structure"), 1);
	findings_clear(&out);
}

static void test_repeat_warmup_noise_pass(void **state)
{
	(void)state;
	struct findings out = {0};
	/* warm-up: grew in run 1 only */
	int64_t warm[] = {0, 5000, 5000, 5001};
	/* noise: up and down */
	int64_t noise[] = {100, 130, 150, 140};
	/* one big jump and a trickle: not similar (spread above 4x) */
	int64_t jump[] = {0, 0, 1000, 1020};
	/* below the minimum per run (10 rows, 4 kB) */
	int64_t tiny[] = {0, 3, 6, 9};
	const int64_t *cases[] = {warm, noise, jump, tiny};
	for (size_t i = 0; i < 4; i++) {
		ets_runs(cases[i], 3);
		assert_int_equal(judge_runs(&out, 3), 0);
		assert_int_equal(failed_of_rule(&out, "structure"), 0);
		const struct finding *f = find(&out, "structure", "repeat");
		assert_non_null(f);
		assert_int_equal(f->verdict, VERDICT_PASS);
		findings_clear(&out);
	}
	/* two runs: one growth after the warm-up says nothing of a trend */
	int64_t two[] = {0, 300, 600};
	ets_runs(two, 2);
	assert_int_equal(judge_runs(&out, 2), 0);
	assert_int_equal(out.count, 0);
}

static void test_repeat_process_and_named_once(void **state)
{
	(void)state;
	struct findings out = {0};
	int64_t flat[] = {10, 10, 10, 10, 10};
	/* the page cache's refc binaries: +93 kB per run after run 1, seen from run 1's mark */
	static struct proc_growth g[RUNS + 1];
	ets_runs(flat, 4);
	for (size_t k = 2; k <= 4; k++) {
		g[k] = (struct proc_growth){.pid = "<0.600.0>",
		                            .name = "Elixir.App.PageCache",
		                            .memory_before = 5000,
		                            .memory = 5000 + 1000 * (int64_t)k,
		                            .bin_before = 93000,
		                            .bin = 93000 * (int64_t)k};
		snaps[k].grew_procs = &g[k];
		snaps[k].ngrew_procs = 1;
	}
	assert_int_equal(judge_runs(&out, 4), 0);
	const struct finding *f = find(&out, "structure", "process App.PageCache");
	assert_non_null(f);
	assert_int_equal(f->verdict, VERDICT_FAIL);
	assert_non_null(strstr(f->message, "refc binaries grew +93.0 kB in each of runs 2..4"));
	findings_clear(&out);

	/* the structure rule failed it already in this run: one finding */
	assert_int_equal(findings_add(&out, "structure", "process App.PageCache", VERDICT_FAIL, 0,
	                              1, 0, -1, "x"),
	                 0);
	assert_int_equal(judge_runs(&out, 4), 0);
	assert_int_equal(failed_of_rule(&out, "structure"), 1);
	findings_clear(&out);
	for (size_t k = 0; k <= 4; k++) {
		snaps[k].grew_procs = NULL;
		snaps[k].ngrew_procs = 0;
	}
}

/* processes born and left alive, and persistent_term keys of one shape, a few more every run */
static void test_repeat_groups_and_keys(void **state)
{
	(void)state;
	struct findings out = {0};
	int64_t flat[] = {10, 10, 10, 10, 10};
	static struct proc_group born[RUNS + 1];
	static struct key_group keys[RUNS + 1];
	ets_runs(flat, 4);
	for (size_t k = 2; k <= 4; k++) {
		born[k] = (struct proc_group){.key = "Elixir.App.Poller:init/1",
		                              .count = 2 * ((int64_t)k - 1),
		                              .memory = 6000 * ((int64_t)k - 1),
		                              .example_pid = "<0.9.0>"};
		keys[k] =
		        (struct key_group){.key = "{App.Flags, _}", .count = 5 * ((int64_t)k - 1)};
		snaps[k].born = &born[k];
		snaps[k].nborn = 1;
		snaps[k].pterm_new = &keys[k];
		snaps[k].npterm_new = 1;
	}
	assert_int_equal(judge_runs(&out, 4), 0);
	const struct finding *g = find(&out, "structure", "group App.Poller:init/1");
	assert_non_null(g);
	assert_int_equal(g->verdict, VERDICT_FAIL);
	assert_non_null(strstr(g->message, "+2 processes in each of runs 2..4"));
	const struct finding *t = find(&out, "structure", "persistent_term {App.Flags, _}");
	assert_non_null(t);
	assert_non_null(strstr(t->message, "+5 keys in each of runs 2..4"));
	findings_clear(&out);
	/* the processes_used row fails already: it names the group; the keys still fail */
	assert_int_equal(
	        findings_add(&out, "growth", "processes_used", VERDICT_FAIL, 0, 1, 0, -1, "x"), 0);
	assert_int_equal(judge_runs(&out, 4), 0);
	assert_null(find(&out, "structure", "group App.Poller:init/1"));
	assert_non_null(find(&out, "structure", "persistent_term {App.Flags, _}"));
	findings_clear(&out);
	for (size_t k = 0; k <= 4; k++) {
		snaps[k].born = NULL;
		snaps[k].nborn = 0;
		snaps[k].pterm_new = NULL;
		snaps[k].npterm_new = 0;
	}
}

/* one leak, one finding in the repeat path: a process that monitors another a few dozen
 * times more in every run grows, and so does the process at the other end (the same
 * monitors, counted on both sides): one finding, the holder's, saying the monitors and the
 * other end; a supervisor whose memory grows with the processes born and left alive under it
 * is their finding's */
static void test_repeat_monitors_and_supervisor_once(void **state)
{
	(void)state;
	struct findings out = {0};
	int64_t flat[] = {10, 10, 10, 10, 10};
	static struct proc_growth g[RUNS + 1][2];
	ets_runs(flat, 4);
	for (size_t k = 2; k <= 4; k++) {
		int64_t m = 76 * (int64_t)k;
		g[k][0] = (struct proc_growth){.pid = "<0.700.0>",
		                               .name = "Elixir.App.Holder",
		                               .memory_before = 7600,
		                               .memory = 7600 + 4900 * ((int64_t)k - 1),
		                               .monitors = m};
		g[k][1] = (struct proc_growth){.pid = "<0.701.0>",
		                               .name = "Elixir.App.Target",
		                               .memory_before = 7600,
		                               .memory = 7600 + 4900 * ((int64_t)k - 1),
		                               .monitored_by = m};
		snaps[k].grew_procs = g[k];
		snaps[k].ngrew_procs = 2;
	}
	assert_int_equal(judge_runs(&out, 4), 0);
	assert_int_equal(failed_of_rule(&out, "structure"), 1);
	const struct finding *f = find(&out, "structure", "process App.Holder");
	assert_non_null(f);
	assert_int_equal(f->verdict, VERDICT_FAIL);
	assert_non_null(strstr(f->message, "it holds 304 monitors (the other end: App.Target, "
	                                   "monitored 304 times"));
	assert_null(find(&out, "structure", "process App.Target"));
	findings_clear(&out);

	/* without the monitors (or with far fewer on the other end) they are two causes */
	for (size_t k = 2; k <= 4; k++)
		g[k][1].monitored_by = 3;
	assert_int_equal(judge_runs(&out, 4), 0);
	assert_int_equal(failed_of_rule(&out, "structure"), 2);
	findings_clear(&out);

	/* a supervisor linked to the processes born and left alive, which fail already */
	for (size_t k = 2; k <= 4; k++) {
		g[k][0] = (struct proc_growth){.pid = "<0.702.0>",
		                               .name = "Elixir.App.TaskSup",
		                               .memory_before = 24600,
		                               .memory = 24600 + 36500 * ((int64_t)k - 1),
		                               .links = 76 * (int64_t)k + 1};
		snaps[k].ngrew_procs = 1;
		snaps[k].born_count = 76 * ((int64_t)k - 1);
	}
	assert_int_equal(findings_add(&out, "process", "born", VERDICT_FAIL, 0, 1, 0, -1, "x"), 0);
	assert_int_equal(consolidate_name(&out.items[0], "born", "228 processes left alive",
	                                  MEM_PROCESSES_USED, 1),
	                 0);
	assert_int_equal(judge_runs(&out, 4), 0);
	assert_null(find(&out, "structure", "process App.TaskSup"));
	findings_clear(&out);
	/* the same process with no born processes failing is a finding of its own */
	assert_int_equal(judge_runs(&out, 4), 0);
	assert_non_null(find(&out, "structure", "process App.TaskSup"));
	findings_clear(&out);
	for (size_t k = 0; k <= 4; k++) {
		snaps[k].grew_procs = NULL;
		snaps[k].ngrew_procs = 0;
		snaps[k].born_count = 0;
	}
}

static void test_config_keys(void **state)
{
	(void)state;
	struct config cfg;
	char err[512];
	const char *ok =
	        "[structure]\nprocess_floor = \"2 MB\"\ntable_floor = \"off\"\n"
	        "repeat_rows = 50\nrepeat_spread = 3\n[node]\nsettle_timeout = \"500 ms\"\n";
	const char *bad = "[structure]\nprocess_floor = \"lots\"\n";
	assert_int_equal(config_default(&cfg), 0);
	assert_int_equal(cfg.rules.structure.process_floor, 1000000);
	assert_int_equal(cfg.settle_timeout_ms, 3000);
	assert_int_equal(config_load_text(&cfg, ok, strlen(ok), "t.toml", err, sizeof(err)), 0);
	assert_int_equal(cfg.rules.structure.process_floor, 2000000);
	assert_int_equal(cfg.rules.structure.table_floor, RULES_OFF);
	assert_int_equal(cfg.rules.structure.repeat_rows, 50);
	assert_true(cfg.rules.structure.repeat_spread == 3.0);
	assert_int_equal(cfg.settle_timeout_ms, 500);
	config_clear(&cfg);
	assert_int_equal(config_default(&cfg), 0);
	assert_int_equal(config_load_text(&cfg, bad, strlen(bad), "t.toml", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "t.toml:2:"));
	assert_non_null(strstr(err, "structure.process_floor"));
	config_clear(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_process_on_its_own_past),
	        cmocka_unit_test(test_tables_groups_and_light),
	        cmocka_unit_test(test_one_leak_one_finding),
	        cmocka_unit_test(test_repeat_table_every_run_fails),
	        cmocka_unit_test(test_repeat_warmup_noise_pass),
	        cmocka_unit_test(test_repeat_process_and_named_once),
	        cmocka_unit_test(test_repeat_groups_and_keys),
	        cmocka_unit_test(test_repeat_monitors_and_supervisor_once),
	        cmocka_unit_test(test_config_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
