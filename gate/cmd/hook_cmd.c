/* gate/cmd/hook_cmd.c: `gate hook install|uninstall` on the command line. */
#include "gate/cmd/hook_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci/git/hook.h"
#include "gate/config/discover.h"
#include "gate/error.h"
#include "gate/exit.h"

static const char hook_help[] =
        "usage: gate hook install [--pre-push | --pre-commit] [-C DIR] [--gate PATH] [-- ARGS...]\n"
        "       gate hook uninstall [--pre-push | --pre-commit] [-C DIR]\n"
        "\n"
        "install writes a git hook (pre-push by default) into the repository that contains the\n"
        "Mix project DIR: it runs `gate run -C DIR ARGS...` and blocks the push or commit when\n"
        "the gate fails (exit 1) or cannot run (exit 2). A hook already there is never\n"
        "overwritten: it is kept as HOOK.gate-chained and runs first. uninstall removes gate's\n"
        "hook and puts that one back.\n"
        "\n"
        "options:\n"
        "      --pre-push      the pre-push hook (default)\n"
        "      --pre-commit    the pre-commit hook instead\n"
        "  -C, --project DIR   the Mix project (default: the current directory)\n"
        "      --gate PATH     the gate binary the hook runs (default: this one); GATE_BIN\n"
        "                      overrides it when the hook runs\n"
        "  -h, --help          this help\n"
        "\n"
        "The hook records the project relative to the repository's root, this gate's absolute\n"
        "path and where elixir and erl are (added to PATH for git GUIs). GATE_HOOK_SKIP=1 skips\n"
        "the gate once; core.hooksPath is honoured. For the pre-commit framework, see\n"
        ".pre-commit-hooks.yaml in gate's repository.\n";

static int hook_usage(const char *fmt, const char *arg)
{
	return gate_usage_error("hook ", fmt, arg);
}

/* Appends the directory of each of names found in PATH to out (':'-separated, no repeats). */
static void tool_dirs(char *out, size_t len, const char *const *names, size_t n)
{
	const char *path = getenv("PATH");
	out[0] = '\0';
	for (size_t k = 0; k < n && path; k++) {
		for (const char *p = path; *p;) {
			const char *e = strchr(p, ':');
			size_t dl = e ? (size_t)(e - p) : strlen(p);
			char cand[PATH_MAX];
			if (dl > 0 && dl < sizeof(cand) - 64 && p[0] == '/') {
				snprintf(cand, sizeof(cand), "%.*s/%s", (int)dl, p, names[k]);
				if (access(cand, X_OK) == 0) {
					cand[dl] = '\0';
					/* already listed? compare whole ':'-separated entries */
					bool seen = false;
					for (const char *q = out; *q && !seen;) {
						const char *qe = strchr(q, ':');
						size_t ql = qe ? (size_t)(qe - q) : strlen(q);
						seen = ql == dl && strncmp(q, cand, dl) == 0;
						q = qe ? qe + 1 : q + ql;
					}
					size_t ol = strlen(out);
					if (!seen && ol + dl + 2 < len)
						snprintf(out + ol, len - ol, "%s%s", ol ? ":" : "",
						         cand);
					break;
				}
			}
			p = e ? e + 1 : p + dl;
		}
	}
}

/* hook install, once the repository is found: the hook runs this gate binary on the project
 * (relative to the repository's root) with args for gate run. */
static int install_in(const struct hook_where *w, const char *project, enum hook_kind kind,
                      const char *gate_opt, char *const *args, size_t nargs)
{
	char err[2048], msg[2048];
	char root[PATH_MAX], gate[PATH_MAX];
	if (!realpath(w->workdir, root)) {
		return gate_error("the repository's root %s: %s; check the repository's working "
		                  "tree",
		                  w->workdir, strerror(errno));
	}
	size_t rl = strlen(root);
	const char *rel = ".";
	if (strcmp(project, root) != 0) {
		if (strncmp(project, root, rl) != 0 || project[rl] != '/') {
			return gate_error("%s is outside the repository's working tree %s; pass a "
			                  "project inside it with -C DIR",
			                  project, root);
		}
		rel = project + rl + 1;
	}
	if (gate_opt ? !realpath(gate_opt, gate) : !realpath("/proc/self/exe", gate)) {
		return gate_error("%s: %s; give the gate binary with --gate PATH",
		                  gate_opt ? gate_opt : "/proc/self/exe", strerror(errno));
	}
	if (access(gate, X_OK) < 0) {
		return gate_error("--gate %s is not executable; give the gate binary", gate);
	}
	static const char *const tools[] = {"elixir", "erl", "mix"};
	char dirs[PATH_MAX * 2];
	tool_dirs(dirs, sizeof(dirs), tools, sizeof(tools) / sizeof(tools[0]));
	struct hook_spec spec = {
	        .kind = kind,
	        .gate_path = gate,
	        .project = rel,
	        .args = (const char *const *)args,
	        .nargs = nargs,
	        .path_dirs = dirs,
	};
	if (hook_install(w->hooks, &spec, msg, sizeof(msg), err, sizeof(err)) < 0)
		return gate_error("%s", err);
	printf("gate: %s\ngate: it runs %s run -C <repository>%s%s", msg, gate,
	       strcmp(rel, ".") == 0 ? "" : "/", strcmp(rel, ".") == 0 ? "" : rel);
	for (size_t i = 0; i < nargs; i++)
		printf(" %s", args[i]);
	printf("\n");
	return GATE_EXIT_PASS;
}

int hook_cmd_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"pre-push", no_argument, NULL, 'P'},      {"pre-commit", no_argument, NULL, 'K'},
	        {"project", required_argument, NULL, 'C'}, {"gate", required_argument, NULL, 'g'},
	        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
	};
	enum hook_kind kind = HOOK_PRE_PUSH;
	bool kind_set = false;
	const char *dir = ".", *gate_opt = NULL;
	int c;

	if (argc < 2)
		return hook_usage("%s", "hook needs a subcommand: install or uninstall");
	const char *sub = argv[1];
	if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
		fputs(hook_help, stdout);
		return GATE_EXIT_PASS;
	}
	bool install = strcmp(sub, "install") == 0;
	if (!install && strcmp(sub, "uninstall") != 0)
		return hook_usage("unknown hook subcommand %s (expected: install, uninstall)", sub);
	argc--;
	argv++;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
		case 'K':
			if (kind_set && kind != (c == 'P' ? HOOK_PRE_PUSH : HOOK_PRE_COMMIT))
				return hook_usage("%s: give one of --pre-push and --pre-commit",
				                  argv[optind - 1]);
			kind = c == 'P' ? HOOK_PRE_PUSH : HOOK_PRE_COMMIT;
			kind_set = true;
			break;
		case 'C': dir = optarg; break;
		case 'g': gate_opt = optarg; break;
		case 'h': fputs(hook_help, stdout); return GATE_EXIT_PASS;
		case ':': return hook_usage("option %s needs a value", argv[optind - 1]);
		default: return hook_usage("unknown option %s", argv[optind - 1]);
		}
	}
	bool dashdash = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
	if (optind < argc && (!install || !dashdash))
		return hook_usage(
		        install ? "unexpected argument %s (arguments for gate run go after --)"
		                : "unexpected argument %s",
		        argv[optind]);
	if (!install && gate_opt)
		return hook_usage("%s goes with hook install", "--gate");

	char project[PATH_MAX], err[2048], msg[2048];
	if (discover_project(dir, install ? DISCOVER_MIX : DISCOVER_DIR, NULL, project, err,
	                     sizeof(err)) < 0)
		return gate_error("%s", err);
	struct hook_where w;
	if (hook_where_find(&w, project, err, sizeof(err)) < 0)
		return gate_error("%s", err);
	if (!install) {
		if (hook_uninstall(w.hooks, kind, msg, sizeof(msg), err, sizeof(err)) < 0)
			return gate_error("%s", err);
		printf("gate: %s\n", msg);
		return GATE_EXIT_PASS;
	}

	return install_in(&w, project, kind, gate_opt, argv + optind, (size_t)(argc - optind));
}
