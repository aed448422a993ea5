/* ci/report/annotate.h: GitHub Actions workflow commands for a run: `::error` lines for failing
 * rule findings and failed tests within an attention budget, which GitHub shows on the run's page
 * and, with file and line, beside the test's code.
 *
 * Escaping follows GitHub's toolkit: in the message '%', CR and LF become %25, %0D and %0A;
 * in properties (title, file) ':' and ',' become %3A and %2C as well. So text from the suite
 * cannot end a command early or start a new one. ANSI escapes are dropped, control
 * characters and invalid UTF-8 become U+FFFD.
 */
#ifndef GATE_CI_REPORT_ANNOTATE_H
#define GATE_CI_REPORT_ANNOTATE_H

#include <stdio.h>

#include "ci/report/report.h"

/* Characters of one message before it is cut. */
#define ANNOTATE_MESSAGE_MAX 2000

/* Writes the annotations of d to out. workspace: the repository's root ($GITHUB_WORKSPACE),
 * stripped from test files so that GitHub can place them; may be NULL. Returns 0, or -1 on
 * a write error. */
int annotate_github_write(FILE *out, const struct report_data *d, const char *workspace);

/* The attention budget: at most max lines (GitHub shows 10 errors per step), in
 * this order: gate's own error, failed tests (with file and line), failing memory findings
 * in the rules' order (the most specific first; at the culprit test's file and line when
 * known), warnings (::warning); when they do not all fit, the last line is one ::notice
 * saying how many of each were left out. annotate_github_write uses ANNOTATE_DEFAULT. */
#define ANNOTATE_DEFAULT 8
int annotate_github_write_max(FILE *out, const struct report_data *d, const char *workspace,
                              int max);

#endif
