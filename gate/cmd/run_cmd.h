/* gate/cmd/run_cmd.h: `gate run`: the project's suite measured in its node (gate/run/run.h). */
#ifndef GATE_RUN_CMD_H
#define GATE_RUN_CMD_H

#include <stdbool.h>

/* gate was started by `mix gate` or `rebar3 gate` (GATE_EXIT_WITH_PARENT=1, which
 * gate/cmd/cli.c reads and unsets first): a finding's reproduce line then says `mix gate`, or
 * `rebar3 gate` in a rebar3 project. */
extern bool run_cmd_via_plugin;

/* Parses the subcommand's argv (argv[0] is "run") and returns the exit code. */
int run_cmd_main(int argc, char **argv);

#endif
