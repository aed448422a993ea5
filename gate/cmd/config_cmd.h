/* gate/cmd/config_cmd.h: `gate config check`, `init` and `reference`: a gate.toml checked and
 * printed, a short one written, the reference of every key. */
#ifndef GATE_CONFIG_CMD_H
#define GATE_CONFIG_CMD_H

/* Parses the subcommand's argv (argv[0] is "config") and returns the exit code. */
int config_cmd_main(int argc, char **argv);

#endif
