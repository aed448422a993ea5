/* tests/test_cluster_report.c: a cluster run's reports: one gate.memory suite per node with
 * classnames labelled by node, a lost node as an error testcase of its own suite, totals over
 * all nodes, the console summary's per-node sections, warnings and verdict, and the one list
 * of every node's findings the other reports get. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>

#include "ci/report/junit.h"
#include "ci/report/summary.h"
#include "model/finding.h"
#include "model/tests.h"

static double xp_num(xmlDocPtr doc, const char *expr)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr r = xmlXPathEvalExpression(BAD_CAST expr, ctx);
	if (!r || r->type != XPATH_NUMBER)
		fail_msg("XPath %s is no number", expr);
	double v = r->floatval;
	xmlXPathFreeObject(r);
	xmlXPathFreeContext(ctx);
	return v;
}

static void two_findings(struct findings *f, bool fail)
{
	assert_int_equal(findings_add(f, "growth", "ets", fail ? VERDICT_FAIL : VERDICT_PASS, 1000,
	                              fail ? 9000000 : 1000, 1000000, 10, "ets grew"),
	                 0);
	assert_int_equal(findings_add(f, "process", "born", VERDICT_PASS, 0, 0, 0, -1, "ok"), 0);
}

static void test_cluster_report__junit(void **state)
{
	(void)state;
	struct findings fa = {0}, fb = {0};
	two_findings(&fa, false);
	two_findings(&fb, true);
	struct report_node nodes[] = {
	        {"a@127.0.0.1", &fa, NULL, 0, 0, NULL, NULL},
	        {"b@127.0.0.1", &fb, NULL, 0, 0, NULL, NULL},
	        {"c@127.0.0.1", NULL, "lost the connection to c@127.0.0.1 (noconnection)", 0, 0,
	         NULL, NULL},
	};
	struct report_data meta = {.project = "p", .nodes = nodes, .nnodes = 3};
	char path[128], err[512] = "";
	snprintf(path, sizeof(path), "/tmp/gate-test-cluster.%d.xml", (int)getpid());
	if (junit_write(path, &meta, err, sizeof(err)) < 0)
		fail_msg("junit_write: %s", err);
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
	unlink(path);
	assert_non_null(doc);
	assert_int_equal((int)xp_num(doc, "count(/testsuites/testsuite)"), 3);
	assert_int_equal((int)xp_num(doc, "number(/testsuites/@tests)"), 5);
	assert_int_equal((int)xp_num(doc, "number(/testsuites/@failures)"), 1);
	assert_int_equal((int)xp_num(doc, "number(/testsuites/@errors)"), 1);
	assert_int_equal(
	        (int)xp_num(doc, "number(//testsuite[@name='gate.memory[a@127.0.0.1]']/@failures)"),
	        0);
	assert_int_equal(
	        (int)xp_num(doc, "number(//testsuite[@name='gate.memory[b@127.0.0.1]']/@failures)"),
	        1);
	assert_int_equal(
	        (int)xp_num(doc, "count(//testcase[@classname='gate.memory.growth[b@127.0.0.1]' "
	                         "and @name='ets']/failure)"),
	        1);
	assert_int_equal(
	        (int)xp_num(doc, "count(//testsuite[@name='gate.memory[b@127.0.0.1]']/properties/"
	                         "property[@name='node' and @value='b@127.0.0.1'])"),
	        1);
	assert_int_equal(
	        (int)xp_num(doc, "number(//testsuite[@name='gate.memory[c@127.0.0.1]']/@errors)"),
	        1);
	assert_int_equal(
	        (int)xp_num(doc, "number(//testsuite[@name='gate.memory[c@127.0.0.1]']/@tests)"),
	        1);
	assert_int_equal((int)xp_num(doc,
	                             "count(//testcase[@classname='gate.node[c@127.0.0.1]' and "
	                             "@name='node']/error[contains(@message, 'noconnection')])"),
	                 1);
	xmlFreeDoc(doc);
	findings_clear(&fa);
	findings_clear(&fb);
}

static void test_cluster_report__summary(void **state)
{
	(void)state;
	struct findings fa = {0}, fb = {0};
	struct test_run run = {.finished = true};
	two_findings(&fa, false);
	two_findings(&fb, true);
	struct report_node nodes[] = {
	        {"a@127.0.0.1", &fa, NULL, 0, 0, NULL, NULL},
	        {"b@127.0.0.1", &fb, NULL, 0, 0, NULL, NULL},
	        {"c@127.0.0.1", NULL, "lost the connection to c@127.0.0.1 (noconnection)", 0, 0,
	         NULL, NULL},
	};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	summary_print(out, &(struct report_data){.tests = &run, .nodes = nodes, .nnodes = 3},
	              false);
	fclose(out);
	assert_non_null(strstr(text, "Memory growth (erlang:memory on a@127.0.0.1)"));
	assert_non_null(strstr(text, "Memory growth (erlang:memory on b@127.0.0.1)"));
	assert_null(strstr(text, "erlang:memory on c@127.0.0.1"));
	assert_non_null(strstr(text, "Node c@127.0.0.1: lost"));
	assert_non_null(strstr(text, "(noconnection)"));
	assert_non_null(strstr(text, "gate: FAILED (1 memory rule, 1 node lost)"));
	free(text);

	/* every node clean and present: a pass */
	nodes[1].findings = &fa;
	text = NULL;
	out = open_memstream(&text, &len);
	summary_print(out, &(struct report_data){.tests = &run, .nodes = nodes, .nnodes = 2},
	              false);
	fclose(out);
	assert_non_null(strstr(text, "gate: PASSED"));
	free(text);
	findings_clear(&fa);
	findings_clear(&fb);
}

/* A node's warnings (severity warn, --warn-only) are said under its section, and pass; the
 * one list the Markdown and HTML reports get keeps every field of each node's findings. */
static void test_cluster_report__warnings_and_merge(void **state)
{
	(void)state;
	struct findings fa = {0}, fb = {0}, merged = {0};
	struct test_run run = {.finished = true};
	two_findings(&fa, false);
	two_findings(&fb, true);
	struct finding *w = &fb.items[0];
	w->verdict = VERDICT_SKIP;
	w->warned = true;
	free(w->message);
	w->message = strdup("warning: ets grew");
	w->detail = strdup("    ETS tables created and left alive: cache");
	w->culprit = strdup("Elixir.LeakTest");
	w->file = strdup("test/leak_test.exs");
	w->line = 7;
	w->unit = UNIT_COUNT;
	w->show = SHOW_FIGURES;
	struct report_node nodes[] = {{"a@127.0.0.1", &fa, NULL, 0, 0, NULL, NULL},
	                              {"b@127.0.0.1", &fb, NULL, 0, 0, NULL, NULL}};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	summary_print(out, &(struct report_data){.tests = &run, .nodes = nodes, .nnodes = 2},
	              false);
	fclose(out);
	const char *b = strstr(text, "erlang:memory on b@127.0.0.1");
	assert_non_null(b);
	assert_non_null(strstr(b, "1 warning (severity warn, never failing the gate):"));
	assert_non_null(strstr(b, "warning: ets grew"));
	assert_non_null(strstr(text, "gate: PASSED"));
	free(text);

	for (size_t i = 0; i < fb.count; i++)
		assert_int_equal(findings_add_copy(&merged, &fb.items[i],
		                                   i == 0 ? "b@127.0.0.1: ets" : NULL),
		                 0);
	assert_int_equal(merged.count, 2);
	const struct finding *c = &merged.items[0];
	assert_string_equal(c->subject, "b@127.0.0.1: ets");
	assert_string_equal(merged.items[1].subject, "born");
	assert_true(c->warned);
	assert_int_equal(c->verdict, VERDICT_SKIP);
	assert_string_equal(c->message, "warning: ets grew");
	assert_string_equal(c->detail, w->detail);
	assert_ptr_not_equal(c->detail, w->detail); /* a copy: each list frees its own */
	assert_string_equal(c->culprit, "Elixir.LeakTest");
	assert_string_equal(c->file, "test/leak_test.exs");
	assert_int_equal(c->line, 7);
	assert_int_equal(c->unit, UNIT_COUNT);
	assert_int_equal(c->show, SHOW_FIGURES);
	assert_int_equal(c->before, w->before);
	assert_int_equal(c->delta, w->delta);
	findings_clear(&merged);
	findings_clear(&fa);
	findings_clear(&fb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_cluster_report__junit),
	        cmocka_unit_test(test_cluster_report__summary),
	        cmocka_unit_test(test_cluster_report__warnings_and_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
