/* gate/baseline_cmd.c: baselines on the command line: the baseline step of `gate run` and
 * the `gate baseline update|history` subcommands, on top of ci/baseline*.h. */
#include "baseline_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ci/baseline.h"
#include "ci/outpath.h"
#include "cli.h"
#include "config.h"
#include "exit.h"
#include "run.h"

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

static void error_msg(const char *msg)
{
	fflush(stdout);
	fprintf(stderr, "gate: error: %s\n", msg);
}

/* usage errors of `gate baseline SUB`: "Run 'gate baseline SUB --help'" */
static int usage_error(const char *sub, const char *fmt, const char *arg)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "baseline %s", sub);
	return cli_usage_error(cmd, fmt, arg);
}

/* True when dir or one of its parents has a .git (a directory, or a file as in worktrees
 * and submodules): then a repository that fails to open is an error, not "no repository". */
static bool in_git_tree(const char *dir)
{
	char p[PATH_MAX + 8];
	char d[PATH_MAX];
	snprintf(d, sizeof(d), "%s", dir);
	for (;;) {
		struct stat st;
		snprintf(p, sizeof(p), "%s/.git", d);
		if (lstat(p, &st) == 0)
			return true;
		char *slash = strrchr(d, '/');
		if (!slash || slash == d)
			break;
		*slash = '\0';
	}
	return lstat("/.git", &(struct stat){ 0 }) == 0;
}

static const char *cfg_path(const struct baseline_config *cfg)
{
	return cfg->path ? cfg->path : BASELINE_DEFAULT_PATH;
}

static void notes_ref_name(char *buf, size_t len, const struct baseline_config *cfg)
{
	const char *n = cfg->notes_ref ? cfg->notes_ref : BASELINE_DEFAULT_NOTES_REF;
	if (strncmp(n, "refs/", 5) == 0)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "refs/notes/%s", n);
}

/* Opens the repository of project (if any) and finds the baseline file and HEAD. */
static int step_locate(struct baseline_step *st, const char *project,
		       const struct baseline_config *cfg, char *err, size_t errlen)
{
	const char *path = cfg_path(cfg);
	char herr[512];

	snprintf(st->project, sizeof(st->project), "%s", project);
	if (path[0] == '/')
		snprintf(st->file, sizeof(st->file), "%s", path);
	else
		snprintf(st->file, sizeof(st->file), "%s/%s", project, path);
	snprintf(st->relpath, sizeof(st->relpath), "%s", path);
	if (!in_git_tree(project))
		return 0;
	if (baseline_git_open(&st->repo, project, err, errlen) != BASELINE_OK)
		return -1;
	if (baseline_git_relpath(st->relpath, sizeof(st->relpath), st->repo, project, path, err,
				 errlen) != BASELINE_OK)
		return -1;
	if (baseline_git_head(st->head, st->repo, herr, sizeof(herr)) != BASELINE_OK)
		st->head[0] = '\0'; /* unborn: nothing to compare with, nothing to commit onto */
	/* a baseline commit an earlier gate was killed in: finish or undo it, and say so */
	char done[2048];
	int rrc = baseline_git_recover(st->repo, done, sizeof(done), err, errlen);
	if (rrc < 0)
		return -1;
	if (rrc == 1)
		fprintf(stderr, "gate: note: %s\n", done);
	/* what the figures are measured on: HEAD, or HEAD with local changes */
	st->dirty = st->head[0] && baseline_git_worktree_dirty(st->repo, st->relpath) == 1;
	return 0;
}

int baseline_step_read(struct baseline_step *st, const char *project,
		       const struct baseline_config *cfg, const char *ref, char *err,
		       size_t errlen)
{
	const char *asked = ref ? ref : (cfg->ref ? cfg->ref : BASELINE_DEFAULT_REF);
	bool worktree = strcmp(asked, BASELINE_REF_WORKTREE) == 0;
	int rc;

	if (step_locate(st, project, cfg, err, errlen) < 0)
		return -1;
	if (!st->repo) {
		if (!worktree) {
			st->no_repo = true;
			snprintf(st->missing_where, sizeof(st->missing_where),
				 "%s:%s (%s is in no git repository)", asked, cfg_path(cfg), project);
			return 0;
		}
		snprintf(st->src.ref, sizeof(st->src.ref), "%s", BASELINE_REF_WORKTREE);
		snprintf(st->src.where, sizeof(st->src.where), "%s", st->file);
		rc = baseline_read_file(&st->base, st->file, err, errlen);
		if (rc == BASELINE_MISSING) {
			snprintf(st->missing_where, sizeof(st->missing_where), "%s", st->file);
			return 0;
		}
		if (rc != BASELINE_OK)
			return -1;
		st->have_base = true;
		return 0;
	}

	/* only the configured default may fall back to HEAD: an explicit ref must exist */
	rc = baseline_git_read(&st->base, &st->src, st->repo, asked, ref == NULL, st->relpath,
			       err, errlen);
	if (rc == BASELINE_MISSING)
		snprintf(st->missing_where, sizeof(st->missing_where), "%s", st->src.where);
	else if (rc != BASELINE_OK)
		return -1;
	else
		st->have_base = true;

	if (cfg->trend_window <= 0 || (!st->head[0] && !st->src.commit[0]))
		return 0;
	/* the trend of the branch the baseline came from (main's notes in a PR job) */
	const char *from = st->src.commit[0] ? st->src.commit : NULL;
	if (baseline_git_history(&st->hist, st->repo, cfg->notes_ref, from,
				 (size_t)cfg->trend_window, 0, err, errlen) != BASELINE_OK)
		return -1;
	return 0;
}

void baseline_step_describe(const struct baseline_step *st, char *buf, size_t len)
{
	char hist[128] = "", fb[512] = "";
	if (st->hist.count)
		snprintf(hist, sizeof(hist), "; trend over %zu noted run%s", st->hist.count,
			 st->hist.count == 1 ? "" : "s");
	if (st->src.fell_back)
		snprintf(fb, sizeof(fb), " (the configured ref does not exist here: read HEAD)");
	if (st->no_repo)
		snprintf(buf, len, "baseline: skipped, %s is in no git repository (a required "
			 "baseline fails)", st->project);
	else if (!st->have_base)
		snprintf(buf, len, "baseline: none at %s%s%s", st->missing_where, fb, hist);
	else if (st->src.commit[0])
		snprintf(buf, len, "baseline: %s at commit %.12s%s%s", st->src.where, st->src.commit,
			 fb, hist);
	else
		snprintf(buf, len, "baseline: %s (working tree)%s", st->src.where, hist);
}

int baseline_step_check(struct findings *out, const struct baseline_step *st,
			const struct snapshot *after, const struct baseline_config *cfg)
{
	/* outside git there is nothing to compare with, ever: no testcase for it */
	if (st->no_repo && !cfg->require)
		return 0;
	if (baseline_check(out, after, st->have_base ? &st->base : NULL, cfg,
			   st->have_base ? st->src.where : st->missing_where) < 0)
		return -1;
	if (st->hist.count > 0 && cfg->trend_window > 0 &&
	    trend_check(out, after, st->hist.items, st->hist.count, cfg) < 0)
		return -1;
	return 0;
}

int baseline_step_make(struct baseline *out, const struct baseline_step *st,
		       const struct snapshot *after, const char *elixir_version,
		       int64_t timestamp, int64_t test_count)
{
	struct baseline_meta m = {
		.gate_version = GATE_VERSION,
		.elixir_version = elixir_version && *elixir_version ? elixir_version : NULL,
		.commit = st->head[0] ? st->head : NULL,
		.commit_dirty = st->dirty,
		.timestamp = timestamp,
		.test_count = test_count,
	};
	return baseline_from_snapshot(out, after, &m);
}

int baseline_step_update(struct baseline_step *st, const struct baseline *b,
			 const struct baseline_config *cfg, bool commit, const char *message,
			 const char *expected_head, FILE *out, char *err, size_t errlen)
{
	char notes[256], why[2048];
	notes_ref_name(notes, sizeof(notes), cfg);

	if (!st->allow_outside &&
	    outpath_check(st->project, st->file, "the baseline", err, errlen) < 0)
		return -1;
	if (!commit) {
		if (baseline_write(st->file, b, 0, err, errlen) != BASELINE_OK)
			return -1;
		fprintf(out, "gate: wrote the baseline to %s (commit it, or use --commit)\n",
			st->file);
		return 0;
	}
	if (!st->repo) {
		snprintf(err, errlen, "--commit: %s is in no git repository; run git init and "
			 "commit the project, or leave out --commit to write the file only",
			 st->project);
		return -1;
	}
	struct baseline_commit_opts co = {
		.path = st->relpath,
		.expected_head = expected_head ? expected_head : (st->head[0] ? st->head : NULL),
		.message = message,
		.skip_ci = cfg->skip_ci,
		.measured_dirty = st->dirty,
	};
	char oid[BASELINE_OID_HEX], notice[4096] = "";
	co.notice = notice;
	co.notice_len = sizeof(notice);
	int rc = baseline_git_commit(oid, st->repo, b, &co, err, errlen);
	for (char *line = notice, *next; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		fprintf(stderr, "gate: note: %s\n", line);
	}
	if (rc == BASELINE_UNCHANGED) {
		fprintf(out, "gate: HEAD (%.7s) already has exactly this baseline at %s: nothing "
			"committed\n", oid, st->relpath);
		return 0;
	}
	if (rc != BASELINE_OK)
		return -1;
	if (baseline_git_note_write(st->repo, cfg->notes_ref, oid, b, false, why,
				    sizeof(why)) != BASELINE_OK) {
		snprintf(err, errlen, "committed %.7s (%s), but the note under %s was not written: "
			 "%s", oid, st->relpath, notes, why);
		return -1;
	}
	fprintf(out, "gate: committed %.7s %s (that file only); the run's summary is its note "
		"under %s\n", oid, st->relpath, notes);
	fprintf(out, "gate: publish both with:\n  git push origin HEAD\n  git push origin %s\n",
		notes);
	return 0;
}

void baseline_step_clear(struct baseline_step *st)
{
	if (!st)
		return;
	baseline_clear(&st->base);
	baseline_history_clear(&st->hist);
	baseline_git_close(st->repo);
	memset(st, 0, sizeof(*st));
}

/* ---- the subcommands ---- */

static int load_config(struct config *cfg, const char *project, const char *config_path,
		       char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	if (config_default(cfg) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (config_path) {
		snprintf(path, sizeof(path), "%s", config_path);
	} else {
		snprintf(path, sizeof(path), "%s/gate.toml", project);
		if (access(path, F_OK) < 0)
			return 0;
	}
	return config_load(cfg, path, err, errlen);
}

static int resolve_dir(char out[PATH_MAX], const char *dir, char *err, size_t errlen)
{
	if (!realpath(dir ? dir : ".", out)) {
		snprintf(err, errlen, "directory %s: %s; pass the project with -C DIR",
			 dir ? dir : ".", strerror(errno));
		return -1;
	}
	return 0;
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
		snprintf(err, errlen, "--from %s: %s", file, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > RUN_JSON_MAX) {
		snprintf(err, errlen, "--from %s: not a regular file of at most %d MB", file,
			 RUN_JSON_MAX / (1024 * 1024));
		return -1;
	}
	root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "--from %s:%d:%d: %s (expected the file of gate run --json)",
			 file, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	json_t *b = json_object_get(root, "baseline");
	const char *verdict = json_string_value(json_object_get(root, "verdict"));
	if (!json_is_object(b) || !verdict) {
		snprintf(err, errlen, "--from %s: no \"baseline\" object or \"verdict\": not a run "
			 "result of gate run --json", file);
		goto out;
	}
	*verdict_pass = strcmp(verdict, "passed") == 0;
	text = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
	if (!text) {
		snprintf(err, errlen, "out of memory");
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
	struct config cfg = { 0 };
	struct baseline b = { 0 };
	char project[PATH_MAX], err[4096];
	bool passed = false;
	int code = GATE_EXIT_ERROR;

	memset(&st, 0, sizeof(st));
	if (resolve_dir(project, dir, err, sizeof(err)) < 0 ||
	    load_config(&cfg, project, config_path, err, sizeof(err)) < 0 ||
	    read_saved_run(&b, &passed, from, err, sizeof(err)) < 0) {
		error_msg(err);
		goto out;
	}
	if (!passed && !force) {
		snprintf(err, sizeof(err), "--from %s: that run failed, and a baseline is taken from "
			 "a passing run only (--force takes it anyway)", from);
		error_msg(err);
		goto out;
	}
	st.allow_outside = allow_outside;
	if (step_locate(&st, project, &cfg.rules.baseline, err, sizeof(err)) < 0 ||
	    baseline_step_update(&st, &b, &cfg.rules.baseline, commit, message, b.commit, stdout,
				 err, sizeof(err)) < 0) {
		error_msg(err);
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
		{ "project", required_argument, NULL, 'C' },
		{ "config", required_argument, NULL, 'c' },
		{ "from", required_argument, NULL, 'f' },
		{ "commit", no_argument, NULL, 'm' },
		{ "message", required_argument, NULL, 'M' },
		{ "force", no_argument, NULL, 'F' },
		{ "elixir", required_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "allow-outside", no_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	struct run_opts o = { .update_baseline = true };
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
		case ':': return usage_error("update ", "option %s needs a value", argv[optind - 1]);
		default: return usage_error("update ", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		return usage_error("update ", "unexpected argument %s (arguments for mix test go "
				   "after --)", argv[optind]);
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
	static const enum mem_cat cols[] = { MEM_TOTAL, MEM_PROCESSES_USED, MEM_BINARY, MEM_ETS };
	printf("%-8s %-17s %6s %10s %15s %10s %10s %8s\n", "commit", "date (UTC)", "tests",
	       "total", "processes_used", "binary", "ets", "atoms");
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
		{ "project", required_argument, NULL, 'C' },
		{ "config", required_argument, NULL, 'c' },
		{ "max", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
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
		case ':': return usage_error("history ", "option %s needs a value", argv[optind - 1]);
		default: return usage_error("history ", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("history ", "unexpected argument %s", argv[optind]);

	static struct baseline_step st;
	struct config cfg = { 0 };
	struct baseline_history h = { 0 };
	char project[PATH_MAX], err[4096], notes[256];
	char *text = NULL;
	int code = GATE_EXIT_ERROR;

	memset(&st, 0, sizeof(st));
	if (resolve_dir(project, dir, err, sizeof(err)) < 0 ||
	    load_config(&cfg, project, config_path, err, sizeof(err)) < 0 ||
	    step_locate(&st, project, &cfg.rules.baseline, err, sizeof(err)) < 0) {
		error_msg(err);
		goto out;
	}
	if (!st.repo) {
		snprintf(err, sizeof(err), "%s is in no git repository: the history lives in git "
			 "notes; pass a directory inside the repository with -C DIR", project);
		error_msg(err);
		goto out;
	}
	notes_ref_name(notes, sizeof(notes), &cfg.rules.baseline);
	if (baseline_git_history(&h, st.repo, cfg.rules.baseline.notes_ref, NULL, (size_t)n, 0,
				 err, sizeof(err)) != BASELINE_OK) {
		error_msg(err);
		goto out;
	}
	if (h.notes_ref_missing)
		fprintf(stderr, "gate: no %s in this repository (fetch it with: git fetch origin "
			"%s:%s)\n", notes, notes, notes);
	if (h.shallow_end)
		fprintf(stderr, "gate: the walk stopped at the boundary of a shallow clone; older "
			"entries need git fetch --unshallow\n");
	if (h.unreadable)
		fprintf(stderr, "gate: %zu note%s skipped: %s\n", h.unreadable,
			h.unreadable == 1 ? "" : "s", h.unreadable_why);
	if (json) {
		if (baseline_history_format_json(&text, &h, err, sizeof(err)) != BASELINE_OK) {
			error_msg(err);
			goto out;
		}
		fputs(text, stdout);
	} else if (h.count == 0) {
		fprintf(stderr, "gate: no run summaries under %s on HEAD's history (gate baseline "
			"update --commit writes them)\n", notes);
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
