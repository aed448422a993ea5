/* gate/cmd/baseline_cmd.h: `gate baseline update|history` on the command line (the baseline
 * step of `gate run` is gate/run/baseline_step.h). */
#ifndef GATE_BASELINE_CMD_H
#define GATE_BASELINE_CMD_H

/* `gate baseline update|history ...`; argv[0] is "baseline". Returns the exit code. */
int baseline_cmd_main(int argc, char **argv);

#endif
