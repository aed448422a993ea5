/* gate/cmd/cli.c: the command line: which subcommand (each in its own file), the main help and
 * the version.
 * Help goes to stdout when asked for (exit 0), usage errors to stderr (exit 2). */
#include "gate/cmd/cli.h"
#include "gate/version.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/json_stdout.h"
#include "gate/cmd/baseline_cmd.h"
#include "gate/cmd/config_cmd.h"
#include "gate/cmd/explain_cmd.h"
#include "gate/cmd/hook_cmd.h"
#include "gate/cmd/merge_cmd.h"
#include "gate/cmd/run_cmd.h"
#include "gate/cmd/snapshot_cmd.h"
#include "gate/cmd/version_cmd.h"
#include "gate/cmd/watch_cmd.h"
#include "gate/error.h"
#include "gate/exit.h"

static const char main_help[] =
        "gate " GATE_VERSION ": a memory quality gate for Elixir/Erlang test suites\n"
        "\n"
        "usage: gate <command> [options]\n"
        "\n"
        "commands:\n"
        "  run            run the project's mix test inside a fresh node and judge its memory;\n"
        "                 or in a running node (--attach), under a workload (--exec), over a\n"
        "                 whole cluster (--cluster)\n"
        "  snapshot       one snapshot of a project's node or a running node (tables or JSON)\n"
        "  baseline       update the memory baseline in git, or list its history (notes)\n"
        "  config         init: write a short commented gate.toml; check: validate one and\n"
        "                 print the effective configuration; reference: every key (Markdown)\n"
        "  hook           install or uninstall gate as a git pre-push or pre-commit hook\n"
        "  watch          sample a running node at an interval (JSON Lines or Prometheus text)\n"
        "                 and alert when a category rises above its rolling average\n"
        "  merge          join the --json results of a suite's partitions (CI jobs) into one\n"
        "                 verdict, one set of reports and one baseline commit\n"
        "  explain RULE   what a rule measures, its usual causes and fixes (every failing\n"
        "                 finding names its rule)\n"
        "\n"
        "options:\n"
        "  -h, --help     this help; `gate <command> --help` for a command's\n"
        "  -V, --version  print gate's version and how this binary was built\n"
        "\n"
        "exit codes: 0 passed, 1 a memory rule or a test failed, 2 gate could not run\n";

/* GATE_EXIT_WITH_PARENT=1 (set by `mix gate` and `rebar3 gate`, integrations/): SIGTERM when the
 * process that started gate dies. An Erlang VM starts its port programs from erl_child_setup, in a
 * process group of their own that a terminal's Ctrl-C does not reach, and a VM halted by
 * Ctrl-C (or killed) runs no code of its own: its erl_child_setup exits with it, and gate
 * then stops its node and exits as on any SIGTERM. Unset so that nothing gate starts
 * inherits it. */
static void cli_exit_with_parent(void)
{
	const char *v = getenv("GATE_EXIT_WITH_PARENT");
	if (!v || strcmp(v, "1") != 0)
		return;
	run_cmd_via_plugin = true;
	unsetenv("GATE_EXIT_WITH_PARENT");
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() == 1)
		raise(SIGTERM); /* the parent was gone before the request took effect */
}

int cli_main(int argc, char **argv)
{
	cli_exit_with_parent();
	if (argc < 2)
		return gate_usage_error("", "%s", "no command given (try: gate run)");
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		fputs(main_help, stdout);
		return GATE_EXIT_PASS;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
		version_print(stdout);
		return GATE_EXIT_PASS;
	}
	/* --json -: stdout carries the JSON document alone, everything else goes to stderr */
	char err[256];
	if (json_stdout_wanted(argc - 1, argv + 1) && json_stdout_reserve(err, sizeof(err)) < 0) {
		gate_error("%s", err);
		return GATE_EXIT_ERROR;
	}
	if (strcmp(cmd, "run") == 0)
		return run_cmd_main(argc - 1, argv + 1);
	if (strcmp(cmd, "snapshot") == 0)
		return snapshot_cmd_main(argc - 1, argv + 1);
	if (strcmp(cmd, "config") == 0)
		return config_cmd_main(argc - 1, argv + 1);
	if (strcmp(cmd, "baseline") == 0)
		return baseline_cmd_main(argc - 1, argv + 1);
	if (strcmp(cmd, "hook") == 0)
		return hook_cmd_main(argc - 1, argv + 1);
	if (strcmp(cmd, "watch") == 0)
		return watch_cmd_main(argc - 1, argv + 1);
	if (strcmp(cmd, "merge") == 0) /* a partitioned suite's results as one */
		return merge_cmd_main(argc - 1, argv + 1);
	if (strcmp(cmd, "explain") == 0)
		return explain_cmd_main(argc - 1, argv + 1);
	return gate_usage_error("",
	                        "unknown command %s (commands: run, snapshot, baseline, config, "
	                        "hook, watch, merge, explain)",
	                        cmd);
}
