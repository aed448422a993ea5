/* ci/report/snapshot_text.h: one snapshot as readable tables (`gate snapshot`). */
#ifndef GATE_CI_REPORT_SNAPSHOT_TEXT_H
#define GATE_CI_REPORT_SNAPSHOT_TEXT_H

#include <stdio.h>

#include "model/snapshot.h"

/* Categories, system figures, the top processes by memory (rows at most), the largest ETS
 * tables and the allocators. */
void snapshot_text_print(FILE *out, const struct snapshot *s, size_t rows);

#endif
