/* gate/config/toml_internal.h: what the files of the TOML reader share (toml_parse.c,
 * toml_scalar.c, toml_tree.c), and nothing else includes: the tree's layout, the parser's cursor
 * and the helpers every part of the reader uses. Functions returning int give 0, or -1 once the
 * message is in the parser (toml_fail_at: only the first failure is kept).
 */
#ifndef GATE_TOML_INTERNAL_H
#define GATE_TOML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gate/config/toml.h"

/* How a table or array came to be; TOML's rules on redefinition depend on it. */
enum {
	T_HEADER = 1,   /* table: defined by [header], or an element of [[header]] */
	T_IMPLICIT = 2, /* table: made as a parent in a header; one [header] may still define it */
	T_DOTTED = 4,   /* table: made by a dotted key; only more dotted keys can add to it */
	T_INLINE = 8,   /* table: inline; closed once its '}' is read */
	A_TABLES = 16,  /* array: an array of tables, which [[header]] appends to */
};

struct entry {
	char *key;
	size_t keylen;
	struct toml_pos pos;
	struct toml_value *value;
};

struct toml_value {
	enum toml_type type;
	unsigned flags;
	struct toml_pos pos;
	union {
		struct {
			char *ptr;
			size_t len;
		} str;
		int64_t integer;
		double flt;
		bool boolean;
		struct {
			struct toml_value **items;
			size_t len, cap;
		} arr;
		struct {
			struct entry *items;
			size_t len, cap;
		} tab;
	} u;
};

/* One part of a dotted key; s is owned until it moves into a table (still readable then). */
struct key {
	char *s;
	size_t len;
	struct toml_pos pos;
	bool moved;
};

struct keypath {
	struct key part[TOML_MAX_DEPTH];
	int n;
};

struct parser {
	const char *p, *end;
	int line, col;
	char *err;
	size_t errlen;
	bool failed;
	struct toml_value *root, *cur; /* cur: the table key/value lines go into */
};

struct buf {
	char *p;
	size_t len, cap;
};

/* ---- the cursor ---- */

static inline struct toml_pos here(const struct parser *ps)
{
	return (struct toml_pos){ps->line, ps->col};
}

static inline int cur_c(const struct parser *ps)
{
	return ps->p < ps->end ? (unsigned char)*ps->p : -1;
}

static inline int peek_at(const struct parser *ps, size_t k)
{
	return (size_t)(ps->end - ps->p) > k ? (unsigned char)ps->p[k] : -1;
}

/* Moves past one byte; columns count characters, so UTF-8 continuation bytes do not. */
static inline void adv(struct parser *ps)
{
	unsigned char c = (unsigned char)*ps->p++;

	if (c == '\n') {
		ps->line++;
		ps->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		ps->col++;
	}
}

static inline void adv_n(struct parser *ps, size_t n)
{
	while (n--)
		adv(ps);
}

static inline bool at_newline(const struct parser *ps)
{
	int c = cur_c(ps);
	return c == '\n' || (c == '\r' && peek_at(ps, 1) == '\n');
}

static inline void skip_newline(struct parser *ps)
{
	if (cur_c(ps) == '\r')
		adv(ps);
	adv(ps);
}

static inline void skip_ws(struct parser *ps)
{
	while (cur_c(ps) == ' ' || cur_c(ps) == '\t')
		adv(ps);
}

static inline bool is_ctl(int c)
{
	return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static inline bool is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static inline bool match_word(const struct parser *ps, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, w, n) == 0 &&
	       !is_bare(peek_at(ps, n));
}

static inline bool is_digit(int c, int base)
{
	switch (base) {
	case 2: return c == '0' || c == '1';
	case 8: return c >= '0' && c <= '7';
	case 10: return c >= '0' && c <= '9';
	default: return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	}
}

/* ---- messages (toml_parse.c) ---- */

/* "line:col: " and the text into the parser's err, unless a failure is already there; -1. */
int toml_fail_at(struct parser *ps, struct toml_pos pos, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* "out of memory" at the cursor; -1. */
int toml_oom(struct parser *ps);
/* Names the character at the cursor for "found ..." in messages (buf when it must). */
const char *toml_describe(const struct parser *ps, char *buf, size_t n);
/* The bare word at the cursor, for "found 'yes'". */
const char *toml_word(const struct parser *ps, char *buf, size_t n);

/* ---- the tree (toml_tree.c): every allocation goes through toml_mem ---- */

/* realloc, or free when size is 0. Returns NULL on failure (ptr is then untouched). */
void *toml_mem(void *ptr, size_t size);
void toml_mem_free(void *ptr);
/* Appends n bytes, keeping the text NUL-terminated. */
int toml_buf_add(struct parser *ps, struct buf *b, const char *s, size_t n);
/* A value of type at pos, zeroed; NULL (with the message) when out of memory. */
struct toml_value *toml_value_new(struct parser *ps, enum toml_type type, struct toml_pos pos);
struct entry *toml_table_find(const struct toml_value *t, const char *key, size_t len);
/* Adds k = v to table t, taking k's text and v (v is freed on failure). */
int toml_table_put(struct parser *ps, struct toml_value *t, struct key *k, struct toml_value *v);
/* Appends v to array a, taking v (freed on failure). */
int toml_array_put(struct parser *ps, struct toml_value *a, struct toml_value *v);

/* ---- strings and numbers (toml_scalar.c) ---- */

/* At '"' or '\'': a one-line basic or literal string, its text into b. */
int toml_parse_line_string(struct parser *ps, struct buf *b);
/* At three quotes: a multi-line string, its text into b. */
int toml_parse_ml_string(struct parser *ps, struct buf *b);
/* At a sign, a digit, inf or nan: an integer or a float. */
int toml_parse_number(struct parser *ps, struct toml_value **out);

#endif
