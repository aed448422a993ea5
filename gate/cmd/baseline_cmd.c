/* gate/cmd/baseline_cmd.c: the `gate baseline update|history` subcommands, on top of
 * gate/run/baseline_step.h and ci/baseline*.h. */
#include "gate/cmd/baseline_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/outpath.h"
#include "ci/store/baseline_file.h"
#include "gate/config/config.h"
#include "gate/config/discover.h"
#include "gate/error.h"
#include "gate/exit.h"
#include "gate/run/baseline_step.h"
#include "gate/run/run.h"
#include "model/figures.h"
#include "model/snapshot.h"

/* A saved run result (`gate run --json`) holds snapshots too: a wider cap than a baseline. */
#define RUN_JSON_MAX (64 * 1024 * 1024)

static const char update_help[] =
        "usage: gate baseline update [options] [-- MIX_TEST_ARGS...]\n"
        "\n"
        "Writes the memory baseline (default PROJECT/.gate/baseline.json, [baseline] path) from\n"
        "a fresh run of the suite, or from a saved run result (gate run --json FILE). Only a\n"
        "passing run becomes a baseline, unless --force.\n"
        "\n"
        "options:\n"
        "  -C, --project DIR   the Mix project (default: the current directory)\n"
        "  -c, --config FILE   configuration (default: DIR/gate.toml when it exists)\n"
        "      --from FILE     take the figures from a saved run instead of running the suite\n"
        "      --commit        commit only the baseline file on top of HEAD (libgit2) and store\n"
        "                      the run's summary as a git note under refs/notes/gate\n"
        "      --message M     the commit message (default: gate: update the memory baseline)\n"
        "      --force         take the baseline from a failing run too\n"
        "      --allow-outside write the file even where a symlink inside the project leads\n"
        "                      out of it (refused by default)\n"
        "      --elixir PATH   the elixir executable (default: elixir from PATH)\n"
        "  -q, --quiet         no progress lines\n"
        "  -h, --help          this help\n"
        "\n"
        "It refuses (exit 2) on a detached HEAD, during a merge, rebase or cherry-pick, when the\n"
        "baseline file has local edits, or when HEAD moved since the run. Pushing is yours:\n"
        "  git push origin HEAD && git push origin refs/notes/gate\n";

static const char history_help[] =
        "usage: gate baseline history [-C DIR] [-c FILE] [-n N] [--json]\n"
        "\n"
        "Lists the run summaries stored as git notes (refs/notes/gate) on HEAD's first-parent\n"
        "history, oldest first: commit, date, tests, total, processes_used, binary, ets, atoms.\n"
        "\n"
        "options:\n"
        "  -C, --project DIR   a directory in the repository (default: the current directory)\n"
        "  -c, --config FILE   configuration (default: DIR/gate.toml when it exists)\n"
        "  -n, --max N         the newest N entries only\n"
        "      --json          the entries as a JSON array (sorted keys) on stdout\n"
        "  -h, --help          this help\n"
        "\n"
        "Notes travel with git fetch origin refs/notes/gate:refs/notes/gate.\n";

static const char baseline_help[] =
        "usage: gate baseline <update|history> [options]\n"
        "\n"
        "  update    write (and with --commit, commit) the memory baseline from a run\n"
        "  history   list the run summaries stored as git notes\n"
        "\n"
        "`gate baseline <command> --help` for a command's options.\n";

/* usage errors of `gate baseline SUB`: "Run 'gate baseline SUB --help'" */
static int usage_error(const char *sub, const char *fmt, const char *arg)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "baseline %s", sub);
	return gate_usage_error(cmd, fmt, arg);
}

/* The "baseline" object of a saved run result, parsed; *verdict_pass says whether the run
 * passed. */
static int read_saved_run(struct baseline *out, bool *verdict_pass, const char *file, char *err,
                          size_t errlen)
{
	struct stat st;
	json_error_t jerr;
	int rc = -1;
	char *text = NULL;
	json_t *root = NULL;

	if (stat(file, &st) < 0) {
		errtext_set(err, errlen, NULL, "--from %s: %s", file, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > RUN_JSON_MAX) {
		errtext_set(err, errlen, NULL, "--from %s: not a regular file of at most %d MB",
		            file, RUN_JSON_MAX / (1024 * 1024));
		return -1;
	}
	root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		errtext_set(err, errlen, NULL,
		            "--from %s:%d:%d: %s (expected the file of gate run --json)", file,
		            jerr.line, jerr.column, jerr.text);
		return -1;
	}
	json_t *b = json_object_get(root, "baseline");
	const char *verdict = json_string_value(json_object_get(root, "verdict"));
	if (!json_is_object(b) || !verdict) {
		errtext_set(err, errlen, NULL,
		            "--from %s: no \"baseline\" object or \"verdict\": not a run "
		            "result of gate run --json",
		            file);
		goto out;
	}
	*verdict_pass = strcmp(verdict, "passed") == 0;
	text = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
	if (!text) {
		errtext_set(err, errlen, NULL, "out of memory");
		goto out;
	}
	char name[PATH_MAX + 32];
	snprintf(name, sizeof(name), "%s:baseline", file);
	if (baseline_parse(out, text, strlen(text), name, err, errlen) != BASELINE_OK)
		goto out;
	rc = 0;
out:
	free(text);
	json_decref(root);
	return rc;
}

static int update_from(const char *dir, const char *config_path, const char *from, bool commit,
                       const char *message, bool force, bool allow_outside)
{
	static struct baseline_step st;
	struct config cfg = {0};
	struct baseline b = {0};
	char project[PATH_MAX], err[4096];
	bool passed = false;
	int code = GATE_EXIT_ERROR;

	memset(&st, 0, sizeof(st));
	if (discover_project(dir, DISCOVER_DIR, NULL, project, err, sizeof(err)) < 0 ||
	    discover_config(&cfg, project, config_path, err, sizeof(err)) < 0 ||
	    read_saved_run(&b, &passed, from, err, sizeof(err)) < 0) {
		gate_error("%s", err);
		goto out;
	}
	if (!passed && !force) {
		errtext_set(err, sizeof(err), NULL,
		            "--from %s: that run failed, and a baseline is taken from "
		            "a passing run only (--force takes it anyway)",
		            from);
		gate_error("%s", err);
		goto out;
	}
	st.allow_outside = allow_outside;
	if (baseline_step_locate(&st, project, &cfg.rules.baseline, err, sizeof(err)) < 0 ||
	    baseline_step_update(&st, &b, &cfg.rules.baseline, commit, message, b.commit, stdout,
	                         err, sizeof(err)) < 0) {
		gate_error("%s", err);
		goto out;
	}
	code = GATE_EXIT_PASS;
out:
	baseline_clear(&b);
	baseline_step_clear(&st);
	config_clear(&cfg);
	return code;
}

static int cmd_update(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"project", required_argument, NULL, 'C'},
	        {"config", required_argument, NULL, 'c'},
	        {"from", required_argument, NULL, 'f'},
	        {"commit", no_argument, NULL, 'm'},
	        {"message", required_argument, NULL, 'M'},
	        {"force", no_argument, NULL, 'F'},
	        {"elixir", required_argument, NULL, 'e'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {"allow-outside", no_argument, NULL, 'O'},
	        {NULL, 0, NULL, 0},
	};
	struct run_opts o = {.update_baseline = true};
	const char *from = NULL;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:C:c:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': o.project_dir = optarg; break;
		case 'c': o.config_path = optarg; break;
		case 'f': from = optarg; break;
		case 'm': o.commit = true; break;
		case 'M': o.message = optarg; break;
		case 'F': o.force = true; break;
		case 'e': o.elixir = optarg; break;
		case 'q': o.quiet = true; break;
		case 'O': o.allow_outside = true; break;
		case 'h': fputs(update_help, stdout); return GATE_EXIT_PASS;
		case ':':
			return usage_error("update ", "option %s needs a value", argv[optind - 1]);
		default: return usage_error("update ", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		return usage_error("update ",
		                   "unexpected argument %s (arguments for mix test go "
		                   "after --)",
		                   argv[optind]);
	if (o.message && !o.commit)
		return usage_error("update ", "%s needs --commit", "--message");
	if (from) {
		if (optind < argc)
			return usage_error("update ", "%s runs no tests: no arguments after --",
			                   "--from");
		return update_from(o.project_dir, o.config_path, from, o.commit, o.message, o.force,
		                   o.allow_outside);
	}
	o.test_args = argv + optind;
	o.ntest_args = (size_t)(argc - optind);
	return run_main(&o);
}

static void print_history_table(const struct baseline_history *h)
{
	static const enum mem_cat cols[] = {MEM_TOTAL, MEM_PROCESSES_USED, MEM_BINARY, MEM_ETS};
	printf("%-8s %-17s %6s %10s %15s %10s %10s %8s\n", "commit", "date (UTC)", "tests", "total",
	       "processes_used", "binary", "ets", "atoms");
	for (size_t i = 0; i < h->count; i++) {
		const struct baseline *b = &h->items[i];
		char date[32] = "-";
		time_t t = (time_t)b->timestamp;
		struct tm tm;
		if (b->timestamp > 0 && gmtime_r(&t, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M", &tm);
		printf("%-8.7s %-17s %6lld", h->noted[i], date, (long long)b->test_count);
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			char v[32] = "-";
			if (b->have[cols[c]])
				model_bytes_format(v, sizeof(v), b->mem[cols[c]]);
			printf(c == 1 ? " %15s" : " %10s", v);
		}
		printf(" %8lld\n", (long long)b->atom_count);
	}
}

static int cmd_history(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"project", required_argument, NULL, 'C'}, {"config", required_argument, NULL, 'c'},
	        {"max", required_argument, NULL, 'n'},     {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
	};
	const char *dir = NULL, *config_path = NULL;
	bool json = false;
	long n = 0;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":C:c:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': dir = optarg; break;
		case 'c': config_path = optarg; break;
		case 'j': json = true; break;
		case 'n': {
			char *end;
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n <= 0 || n > 1000000)
				return usage_error("history ", "-n %s: expected a positive count",
				                   optarg);
			break;
		}
		case 'h': fputs(history_help, stdout); return GATE_EXIT_PASS;
		case ':':
			return usage_error("history ", "option %s needs a value", argv[optind - 1]);
		default: return usage_error("history ", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("history ", "unexpected argument %s", argv[optind]);

	static struct baseline_step st;
	struct config cfg = {0};
	struct baseline_history h = {0};
	char project[PATH_MAX], err[4096], notes[256];
	char *text = NULL;
	int code = GATE_EXIT_ERROR;

	memset(&st, 0, sizeof(st));
	if (discover_project(dir, DISCOVER_DIR, NULL, project, err, sizeof(err)) < 0 ||
	    discover_config(&cfg, project, config_path, err, sizeof(err)) < 0 ||
	    baseline_step_locate(&st, project, &cfg.rules.baseline, err, sizeof(err)) < 0) {
		gate_error("%s", err);
		goto out;
	}
	if (!st.repo) {
		errtext_set(err, sizeof(err), NULL,
		            "%s is in no git repository: the history lives in git "
		            "notes; pass a directory inside the repository with -C DIR",
		            project);
		gate_error("%s", err);
		goto out;
	}
	baseline_step_notes_ref(notes, sizeof(notes), &cfg.rules.baseline);
	if (baseline_git_history(&h, st.repo, cfg.rules.baseline.notes_ref, NULL, (size_t)n, 0, err,
	                         sizeof(err)) != BASELINE_OK) {
		gate_error("%s", err);
		goto out;
	}
	if (h.notes_ref_missing)
		fprintf(stderr,
		        "gate: no %s in this repository (fetch it with: git fetch origin "
		        "%s:%s)\n",
		        notes, notes, notes);
	if (h.shallow_end)
		fprintf(stderr, "gate: the walk stopped at the boundary of a shallow clone; older "
		                "entries need git fetch --unshallow\n");
	if (h.unreadable)
		fprintf(stderr, "gate: %zu note%s skipped: %s\n", h.unreadable,
		        h.unreadable == 1 ? "" : "s", h.unreadable_why);
	if (json) {
		if (baseline_history_format_json(&text, &h, err, sizeof(err)) != BASELINE_OK) {
			gate_error("%s", err);
			goto out;
		}
		fputs(text, stdout);
	} else if (h.count == 0) {
		fprintf(stderr,
		        "gate: no run summaries under %s on HEAD's history (gate baseline "
		        "update --commit writes them)\n",
		        notes);
	} else {
		print_history_table(&h);
	}
	code = GATE_EXIT_PASS;
out:
	free(text);
	baseline_history_clear(&h);
	baseline_step_clear(&st);
	config_clear(&cfg);
	return code;
}

int baseline_cmd_main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("", "%s", "baseline needs a subcommand: update or history");
	const char *sub = argv[1];
	if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
		fputs(baseline_help, stdout);
		return GATE_EXIT_PASS;
	}
	if (strcmp(sub, "update") == 0)
		return cmd_update(argc - 1, argv + 1);
	if (strcmp(sub, "history") == 0)
		return cmd_history(argc - 1, argv + 1);
	return usage_error("", "unknown baseline subcommand %s (expected: update, history)", sub);
}
