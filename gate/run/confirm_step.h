/* gate/run/confirm_step.h: gate run --confirm ([run] confirm): after a failing memory verdict
 * whose failing findings name one culprit test module, that module's test file runs alone in
 * a fresh node (a `gate run` of its own, --repeat 3, bounded by [run] confirm_timeout), and
 * each of those findings gets one more part (PART_CONFIRM): "confirmed alone: FILE grows
 * STRUCTURE by +N in each run", or "not reproduced alone: it needs what ran before it
 * (MODULE)". Skipped, and said so in the findings, without a single culprit, with --attach,
 * in a partition of a --partitions run, or for --exec and rebar3 projects. It never changes
 * the verdict nor the exit code, and nothing it starts outlives it.
 */
#ifndef GATE_RUN_CONFIRM_STEP_H
#define GATE_RUN_CONFIRM_STEP_H

struct run;

/* Runs the confirmation when asked and due; adds its result or why it was skipped to the
 * failing findings. Returns 0, or -1 on allocation failure (r->err set). */
int confirm_step(struct run *r);

#endif
