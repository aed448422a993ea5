/* ci/report/markdown.h: the Markdown step summary (GitHub's $GITHUB_STEP_SUMMARY, or any file):
 * the verdict, a table of the memory categories, one row per rule, the culprits (the failing
 * findings' messages), the test counts and the failed tests.
 *
 * Text from the suite is escaped for GitHub-flavoured Markdown: table pipes, HTML, emphasis
 * and link characters, newlines, control characters and invalid UTF-8 cannot change the
 * page's structure. The whole text stays under MARKDOWN_SUMMARY_MAX bytes (GitHub takes up
 * to 1 MiB per step); what does not fit is left out, and the summary says so.
 */
#ifndef GATE_CI_REPORT_MARKDOWN_H
#define GATE_CI_REPORT_MARKDOWN_H

#include <stdio.h>

#include "base/grow.h"
#include "ci/report/report.h"

#define MARKDOWN_SUMMARY_MAX (128 * 1024)
/* Culprits and failed tests listed before "and N more". */
#define MARKDOWN_LIST_MAX 50
/* Detail lines (the likely culprits) under one culprit. */
#define MARKDOWN_DETAIL_MAX 12

/* Formats the summary into out (zeroed; its cap is set here). Returns 0, or -1 when out of
 * memory (out is then freed). */
int markdown_summary_format(struct textbuf *out, const struct report_data *d);

/* Formats the summary and writes it to f. Returns 0, or -1 (out of memory, or a write error:
 * see ferror(f)). */
int markdown_summary_write(FILE *f, const struct report_data *d);

#endif
