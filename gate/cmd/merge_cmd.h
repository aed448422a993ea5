/* gate/cmd/merge_cmd.h: `gate merge RESULT.json...`: the results of a suite's
 * partitions, run in separate CI jobs, joined into one verdict, one set of reports and, on
 * the main branch, one baseline commit. */
#ifndef GATE_MERGE_CMD_H
#define GATE_MERGE_CMD_H

/* Runs `gate merge` with argv[0] = "merge". Returns the process exit code. */
int merge_cmd_main(int argc, char **argv);

#endif
