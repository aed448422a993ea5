/* gate/probe/faithful.h: what makes `gate run` behave as bare `mix test` would.
 *
 * - the suite's verdict is `mix test`'s own exit status, reported by the probe with the
 *   reason in Mix's words (faithful_run_decode);
 * - the preparation a `test` alias does before its "test" step, and the project's
 *   applications, run before the before-snapshot (faithful_prep), in a node booted with
 *   `mix run --no-start` so that a --no-start suite finds them not started;
 * - the node is not distributed (gate/node/node.h), so a test_helper that starts
 *   distribution under a name of its own gets it as under bare `mix test`;
 * - --partitions with MIX_TEST_PARTITION: the partition (faithful_partition).
 */
#ifndef GATE_FAITHFUL_H
#define GATE_FAITHFUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate/node/eic.h"
#include "gate/node/term.h"
#include "model/tests.h"

/* The most tests gate records per run (the formatter's cap): 200 000. A suite with more is
 * refused (exit 2, cap and count named). GATE_TEST_CAP overrides it: a hidden setting for
 * gate's own tests only (so that the refusal is testable without 200 001 tests). */
int64_t faithful_test_cap(void);

/* The ninth element of a test record, #{app => Bin, reason => Bin}, into r. 0 or -1. */
int faithful_test_decode(const struct term *extra, struct test_result *r);

/* exit_status, exit_reason, suite_ran, dropped and partition of the probe's suite result
 * into out (absent keys: an older probe, out->mix_reported stays false). 0 or -1 with err. */
int faithful_run_decode(const struct term *body, struct test_run *out, char *err, size_t errlen);

/* Runs gate_probe:run_prep/2 with the test arguments: the `test` alias's preparation
 * steps and, when start is true (a node gate booted with --no-start), the applications
 * unless --no-start is given. Returns 0, or -1 with err (Mix's words and exit status). */
int faithful_prep(struct eic *c, char *const *args, size_t nargs, bool start, int timeout_ms,
                  char *err, size_t errlen);

/* The partition of a `--partitions N` run (N > 1): MIX_TEST_PARTITION; 0 otherwise. */
int faithful_partition(char *const *args, size_t nargs);

/* N of that run's `--partitions N` when it is a partition (faithful_partition > 0);
 * 0 otherwise. */
int faithful_partitions(char *const *args, size_t nargs);

/* A partitioned run's baseline is the partition's own: "DIR/NAME.json" becomes
 * "DIR/NAME.partition-N.json" (each partition runs other tests; their figures differ).
 * path is the configured path (owned, may be NULL for the default) and is replaced.
 * Returns 0, or -1 when out of memory. */
int faithful_baseline_partition(char **path, const char *default_path, int partition);

/* The root of the git repository holding dir (the nearest parent with .git), into out.
 * Returns 0, or -1 when dir is in no repository. */
int faithful_repo_root(const char *dir, char *out, size_t len);

/* An umbrella run (tests of two apps or more): every test module is renamed "MODULE (app
 * APP)" in the tests, the attributed module growth and the after-snapshot's module owners,
 * so that the JUnit suites and every culprit name the app beside the module. Returns 0, or
 * -1 when out of memory (names then partly renamed, all still valid). */
int faithful_name_apps(struct test_run *run, struct snapshot *after);

#endif
