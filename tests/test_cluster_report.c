/* tests/test_cluster_report.c: a cluster run's reports: one gate.memory suite per node with
 * classnames labelled by node, a lost node as an error testcase of its own suite, totals over
 * all nodes, and the console summary's per-node sections and verdict. */
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

#include "ci/junit.h"
#include "ci/summary.h"

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
	struct junit_node nodes[] = {
	        {"a@127.0.0.1", &fa, NULL},
	        {"b@127.0.0.1", &fb, NULL},
	        {"c@127.0.0.1", NULL, "lost the connection to c@127.0.0.1 (noconnection)"},
	};
	struct junit_meta meta = {.project = "p", .nodes = nodes, .nnodes = 3};
	char path[128], err[512] = "";
	snprintf(path, sizeof(path), "/tmp/gate-test-cluster.%d.xml", (int)getpid());
	if (junit_write(path, NULL, NULL, &meta, err, sizeof(err)) < 0)
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
	struct summary_node nodes[] = {
	        {"a@127.0.0.1", &fa, NULL},
	        {"b@127.0.0.1", &fb, NULL},
	        {"c@127.0.0.1", NULL, "lost the connection to c@127.0.0.1 (noconnection)"},
	};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	summary_print_cluster(out, nodes, 3, &run, NULL);
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
	summary_print_cluster(out, nodes, 2, &run, NULL);
	fclose(out);
	assert_non_null(strstr(text, "gate: PASSED"));
	free(text);
	findings_clear(&fa);
	findings_clear(&fb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_cluster_report__junit),
	        cmocka_unit_test(test_cluster_report__summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
