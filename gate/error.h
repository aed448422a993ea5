/* gate/error.h: how gate reports an error, the one way. Functions below the commands fill a
 * caller's buffer with errtext_set (base/errtext.h: "NAME: what: why; the fix") and return -1;
 * the command that gives up prints it once with gate_error and exits GATE_EXIT_ERROR. */
#ifndef GATE_ERROR_H
#define GATE_ERROR_H

#include "base/errtext.h"
#include "gate/exit.h"

/* Prints "gate: error: " + the formatted text + "\n" to stderr; returns GATE_EXIT_ERROR. */
int gate_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A command line gate cannot take: prints "gate: error: " + the formatted text and "Run 'gate
 * CMD--help' for usage." to stderr; returns GATE_EXIT_ERROR. cmd is "" or the subcommand with a
 * trailing space ("run "). */
int gate_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "gate: warning: " + the formatted text + "\n" to stderr. */
void gate_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
