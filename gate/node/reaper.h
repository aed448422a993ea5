/* gate/node/reaper.h: no OS process a run started outlives gate: not the node's, not the --exec
 * workload's, not the ones the suite starts in sessions of their own (:os.cmd with "&",
 * setsid, nohup, every Port.open program: the runtime's erl_child_setup puts each in a new
 * session, out of the node's process group, so killing the group misses them).
 *
 * How: gate forks the node and the workload through a reaper, a small process that is a
 * child subreaper (PR_SET_CHILD_SUBREAPER): every process below it that loses its parent is
 * re-parented to it, whatever session it is in. When the one child it runs for ends, or gate
 * dies (PR_SET_PDEATHSIG, so this holds after SIGKILL of gate too), the reaper kills all its
 * children, again and again as orphans come back to it, until it has none; then it exits
 * with the child's status (or signal), so gate sees what the child did. gate itself is a
 * subreaper too and sweeps its own children at exit, for a reaper that was killed with its
 * process group. No timing: the sweep ends when /proc shows no child left.
 *
 * One kind is spared: an epmd the suite started (its first node booted with -name starts
 * `epmd -daemon` when none runs). Under bare `mix test` that daemon outlives the VM, and the
 * suite's next run, a test of another project or the developer's shell may use it; so it
 * outlives gate's node too (re-parented to init once gate exits). */
#ifndef GATE_REAPER_H
#define GATE_REAPER_H

/* In gate, before it forks the node or the workload: makes gate a child subreaper and
 * registers (once) reaper_kill_all at exit. Safe to call more than once. */
void reaper_gate_init(void);

/* In a child gate has just forked (after signals_child_reset, before exec): forks once more.
 * The new child returns and goes on to exec; this process becomes its reaper and never
 * returns. remove_file: a file (and then its directory, if empty) the reaper removes when
 * gate dies before it (a secret such as the workload's cookie file); may be NULL. If the
 * fork fails, returns in this process (the run goes on without a reaper). */
void reaper_become(const char *remove_file);

/* Kills every child of the calling process with SIGKILL and reaps it, until none is left
 * but epmd daemons (orphans re-parented to a subreaper are its children too). */
void reaper_kill_all(void);

#endif
