/* ci/report/xml_safe.h: outside text (test names, failure messages, anything a node says) made safe
 * for XML 1.0, for the JUnit writer. Nothing here does I/O. */
#ifndef GATE_CI_REPORT_XML_SAFE_H
#define GATE_CI_REPORT_XML_SAFE_H

#include <stddef.h>

enum safe_mode {
	SAFE_ALL,       /* the whole text, newlines kept */
	SAFE_FIRST_LINE /* the first non-blank line, trimmed: for message="..." */
};

/* Returns a malloc'd copy of in (NULL is taken as "") that is valid UTF-8 holding only
 * characters XML 1.0 allows, at most max bytes long plus a note when cut ("…" in
 * SAFE_FIRST_LINE mode). Returns NULL on allocation failure. */
char *xml_safe(const char *in, size_t max, enum safe_mode mode);

#endif
