/* rules/peak.h: the run's peak: the node's OS high-water mark during the run
 * (VmHWM, reset at the before-snapshot), the stretch of the suite it happened in (between
 * two ExUnit edges: a test module, or a test with --per-test) and the largest process heaps
 * the node's system monitor reported. */
#ifndef GATE_RULES_PEAK_H
#define GATE_RULES_PEAK_H

#include "model/finding.h"
#include "model/tests.h"
#include "rules/fine.h"

/* Appends, when the after-snapshot carries the tracker's report (else nothing):
 *   rule "peak", subject "run": before the RSS at the before-snapshot, after the peak;
 *     FAIL when cfg->peak_max is not off and the peak passes it, else PASS (context: the
 *     message says where the peak was and the largest heap); SKIP when no peak was read
 *     (no /proc), saying why;
 *   rule "heap", one FAIL per process (by label) whose heap passed cfg->max_heap, naming it
 *     and the test that was running; SKIP "heap" when max_heap is set but gate could not
 *     watch heaps (the suite's own system monitor), saying so; PASS "heap" when none did.
 * A finding's culprit is the test module (and test) when one stands out.
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int peak_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
               const struct fine_config *cfg);

/* `@tag gate: [max_peak: "100 MB"]`: appends, per test that ran with that tag, rule
 * "peak", subject `Module "test"`: FAIL when its peak rose above its start by more than
 * max_peak (the test's file and line as culprit), PASS when not, SKIP saying why when its
 * window could not be measured (an async test shares it with its neighbours; no /proc).
 * run may be NULL. Returns 0; -1 on allocation failure; -2 for a tag that does not parse
 * (err names the test; tags_check says the same first). */
int peak_tags_check(struct findings *out, const struct snapshot *after, const struct test_run *run,
                    char *err, size_t errlen);

/* Where the peak happened, for people: "in FineNif.PeakTest (test \"builds ...\")",
 * "outside any test module (setup, the application)"; "" when not known. */
void peak_where(char *buf, size_t len, const struct fine_level *f);

/* The allocated peak, for people: "allocated peak (carriers) at most 1.2 GB, raised by the run
 * (96.0 MB before it)", or "... not raised by the run: at most 1.2 GB since the node started,
 * set before it"; "" when the probe did not send it. */
void peak_allocated(char *buf, size_t len, const struct fine_level *f);

/* The tests of a "Module\tname" list ("" when none): the first, as culprit and test. */
void peak_first_test(const char *tests, char *module, size_t mlen, char *test, size_t tlen);

#endif
