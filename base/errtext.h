/* base/errtext.h: the one way ci/ writers fill a caller's error buffer: "NAME: what: why". */
#ifndef GATE_BASE_ERRTEXT_H
#define GATE_BASE_ERRTEXT_H

#include <stddef.h>

/* Writes "name: " (left out when name is NULL) and the formatted text to err; a NULL err or
 * an errlen of 0 is a no-op, and the text is cut to fit. */
void errtext_set(char *err, size_t errlen, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

#endif
