/* ci/report/report.h: one view of a run, which every writer reads (the console summary, the
 * JUnit file, the Markdown step summary, the HTML report, GitHub annotations), and the helpers
 * they share: the verdict, safe text from the suite, the "top growing" ranking.
 *
 * Ownership: struct report_data only borrows; the writers keep no pointer to it. Every
 * writer is a function of the view and its output stream alone (no environment, no clock:
 * the JUnit writer alone reads the host name and the time when the view leaves them out),
 * so that a fuzz target can call it.
 */
#ifndef GATE_CI_REPORT_REPORT_H
#define GATE_CI_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/verdict.h"
#include "rules/baseline.h"
#include "rules/repeat.h"
#include "rules/trend_samples.h"

/* One partition of a merged run: its label and its node's erlang:memory figures. */
struct report_part {
	const char *label; /* "partition 1/2" */
	const struct snapshot *before, *after;
};

/* One node of a cluster run (gate run --cluster), or one partition of a merged run (gate
 * merge): its own memory verdict. */
struct report_node {
	const char *name;                /* the node, e.g. app_b@127.0.0.1; "partition 1/2" */
	const struct findings *findings; /* its rules; may be NULL */
	const char *error;               /* non-NULL when the node failed or left the run */
	int partition; /* gate merge: the partition k whose results these are; 0: a cluster node */
	int64_t seed;  /* and that partition's ExUnit seed (the run's is not used then) */
	/* gate merge: that partition's --repeat runs and --sample series; NULL: none */
	const struct repeat_data *repeat;
	const struct sample_series *samples;
};

/* A run as the writers see it. A run gate could not finish (error) carries no findings or
 * snapshots (it was not judged), and the tests only when the suite had started. */
struct report_data {
	const char *project;                   /* the project's name for titles; may be NULL */
	const char *node;                      /* the node's name; may be NULL */
	const char *gate_version;              /* may be NULL */
	int64_t started;                       /* unix seconds of the run's start; 0: not shown */
	const struct snapshot *before, *after; /* may be NULL (gate stopped before them) */
	const struct findings *findings;       /* may be NULL */
	const struct test_run *tests;          /* may be NULL */
	const struct baseline *history;        /* the noted runs, oldest first; may be NULL */
	size_t nhistory;
	const char *
	        baseline_where; /* "origin/main:.gate/baseline.json at 1a2b3c4d5e6f"; may be NULL */
	const char *junit_path; /* may be NULL */
	const char *root;       /* test files under this directory are shown relative to it
	                           (the project); may be NULL */
	const char *error;      /* gate could not finish: why (the verdict is then "ERROR") */
	/* --repeat's figures per run and --sample's series; may be NULL */
	const struct repeat_data *repeat;
	const struct sample_series *samples;
	/* `gate merge`: what grew in each partition's node (a table with the whole suite's sum);
	 * NULL: none */
	const struct report_part *parts;
	size_t nparts;
	/* a cluster run's nodes, or a merged run's partitions: the console summary and the JUnit
	 * file give each its own memory section (they do not read findings then; the Markdown,
	 * HTML and annotations read findings, every node's, labelled); NULL: one node */
	const struct report_node *nodes;
	size_t nnodes;
	/* the JUnit file's own: <testsuite hostname> (NULL: this machine's name), the time
	 * of the gate.memory suite (the snapshots' GCs), the directory testcases' file= are
	 * relative to (the git repository's root, as CI readers link them; NULL: as recorded) */
	const char *hostname;
	double memory_time_s;
	const char *file_root;
};

/* The run's verdict (model/verdict.h's model_verdict): ERROR when d->error, FAILED when a
 * memory rule or a test failed or the suite did not finish, else PASSED. */
enum gate_verdict report_verdict(const struct report_data *d);

/* Why it failed, for a verdict line: "1 memory rule, 2 tests" (model_verdict_why); "" when it
 * passed. */
void report_why(char *buf, size_t len, const struct report_data *d);

/* The module as people write it: "Foo.BarTest" for "Elixir.Foo.BarTest". Borrowed. */
const char *report_module_name(const char *module);

/* The next character of text from the suite at *p, which it advances: ANSI escapes are
 * skipped, invalid UTF-8 (overlongs, surrogates, bytes that start nothing) and control
 * characters other than '\n' and '\t' come back as U+FFFD ('\r' too). Returns 0 at the end. */
uint32_t report_text_next(const unsigned char **p);

/* How a writer escapes one character: the text to write instead, or NULL for the
 * character itself (as UTF-8). */
typedef const char *(*report_escape_fn)(uint32_t cp, void *arg);

/* Writes the text from the suite s (NULL: nothing) to out through report_text_next, each
 * character escaped by esc, at most max_chars characters and then "…". */
void report_text_write(FILE *out, const char *s, size_t max_chars, report_escape_fn esc, void *arg);

/* Appends the UTF-8 encoding of cp (at most 4 bytes) to out; returns its length. */
size_t report_utf8_put(char *out, uint32_t cp);

/* path relative to root when it is inside it ("test/foo_test.exs"), else path. Borrowed. */
const char *report_path_rel(const char *path, const char *root);

/* How many test modules (or tests) the "top growing" lists show. */
#define REPORT_TOP_GROWING 5

/* The test modules, or the tests when they were measured one by one (*tests), that grew
 * total most (rules/attribution.c's ranking): up to max indices into idx. */
size_t report_top_growing(const struct test_run *run, size_t *idx, size_t max, bool *tests);

/* The label of entry i of that ranking, "Foo.BarTest (async, shared with 2)" or
 * "Foo.BarTest \"test name\"", and its figures. */
const struct mem_delta *report_growing_entry(char *label, size_t len, const struct test_run *run,
                                             size_t i, bool tests);

/* Percent growth of delta over before as text: "+12.5 %", "new", "-", ">+9999 %". */
void report_pct_format(char *buf, size_t len, int64_t before, int64_t delta);

#endif
