/* gate/cmd/config_cmd.h: `gate config check`: a gate.toml checked and printed. */
#ifndef GATE_CONFIG_CMD_H
#define GATE_CONFIG_CMD_H

/* Parses the subcommand's argv (argv[0] is "config") and returns the exit code. */
int config_cmd_main(int argc, char **argv);

#endif
