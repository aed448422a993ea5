/* gate/cmd/cli.h: the command line: subcommands, options, help and version. */
#ifndef GATE_CLI_H
#define GATE_CLI_H

/* Parses argv and runs the subcommand. Returns the process exit code. */
int cli_main(int argc, char **argv);

#endif
