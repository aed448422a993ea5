/* rules/reproduce.h: the command that reproduces a failing finding, at its end: the run's own
 * command (`mix gate`, `rebar3 gate` or `gate run`, with the options that change what is
 * measured) on the culprit alone, with the run's test arguments other than those that chose
 * which tests run. The culprit alone is, for mix test, its test file (and line, when one
 * test is named); for a rebar3 project, its Common Test suite (--suite) or EUnit module
 * (--module). gate run --confirm runs the same selection (gate/run/confirm_step.c).
 *
 * Ownership: struct reproduce_cmd borrows everything. Nothing here does I/O.
 */
#ifndef GATE_RULES_REPRODUCE_H
#define GATE_RULES_REPRODUCE_H

#include <stddef.h>

#include "model/finding.h"

/* Which runner ran the tests: how a culprit is selected alone. */
enum reproduce_runner {
	REPRODUCE_MIX,   /* mix test: a test file, test/x_test.exs[:LINE] */
	REPRODUCE_REBAR, /* a rebar3 project's EUnit and Common Test: --module M, --suite S */
};

struct reproduce_cmd {
	const char *prefix;     /* "mix gate", "gate run --per-test": what comes before -- */
	const char *project;    /* the project's directory: a file under it is named relative */
	char *const *test_args; /* the run's test arguments */
	size_t ntest_args;
	enum reproduce_runner runner;
};

/* The test arguments that run the culprit alone, at most 2, into sel (their text in buf):
 * mix test: its test file relative to project, ":line" when line > 0 (NULL file: 0);
 * rebar3: "--suite" and the culprit when its name ends in _SUITE (Common Test requires it),
 * else "--module" and the culprit (an EUnit module). Returns how many. */
size_t reproduce_select(enum reproduce_runner runner, const char *project, const char *culprit,
                        const char *file, int line, char *buf, size_t len, const char *sel[2]);

/* How many arguments from args[i] choose which tests run, and so give way to the culprit's
 * selection: mix test: 1 for a test file or directory (an argument ending in .exs or
 * .exs:LINE, "test" or under "test/"); rebar3: 2 for --module, --suite, --group or --case
 * and its value, 1 for --module=M and the like; 0 for an argument kept. */
size_t reproduce_selecting(enum reproduce_runner runner, char *const *args, size_t n, size_t i);

/* "mix gate -- test/x_test.exs:12 --only feed" into buf: prefix, "--", the culprit's
 * selection (reproduce_select), then every test argument but those that chose which tests
 * run; arguments a shell would split or expand are single-quoted. Truncated to len. */
void reproduce_line(char *buf, size_t len, const struct reproduce_cmd *cmd, const char *culprit,
                    const char *file, int line);

/* Ends every failing finding with a culprit the runner can select alone (mix test: one with
 * an Elixir test file, .exs; rebar3: every culprit module) with "reproduce: <reproduce_line>"
 * (a line only when it names one test). Returns 0, or -1 on allocation failure. */
int reproduce_annotate(struct findings *out, const struct reproduce_cmd *cmd);

#endif
