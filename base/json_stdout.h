/* base/json_stdout.h: `--json -`: the JSON document is all that stdout carries, so that a
 * pipe into jq or a program reads it whole (as `cargo --message-format json` users expect).
 * Everything else that would go to stdout goes to stderr instead: gate's own lines, the
 * console summary, and the output of every child (the node, mix compiling and testing),
 * which inherits descriptor 1.
 *
 * json_stdout_reserve() is called once, first thing, before anything is printed or any
 * child started: the real stdout is kept on a descriptor of its own (closed on exec) and
 * descriptor 1 becomes a copy of stderr. The writers of `--json -` then write there.
 */
#ifndef GATE_BASE_JSON_STDOUT_H
#define GATE_BASE_JSON_STDOUT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether argv (a command's arguments, the command first) asks for JSON on stdout: "--json -"
 * or "--json=-" before a "--" (what follows it is mix test's). */
bool json_stdout_wanted(int argc, char **argv);

/* Keeps the real stdout for the JSON and points descriptor 1 at stderr. Returns 0, or -1 with
 * err saying why (nothing changed then). */
int json_stdout_reserve(char *err, size_t errlen);

/* Writes a whole document of len bytes to the real stdout (the reserved one, else stdout)
 * and flushes it. Returns 0, or -1 with err ("stdout: write failed: ..."). */
int json_stdout_write(const char *text, size_t len, char *err, size_t errlen);

#endif
