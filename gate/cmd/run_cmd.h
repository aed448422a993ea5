/* gate/cmd/run_cmd.h: `gate run`: the project's suite measured in its node (gate/run/run.h). */
#ifndef GATE_RUN_CMD_H
#define GATE_RUN_CMD_H

/* Parses the subcommand's argv (argv[0] is "run") and returns the exit code. */
int run_cmd_main(int argc, char **argv);

#endif
