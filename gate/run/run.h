/* gate/run/run.h: `gate run`, the pipeline: node, GC + snapshot, tests, GC + snapshot, rules,
 * reports, exit code. */
#ifndef GATE_RUN_H
#define GATE_RUN_H

#include "gate/run/run_opts.h"

/* Runs the whole pipeline and returns the process exit code (enum gate_exit, or 128+signal). */
int run_main(const struct run_opts *opts);

#endif
