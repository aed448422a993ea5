/* gate/run/baseline_step.c: the baseline step of `gate run` (see baseline_step.h). */
#include "base/errtext.h"
#include "gate/run/baseline_step.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/outpath.h"
#include "base/thread.h"
#include "ci/store/baseline_file.h"
#include "gate/version.h"
#include "model/snapshot.h"

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
	return lstat("/.git", &(struct stat){0}) == 0;
}

static void dirty_read(struct baseline_step *st);

static const char *cfg_path(const struct baseline_config *cfg)
{
	return cfg->path ? cfg->path : BASELINE_DEFAULT_PATH;
}

void baseline_step_notes_ref(char *buf, size_t len, const struct baseline_config *cfg)
{
	const char *n = cfg->notes_ref ? cfg->notes_ref : BASELINE_DEFAULT_NOTES_REF;
	if (strncmp(n, "refs/", 5) == 0)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "refs/notes/%s", n);
}

/* Opens the repository of project (if any) and finds the baseline file and HEAD. */
int baseline_step_locate(struct baseline_step *st, const char *project,
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
	if (!st->defer_dirty)
		dirty_read(st);
	return 0;
}

static void dirty_read(struct baseline_step *st)
{
	st->dirty =
	        st->repo && st->head[0] && baseline_git_worktree_dirty(st->repo, st->relpath) == 1;
	st->dirty_read = true;
}

static void *dirty_main(void *arg)
{
	dirty_read(arg);
	return NULL;
}

void baseline_step_dirty_start(struct baseline_step *st)
{
	if (!st->repo || st->dirty_running || st->dirty_read)
		return;
	st->dirty_running = thread_start(&st->dirty_thread, false, dirty_main, st) == 0;
}

void baseline_step_dirty_join(struct baseline_step *st)
{
	if (st->dirty_running) {
		pthread_join(st->dirty_thread, NULL);
		st->dirty_running = false;
	}
	if (!st->dirty_read && st->repo)
		dirty_read(st);
}

int baseline_step_read(struct baseline_step *st, const char *project,
                       const struct baseline_config *cfg, const char *ref, char *err, size_t errlen)
{
	const char *asked = ref ? ref : (cfg->ref ? cfg->ref : BASELINE_DEFAULT_REF);
	bool worktree = strcmp(asked, BASELINE_REF_WORKTREE) == 0;
	int rc;

	if (baseline_step_locate(st, project, cfg, err, errlen) < 0)
		return -1;
	if (!st->repo) {
		if (!worktree) {
			st->no_repo = true;
			snprintf(st->missing_where, sizeof(st->missing_where),
			         "%s:%s (%s is in no git repository)", asked, cfg_path(cfg),
			         project);
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
	rc = baseline_git_read(&st->base, &st->src, st->repo, asked, ref == NULL, st->relpath, err,
	                       errlen);
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
	if (baseline_git_history_partition(&st->hist, st->repo, cfg->notes_ref, from,
	                                   (size_t)cfg->trend_window, 0, st->partition, err,
	                                   errlen) != BASELINE_OK)
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
		snprintf(buf, len,
		         "baseline: skipped, %s is in no git repository (a required "
		         "baseline fails)",
		         st->project);
	else if (!st->have_base)
		snprintf(buf, len, "baseline: none at %s%s%s", st->missing_where, fb, hist);
	else if (st->src.commit[0])
		snprintf(buf, len, "baseline: %s at commit %.12s%s%s", st->src.where,
		         st->src.commit, fb, hist);
	else
		snprintf(buf, len, "baseline: %s (working tree)%s", st->src.where, hist);
}

const struct judge_baseline *baseline_step_judged(const struct baseline_step *st,
                                                  const struct baseline_config *cfg,
                                                  struct judge_baseline *out)
{
	if (st->no_repo && !cfg->require)
		return NULL;
	*out = (struct judge_baseline){
	        .base = st->have_base ? &st->base : NULL,
	        .where = st->have_base ? st->src.where : st->missing_where,
	        .history = st->hist.items,
	        .nhistory = st->hist.count,
	};
	return out;
}

int baseline_step_make(struct baseline *out, const struct baseline_step *st,
                       const struct snapshot *after, const char *elixir_version, int64_t timestamp,
                       int64_t test_count)
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
	baseline_step_notes_ref(notes, sizeof(notes), cfg);

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
		errtext_set(err, errlen, NULL,
		            "--commit: %s is in no git repository; run git init and "
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
		fprintf(out,
		        "gate: HEAD (%.7s) already has exactly this baseline at %s: nothing "
		        "committed\n",
		        oid, st->relpath);
		return 0;
	}
	if (rc != BASELINE_OK)
		return -1;
	if (baseline_git_note_write(st->repo, cfg->notes_ref, oid, b, false, why, sizeof(why)) !=
	    BASELINE_OK) {
		errtext_set(err, errlen, NULL,
		            "committed %.7s (%s), but the note under %s was not written: "
		            "%s",
		            oid, st->relpath, notes, why);
		return -1;
	}
	fprintf(out,
	        "gate: committed %.7s %s (that file only); the run's summary is its note "
	        "under %s\n",
	        oid, st->relpath, notes);
	fprintf(out, "gate: publish both with:\n  git push origin HEAD\n  git push origin %s\n",
	        notes);
	return 0;
}

void baseline_step_clear(struct baseline_step *st)
{
	if (!st)
		return;
	if (st->dirty_running)
		pthread_join(st->dirty_thread, NULL);
	baseline_clear(&st->base);
	baseline_history_clear(&st->hist);
	baseline_git_close(st->repo);
	memset(st, 0, sizeof(*st));
}

/* ---- the subcommands ---- */
