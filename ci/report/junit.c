/* ci/report/junit.c: writes the JUnit XML report with libxml2's xmlTextWriter, atomically. */
#include "base/errtext.h"
#include "ci/report/junit.h"
#include "ci/report/junit_cases.h"
#include "ci/report/xml_safe.h"

#include "base/atomic.h"
#include "base/grow.h"
#include "base/utf8.h"
#include "ci/report/ansi.h"
#include "model/finding.h"
#include "model/tests.h"
#include "rules/attribution.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ci/report/xml_lib.h"

/* ---- the writer, with sticky errors ---- */

struct jw {
	xmlTextWriterPtr w;
	bool failed; /* a writer call failed: libxml2's text or the sink's errno says why */
	bool oom;
	const struct module_growth **modules; /* the run's, by name (attribution_modules_sorted) */
};

static void jw_start(struct jw *j, const char *name)
{
	if (!j->failed && xmlTextWriterStartElement(j->w, BAD_CAST name) < 0)
		j->failed = true;
}

static void jw_end(struct jw *j)
{
	if (!j->failed && xmlTextWriterEndElement(j->w) < 0)
		j->failed = true;
}

/* value must already be safe (see xml_safe) or produced by us */
static void jw_attr(struct jw *j, const char *name, const char *value)
{
	if (!j->failed && xmlTextWriterWriteAttribute(j->w, BAD_CAST name, BAD_CAST value) < 0)
		j->failed = true;
}

__attribute__((format(printf, 3, 4))) static void jw_attrf(struct jw *j, const char *name,
                                                           const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	jw_attr(j, name, buf);
}

static void jw_text(struct jw *j, const char *text)
{
	if (!j->failed && xmlTextWriterWriteString(j->w, BAD_CAST text) < 0)
		j->failed = true;
}

/* An attribute from outside text: made safe, capped at max. */
static void jw_attr_safe(struct jw *j, const char *name, const char *value, size_t max,
                         enum safe_mode mode)
{
	char *v = xml_safe(value, max, mode);
	if (!v) {
		j->oom = j->failed = true;
		return;
	}
	jw_attr(j, name, v);
	free(v);
}

static void jw_text_safe(struct jw *j, const char *text)
{
	char *v = xml_safe(text, JUNIT_BODY_MAX, SAFE_ALL);
	if (!v) {
		j->oom = j->failed = true;
		return;
	}
	jw_text(j, v);
	free(v);
}

/* Seconds for a time attribute: at most 6 decimals, no trailing zeros, never negative,
 * nothing the schema's SUREFIRE_TIME pattern rejects (no sign, exponent or "nan"). */
static void format_seconds(char *buf, size_t len, double s)
{
	if (!isfinite(s) || s < 0)
		s = 0;
	if (s > 1e12)
		s = 1e12;
	snprintf(buf, len, "%.6f", s);
	char *e = buf + strlen(buf);
	while (e > buf && e[-1] == '0')
		*--e = '\0';
	if (e > buf && e[-1] == '.')
		*--e = '\0';
}

static void jw_time(struct jw *j, double s)
{
	char buf[64];
	format_seconds(buf, sizeof(buf), s);
	jw_attr(j, "time", buf);
}

/* ---- the report ---- */

struct suite_common {
	const char *hostname;
	char timestamp[32];
};

/* "Elixir.Foo.BarTest" -> "Foo.BarTest"; Erlang module names stay as they are. */
static const char *module_shown(const char *module)
{
	if (!module || !*module)
		return "(unknown module)";
	if (strncmp(module, "Elixir.", 7) == 0 && module[7])
		return module + 7;
	return module;
}

static void suite_start(struct jw *j, const struct suite_common *c, const char *name, size_t tests,
                        size_t failures, size_t errors, size_t skipped, double time_s)
{
	jw_start(j, "testsuite");
	jw_attr_safe(j, "name", name, JUNIT_ATTR_MAX * 4, SAFE_ALL);
	jw_attrf(j, "tests", "%zu", tests);
	jw_attrf(j, "failures", "%zu", failures);
	jw_attrf(j, "errors", "%zu", errors);
	jw_attrf(j, "skipped", "%zu", skipped);
	jw_time(j, time_s);
	jw_attr(j, "timestamp", c->timestamp);
	jw_attr_safe(j, "hostname", c->hostname, 256, SAFE_FIRST_LINE);
}

static void property(struct jw *j, const char *name, const char *value)
{
	jw_start(j, "property");
	jw_attr(j, "name", name);
	jw_attr_safe(j, "value", value, JUNIT_ATTR_MAX, SAFE_ALL);
	jw_end(j);
}

/* --repeat: the figures after every run and each run's growth over the one before */
static void repeat_properties(struct jw *j, const struct repeat_data *d)
{
	char name[96], value[32];
	snprintf(value, sizeof(value), "%zu", d->n);
	property(j, "gate.repeat.runs", value);
	for (size_t k = 1; k <= d->n; k++) {
		const struct repeat_point *p = repeat_point_at(d, k);
		for (int c = 0; c < MEM_CAT_COUNT; c++) {
			if (!p->have[c])
				continue;
			snprintf(name, sizeof(name), "gate.repeat.run.%zu.%s", k,
			         mem_cat_name((enum mem_cat)c));
			snprintf(value, sizeof(value), "%lld", (long long)p->mem[c]);
			property(j, name, value);
			snprintf(name, sizeof(name), "gate.repeat.run.%zu.%s.delta", k,
			         mem_cat_name((enum mem_cat)c));
			snprintf(value, sizeof(value), "%lld",
			         (long long)repeat_run_growth(d, k, (enum mem_cat)c));
			property(j, name, value);
		}
	}
}

/* The error testcase of a cluster node that failed or left the run. */
static void write_node_error(struct jw *j, const struct report_node *nd, const char *label)
{
	char classname[JUNIT_ATTR_MAX];
	snprintf(classname, sizeof(classname), "gate.node%s", label);
	jw_start(j, "testcase");
	jw_attr_safe(j, "classname", classname, JUNIT_ATTR_MAX, SAFE_ALL);
	jw_attr(j, "name", "node");
	jw_attr(j, "time", "0");
	jw_start(j, "error");
	jw_attr_safe(j, "message", nd->error, JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
	jw_attr(j, "type", "gate.node");
	jw_text_safe(j, nd->error);
	jw_end(j);
	jw_end(j);
}

static const char *relative_file(const char *file, const char *root);

/* The attention budget: a memory testcase per rule and subject that failed, warned, was skipped, or
 * was judged against a limit; not a pass its rule calls quiet (SHOW_QUIET_PASS: the baseline's
 * per-table rows, "ets:inet_db", which no one capped; a capped table has its ets rule case). */
static bool finding_shown(const struct finding *f)
{
	if (f->verdict != VERDICT_PASS)
		return true;
	return !(f->show & SHOW_QUIET_PASS);
}

/* file= and line= of a memory finding: its culprit test's (rules/tags.c), so that CI
 * reporters place it at the test that grew the memory rather than inventing a file. */
static void finding_location(struct jw *j, const struct finding *f, const struct report_data *view)
{
	if (!f->file || !*f->file)
		return;
	jw_attr_safe(j, "file", relative_file(f->file, view->file_root), JUNIT_ATTR_MAX * 4,
	             SAFE_ALL);
	if (f->line > 0)
		jw_attrf(j, "line", "%d", f->line);
}

/* A stack-trace line for reporters that place failures from one (dorny/test-reporter's
 * java-junit parser: "at PACKAGE.CLASS(FILE:LINE)", FILE a tracked file's name and PACKAGE
 * its directories): "at test.Demo.SessionsTest(sessions_test.exs:12)". Empty when the
 * finding has no file in a directory. */
static void finding_trace(char *buf, size_t len, const struct finding *f,
                          const struct report_data *view)
{
	buf[0] = '\0';
	if (!f->file || !*f->file || f->line <= 0 || !f->culprit)
		return;
	const char *rel = relative_file(f->file, view->file_root);
	const char *slash = strrchr(rel, '/');
	if (!slash || slash == rel || rel[0] == '/')
		return;
	const char *mod = f->culprit;
	if (strncmp(mod, "Elixir.", 7) == 0)
		mod += 7;
	int o = snprintf(buf, len, "\nat ");
	for (const char *c = rel; c < slash && o > 0 && (size_t)o + 2 < len; c++)
		buf[o++] = *c == '/' ? '.' : *c;
	snprintf(buf + o, len - (size_t)o, ".%s(%s:%d)\n", mod, slash + 1, f->line);
}

/* A memory suite lists at most this many failing checks and this many others; the rest are
 * counted in one testcase each (a baseline with 200 000 ETS tables gave a 52 MB report that
 * CI viewers cannot open). The summary and the HTML report have every check. */
#define JUNIT_MEMORY_CASES_MAX 1000

struct memory_counts {
	size_t tests, failures, skipped; /* as written, the "more" testcases included */
	size_t more_failing, more_other; /* checks counted, not listed */
};

static struct memory_counts memory_counts(const struct findings *f)
{
	struct memory_counts c = {0};
	size_t fails = 0, others = 0;
	for (size_t i = 0; f && i < f->count; i++) {
		if (!(f->items[i].show & SHOW_ONE_CASE) && !finding_shown(&f->items[i]))
			continue; /* not a testcase at all */
		if (!junit_case_first(f, i))
			continue;
		if (junit_case_verdict(f, i) == VERDICT_FAIL) {
			if (fails++ < JUNIT_MEMORY_CASES_MAX)
				c.tests++, c.failures++;
			else
				c.more_failing++;
		} else if (others++ < JUNIT_MEMORY_CASES_MAX) {
			c.tests++;
			c.skipped += junit_case_verdict(f, i) == VERDICT_SKIP;
		} else {
			c.more_other++;
		}
	}
	c.tests += (c.more_failing > 0) + (c.more_other > 0);
	c.failures += c.more_failing > 0;
	return c;
}

/* The testcase that stands for the checks not listed. */
static void write_more_case(struct jw *j, const char *label, size_t n, bool failing)
{
	char classname[400], name[160], msg[400];
	snprintf(classname, sizeof(classname), "gate.memory.more%s", label);
	snprintf(name, sizeof(name), "%zu more %s checks", n,
	         failing ? "failing" : "passing or skipped");
	snprintf(msg, sizeof(msg),
	         "%zu more %s checks are not listed (this report lists the "
	         "first %d of each kind); the summary and the HTML report have them all",
	         n, failing ? "failing" : "passing or skipped", JUNIT_MEMORY_CASES_MAX);
	jw_start(j, "testcase");
	jw_attr_safe(j, "classname", classname, JUNIT_ATTR_MAX, SAFE_ALL);
	jw_attr_safe(j, "name", name, JUNIT_ATTR_MAX, SAFE_ALL);
	jw_attr(j, "time", "0");
	jw_start(j, failing ? "failure" : "system-out");
	if (failing) {
		jw_attr_safe(j, "message", msg, JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
		jw_attr(j, "type", "gate.more");
	}
	jw_text_safe(j, msg);
	jw_end(j);
	jw_end(j);
}

/* The gate.memory suite's properties: --repeat's figures, the node, the project, the seed. */
static void memory_suite_properties(struct jw *j, const struct test_run *run,
                                    const struct report_data *view, const struct report_node *nd,
                                    const char *node)
{
	if (!node && !view->project && !run && !(view->repeat && !nd))
		return;
	jw_start(j, "properties");
	if (view->repeat && !nd)
		repeat_properties(j, view->repeat);
	if (node)
		property(j, "node", node);
	if (view->project)
		property(j, "project", view->project);
	if (run) {
		char seed[32];
		/* a merged report's partition ran with a seed of its own */
		snprintf(seed, sizeof(seed), "%lld",
		         (long long)(nd && nd->partition > 0 ? nd->seed : run->seed));
		property(j, "exunit.seed", seed);
		if (run->partition > 0) {
			snprintf(seed, sizeof(seed), "%d", run->partition);
			property(j, "mix.test.partition", seed);
		}
	}
	if (nd && nd->partition > 0) { /* one partition's suite in a merged report */
		char k[32];
		snprintf(k, sizeof(k), "%d", nd->partition);
		property(j, "mix.test.partition", k);
	}
	jw_end(j);
}

/* The <failure> of a failing finding: its message, its type ("gate.growth"), its text and
 * a stack-trace line for the reporters that place failures from one. */
static void write_finding_failure(struct jw *j, const struct finding *f,
                                  const struct report_data *view, const char *type)
{
	struct textbuf body = {0};
	junit_failure_body(&body, f);
	if (body.oom) {
		textbuf_free(&body);
		j->oom = j->failed = true;
		return;
	}
	jw_start(j, "failure");
	jw_attr_safe(j, "message", f->message ? f->message : "memory rule failed", JUNIT_ATTR_MAX,
	             SAFE_FIRST_LINE);
	jw_attr_safe(j, "type", type, JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
	jw_text_safe(j, body.s); /* a message may name a table or process of the node */
	textbuf_free(&body);
	char trace[1400];
	finding_trace(trace, sizeof(trace), f, view);
	if (trace[0])
		jw_text_safe(j, trace);
	jw_end(j);
}

/* One memory testcase, "gate.memory.RULE[label]" named after its subject: a failure, a
 * skip (a warning is one, with its culprits), or a pass with its message. */
static void write_finding_case(struct jw *j, const struct finding *f,
                               const struct report_data *view, const char *label)
{
	const char *rule = finding_rule_name(f);
	struct textbuf classname = {0}, type = {0};
	textbuf_printf(&classname, "gate.memory.%s%s", rule, label);
	textbuf_printf(&type, "gate.%s", rule);
	if (classname.oom || type.oom) {
		j->oom = j->failed = true;
		goto out;
	}
	jw_start(j, "testcase");
	jw_attr_safe(j, "classname", classname.s, JUNIT_ATTR_MAX, SAFE_ALL);
	jw_attr_safe(j, "name", f->subject ? f->subject : "(none)", JUNIT_ATTR_MAX, SAFE_ALL);
	jw_attr(j, "time", "0");
	finding_location(j, f, view);
	if (f->verdict == VERDICT_FAIL) {
		write_finding_failure(j, f, view, type.s);
	} else if (f->verdict == VERDICT_SKIP) {
		jw_start(j, "skipped");
		jw_attr_safe(j, "message", f->message ? f->message : "skipped", JUNIT_ATTR_MAX,
		             SAFE_FIRST_LINE);
		jw_end(j);
		if (f->warned && f->detail) { /* a warning's culprits, as a failure's */
			jw_start(j, "system-out");
			jw_text_safe(j, f->detail);
			jw_end(j);
		}
	} else if (f->message) {
		jw_start(j, "system-out");
		jw_text_safe(j, f->message);
		jw_end(j);
	}
	jw_end(j);
out:
	textbuf_free(&classname);
	textbuf_free(&type);
}

/* A comparison's one testcase (the baseline's rows, the trend's): named after its rule; its
 * failure is its first failing row's, and lists every row that failed; passing, it says how
 * many rows it compared and, for the rows that passed as context, what explains them. */
static void write_one_case(struct jw *j, const struct findings *f, size_t i,
                           const struct report_data *view, const char *label)
{
	const struct finding *g = &f->items[i], *first_fail = NULL;
	const char *rule = finding_rule_name(g);
	struct textbuf classname = {0}, type = {0}, body = {0};
	enum verdict v = junit_case_verdict(f, i);
	junit_case_body(&body, f, i, &first_fail);
	textbuf_printf(&classname, "gate.memory.%s%s", rule, label);
	textbuf_printf(&type, "gate.%s", rule);
	if (classname.oom || type.oom || body.oom) {
		j->oom = j->failed = true;
		goto out;
	}
	jw_start(j, "testcase");
	jw_attr_safe(j, "classname", classname.s, JUNIT_ATTR_MAX, SAFE_ALL);
	jw_attr_safe(j, "name", rule, JUNIT_ATTR_MAX, SAFE_ALL);
	jw_attr(j, "time", "0");
	if (first_fail)
		finding_location(j, first_fail, view);
	if (v == VERDICT_FAIL) {
		jw_start(j, "failure");
		jw_attr_safe(j, "message", first_fail->message ? first_fail->message : rule,
		             JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
		jw_attr_safe(j, "type", type.s, JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
		jw_text_safe(j, body.s);
		jw_end(j);
	} else {
		if (v == VERDICT_SKIP) {
			jw_start(j, "skipped");
			jw_attr_safe(j, "message", g->message ? g->message : "skipped",
			             JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
			jw_end(j);
		}
		jw_start(j, "system-out");
		jw_text_safe(j, body.s);
		jw_end(j);
	}
	jw_end(j);
out:
	textbuf_free(&classname);
	textbuf_free(&type);
	textbuf_free(&body);
}

/* The gate.memory suite; for one node of a cluster (nd) named and labelled after it. */
static void write_memory_suite(struct jw *j, const struct suite_common *c,
                               const struct findings *findings, const struct test_run *run,
                               const struct report_data *view, const struct report_node *nd)
{
	size_t n = findings ? findings->count : 0, shown_fail = 0, shown_other = 0;
	struct memory_counts mc = memory_counts(findings);
	char label[300] = "", suite[320];
	const char *node = view->node;
	if (nd) {
		snprintf(label, sizeof(label), "[%s]", nd->name ? nd->name : "?");
		node = nd->name;
	}
	snprintf(suite, sizeof(suite), "gate.memory%s", label);
	bool lost = nd && nd->error;
	suite_start(j, c, suite, mc.tests + lost, mc.failures, lost, mc.skipped,
	            !nd ? view->memory_time_s : 0);
	memory_suite_properties(j, run, view, nd, node);

	for (size_t i = 0; i < n && !j->oom; i++) {
		const struct finding *f = &findings->items[i];
		bool one = f->show & SHOW_ONE_CASE;
		if (!one && !finding_shown(f))
			continue; /* not a testcase at all */
		if (!junit_case_first(findings, i))
			continue; /* a row of a comparison written already */
		if (junit_case_verdict(findings, i) == VERDICT_FAIL
		            ? shown_fail++ >= JUNIT_MEMORY_CASES_MAX
		            : shown_other++ >= JUNIT_MEMORY_CASES_MAX)
			continue; /* counted in a "more" testcase below */
		if (one)
			write_one_case(j, findings, i, view, label);
		else
			write_finding_case(j, f, view, label);
	}
	if (j->oom)
		return;
	if (mc.more_failing)
		write_more_case(j, label, mc.more_failing, true);
	if (mc.more_other)
		write_more_case(j, label, mc.more_other, false);
	if (lost)
		write_node_error(j, nd, label);
	jw_end(j);
}

static void write_error_suite(struct jw *j, const struct suite_common *c, const char *error)
{
	suite_start(j, c, "gate.run", 1, 0, 1, 0, 0);
	jw_start(j, "testcase");
	jw_attr(j, "classname", "gate.run");
	jw_attr(j, "name", "gate");
	jw_attr(j, "time", "0");
	jw_start(j, "error");
	jw_attr_safe(j, "message", error, JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
	jw_attr(j, "type", "gate.error");
	jw_text_safe(j, error);
	jw_end(j);
	jw_end(j);
	jw_end(j);
}

/* Bare `mix test` would exit non-zero for a reason the failed tests do not tell (warnings as
 * errors, a coverage threshold, a Mix error...): one error testcase "exit status" in a suite
 * "mix.test" of its own, whose message is Mix's reason and whose type names the exit status. */
static void write_mix_suite(struct jw *j, const struct suite_common *c, const struct test_run *run)
{
	char msg[160], type[48];
	snprintf(msg, sizeof(msg), "mix test would exit with status %d", run->mix_status);
	snprintf(type, sizeof(type), "mix.test.exit_status.%d", run->mix_status);
	suite_start(j, c, "mix.test", 1, 0, 1, 0, 0);
	jw_start(j, "testcase");
	jw_attr(j, "classname", "mix.test");
	jw_attr(j, "name", "exit status");
	jw_attr(j, "time", "0");
	jw_start(j, "error");
	jw_attr_safe(j, "message", run->mix_reason && *run->mix_reason ? run->mix_reason : msg,
	             JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
	jw_attr(j, "type", type);
	struct textbuf body = {0};
	textbuf_printf(&body, "%s%s%s\n", msg, run->mix_reason ? ": " : "",
	               run->mix_reason ? run->mix_reason : "");
	if (body.oom) {
		j->oom = j->failed = true;
		return;
	}
	jw_text_safe(j, body.s);
	textbuf_free(&body);
	jw_end(j);
	jw_end(j);
	jw_end(j);
}

struct ordered {
	const char *module; /* as shown */
	const struct test_result *t;
	size_t index;
};

static int ordered_cmp(const void *pa, const void *pb)
{
	const struct ordered *a = pa, *b = pb;
	int c = strcmp(a->module, b->module);
	if (c)
		return c;
	if (a->t->line != b->t->line)
		return a->t->line < b->t->line ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The memory deltas of a test or module as <property> elements: "gate.memory.CAT.delta"
 * per category (bytes), "gate.processes.delta", "gate.ets_tables.delta". */
static void delta_properties(struct jw *j, const struct mem_delta *d)
{
	char name[64], value[32];
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		snprintf(name, sizeof(name), "gate.memory.%s.delta", mem_cat_name((enum mem_cat)c));
		snprintf(value, sizeof(value), "%lld", (long long)d->mem[c]);
		property(j, name, value);
	}
	snprintf(value, sizeof(value), "%lld", (long long)d->processes);
	property(j, "gate.processes.delta", value);
	snprintf(value, sizeof(value), "%lld", (long long)d->ets_tables);
	property(j, "gate.ets_tables.delta", value);
}

/* file= relative to root when it lies under it (CI reporters link and annotate with it). */
static const char *relative_file(const char *file, const char *root)
{
	size_t n = root ? strlen(root) : 0;
	if (n && strncmp(file, root, n) == 0 && file[n] == '/')
		return file + n + 1;
	return file;
}

/* A measured test's figures as its system-out, one "name = value" line each (the names of
 * delta_properties, bytes and counts as integers), for people and for readers alike. */
static void write_test_figures(struct jw *j, const struct test_result *t)
{
	struct textbuf b = {0};
	textbuf_printf(&b, "gate.attribution: %s\n",
	               t->async ? "async: overlapping tests share these figures"
	                        : "light readings (no GC) before the test and at its finish");
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		textbuf_printf(&b, "gate.memory.%s.delta = %lld\n", mem_cat_name((enum mem_cat)c),
		               (long long)t->delta.mem[c]);
	textbuf_printf(&b, "gate.processes.delta = %lld\ngate.ets_tables.delta = %lld\n",
	               (long long)t->delta.processes, (long long)t->delta.ets_tables);
	if (b.oom) {
		j->oom = j->failed = true;
		textbuf_free(&b);
		return;
	}
	jw_start(j, "system-out");
	jw_text_safe(j, b.s);
	jw_end(j);
	textbuf_free(&b);
}

/* The framework that ran a test, for a failure's type: ExUnit for an Elixir module, else a
 * rebar3 project's Common Test (a suite's name ends in _SUITE, as Common Test requires) or
 * EUnit. */
static const char *framework(const struct test_result *t)
{
	const char *m = t->module ? t->module : "";
	size_t n = strlen(m);
	if (strncmp(m, "Elixir.", 7) == 0 || !*m)
		return "ExUnit";
	return n > 6 && strcmp(m + n - 6, "_SUITE") == 0 ? "CommonTest" : "EUnit";
}

static void write_testcase(struct jw *j, const char *module, const struct test_result *t,
                           const char *root)
{
	char line[24];

	jw_start(j, "testcase");
	jw_attr_safe(j, "classname", module, JUNIT_ATTR_MAX * 4, SAFE_ALL);
	jw_attr_safe(j, "name", t->name ? t->name : "(unnamed test)", JUNIT_ATTR_MAX * 4, SAFE_ALL);
	if (t->file && *t->file)
		jw_attr_safe(j, "file", relative_file(t->file, root), JUNIT_ATTR_MAX * 4, SAFE_ALL);
	if (t->line > 0) {
		snprintf(line, sizeof(line), "%d", t->line);
		jw_attr(j, "line", line);
	}
	jw_time(j, (double)t->time_us / 1e6);
	/* no <properties> in a testcase (the JUnit schema has none there): the app is the suite's
	 * (its name and properties), a measured test's figures its system-out */
	if (t->measured)
		write_test_figures(j, t);
	switch (t->state) {
	case TEST_PASSED: break;
	case TEST_FAILED:
		jw_start(j, "failure");
		jw_attr_safe(j, "message",
		             t->reason && *t->reason ? t->reason
		             : t->message            ? t->message
		                                     : "test failed",
		             JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
		jw_attr(j, "type", framework(t));
		if (t->message)
			jw_text_safe(j, t->message);
		jw_end(j);
		break;
	case TEST_SKIPPED:
	case TEST_EXCLUDED:
		jw_start(j, "skipped");
		jw_attr_safe(j, "message", t->message ? t->message : test_state_name(t->state),
		             JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
		jw_end(j);
		break;
	case TEST_INVALID:
		jw_start(j, "error");
		jw_attr_safe(j, "message", t->reason && *t->reason ? t->reason : "setup_all failed",
		             JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
		jw_attr(j, "type", framework(t));
		if (t->message)
			jw_text_safe(j, t->message);
		jw_end(j);
		break;
	}
	jw_end(j);
}

/* Properties of a module's <testsuite>: the module's attributed growth (the keys of
 * delta_properties and "gate.attribution", how it was measured). */
static void write_suite_properties(struct jw *j, const struct test_run *run,
                                   const struct ordered *o, size_t s)
{
	const char *app = o[s].t->app && *o[s].t->app ? o[s].t->app : NULL;
	char value[256];

	if (!run)
		return;
	const struct module_growth *m =
	        attribution_module_find(j->modules, run->nmodules, o[s].t->module);
	/* in a merged report, the partition the module's tests ran in (a suite-level property: the
	 * strict schema has none inside a testcase) */
	int partition = o[s].t->partition;
	if (!m && !app && partition <= 0)
		return;
	jw_start(j, "properties");
	if (app) /* the umbrella's app, where the schema allows it */
		property(j, "mix.app", app);
	if (partition > 0) {
		snprintf(value, sizeof(value), "%d", partition);
		property(j, "mix.test.partition", value);
	}
	if (!m) {
		jw_end(j);
		return;
	}
	if (m->async && m->overlapped)
		snprintf(value, sizeof(value),
		         "async: ran beside %zu other module%s; what grew "
		         "while several were busy is shared%s",
		         m->overlapped, m->overlapped == 1 ? "" : "s",
		         run->attribution_sync ? "" : "; approximate edges");
	else
		snprintf(value, sizeof(value),
		         "%s: the module's own growth (light snapshots at its "
		         "edges, no GC%s)",
		         m->async ? "async, ran alone" : "sync",
		         run->attribution_sync ? "" : "; approximate edges");
	property(j, "gate.attribution", value);
	delta_properties(j, &m->delta);
	jw_end(j);
}

static void write_test_suites(struct jw *j, const struct suite_common *c,
                              const struct test_run *run, const struct ordered *o, size_t n,
                              const char *root)
{
	for (size_t s = 0; s < n && !j->failed;) {
		size_t e = s, failures = 0, errors = 0, skipped = 0;
		double time_s = 0;
		while (e < n && strcmp(o[e].module, o[s].module) == 0) {
			const struct test_result *t = o[e].t;
			failures += t->state == TEST_FAILED;
			errors += t->state == TEST_INVALID;
			skipped += t->state == TEST_SKIPPED || t->state == TEST_EXCLUDED;
			if (t->time_us > 0)
				time_s += (double)t->time_us / 1e6;
			e++;
		}
		suite_start(j, c, o[s].module, e - s, failures, errors, skipped, time_s);
		write_suite_properties(j, run, o, s);
		for (size_t i = s; i < e; i++)
			write_testcase(j, o[s].module, o[i].t, root);
		jw_end(j);
		s = e;
	}
}

static void write_report(struct jw *j, const struct report_data *view, const struct suite_common *c,
                         const struct ordered *o, size_t n)
{
	const struct findings *findings = view->findings;
	const struct test_run *run = view->tests;
	size_t tests = 0, failures = 0, errors = 0;
	double time_s = view->memory_time_s;

	if (view->nnodes) {
		for (size_t i = 0; i < view->nnodes; i++) {
			struct memory_counts mc = memory_counts(view->nodes[i].findings);
			tests += mc.tests + (view->nodes[i].error != NULL);
			failures += mc.failures;
			errors += view->nodes[i].error != NULL;
		}
	} else if (findings) {
		struct memory_counts mc = memory_counts(findings);
		tests += mc.tests;
		failures += mc.failures;
	}
	if (run) {
		struct test_counts tc = test_run_count(run);
		tests += tc.total;
		failures += tc.failed;
		errors += tc.invalid;
		for (size_t i = 0; i < run->count; i++)
			if (run->tests[i].time_us > 0)
				time_s += (double)run->tests[i].time_us / 1e6;
	}
	/* the gate.run suite's error case and the mix.test suite */
	size_t cases = (view->error != NULL) + (run && run->mix_status != 0 && !run->mix_explained);
	tests += cases;
	errors += cases;

	if (xmlTextWriterSetIndent(j->w, 1) < 0 ||
	    xmlTextWriterSetIndentString(j->w, BAD_CAST "  ") < 0 ||
	    xmlTextWriterStartDocument(j->w, "1.0", "UTF-8", NULL) < 0) {
		j->failed = true;
		return;
	}
	jw_start(j, "testsuites");
	if (view->project) {
		struct textbuf name = {0};
		textbuf_printf(&name, "gate: %s", view->project);
		if (name.oom) {
			j->oom = j->failed = true;
			return;
		}
		jw_attr_safe(j, "name", name.s, JUNIT_ATTR_MAX, SAFE_FIRST_LINE);
		textbuf_free(&name);
	} else {
		jw_attr(j, "name", "gate");
	}
	/* the schema allows no "skipped" here: the per-suite figures carry it */
	jw_attrf(j, "tests", "%zu", tests);
	jw_attrf(j, "failures", "%zu", failures);
	jw_attrf(j, "errors", "%zu", errors);
	jw_time(j, time_s);

	if (view->error)
		write_error_suite(j, c, view->error);
	if (view->nnodes)
		for (size_t i = 0; i < view->nnodes; i++)
			write_memory_suite(j, c, view->nodes[i].findings, run, view,
			                   &view->nodes[i]);
	else
		write_memory_suite(j, c, findings, run, view, NULL);
	write_test_suites(j, c, run, o, n, view->file_root);
	if (run && run->mix_status != 0 && !run->mix_explained)
		write_mix_suite(j, c, run);
	jw_end(j);
	if (!j->failed && xmlTextWriterEndDocument(j->w) < 0)
		j->failed = true;
	if (!j->failed && xmlTextWriterFlush(j->w) < 0)
		j->failed = true;
}

/* ---- atomic file output ---- */

struct sink {
	int fd;
	int err; /* errno of the first failed write, 0 when none */
};

static int sink_write(void *ctx, const char *buf, int len)
{
	struct sink *s = ctx;
	int done = 0;
	while (done < len) {
		ssize_t n = write(s->fd, buf + done, (size_t)(len - done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!s->err)
				s->err = errno;
			return -1;
		}
		done += (int)n;
	}
	return len;
}

static int sink_close(void *ctx)
{
	(void)ctx; /* the fd is ours to fsync and close */
	return 0;
}

struct xml_errcap {
	char text[256];
};

/* libxml2 2.12 made the error a const pointer */
#if LIBXML_VERSION >= 21200
static void xml_errcap_handler(void *ctx, const xmlError *e)
#else
static void xml_errcap_handler(void *ctx, xmlErrorPtr e)
#endif
{
	struct xml_errcap *cap = ctx;
	if (!e || !e->message || cap->text[0])
		return;
	snprintf(cap->text, sizeof(cap->text), "%s", e->message);
	size_t n = strlen(cap->text);
	while (n > 0 && (cap->text[n - 1] == '\n' || cap->text[n - 1] == ' '))
		cap->text[--n] = '\0';
}

int junit_write(const char *path, const struct report_data *d, char *err, size_t errlen)
{
	const struct report_data none = {0};
	const struct report_data *view = d ? d : &none;
	const struct test_run *run = view->tests;
	int rc = -1;
	struct atomic_file file = {.fd = -1};
	struct ordered *o = NULL;
	size_t n = run ? run->count : 0;
	struct sink sink = {.fd = -1, .err = 0};
	struct xml_errcap cap = {{0}};
	xmlStructuredErrorFunc old_handler = NULL;
	void *old_ctx = NULL;
	bool xml = false; /* libxml2 loaded, its error handler to be put back */
	xmlOutputBufferPtr out = NULL;
	struct jw j = {0};
	struct suite_common common = {0};
	char host[256];

	if (err && errlen)
		err[0] = '\0';
	if (!path || !*path) {
		errtext_set(err, errlen, "(no path)", "no path given for the JUnit report");
		return -1;
	}

	if (xml2_lib_load(err, errlen) < 0) {
		char why[512];
		snprintf(why, sizeof(why), "%s", err ? err : "");
		errtext_set(err, errlen, path, "%s", why);
		return -1;
	}
	xml = true;
	old_handler = xmlStructuredError;
	old_ctx = xmlStructuredErrorContext;

	o = calloc(n ? n : 1, sizeof(*o));
	j.modules = attribution_modules_sorted(run); /* NULL for none */
	if (!o || (run && run->nmodules && !j.modules)) {
		errtext_set(err, errlen, path, "out of memory");
		goto out;
	}

	/* gather everything before touching the disk */
	for (size_t i = 0; i < n; i++) {
		o[i].module = module_shown(run->tests[i].module);
		o[i].t = &run->tests[i];
		o[i].index = i;
	}
	if (n)
		qsort(o, n, sizeof(*o), ordered_cmp);
	if (view->hostname) {
		common.hostname = view->hostname;
	} else {
		if (gethostname(host, sizeof(host)) < 0)
			strcpy(host, "localhost");
		host[sizeof(host) - 1] = '\0';
		common.hostname = host;
	}
	time_t ts = view->started ? (time_t)view->started : time(NULL);
	struct tm tm;
	if (!gmtime_r(&ts, &tm) ||
	    strftime(common.timestamp, sizeof(common.timestamp), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		strcpy(common.timestamp, "1970-01-01T00:00:00");

	/* err from ci/atomic names the path already */
	if (atomic_file_open(&file, path, false, err, errlen) < 0)
		goto out;
	file.report = true;

	sink.fd = file.fd;
	xmlSetStructuredErrorFunc(&cap, xml_errcap_handler);
	out = xmlOutputBufferCreateIO(sink_write, sink_close, &sink, NULL);
	if (!out) {
		errtext_set(err, errlen, path, "libxml2 could not make an output buffer");
		goto out;
	}
	j.w = xmlNewTextWriter(out);
	if (!j.w) {
		xmlOutputBufferClose(out);
		errtext_set(err, errlen, path, "libxml2 could not make a text writer");
		goto out;
	}
	write_report(&j, view, &common, o, n);
	xmlFreeTextWriter(j.w); /* also closes out, flushing what is left */
	j.w = NULL;
	if (j.failed || sink.err) {
		if (sink.err)
			errtext_set(err, errlen, path, "cannot write the temp file %s: %s",
			            file.tmp, strerror(sink.err));
		else if (j.oom)
			errtext_set(err, errlen, path, "out of memory while writing the report");
		else
			errtext_set(err, errlen, path, "libxml2 could not write the report: %s",
			            cap.text[0] ? cap.text : "unknown error");
		goto out;
	}
	if (atomic_file_finish(&file, err, errlen) < 0 ||
	    atomic_file_commit(&file, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	if (xml)
		xmlSetStructuredErrorFunc(old_ctx, old_handler);
	atomic_file_abort(&file); /* a no-op once committed */
	free(o);
	free(j.modules);
	return rc;
}

void junit_warm(void)
{
	xml2_lib_warm();
}

int junit_ready(char *err, size_t errlen)
{
	return xml2_lib_load(err, errlen);
}
