/* gate/run/pipeline.h: what the steps of `gate run` share (run.c), and the two small
 * interfaces the modes plug in behind:
 *   - a scope says where the figures come from: the one node gate started or attached to
 *     (single_mode.c), or the attached node and every node of its cluster (cluster_mode.c);
 *   - a workload says what runs between the two snapshots: mix test inside the node
 *     (suite_mode.c), a rebar3 project's EUnit and Common Test inside the node
 *     (rebar_mode.c), or an outside command (exec_mode.c, --exec).
 * Attach mode is the session's (gate/probe/session.h): the same steps, a node gate did not
 * start. --repeat wraps the workload: its `again` hook runs it 2..N times (gate/run/repeat_step.h).
 */
#ifndef GATE_RUN_PIPELINE_H
#define GATE_RUN_PIPELINE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base/errtext.h"
#include "ci/store/baseline_file.h"
#include "gate/config/config.h"
#include "gate/probe/probe.h"
#include "gate/probe/sample.h"
#include "gate/probe/session.h"
#include "gate/run/baseline_step.h"
#include "gate/run/cluster.h"
#include "gate/run/exec.h"
#include "gate/run/rebar_build.h"
#include "gate/run/repeat_step.h"
#include "gate/run/run_opts.h"
#include "gate/run/runner.h"
#include "model/verdict.h"

struct run;

struct run_scope {
	const char *name;
	/* after the session opened (the cluster: its nodes, the probe pushed); NULL: nothing */
	int (*open)(struct run *r, char *err, size_t errlen);
	/* one GC'd snapshot ("before" or "after") into out, or into every node's; when
	 * r->after_sent, the after-snapshot's request went already: its reply is waited for */
	int (*snapshot)(struct run *r, const struct probe_snapshot_opts *so, const char *which,
	                struct snapshot *out, char *err, size_t errlen);
	/* sends the after-snapshot's request without waiting for it (run_after_early); NULL: the
	 * scope cannot */
	int (*snapshot_send)(struct run *r, const struct probe_snapshot_opts *so, char *err,
	                     size_t errlen);
	/* the judge (judge/judge.h) on the scope's snapshots; -1 with r->err set (out of memory,
	 * a test's gate tag that does not parse) */
	int (*judge)(struct run *r);
	/* adds the scope's own figures to the verdict (the cluster: every node's failing rules,
	 * the nodes lost mid-run); NULL: none */
	void (*tally)(const struct run *r, struct verdict_tally *vt);
};

struct run_workload {
	const char *name;
	/* before the before-snapshot: pays one-time costs; NULL: nothing */
	int (*prepare)(struct run *r, char *err, size_t errlen);
	/* the workload, once; its results into r->tests */
	int (*run)(struct run *r, char *err, size_t errlen);
	/* --repeat: runs 2..N, each on a clean slate of results; NULL: cannot repeat */
	int (*again)(void *r, char *err, size_t errlen);
};

extern const struct run_scope single_scope, cluster_scope;
extern const struct run_workload suite_mode_workload, exec_mode_workload, rebar_mode_workload;

struct run {
	const struct run_opts *opts;
	const struct run_scope *scope;
	const struct run_workload *work;
	struct config cfg;
	char project[PATH_MAX];
	char junit[PATH_MAX * 2];
	struct session ses;
	struct snapshot before, after;
	struct test_run tests;
	struct findings findings;
	struct baseline_step bl; /* the baseline read before the run */
	struct baseline newbase; /* this run's figures, for --json and --update-baseline */
	char *suite_error;
	time_t started;
	bool judged;     /* the rules ran: the reports carry the results (also with a late error) */
	bool after_sent; /* the after-snapshot's request went when the workload's reply came in */
	struct cluster cl;            /* --cluster: every node, with its snapshots and findings */
	struct exec_env env;          /* --exec: what the command gets to reach the node */
	struct repeat_step rep;       /* --repeat N: runs 1..N, the judged pair */
	struct sample_series samples; /* --sample: light snapshots during the run */
	char err[4096];
	/* what `gate merge` checks the partitions' results against each other with */
	char config_digest[17];       /* run_json_digest of the effective gate.toml */
	int partition, partitions;    /* k of N of a `--partitions N` run; 0: not partitioned */
	struct runner_choice runner;  /* which tests run: mix test, or a rebar3 project's */
	struct rebar_paths erl_paths; /* a rebar3 project: the node's code paths */
};

#define run_progress(r, ...) session_progress(&(r)->ses, __VA_ARGS__)
/* Called (arg: the run) when the workload's reply is in, before gate decodes it: when the
 * after-snapshot comes next (no --repeat run, no --sample to fetch) and the scope can, its
 * request goes now, and the node takes it while gate decodes the tests (5 ms at 1 000 tests,
 * 45 ms at 10 000). */
void run_after_early(void *arg);

/* The cluster's node names, blank-separated, malloc'd (NULL when out of memory). */
char *run_cluster_names(const struct run *r);

#endif
