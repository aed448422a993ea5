/* rules/reproduce.h: the command that reproduces a failing finding, at its end: the run's own
 * command (`mix gate` or `gate run` with the options that change what is measured) on the
 * culprit's test file (and line, when one test is named), with the run's mix test arguments
 * other than the test files it named.
 *
 * Ownership: struct reproduce_cmd borrows everything. Nothing here does I/O.
 */
#ifndef GATE_RULES_REPRODUCE_H
#define GATE_RULES_REPRODUCE_H

#include <stddef.h>

#include "model/finding.h"

struct reproduce_cmd {
	const char *prefix;     /* "mix gate", "gate run --per-test": what comes before -- */
	const char *project;    /* the project's directory: a file under it is named relative */
	char *const *test_args; /* the run's mix test arguments */
	size_t ntest_args;
};

/* "mix gate -- test/x_test.exs:12 --only feed" into buf: prefix, "--", file (":line" when
 * line > 0), then every test argument but a test file or directory the run named (an
 * argument ending in .exs or .exs:LINE, "test" or under "test/"); arguments a shell would
 * split or expand are single-quoted. Truncated to len. */
void reproduce_line(char *buf, size_t len, const struct reproduce_cmd *cmd, const char *file,
                    int line);

/* Ends every failing finding with a culprit module and an Elixir test file (.exs) with
 * "reproduce: <reproduce_line>" (the line only when it names one test). Returns 0, or -1 on
 * allocation failure. */
int reproduce_annotate(struct findings *out, const struct reproduce_cmd *cmd);

#endif
