/* gate/cli.h: the command line: subcommands, options, help and version. */
#ifndef GATE_CLI_H
#define GATE_CLI_H

#define GATE_VERSION "0.1.0"

/* Parses argv and runs the subcommand. Returns the process exit code. */
int cli_main(int argc, char **argv);

#endif
