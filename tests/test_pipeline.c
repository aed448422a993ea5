/* tests/test_pipeline.c: the run pipeline's pieces that take input from outside: the cluster's
 * node list as the attached node sends it (capped, checked), and the --json run result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ei.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci/store/run_json.h"
#include "gate/node/term.h"
#include "gate/run/cluster.h"
#include "model/finding.h"
#include "model/tests.h"

/* A list of n node names "nI@host" as the probe sends them (binaries); dup repeats the first. */
static struct term *node_list(size_t n, bool dup)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	if (n)
		ei_x_encode_list_header(&x, (long)n);
	for (size_t i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "n%zu@host", dup && i == n - 1 ? (size_t)0 : i);
		ei_x_encode_binary(&x, name, (long)strlen(name));
	}
	ei_x_encode_empty_list(&x);
	struct term *t = NULL;
	size_t idx = 0;
	char err[256] = "";
	int version = 0, vidx = 0;
	ei_decode_version(x.buff, &vidx, &version);
	idx = (size_t)vidx;
	if (term_decode(&t, (const unsigned char *)x.buff, (size_t)x.index, &idx, NULL, err,
	                sizeof(err)) != 0)
		fail_msg("decode: %s", err);
	ei_x_free(&x);
	return t;
}

static void test_cluster_nodes_decoded(void **state)
{
	(void)state;
	struct term *t = node_list(3, false);
	struct cluster cl = {0};
	char err[512] = "";
	assert_int_equal(cluster_nodes_decode(&cl, t, "a@h", err, sizeof(err)), 0);
	assert_int_equal(cl.n, 3);
	assert_string_equal(cl.nodes[0].name, "n0@host");
	assert_string_equal(cl.nodes[2].name, "n2@host");
	cluster_clear(&cl);
	term_free(t);
}

static void test_cluster_at_the_cap_is_taken(void **state)
{
	(void)state;
	struct term *t = node_list(CLUSTER_NODES_MAX, false);
	struct cluster cl = {0};
	char err[512] = "";
	assert_int_equal(cluster_nodes_decode(&cl, t, "a@h", err, sizeof(err)), 0);
	assert_int_equal(cl.n, CLUSTER_NODES_MAX);
	cluster_clear(&cl);
	term_free(t);
}

static void test_cluster_over_the_cap_is_refused(void **state)
{
	(void)state;
	struct term *t = node_list(CLUSTER_NODES_MAX + 1, false);
	struct cluster cl = {0};
	char err[512] = "";
	assert_int_equal(cluster_nodes_decode(&cl, t, "a@h", err, sizeof(err)), -1);
	assert_null(cl.nodes);
	assert_int_equal(cl.n, 0);
	assert_non_null(strstr(err, "a@h"));
	assert_non_null(strstr(err, "65 nodes"));
	assert_non_null(strstr(err, "at most 64"));
	term_free(t);
}

static void test_cluster_bad_lists_are_refused(void **state)
{
	(void)state;
	struct cluster cl = {0};
	char err[512] = "";
	struct term *empty = node_list(0, false);
	assert_int_equal(cluster_nodes_decode(&cl, empty, "a@h", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no node list"));
	term_free(empty);
	assert_int_equal(cluster_nodes_decode(&cl, NULL, "a@h", err, sizeof(err)), -1);

	struct term *dup = node_list(3, true);
	assert_int_equal(cluster_nodes_decode(&cl, dup, "a@h", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "entry 3 is a node listed twice"));
	assert_null(cl.nodes);
	term_free(dup);

	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_binary(&x, "a@h", 3);
	ei_x_encode_long(&x, 42);
	ei_x_encode_empty_list(&x);
	struct term *t = NULL;
	int vidx = 0, version = 0;
	ei_decode_version(x.buff, &vidx, &version);
	size_t idx = (size_t)vidx;
	assert_int_equal(term_decode(&t, (const unsigned char *)x.buff, (size_t)x.index, &idx, NULL,
	                             err, sizeof(err)),
	                 0);
	assert_int_equal(cluster_nodes_decode(&cl, t, "a@h", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "entry 2 is not a node name"));
	term_free(t);
	ei_x_free(&x);
}

/* The run result: the baseline as an object (not text), the verdict, the tests. */
static void test_run_json_written(void **state)
{
	(void)state;
	char dir[] = "/tmp/gate-test-pipeline-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/run.json", dir);

	struct baseline b = {0};
	b.format_version = BASELINE_FORMAT_VERSION;
	struct test_run tests = {0};
	struct test_result *t = test_run_add(&tests);
	assert_non_null(t);
	t->state = TEST_PASSED;
	struct findings fs = {0};
	struct snapshot before = {0}, after = {0};
	struct run_json j = {.gate_version = "9.9.9",
	                     .project = "/p",
	                     .passed = true,
	                     .started = 1700000000,
	                     .baseline = &b,
	                     .tests = &tests,
	                     .findings = &fs,
	                     .before = &before,
	                     .after = &after};
	char err[512] = "";
	assert_int_equal(run_json_write(path, &j, err, sizeof(err)), 0);
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	assert_non_null(root);
	/* gate.run/2 adds keys for gate merge; every key of gate.run/1 stays */
	assert_string_equal(json_string_value(json_object_get(root, "format")), "gate.run/2");
	assert_true(json_is_null(json_object_get(root, "partition")));
	assert_string_equal(json_string_value(json_object_get(root, "verdict")), "passed");
	assert_true(json_is_null(json_object_get(root, "commit")));
	assert_true(json_is_object(json_object_get(root, "baseline")));
	assert_int_equal(
	        json_integer_value(json_object_get(json_object_get(root, "tests"), "passed")), 1);
	json_decref(root);

	/* a directory in the way: an error naming --json and the path, nothing half-written */
	char bad[300];
	snprintf(bad, sizeof(bad), "%s/run.json/x", dir);
	assert_int_equal(run_json_write(bad, &j, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "run.json"));

	unlink(path);
	rmdir(dir);
	test_run_clear(&tests);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_cluster_nodes_decoded),
	        cmocka_unit_test(test_cluster_at_the_cap_is_taken),
	        cmocka_unit_test(test_cluster_over_the_cap_is_refused),
	        cmocka_unit_test(test_cluster_bad_lists_are_refused),
	        cmocka_unit_test(test_run_json_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
