/* gate/run/report_out.h: the run's CI outputs besides JUnit and the console: the Markdown step
 * summary (--summary, default $GITHUB_STEP_SUMMARY), the HTML report (--html) and, under
 * GitHub Actions, `::error` annotations on stdout. The writers are ci/markdown, ci/html and
 * ci/annotate; this file picks the paths, reads the notes history for the trend chart and
 * writes the files atomically. */
#ifndef GATE_REPORT_OUT_H
#define GATE_REPORT_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include "ci/git/baseline_git.h"
#include "ci/report/report.h"

/* Noted runs the HTML trend chart shows at most. */
#define REPORT_OUT_HISTORY_MAX 100

struct report_out {
	const char *summary_path; /* --summary FILE: replaced; NULL: $GITHUB_STEP_SUMMARY, appended
	                             to (GitHub's convention), when set */
	const char *html_path;    /* --html FILE; NULL: none */
	/* for the trend chart: the repository, the notes ref and where the history starts (the
	 * baseline's commit; NULL: HEAD). repo NULL: no history. */
	struct baseline_repo *repo;
	const char *notes_ref;
	const char *history_from;
	/* a reviewer's attention: annotations and the review comment */
	int annotations;          /* the annotation budget ([attention] annotations); 0: default */
	const char *comment_flag; /* --comment-flag FILE: whether a review comment is due; NULL */
	int partition;            /* a partition's run charts its own figures of merged notes */
};

/* A review comment is due when the gate failed or a figure regressed against the baseline
 * (a baseline or trend finding failed or warned). */
bool report_out_comment_due(const struct report_data *d);

/* Refuses an output path that cannot be a file (empty, a directory) before the run starts.
 * Returns 0, or -1 with err naming the option and the path. */
int report_out_check(const struct report_out *o, char *err, size_t errlen);

/* Writes what o asks for about d (d->history is filled here when the HTML report is asked
 * and o->repo is set, and reset before returning), and the annotations when
 * GITHUB_ACTIONS=true. Returns 0, or -1 with err naming the file (the run is then exit 2);
 * a file that could not be written is left as it was. */
int report_out_write(const struct report_out *o, struct report_data *d, char *err, size_t errlen);

/* Whether to colour output on fd: a terminal, NO_COLOR unset or empty, TERM not "dumb". */
bool report_out_color(int fd);

#endif
