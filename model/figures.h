/* model/figures.h: counts and byte sizes for people */
#ifndef GATE_MODEL_FIGURES_H
#define GATE_MODEL_FIGURES_H

#include <stddef.h>
#include <stdint.h>

/* Formats a count for people, in groups of three digits: "20 000", "-1 234". */
void model_count_format(char *buf, size_t len, int64_t n);
/* Formats a byte count for people: "812 B", "13.7 MB", "-1.2 MB" (SI units). */
void model_bytes_format(char *buf, size_t len, int64_t bytes);

#endif
