/* tests/test_verdict.c: the gate's one verdict (model/verdict.h's model_verdict): every
 * combination of its inputs, its "why" text, and the console summary and the CI reports saying
 * the same as the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ci/report/report.h"
#include "ci/report/summary.h"
#include "model/verdict.h"

/* The inputs of one run, each on or off. */
enum {
	IN_ERROR,         /* gate could not run */
	IN_RULE_FAIL,     /* a failing finding */
	IN_WARNED,        /* a failing finding under severity warn: a skip that says so */
	IN_SKIPPED,       /* a skipped finding (no baseline...) */
	IN_TEST_FAILED,   /* a failed test */
	IN_TEST_INVALID,  /* a test whose setup_all failed */
	IN_UNFINISHED,    /* the suite never reported its end */
	IN_MIX_RED,       /* bare mix test would exit 3 for a reason of its own */
	IN_MIX_EXPLAINED, /* ... or exits 2, the failed tests being the whole reason */
	IN_NO_TESTS,      /* no test results at all (gate stopped before them, or --exec) */
	IN_COUNT
};

struct built {
	struct findings findings;
	struct test_run run;
};

static void build(struct built *b, unsigned in)
{
	memset(b, 0, sizeof(*b));
	assert_int_equal(findings_add(&b->findings, "growth", "total", VERDICT_PASS, 100, 110, 1000,
	                              10, "total ok"),
	                 0);
	if (in & (1u << IN_RULE_FAIL))
		assert_int_equal(findings_add(&b->findings, "binary", "binary <0.1.0>",
		                              VERDICT_FAIL, 0, 5000000, 1000, -1, "too big"),
		                 0);
	if (in & (1u << IN_WARNED)) {
		assert_int_equal(findings_add(&b->findings, "ets", "total", VERDICT_SKIP, 0,
		                              5000000, 1000, -1, "warning: too big"),
		                 0);
		b->findings.items[b->findings.count - 1].warned = true;
	}
	if (in & (1u << IN_SKIPPED))
		assert_int_equal(findings_add(&b->findings, "baseline", "baseline", VERDICT_SKIP, 0,
		                              0, 0, -1, "no baseline"),
		                 0);
	b->run.finished = !(in & (1u << IN_UNFINISHED));
	struct test_result *t = test_run_add(&b->run);
	assert_non_null(t);
	t->state = TEST_PASSED;
	if (in & (1u << IN_TEST_FAILED)) {
		t = test_run_add(&b->run);
		assert_non_null(t);
		t->state = TEST_FAILED;
	}
	if (in & (1u << IN_TEST_INVALID)) {
		t = test_run_add(&b->run);
		assert_non_null(t);
		t->state = TEST_INVALID;
	}
	if (in & (1u << IN_MIX_EXPLAINED)) {
		b->run.mix_status = 2;
		b->run.mix_explained = true;
	}
	if (in & (1u << IN_MIX_RED)) {
		b->run.mix_status = 3;
		b->run.mix_explained = false;
	}
}

static void built_clear(struct built *b)
{
	findings_clear(&b->findings);
	test_run_clear(&b->run);
}

/* What docs/how-it-works.md's "Exit codes" says the inputs make. */
static enum gate_verdict expected(unsigned in)
{
	if (in & (1u << IN_ERROR))
		return GATE_ERROR;
	unsigned red = (1u << IN_RULE_FAIL);
	if (!(in & (1u << IN_NO_TESTS)))
		red |= (1u << IN_TEST_FAILED) | (1u << IN_TEST_INVALID) | (1u << IN_UNFINISHED) |
		       (1u << IN_MIX_RED) | (1u << IN_MIX_EXPLAINED);
	return in & red ? GATE_FAILED : GATE_PASSED;
}

/* The last line the console summary prints. */
static void summary_tail(char *line, size_t len, const struct built *b, bool no_tests)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	assert_non_null(f);
	summary_print(
	        f,
	        &(struct report_data){.findings = &b->findings, .tests = no_tests ? NULL : &b->run},
	        false);
	fclose(f);
	assert_true(n > 0 && text[n - 1] == '\n');
	text[n - 1] = '\0';
	const char *last = strrchr(text, '\n');
	snprintf(line, len, "%s", last ? last + 1 : text);
	free(text);
}

/* Every combination of the inputs: the model, the reports' verdict and the console's. */
static void test_verdict__every_combination(void **state)
{
	(void)state;
	for (unsigned in = 0; in < (1u << IN_COUNT); in++) {
		struct built b;
		build(&b, in);
		bool no_tests = in & (1u << IN_NO_TESTS);
		struct verdict_tally t = model_verdict_tally(&b.findings, no_tests ? NULL : &b.run);
		t.error = in & (1u << IN_ERROR);
		enum gate_verdict want = expected(in);
		assert_int_equal(model_verdict(&t), want);

		struct report_data d = {
		        .findings = &b.findings,
		        .tests = no_tests ? NULL : &b.run,
		        .error = in & (1u << IN_ERROR) ? "the node died" : NULL,
		};
		assert_int_equal(report_verdict(&d), want);
		char why[256], rwhy[256];
		model_verdict_why(why, sizeof(why), &t);
		report_why(rwhy, sizeof(rwhy), &d);
		assert_string_equal(why, rwhy);
		assert_true((want == GATE_PASSED) == (why[0] == '\0'));

		if (!(in & (1u << IN_ERROR))) { /* the console summary is for a run that ran */
			char line[512], want_line[300];
			summary_tail(line, sizeof(line), &b, no_tests);
			if (want == GATE_PASSED)
				snprintf(want_line, sizeof(want_line), "gate: PASSED");
			else
				snprintf(want_line, sizeof(want_line), "gate: FAILED (%s)", why);
			assert_string_equal(line, want_line);
		}
		built_clear(&b);
	}
}

static void test_verdict__why_text(void **state)
{
	(void)state;
	char why[256];
	struct verdict_tally t = {.rules = 1,
	                          .tests = 2,
	                          .nodes_lost = 1,
	                          .unfinished = true,
	                          .mix_red = true,
	                          .mix_status = 3};
	model_verdict_why(why, sizeof(why), &t);
	assert_string_equal(why, "1 memory rule, 2 tests, 1 node lost, the test suite did not "
	                         "finish, mix test exit status 3");
	t = (struct verdict_tally){.rules = 2, .tests = 1, .nodes_lost = 2};
	model_verdict_why(why, sizeof(why), &t);
	assert_string_equal(why, "2 memory rules, 1 test, 2 nodes lost");
	/* red only because mix test is, its failed tests said elsewhere: still a reason */
	t = (struct verdict_tally){.mix_red = true};
	assert_int_equal(model_verdict(&t), GATE_FAILED);
	model_verdict_why(why, sizeof(why), &t);
	assert_string_equal(why, "mix test failed");
	t = (struct verdict_tally){.error = true, .rules = 3};
	assert_int_equal(model_verdict(&t), GATE_ERROR);
	model_verdict_why(why, sizeof(why), &t);
	assert_string_equal(why, "gate could not run");
	t = (struct verdict_tally){0};
	assert_int_equal(model_verdict(&t), GATE_PASSED);
	model_verdict_why(why, sizeof(why), &t);
	assert_string_equal(why, "");
	assert_string_equal(model_verdict_name(GATE_PASSED), "PASSED");
	assert_string_equal(model_verdict_name(GATE_FAILED), "FAILED");
	assert_string_equal(model_verdict_name(GATE_ERROR), "ERROR");
}

/* A short buffer gets a truncated, terminated text. */
static void test_verdict__why_truncates(void **state)
{
	(void)state;
	struct verdict_tally t = {.rules = 1, .tests = 2, .unfinished = true, .mix_status = 3};
	char small[12];
	memset(small, 'x', sizeof(small));
	model_verdict_why(small, sizeof(small), &t);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, "1 memory ru", sizeof(small));
	char one[1] = {'x'};
	model_verdict_why(one, sizeof(one), &t);
	assert_int_equal(one[0], '\0');
	model_verdict_why(NULL, 0, &t); /* nothing written */
}

/* A cluster: lost nodes and the other nodes' failing findings count, in the console summary
 * and in the reports alike. */
static void test_verdict__cluster(void **state)
{
	(void)state;
	struct built ok, bad;
	build(&ok, 0);
	build(&bad, 1u << IN_RULE_FAIL);
	struct report_node nodes[2] = {{"a@h", &ok.findings, NULL, 0, 0, NULL, NULL},
	                               {"b@h", &ok.findings, NULL, 0, 0, NULL, NULL}};
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	summary_print(f, &(struct report_data){.tests = &ok.run, .nodes = nodes, .nnodes = 2},
	              false);
	fclose(f);
	assert_non_null(strstr(text, "gate: PASSED\n"));
	free(text);

	nodes[1].error = "connection lost";
	f = open_memstream(&text, &n);
	summary_print(f, &(struct report_data){.tests = &ok.run, .nodes = nodes, .nnodes = 2},
	              false);
	fclose(f);
	assert_non_null(strstr(text, "gate: FAILED (1 node lost)\n"));
	free(text);
	/* the reports get the nodes' findings in one list (cluster_findings_merge), the lost
	 * node a failing finding of its own: they say what the console says */
	assert_int_equal(findings_add(&ok.findings, "node", "b@h", VERDICT_FAIL, 0, 0, 0, -1,
	                              "connection lost"),
	                 0);
	findings_show(&ok.findings, ok.findings.count - 1, UNIT_BYTES, SHOW_NODE_LOST);
	struct report_data d = {.findings = &ok.findings, .tests = &ok.run};
	char why[256];
	assert_int_equal(report_verdict(&d), GATE_FAILED);
	report_why(why, sizeof(why), &d);
	assert_string_equal(why, "1 node lost");
	built_clear(&ok);
	build(&ok, 0);

	nodes[1] = (struct report_node){.name = "b@h", .findings = &bad.findings};
	f = open_memstream(&text, &n);
	summary_print(f, &(struct report_data){.tests = &ok.run, .nodes = nodes, .nnodes = 2},
	              false);
	fclose(f);
	assert_non_null(strstr(text, "gate: FAILED (1 memory rule)\n"));
	free(text);
	built_clear(&ok);
	built_clear(&bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_verdict__every_combination),
	        cmocka_unit_test(test_verdict__why_text),
	        cmocka_unit_test(test_verdict__why_truncates),
	        cmocka_unit_test(test_verdict__cluster),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
