/* tests/test_run_json.c: `gate run --json`'s document (ci/store/run_json.h), where its every
 * test's case is written as text beside jansson's dump of the rest: the whole file is what
 * jansson itself dumps of it (byte for byte, with names that need escaping, NULL fields and
 * none or one test), text that is not UTF-8 comes out as U+FFFD instead of failing the
 * document, and gate merge reads every case back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/readfile.h"
#include "ci/store/run_json.h"
#include "ci/store/run_json_read.h"
#include "model/finding.h"
#include "model/snapshot.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gate-test-runjson-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void add(struct test_run *run, const char *module, const char *name, const char *file,
                const char *message, const char *reason, const char *app, enum test_state st)
{
	struct test_result *t = test_run_add(run);
	assert_non_null(t);
	t->module = module ? strdup(module) : NULL;
	t->name = name ? strdup(name) : NULL;
	t->file = file ? strdup(file) : NULL;
	t->message = message ? strdup(message) : NULL;
	t->reason = reason ? strdup(reason) : NULL;
	t->app = app ? strdup(app) : NULL;
	t->line = 12;
	t->time_us = 123456789012LL;
	t->state = st;
}

/* writes run's document to dir/name and returns its text (malloc'd) */
static char *written(const struct test_run *run, const char *name)
{
	char path[128], err[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	static const struct findings none = {0};
	static const struct snapshot before = {0}, after = {0};
	struct run_json j = {.gate_version = "0.0.0-test",
	                     .project = "/p",
	                     .tests = run,
	                     .findings = &none,
	                     .before = &before,
	                     .after = &after,
	                     .config_digest = "0123456789abcdef"};
	assert_int_equal(run_json_write(path, &j, err, sizeof(err)), 0);
	char *text = NULL, why[256];
	size_t len = 0;
	assert_int_equal(readfile_bounded(path, 1 << 24, 0, &text, &len, why, sizeof(why)),
	                 READFILE_OK);
	return text;
}

/* the text is jansson's own dump of what it parses to, newline-terminated */
static void assert_as_jansson_dumps(const char *text)
{
	json_error_t e;
	json_t *root = json_loads(text, 0, &e);
	if (!root)
		fail_msg("not JSON: %s (line %d)", e.text, e.line);
	char *again = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2));
	assert_non_null(again);
	size_t n = strlen(again);
	assert_int_equal(strlen(text), n + 1);
	assert_memory_equal(text, again, n);
	assert_int_equal(text[n], '\n');
	free(again);
	json_decref(root);
}

static json_t *cases_of(const char *text, json_t **root)
{
	json_error_t e;
	*root = json_loads(text, 0, &e);
	assert_non_null(*root);
	json_t *c = json_object_get(json_object_get(*root, "tests"), "cases");
	assert_true(json_is_array(c));
	return c;
}

static void test_cases_are_what_jansson_dumps(void **state)
{
	(void)state;
	struct test_run run = {0};
	add(&run, "Elixir.A.Test", "test \"quoted\" and \\ back\\slash", "/r/test/a_test.exs",
	    "line one\nline two\ttab\r\x01\x1f end", NULL, "app_a", TEST_FAILED);
	add(&run, "Elixir.B.Test", "test ünïcødé ✓ and 🦀", NULL, NULL,
	    "Assertion with == failed", "", TEST_PASSED);
	add(&run, "Elixir.C.Test", "test /slash/ \b\f", "/r/test/c_test.exs", "", "x", NULL,
	    TEST_SKIPPED);
	/* text shaped like the placeholder the cases take the place of is only text */
	add(&run, "\x01gate-cases-0123456789abcdef\x01", "\x01gate-cases-0123456789abcdef\x01",
	    NULL, NULL, NULL, NULL, TEST_PASSED);
	/* --per-test: a measured test's own growth */
	run.tests[1].measured = true;
	run.tests[1].async = true;
	run.tests[1].delta.mem[MEM_ETS] = 4096;
	run.tests[1].delta.mem[MEM_TOTAL] = -8;
	run.tests[1].delta.ets_tables = 2;
	char *text = written(&run, "three.json");
	assert_as_jansson_dumps(text);
	json_t *root;
	json_t *c = cases_of(text, &root);
	assert_int_equal(json_array_size(c), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 3), "name")),
	                    "\x01gate-cases-0123456789abcdef\x01");
	json_t *a = json_array_get(c, 0);
	assert_string_equal(json_string_value(json_object_get(a, "name")),
	                    "test \"quoted\" and \\ back\\slash");
	assert_string_equal(json_string_value(json_object_get(a, "message")),
	                    "line one\nline two\ttab\r\x01\x1f end");
	assert_string_equal(json_string_value(json_object_get(a, "app")), "app_a");
	assert_true(json_is_null(json_object_get(a, "reason")));
	assert_int_equal(json_integer_value(json_object_get(a, "time_us")), 123456789012LL);
	assert_int_equal(json_integer_value(json_object_get(a, "line")), 12);
	assert_string_equal(json_string_value(json_object_get(a, "state")), "failed");
	json_t *b = json_array_get(c, 1);
	assert_string_equal(json_string_value(json_object_get(b, "name")),
	                    "test ünïcødé ✓ and 🦀");
	assert_true(json_is_true(json_object_get(b, "measured")));
	assert_true(json_is_true(json_object_get(b, "async")));
	json_t *bd = json_object_get(b, "delta");
	assert_int_equal(json_integer_value(json_object_get(bd, "ets")), 4096);
	assert_int_equal(json_integer_value(json_object_get(bd, "total")), -8);
	assert_int_equal(json_integer_value(json_object_get(bd, "ets_tables")), 2);
	assert_int_equal(json_integer_value(json_object_get(bd, "process_count")), 0);
	assert_true(json_is_null(json_object_get(a, "delta")));
	assert_true(json_is_false(json_object_get(a, "measured")));
	/* an empty app is no app, a NULL file or message null */
	assert_true(json_is_null(json_object_get(b, "app")));
	assert_true(json_is_null(json_object_get(b, "file")));
	assert_true(json_is_null(json_object_get(b, "message")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 2), "name")),
	                    "test /slash/ \b\f");
	json_decref(root);
	free(text);
	test_run_clear(&run);
}

static void test_no_test_and_one_test(void **state)
{
	(void)state;
	struct test_run none = {0};
	char *text = written(&none, "none.json");
	assert_as_jansson_dumps(text);
	json_t *root;
	assert_int_equal(json_array_size(cases_of(text, &root)), 0);
	assert_non_null(strstr(text, "\"cases\": []"));
	json_decref(root);
	free(text);

	struct test_run one = {0};
	add(&one, "Elixir.A.Test", "test a", "f.exs", "", NULL, NULL, TEST_PASSED);
	text = written(&one, "one.json");
	assert_as_jansson_dumps(text);
	free(text);
	test_run_clear(&one);
}

/* jansson refuses text that is not UTF-8 (the whole document failed with it): each invalid
 * byte is U+FFFD here, and the rest of the name is kept */
static void test_invalid_utf8_becomes_replacement_characters(void **state)
{
	(void)state;
	struct test_run run = {0};
	add(&run, "Elixir.A.Test", "test bad \xff\xfe byte and \xc3 cut", "f.exs", "\xed\xa0\x80",
	    NULL, NULL, TEST_PASSED);
	char *text = written(&run, "bad.json");
	assert_as_jansson_dumps(text);
	json_t *root;
	json_t *a = json_array_get(cases_of(text, &root), 0);
	assert_string_equal(json_string_value(json_object_get(a, "name")),
	                    "test bad \xef\xbf\xbd\xef\xbf\xbd byte and \xef\xbf\xbd cut");
	assert_string_equal(json_string_value(json_object_get(a, "message")),
	                    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	json_decref(root);
	free(text);
	test_run_clear(&run);
}

/* gate merge reads the cases back as they were */
static void test_cases_read_back(void **state)
{
	(void)state;
	struct test_run run = {0};
	for (int i = 0; i < 50; i++) {
		char name[64];
		snprintf(name, sizeof(name), "test n%d \"q\"", i);
		add(&run, "Elixir.M.Test", name, "/r/test/m_test.exs", i % 7 ? "" : "boom\nhere",
		    i % 7 ? NULL : "boom", "m", i % 7 ? TEST_PASSED : TEST_FAILED);
		struct test_result *t = &run.tests[run.count - 1];
		t->measured = i % 3 == 0;
		t->delta.mem[MEM_BINARY] = i * 1000;
		t->delta.processes = i;
	}
	char *text = written(&run, "fifty.json");
	free(text);
	char path[128], err[512];
	snprintf(path, sizeof(path), "%s/fifty.json", dir);
	struct run_result r;
	if (run_result_read(&r, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(r.tests.count, 50);
	for (size_t i = 0; i < 50; i++) {
		assert_string_equal(r.tests.tests[i].name, run.tests[i].name);
		assert_int_equal(r.tests.tests[i].state, run.tests[i].state);
		assert_int_equal(r.tests.tests[i].time_us, run.tests[i].time_us);
		/* a measured test's own growth, which the merged summary ranks */
		assert_int_equal(r.tests.tests[i].measured, i % 3 == 0);
		assert_int_equal(r.tests.tests[i].delta.mem[MEM_BINARY],
		                 i % 3 ? 0 : (int64_t)i * 1000);
		assert_int_equal(r.tests.tests[i].delta.processes, i % 3 ? 0 : (int64_t)i);
	}
	run_result_clear(&r);
	test_run_clear(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_cases_are_what_jansson_dumps),
	        cmocka_unit_test(test_no_test_and_one_test),
	        cmocka_unit_test(test_invalid_utf8_becomes_replacement_characters),
	        cmocka_unit_test(test_cases_read_back),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
