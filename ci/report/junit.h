/* ci/report/junit.h: the JUnit XML report: memory findings and ExUnit results, for CI readers.
 *
 * The report validates against the Jenkins xUnit schema (junit-10.xsd, tests/junit/validate.sh)
 * once the testcase file/line attributes, which GitLab and GitHub readers use, are removed. Strings
 * from the test suite are made safe first: invalid UTF-8 becomes U+FFFD, characters XML 1.0
 * forbids are written visibly as "\xNN", ANSI colour escapes are dropped, failure bodies are
 * capped at JUNIT_BODY_MAX bytes. Nothing here keeps a pointer to its arguments.
 */
#ifndef GATE_CI_REPORT_JUNIT_H
#define GATE_CI_REPORT_JUNIT_H

#include <stddef.h>
#include <stdint.h>

#include "ci/report/report.h"

/* Cap on the text of one <failure>/<error>/<skipped> body; longer text is cut and says so. */
#define JUNIT_BODY_MAX (64 * 1024)
/* Cap on a message="..." attribute (the first line of the message). */
#define JUNIT_ATTR_MAX 1024

/* Writes the report of the view d to path: a <testsuites name="gate: PROJECT"> (name="gate"
 * without a project) holding a gate.run suite with one error testcase when d->error, the
 * gate.memory suite (one gate.memory[NODE] suite per node of d->nodes instead, classnames
 * "gate.memory.RULE[NODE]"; a node's error is an error testcase), with --repeat's figures
 * per run as its properties (gate.repeat.runs, gate.repeat.run.K.CAT[.delta]), then a suite
 * per test module and a mix.test suite when mix test would fail for more than its tests.
 * Timestamps are d->started's, written as UTC "2026-12-02T12:00:00" (0: now).
 *
 * Atomically: creates the missing parent directories, writes a temp file beside path,
 * fsyncs it and renames it over path. d may be NULL (nothing to report).
 * Returns 0, or -1 with err holding "PATH: what failed: why" (err may be NULL). On failure the
 * temp file is removed and an existing file at path is left as it was. */
int junit_write(const char *path, const struct report_data *d, char *err, size_t errlen);

/* Starts opening what junit_write needs (libxml2, ci/report/xml_lib.h) in a thread of its
 * own, for a process about to wait: the write then does not pay for it. Best effort: a
 * library that cannot be opened is said by junit_write. */
void junit_warm(void);

/* Whether junit_write can run: 0 once its library is loaded (waiting for junit_warm's thread
 * when it is still at it), or -1 with err saying which library is missing and what to
 * install: for a caller that would rather stop before the work whose report it could not
 * write. */
int junit_ready(char *err, size_t errlen);

#endif
