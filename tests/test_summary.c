/* tests/test_summary.c: the console summary: table content and alignment, counts, names of
 * failed tests, verdict line, colour only when asked, hostile names made harmless. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ci/report/summary.h"
#include "model/finding.h"
#include "model/tests.h"
#include "rules/growth.h"

struct fixture {
	struct findings findings;
	struct test_run run;
	char *text;
	size_t len;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	fx->run.finished = true;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	findings_clear(&fx->findings);
	test_run_clear(&fx->run);
	free(fx->text);
	free(fx);
	return 0;
}

static void add_test(struct test_run *run, const char *module, const char *name, enum test_state st)
{
	struct test_result *t = test_run_add(run);
	assert_non_null(t);
	t->module = strdup(module);
	t->name = strdup(name);
	t->file = strdup("test/foo_test.exs");
	t->line = (int)run->count * 10;
	t->state = st;
}

/* Nine categories from the real growth rule: binary fails, atom_used unreported. */
static void fill_growth(struct fixture *fx, bool ets_fails)
{
	struct snapshot b = {0}, a = {0};
	struct growth_config cfg;
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		b.have[i] = a.have[i] = true;
		b.mem[i] = 10000000LL * (i + 1);
		a.mem[i] = b.mem[i] + 50000;
	}
	a.mem[MEM_BINARY] = b.mem[MEM_BINARY] * 3;
	if (ets_fails)
		a.mem[MEM_ETS] = b.mem[MEM_ETS] * 2;
	a.have[MEM_ATOM_USED] = false;
	growth_config_default(&cfg);
	for (int i = 0; i < MEM_CAT_COUNT; i++)
		cfg.cat[i].enabled = true; /* a row for every category */
	assert_int_equal(growth_check(&fx->findings, &b, &a, &cfg), 0);
}

static void fill_tests(struct fixture *fx, size_t n, size_t failed)
{
	for (size_t i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "test case %zu", i);
		add_test(&fx->run, "Elixir.Foo.BarTest", name,
		         i < failed ? TEST_FAILED : TEST_PASSED);
	}
}

/* How a test prints the fixture: colours, the JUnit path, the node. */
struct summary_opts {
	bool color;
	const char *junit_path;
	const char *node;
};

static const char *print(struct fixture *fx, const struct summary_opts *opts)
{
	free(fx->text);
	fx->text = NULL;
	FILE *f = open_memstream(&fx->text, &fx->len);
	assert_non_null(f);
	struct report_data d = {.findings = &fx->findings, .tests = &fx->run};
	if (opts) {
		d.junit_path = opts->junit_path;
		d.node = opts->node;
	}
	summary_print(f, &d, opts && opts->color);
	assert_int_equal(fclose(f), 0);
	return fx->text;
}

/* The line of text that starts with prefix (copied into a static buffer), or fails. */
static const char *line_starting(const char *text, const char *prefix)
{
	static char line[1024];
	size_t plen = strlen(prefix);
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n >= plen && strncmp(p, prefix, plen) == 0) {
			snprintf(line, sizeof(line), "%.*s", (int)n, p);
			return line;
		}
		p = e ? e + 1 : NULL;
	}
	fail_msg("no line starting with \"%s\" in:\n%s", prefix, text);
	return NULL;
}

static void assert_lines_fit(const char *text, size_t width)
{
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n > width)
			fail_msg("line of %zu columns: %.*s", n, (int)n, p);
		p = e ? e + 1 : p + n;
	}
}

static void test_summary__table(void **state)
{
	struct fixture *fx = *state;
	fill_growth(fx, false);
	fill_tests(fx, 31, 1);
	struct summary_opts o = {false, "_build/gate/junit.xml", "gate_1234@localhost"};
	const char *t = print(fx, &o);

	assert_non_null(strstr(t, "gate_1234@localhost"));
	const char *head = line_starting(t, "category");
	char h[256];
	snprintf(h, sizeof(h), "%s", head);
	const char *cols[] = {"before", "after", "grew", "subtracted", "judged", "%", "verdict"};
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		assert_non_null(strstr(h, cols[i]));

	const char *bin = line_starting(t, "binary ");
	assert_non_null(strstr(bin, " 70.0 MB"));
	assert_non_null(strstr(bin, " 210.0 MB"));
	assert_non_null(strstr(bin, " +140.0 MB"));
	assert_non_null(strstr(bin, " +200.0 %"));
	assert_non_null(strstr(bin, "FAIL"));
	/* the limits under the table: the common one once, the others by category */
	assert_non_null(strstr(t, "\nlimit: judged growth above +10 % of before and above 1.0 MB"));
	assert_non_null(strstr(t, "(code: +50 %,"));
	/* raw figures and what was subtracted, adding up on their face: system grew
	 * +50 kB, less code +50 kB, ets +50 kB, binary +140 MB, atom +50 kB */
	const char *sys = line_starting(t, "system ");
	assert_non_null(strstr(sys, " +50.0 kB "));
	assert_non_null(strstr(sys, " -140.2 MB "));
	assert_non_null(strstr(sys, " -140.1 MB "));
	assert_non_null(strstr(t, "judged = grew - subtracted; subtracted, and why:\n"));
	assert_non_null(strstr(t, "  system: code +50.0 kB, ets +50.0 kB, binary +140.0 MB, atom"));

	const char *skip = line_starting(t, "atom_used ");
	assert_non_null(strstr(skip, " - "));
	assert_non_null(strstr(skip, "skip"));
	assert_non_null(strstr(line_starting(t, "ets "), "pass"));

	/* aligned: every row is as long as the header up to its verdict, and right-aligned
	 * numbers end where their heading ends */
	size_t verdict_at = (size_t)(strstr(h, "verdict") - h);
	size_t after_end = (size_t)(strstr(h, "after") - h) + strlen("after");
	const char *rows[] = {"total ",     "processes ", "processes_used ", "system ", "atom ",
	                      "atom_used ", "binary ",    "code ",           "ets "};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *r = line_starting(t, rows[i]);
		assert_true(strlen(r) >= verdict_at + 4);
		assert_true(strncmp(r + verdict_at, "pass", 4) == 0 ||
		            strncmp(r + verdict_at, "FAIL", 4) == 0 ||
		            strncmp(r + verdict_at, "skip", 4) == 0);
		assert_true(r[after_end - 1] != ' ');
		assert_true(r[after_end] == ' ');
	}
	assert_lines_fit(t, 80);

	/* the failing rule's message, then counts, JUnit path, verdict, in that order */
	const char *msg = strstr(t, "binary grew 70.0 MB -> 210.0 MB");
	const char *counts = strstr(t, "31 tests: 30 passed, 1 failed, 0 skipped\n");
	const char *junit = strstr(t, "\nJUnit: _build/gate/junit.xml\n");
	const char *verdict = strstr(t, "\ngate: FAILED (1 memory rule, 1 test)\n");
	assert_non_null(msg);
	assert_non_null(counts);
	assert_non_null(junit);
	assert_non_null(verdict);
	assert_true(msg < counts && counts < junit && junit < verdict);
	assert_non_null(strstr(t, "Foo.BarTest: test case 0 (test/foo_test.exs:10)"));
	assert_null(strchr(t, '\033'));
}

static void test_summary__passed(void **state)
{
	struct fixture *fx = *state;
	struct snapshot b = {0};
	struct growth_config cfg;
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		b.have[i] = true;
		b.mem[i] = 5000000;
	}
	growth_config_default(&cfg);
	assert_int_equal(growth_check(&fx->findings, &b, &b, &cfg), 0);
	fill_tests(fx, 1, 0);
	struct summary_opts o = {false, NULL, NULL};
	const char *t = print(fx, &o);
	assert_non_null(strstr(t, "1 test: 1 passed, 0 failed, 0 skipped\n"));
	assert_null(strstr(t, "JUnit:"));
	assert_null(strstr(t, "Failed memory"));
	assert_null(strstr(t, "FAIL"));
	assert_non_null(strstr(t, "0 B"));
	/* the verdict is the last line */
	size_t n = strlen(t);
	assert_true(n > 13);
	assert_string_equal(t + n - 13, "gate: PASSED\n");
}

static void test_summary__plurals_and_more(void **state)
{
	struct fixture *fx = *state;
	fill_growth(fx, true);
	fill_tests(fx, 40, 14);
	add_test(&fx->run, "Elixir.Setup", "test never ran", TEST_INVALID);
	add_test(&fx->run, "Elixir.Skip", "test skipped", TEST_SKIPPED);
	add_test(&fx->run, "Elixir.Skip", "test excluded", TEST_EXCLUDED);
	struct summary_opts o = {false, "junit.xml", NULL};
	const char *t = print(fx, &o);
	assert_non_null(strstr(t, "Failed memory rules:\n"));
	assert_non_null(strstr(t, "43 tests: 26 passed, 14 failed, 2 skipped, 1 invalid"));
	/* 15 failing tests: 10 named, then the rest counted */
	size_t named = 0;
	for (const char *p = t; (p = strstr(p, "\n  - ")); p++)
		named++;
	assert_int_equal(named, SUMMARY_FAILED_MAX);
	assert_non_null(strstr(t, "\n  and 5 more\n"));
	assert_non_null(strstr(t, "gate: FAILED (2 memory rules, 15 tests)\n"));
	assert_lines_fit(t, 80);
}

static void test_summary__color(void **state)
{
	struct fixture *fx = *state;
	fill_growth(fx, false);
	fill_tests(fx, 3, 1);
	struct summary_opts o = {true, "junit.xml", "n@h"};
	const char *t = print(fx, &o);
	assert_non_null(strstr(t, "\033[31m"));
	assert_non_null(strstr(t, "\033[0m"));
	assert_non_null(strstr(t, "FAIL\033[0m"));
	assert_non_null(strstr(t, "gate: FAILED\033[0m (1 memory rule, 1 test)"));

	/* the same text once the escapes are removed */
	char *plain = strdup(t);
	assert_non_null(plain);
	char *w = plain;
	for (const char *r = t; *r;) {
		if (*r == '\033') {
			while (*r && *r != 'm')
				r++;
			if (*r)
				r++;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
	o.color = false;
	const char *nc = print(fx, &o);
	assert_string_equal(plain, nc);
	free(plain);

	/* passing in colour is green */
	findings_clear(&fx->findings);
	test_run_clear(&fx->run);
	fx->run.finished = true;
	o.color = true;
	t = print(fx, &o);
	assert_non_null(strstr(t, "\033[32m\033[1mgate: PASSED\033[0m\n"));
}

static void test_summary__hostile_names(void **state)
{
	struct fixture *fx = *state;
	add_test(&fx->run, "Elixir.Evil",
	         "test \033[2J\033]0;pwned\007 \x01\x7f \xc2\x9b"
	         "31m \xff ok",
	         TEST_FAILED);
	char longname[600];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	add_test(&fx->run, "Elixir.Long", longname, TEST_FAILED);
	assert_int_equal(findings_add(&fx->findings, "growth", "binary\033[31m", VERDICT_FAIL, 1,
	                              9000000, 1000000, 10, "binary grew \033[1mfast\033[0m\n!"),
	                 0);
	findings_show(&fx->findings, 0, UNIT_BYTES, SHOW_CATEGORY | SHOW_FIGURES); /* growth.c's */
	struct summary_opts o = {false, "out/\033[31mjunit.xml", "node\033[0m"};
	const char *t = print(fx, &o);
	assert_null(strchr(t, '\033'));
	assert_null(strchr(t, '\x01'));
	assert_null(strchr(t, '\x7f'));
	assert_null(strstr(t, "\xc2\x9b"));
	assert_null(strstr(t, "\xff"));
	assert_non_null(strstr(t, "JUnit: out/junit.xml\n"));
	assert_non_null(strstr(t, "(erlang:memory on node)"));
	assert_non_null(strstr(t, "\n  binary grew fast?!\n"));
	assert_non_null(strstr(line_starting(t, "binary "), " >+9999 % "));
	assert_non_null(strstr(t, "\n  - Evil: test  ?? ?31m ? ok (test/foo_test.exs:10)\n"));
	/* a long name is cut to the line */
	const char *cut = line_starting(t, "  - Long: nnnn");
	assert_int_equal(strlen(cut), 80);
	assert_string_equal(cut + 77, "...");
	assert_lines_fit(t, 80);
}

static void test_summary__unfinished_and_empty(void **state)
{
	struct fixture *fx = *state;
	fill_tests(fx, 2, 0);
	fx->run.finished = false;
	struct summary_opts o = {false, NULL, NULL};
	const char *t = print(fx, &o);
	assert_non_null(strstr(t, "no memory rules were applied"));
	assert_non_null(strstr(t, "did not report the end of the suite"));
	assert_non_null(strstr(t, "gate: FAILED (the test suite did not finish)\n"));

	/* nothing at all: no crash, nothing failed */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	summary_print(f, &(struct report_data){0}, false);
	fclose(f);
	assert_non_null(strstr(buf, "no test results\n"));
	assert_non_null(strstr(buf, "gate: PASSED\n"));
	free(buf);
}

/* grew - subtracted = judged, with figures from outside: the subtracted cell saturates
 * rather than overflow (found by fuzz_summary). */
static void test_summary__subtracted_saturates(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(
	        findings_add(&fx->findings, "growth", "ets", VERDICT_PASS, 1, 0, 0, 10, "ets"), 0);
	findings_show(&fx->findings, 0, UNIT_BYTES, SHOW_CATEGORY | SHOW_FIGURES); /* growth.c's */
	fx->findings.items[0].delta = INT64_MAX; /* grew -1, judged INT64_MAX */
	struct summary_opts o = {false, NULL, NULL};
	const char *t = print(fx, &o);
	const char *ets = line_starting(t, "ets ");
	assert_non_null(strstr(ets, " -1 B "));
	assert_non_null(strstr(ets, " +9223372036.85 GB "));
}

static void test_summary__no_pct_limit(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(findings_add(&fx->findings, "growth", "code", VERDICT_PASS, 0, 2000000,
	                              5000000, -1, "code grew"),
	                 0);
	findings_show(&fx->findings, 0, UNIT_BYTES, SHOW_CATEGORY | SHOW_FIGURES); /* growth.c's */
	assert_int_equal(findings_add(&fx->findings, "leak", "processes", VERDICT_PASS, 3000000,
	                              1000000, 1000000, 10, "shrank"),
	                 0);
	struct summary_opts o = {false, NULL, NULL};
	const char *t = print(fx, &o);
	const char *code = line_starting(t, "code ");
	assert_non_null(strstr(t, "limit: judged growth above 5.0 MB fails"));
	assert_null(strstr(t, "5.0 MB fails ("));
	assert_non_null(strstr(code, " new "));
	/* a rule whose findings are no rows of the memory table gets a line of its own */
	assert_null(strstr(t, "leak:processes"));
	const char *leak = line_starting(t, "leak ");
	assert_non_null(strstr(leak, "pass (1 check)"));

	assert_int_equal(findings_add(&fx->findings, "leak", "mailbox", VERDICT_FAIL, 0, 0, 0, -1,
	                              "mailbox Foo.Sink has 20 000 messages"),
	                 0);
	t = print(fx, &o);
	leak = line_starting(t, "leak ");
	assert_non_null(strstr(leak, "FAIL (1 of 2 checks)"));
	assert_non_null(strstr(t, "  mailbox Foo.Sink has 20 000 messages"));
}

/* The test modules are ranked only when a memory finding failed (or warned): on a clean run
 * their raw light-snapshot figures would read as blame without evidence. */
static void test_summary__top_growing_only_when_flagged(void **state)
{
	struct fixture *fx = *state;
	fill_tests(fx, 2, 0);
	fx->run.attribution = ATTRIBUTION_MODULE;
	fx->run.attribution_sync = true;
	fx->run.modules = calloc(1, sizeof(*fx->run.modules));
	assert_non_null(fx->run.modules);
	fx->run.modules[0].module = strdup("Elixir.Foo.BarTest");
	fx->run.modules[0].finished = true;
	fx->run.modules[0].delta.mem[MEM_TOTAL] = 7400000;
	fx->run.nmodules = 1;
	assert_null(strstr(print(fx, NULL), "Top growing"));
	fill_growth(fx, false); /* binary fails */
	assert_non_null(strstr(print(fx, NULL), "Top growing test modules"));
}

/* the sockets' input buffers each snapshot set aside, said with the measured and
 * the judged binary; "at least" when the sizes are a lower bound; nothing when none was */
static void test_summary__set_aside(void **state)
{
	(void)state;
	struct snapshot b, a;
	memset(&b, 0, sizeof(b));
	memset(&a, 0, sizeof(a));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	summary_print(f, &(struct report_data){.before = &b, .after = &a}, false);
	fclose(f);
	assert_null(strstr(buf, "Set aside"));
	free(buf);

	b.have_set_aside = a.have_set_aside = true;
	b.set_aside_exact = true;
	b.set_aside_bytes = 39398880;
	b.set_aside_sockets = 10;
	b.set_aside_binary_raw = 39493512;
	b.mem[MEM_BINARY] = 39493512 - 39398880;
	a.set_aside_bytes = 2000048;
	a.set_aside_sockets = 1;
	a.set_aside_binary_raw = 2100000;
	a.mem[MEM_BINARY] = 2100000 - 2000048;
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	summary_print(f, &(struct report_data){.before = &b, .after = &a}, false);
	fclose(f);
	assert_non_null(strstr(buf, "Set aside: sockets' input buffers"));
	assert_non_null(strstr(buf, "before: binary 39.5 MB, of which 39.4 MB in 10 sockets' "
	                            "buffers, judged 94.6 kB\n"));
	assert_non_null(strstr(
	        buf,
	        "after: binary 2.1 MB, of which at least 2.0 MB in 1 socket's buffer, judged "));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_summary__table, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_summary__top_growing_only_when_flagged, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_summary__passed, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_summary__plurals_and_more, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_summary__color, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_summary__hostile_names, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_summary__unfinished_and_empty, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_summary__subtracted_saturates, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_summary__no_pct_limit, setup, teardown),
	        cmocka_unit_test(test_summary__set_aside),
	};
	return cmocka_run_group_tests_name("summary", tests, NULL, NULL);
}
