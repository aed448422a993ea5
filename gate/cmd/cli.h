/* gate/cli.h: the command line: subcommands, options, help and version. */
#ifndef GATE_CLI_H
#define GATE_CLI_H

#define GATE_VERSION "0.1.0"

/* Prints "gate: error: " + fmt (with arg) and "Run 'gate CMD--help' for usage." to stderr and
 * returns GATE_EXIT_ERROR. cmd is "" or the subcommand with a trailing space ("run "). */
int cli_usage_error(const char *cmd, const char *fmt, const char *arg);

/* Parses argv and runs the subcommand. Returns the process exit code. */
int cli_main(int argc, char **argv);

#endif
