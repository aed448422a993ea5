/* ci/store/json_text.h: a jansson document as the text of a file gate writes (baseline, snapshot,
 * run result): json_dumps with the flags given, and a final newline. */
#ifndef GATE_CI_STORE_JSON_TEXT_H
#define GATE_CI_STORE_JSON_TEXT_H

#include <stddef.h>

#include <jansson.h>

/* The text of root, NUL-terminated and ending in "\n" (malloc'd), its length without the NUL in
 * *len (len may be NULL); NULL when out of memory. */
char *json_text(const json_t *root, size_t flags, size_t *len);

#endif
