/* gate/run/exec_mode.c: the workload of `gate run --exec CMD` (gate/run/pipeline.h):
 * the command instead of mix test, with what it needs to reach the node in its environment
 * (GATE_NODE, GATE_NODES, GATE_NODE_PORT, GATE_COOKIE_FILE) when the node is reachable: an
 * attached one, or one gate started with --distributed NAME (without it the node
 * is not distributed). Its exit status is the one "test" of the run. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "gate/run/pipeline.h"
#include "model/tests.h"

/* What the command gets to reach the node. Returns 0, or -1 with err. */
static int exec_environment(struct run *r, char *err, size_t errlen)
{
	if (r->ses.node.pid > 0 && !r->ses.node.distributed)
		return 0; /* nonode@nohost: nothing to reach it by */
	if (exec_env_add(&r->env, "GATE_NODE", r->ses.name) < 0)
		goto oom;
	if (r->opts->cluster) {
		char *names = run_cluster_names(r);
		int rc = names ? exec_env_add(&r->env, "GATE_NODES", names) : -1;
		free(names);
		if (rc < 0)
			goto oom;
	}
	if (r->ses.node.pid > 0) {
		/* a node gate started: no epmd, a random cookie: both handed over */
		char port[16];
		snprintf(port, sizeof(port), "%d", r->ses.node.port);
		if (exec_env_add(&r->env, "GATE_NODE_PORT", port) < 0)
			goto oom;
		return exec_env_cookie_file(&r->env, r->ses.node.cookie, err, errlen);
	}
	if (r->opts->cookie_file) {
		char path[PATH_MAX];
		if (exec_env_add(&r->env, "GATE_COOKIE_FILE",
		                 realpath(r->opts->cookie_file, path) ? path
		                                                      : r->opts->cookie_file) < 0)
			goto oom;
	}
	return 0;
oom:
	errtext_set(err, errlen, NULL, "out of memory building the --exec command's environment");
	return -1;
}

static int exec_run_workload(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "running the --exec command";
	if (exec_environment(r, err, errlen) < 0) {
		exec_env_clear(&r->env);
		return -1;
	}
	run_progress(r, "running %s (node %s)", r->opts->exec, r->ses.name);
	int rc = exec_workload(r->opts->exec, r->project, &r->env, r->cfg.test_timeout_ms,
	                       r->cfg.stop_timeout_ms, &r->ses.conn, &r->tests, err, errlen);
	if (rc == 0) {
		const struct test_result *t = &r->tests.tests[r->tests.count - 1];
		run_progress(r, "--exec command %s: %s",
		             t->state == TEST_PASSED ? "passed" : "failed",
		             t->message ? t->message : "exited with status 0");
	}
	exec_env_clear(&r->env);
	return rc;
}

const struct run_workload exec_mode_workload = {
        .name = "--exec command",
        .run = exec_run_workload,
};
