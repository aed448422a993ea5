/* gate/cmd/snapshot_cmd.h: `gate snapshot`: one snapshot of a project's node or a running node. */
#ifndef GATE_SNAPSHOT_CMD_H
#define GATE_SNAPSHOT_CMD_H

/* Parses the subcommand's argv (argv[0] is "snapshot") and returns the exit code. */
int snapshot_cmd_main(int argc, char **argv);

#endif
