/* rules/tags.h: limits written where the tests are (ExUnit tags), severity, and where each
 * finding points a reviewer.
 *
 * A test tagged `@tag gate: [max_growth: "1 MB"]` (or its module, `@moduletag gate: [...]`)
 * is measured on its own by the probe (GC'd snapshots at its edges) and judged here against
 * its limits: one finding per tagged test, rule "tag". `@tag gate: false` exempts a test: it
 * is never named as a culprit (nor a module whose tests are all exempt).
 *
 * Keys of the tag (values as in gate.toml):
 *   max_growth      bytes the test may leave behind: its growth of processes_used + ets +
 *                   binary + atom_used between its GC'd edges ("1 MB", or an integer of bytes)
 *   max_processes   processes it may leave alive (process count after - before)
 *   max_ets_tables  ETS tables it may leave alive
 *   severity        "error" (default) or "warn"
 * Async tests: the figure is the node's growth over the test's own run, so what async tests
 * running alongside retained in that window counts against it too (never less than the
 * test's own; the message says "async"). Tag a test of a sync module for its exact figure.
 *
 * Severity: a failing finding whose rule is "warn" ([severity] in gate.toml, or --warn-only
 * for every rule) becomes VERDICT_SKIP with warned set and its message prefixed "warning: ":
 * shown by every writer, never failing the gate.
 *
 * Nothing here does I/O.
 */
#ifndef GATE_RULES_TAGS_H
#define GATE_RULES_TAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"
#include "model/tests.h"

/* The rules a severity can be set for, in gate.toml's [severity] table. */
enum severity_rule {
	SEVERITY_GROWTH,
	SEVERITY_ETS,
	SEVERITY_BINARY,
	SEVERITY_PROCESS,
	SEVERITY_ATOM,
	SEVERITY_ALLOCATOR,
	SEVERITY_PORTS,
	SEVERITY_PTERM,
	SEVERITY_BASELINE,
	SEVERITY_TREND,
	SEVERITY_TAG,
	SEVERITY_MODULES,
	SEVERITY_RULE_COUNT
};

struct severity_config {
	bool warn[SEVERITY_RULE_COUNT]; /* default false: every rule fails the gate */
};

/* The finding rule name of r ("growth", ..., "persistent_term", "tag"); NULL out of range. */
const char *severity_rule_name(enum severity_rule r);

/* A test's parsed `gate` tag. Limits are -1 when not set. */
struct tag_limits {
	bool exempt;
	int64_t max_growth;
	int64_t max_processes;
	int64_t max_ets_tables;
	bool warn;
	int64_t max_peak; /* the test's RSS peak above its start; judged by rules/peak.h */
};

/* Parses a test_result's gate_tag text. Returns 0, or -1 with err naming the key and a fix. */
int tags_parse(const char *tag, struct tag_limits *out, char *err, size_t errlen);

/* A test exempt from being named as a culprit (`@tag gate: false`). */
bool tags_test_exempt(const struct test_result *t);
/* A module whose every recorded test is exempt (`@moduletag gate: false`). */
bool tags_module_exempt(const struct test_run *run, const char *module);
/* tags_module_exempt for every module of run at once: out[i] for run->modules[i] (out holds
 * run->nmodules). One pass over the tests (modules found by name in a sorted copy), where
 * asking module by module passes over every test for each. 0, or -1 when out of memory. */
int tags_modules_exempt(const struct test_run *run, bool *out);

/* Appends one "tag" finding per tagged test that ran, failing ones first in the list (they
 * are the most specific findings there are). Returns 0; -1 on allocation failure; -2 for a
 * tag that does not parse, with err saying which test (file:line), which key, and the fix. */
int tags_check(struct findings *out, const struct test_run *run, const struct severity_config *cfg,
               char *err, size_t errlen);

/* Turns every failing finding whose rule is warn (or all of them with warn_only) into a
 * warning (see above). Returns the number of warnings, or -1 on allocation failure. */
int severity_apply(struct findings *out, const struct severity_config *cfg, bool warn_only);

/* Gives each finding with a culprit and no file the culprit test's file and line (the
 * culprit test's, else the first test of the culprit module; a culprit named as a snapshot
 * names modules, "Foo.BarTest", is then spelt as ExUnit does, "Elixir.Foo.BarTest").
 * Returns 0, or -1 on allocation failure. */
int tags_locate(struct findings *out, const struct test_run *run);

/* Of a finding's message, the growth judged by a tag: processes_used + ets + binary +
 * atom_used of a delta. */
int64_t tags_judged_growth(const struct mem_delta *d);

#endif
