/* gate/cmd/run_cmd.c: `gate run`: its options and help; the run itself is gate/run/run.c. */
#include "gate/cmd/run_cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config/units.h"
#include "gate/error.h"
#include "gate/exit.h"
#include "gate/run/run.h"
#include "rules/repeat.h"

static const char run_help[] =
        "usage: gate run [options] [-- MIX_TEST_ARGS...]\n"
        "       gate run --attach NODE [--cookie-file F] [--cluster] [--exec CMD] [options]\n"
        "       gate run [--distributed NAME] --exec CMD [options]\n"
        "\n"
        "Starts the project's node (MIX_ENV=test, not distributed, as mix test's), forces GC\n"
        "and snapshots "
        "erlang:memory, runs mix test inside the node, snapshots again after GC, applies the\n"
        "memory rules (and the baseline, in a git repository) and writes a JUnit report and a "
        "summary.\n"
        "\n"
        "running nodes, workloads and clusters:\n"
        "      --attach NODE       a running node (name@host, long or short names) instead of\n"
        "                          one gate starts; mix test runs in it when it is a Mix node\n"
        "                          in the test env (MIX_ENV=test iex --sname x -S mix);\n"
        "                          -C DIR is then where gate.toml is read and reports go\n"
        "      --cookie-file F     its cookie (else $GATE_COOKIE, else ~/.erlang.cookie)\n"
        "      --exec CMD          run CMD instead of mix test, split like a shell would split\n"
        "                          it but run without one; its exit status is a testcase and\n"
        "                          attached, it gets GATE_NODE (and GATE_NODES); limited by\n"
        "                          node.test_timeout\n"
        "      --distributed NAME  start mode: the node also starts distribution\n"
        "                          as NAME@127.0.0.1 (random cookie, no epmd), for a workload\n"
        "                          that reaches it: GATE_NODE, GATE_NODE_PORT, GATE_COOKIE_FILE;\n"
        "                          without it the node is not distributed, as under mix test\n"
        "      --cluster           with --attach: that node and every node in its nodes(),\n"
        "                          the probe pushed through it, rules and a JUnit suite per node\n"
        "\n"
        "options:\n"
        "  -C, --project DIR       the Mix or rebar3 project (default: the current directory)\n"
        "  -c, --config FILE       configuration (default: DIR/gate.toml when it exists)\n"
        "      --junit FILE        JUnit report (default: DIR/_build/gate/junit.xml)\n"
        "      --boot-timeout DUR  node boot limit, overrides node.boot_timeout (120s, 2min;\n"
        "                          a bare number is seconds, as in gate.toml)\n"
        "      --test-timeout DUR  whole-suite limit, overrides node.test_timeout (30min)\n"
        "      --elixir PATH       the elixir executable (default: elixir from PATH)\n"
        "      --runner R          which tests run ([run] runner): auto (mix test; in a rebar3\n"
        "                          project EUnit, then Common Test when it has suites), mix,\n"
        "                          eunit, ct or eunit,ct\n"
        "      --erl PATH          a rebar3 project's node: the erl executable (default: erl\n"
        "                          from PATH; rebar3 from PATH, or $GATE_REBAR3)\n"
        "  -q, --quiet             no progress lines\n"
        "      --per-test          the growth of each test: light readings (no GC) at its\n"
        "                          edges, within a twentieth of the run's time ([attribution]\n"
        "                          per_test)\n"
        "      --instrument        boot the node with every allocator tagged by origin\n"
        "                          (+Muatags true; 0-4 % CPU): origins beyond NIFs and drivers\n"
        "      --repeat N          leak or warm-up? the suite N times (2..100) in the same node,\n"
        "                          a GC'd snapshot after each; run 1 is the warm-up and the\n"
        "                          rules judge the smallest growth of runs 2..N, N-1 times\n"
        "                          ([run] repeat), e.g. gate run --repeat 3\n"
        "      --confirm           after a failing memory verdict with one culprit test\n"
        "                          module: it alone (its test file, suite or EUnit module) in\n"
        "                          a fresh node, --repeat 3, and the finding says whether it\n"
        "                          grows the same alone\n"
        "                          ([run] confirm; the verdict stays this run's)\n"
        "      --sample INTERVAL   light snapshots (no GC) every INTERVAL during the suite or\n"
        "                          --exec workload, e.g. --sample 250ms: in --json \"samples\",\n"
        "                          charts in --html; a steady rise over >= 1 min fails (soak)\n"
        "      --warn-only         memory findings are warnings: reported, never failing the\n"
        "                          gate (failing tests still fail); [severity] per rule\n"
        "  -h, --help              this help\n"
        "\n"
        "reports and results (colour only on a terminal, never with NO_COLOR set):\n"
        "      --summary FILE      a Markdown summary: verdict, categories, rules, culprits,\n"
        "                          tests (default: appended to $GITHUB_STEP_SUMMARY when set)\n"
        "      --html FILE         one self-contained HTML page: before/after bars, rules, top\n"
        "                          processes and ETS tables, the baseline trend from the notes\n"
        "      --json FILE         the run result as JSON: the figures, findings and tests (for\n"
        "                          gate merge and gate baseline update --from FILE); - writes\n"
        "                          it to stdout alone, everything else to stderr\n"
        "      --comment-flag FILE true when a review comment is due (the gate failed or a\n"
        "                          figure regressed against the baseline), else false\n"
        "      with GITHUB_ACTIONS=true, failed tests and failing rules also print ::error\n"
        "      annotations, at most [attention] annotations (8), and $GITHUB_OUTPUT gets comment=\n"
        "\n"
        "baselines (the after-snapshot against the one committed on the main branch):\n"
        "      --baseline-ref REF  read the baseline at REF with libgit2, no checkout (default:\n"
        "                          [baseline] ref, origin/main, falling back to HEAD);\n"
        "                          worktree reads the working-tree file\n"
        "      --require-baseline  a missing baseline fails the gate instead of being skipped\n"
        "      --update-baseline   after a passing run, write the baseline file\n"
        "      --commit            ... and commit only that file on top of HEAD, with the run's\n"
        "                          summary as a git note under refs/notes/gate\n"
        "      --message M         the commit message for --commit\n"
        "      --force             update the baseline from a failing run too\n"
        "      --allow-outside     write outputs even where a symlink inside the project\n"
        "                          leads out of it (refused by default)\n"
        "\n"
        "Arguments after -- go to mix test, e.g. gate run -- --exclude slow; in a rebar3\n"
        "project --module M, --suite S, --group G and --case C, as rebar3 spells them\n"
        "exit codes: 0 passed, 1 a memory rule or a test failed, 2 gate could not run\n";

/* --OPTION VALUE as a duration in units.h's grammar (gate.toml's), with its message; noun
 * (NULL, or e.g. "an interval") says what the option expects. Returns 0, or -1 once the usage
 * error is printed. */
static int parse_duration(const char *opt, const char *value, const char *noun, int64_t min_ms,
                          int64_t max_ms, int64_t *out_ms)
{
	char why[512];

	if (units_parse_duration(value, min_ms, max_ms, out_ms, why, sizeof(why)) == 0)
		return 0;
	gate_usage_error("run ", "%s %s: %s%s%s%s", opt, value, noun ? "expected " : "",
	                 noun ? noun : "", noun ? ": " : "", why);
	return -1;
}

/* The options of gate run that exclude or need each other. Returns 0, or the exit code of the
 * usage error it printed. */
static int run_opts_check(const struct run_opts *o, int argc, char **argv)
{
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		return gate_usage_error(
		        "run ", "unexpected argument %s (arguments for mix test go after --)",
		        argv[optind]);
	if ((o->commit || o->message || o->force) && !o->update_baseline)
		return gate_usage_error("run ",
		                        "%s: --commit, --message and --force go with "
		                        "--update-baseline",
		                        o->commit    ? "--commit"
		                        : o->message ? "--message"
		                                     : "--force");
	if (o->message && !o->commit)
		return gate_usage_error("run ", "%s needs --commit", "--message");
	if (o->baseline_ref && !o->baseline_ref[0])
		return gate_usage_error("run ", "%s--baseline-ref needs a ref, e.g. origin/main",
		                        "");
	if (o->cookie_file && !o->attach)
		return gate_usage_error("run ", "%s goes with --attach NODE", "--cookie-file");
	if (o->distributed && o->attach)
		return gate_usage_error("run ",
		                        "%s: an attached node is distributed already; it goes "
		                        "with a node gate starts",
		                        "--distributed");
	if (o->instrument && o->attach)
		return gate_usage_error("run ",
		                        "%s tags allocations at the node's boot (+Muatags true): "
		                        "a running node cannot be changed; boot it with +Muatags "
		                        "true, or drop --attach",
		                        "--instrument");
	if (o->cluster && !o->attach)
		return gate_usage_error("run ",
		                        "%s goes with --attach NODE: gate reaches the cluster "
		                        "through a running node",
		                        "--cluster");
	if (o->cluster && (o->update_baseline || o->require_baseline || o->baseline_ref))
		return gate_usage_error("run ",
		                        "%s: a baseline is one node's; --cluster runs compare "
		                        "no baseline",
		                        o->update_baseline    ? "--update-baseline"
		                        : o->require_baseline ? "--require-baseline"
		                                              : "--baseline-ref");
	if (o->exec && optind < argc)
		return gate_usage_error("run ",
		                        "%s: arguments after -- are for mix test, which --exec "
		                        "replaces; put them in the --exec command",
		                        argv[optind]);
	if (o->repeat && (o->exec || o->cluster))
		return gate_usage_error("run ",
		                        "%s: --repeat runs mix test again in one node; it "
		                        "does not go with --exec or --cluster",
		                        o->exec ? "--exec" : "--cluster");
	if (o->sample_ms && o->cluster)
		return gate_usage_error("run ",
		                        "%s: sampling is one node's; it does not go with "
		                        "--cluster",
		                        "--sample");
	return 0;
}

bool run_cmd_via_plugin;

int run_cmd_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"project", required_argument, NULL, 'C'},
	        {"config", required_argument, NULL, 'c'},
	        {"junit", required_argument, NULL, 'j'},
	        {"boot-timeout", required_argument, NULL, 'b'},
	        {"test-timeout", required_argument, NULL, 't'},
	        {"elixir", required_argument, NULL, 'e'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {"baseline-ref", required_argument, NULL, 'r'},
	        {"require-baseline", no_argument, NULL, 'R'},
	        {"json", required_argument, NULL, 'J'},
	        {"update-baseline", no_argument, NULL, 'U'},
	        {"commit", no_argument, NULL, 'm'},
	        {"message", required_argument, NULL, 'M'},
	        {"force", no_argument, NULL, 'F'},
	        {"attach", required_argument, NULL, 'a'},
	        {"cookie-file", required_argument, NULL, 'k'},
	        {"exec", required_argument, NULL, 'x'},
	        {"cluster", no_argument, NULL, 'X'},
	        {"summary", required_argument, NULL, 'S'},
	        {"html", required_argument, NULL, 'H'},
	        {"per-test", no_argument, NULL, 'P'},
	        {"no-attribution", no_argument, NULL, 'N'}, /* hidden: for the bench */
	        {"allow-outside", no_argument, NULL, 'O'},
	        {"repeat", required_argument, NULL, 'n'},
	        {"sample", required_argument, NULL, 's'},
	        {"warn-only", no_argument, NULL, 'W'},
	        {"comment-flag", required_argument, NULL, 'K'},
	        {"distributed", required_argument, NULL, 'D'}, /* a node distributed as NAME */
	        {"instrument", no_argument, NULL, 'I'},        /* +Muatags true from the boot */
	        {"runner", required_argument, NULL, 'u'},
	        {"confirm", no_argument, NULL, 'Y'},
	        {"erl", required_argument, NULL, 'E'},
	        {NULL, 0, NULL, 0},
	};
	struct run_opts o = {0};
	int64_t ms;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:C:c:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': o.project_dir = optarg; break;
		case 'c': o.config_path = optarg; break;
		case 'j': o.junit_path = optarg; break;
		case 'e': o.elixir = optarg; break;
		case 'q': o.quiet = true; break;
		case 'r': o.baseline_ref = optarg; break;
		case 'R': o.require_baseline = true; break;
		case 'J': o.json_path = optarg; break;
		case 'U': o.update_baseline = true; break;
		case 'm': o.commit = true; break;
		case 'M': o.message = optarg; break;
		case 'F': o.force = true; break;
		case 'a': o.attach = optarg; break;
		case 'k': o.cookie_file = optarg; break;
		case 'x': o.exec = optarg; break;
		case 'X': o.cluster = true; break;
		case 'S': o.summary_path = optarg; break;
		case 'H': o.html_path = optarg; break;
		case 'P': o.per_test = true; break;
		case 'N': o.no_attribution = true; break;
		case 'O': o.allow_outside = true; break;
		case 'W': o.warn_only = true; break;
		case 'K': o.comment_flag = optarg; break;
		case 'D': o.distributed = optarg; break;
		case 'I': o.instrument = true; break;
		case 'u': o.runner = optarg; break;
		case 'Y': o.confirm = true; break;
		case 'E': o.erl = optarg; break;
		case 'b':
		case 't':
			if (parse_duration(c == 'b' ? "--boot-timeout" : "--test-timeout", optarg,
			                   NULL, UNITS_TIMEOUT_MIN_MS, UNITS_TIMEOUT_MAX_MS,
			                   &ms) < 0)
				return GATE_EXIT_ERROR;
			*(c == 'b' ? &o.boot_timeout_ms : &o.test_timeout_ms) = (int)ms;
			break;
		case 'n': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 2 || v > REPEAT_MAX)
				return gate_usage_error("run ",
				                        "--repeat %s: expected a number of runs "
				                        "from 2 to 100, e.g. --repeat 3",
				                        optarg);
			o.repeat = (int)v;
			break;
		}
		case 's':
			if (parse_duration("--sample", optarg, "an interval", 10, UNITS_MS_PER_H,
			                   &o.sample_ms) < 0)
				return GATE_EXIT_ERROR;
			break;
		case 'h': fputs(run_help, stdout); return GATE_EXIT_PASS;
		case ':':
			return gate_usage_error("run ", "option %s needs a value",
			                        argv[optind - 1]);
		default: return gate_usage_error("run ", "unknown option %s", argv[optind - 1]);
		}
	}
	int rc = run_opts_check(&o, argc, argv);
	if (rc != 0)
		return rc;
	o.via_plugin = run_cmd_via_plugin;
	o.test_args = argv + optind;
	o.ntest_args = (size_t)(argc - optind);
	return run_main(&o);
}
