/* tests/test_junit.c: the JUnit report: counts, attributes, hostile strings, the schema,
 * atomic writes. Each test writes into its own mkdtemp directory and reads the file back
 * with libxml2's parser, which rejects anything that is not well-formed UTF-8 XML.
 * GATE_KEEP_JUNIT=DIR keeps a copy of each report in DIR (for tests/junit/check.js). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/helpers.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>
#include <libxml/xpath.h>

#include "ci/report/junit.h"
#include "model/finding.h"
#include "model/tests.h"

#define TS_2026_12_02_NOON 1796212800 /* 2026-12-02T12:00:00Z */

/* ---- helpers ---- */

struct fixture {
	char dir[64];
	char path[256];
	struct findings findings;
	struct test_run run;
	struct report_data meta; /* the run's view but its findings and tests */
	xmlDocPtr doc;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/gate_test_junit.XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/report.xml", fx->dir);
	fx->meta = (struct report_data){
	        .hostname = "ci-runner-1",
	        .started = TS_2026_12_02_NOON,
	        .project = "demo",
	        .node = "gate_1234@localhost",
	        .memory_time_s = 0.25,
	};
	fx->run.finished = true;
	fx->run.seed = 4242;
	*state = fx;
	return 0;
}

/* Copies the report to $GATE_KEEP_JUNIT/<test name>.xml when that variable is set. */
static void keep_copy(const struct fixture *fx, const char *name)
{
	const char *keep = getenv("GATE_KEEP_JUNIT");
	if (!keep || !*keep)
		return;
	char dst[1024];
	mkdir(keep, 0777);
	snprintf(dst, sizeof(dst), "%s/%s.xml", keep, name);
	FILE *in = fopen(fx->path, "rb"), *out = in ? fopen(dst, "wb") : NULL;
	char buf[65536];
	size_t n;
	while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	findings_clear(&fx->findings);
	test_run_clear(&fx->run);
	if (fx->doc)
		xmlFreeDoc(fx->doc);
	rm_rf(fx->dir);
	free(fx);
	return 0;
}

static void add_test(struct test_run *run, const char *module, const char *name, const char *file,
                     int line, int64_t time_us, enum test_state st, const char *message)
{
	struct test_result *t = test_run_add(run);
	assert_non_null(t);
	t->module = module ? strdup(module) : NULL;
	t->name = name ? strdup(name) : NULL;
	t->file = file ? strdup(file) : NULL;
	t->line = line;
	t->time_us = time_us;
	t->state = st;
	t->message = message ? strdup(message) : NULL;
}

/* The usual case: three findings, two modules, one test of every state. */
static void fill_typical(struct fixture *fx)
{
	assert_int_equal(findings_add(&fx->findings, "growth", "binary", VERDICT_FAIL, 10000000,
	                              30000000, 1000000, 10.0,
	                              "binary grew 10.0 MB -> 30.0 MB (+20.0 MB, +200.0 %)"),
	                 0);
	assert_int_equal(findings_add(&fx->findings, "growth", "ets", VERDICT_PASS, 2000000,
	                              2100000, 1000000, 10.0, "ets grew 2.0 MB -> 2.1 MB"),
	                 0);
	assert_int_equal(findings_add(&fx->findings, "growth", "atom_used", VERDICT_SKIP, 0, 0,
	                              1000000, 10.0, "atom_used: not reported by the node"),
	                 0);
	/* shown as the growth rule shows its findings (rules/growth.c) */
	findings_show(&fx->findings, 0, UNIT_BYTES, SHOW_CATEGORY | SHOW_FIGURES);
	add_test(&fx->run, "Elixir.Foo.BarTest", "test adds numbers", "test/foo/bar_test.exs", 12,
	         1234, TEST_PASSED, NULL);
	add_test(&fx->run, "Elixir.Foo.BarTest", "test fails", "test/foo/bar_test.exs", 20, 1500000,
	         TEST_FAILED,
	         "\n     Assertion with == failed\n     code:  assert 1 == 2\n     left:  1\n");
	add_test(&fx->run, "Elixir.Alpha", "test skipped one", "test/alpha_test.exs", 3, 0,
	         TEST_SKIPPED, "due to skip tag");
	add_test(&fx->run, "Elixir.Alpha", "test excluded one", "test/alpha_test.exs", 9, 0,
	         TEST_EXCLUDED, NULL);
	add_test(&fx->run, "Elixir.Foo.BarTest", "test never ran", "test/foo/bar_test.exs", 30, 0,
	         TEST_INVALID, "** (RuntimeError) setup_all blew up");
}

/* The view of the fixture's run: meta with its findings and tests (either may be NULL). */
static struct report_data view(const struct report_data *meta, const struct findings *findings,
                               const struct test_run *run)
{
	struct report_data d = meta ? *meta : (struct report_data){0};
	d.findings = findings;
	d.tests = run;
	return d;
}

static void write_ok(struct fixture *fx, const struct report_data *meta)
{
	char err[512] = "";
	struct report_data d = view(meta, &fx->findings, &fx->run);
	int rc = junit_write(fx->path, &d, err, sizeof(err));
	if (rc != 0)
		fail_msg("junit_write failed: %s", err);
	if (fx->doc)
		xmlFreeDoc(fx->doc);
	fx->doc = xmlReadFile(fx->path, NULL, XML_PARSE_NONET);
	if (!fx->doc)
		fail_msg("%s is not well-formed XML", fx->path);
}

/* The string value of an XPath expression, e.g. "string(/testsuites/@tests)". */
static char *xp(xmlDocPtr doc, const char *fmt, ...)
{
	static char out[4][1 << 17];
	static int slot;
	char expr[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(expr, sizeof(expr), fmt, ap);
	va_end(ap);
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	assert_non_null(ctx);
	xmlXPathObjectPtr r = xmlXPathEvalExpression(BAD_CAST expr, ctx);
	if (!r)
		fail_msg("bad XPath %s", expr);
	char *o = out[slot++ % 4];
	if (r->type == XPATH_STRING)
		snprintf(o, sizeof(out[0]), "%s", (const char *)r->stringval);
	else if (r->type == XPATH_NUMBER)
		snprintf(o, sizeof(out[0]), "%g", r->floatval);
	else
		snprintf(o, sizeof(out[0]), "(not a string)");
	xmlXPathFreeObject(r);
	xmlXPathFreeContext(ctx);
	return o;
}

/* Removes the testcase file/line attributes the xsd predates. */
static void strip_file_line(xmlNodePtr n)
{
	for (; n; n = n->next) {
		if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, BAD_CAST "testcase")) {
			xmlUnsetProp(n, BAD_CAST "file");
			xmlUnsetProp(n, BAD_CAST "line");
		}
		strip_file_line(n->children);
	}
}

/* The schema is a third-party file kept outside the repository: $GATE_JUNIT_XSD, else the
 * workplace's shared folder beside the source tree ($GATE_SRCDIR, else this file's
 * tests/.. as the Makefile compiles it from the top dir). */
static const char *xsd_path(void)
{
	static char path[1024];
	const char *xsd = getenv("GATE_JUNIT_XSD");
	if (xsd && *xsd)
		return xsd;
	const char *src = getenv("GATE_SRCDIR");
	if (src && *src) {
		snprintf(path, sizeof(path), "%s/../shared/junit/junit-10.xsd", src);
		return path;
	}
	snprintf(path, sizeof(path), "%s", __FILE__);
	char *slash = strrchr(path, '/');
	if (slash)
		snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path),
		         "../../shared/junit/junit-10.xsd");
	else
		snprintf(path, sizeof(path), "../../shared/junit/junit-10.xsd");
	return path;
}

/* Validates doc against the schema when it is there; without it says so once, on stderr, and
 * the test goes on with its other checks. */
static void assert_schema_valid(xmlDocPtr doc)
{
	static bool said;
	const char *xsd = xsd_path();
	if (access(xsd, R_OK) != 0) {
		if (!said)
			fprintf(stderr,
			        "test_junit: schema checks skipped: no JUnit schema at %s "
			        "(set GATE_JUNIT_XSD to a copy of junit-10.xsd)\n",
			        xsd);
		said = true;
		return;
	}
	xmlDocPtr copy = xmlCopyDoc(doc, 1);
	assert_non_null(copy);
	strip_file_line(xmlDocGetRootElement(copy));
	xmlSchemaParserCtxtPtr pctx = xmlSchemaNewParserCtxt(xsd);
	assert_non_null(pctx);
	xmlSchemaPtr schema = xmlSchemaParse(pctx);
	assert_non_null(schema);
	xmlSchemaValidCtxtPtr vctx = xmlSchemaNewValidCtxt(schema);
	assert_non_null(vctx);
	int rc = xmlSchemaValidateDoc(vctx, copy);
	xmlSchemaFreeValidCtxt(vctx);
	xmlSchemaFree(schema);
	xmlSchemaFreeParserCtxt(pctx);
	xmlFreeDoc(copy);
	assert_int_equal(rc, 0);
}

static size_t dir_entries(const char *dir)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static char *big_message(size_t size)
{
	char *m = malloc(size + 1);
	assert_non_null(m);
	for (size_t i = 0; i < size; i++)
		m[i] = (char)('a' + i % 26);
	memcpy(m, "huge failure\n", 13);
	m[size] = '\0';
	return m;
}

/* ---- counts and attributes ---- */

static void test_junit__counts(void **state)
{
	struct fixture *fx = *state;
	fill_typical(fx);
	write_ok(fx, &fx->meta);
	keep_copy(fx, "typical");
	xmlDocPtr d = fx->doc;

	/* 3 findings + 5 tests; failures: binary + "test fails"; errors: setup_all */
	assert_string_equal(xp(d, "name(/*)"), "testsuites");
	assert_string_equal(xp(d, "string(/testsuites/@name)"), "gate: demo");
	assert_string_equal(xp(d, "string(/testsuites/@tests)"), "8");
	assert_string_equal(xp(d, "string(/testsuites/@failures)"), "2");
	assert_string_equal(xp(d, "string(/testsuites/@errors)"), "1");
	assert_string_equal(xp(d, "count(/testsuites/testsuite)"), "3");

	const char *m = "/testsuites/testsuite[@name='gate.memory']";
	assert_string_equal(xp(d, "string(%s/@tests)", m), "3");
	assert_string_equal(xp(d, "string(%s/@failures)", m), "1");
	assert_string_equal(xp(d, "string(%s/@errors)", m), "0");
	assert_string_equal(xp(d, "string(%s/@skipped)", m), "1");
	assert_string_equal(xp(d, "string(%s/@time)", m), "0.25");

	const char *f = "/testsuites/testsuite[@name='Foo.BarTest']";
	assert_string_equal(xp(d, "string(%s/@tests)", f), "3");
	assert_string_equal(xp(d, "string(%s/@failures)", f), "1");
	assert_string_equal(xp(d, "string(%s/@errors)", f), "1");
	assert_string_equal(xp(d, "string(%s/@skipped)", f), "0");
	assert_string_equal(xp(d, "count(%s/testcase)", f), "3");

	const char *a = "/testsuites/testsuite[@name='Alpha']";
	assert_string_equal(xp(d, "string(%s/@tests)", a), "2");
	assert_string_equal(xp(d, "string(%s/@skipped)", a), "2");
	assert_string_equal(xp(d, "count(%s/testcase/skipped)", a), "2");

	/* every suite's figures match its testcases */
	assert_string_equal(xp(d, "count(//testsuite[@tests != count(testcase)])"), "0");
	assert_string_equal(xp(d, "count(//testsuite[@failures != count(testcase/failure)])"), "0");
	assert_string_equal(xp(d, "count(//testsuite[@errors != count(testcase/error)])"), "0");
	assert_string_equal(xp(d, "count(//testsuite[@skipped != count(testcase/skipped)])"), "0");
	assert_schema_valid(d);
}

/* A baseline with very many ETS tables gives very many checks; the report lists the
 * first 1000 failing and 1000 other ones and counts the rest in one testcase each, with
 * figures that still match the testcases. */
static void test_junit__many_findings_capped(void **state)
{
	struct fixture *fx = *state;
	char subject[64];
	for (int i = 0; i < 30000; i++) {
		snprintf(subject, sizeof(subject), "ets table t_%06d", i);
		enum verdict v = i % 10 == 0   ? VERDICT_FAIL
		                 : i % 10 == 1 ? VERDICT_SKIP
		                               : VERDICT_PASS;
		assert_int_equal(findings_add(&fx->findings, "baseline", subject, v, 1000, 5000, 0,
		                              10.0, "ets table t grew"),
		                 0);
	}
	write_ok(fx, &fx->meta);
	xmlDocPtr d = fx->doc;
	const char *m = "/testsuites/testsuite[@name='gate.memory']";
	assert_string_equal(xp(d, "count(%s/testcase)", m), "2002");
	assert_string_equal(xp(d, "string(%s/@tests)", m), "2002");
	assert_string_equal(xp(d, "string(%s/@failures)", m), "1001");
	assert_string_equal(xp(d, "string(/testsuites/@tests)"), "2002");
	assert_string_equal(xp(d, "string(/testsuites/@failures)"), "1001");
	assert_string_equal(
	        xp(d, "string(%s/testcase[@classname='gate.memory.more'][failure]/@name)", m),
	        "2000 more failing checks");
	assert_string_equal(xp(d,
	                       "string(%s/testcase[@classname='gate.memory.more'][not(failure)]"
	                       "/@name)",
	                       m),
	                    "26000 more passing or skipped checks");
	assert_string_equal(xp(d, "count(//testsuite[@tests != count(testcase)])"), "0");
	assert_string_equal(xp(d, "count(//testsuite[@failures != count(testcase/failure)])"), "0");
	assert_string_equal(xp(d, "count(//testsuite[@skipped != count(testcase/skipped)])"), "0");
	struct stat st;
	assert_int_equal(stat(fx->path, &st), 0);
	assert_true(st.st_size < 2 * 1024 * 1024);
	assert_schema_valid(d);
}

static void test_junit__attributes(void **state)
{
	struct fixture *fx = *state;
	fill_typical(fx);
	write_ok(fx, &fx->meta);
	xmlDocPtr d = fx->doc;

	/* every suite carries timestamp (UTC, no zone) and hostname */
	assert_string_equal(xp(d, "count(//testsuite[@timestamp='2026-12-02T12:00:00'])"), "3");
	assert_string_equal(xp(d, "count(//testsuite[@hostname='ci-runner-1'])"), "3");
	assert_string_equal(xp(d, "string(//testsuite[@name='gate.memory']/properties/"
	                          "property[@name='node']/@value)"),
	                    "gate_1234@localhost");
	assert_string_equal(xp(d, "string(//property[@name='exunit.seed']/@value)"), "4242");

	/* memory testcases */
	const char *bin = "//testsuite[@name='gate.memory']/testcase[@name='binary']";
	assert_string_equal(xp(d, "string(%s/@classname)", bin), "gate.memory.growth");
	assert_string_equal(xp(d, "string(%s/failure/@type)", bin), "gate.growth");
	assert_string_equal(xp(d, "string(%s/failure/@message)", bin),
	                    "binary grew 10.0 MB -> 30.0 MB (+20.0 MB, +200.0 %)");
	const char *body = xp(d, "string(%s/failure)", bin);
	assert_non_null(strstr(body, "before: 10.0 MB (10000000 bytes)"));
	assert_non_null(strstr(body, "after:  30.0 MB (30000000 bytes)"));
	assert_non_null(strstr(body, "delta:  +20.0 MB (+20000000 bytes, +200.0 %)"));
	assert_non_null(strstr(body, "limit:  +10 % above a floor of 1.0 MB"));
	assert_string_equal(xp(d, "string(//testcase[@name='atom_used']/skipped/@message)"),
	                    "atom_used: not reported by the node");
	assert_string_equal(xp(d, "count(//testcase[@name='ets']/failure)"), "0");

	/* ExUnit testcases: module shown without "Elixir.", file, line, time in seconds */
	const char *adds = "//testcase[@name='test adds numbers']";
	assert_string_equal(xp(d, "string(%s/@classname)", adds), "Foo.BarTest");
	assert_string_equal(xp(d, "string(%s/@file)", adds), "test/foo/bar_test.exs");
	assert_string_equal(xp(d, "string(%s/@line)", adds), "12");
	assert_string_equal(xp(d, "string(%s/@time)", adds), "0.001234");
	assert_string_equal(xp(d, "count(%s/*)", adds), "0");

	const char *fails = "//testcase[@name='test fails']";
	assert_string_equal(xp(d, "string(%s/@time)", fails), "1.5");
	assert_string_equal(xp(d, "string(%s/failure/@type)", fails), "ExUnit");
	assert_string_equal(xp(d, "string(%s/failure/@message)", fails),
	                    "Assertion with == failed");
	assert_non_null(strstr(xp(d, "string(%s/failure)", fails), "code:  assert 1 == 2\n"));

	assert_string_equal(xp(d, "string(//testcase[@name='test never ran']/error/@message)"),
	                    "setup_all failed");
	assert_non_null(strstr(xp(d, "string(//testcase[@name='test never ran']/error)"),
	                       "setup_all blew up"));
	assert_string_equal(xp(d, "string(//testcase[@name='test skipped one']/skipped/@message)"),
	                    "due to skip tag");
	assert_string_equal(xp(d, "string(//testcase[@name='test excluded one']/skipped/@message)"),
	                    "excluded");

	/* suites: memory first, then modules in name order, tests in line order */
	assert_string_equal(xp(d, "string(/testsuites/testsuite[1]/@name)"), "gate.memory");
	assert_string_equal(xp(d, "string(/testsuites/testsuite[2]/@name)"), "Alpha");
	assert_string_equal(xp(d, "string(/testsuites/testsuite[3]/@name)"), "Foo.BarTest");
	assert_string_equal(xp(d, "string(/testsuites/testsuite[3]/testcase[1]/@line)"), "12");
	assert_string_equal(xp(d, "string(/testsuites/testsuite[3]/testcase[3]/@line)"), "30");
	/* suite time is the sum of its tests */
	assert_string_equal(xp(d, "string(/testsuites/testsuite[3]/@time)"), "1.501234");
	assert_string_equal(xp(d, "string(/testsuites/@time)"), "1.751234");

	struct stat st;
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
}

static void test_junit__grouping_interleaved(void **state)
{
	struct fixture *fx = *state;
	/* async tests finish interleaved; each module still gets exactly one suite */
	for (int i = 0; i < 30; i++) {
		char name[32];
		snprintf(name, sizeof(name), "test n%d", i);
		add_test(&fx->run,
		         i % 3 == 0   ? "Elixir.C"
		         : i % 3 == 1 ? "Elixir.A"
		                      : "b_tests",
		         name, NULL, 0, i, i % 7 == 0 ? TEST_FAILED : TEST_PASSED, NULL);
	}
	write_ok(fx, &fx->meta);
	xmlDocPtr d = fx->doc;
	assert_string_equal(xp(d, "count(/testsuites/testsuite)"), "4");
	assert_string_equal(xp(d, "string(/testsuites/testsuite[2]/@name)"), "A");
	assert_string_equal(xp(d, "string(/testsuites/testsuite[3]/@name)"), "C");
	/* an Erlang module keeps its name */
	assert_string_equal(xp(d, "string(/testsuites/testsuite[4]/@name)"), "b_tests");
	assert_string_equal(xp(d, "count(//testsuite[@name='C']/testcase)"), "10");
	assert_string_equal(xp(d, "string(/testsuites/@failures)"), "5");
	/* a failure without a message still says something */
	assert_string_equal(xp(d, "string(//testcase[@name='test n0']/failure/@message)"),
	                    "test failed");
	/* each failure says the framework that ran it: ExUnit, EUnit (b_tests), Common Test */
	assert_string_equal(xp(d, "string(//testcase[@name='test n0']/failure/@type)"), "ExUnit");
	assert_string_equal(xp(d, "string(//testcase[@name='test n14']/failure/@type)"), "EUnit");
	add_test(&fx->run, "b_SUITE", "pool.doubling", NULL, 0, 1, TEST_FAILED, "badmatch");
	write_ok(fx, &fx->meta);
	d = fx->doc;
	assert_string_equal(xp(d, "string(//testcase[@name='pool.doubling']/failure/@type)"),
	                    "CommonTest");
	assert_schema_valid(d);
}

static void test_junit__time_format(void **state)
{
	struct fixture *fx = *state;
	add_test(&fx->run, "Elixir.T", "test zero", NULL, 1, 0, TEST_PASSED, NULL);
	add_test(&fx->run, "Elixir.T", "test negative", NULL, 2, -5, TEST_PASSED, NULL);
	add_test(&fx->run, "Elixir.T", "test one us", NULL, 3, 1, TEST_PASSED, NULL);
	add_test(&fx->run, "Elixir.T", "test big", NULL, 4, 123456789012, TEST_PASSED, NULL);
	fx->meta.memory_time_s = -INFINITY; /* nonsense from the caller stays out of the file */
	write_ok(fx, &fx->meta);
	xmlDocPtr d = fx->doc;
	assert_string_equal(xp(d, "string(//testcase[@name='test zero']/@time)"), "0");
	assert_string_equal(xp(d, "string(//testcase[@name='test negative']/@time)"), "0");
	assert_string_equal(xp(d, "string(//testcase[@name='test one us']/@time)"), "0.000001");
	assert_string_equal(xp(d, "string(//testcase[@name='test big']/@time)"), "123456.789012");
	assert_string_equal(xp(d, "string(//testsuite[@name='gate.memory']/@time)"), "0");
	assert_schema_valid(d);
}

static void test_junit__error_meta(void **state)
{
	struct fixture *fx = *state;
	fill_typical(fx);
	fx->meta.error = "node gate_1234@localhost went down during the suite\nexit: killed";
	write_ok(fx, &fx->meta);
	keep_copy(fx, "error");
	xmlDocPtr d = fx->doc;
	assert_string_equal(xp(d, "string(/testsuites/@tests)"), "9");
	assert_string_equal(xp(d, "string(/testsuites/@errors)"), "2");
	const char *g = "//testsuite[@name='gate.run']";
	assert_string_equal(xp(d, "string(%s/@errors)", g), "1");
	assert_string_equal(xp(d, "string(%s/@tests)", g), "1");
	assert_string_equal(xp(d, "string(%s/testcase/@classname)", g), "gate.run");
	assert_string_equal(xp(d, "string(%s/testcase/@name)", g), "gate");
	assert_string_equal(xp(d, "string(%s/testcase/error/@message)", g),
	                    "node gate_1234@localhost went down during the suite");
	assert_non_null(strstr(xp(d, "string(%s/testcase/error)", g), "exit: killed"));
	assert_schema_valid(d);
}

static void test_junit__null_inputs(void **state)
{
	struct fixture *fx = *state;
	char err[256] = "";
	assert_int_equal(junit_write(fx->path, NULL, err, sizeof(err)), 0);
	xmlDocPtr d = xmlReadFile(fx->path, NULL, XML_PARSE_NONET);
	assert_non_null(d);
	assert_string_equal(xp(d, "string(/testsuites/@name)"), "gate");
	assert_string_equal(xp(d, "string(/testsuites/@tests)"), "0");
	assert_string_equal(xp(d, "count(/testsuites/testsuite)"), "1");
	assert_string_equal(xp(d, "string(//testsuite/@tests)"), "0");
	/* defaults: this machine's name and a timestamp of now */
	assert_true(strlen(xp(d, "string(//testsuite/@hostname)")) > 0);
	assert_int_equal(strlen(xp(d, "string(//testsuite/@timestamp)")), 19);
	assert_schema_valid(d);
	xmlFreeDoc(d);
}

/* ---- hostile strings ---- */

static void test_junit__hostile_strings(void **state)
{
	struct fixture *fx = *state;
	char *huge = big_message(1 << 20);
	add_test(&fx->run, "Elixir.Evil\x01Test",
	         "test a\xff\xfe"
	         "b \x01 ]]> </testcase> \"q\" 'a' & <x> \x1b[31mred\x1b[0m \xc3\xa9",
	         "test/evil_test.exs", 7, 10, TEST_FAILED,
	         "\x1b[31m\x1b[1mExpected ]]> got </failure>\x1b[0m\n\x7f tail \xed\xa0\x80 "
	         "\xf4\x90\x80\x80 "
	         "\xc0\xaf \xef\xbf\xbe\n");
	add_test(&fx->run, "Elixir.Evil\x01Test", "test huge", NULL, 8, 10, TEST_FAILED, huge);
	huge[12] = ' '; /* one line of 1 MB, for the capped message attribute */
	add_test(&fx->run, "Elixir.Evil\x01Test", "test huge skip", NULL, 9, 0, TEST_SKIPPED, huge);
	free(huge);
	fx->meta.node = "n\x02ode";
	fx->meta.hostname = "host\x1b]0;title\x07name";
	write_ok(fx, &fx->meta);
	keep_copy(fx, "hostile");
	xmlDocPtr d = fx->doc;

	assert_string_equal(xp(d, "count(//testsuite[@name='Evil\\x01Test'])"), "1");
	assert_string_equal(xp(d, "string(//testsuite/@hostname)"), "hostname");
	assert_string_equal(xp(d, "string(//property[@name='node']/@value)"), "n\\x02ode");

	/* the name: U+FFFD per bad byte, \x01 shown, markup kept as text, colours gone */
	xmlXPathContextPtr ctx = xmlXPathNewContext(d);
	xmlXPathObjectPtr r = xmlXPathEvalExpression(
	        BAD_CAST "//testsuite[@name='Evil\\x01Test']/testcase[1]", ctx);
	assert_non_null(r);
	assert_int_equal(r->nodesetval->nodeNr, 1);
	xmlNodePtr tc = r->nodesetval->nodeTab[0];
	xmlChar *name = xmlGetProp(tc, BAD_CAST "name");
	assert_string_equal((char *)name, "test a\xef\xbf\xbd\xef\xbf\xbd"
	                                  "b \\x01 ]]> </testcase> \"q\" 'a' & <x> red \xc3\xa9");
	xmlFree(name);
	xmlXPathFreeObject(r);
	xmlXPathFreeContext(ctx);

	const char *c1 = "//testcase[@line='7']/failure";
	assert_string_equal(xp(d, "string(%s/@message)", c1), "Expected ]]> got </failure>");
	/* DEL, a surrogate, a value past U+10FFFF, an overlong and U+FFFE */
	assert_string_equal(
	        xp(d, "string(%s)", c1),
	        "Expected ]]> got </failure>\n\\x7f tail \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
	        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd "
	        "\xef\xbf\xbd\n");

	/* 1 MB in, 64 KiB out, and the reader is told */
	const char *body = xp(d, "string(//testcase[@name='test huge']/failure)");
	assert_true(strlen(body) <= JUNIT_BODY_MAX + 100);
	assert_true(strlen(body) >= JUNIT_BODY_MAX - 10);
	assert_non_null(strstr(body, "[gate: truncated here, "));
	assert_non_null(strstr(body, "more bytes not shown]"));
	assert_string_equal(xp(d, "string(//testcase[@name='test huge']/failure/@message)"),
	                    "huge failure");
	/* a message attribute is capped too */
	const char *skip = xp(d, "string(//testcase[@name='test huge skip']/skipped/@message)");
	assert_true(strlen(skip) <= JUNIT_ATTR_MAX + 3);
	assert_non_null(strstr(skip, "\xe2\x80\xa6"));

	struct stat st;
	assert_int_equal(stat(fx->path, &st), 0);
	assert_true(st.st_size < 300 * 1024);
	assert_schema_valid(d);
}

static void test_junit__ansi_stripped(void **state)
{
	struct fixture *fx = *state;
	add_test(&fx->run, "Elixir.T", "test colours", NULL, 1, 0, TEST_FAILED,
	         "\x1b[31mAssertion\x1b[0m with \x1b[1;4;38;5;208m== failed\x1b[K\n"
	         "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ \x1b"
	         "7saved\x1b"
	         "8 \x1b[?25l!\n"
	         "lone \x1b escape \x1b[");
	write_ok(fx, &fx->meta);
	xmlDocPtr d = fx->doc;
	assert_string_equal(xp(d, "string(//failure/@message)"), "Assertion with == failed");
	assert_string_equal(xp(d, "string(//failure)"),
	                    "Assertion with == failed\nlink saved !\nlone \\x1b escape \\x1b[");
}

/* ---- atomic writes ---- */

/* Runs junit_write in a child (so that it can drop root or lower limits without touching
 * this process) and returns its result, with its err text in err. */
struct child_args {
	const char *path;
	const struct findings *findings;
	const struct test_run *run;
	const struct report_data *meta;
	bool drop_root;
	rlim_t fsize; /* 0: no limit */
};

static int junit_write_in_child(const struct child_args *a, char *err, size_t errlen)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		char e[1024] = "";
		if (a->drop_root && geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(3);
		if (a->fsize) {
			struct rlimit rl = {a->fsize, a->fsize};
			signal(SIGXFSZ, SIG_IGN);
			if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
				_exit(4);
		}
		struct report_data d = view(a->meta, a->findings, a->run);
		int rc = junit_write(a->path, &d, e, sizeof(e));
		if (write(pfd[1], e, strlen(e)) < 0)
			_exit(5);
		_exit(rc == 0 ? 0 : 1);
	}
	close(pfd[1]);
	size_t n = 0;
	ssize_t k;
	while (n + 1 < errlen && (k = read(pfd[0], err + n, errlen - 1 - n)) > 0)
		n += (size_t)k;
	err[n] = '\0';
	close(pfd[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	int code = WEXITSTATUS(status);
	if (code > 1)
		fail_msg("child setup failed (%d)", code);
	return code == 0 ? 0 : -1;
}

static void test_junit__readonly_dir(void **state)
{
	struct fixture *fx = *state;
	char ro[128], path[192], err[1024];
	fill_typical(fx);
	/* nobody must reach ro: the mkdtemp dir is 0700 */
	assert_int_equal(chmod(fx->dir, 0755), 0);
	snprintf(ro, sizeof(ro), "%s/ro", fx->dir);
	assert_int_equal(mkdir(ro, 0755), 0);
	snprintf(path, sizeof(path), "%s/report.xml", ro);
	write_file(path, "OLD");
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(chmod(ro, 0555), 0);

	struct child_args a = {path, &fx->findings, &fx->run, &fx->meta, true, 0};
	assert_int_equal(junit_write_in_child(&a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "cannot create a temp file"));
	assert_non_null(strstr(err, strerror(EACCES)));
	assert_int_equal(dir_entries(ro), 1);
	assert_string_equal(slurp(path), "OLD");
}

static void test_junit__write_fails_keeps_target(void **state)
{
	struct fixture *fx = *state;
	char err[1024];
	char *huge = big_message(1 << 20);
	fill_typical(fx);
	for (int i = 0; i < 8; i++)
		add_test(&fx->run, "Elixir.Big", "test big", NULL, i + 1, 0, TEST_FAILED, huge);
	free(huge);
	write_file(fx->path, "OLD");

	/* the file size limit makes write(2) fail with EFBIG part-way through */
	struct child_args a = {fx->path, &fx->findings, &fx->run, &fx->meta, false, 16384};
	assert_int_equal(junit_write_in_child(&a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, "cannot write"));
	assert_non_null(strstr(err, strerror(EFBIG)));
	assert_string_equal(slurp(fx->path), "OLD");
	assert_int_equal(dir_entries(fx->dir), 1); /* no temp file left */
}

static void test_junit__target_is_directory(void **state)
{
	struct fixture *fx = *state;
	char err[1024], inner[320];
	fill_typical(fx);
	assert_int_equal(mkdir(fx->path, 0755), 0);
	snprintf(inner, sizeof(inner), "%s/keep", fx->path);
	write_file(inner, "x");
	assert_int_equal(
	        junit_write(fx->path,
	                    (struct report_data[]){view(&fx->meta, &fx->findings, &fx->run)}, err,
	                    sizeof(err)),
	        -1);
	assert_non_null(strstr(err, "cannot rename"));
	assert_int_equal(dir_entries(fx->dir), 1);
	assert_string_equal(slurp(inner), "x");
}

static void test_junit__parent_is_file(void **state)
{
	struct fixture *fx = *state;
	char err[1024], file[128], path[256];
	snprintf(file, sizeof(file), "%s/plain", fx->dir);
	write_file(file, "x");
	snprintf(path, sizeof(path), "%s/sub/report.xml", file);
	assert_int_equal(junit_write(path, (struct report_data[]){view(&fx->meta, NULL, NULL)}, err,
	                             sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "cannot create the directory"));
	assert_non_null(strstr(err, strerror(ENOTDIR)));
	assert_int_equal(dir_entries(fx->dir), 1);
}

static void test_junit__creates_dirs_and_replaces(void **state)
{
	struct fixture *fx = *state;
	char err[512], path[256];
	snprintf(path, sizeof(path), "%s/a/b/c/junit.xml", fx->dir);
	assert_int_equal(junit_write(path, (struct report_data[]){view(&fx->meta, NULL, NULL)}, err,
	                             sizeof(err)),
	                 0);
	xmlDocPtr d = xmlReadFile(path, NULL, XML_PARSE_NONET);
	assert_non_null(d);
	xmlFreeDoc(d);

	/* a second write replaces the first, leaving nothing beside it */
	fill_typical(fx);
	assert_int_equal(
	        junit_write(path, (struct report_data[]){view(&fx->meta, &fx->findings, &fx->run)},
	                    err, sizeof(err)),
	        0);
	char parent[256];
	snprintf(parent, sizeof(parent), "%s/a/b/c", fx->dir);
	assert_int_equal(dir_entries(parent), 1);
	d = xmlReadFile(path, NULL, XML_PARSE_NONET);
	assert_non_null(d);
	assert_string_equal(xp(d, "string(/testsuites/@tests)"), "8");
	xmlFreeDoc(d);

	/* a bare file name goes to the current directory */
	char cwd[512];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(fx->dir), 0);
	int rc = junit_write("bare.xml", NULL, err, sizeof(err));
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(rc, 0);
	snprintf(path, sizeof(path), "%s/bare.xml", fx->dir);
	assert_int_equal(access(path, R_OK), 0);
}

static void test_junit__bad_paths(void **state)
{
	struct fixture *fx = *state;
	char err[512], path[256];
	assert_int_equal(junit_write("", NULL, err, sizeof(err)), -1);
	assert_true(strlen(err) > 0);
	assert_int_equal(junit_write(NULL, NULL, NULL, 0), -1);
	snprintf(path, sizeof(path), "%s/dir/", fx->dir);
	assert_int_equal(junit_write(path, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "names a directory"));
	assert_int_equal(dir_entries(fx->dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_junit__counts, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__many_findings_capped, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__attributes, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__grouping_interleaved, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__time_format, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__error_meta, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__null_inputs, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__hostile_strings, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__ansi_stripped, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__readonly_dir, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__write_fails_keeps_target, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_junit__target_is_directory, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__parent_is_file, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_junit__creates_dirs_and_replaces, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_junit__bad_paths, setup, teardown),
	};
	xmlInitParser();
	int rc = cmocka_run_group_tests_name("junit", tests, NULL, NULL);
	xmlCleanupParser();
	return rc;
}
