/* tests/test_escape.c: a test name or message with NUL and other control bytes, as a node
 * sends it (encoded with ei, decoded by gate's own term decoder and probe_tests_decode), is
 * shown escaped and never cut in every report: JUnit, the console summary, the Markdown step
 * summary and the HTML report (a NUL must not cut the rest of the text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/helpers.h"

#include <ei.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "ci/report/html.h"
#include "ci/report/junit.h"
#include "ci/report/markdown.h"
#include "ci/report/summary.h"
#include "gate/node/term.h"
#include "gate/probe/probe.h"
#include "model/finding.h"
#include "model/tests.h"

static const char name[] = "test a\0b\x01"
                           "c\x7f"
                           "d end-of-name";
static const char msg[] = "Assertion failed\0 and the tail\x02 must show";

/* {ok, #{tests => [{Module, Name, File, Line, TimeUs, failed, Message}]}} */
static void encode_reply(ei_x_buff *x)
{
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "ok");
	ei_x_encode_map_header(x, 1);
	ei_x_encode_atom(x, "tests");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_tuple_header(x, 7);
	ei_x_encode_binary(x, "Elixir.EscTest", 14);
	ei_x_encode_binary(x, name, sizeof(name) - 1);
	ei_x_encode_binary(x, "test/esc_test.exs", 17);
	ei_x_encode_long(x, 3);
	ei_x_encode_long(x, 10);
	ei_x_encode_atom(x, "failed");
	ei_x_encode_binary(x, msg, sizeof(msg) - 1);
	ei_x_encode_empty_list(x);
}

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strdup(buf);
}

static void assert_shows(const char *what, const char *text)
{
	if (!strstr(text, "a\\x00b\\x01c\\x7fd end-of-name"))
		fail_msg("%s does not show the name escaped and whole:\n%s", what, text);
	if (strcmp(what, "the summary") != 0 && /* it lists the failed tests' names only */
	    !strstr(text, "failed\\x00 and the tail\\x02 must show"))
		fail_msg("%s does not show the message escaped and whole:\n%s", what, text);
}

static void test_escape__every_report(void **state)
{
	(void)state;
	ei_x_buff x;
	encode_reply(&x);
	struct term *root = NULL;
	char err[512];
	int index = 0;
	size_t idx = 0;
	(void)index;
	assert_int_equal(term_decode(&root, (const unsigned char *)x.buff, (size_t)x.index, &idx,
	                             &term_limits_default, err, sizeof(err)),
	                 0);
	ei_x_free(&x);
	struct test_run run;
	memset(&run, 0, sizeof(run));
	char *suite_error = NULL;
	if (probe_tests_decode(root, &run, &suite_error, err, sizeof(err)) < 0)
		fail_msg("decode: %s", err);
	term_free(root);
	assert_int_equal(run.count, 1);
	assert_string_equal(run.tests[0].name, "test a\\x00b\\x01c\\x7fd end-of-name");
	run.finished = true;

	char dir[] = "/tmp/gate_test_escape.XXXXXX", path[128];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	struct findings none = {0};
	assert_int_equal(junit_write(path, &(struct report_data){.findings = &none, .tests = &run},
	                             err, sizeof(err)),
	                 0);
	char *junit = slurp_file(path);
	assert_shows("JUnit", junit);
	free(junit);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	summary_print(f, &(struct report_data){.findings = &none, .tests = &run}, false);
	fclose(f);
	assert_shows("the summary", buf);
	free(buf);

	struct report_data d = {.project = "esc", .findings = &none, .tests = &run};
	f = open_memstream(&buf, &len);
	assert_int_equal(markdown_summary_write(f, &d), 0);
	fclose(f);
	/* Markdown writes a backslash as "\\": read it as rendered */
	for (char *r = buf, *w = buf;; r++) {
		if (r[0] == '\\' && r[1] == '\\')
			r++;
		if (!(*w++ = *r))
			break;
	}
	assert_shows("the Markdown summary", buf);
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(html_report_write(f, &d), 0);
	fclose(f);
	assert_shows("the HTML report", buf);
	free(buf);

	test_run_clear(&run);
	free(suite_error);
	rm_rf(dir);
}

static void test_escape__dup(void **state)
{
	(void)state;
	static const char in[] = "x\0y\tz\n\x1b[31m\x1f";
	char *s = utf8_dup_escaped(in, sizeof(in) - 1);
	assert_string_equal(s, "x\\x00y\tz\n\x1b[31m\\x1f");
	free(s);
	s = utf8_dup_escaped("", 0);
	assert_string_equal(s, "");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_escape__dup),
	        cmocka_unit_test(test_escape__every_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
