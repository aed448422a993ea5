/* ci/report/html.h: the HTML report: one self-contained file (inline CSS and SVG, no scripts, no
 * external assets; a Content-Security-Policy forbids loading any) with the verdict,
 * before/after bars per memory category, the rule verdicts, the top processes and ETS
 * tables after the run, the baseline trend from the notes history as a chart (one point per
 * noted run, the current run beside them) and the failed tests.
 *
 * Text from the suite is escaped for HTML and XML alike: the page is well-formed XML too,
 * so a test can parse it strictly. Invalid UTF-8 and control characters become U+FFFD,
 * ANSI escapes are dropped.
 */
#ifndef GATE_CI_REPORT_HTML_H
#define GATE_CI_REPORT_HTML_H

#include <stdio.h>

#include "ci/report/report.h"

/* Rows of the process and ETS tables. */
#define HTML_TOP_MAX 10
/* Rule verdicts and failed tests before "and N more". */
#define HTML_ROWS_MAX 500
/* Findings and failed tests in the headline under the verdict. */
#define HTML_HEADLINE_MAX 5
/* Characters of one message before it is cut. */
#define HTML_MESSAGE_MAX 4000

/* Writes the report of d to out. Returns 0, or -1 on a write error (see ferror(out)). */
int html_report_write(FILE *out, const struct report_data *d);

#endif
