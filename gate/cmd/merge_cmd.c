/* gate/cmd/merge_cmd.c: `gate merge RESULT.json...`: a suite split over CI jobs
 * (`mix test --partitions N`, MIX_TEST_PARTITION=k, one `gate run --json` per job) gets one
 * verdict, one JUnit report with every test once, one summary, one review comment and, on the
 * main branch, one commit holding every partition's baseline file: the merge job is the only
 * baseline writer, so N jobs never race to push.
 *
 * Steps: read every result (ci/store/run_json_read.h), refuse what does not belong together
 * (ci/store/run_merge.h), build the merged run, judge it (the model's verdict), then write the
 * JUnit report, the console summary, --json, the baseline (and its commit), and the step summary,
 * HTML report, annotations and comment flag (gate/run/report_out.h), as gate run does.
 */
#include "gate/cmd/merge_cmd.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/outpath.h"
#include "ci/git/baseline_git.h"
#include "ci/report/junit.h"
#include "ci/report/summary.h"
#include "ci/store/baseline_file.h"
#include "ci/store/run_json.h"
#include "ci/store/run_json_read.h"
#include "ci/store/run_merge.h"
#include "gate/config/config.h"
#include "gate/config/discover.h"
#include "gate/error.h"
#include "gate/exit.h"
#include "gate/probe/faithful.h"
#include "gate/run/baseline_step.h"
#include "gate/run/report_out.h"
#include "gate/version.h"
#include "judge/judge.h"
#include "model/verdict.h"

static const char merge_help[] =
        "usage: gate merge [options] RESULT.json...\n"
        "\n"
        "Joins the results of a suite's partitions (each CI job: MIX_TEST_PARTITION=k gate run\n"
        "--json FILE -- --partitions N) into one verdict and one set of reports: a JUnit report\n"
        "with every test once (its partition a property of its suite), every memory finding\n"
        "labelled with its partition, a summary of what grew per partition and in the whole.\n"
        "\n"
        "options:\n"
        "  -C, --project DIR       the project (default: the current directory): gate.toml,\n"
        "                          the reports' default place, the baselines\n"
        "  -c, --config FILE       configuration (default: DIR/gate.toml when it exists)\n"
        "      --allow-missing K,...  these partitions may have no result (a job that may be\n"
        "                          absent); any other missing partition is refused\n"
        "      --junit FILE        the merged JUnit report (default: DIR/_build/gate/junit.xml)\n"
        "      --summary FILE      the Markdown summary (default: $GITHUB_STEP_SUMMARY when set)\n"
        "      --html FILE         the HTML report\n"
        "      --json FILE         the merged result as JSON (\"merged\": the partitions); -:\n"
        "                          on stdout alone, everything else on stderr\n"
        "      --comment-flag FILE true when a review comment is due, else false\n"
        "      --warn-only         memory findings are warnings, never failing the merge\n"
        "      --update-baseline   after a passing merge, write every partition's baseline\n"
        "                          (.gate/baseline.partition-K.json)\n"
        "      --commit            ... and commit them all in ONE commit on top of HEAD (which\n"
        "                          must be the commit the partitions measured), with the whole\n"
        "                          suite's summary as its git note\n"
        "      --message M         the commit message for --commit\n"
        "      --force             update the baselines from a failing merge, or one with\n"
        "                          partitions missing, too\n"
        "      --allow-outside     write outputs even where a symlink inside the project\n"
        "                          leads out of it\n"
        "  -q, --quiet             no progress lines\n"
        "  -h, --help              this help\n"
        "\n"
        "It refuses (exit 2) a missing partition, the same partition twice, results of\n"
        "different projects, commits, configurations or gate versions, and files that are\n"
        "not results (or are empty or cut short). A result file may have at most 64 MB\n"
        "(67108864 bytes); each is refused naming the file and the field it found wrong.\n"
        "exit codes: 0 passed, 1 a memory rule or a test failed, 2 gate could not merge\n";

struct merge_opts {
	const char *project_dir, *config_path;
	const char *junit, *summary, *html, *json, *comment_flag, *message;
	bool allow[RUN_MERGE_MAX + 1]; /* --allow-missing */
	bool warn_only, update_baseline, commit, force, allow_outside, quiet;
	char **files;
	size_t nfiles;
};

/* One merge: what its steps share. */
struct merge {
	const struct merge_opts *o;
	struct config cfg;
	char project[PATH_MAX];
	char junit[PATH_MAX * 2];
	char config_digest[17];
	struct run_result *r;
	size_t n;
	struct run_merged m;
	char err[4096];
};

/* --allow-missing 2,3 into o->allow. Returns 0, or the usage error's exit code. */
static int parse_allow(struct merge_opts *o, const char *arg)
{
	const char *p = arg;
	while (*p) {
		char *end;
		long k = strtol(p, &end, 10);
		if (end == p || k < 1 || k > RUN_MERGE_MAX || (*end && *end != ','))
			return gate_usage_error(
			        "merge ",
			        "--allow-missing %s: expected partition numbers "
			        "from 1, separated by commas, e.g. --allow-missing 2,3",
			        arg);
		o->allow[k] = true;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int parse_args(struct merge_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"project", required_argument, NULL, 'C'},
	        {"config", required_argument, NULL, 'c'},
	        {"allow-missing", required_argument, NULL, 'A'},
	        {"junit", required_argument, NULL, 'j'},
	        {"summary", required_argument, NULL, 'S'},
	        {"html", required_argument, NULL, 'H'},
	        {"json", required_argument, NULL, 'J'},
	        {"comment-flag", required_argument, NULL, 'K'},
	        {"warn-only", no_argument, NULL, 'W'},
	        {"update-baseline", no_argument, NULL, 'U'},
	        {"commit", no_argument, NULL, 'm'},
	        {"message", required_argument, NULL, 'M'},
	        {"force", no_argument, NULL, 'F'},
	        {"allow-outside", no_argument, NULL, 'O'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":C:c:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': o->project_dir = optarg; break;
		case 'c': o->config_path = optarg; break;
		case 'A':
			if ((rc = parse_allow(o, optarg)) != 0)
				return rc;
			break;
		case 'j': o->junit = optarg; break;
		case 'S': o->summary = optarg; break;
		case 'H': o->html = optarg; break;
		case 'J': o->json = optarg; break;
		case 'K': o->comment_flag = optarg; break;
		case 'W': o->warn_only = true; break;
		case 'U': o->update_baseline = true; break;
		case 'm': o->commit = true; break;
		case 'M': o->message = optarg; break;
		case 'F': o->force = true; break;
		case 'O': o->allow_outside = true; break;
		case 'q': o->quiet = true; break;
		case 'h': fputs(merge_help, stdout); return -1;
		case ':':
			return gate_usage_error("merge ", "option %s needs a value",
			                        argv[optind - 1]);
		default: return gate_usage_error("merge ", "unknown option %s", argv[optind - 1]);
		}
	}
	if ((o->commit || o->message || o->force) && !o->update_baseline)
		return gate_usage_error("merge ",
		                        "%s: --commit, --message and --force go with "
		                        "--update-baseline",
		                        o->commit    ? "--commit"
		                        : o->message ? "--message"
		                                     : "--force");
	if (o->message && !o->commit)
		return gate_usage_error("merge ", "%s needs --commit", "--message");
	if (optind >= argc)
		return gate_usage_error(
		        "merge ", "%s",
		        "no results given: gate merge RESULT.json... (the files each "
		        "partition's gate run --json wrote)");
	o->files = argv + optind;
	o->nfiles = (size_t)(argc - optind);
	return 0;
}

/* ---- 1. configure: the project, gate.toml, where the reports go ---- */

static int configure(struct merge *g)
{
	const struct merge_opts *o = g->o;
	if (discover_project(o->project_dir, DISCOVER_DIR, NULL, g->project, g->err,
	                     sizeof(g->err)) < 0 ||
	    discover_config(&g->cfg, g->project, o->config_path, g->err, sizeof(g->err)) < 0)
		return -1;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		errtext_set(g->err, sizeof(g->err), NULL, "out of memory");
		return -1;
	}
	config_print(&g->cfg, f);
	fclose(f);
	run_json_digest(g->config_digest, text ? text : "", len);
	free(text);
	if (o->junit)
		snprintf(g->junit, sizeof(g->junit), "%s", o->junit);
	else if (g->cfg.junit[0] == '/')
		snprintf(g->junit, sizeof(g->junit), "%s", g->cfg.junit);
	else
		snprintf(g->junit, sizeof(g->junit), "%s/%s", g->project, g->cfg.junit);
	const char *outs[][2] = {{g->junit, "the JUnit report"},
	                         {o->json, "--json"},
	                         {o->summary, "--summary"},
	                         {o->html, "--html"}};
	for (size_t i = 0; !o->allow_outside && i < sizeof(outs) / sizeof(outs[0]); i++)
		if (outs[i][0] &&
		    outpath_check(g->project, outs[i][0], outs[i][1], g->err, sizeof(g->err)) < 0)
			return -1;
	struct report_out ro = {.summary_path = o->summary, .html_path = o->html};
	return report_out_check(&ro, g->err, sizeof(g->err));
}

/* ---- 2. read the results and refuse what does not belong together ---- */

static int read_results(struct merge *g)
{
	const struct merge_opts *o = g->o;
	if (o->nfiles > RUN_MERGE_MAX) {
		errtext_set(g->err, sizeof(g->err), NULL, "%zu results: gate merges at most %d",
		            o->nfiles, RUN_MERGE_MAX);
		return -1;
	}
	g->r = calloc(o->nfiles, sizeof(*g->r));
	if (!g->r) {
		errtext_set(g->err, sizeof(g->err), NULL, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < o->nfiles; i++, g->n++)
		if (run_result_read(&g->r[i], o->files[i], g->err, sizeof(g->err)) < 0)
			return -1;
	if (run_merge_check(g->r, g->n, o->allow, RUN_MERGE_MAX + 1, g->err, sizeof(g->err)) < 0)
		return -1;
	/* the baselines go where this project's gate.toml says: it must be the partitions' */
	if (o->update_baseline && strcmp(g->config_digest, g->r[0].config_digest) != 0) {
		errtext_set(g->err, sizeof(g->err), NULL,
		            "--update-baseline: %s (digest %s) is not the configuration the "
		            "partitions ran with (digest %s in %s); run the merge in the checkout "
		            "the partitions ran in, with the same gate.toml",
		            g->cfg.source ? g->cfg.source : "the configuration", g->config_digest,
		            g->r[0].config_digest, g->r[0].name);
		return -1;
	}
	run_merge_sort(g->r, g->n);
	run_merge_judged_figures(g->r, g->n);
	if (run_merge_build(&g->m, g->r, g->n) < 0) {
		errtext_set(g->err, sizeof(g->err), NULL, "out of memory merging the results");
		return -1;
	}
	/* the judge on findings each partition's run made: --warn-only here as in gate run
	 * (every memory finding a warning) */
	struct judge_input in = {.cfg = &g->cfg.rules, .merged = true, .warn_only = o->warn_only};
	for (size_t i = 0; i <= g->n; i++)
		if (judge_run(&in, i < g->n ? &g->m.per[i] : &g->m.findings, g->err,
		              sizeof(g->err)) < 0)
			return -1;
	return 0;
}

/* ---- 3. the reports ---- */

static const char *project_name(const struct merge *g)
{
	const char *p = g->n && g->r[0].project ? g->r[0].project : g->project;
	const char *slash = strrchr(p, '/');
	return slash ? slash + 1 : p;
}

static void print_summary(struct merge *g, const struct report_data *d)
{
	bool color = report_out_color(STDOUT_FILENO);
	run_merge_growth_print(stdout, g->r, g->n, color);
	for (int k = 1; k <= g->m.partitions; k++) {
		bool here = false;
		for (size_t i = 0; i < g->n; i++)
			here = here || g->m.present[i] == k;
		if (!here)
			printf("partition %d/%d: no result (allowed by --allow-missing): its tests "
			       "and memory are not in this verdict\n",
			       k, g->m.partitions);
	}
	fflush(stderr);
	summary_print(stdout, d, color);
	fflush(stdout);
}

/* The merged run as every writer reads it (ci/report/report.h): each partition a node of
 * its own (the console summary's and the JUnit file's sections, with its seed), every
 * partition's findings in one list (the step summary, HTML report and annotations), and
 * what grew in each partition's node; a late error is set on it by the caller. nodes and
 * parts: g->n each, the caller's. */
static void merge_view(struct merge *g, struct report_data *d, struct report_node *nodes,
                       struct report_part *parts, char *node, size_t nodelen)
{
	snprintf(node, nodelen, "%zu of %d partitions, merged", g->n, g->m.partitions);
	for (size_t i = 0; i < g->n; i++) {
		nodes[i] = (struct report_node){
		        .name = g->m.labels[i],
		        .findings = &g->m.per[i],
		        .partition = g->m.present[i],
		        .seed = g->r[i].tests.seed,
		        .repeat = g->r[i].have_iterations ? &g->r[i].iterations : NULL,
		        .samples = g->r[i].have_samples ? &g->r[i].samples : NULL,
		};
		parts[i] = (struct report_part){g->m.labels[i], &g->r[i].before, &g->r[i].after};
	}
	*d = (struct report_data){
	        .project = project_name(g),
	        .node = node,
	        .gate_version = GATE_VERSION,
	        .started = g->m.started,
	        .findings = &g->m.findings,
	        .tests = &g->m.tests,
	        .junit_path = g->junit,
	        .parts = parts,
	        .nparts = g->n,
	        .nodes = nodes,
	        .nnodes = g->n,
	};
}

/* The JUnit file of the view d; -1 when it could not be written (said). */
static int write_junit(struct merge *g, const struct report_data *d)
{
	char err[1024];
	if (junit_write(g->junit, d, err, sizeof(err)) == 0)
		return 0;
	gate_error("cannot write the JUnit report: %s", err);
	return -1;
}

/* The step summary, the HTML report and the annotations of the view d (which lends them
 * the baseline's noted history while they are written). */
static int write_ci_outputs(struct merge *g, struct baseline_repo *repo, struct report_data *d)
{
	struct report_out o = {
	        .summary_path = g->o->summary,
	        .html_path = g->o->html,
	        .repo = repo,
	        .notes_ref = g->cfg.rules.baseline.notes_ref,
	        .annotations = g->cfg.annotations,
	        .comment_flag = g->o->comment_flag,
	};
	char err[1024];
	if (report_out_write(&o, d, err, sizeof(err)) == 0)
		return 0;
	gate_error("cannot write a report: %s", err);
	return -1;
}

static int write_json(struct merge *g, bool passed)
{
	/* each partition's --repeat runs and --sample series, as its own run wrote them */
	struct run_json_part *parts = calloc(g->n ? g->n : 1, sizeof(*parts));
	if (!parts) {
		errtext_set(g->err, sizeof(g->err), "--json", "%s: out of memory", g->o->json);
		return -1;
	}
	for (size_t i = 0; i < g->n; i++)
		parts[i] = (struct run_json_part){
		        .k = g->r[i].partition,
		        .iterations = g->r[i].have_iterations ? &g->r[i].iterations : NULL,
		        .samples = g->r[i].have_samples ? &g->r[i].samples : NULL,
		};
	struct run_json j = {
	        .gate_version = GATE_VERSION,
	        .project = g->r[0].project,
	        .commit = g->r[0].commit,
	        .passed = passed,
	        .started = g->m.started,
	        .tests = &g->m.tests,
	        .findings = &g->m.findings,
	        .config_digest = g->r[0].config_digest,
	        .merged = g->m.present,
	        .nmerged = g->n,
	        .parts = parts,
	        .nparts = g->n,
	};
	struct snapshot none = {0};
	j.before = j.after = &none;
	int rc = run_json_write(g->o->json, &j, g->err, sizeof(g->err));
	free(parts);
	return rc;
}

/* ---- 4. the baselines: every partition's file, in one commit ---- */

/* Each present partition's baseline path, repository-relative, into paths[i] (PATH_MAX). */
static int baseline_paths(struct merge *g, struct baseline_step *st, char (*paths)[PATH_MAX])
{
	for (size_t i = 0; i < g->n; i++) {
		char *p = g->cfg.rules.baseline.path ? strdup(g->cfg.rules.baseline.path) : NULL;
		if ((g->cfg.rules.baseline.path && !p) ||
		    faithful_baseline_partition(&p, BASELINE_DEFAULT_PATH, g->r[i].partition) < 0) {
			free(p);
			errtext_set(g->err, sizeof(g->err), NULL, "out of memory");
			return -1;
		}
		int rc = 0;
		if (st->repo)
			rc = baseline_git_relpath(paths[i], PATH_MAX, st->repo, g->project, p,
			                          g->err, sizeof(g->err));
		else
			snprintf(paths[i], PATH_MAX, "%s", p);
		free(p);
		if (rc != BASELINE_OK)
			return -1;
		if (!g->r[i].have_baseline) {
			errtext_set(
			        g->err, sizeof(g->err), NULL,
			        "%s has no \"baseline\" object: it cannot update %s; rerun that "
			        "partition",
			        g->r[i].name, paths[i]);
			return -1;
		}
	}
	return 0;
}

/* Without --commit: each file written in the working tree. */
static int baselines_write(struct merge *g, struct baseline_step *st, char (*paths)[PATH_MAX])
{
	for (size_t i = 0; i < g->n; i++) {
		char full[PATH_MAX * 2];
		const char *wd = st->repo ? baseline_git_workdir(st->repo) : NULL;
		snprintf(full, sizeof(full), "%s%s%s", wd ? wd : g->project, wd ? "" : "/",
		         paths[i]);
		if ((!g->o->allow_outside &&
		     outpath_check(g->project, full, "the baseline", g->err, sizeof(g->err)) < 0) ||
		    baseline_write(full, &g->r[i].baseline, 0, g->err, sizeof(g->err)) !=
		            BASELINE_OK)
			return -1;
		printf("gate: wrote the baseline of partition %d/%d to %s\n", g->r[i].partition,
		       g->r[i].partitions, full);
	}
	printf("gate: commit them (or use --commit: one commit for all)\n");
	return 0;
}

/* --commit: one commit of every file, the whole suite's summary as its note. */
static int baselines_commit(struct merge *g, struct baseline_step *st, char (*paths)[PATH_MAX])
{
	char oid[BASELINE_OID_HEX], notice[4096] = "", notes[256], why[2048];
	struct baseline_commit_file *files = calloc(g->n, sizeof(*files));
	const struct baseline **parts = calloc(g->n, sizeof(*parts));
	struct baseline whole = {0};
	int rc = -1;
	if (!files || !parts || run_merge_baseline_whole(&whole, g->r, g->n) < 0) {
		errtext_set(g->err, sizeof(g->err), NULL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < g->n; i++)
		files[i] = (struct baseline_commit_file){paths[i], &g->r[i].baseline};
	/* HEAD is the commit the partitions measured, or one on it that changed nothing but the
	 * baselines' directory: the baseline branch's merge of it ("gate: measure X", the
	 * templates' flow), or this merge's own earlier commit (a rerun of the job) */
	const char *expected = g->r[0].commit;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", paths[0]);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (expected && slash && st->head[0] && strcmp(st->head, expected) != 0 &&
	    baseline_git_measured_under(st->repo, expected, st->head, dir) == 1)
		expected = st->head;
	struct baseline_commit_opts co = {
	        .expected_head = expected,
	        .message = g->o->message,
	        .skip_ci = g->cfg.rules.baseline.skip_ci,
	        .notice = notice,
	        .notice_len = sizeof(notice),
	        .files = files,
	        .nfiles = g->n,
	};
	int crc = baseline_git_commit(oid, st->repo, NULL, &co, g->err, sizeof(g->err));
	for (char *line = notice, *next; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		fprintf(stderr, "gate: note: %s\n", line);
	}
	if (crc == BASELINE_UNCHANGED) {
		printf("gate: HEAD (%.7s) already has exactly these %zu baselines: nothing "
		       "committed\n",
		       oid, g->n);
		rc = 0;
		goto out;
	}
	if (crc != BASELINE_OK)
		goto out;
	baseline_step_notes_ref(notes, sizeof(notes), &g->cfg.rules.baseline);
	for (size_t i = 0; i < g->n; i++)
		parts[i] = &g->r[i].baseline;
	if (baseline_git_note_write_parts(st->repo, g->cfg.rules.baseline.notes_ref, oid, &whole,
	                                  parts, g->m.present, g->n, why,
	                                  sizeof(why)) != BASELINE_OK) {
		errtext_set(g->err, sizeof(g->err), NULL,
		            "committed %.7s (the %zu baselines), but the note under %s was not "
		            "written: %s",
		            oid, g->n, notes, why);
		goto out;
	}
	printf("gate: committed %.7s: the baselines of %zu partitions (those files only); the "
	       "whole suite's summary, and each partition's, is its note under %s\n",
	       oid, g->n, notes);
	printf("gate: publish both with:\n  git push origin HEAD\n  git push origin %s\n", notes);
	rc = 0;
out:
	baseline_clear(&whole);
	free(parts);
	free(files);
	return rc;
}

static int update_baselines(struct merge *g, struct baseline_step *st, bool passed)
{
	if (!passed && !g->o->force) {
		fprintf(stderr, "gate: the baselines were not updated: the merge failed, and a "
		                "baseline is taken from a passing run only (--force takes it "
		                "anyway)\n");
		return 0;
	}
	/* a baseline commit holds every partition's file, and its note the whole suite: with a
	 * partition missing, its old file would stand beside the new ones and the history's
	 * whole-suite figures would drop by that partition */
	if ((int)g->n < g->m.partitions && !g->o->force) {
		fprintf(stderr,
		        "gate: the baselines were not updated: %d of %d partitions have no result "
		        "(--allow-missing), and a baseline update holds every partition's (--force "
		        "writes those of the %zu present)\n",
		        g->m.partitions - (int)g->n, g->m.partitions, g->n);
		return 0;
	}
	if (g->o->commit && !st->repo) {
		errtext_set(g->err, sizeof(g->err), NULL,
		            "--commit: %s is in no git repository; run the merge in the "
		            "checkout, or leave out --commit to write the files only",
		            g->project);
		return -1;
	}
	char(*paths)[PATH_MAX] = calloc(g->n, PATH_MAX);
	if (!paths) {
		errtext_set(g->err, sizeof(g->err), NULL, "out of memory");
		return -1;
	}
	fflush(stdout);
	int rc = baseline_paths(g, st, paths);
	if (rc == 0)
		rc = g->o->commit ? baselines_commit(g, st, paths) : baselines_write(g, st, paths);
	free(paths);
	return rc;
}

/* ---- the command ---- */

/* The verdict, then the reports, each once: JUnit first (one that cannot be written is exit
 * 2 before the baseline commit), the summary, --json and the baselines, then the step
 * summary, the HTML report and the annotations; a late failure joins them as an error. */
static int conclude(struct merge *g)
{
	static struct baseline_step st;
	memset(&st, 0, sizeof(st));
	struct verdict_tally vt = model_verdict_tally(&g->m.findings, &g->m.tests);
	bool passed = model_verdict(&vt) == GATE_PASSED;
	int code = passed ? GATE_EXIT_PASS : GATE_EXIT_FAIL;
	struct report_node *nodes = calloc(g->n ? g->n : 1, sizeof(*nodes));
	struct report_part *parts = calloc(g->n ? g->n : 1, sizeof(*parts));
	char node[64];
	if (!nodes || !parts) {
		free(nodes);
		free(parts);
		gate_error("cannot write the reports: out of memory");
		return GATE_EXIT_ERROR;
	}
	struct report_data d;
	merge_view(g, &d, nodes, parts, node, sizeof(node));
	bool junit = write_junit(g, &d) == 0;
	print_summary(g, &d);
	if (!junit)
		code = GATE_EXIT_ERROR;
	const char *late = NULL;
	bool want_repo = g->o->update_baseline || g->o->html;
	if (junit && want_repo &&
	    baseline_step_locate(&st, g->project, &g->cfg.rules.baseline, g->err, sizeof(g->err)) <
	            0)
		late = g->err;
	if (junit && !late && g->o->json && write_json(g, passed) < 0)
		late = g->err;
	if (junit && !late && g->o->update_baseline && update_baselines(g, &st, passed) < 0)
		late = g->err;
	if (late) {
		gate_error("%s", late);
		code = GATE_EXIT_ERROR;
		d.error = late;
		(void)write_junit(g, &d);
	}
	if (write_ci_outputs(g, st.repo, &d) < 0)
		code = GATE_EXIT_ERROR;
	baseline_step_clear(&st);
	free(nodes);
	free(parts);
	return code;
}

int merge_cmd_main(int argc, char **argv)
{
	static struct merge_opts o;
	static struct merge g;
	memset(&o, 0, sizeof(o));
	memset(&g, 0, sizeof(g));
	int rc = parse_args(&o, argc, argv);
	if (rc != 0)
		return rc < 0 ? GATE_EXIT_PASS : rc;
	g.o = &o;
	int code;
	if (configure(&g) < 0 || read_results(&g) < 0) {
		code = gate_error("%s", g.err);
	} else {
		if (!o.quiet)
			fprintf(stderr,
			        "gate: merging %zu result%s of %d partitions (commit %.12s)\n", g.n,
			        g.n == 1 ? "" : "s", g.m.partitions,
			        g.r[0].commit ? g.r[0].commit : "none");
		code = conclude(&g);
	}
	for (size_t i = 0; g.r && i < o.nfiles; i++)
		run_result_clear(&g.r[i]);
	free(g.r);
	run_merged_clear(&g.m);
	config_clear(&g.cfg);
	return code;
}
