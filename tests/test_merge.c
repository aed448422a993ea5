/* tests/test_merge.c: `gate merge` below the command: the run result written by
 * gate run --json (ci/store/run_json.h) read back whole (ci/store/run_json_read.h), every refusal
 * of results that do not belong together (ci/store/run_merge.h), the merged run (every test once
 * with its partition, every finding labelled, files made relative, the verdict), the whole suite's
 * summary and the merged JUnit report's partition properties. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci/report/junit.h"
#include "ci/report/markdown.h"
#include "ci/report/report.h"
#include "ci/store/run_json.h"
#include "ci/store/run_json_read.h"
#include "ci/store/run_merge.h"
#include "model/verdict.h"
#include "rules/baseline.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gate-test-merge-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* What one partition's result is made of in these tests. */
struct part {
	int k, n;
	const char *commit, *digest, *version;
	const char *modules[3]; /* one test each, "test t"; a module "Fail*" fails */
	bool leak;              /* a failing ETS finding, culprit in test/leak_test.exs */
	bool passed;
};

static void add_test(struct test_run *run, const char *module)
{
	struct test_result *t = test_run_add(run);
	assert_non_null(t);
	t->module = strdup(module);
	t->name = strdup("test t");
	char file[256];
	snprintf(file, sizeof(file), "/repo/test/%s_test.exs", module);
	t->file = strdup(file);
	t->line = 3;
	t->time_us = 1500;
	t->app = strdup("app");
	if (strncmp(module, "Elixir.Fail", 11) == 0) {
		t->state = TEST_FAILED;
		t->message = strdup("Assertion with == failed\ncode: 1 == 2");
		t->reason = strdup("Assertion with == failed");
	}
}

/* Writes p as gate run --json would, into dir/NAME, and returns the path (static buffer). */
static const char *write_part(const struct part *p, const char *name)
{
	static char path[256];
	struct test_run run = {0};
	struct findings fs = {0};
	struct snapshot before = {0}, after = {0};
	struct baseline b = {0};
	for (size_t i = 0; i < 3 && p->modules[i]; i++)
		add_test(&run, p->modules[i]);
	run.finished = run.suite_ran = run.mix_reported = true;
	run.seed = 1000 + p->k;
	/* the first module's attributed growth */
	run.attribution = ATTRIBUTION_MODULE;
	run.attribution_sync = true;
	run.modules = calloc(1, sizeof(*run.modules));
	assert_non_null(run.modules);
	run.nmodules = 1;
	run.modules[0].module = strdup(p->modules[0]);
	run.modules[0].finished = true;
	run.modules[0].time_us = 700;
	run.modules[0].delta.mem[MEM_TOTAL] = 5000 * p->k;
	run.modules[0].delta.processes = -1;
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		before.have[c] = after.have[c] = true;
		before.mem[c] = 1000000 * (c + 1);
		after.mem[c] = before.mem[c] + 1000 * p->k;
	}
	assert_int_equal(findings_add(&fs, "growth", "binary", VERDICT_PASS, 10, 20, 1000000, 10,
	                              "binary grew"),
	                 0);
	fs.items[0].show = SHOW_CATEGORY | SHOW_FIGURES; /* a row of the erlang:memory table */
	if (p->leak) {
		assert_int_equal(findings_add(&fs, "ets", "table leak_cache", VERDICT_FAIL, 0,
		                              5000000, 0, -1, "ETS table leak_cache grew"),
		                 0);
		struct finding *f = &fs.items[fs.count - 1];
		f->culprit = strdup("Elixir.LeakTest");
		f->file = strdup("/repo/test/leak_test.exs");
		f->line = 7;
		f->explained = strdup("nothing");
		f->show = SHOW_FIGURES | SHOW_REGRESSION;
		f->unit = UNIT_COUNT;
	}
	struct baseline_meta m = {.gate_version = p->version,
	                          .commit = p->commit,
	                          .timestamp = 1700000000 + p->k,
	                          .test_count = (int64_t)run.count};
	assert_int_equal(baseline_from_snapshot(&b, &after, &m), 0);
	struct run_json j = {
	        .gate_version = p->version,
	        .project = "/repo/app",
	        .commit = p->commit,
	        .passed = p->passed,
	        .started = 1700000000 + p->k,
	        .baseline = &b,
	        .tests = &run,
	        .findings = &fs,
	        .before = &before,
	        .after = &after,
	        .partition = p->k,
	        .partitions = p->n,
	        .config_digest = p->digest,
	        .repo_root = "/repo",
	};
	char err[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (run_json_write(path, &j, err, sizeof(err)) < 0)
		fail_msg("run_json_write: %s", err);
	test_run_clear(&run);
	findings_clear(&fs);
	baseline_clear(&b);
	return path;
}

static const struct part P1 = {1,      2,       "1111111111111111111111111111111111111111",
                               "00aa", "0.1.0", {"Elixir.ATest", "Elixir.BTest", NULL},
                               false,  true};
static const struct part P2 = {2,      2,       "1111111111111111111111111111111111111111",
                               "00aa", "0.1.0", {"Elixir.CTest", NULL, NULL},
                               false,  true};

static void read_ok(struct run_result *r, const struct part *p, const char *name)
{
	char err[2048];
	if (run_result_read(r, write_part(p, name), err, sizeof(err)) < 0)
		fail_msg("run_result_read: %s", err);
}

/* run_result_parse of text must fail, its message holding want. */
static void parse_refused(const char *text, const char *want)
{
	struct run_result r;
	char err[2048] = "";
	assert_int_equal(run_result_parse(&r, text, strlen(text), "x.json", err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("expected \"%s\" in: %s", want, err);
	/* cleared, every field: a refusal of an older format once kept its version */
	static const struct run_result zero;
	assert_memory_equal(&r, &zero, sizeof(zero));
}

static void test_result_roundtrip(void **state)
{
	(void)state;
	struct part p = P1;
	p.leak = true;
	p.passed = false;
	p.modules[1] = "Elixir.FailTest";
	struct run_result r;
	read_ok(&r, &p, "r1.json");
	assert_int_equal(r.version, RUN_JSON_VERSION);
	assert_int_equal(r.partition, 1);
	assert_int_equal(r.partitions, 2);
	assert_string_equal(r.commit, P1.commit);
	assert_string_equal(r.config_digest, "00aa");
	assert_string_equal(r.gate_version, "0.1.0");
	assert_string_equal(r.repo_root, "/repo");
	assert_false(r.passed);
	assert_int_equal(r.tests.count, 2);
	assert_int_equal(r.tests.seed, 1001);
	assert_int_equal(r.tests.attribution, ATTRIBUTION_MODULE);
	assert_true(r.tests.attribution_sync);
	assert_int_equal(r.tests.nmodules, 1);
	assert_string_equal(r.tests.modules[0].module, "Elixir.ATest");
	assert_int_equal(r.tests.modules[0].delta.mem[MEM_TOTAL], 5000);
	assert_int_equal(r.tests.modules[0].delta.processes, -1);
	assert_int_equal(r.tests.modules[0].time_us, 700);
	assert_true(r.tests.finished);
	const struct test_result *t = &r.tests.tests[1];
	assert_string_equal(t->module, "Elixir.FailTest");
	assert_int_equal(t->state, TEST_FAILED);
	assert_string_equal(t->reason, "Assertion with == failed");
	assert_string_equal(t->file, "/repo/test/Elixir.FailTest_test.exs");
	assert_int_equal(t->line, 3);
	assert_int_equal(t->time_us, 1500);
	assert_int_equal(t->partition, 1);
	assert_int_equal(r.findings.count, 2);
	const struct finding *f = &r.findings.items[1];
	assert_string_equal(f->rule, "ets");
	assert_string_equal(f->subject, "table leak_cache");
	assert_int_equal(f->verdict, VERDICT_FAIL);
	assert_int_equal(f->after, 5000000);
	assert_string_equal(f->culprit, "Elixir.LeakTest");
	assert_string_equal(f->file, "/repo/test/leak_test.exs");
	assert_int_equal(f->line, 7);
	assert_int_equal(f->show, SHOW_FIGURES | SHOW_REGRESSION);
	assert_int_equal(f->unit, UNIT_COUNT);
	assert_true(r.before.have[MEM_BINARY]);
	assert_int_equal(r.after.mem[MEM_TOTAL] - r.before.mem[MEM_TOTAL], 1000);
	assert_true(r.have_baseline);
	assert_string_equal(r.baseline.commit, P1.commit);
	assert_int_equal(r.baseline.test_count, 2);
	run_result_clear(&r);
	run_result_clear(&r); /* a cleared result clears again */
}

static void test_result_refusals(void **state)
{
	(void)state;
	parse_refused("not json", "x.json: line 1 column");
	/* an artifact that did not arrive whole: said so, with its fix */
	parse_refused("", "x.json: the file is empty: not a gate run result");
	parse_refused(" \n", "x.json: the file is empty");
	parse_refused("{\"format\": \"gate.run/2\", \"tests\": {\"cases\": [",
	              "the result is cut short (");
	parse_refused("{\"format\": \"gate.run/2\", \"gate\": \"0.1", "the result is cut short");
	parse_refused("{\"format\": \"gate.run/2\", \"passed\": fal", "the result is cut short");
	parse_refused("{\"format\": \"gate.run/2\", \"x\": nul", "the result is cut short");
	parse_refused("{\"format\": \"gate.run/2\", \"x\": nul }", "not a gate run result");
	parse_refused("{}", "x.json: not a gate run result");
	parse_refused("[1, 2]", "not a gate run result");
	parse_refused("{\"format\": \"gate.snapshot/1\"}", "not a gate run result");
	parse_refused("{\"format\": \"gate.run/3\", \"gate\": \"9.0.0\"}",
	              "format gate.run/3 is newer than this gate reads (up to gate.run/2); merge "
	              "with the gate version that wrote it (\"gate\": 9.0.0)");
	parse_refused("{\"format\": \"gate.run/1\"}", "format gate.run/1 lacks what merging needs");
	/* figures beyond the model's range: their difference overflowed in the growth table */
	parse_refused(
	        "{\"format\": \"gate.run/2\", \"gate\": \"0.1.0\", \"config_digest\": \"00\", "
	        "\"verdict\": \"passed\", \"tests\": {\"cases\": []}, \"findings\": [{\"rule\": "
	        "\"growth\", \"subject\": \"total\", \"verdict\": \"pass\", \"max_pct\": 10, "
	        "\"before\": -9223372036854775808, \"after\": 9223372036854775807}]}",
	        "x.json: \"findings[0].before\" is not an integer in range");
	parse_refused(
	        "{\"format\": \"gate.run/2\", \"gate\": \"0.1.0\", \"config_digest\": \"00\", "
	        "\"verdict\": \"passed\", \"tests\": {\"cases\": []}, \"findings\": [], "
	        "\"before\": {\"memory\": {\"total\": -1}}}",
	        "x.json: \"before.memory.total\" is not a byte count");
	/* a result of this format with a part missing or of the wrong type */
	char *text = NULL;
	size_t len = 0;
	struct run_result r;
	char err[2048];
	read_ok(&r, &P1, "ok.json");
	run_result_clear(&r);
	FILE *f = fopen(write_part(&P1, "ok.json"), "r");
	assert_non_null(f);
	assert_int_equal(getdelim(&text, &len, '\0', f) > 0, 1);
	fclose(f);
	char *bad = malloc(strlen(text) + 64);
	assert_non_null(bad);
	/* tests.cases: a state that does not exist */
	strcpy(bad, text);
	char *st = strstr(bad, "\"state\": \"passed\"");
	assert_non_null(st);
	memcpy(st, "\"state\": \"pas5ed\"", 17);
	parse_refused(bad, "x.json: \"tests.cases[0].state\" is not passed, failed");
	/* the verdict */
	strcpy(bad, text);
	char *v = strstr(bad, "\"verdict\": \"passed\"");
	assert_non_null(v);
	memcpy(v, "\"verdict\": \"maybe!\"", 19);
	parse_refused(bad, "\"verdict\" is not \"passed\" or \"failed\"");
	/* a partition k beyond n */
	strcpy(bad, text);
	char *k = strstr(bad, "\"k\": 1");
	assert_non_null(k);
	k[5] = '3';
	parse_refused(bad, "\"partition.k\" is not from 1 to \"n\"");
	free(bad);
	free(text);
	assert_int_equal(run_result_read(&r, "/nonexistent/r.json", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/r.json"));
}

/* run_merge_check of r (n) must fail with want in its message. */
static void check_refused(const struct run_result *r, size_t n, const bool *allow, size_t nallow,
                          const char *want)
{
	char err[2048] = "";
	assert_int_equal(run_merge_check(r, n, allow, nallow, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("expected \"%s\" in: %s", want, err);
}

static void test_merge_refusals(void **state)
{
	(void)state;
	struct run_result r[3];
	char err[2048];
	read_ok(&r[0], &P1, "p1.json");
	read_ok(&r[1], &P2, "p2.json");
	assert_int_equal(run_merge_check(r, 2, NULL, 0, err, sizeof(err)), 0);
	/* a partition missing, unless allowed; an allowance beyond N */
	check_refused(r, 1, NULL, 0, "partition 2 of 2 is missing: no result given for it");
	check_refused(r, 1, NULL, 0, "or --allow-missing 2 if that job may be absent");
	bool allow[4] = {false, false, true, false};
	assert_int_equal(run_merge_check(r, 1, allow, 4, err, sizeof(err)), 0);
	allow[3] = true;
	check_refused(r, 1, allow, 4, "--allow-missing 3: the suite has 2 partitions");
	/* the same partition twice */
	read_ok(&r[2], &P1, "p1-again.json");
	check_refused(r, 3, NULL, 0, "partition 1 of 2 twice");
	run_result_clear(&r[2]);
	/* another commit, configuration, gate version, N; no partition */
	run_result_clear(&r[1]);
	struct part p = P2;
	p.commit = "2222222222222222222222222222222222222222";
	read_ok(&r[1], &p, "commit.json");
	check_refused(r, 2, NULL, 0, "different commits");
	check_refused(r, 2, NULL, 0, "commit.json measured 222222222222");
	run_result_clear(&r[1]);
	p = P2;
	p.commit = NULL;
	read_ok(&r[1], &p, "nocommit.json");
	check_refused(r, 2, NULL, 0, "nocommit.json measured no commit (outside git)");
	run_result_clear(&r[1]);
	/* another project of the repository; the same one checked out elsewhere is the same */
	p = P2;
	read_ok(&r[1], &p, "other.json");
	free(r[1].project);
	r[1].project = strdup("/repo/other");
	check_refused(r, 2, NULL, 0, "p1.json measured app, ");
	check_refused(r, 2, NULL, 0, "other.json measured other; merge the partitions of one");
	free(r[1].project);
	free(r[1].repo_root);
	r[1].project = strdup("/builds/0/repo/app");
	r[1].repo_root = strdup("/builds/0/repo");
	assert_int_equal(run_merge_check(r, 2, NULL, 0, err, sizeof(err)), 0);
	run_result_clear(&r[1]);
	p = P2;
	p.digest = "00bb";
	read_ok(&r[1], &p, "config.json");
	check_refused(r, 2, NULL, 0, "different configurations");
	check_refused(r, 2, NULL, 0, "give every partition's job the same gate.toml");
	run_result_clear(&r[1]);
	p = P2;
	p.version = "0.2.0";
	read_ok(&r[1], &p, "version.json");
	check_refused(r, 2, NULL, 0, "different gate versions");
	run_result_clear(&r[1]);
	p = P2;
	p.n = 3;
	read_ok(&r[1], &p, "three.json");
	check_refused(r, 2, NULL, 0, "the jobs ran different --partitions");
	run_result_clear(&r[1]);
	p = P2;
	p.k = 0;
	p.n = 0;
	read_ok(&r[1], &p, "whole.json");
	check_refused(r, 2, NULL, 0, "whole.json is not a partition's result");
	run_result_clear(&r[1]);
	/* an earlier merge's --json, caught by the results' glob */
	read_ok(&r[1], &p, "merged.json");
	r[1].merged_output = true;
	check_refused(r, 2, NULL, 0, "merged.json is the output of gate merge --json");
	run_result_clear(&r[1]);
	/* one test in two partitions: the jobs split the suite differently */
	p = P2;
	p.modules[0] = "Elixir.BTest";
	read_ok(&r[1], &p, "overlap.json");
	check_refused(r, 2, NULL, 0, "the test Elixir.BTest \"test t\" ran in partition 1");
	run_result_clear(&r[1]);
	check_refused(r, 0, NULL, 0, "gate merge takes 1 to");
	run_result_clear(&r[0]);
}

/* Adds a test MODULE "NAME" to r. */
static void add_named(struct run_result *r, const char *module, const char *name)
{
	struct test_result *t = test_run_add(&r->tests);
	assert_non_null(t);
	t->module = strdup(module);
	t->name = strdup(name);
	assert_true(t->module && t->name);
}

/* Many tests, in any order: only the same module and name in two partitions is refused (the
 * same name in two modules, or a module's tests spread over partitions, are not). */
static void test_merge_overlap_many(void **state)
{
	(void)state;
	struct run_result r[2];
	char err[2048], mod[64], name[64];
	read_ok(&r[0], &P1, "p1.json");
	read_ok(&r[1], &P2, "p2.json");
	for (int i = 0; i < 3000; i++) {
		snprintf(mod, sizeof(mod), "Elixir.M%d", (i * 7919) % 3000);
		snprintf(name, sizeof(name), "test same name");
		add_named(&r[i % 2], mod, name);
	}
	assert_int_equal(run_merge_check(r, 2, NULL, 0, err, sizeof(err)), 0);
	add_named(&r[1], "Elixir.M0", "test same name"); /* M0's test is in partition 1 too */
	check_refused(r, 2, NULL, 0, "the test Elixir.M0 \"test same name\" ran in partition 1");
	check_refused(r, 2, NULL, 0, "and in partition 2 (");
	run_result_clear(&r[0]);
	run_result_clear(&r[1]);
}

/* The "what grew" tables take a category's figures from its growth finding (code with the
 * literals, as the memory table shows it), the snapshot's where there is none. */
static void test_merge_judged_figures(void **state)
{
	(void)state;
	struct run_result r;
	read_ok(&r, &P1, "r1.json");
	int64_t total_before = r.before.mem[MEM_TOTAL], total_after = r.after.mem[MEM_TOTAL];
	const struct finding *g = NULL;
	for (size_t k = 0; k < r.findings.count; k++)
		if (strcmp(r.findings.items[k].rule, "growth") == 0 &&
		    strcmp(r.findings.items[k].subject, "binary") == 0)
			g = &r.findings.items[k];
	assert_non_null(g);
	assert_true(r.before.mem[MEM_BINARY] != g->before); /* the raw figure differs */
	run_merge_judged_figures(&r, 1);
	assert_int_equal(r.before.mem[MEM_BINARY], g->before);
	assert_int_equal(r.after.mem[MEM_BINARY], g->after);
	assert_int_equal(r.before.mem[MEM_TOTAL], total_before); /* no growth finding: as read */
	assert_int_equal(r.after.mem[MEM_TOTAL], total_after);
	run_result_clear(&r);
}

static void test_merge_build(void **state)
{
	(void)state;
	struct run_result r[2];
	struct part p2 = P2;
	p2.leak = true;
	p2.passed = false;
	read_ok(&r[0], &p2, "b2.json"); /* in the wrong order: run_merge_sort puts it right */
	read_ok(&r[1], &P1, "b1.json");
	run_merge_sort(r, 2);
	assert_int_equal(r[0].partition, 1);
	struct run_merged m;
	assert_int_equal(run_merge_build(&m, r, 2), 0);
	assert_int_equal(m.partitions, 2);
	assert_int_equal(m.tests.count, 3);
	assert_int_equal(m.tests.tests[0].partition, 1);
	/* each partition's modules, with their attributed growth */
	assert_int_equal(m.tests.nmodules, 2);
	assert_string_equal(m.tests.modules[1].module, "Elixir.CTest");
	assert_int_equal(m.tests.modules[1].delta.mem[MEM_TOTAL], 10000);
	assert_int_equal(m.tests.attribution, ATTRIBUTION_MODULE);
	assert_int_equal(m.tests.tests[2].partition, 2);
	assert_string_equal(m.tests.tests[2].module, "Elixir.CTest");
	/* files relative to the job's repository, wherever the merge job checked it out */
	assert_string_equal(m.tests.tests[0].file, "test/Elixir.ATest_test.exs");
	assert_string_equal(m.labels[1], "partition 2/2");
	assert_int_equal(m.per[1].count, 2);
	assert_int_equal(m.findings.count, 3);
	const struct finding *f = &m.findings.items[2];
	assert_string_equal(f->subject, "partition 2/2: table leak_cache");
	assert_string_equal(f->file, "test/leak_test.exs");
	assert_string_equal(f->culprit, "Elixir.LeakTest");
	assert_false(m.failed_unexplained);
	struct verdict_tally vt = model_verdict_tally(&m.findings, &m.tests);
	assert_int_equal(model_verdict(&vt), GATE_FAILED);
	assert_int_equal(vt.rules, 1);
	assert_true(m.tests.finished);
	assert_int_equal(m.started, 1700000001);
	run_merged_clear(&m);

	/* a partition whose run failed for a reason its result does not carry */
	run_result_clear(&r[1]);
	p2 = P2;
	p2.passed = false;
	read_ok(&r[1], &p2, "late.json");
	assert_int_equal(run_merge_build(&m, r, 2), 0);
	assert_true(m.failed_unexplained);
	vt = model_verdict_tally(&m.findings, &m.tests);
	assert_int_equal(model_verdict(&vt), GATE_FAILED);
	assert_non_null(strstr(m.findings.items[m.findings.count - 1].message,
	                       "the run of partition 2/2 failed"));
	run_merged_clear(&m);

	/* both pass: the merge passes */
	run_result_clear(&r[1]);
	read_ok(&r[1], &P2, "p2ok.json");
	assert_int_equal(run_merge_build(&m, r, 2), 0);
	vt = model_verdict_tally(&m.findings, &m.tests);
	assert_int_equal(model_verdict(&vt), GATE_PASSED);

	/* the whole suite's summary: the figures summed, the tests counted together */
	struct baseline whole;
	assert_int_equal(run_merge_baseline_whole(&whole, r, 2), 0);
	assert_int_equal(whole.test_count, 3);
	assert_int_equal(whole.mem[MEM_TOTAL],
	                 r[0].baseline.mem[MEM_TOTAL] + r[1].baseline.mem[MEM_TOTAL]);
	assert_string_equal(whole.commit, P1.commit);
	baseline_clear(&whole);

	/* the merged JUnit report: each partition's memory suite and each test's suite say the
	 * partition, at suite level only */
	struct report_node nodes[2] = {
	        {.name = m.labels[0], .findings = &m.per[0], .partition = 1, .seed = 1001},
	        {.name = m.labels[1], .findings = &m.per[1], .partition = 2, .seed = 1002},
	};
	struct report_data meta = {
	        .project = "app", .tests = &m.tests, .nodes = nodes, .nnodes = 2};
	char path[128], err[1024];
	snprintf(path, sizeof(path), "%s/merged.xml", dir);
	if (junit_write(path, &meta, err, sizeof(err)) < 0)
		fail_msg("junit_write: %s", err);
	char *xml = NULL;
	size_t len = 0;
	FILE *x = fopen(path, "r");
	assert_non_null(x);
	assert_true(getdelim(&xml, &len, '\0', x) > 0);
	fclose(x);
	assert_non_null(strstr(xml, "<testsuite name=\"gate.memory[partition 2/2]\""));
	assert_non_null(strstr(xml, "<property name=\"exunit.seed\" value=\"1002\"/>"));
	const char *c = strstr(xml, "<testsuite name=\"CTest\"");
	assert_non_null(c);
	const char *prop = strstr(c, "<property name=\"mix.test.partition\" value=\"2\"/>");
	const char *tc = strstr(c, "<testcase");
	assert_true(prop && tc && prop < tc);
	free(xml);

	/* the Markdown summary: what grew in each partition's node and in the whole */
	struct report_part parts[2] = {{m.labels[0], &r[0].before, &r[0].after},
	                               {m.labels[1], &r[1].before, &r[1].after}};
	struct report_data d = {
	        .findings = &m.findings, .tests = &m.tests, .parts = parts, .nparts = 2};
	struct textbuf md = {0};
	assert_int_equal(markdown_summary_format(&md, &d), 0);
	if (!strstr(md.s, "| category | partition 1/2 | partition 2/2 | whole |") ||
	    !strstr(md.s, "| total | +1.0 kB | +2.0 kB | +3.0 kB |"))
		fail_msg("the summary lacks the partitions' growth: %s", md.s);
	/* every finding says its partition, in the Markdown escaping of ":" */
	if (!strstr(md.s, "| partition 2/2\\: binary |"))
		fail_msg("the growth finding lacks its partition: %s", md.s);
	textbuf_free(&md);
	run_merged_clear(&m);
	run_result_clear(&r[0]);
	run_result_clear(&r[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_result_roundtrip),
	        cmocka_unit_test(test_result_refusals),
	        cmocka_unit_test(test_merge_refusals),
	        cmocka_unit_test(test_merge_build),
	        cmocka_unit_test(test_merge_judged_figures),
	        cmocka_unit_test(test_merge_overlap_many),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
