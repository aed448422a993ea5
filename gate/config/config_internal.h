/* gate/config/config_internal.h: what the files of gate/config/ share to read gate.toml and
 * print it back, and nothing outside gate/config/ includes: where a message goes, the typed
 * value readers, and the schema of every table.
 *
 *   config.c           defaults, the file read, [growth], [[ets.table]], the root
 *   config_schema.c    every table key by key, with what each key does (one list: loading,
 *                      messages, printing, the reference)
 *   config_value.c     values converted and checked by kind (durations and sizes through units.h)
 *   config_msg.c       "name:line:col: key: what; fix", key paths, did-you-mean suggestions
 *   config_print.c     config_print, and one value as TOML for the reference
 *   config_reference.c `gate config reference`: the schema as Markdown
 *   config_template.c  `gate config init`: the short gate.toml and its careful write
 *
 * Every config_get_* and config_load_key returns 0, or -1 with the message written through
 * the loader (config_fail), the destination untouched.
 */
#ifndef GATE_CONFIG_INTERNAL_H
#define GATE_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gate/config/toml.h"

/* Where messages go: "name:line:col: key: what; fix". */
struct loader {
	const char *name;
	char *err;
	size_t errlen;
};

/* ---- messages (config_msg.c) ---- */

/* Writes "name:line:col: key: " and the formatted text to ld; returns -1. */
int config_fail(struct loader *ld, struct toml_pos pos, const char *key, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* prefix.key, quoting key as TOML does when it is not bare. */
void config_key_path(char *out, size_t n, const char *prefix, const char *key);

/* The valid key closest to key when it is close enough to be a typo, else NULL. */
const char *config_suggest(const char *key, const char *const *valid);

/* "a, b, c" from a NULL-terminated list. */
void config_join_keys(char *out, size_t n, const char *const *keys);

/* "unknown key; did you mean ...?" or "unknown key; TABLE takes a, b, c"; returns -1. */
int config_unknown_key(struct loader *ld, struct toml_pos pos, const char *path, const char *key,
                       const char *const *valid, const char *table);

/* ---- values (config_value.c) ---- */

/* "expected EXPECTED, got a TYPE; FIX"; returns -1. */
int config_type_fail(struct loader *ld, const struct toml_value *v, const char *path,
                     const char *expected, const char *fix);
int config_get_table(struct loader *ld, const struct toml_value *v, const char *path,
                     const char *fix);
/* A copy of the string into *dst (the old one freed); nonempty refuses "". */
int config_get_string(struct loader *ld, const struct toml_value *v, const char *path,
                      bool nonempty, const char *example, char **dst);
int config_get_bool(struct loader *ld, const struct toml_value *v, const char *path, bool *dst);
/* A timeout: an integer of seconds or a string (units.h), above 0 and at most 24 h. */
int config_get_duration(struct loader *ld, const struct toml_value *v, const char *path, int *dst);
int config_get_size(struct loader *ld, const struct toml_value *v, const char *path, int64_t *dst);
int config_get_percent(struct loader *ld, const struct toml_value *v, const char *path,
                       double *dst);

/* ---- the schema of the tables (config_schema.c) ---- */

enum key_kind {
	KEY_SIZE,         /* int64_t bytes */
	KEY_SIZE_OFF,     /* int64_t bytes, or RULES_OFF */
	KEY_COUNT,        /* int64_t from min to max */
	KEY_COUNT_OFF,    /* the same, or RULES_OFF */
	KEY_INT,          /* int from min to max */
	KEY_PCT,          /* double percent, 0 or more */
	KEY_PCT_OFF,      /* the same, or -1 */
	KEY_SHARE_OFF,    /* double percent of a whole, 0 to 100, or -1 */
	KEY_NUMBER,       /* double, 0 or more */
	KEY_BOOL,         /* bool */
	KEY_GLOB,         /* char *, not empty */
	KEY_PATH,         /* char *, relative, inside the repository */
	KEY_REF,          /* char *, a git ref or shorthand */
	KEY_NOTES_REF,    /* char *, a full git ref */
	KEY_SEVERITY,     /* bool warn: "error" (false) or "warn" (true) */
	KEY_STRING,       /* char *, not empty */
	KEY_FLAGS,        /* char *, may be empty */
	KEY_DURATION,     /* int milliseconds, above 0 and at most 24 h (units.h) */
	KEY_DURATION_OFF, /* the same, or 0 written "off" */
};

/* The off of a key that has no field of its own: [growth] max and floor stand in for every
 * category's (config.c reads them). */
#define KEY_NO_FIELD ((size_t)-1)

struct key_spec {
	const char *key;
	enum key_kind kind;
	size_t off;          /* of the field in the struct the section fills */
	int64_t min, max;    /* KEY_COUNT, KEY_COUNT_OFF, KEY_INT */
	const char *example; /* a value as written in gate.toml, for messages */
	const char *null_is; /* strings: what a NULL field means (printed for it) */
	const char *doc;     /* what the key does, one line (gate config reference) */
};

struct section {
	const char *name;
	const struct key_spec *keys;
	const char *extra; /* a key the section's own code reads (ets: the [[ets.table]] array) */
	const char *doc;   /* what the table is for, one line (gate config reference) */
};

/* [node] and [output], loaded and printed key by key like the sections below. */
extern const struct section config_node_section;
extern const struct section config_output_section;
/* The tables below [growth] in print order, ending with {NULL}; [ets]'s extra is [[ets.table]]. */
extern const struct section config_sections[];
/* The keys of one [[ets.table]] entry, "name" first, and the entry's section (for its doc). */
extern const struct key_spec config_ets_table_keys[];
extern const struct section config_ets_table_section;
/* [growth] (max, floor, live_totals) and one [growth.<category>] (enabled, max, floor, their
 * offsets in struct growth_limit): config.c reads them with code of its own; here for the
 * names in messages and for the reference. */
extern const struct section config_growth_section;
extern const struct section config_category_section;
/* What each erlang:memory category judges, by enum mem_cat, for the reference. */
extern const char *const config_category_docs[];

/* The spec of key in keys, or NULL. */
const struct key_spec *config_spec_find(const struct key_spec *keys, const char *key);
/* The valid keys of a section (and extra), NULL-terminated in out[n], for messages. */
void config_spec_names(const struct key_spec *keys, const char *extra, const char **out, size_t n);

/* Reads v into the field spec describes, in the struct at base (config_value.c). */
int config_load_key(struct loader *ld, const struct key_spec *spec, const struct toml_value *v,
                    const char *path, void *base);

/* The value of the field spec describes, in the struct at base, as gate.toml writes it
 * ("64 MB", "off", 10000, true): what config_print prints after "key = " (config_print.c).
 * A string field that is NULL without a null_is prints as "". */
void config_print_value(FILE *out, const struct key_spec *spec, const void *base);

#endif
