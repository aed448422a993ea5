/* gate/run/report_out.c: the step summary, the HTML report and the annotations of a run. */
#include "base/errtext.h"
#include "gate/run/report_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/readfile.h"
#include "ci/report/annotate.h"
#include "ci/report/html.h"
#include "ci/report/markdown.h"
#include "model/verdict.h"

/* An existing step summary file larger than this is not read back to append to it. */
#define SUMMARY_APPEND_MAX (8 * 1024 * 1024)

static int check_path(const char *opt, const char *path, char *err, size_t errlen)
{
	struct stat st;
	size_t n = path ? strlen(path) : 0;
	if (!path)
		return 0;
	if (n == 0 || path[n - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
		errtext_set(err, errlen, NULL,
		            "%s %s: not a file name; give the file to write, e.g. %s "
		            "out/gate.%s",
		            opt, path, opt, strcmp(opt, "--html") == 0 ? "html" : "md");
		return -1;
	}
	return 0;
}

int report_out_check(const struct report_out *o, char *err, size_t errlen)
{
	const char *env = getenv("GITHUB_STEP_SUMMARY");
	if (check_path("--html", o->html_path, err, errlen) < 0 ||
	    check_path("--summary", o->summary_path, err, errlen) < 0)
		return -1;
	if (!o->summary_path && env && env[0] &&
	    check_path("$GITHUB_STEP_SUMMARY", env, err, errlen) < 0)
		return -1;
	/* a step summary gate cannot append to is said before the run, not after the verdict */
	struct stat st;
	if (!o->summary_path && env && env[0] && stat(env, &st) == 0 &&
	    st.st_size > SUMMARY_APPEND_MAX) {
		errtext_set(err, errlen, NULL,
		            "$GITHUB_STEP_SUMMARY %s: %lld bytes, over the 8 MiB gate appends to; "
		            "give another file with --summary FILE",
		            env, (long long)st.st_size);
		return -1;
	}
	return 0;
}

/* Reads the file at path into *out (malloc'd) when it exists; *len 0 when it does not. */
static int read_existing(char **out, size_t *len, const char *path, char *err, size_t errlen)
{
	char why[1024];
	switch (readfile_bounded(path, SUMMARY_APPEND_MAX, 0, out, len, why, sizeof(why))) {
	case READFILE_OK: return 0;
	case READFILE_MISSING: return 0;
	case READFILE_ERROR: break;
	}
	errtext_set(err, errlen, NULL,
	            "cannot append the summary: %s (gate appends to at most 8 MiB; give another "
	            "file with --summary FILE)",
	            why);
	return -1;
}

static int write_summary(const char *path, bool append, const struct report_data *d, char *err,
                         size_t errlen)
{
	struct textbuf md = {0};
	char *old = NULL;
	size_t oldlen = 0;
	int rc = -1;

	if (markdown_summary_format(&md, d) < 0) {
		errtext_set(err, errlen, NULL, "%s: out of memory formatting the summary", path);
		return -1;
	}
	if (append && read_existing(&old, &oldlen, path, err, errlen) < 0)
		goto out;
	if (old && oldlen) {
		/* a blank line between what the step wrote before and our part */
		bool nl = old[oldlen - 1] == '\n';
		char *both = malloc(oldlen + 2 + md.len);
		if (!both) {
			errtext_set(err, errlen, NULL, "%s: out of memory appending the summary",
			            path);
			goto out;
		}
		memcpy(both, old, oldlen);
		size_t n = oldlen;
		if (!nl)
			both[n++] = '\n';
		both[n++] = '\n';
		memcpy(both + n, md.s, md.len);
		rc = atomic_file_replace_report(path, both, n + md.len, err, errlen);
		free(both);
	} else {
		rc = atomic_file_replace_report(path, md.s ? md.s : "", md.len, err, errlen);
	}
out:
	free(old);
	textbuf_free(&md);
	return rc;
}

static int write_html(const char *path, const struct report_data *d, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		errtext_set(err, errlen, NULL, "%s: out of memory formatting the HTML report",
		            path);
		return -1;
	}
	int wrc = html_report_write(f, d);
	if (fclose(f) != 0 || wrc < 0) {
		errtext_set(err, errlen, NULL, "%s: out of memory formatting the HTML report",
		            path);
		free(text);
		return -1;
	}
	int rc = atomic_file_replace_report(path, text, len, err, errlen);
	free(text);
	return rc;
}

bool report_out_comment_due(const struct report_data *d)
{
	if (report_verdict(d) != GATE_PASSED)
		return true;
	for (size_t i = 0; d->findings && i < d->findings->count; i++) {
		const struct finding *f = &d->findings->items[i];
		if ((f->verdict == VERDICT_FAIL || f->warned) && (f->show & SHOW_REGRESSION))
			return true;
	}
	return false;
}

/* --comment-flag FILE gets "true\n" or "false\n"; under GitHub Actions $GITHUB_OUTPUT also
 * gets "comment=true|false" for the workflow's `if:`. */
static int comment_flag_write(const struct report_out *o, const struct report_data *d, char *err,
                              size_t errlen)
{
	bool due = report_out_comment_due(d);
	const char *gho = getenv("GITHUB_OUTPUT");
	if (o->comment_flag &&
	    atomic_file_replace_report(o->comment_flag, due ? "true\n" : "false\n", due ? 5 : 6,
	                               err, errlen) < 0)
		return -1;
	if (gho && *gho) {
		FILE *f = fopen(gho, "a");
		if (!f || fprintf(f, "comment=%s\n", due ? "true" : "false") < 0 ||
		    fclose(f) != 0) {
			errtext_set(err, errlen, NULL, "%s ($GITHUB_OUTPUT): cannot append: %s",
			            gho, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int report_out_write(const struct report_out *o, struct report_data *d, char *err, size_t errlen)
{
	const char *env = getenv("GITHUB_STEP_SUMMARY");
	const char *summary = o->summary_path ? o->summary_path : env && env[0] ? env : NULL;
	const char *gha = getenv("GITHUB_ACTIONS");
	struct baseline_history hist = {0};
	int rc = 0;

	if (gha && strcmp(gha, "true") == 0) {
		fflush(stdout);
		annotate_github_write_max(stdout, d, getenv("GITHUB_WORKSPACE"), o->annotations);
		fflush(stdout);
	}
	if (summary && write_summary(summary, !o->summary_path, d, err, errlen) < 0)
		return -1;
	if (comment_flag_write(o, d, err, errlen) < 0)
		return -1;
	if (!o->html_path)
		return 0;
	if (o->repo) {
		char herr[1024];
		if (baseline_git_history_partition(&hist, o->repo, o->notes_ref, o->history_from,
		                                   REPORT_OUT_HISTORY_MAX, 0, o->partition, herr,
		                                   sizeof(herr)) != BASELINE_OK)
			/* the report still helps without its chart: say why it is empty */
			fprintf(stderr, "gate: the HTML report has no trend: %s\n", herr);
		d->history = hist.items;
		d->nhistory = hist.count;
	}
	rc = write_html(o->html_path, d, err, errlen);
	d->history = NULL;
	d->nhistory = 0;
	baseline_history_clear(&hist);
	return rc;
}

bool report_out_color(int fd)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
	if (no && no[0])
		return false;
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(fd) == 1;
}
