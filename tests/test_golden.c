/* tests/test_golden.c: every writer's whole output on one run's model, compared byte for byte
 * with its golden file: the console summary (plain and coloured), the JUnit file, the HTML
 * report, for one node and for a cluster of two (one of which left the run). The Markdown and
 * annotation goldens are their own tests'. A change to a writer that is meant to change
 * nothing keeps these files as they are; one that means to change them rewrites them with
 * GATE_UPDATE_GOLDEN=1 and the diff shows what a reader will see differently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ci/report/html.h"
#include "ci/report/junit.h"
#include "ci/report/summary.h"
#include "model/finding.h"
#include "model/tests.h"
#include "tests/report_fixture.h"

/* The second node of the cluster: one failing ETS finding of its own. */
static void second_node(struct findings *f)
{
	if (findings_add(f, "ets", "table orders_cache", VERDICT_FAIL, 1000, 3200000, 0, -1,
	                 "ETS table orders_cache (owner Orders.Cache) grew 1.0 kB -> 3.2 MB "
	                 "(+12 000 rows), cap 2.0 MB") < 0)
		abort();
}

/* Three runs of --repeat, each ending where the fixture's run does. */
static void three_runs(struct repeat_data *rep, const struct rfx *x)
{
	memset(rep, 0, sizeof(*rep));
	repeat_point_from(&rep->start, &x->before);
	for (int i = 0; i < 3; i++)
		if (repeat_data_add(rep, &x->after, 3, 1, 1200000 + 100000 * i) < 0)
			abort();
}

static void golden(const char *path, const char *text, size_t len)
{
	const char *why = rfx_golden(path, text, len);
	if (why)
		fail_msg("%s\n--- got:\n%.*s", why, (int)len, text);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *s = malloc(1 << 20);
	assert_non_null(s);
	*len = fread(s, 1, (1 << 20) - 1, f);
	s[*len] = '\0';
	fclose(f);
	return s;
}

/* The view of the fixture's run: one node with --repeat's runs, or a cluster of three of
 * which one left the run (nodes[3] the caller's). */
static struct report_data view_of(struct rfx *x, struct findings *other, struct repeat_data *rep,
                                  bool cluster, struct report_node *nodes)
{
	nodes[0] = (struct report_node){.name = "app_a@127.0.0.1", .findings = &x->findings};
	nodes[1] = (struct report_node){.name = "app_b@127.0.0.1", .findings = other};
	nodes[2] = (struct report_node){.name = "app_c@127.0.0.1",
	                                .error = "the node went down during the run"};
	struct report_data d = x->d;
	if (cluster) {
		d.before = d.after = NULL;
		d.nodes = nodes;
		d.nnodes = 3;
	} else {
		d.repeat = rep;
	}
	return d;
}

static void summary_golden(const char *path, bool color, bool cluster)
{
	struct rfx x;
	struct findings other = {0};
	struct repeat_data rep;
	struct report_node nodes[3];
	rfx_build(&x, true);
	second_node(&other);
	three_runs(&rep, &x);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	struct report_data d = view_of(&x, &other, &rep, cluster, nodes);
	summary_print(out, &d, color);
	assert_int_equal(fclose(out), 0);
	golden(path, text, len);
	free(text);
	findings_clear(&other);
	repeat_data_clear(&rep);
	rfx_clear(&x);
}

static void test_golden__summary(void **state)
{
	(void)state;
	summary_golden("tests/golden/summary.txt", false, false);
	summary_golden("tests/golden/summary_color.txt", true, false);
	summary_golden("tests/golden/summary_cluster.txt", false, true);
}

static void junit_golden(const char *path, bool cluster, int partition, const char *error)
{
	struct rfx x;
	struct findings other = {0};
	struct repeat_data rep;
	rfx_build(&x, true);
	second_node(&other);
	three_runs(&rep, &x);
	x.run.seed = 4242;
	char tmp[] = "/tmp/gate-golden-XXXXXX";
	assert_non_null(mkdtemp(tmp));
	char file[sizeof(tmp) + 16];
	snprintf(file, sizeof(file), "%s/junit.xml", tmp);
	struct report_node nodes[3];
	struct report_data d = view_of(&x, &other, &rep, cluster, nodes);
	if (partition) { /* a merged run: two partitions, each with its seed */
		nodes[0] = (struct report_node){.name = "partition 1/2",
		                                .findings = &x.findings,
		                                .partition = partition,
		                                .seed = 11};
		nodes[1] = (struct report_node){.name = "partition 2/2",
		                                .findings = &other,
		                                .partition = partition + 1,
		                                .seed = 22};
		d.nnodes = 2;
		d.node = "2 of 2 partitions, merged";
	} else if (cluster) {
		nodes[0].seed = 11, nodes[1].seed = 22;
	}
	d.hostname = "ci-runner";
	d.memory_time_s = 0.25;
	d.error = error;
	d.file_root = "/ws/proj";
	char err[512];
	if (junit_write(file, &d, err, sizeof(err)) < 0)
		fail_msg("junit_write: %s", err);
	size_t len;
	char *text = slurp(file, &len);
	golden(path, text, len);
	free(text);
	unlink(file);
	rmdir(tmp);
	findings_clear(&other);
	repeat_data_clear(&rep);
	rfx_clear(&x);
}

static void test_golden__junit(void **state)
{
	(void)state;
	junit_golden("tests/golden/junit.xml", false, 0, NULL);
	junit_golden("tests/golden/junit_cluster.xml", true, 0, NULL);
	junit_golden("tests/golden/junit_merged.xml", true, 1, NULL);
	junit_golden("tests/golden/junit_error.xml", false, 0,
	             "the node went down during the after-snapshot");
}

static void test_golden__html(void **state)
{
	(void)state;
	struct rfx x;
	rfx_build(&x, true);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(html_report_write(out, &x.d), 0);
	assert_int_equal(fclose(out), 0);
	golden("tests/golden/report.html", text, len);
	free(text);
	rfx_clear(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_golden__summary),
	        cmocka_unit_test(test_golden__junit),
	        cmocka_unit_test(test_golden__html),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
