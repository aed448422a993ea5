/* gate/cmd/snapshot_cmd.c: `gate snapshot`: one snapshot as tables or JSON. */
#include "gate/cmd/snapshot_cmd.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci/report/snapshot_text.h"
#include "ci/store/snapshot_json.h"
#include "gate/config/config.h"
#include "gate/config/discover.h"
#include "gate/error.h"
#include "gate/exit.h"
#include "gate/node/signals.h"
#include "gate/probe/session.h"
#include "model/snapshot.h"

static const char help[] =
        "usage: gate snapshot [-C DIR | --attach NODE [--cookie-file FILE]] [options]\n"
        "\n"
        "Takes one snapshot (memory categories, top processes, ETS tables, allocators) of the\n"
        "project's node, which gate boots (-C, default the current directory), or of a running\n"
        "node (--attach). The cookie for --attach comes from --cookie-file, else $GATE_COOKIE,\n"
        "else ~/.erlang.cookie, never from the command line.\n"
        "\n"
        "options:\n"
        "  -C, --project DIR      the Mix project to boot (MIX_ENV from gate.toml, default test)\n"
        "  -c, --config FILE      configuration (default: DIR/gate.toml when it exists)\n"
        "      --attach NODE      a running node, e.g. app@127.0.0.1 or app@host\n"
        "      --cookie-file FILE its cookie\n"
        "      --json FILE        write JSON instead of tables; - writes it to stdout alone\n"
        "                         (the node's and gate's own lines go to stderr)\n"
        "      --no-gc            do not force GC first\n"
        "      --bin-leak         also each process's refc binaries before its GC, to rank what\n"
        "                         the GC frees (recon's bin_leak; one more call per process)\n"
        "      --top N            processes per ranking (default 20)\n"
        "  -q, --quiet            no progress lines\n"
        "  -h, --help             this help\n";

static int usage(const char *fmt, const char *arg)
{
	return gate_usage_error("snapshot ", fmt, arg);
}

struct snapshot_args {
	const char *dir, *cfg_path, *attach, *cookie, *json, *elixir;
	bool gc, quiet, bin_leak;
	int top;
};

/* The command line into a. Returns -1 to go on, or the exit code (--help, a usage error). */
static int parse_args(int argc, char **argv, struct snapshot_args *a)
{
	static const struct option longopts[] = {
	        {"project", required_argument, NULL, 'C'},
	        {"config", required_argument, NULL, 'c'},
	        {"attach", required_argument, NULL, 'a'},
	        {"cookie-file", required_argument, NULL, 'k'},
	        {"json", required_argument, NULL, 'j'},
	        {"no-gc", no_argument, NULL, 'n'},
	        {"bin-leak", no_argument, NULL, 'l'},
	        {"top", required_argument, NULL, 't'},
	        {"elixir", required_argument, NULL, 'e'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	int c;
	*a = (struct snapshot_args){.gc = true, .top = 20};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:C:c:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': a->dir = optarg; break;
		case 'c': a->cfg_path = optarg; break;
		case 'a': a->attach = optarg; break;
		case 'k': a->cookie = optarg; break;
		case 'j': a->json = optarg; break;
		case 'n': a->gc = false; break;
		case 'l': a->bin_leak = true; break;
		case 'e': a->elixir = optarg; break;
		case 'q': a->quiet = true; break;
		case 't': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 10000)
				return usage("--top %s: expected a count from 1 to 10000", optarg);
			a->top = (int)v;
			break;
		}
		case 'h': fputs(help, stdout); return GATE_EXIT_PASS;
		case ':': return usage("option %s needs a value", argv[optind - 1]);
		default: return usage("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage("unexpected argument %s", argv[optind]);
	if (a->attach && a->dir)
		return usage("%s", "-C and --attach exclude each other: boot a project or attach");
	if (a->cookie && !a->attach)
		return usage("%s", "--cookie-file goes with --attach");
	return -1;
}

/* Boots or attaches, takes the snapshot, leaves. Returns the exit code. */
static int take(const struct snapshot_args *a, const struct config *cfg, const char *project)
{
	struct session_opts so = {
	        .project_dir = a->attach ? NULL : project,
	        .attach = a->attach,
	        .cookie_file = a->cookie,
	        .mix_env = cfg->mix_env,
	        .erl_flags = cfg->erl_flags,
	        .elixir = a->elixir,
	        .boot_timeout_ms = cfg->boot_timeout_ms,
	        .rpc_timeout_ms = cfg->rpc_timeout_ms,
	        .stop_timeout_ms = cfg->stop_timeout_ms,
	        .quiet = a->quiet,
	        .fresh_names = true, /* every call goes through probe_entry() */
	};
	struct session ses;
	struct snapshot snap = {0};
	char err[4096];
	int code = GATE_EXIT_ERROR;
	signals_install();
	session_init(&ses, &so);
	if (session_open(&ses, err, sizeof(err)) < 0)
		goto fail;
	ses.phase = a->gc ? "collecting garbage and taking the snapshot" : "taking the snapshot";
	struct probe_snapshot_opts po = {
	        .gc = a->gc, .deep = true, .top = a->top, .no_bin_leak = !a->bin_leak};
	if (probe_snapshot(&ses.conn, &po, cfg->rpc_timeout_ms, &snap, err, sizeof(err)) != EIC_OK)
		goto fail;
	/* the figure make bench reads: connect, probe load, GC + pass, transfer and decode */
	session_progress(&ses, "snapshot decoded (%zu processes, %zu ETS tables shipped)",
	                 snap.nprocs, snap.nets);
	session_end(&ses);
	session_progress(&ses, "probe removed"); /* make bench's clean-up figure ends here */
	if (a->json) {
		if (snapshot_json_write(a->json, &snap, err, sizeof(err)) < 0) {
			gate_error("cannot write the snapshot: %s", err);
			goto out;
		}
	} else {
		snapshot_text_print(stdout, &snap, 10);
	}
	code = GATE_EXIT_PASS;
	goto out;
fail:
	session_explain(&ses, err, sizeof(err));
	gate_error("%s", err);
	if (signals_caught)
		code = GATE_EXIT_SIGNAL(signals_caught);
out:
	session_end(&ses);
	snapshot_clear(&snap);
	return code;
}

int snapshot_cmd_main(int argc, char **argv)
{
	struct snapshot_args a;
	int code = parse_args(argc, argv, &a);
	if (code >= 0)
		return code;

	struct config cfg = {0};
	char err[4096], project[PATH_MAX];
	if ((!a.attach && discover_project(a.dir, DISCOVER_MIX, "or a running node with --attach",
	                                   project, err, sizeof(err)) < 0) ||
	    discover_config(&cfg, a.attach ? NULL : project, a.cfg_path, err, sizeof(err)) < 0) {
		config_clear(&cfg);
		return gate_error("%s", err);
	}
	code = take(&a, &cfg, project);
	config_clear(&cfg);
	return code;
}
