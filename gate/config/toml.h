/* gate/config/toml.h: a small strict TOML 1.0 reader (no dates) for gate.toml.
 *
 * Ownership: toml_parse hands the caller one tree in *out, freed with toml_free (which
 * accepts NULL). Every pointer the getters return (values, keys, strings) is borrowed from
 * that tree and lives until toml_free. Nothing here does I/O.
 *
 * Strict: duplicate keys, redefined tables, bad escapes, control characters, invalid UTF-8,
 * integer overflow, leading zeros and anything after a value are errors. Offset dates,
 * local dates and times are rejected ("dates are not supported here"). Input is capped at
 * TOML_MAX_INPUT bytes, arrays and inline tables nest at most TOML_MAX_DEPTH deep, a key
 * has at most TOML_MAX_DEPTH parts and a table at most TOML_MAX_KEYS keys.
 */
#ifndef GATE_TOML_H
#define GATE_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOML_MAX_INPUT ((size_t)1 << 20) /* 1 MiB */
#define TOML_MAX_DEPTH 64
#define TOML_MAX_KEYS 1024

enum toml_type { TOML_STRING, TOML_INTEGER, TOML_FLOAT, TOML_BOOLEAN, TOML_ARRAY, TOML_TABLE };

/* Opaque: read it with the getters below. */
struct toml_value;

/* A place in the input: 1-based line and column; the column counts characters, not bytes. */
struct toml_pos {
	int line;
	int col;
};

/* Parses len bytes of text (need not be NUL-terminated) into a tree whose root is a table.
 * Returns 0, or -1 with *out NULL and err holding "line:col: what is wrong, what was
 * expected" (truncated to errlen; err may be NULL when errlen is 0). Out of memory is
 * reported as "out of memory" with the position reached. */
int toml_parse(struct toml_value **out, const char *text, size_t len, char *err, size_t errlen);

void toml_free(struct toml_value *v);

/* "string", "integer", "float", "boolean", "array", "table". */
const char *toml_type_name(enum toml_type type);

/* v must not be NULL; every other getter accepts NULL and answers as for a wrong type. */
enum toml_type toml_type(const struct toml_value *v);
/* Where the value starts: a scalar's first character, an array's '[', an inline table's
 * '{', a [table] or [[table]] header's first '['; a table made by a dotted key or as the
 * parent in a header starts at that key part. */
struct toml_pos toml_pos(const struct toml_value *v);

/* Payloads; each returns NULL / 0 / false when v is not of that type. A string may hold
 * NUL characters (from \u0000): *len (when len is not NULL) is its length in bytes, and
 * the text is NUL-terminated after that. */
const char *toml_string(const struct toml_value *v, size_t *len);
int64_t toml_integer(const struct toml_value *v);
double toml_float(const struct toml_value *v);
bool toml_boolean(const struct toml_value *v);

/* Tables, keys in file order. toml_get returns NULL when table is not a table or has no
 * such key (key is matched byte for byte, up to its NUL). Out-of-range i gives NULL. */
const struct toml_value *toml_get(const struct toml_value *table, const char *key);
size_t toml_table_len(const struct toml_value *table);
const char *toml_table_key(const struct toml_value *table, size_t i);
const struct toml_value *toml_table_value(const struct toml_value *table, size_t i);
/* Where key i was first written ({0, 0} when out of range). */
struct toml_pos toml_table_key_pos(const struct toml_value *table, size_t i);

/* Arrays, including arrays of tables ([[name]]). */
size_t toml_array_len(const struct toml_value *array);
const struct toml_value *toml_array_at(const struct toml_value *array, size_t i);

/* For tests: every allocation of this module goes through fn (realloc's contract; it is
 * also called with size 0 to free). NULL restores realloc. Not thread-safe. */
void toml_set_realloc(void *(*fn)(void *ptr, size_t size));

#endif
