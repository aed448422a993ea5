/* gate/config/toml.c: a small strict TOML 1.0 reader (what it accepts: see toml.h). */
#include "gate/config/toml.h"

#include "ci/utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the one allocation path ---- */

static void *(*toml_realloc_fn)(void *ptr, size_t size);

void toml_set_realloc(void *(*fn)(void *ptr, size_t size))
{
	toml_realloc_fn = fn;
}

/* realloc, or free when size is 0. Returns NULL on failure (ptr is then untouched). */
static void *mem(void *ptr, size_t size)
{
	if (toml_realloc_fn)
		return toml_realloc_fn(ptr, size);
	if (size == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, size);
}

static void mem_free(void *ptr)
{
	if (ptr)
		mem(ptr, 0);
}

/* ---- input ---- */

static struct toml_pos here(const struct parser *ps)
{
	return (struct toml_pos){ps->line, ps->col};
}

static int cur_c(const struct parser *ps)
{
	return ps->p < ps->end ? (unsigned char)*ps->p : -1;
}

static int peek_at(const struct parser *ps, size_t k)
{
	return (size_t)(ps->end - ps->p) > k ? (unsigned char)ps->p[k] : -1;
}

/* Moves past one byte; columns count characters, so UTF-8 continuation bytes do not. */
static void adv(struct parser *ps)
{
	unsigned char c = (unsigned char)*ps->p++;

	if (c == '\n') {
		ps->line++;
		ps->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		ps->col++;
	}
}

static void adv_n(struct parser *ps, size_t n)
{
	while (n--)
		adv(ps);
}

static bool at_newline(const struct parser *ps)
{
	int c = cur_c(ps);
	return c == '\n' || (c == '\r' && peek_at(ps, 1) == '\n');
}

static void skip_newline(struct parser *ps)
{
	if (cur_c(ps) == '\r')
		adv(ps);
	adv(ps);
}

static void skip_ws(struct parser *ps)
{
	while (cur_c(ps) == ' ' || cur_c(ps) == '\t')
		adv(ps);
}

static bool is_ctl(int c)
{
	return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static bool is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* Names the character at the cursor for "found ..." in messages. */
static const char *describe(const struct parser *ps, char *buf, size_t n)
{
	int c = cur_c(ps);

	if (c < 0)
		return "end of input";
	if (at_newline(ps))
		return "a newline";
	if (c == '\r')
		return "a carriage return (not followed by a newline)";
	if (c == '\t')
		return "a tab";
	if (is_ctl(c)) {
		snprintf(buf, n, "control character U+%04X", (unsigned)c);
		return buf;
	}
	if (c < 0x80) {
		snprintf(buf, n, "'%c'", c);
		return buf;
	}
	size_t len = 1;
	while (ps->p + len < ps->end && ((unsigned char)ps->p[len] & 0xC0) == 0x80)
		len++;
	snprintf(buf, n, "'%.*s'", (int)len, ps->p);
	return buf;
}

/* ---- errors ---- */

__attribute__((format(printf, 3, 4))) static int fail_at(struct parser *ps, struct toml_pos pos,
                                                         const char *fmt, ...)
{
	if (ps->failed)
		return -1;
	ps->failed = true;
	if (ps->err && ps->errlen) {
		int n = snprintf(ps->err, ps->errlen, "%d:%d: ", pos.line, pos.col);
		if (n >= 0 && (size_t)n < ps->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -1;
}

static int oom(struct parser *ps)
{
	return fail_at(ps, here(ps), "out of memory");
}

/* "a string", "an integer", ... for messages. */
static const char *a_type(enum toml_type t)
{
	switch (t) {
	case TOML_STRING: return "a string";
	case TOML_INTEGER: return "an integer";
	case TOML_FLOAT: return "a float";
	case TOML_BOOLEAN: return "a boolean";
	case TOML_ARRAY: return "an array";
	case TOML_TABLE: return "a table";
	}
	return "a value";
}

/* Writes parts [0, upto) of kp as TOML would: a.b."c d". Truncates to n. */
static void key_name(char *out, size_t n, const struct keypath *kp, int upto)
{
	size_t o = 0;

#define PUT(ch)                                                                                    \
	do {                                                                                       \
		if (o + 1 < n)                                                                     \
			out[o++] = (ch);                                                           \
	} while (0)
	for (int i = 0; i < upto; i++) {
		const struct key *k = &kp->part[i];
		bool bare = k->len > 0;
		for (size_t j = 0; j < k->len; j++)
			bare = bare && is_bare((unsigned char)k->s[j]);
		if (i)
			PUT('.');
		if (bare) {
			for (size_t j = 0; j < k->len; j++)
				PUT(k->s[j]);
			continue;
		}
		PUT('"');
		for (size_t j = 0; j < k->len; j++) {
			unsigned char c = (unsigned char)k->s[j];
			if (c == '"' || c == '\\') {
				PUT('\\');
				PUT((char)c);
			} else if (is_ctl(c) || c == '\t') {
				char esc[8];
				snprintf(esc, sizeof(esc), "\\u%04X", c);
				for (char *e = esc; *e; e++)
					PUT(*e);
			} else {
				PUT((char)c);
			}
		}
		PUT('"');
	}
#undef PUT
	if (n)
		out[o] = '\0';
}

/* ---- UTF-8 ---- */

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates, at most
 * U+10FFFF), or 0 when it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xBF;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (avail < n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

static int utf8_check(struct parser *ps)
{
	struct parser scan = *ps;

	while (scan.p < scan.end) {
		size_t n = utf8_len((const unsigned char *)scan.p, (size_t)(scan.end - scan.p));
		if (n == 0)
			return fail_at(ps, here(&scan),
			               "invalid UTF-8 (byte 0x%02X); the file must be UTF-8 text",
			               (unsigned char)*scan.p);
		adv_n(&scan, n);
	}
	return 0;
}

/* ---- buffers and tree building ---- */

/* Appends n bytes, keeping the text NUL-terminated. */
static int buf_add(struct parser *ps, struct buf *b, const char *s, size_t n)
{
	if (b->cap - b->len < n + 1) {
		size_t cap = b->cap ? b->cap : 16;
		while (cap - b->len < n + 1)
			cap *= 2; /* cannot overflow: everything comes from at most 1 MiB of input
			           */
		char *p = mem(b->p, cap);
		if (!p)
			return oom(ps);
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static struct toml_value *value_new(struct parser *ps, enum toml_type type, struct toml_pos pos)
{
	struct toml_value *v = mem(NULL, sizeof(*v));

	if (!v) {
		oom(ps);
		return NULL;
	}
	memset(v, 0, sizeof(*v));
	v->type = type;
	v->pos = pos;
	return v;
}

void toml_free(struct toml_value *v)
{
	if (!v)
		return;
	switch (v->type) {
	case TOML_STRING: mem_free(v->u.str.ptr); break;
	case TOML_ARRAY:
		for (size_t i = 0; i < v->u.arr.len; i++)
			toml_free(v->u.arr.items[i]);
		mem_free(v->u.arr.items);
		break;
	case TOML_TABLE:
		for (size_t i = 0; i < v->u.tab.len; i++) {
			mem_free(v->u.tab.items[i].key);
			toml_free(v->u.tab.items[i].value);
		}
		mem_free(v->u.tab.items);
		break;
	default: break;
	}
	mem_free(v);
}

static struct entry *table_find(const struct toml_value *t, const char *key, size_t len)
{
	for (size_t i = 0; i < t->u.tab.len; i++) {
		struct entry *e = &t->u.tab.items[i];
		if (e->keylen == len && memcmp(e->key, key, len) == 0)
			return e;
	}
	return NULL;
}

/* Adds k = v to table t, taking k's text and v (v is freed on failure). */
static int table_add(struct parser *ps, struct toml_value *t, struct key *k, struct toml_value *v)
{
	if (t->u.tab.len == TOML_MAX_KEYS) {
		toml_free(v);
		return fail_at(ps, k->pos,
		               "a table has more than %d keys, more than this reader accepts",
		               TOML_MAX_KEYS);
	}
	if (t->u.tab.len == t->u.tab.cap) {
		size_t cap = t->u.tab.cap ? t->u.tab.cap * 2 : 8;
		struct entry *items = mem(t->u.tab.items, cap * sizeof(*items));
		if (!items) {
			toml_free(v);
			return oom(ps);
		}
		t->u.tab.items = items;
		t->u.tab.cap = cap;
	}
	t->u.tab.items[t->u.tab.len++] = (struct entry){k->s, k->len, k->pos, v};
	k->moved = true;
	return 0;
}

/* Appends v to array a, taking v (freed on failure). */
static int array_add(struct parser *ps, struct toml_value *a, struct toml_value *v)
{
	if (a->u.arr.len == a->u.arr.cap) {
		size_t cap = a->u.arr.cap ? a->u.arr.cap * 2 : 8;
		struct toml_value **items = mem(a->u.arr.items, cap * sizeof(*items));
		if (!items) {
			toml_free(v);
			return oom(ps);
		}
		a->u.arr.items = items;
		a->u.arr.cap = cap;
	}
	a->u.arr.items[a->u.arr.len++] = v;
	return 0;
}

/* ---- comments and line ends ---- */

/* At '#': moves up to (not past) the end of the line. */
static int skip_comment(struct parser *ps)
{
	adv(ps);
	while (cur_c(ps) >= 0 && !at_newline(ps)) {
		if (is_ctl(cur_c(ps))) {
			char d[48];
			return fail_at(
			        ps, here(ps),
			        "%s in a comment; only tab is allowed among control characters",
			        describe(ps, d, sizeof(d)));
		}
		adv(ps);
	}
	return 0;
}

/* After a value or header: blanks, maybe a comment, then the end of the line or input. */
static int expect_eol(struct parser *ps, const char *after)
{
	char d[48];

	skip_ws(ps);
	if (cur_c(ps) == '#' && skip_comment(ps) < 0)
		return -1;
	if (cur_c(ps) < 0)
		return 0;
	if (at_newline(ps)) {
		skip_newline(ps);
		return 0;
	}
	return fail_at(ps, here(ps), "expected a newline or a comment after %s, found %s", after,
	               describe(ps, d, sizeof(d)));
}

/* Blanks, newlines and comments, as allowed between array elements. */
static int skip_blank(struct parser *ps)
{
	for (;;) {
		skip_ws(ps);
		if (at_newline(ps))
			skip_newline(ps);
		else if (cur_c(ps) == '#') {
			if (skip_comment(ps) < 0)
				return -1;
		} else
			return 0;
	}
}

/* ---- strings ---- */

/* At a backslash inside a basic string. */
static int parse_escape(struct parser *ps, struct buf *b, bool multiline)
{
	struct toml_pos at = here(ps);
	char d[48], ch;
	int c;

	adv(ps);
	c = cur_c(ps);
	if (multiline && (c == ' ' || c == '\t' || at_newline(ps))) {
		/* line-ending backslash: drops the newline and the blanks and newlines after it */
		skip_ws(ps);
		if (!at_newline(ps))
			return fail_at(
			        ps, at,
			        "invalid escape: a backslash followed by blanks must end the "
			        "line; remove the blanks after it or escape it as \\\\");
		while (cur_c(ps) == ' ' || cur_c(ps) == '\t' || at_newline(ps)) {
			if (at_newline(ps))
				skip_newline(ps);
			else
				adv(ps);
		}
		return 0;
	}
	switch (c) {
	case 'b': ch = '\b'; break;
	case 't': ch = '\t'; break;
	case 'n': ch = '\n'; break;
	case 'f': ch = '\f'; break;
	case 'r': ch = '\r'; break;
	case '"': ch = '"'; break;
	case '\\': ch = '\\'; break;
	case 'u':
	case 'U': {
		int digits = c == 'u' ? 4 : 8;
		uint32_t cp = 0;
		char u[4];
		adv(ps);
		for (int i = 0; i < digits; i++) {
			int h = cur_c(ps), v;
			if (h >= '0' && h <= '9')
				v = h - '0';
			else if (h >= 'a' && h <= 'f')
				v = h - 'a' + 10;
			else if (h >= 'A' && h <= 'F')
				v = h - 'A' + 10;
			else
				return fail_at(ps, at,
				               "invalid escape: \\%c needs %d hex digits, found %s",
				               c, digits, describe(ps, d, sizeof(d)));
			cp = cp * 16 + (uint32_t)v;
			adv(ps);
		}
		if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return fail_at(ps, at,
			               "invalid escape: \\%c%0*X is not a Unicode scalar value "
			               "(0 to D7FF or E000 to 10FFFF)",
			               c, digits, (unsigned)cp);
		return buf_add(ps, b, u, utf8_put(u, cp));
	}
	default:
		if (c > 0x20 && c < 0x7f)
			return fail_at(
			        ps, at,
			        "invalid escape \\%c; expected one of \\b \\t \\n \\f \\r \\\" "
			        "\\\\ \\uXXXX \\UXXXXXXXX",
			        c);
		return fail_at(
		        ps, at,
		        "invalid escape: a backslash followed by %s; expected one of \\b \\t "
		        "\\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX",
		        describe(ps, d, sizeof(d)));
	}
	adv(ps);
	return buf_add(ps, b, &ch, 1);
}

static int ctl_in_string(struct parser *ps)
{
	char d[48];
	return fail_at(ps, here(ps),
	               "%s in a string; write it as an escape such as \\u%04X in a \"...\" string",
	               describe(ps, d, sizeof(d)), (unsigned)cur_c(ps));
}

/* "..." or '...' on one line. */
static int parse_line_string(struct parser *ps, struct buf *b)
{
	struct toml_pos open = here(ps);
	int quote = cur_c(ps);

	adv(ps);
	for (;;) {
		int c = cur_c(ps);
		if (c < 0 || at_newline(ps))
			return fail_at(
			        ps, here(ps),
			        "unterminated string (opened at %d:%d): expected %s before the "
			        "end of the %s",
			        open.line, open.col, quote == '"' ? "'\"'" : "\"'\"",
			        c < 0 ? "input" : "line");
		if (c == quote) {
			adv(ps);
			return buf_add(ps, b, "", 0);
		}
		if (c == '\\' && quote == '"') {
			if (parse_escape(ps, b, false) < 0)
				return -1;
			continue;
		}
		if (is_ctl(c))
			return ctl_in_string(ps);
		if (buf_add(ps, b, ps->p, 1) < 0)
			return -1;
		adv(ps);
	}
}

/* """...""" or '''...'''. */
static int parse_ml_string(struct parser *ps, struct buf *b)
{
	struct toml_pos open = here(ps);
	int quote = cur_c(ps);
	const char *delim = quote == '"' ? "\"\"\"" : "'''";

	adv_n(ps, 3);
	if (at_newline(ps))
		skip_newline(ps); /* a newline right after the opening quotes is not part of it */
	for (;;) {
		int c = cur_c(ps);
		if (c < 0)
			return fail_at(
			        ps, here(ps),
			        "unterminated multi-line string (opened at %d:%d): expected %s",
			        open.line, open.col, delim);
		if (c == quote) {
			size_t n = 0;
			while (peek_at(ps, n) == quote)
				n++;
			if (n >= 3) {
				/* the last three close it; up to two more belong to the text */
				if (n > 5) {
					adv_n(ps, 5);
					return fail_at(
					        ps, here(ps),
					        "too many quotes: at most two may come right "
					        "before the closing %s; escape them",
					        delim);
				}
				if (buf_add(ps, b, delim, n - 3) < 0)
					return -1;
				adv_n(ps, n);
				return buf_add(ps, b, "", 0);
			}
			if (buf_add(ps, b, delim, n) < 0)
				return -1;
			adv_n(ps, n);
			continue;
		}
		if (c == '\\' && quote == '"') {
			if (parse_escape(ps, b, true) < 0)
				return -1;
			continue;
		}
		if (at_newline(ps)) {
			skip_newline(ps);
			if (buf_add(ps, b, "\n", 1) < 0)
				return -1;
			continue;
		}
		if (is_ctl(c))
			return ctl_in_string(ps);
		if (buf_add(ps, b, ps->p, 1) < 0)
			return -1;
		adv(ps);
	}
}

/* ---- keys ---- */

static int parse_key_part(struct parser *ps, struct key *k)
{
	struct buf b = {0};
	int c = cur_c(ps), rc;
	char d[48];

	k->pos = here(ps);
	k->s = NULL;
	k->moved = false;
	if (c == '"' || c == '\'') {
		if (peek_at(ps, 1) == c && peek_at(ps, 2) == c)
			return fail_at(ps, here(ps),
			               "a multi-line string cannot be a key; use \"...\" or '...'");
		rc = parse_line_string(ps, &b);
	} else if (is_bare(c)) {
		const char *s = ps->p;
		while (is_bare(cur_c(ps)))
			adv(ps);
		rc = buf_add(ps, &b, s, (size_t)(ps->p - s));
	} else {
		return fail_at(ps, here(ps),
		               "expected a key (letters, digits, '_' and '-', or a quoted string), "
		               "found %s",
		               describe(ps, d, sizeof(d)));
	}
	if (rc < 0) {
		mem_free(b.p);
		return -1;
	}
	k->s = b.p;
	k->len = b.len;
	return 0;
}

static void keypath_clear(struct keypath *kp)
{
	for (int i = 0; i < kp->n; i++)
		if (!kp->part[i].moved)
			mem_free(kp->part[i].s);
	kp->n = 0;
}

/* a.b."c" with blanks around the dots; the caller clears kp even on failure. */
static int parse_key(struct parser *ps, struct keypath *kp)
{
	kp->n = 0;
	for (;;) {
		skip_ws(ps);
		if (kp->n == TOML_MAX_DEPTH)
			return fail_at(
			        ps, here(ps),
			        "a key has more than %d parts; nesting deeper than %d levels "
			        "is not supported here",
			        TOML_MAX_DEPTH, TOML_MAX_DEPTH);
		int rc = parse_key_part(ps, &kp->part[kp->n]);
		if (kp->part[kp->n].s)
			kp->n++;
		if (rc < 0)
			return -1;
		skip_ws(ps);
		if (cur_c(ps) != '.')
			return 0;
		adv(ps);
	}
}

/* ---- values ---- */

static int parse_value(struct parser *ps, int depth, struct toml_value **out);
static int parse_keyval(struct parser *ps, struct toml_value *t, int depth);

/* The bare word at the cursor, for "found 'yes'". */
static const char *word(const struct parser *ps, char *buf, size_t n)
{
	size_t len = 0;
	while (ps->p + len < ps->end && is_bare((unsigned char)ps->p[len]) && len < 32)
		len++;
	snprintf(buf, n, "'%.*s'", (int)len, ps->p);
	return buf;
}

static bool match_word(const struct parser *ps, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, w, n) == 0 &&
	       !is_bare(peek_at(ps, n));
}

static bool is_digit(int c, int base)
{
	switch (base) {
	case 2: return c == '0' || c == '1';
	case 8: return c >= '0' && c <= '7';
	case 10: return c >= '0' && c <= '9';
	default: return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	}
}

/* Digits of base with single underscores between them; copies the digits to b. */
static int parse_digits(struct parser *ps, struct buf *b, int base, const char *what)
{
	char d[48];

	if (!is_digit(cur_c(ps), base))
		return fail_at(ps, here(ps), "expected %s, found %s", what,
		               describe(ps, d, sizeof(d)));
	for (;;) {
		int c = cur_c(ps);
		if (is_digit(c, base)) {
			if (buf_add(ps, b, ps->p, 1) < 0)
				return -1;
			adv(ps);
		} else if (c == '_') {
			adv(ps);
			if (!is_digit(cur_c(ps), base))
				return fail_at(ps, here(ps),
				               "expected a digit after '_' (an underscore must sit "
				               "between digits), found %s",
				               describe(ps, d, sizeof(d)));
		} else {
			return 0;
		}
	}
}

static bool looks_like_date(const struct parser *ps)
{
	for (int i = 0; i < 4; i++)
		if (!is_digit(peek_at(ps, (size_t)i), 10))
			return i == 2 && peek_at(ps, 2) == ':';
	return peek_at(ps, 4) == '-' || peek_at(ps, 2) == ':';
}

static int parse_number(struct parser *ps, struct toml_value **out)
{
	struct toml_pos pos = here(ps);
	struct buf b = {0};
	struct toml_value *v = NULL;
	bool neg = false, sign = false, is_float = false;
	double f = 0;
	int64_t n = 0;
	int rc = -1, c = cur_c(ps);
	char d[48];

	if (looks_like_date(ps)) {
		fail_at(ps, pos,
		        "dates are not supported here; write it as a string, e.g. "
		        "\"1979-05-27\"");
		goto out;
	}
	if (c == '+' || c == '-') {
		neg = c == '-';
		sign = true;
		if (buf_add(ps, &b, ps->p, 1) < 0)
			goto out;
		adv(ps);
		c = cur_c(ps);
	}
	if (c == 'i' || c == 'n') {
		if (!match_word(ps, "inf") && !match_word(ps, "nan")) {
			fail_at(ps, here(ps), "expected a number, inf or nan, found %s",
			        word(ps, d, sizeof(d)));
			goto out;
		}
		f = c == 'i' ? (neg ? -INFINITY : INFINITY) : (neg ? -NAN : NAN);
		adv_n(ps, 3);
		is_float = true;
		goto make;
	}
	if (c == '0' && (peek_at(ps, 1) == 'x' || peek_at(ps, 1) == 'o' || peek_at(ps, 1) == 'b')) {
		int base = peek_at(ps, 1) == 'x' ? 16 : peek_at(ps, 1) == 'o' ? 8 : 2;
		const char *what = base == 16  ? "a hex digit after 0x"
		                   : base == 8 ? "an octal digit after 0o"
		                               : "a binary digit after 0b";
		uint64_t u = 0;
		if (sign) {
			fail_at(ps, pos, "a sign is not allowed on hex, octal or binary integers");
			goto out;
		}
		adv_n(ps, 2);
		if (parse_digits(ps, &b, base, what) < 0)
			goto out;
		for (size_t i = 0; i < b.len; i++) {
			int dv = b.p[i] <= '9' ? b.p[i] - '0' : (b.p[i] | 0x20) - 'a' + 10;
			if (u > ((uint64_t)INT64_MAX - (uint64_t)dv) / (uint64_t)base) {
				fail_at(ps, pos,
				        "integer out of range: TOML integers are 64-bit, at "
				        "most 9223372036854775807 (0x7fffffffffffffff)");
				goto out;
			}
			u = u * (uint64_t)base + (uint64_t)dv;
		}
		n = (int64_t)u;
		goto make;
	}
	if (!is_digit(c, 10)) {
		fail_at(ps, here(ps), "expected a digit after the sign, found %s",
		        describe(ps, d, sizeof(d)));
		goto out;
	}
	if (c == '0' && (is_digit(peek_at(ps, 1), 10) || peek_at(ps, 1) == '_')) {
		fail_at(ps, pos, "leading zeros are not allowed in a number");
		goto out;
	}
	if (parse_digits(ps, &b, 10, "a digit") < 0)
		goto out;
	if (cur_c(ps) == '.') {
		is_float = true;
		if (buf_add(ps, &b, ".", 1) < 0)
			goto out;
		adv(ps);
		if (parse_digits(ps, &b, 10, "a digit after the decimal point") < 0)
			goto out;
	}
	if (cur_c(ps) == 'e' || cur_c(ps) == 'E') {
		is_float = true;
		if (buf_add(ps, &b, "e", 1) < 0)
			goto out;
		adv(ps);
		if (cur_c(ps) == '+' || cur_c(ps) == '-') {
			if (buf_add(ps, &b, ps->p, 1) < 0)
				goto out;
			adv(ps);
		}
		if (parse_digits(ps, &b, 10, "a digit in the exponent") < 0)
			goto out;
	}
	if (is_float) {
		f = strtod(b.p, NULL);
		if (isinf(f)) {
			fail_at(ps, pos, "float out of range: its magnitude is above 1.8e308");
			goto out;
		}
	} else {
		uint64_t u = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		for (size_t i = sign ? 1 : 0; i < b.len; i++) {
			uint64_t dv = (uint64_t)(b.p[i] - '0');
			if (u > (limit - dv) / 10) {
				fail_at(ps, pos,
				        "integer out of range: TOML integers are 64-bit, from "
				        "-9223372036854775808 to 9223372036854775807");
				goto out;
			}
			u = u * 10 + dv;
		}
		n = neg ? (int64_t)(0 - u) : (int64_t)u;
	}
make:
	v = value_new(ps, is_float ? TOML_FLOAT : TOML_INTEGER, pos);
	if (!v)
		goto out;
	if (is_float)
		v->u.flt = f;
	else
		v->u.integer = n;
	*out = v;
	rc = 0;
out:
	mem_free(b.p);
	return rc;
}

static int nest_fail(struct parser *ps, struct toml_pos pos)
{
	return fail_at(ps, pos, "nesting deeper than %d levels is not supported here",
	               TOML_MAX_DEPTH);
}

static int parse_array(struct parser *ps, int depth, struct toml_value **out)
{
	struct toml_pos open = here(ps);
	struct toml_value *arr, *item;
	char d[48];

	arr = value_new(ps, TOML_ARRAY, open);
	if (!arr)
		return -1;
	adv(ps);
	for (;;) {
		if (skip_blank(ps) < 0)
			goto fail;
		if (cur_c(ps) == ']')
			break;
		if (cur_c(ps) < 0)
			goto unterminated;
		if (cur_c(ps) == ',') {
			fail_at(ps, here(ps), "expected a value or ']', found ','");
			goto fail;
		}
		if (parse_value(ps, depth + 1, &item) < 0 || array_add(ps, arr, item) < 0)
			goto fail;
		if (skip_blank(ps) < 0)
			goto fail;
		if (cur_c(ps) == ',') {
			adv(ps);
			continue;
		}
		if (cur_c(ps) == ']')
			break;
		if (cur_c(ps) < 0)
			goto unterminated;
		fail_at(ps, here(ps), "expected ',' or ']' after an array element, found %s",
		        describe(ps, d, sizeof(d)));
		goto fail;
	}
	adv(ps);
	*out = arr;
	return 0;
unterminated:
	fail_at(ps, here(ps), "unterminated array (opened at %d:%d): expected ']'", open.line,
	        open.col);
fail:
	toml_free(arr);
	return -1;
}

static int parse_inline_table(struct parser *ps, int depth, struct toml_value **out)
{
	struct toml_pos open = here(ps);
	struct toml_value *t;
	char d[48];

	t = value_new(ps, TOML_TABLE, open);
	if (!t)
		return -1;
	adv(ps);
	skip_ws(ps);
	if (cur_c(ps) != '}') {
		for (;;) {
			skip_ws(ps);
			if (cur_c(ps) < 0 || at_newline(ps)) {
				fail_at(ps, here(ps),
				        "unterminated inline table (opened at %d:%d): expected a "
				        "key "
				        "on the same line, found %s",
				        open.line, open.col, describe(ps, d, sizeof(d)));
				goto fail;
			}
			if (parse_keyval(ps, t, depth) < 0)
				goto fail;
			skip_ws(ps);
			if (cur_c(ps) == ',') {
				adv(ps);
				skip_ws(ps);
				if (cur_c(ps) == '}') {
					fail_at(ps, here(ps),
					        "a trailing comma is not allowed in an inline "
					        "table; "
					        "remove it");
					goto fail;
				}
				continue;
			}
			if (cur_c(ps) == '}')
				break;
			if (cur_c(ps) < 0 || at_newline(ps))
				fail_at(ps, here(ps),
				        "unterminated inline table (opened at %d:%d): expected ',' "
				        "or "
				        "'}' on the same line, found %s",
				        open.line, open.col, describe(ps, d, sizeof(d)));
			else
				fail_at(ps, here(ps),
				        "expected ',' or '}' after a value in an inline table, "
				        "found %s",
				        describe(ps, d, sizeof(d)));
			goto fail;
		}
	}
	adv(ps);
	t->flags = T_INLINE;
	*out = t;
	return 0;
fail:
	toml_free(t);
	return -1;
}

/* depth: how deep the value sits below the table of its line (1 for "a = value"). */
static int parse_value(struct parser *ps, int depth, struct toml_value **out)
{
	struct toml_pos pos = here(ps);
	struct toml_value *v;
	int c = cur_c(ps);
	char d[48];

	*out = NULL;
	if (depth > TOML_MAX_DEPTH)
		return nest_fail(ps, pos);
	if (c == '"' || c == '\'') {
		struct buf b = {0};
		int rc = peek_at(ps, 1) == c && peek_at(ps, 2) == c ? parse_ml_string(ps, &b)
		                                                    : parse_line_string(ps, &b);
		if (rc < 0 || !(v = value_new(ps, TOML_STRING, pos))) {
			mem_free(b.p);
			return -1;
		}
		v->u.str.ptr = b.p;
		v->u.str.len = b.len;
		*out = v;
		return 0;
	}
	if (c == '[')
		return parse_array(ps, depth, out);
	if (c == '{')
		return parse_inline_table(ps, depth, out);
	if (match_word(ps, "true") || match_word(ps, "false")) {
		if (!(v = value_new(ps, TOML_BOOLEAN, pos)))
			return -1;
		v->u.boolean = c == 't';
		adv_n(ps, c == 't' ? 4 : 5);
		*out = v;
		return 0;
	}
	if (c == '+' || c == '-' || is_digit(c, 10) || match_word(ps, "inf") ||
	    match_word(ps, "nan"))
		return parse_number(ps, out);
	if (c < 0 || at_newline(ps) || c == '#')
		return fail_at(ps, pos, "missing value: expected a value, found %s",
		               describe(ps, d, sizeof(d)));
	if (is_bare(c))
		return fail_at(ps, pos,
		               "expected a value, found %s; strings must be quoted, booleans are "
		               "true or false",
		               word(ps, d, sizeof(d)));
	return fail_at(ps, pos,
	               "expected a value (a string, number, boolean, array or inline table), "
	               "found %s",
	               describe(ps, d, sizeof(d)));
}

/* Why a dotted key or header cannot go through (or redefine) the value at e. */
static int cannot_extend(struct parser *ps, struct toml_pos at, const char *name,
                         const struct entry *e)
{
	const struct toml_value *v = e->value;

	if (v->type == TOML_TABLE && (v->flags & T_INLINE))
		return fail_at(ps, at,
		               "%s is an inline table (at %d:%d); inline tables cannot be "
		               "extended",
		               name, v->pos.line, v->pos.col);
	if (v->type == TOML_TABLE)
		return fail_at(ps, at,
		               "table %s belongs to a [header] (at %d:%d); dotted keys cannot add "
		               "to it, write the key under that header",
		               name, v->pos.line, v->pos.col);
	if (v->type == TOML_ARRAY && (v->flags & A_TABLES))
		return fail_at(ps, at, "%s is an array of tables ([[%s]] at %d:%d), not a table",
		               name, name, v->pos.line, v->pos.col);
	return fail_at(ps, at, "%s is already %s (defined at %d:%d), not a table", name,
	               a_type(v->type), e->pos.line, e->pos.col);
}

/* key = value into table t, which sits depth levels below the table of its line. */
static int parse_keyval(struct parser *ps, struct toml_value *t, int depth)
{
	struct keypath kp;
	struct toml_value *v = NULL;
	struct entry *e;
	struct key *last;
	char name[256], d[48];
	int rc = -1;

	if (parse_key(ps, &kp) < 0)
		goto out;
	if (cur_c(ps) != '=') {
		key_name(name, sizeof(name), &kp, kp.n);
		fail_at(ps, here(ps), "expected '=' after the key %s, found %s", name,
		        describe(ps, d, sizeof(d)));
		goto out;
	}
	adv(ps);
	skip_ws(ps);
	for (int i = 0; i < kp.n - 1; i++) {
		e = table_find(t, kp.part[i].s, kp.part[i].len);
		if (!e) {
			struct toml_value *nt = value_new(ps, TOML_TABLE, kp.part[i].pos);
			if (!nt)
				goto out;
			nt->flags = T_DOTTED;
			if (table_add(ps, t, &kp.part[i], nt) < 0)
				goto out;
			t = nt;
			continue;
		}
		if (e->value->type == TOML_TABLE && e->value->flags == T_DOTTED) {
			t = e->value;
			continue;
		}
		key_name(name, sizeof(name), &kp, i + 1);
		cannot_extend(ps, kp.part[i].pos, name, e);
		goto out;
	}
	last = &kp.part[kp.n - 1];
	e = table_find(t, last->s, last->len);
	if (e) {
		key_name(name, sizeof(name), &kp, kp.n);
		fail_at(ps, last->pos, "duplicate key %s: already defined at %d:%d", name,
		        e->pos.line, e->pos.col);
		goto out;
	}
	if (parse_value(ps, depth + kp.n, &v) < 0)
		goto out;
	rc = table_add(ps, t, last, v);
out:
	keypath_clear(&kp);
	return rc;
}

/* [a.b] or [[a.b]]. */
static int parse_header(struct parser *ps)
{
	struct toml_pos open = here(ps);
	bool aot = peek_at(ps, 1) == '[';
	struct toml_value *t = ps->root, *nt, *ev;
	struct keypath kp = {.n = 0};
	struct entry *e;
	struct key *last;
	char name[256], d[48];
	int rc = -1;

	adv_n(ps, aot ? 2 : 1);
	if (parse_key(ps, &kp) < 0)
		goto out;
	if (aot && cur_c(ps) == ']' && peek_at(ps, 1) != ']')
		adv(ps);
	if (cur_c(ps) != ']' || (aot && peek_at(ps, 1) != ']')) {
		fail_at(ps, here(ps), "expected '%s' to close the %s header, found %s",
		        aot ? "]]" : "]", aot ? "[[array of tables]]" : "[table]",
		        describe(ps, d, sizeof(d)));
		goto out;
	}
	adv_n(ps, aot ? 2 : 1);
	for (int i = 0; i < kp.n - 1; i++) {
		e = table_find(t, kp.part[i].s, kp.part[i].len);
		if (!e) {
			nt = value_new(ps, TOML_TABLE, kp.part[i].pos);
			if (!nt)
				goto out;
			nt->flags = T_IMPLICIT;
			if (table_add(ps, t, &kp.part[i], nt) < 0)
				goto out;
			t = nt;
			continue;
		}
		ev = e->value;
		if (ev->type == TOML_TABLE && !(ev->flags & T_INLINE)) {
			t = ev;
			continue;
		}
		if (ev->type == TOML_ARRAY && (ev->flags & A_TABLES)) {
			t = ev->u.arr.items[ev->u.arr.len - 1];
			continue;
		}
		key_name(name, sizeof(name), &kp, i + 1);
		cannot_extend(ps, kp.part[i].pos, name, e);
		goto out;
	}
	last = &kp.part[kp.n - 1];
	e = table_find(t, last->s, last->len);
	ev = e ? e->value : NULL;
	key_name(name, sizeof(name), &kp, kp.n);
	if (!aot) {
		if (!e) {
			if (!(nt = value_new(ps, TOML_TABLE, open)))
				goto out;
			nt->flags = T_HEADER;
			if (table_add(ps, t, last, nt) < 0)
				goto out;
			ps->cur = nt;
		} else if (ev->type == TOML_TABLE && ev->flags == T_IMPLICIT) {
			ev->flags = T_HEADER;
			ev->pos = open;
			ps->cur = ev;
		} else if (ev->type == TOML_TABLE && (ev->flags & T_HEADER)) {
			fail_at(ps, open, "table [%s] is defined twice (first at %d:%d)", name,
			        ev->pos.line, ev->pos.col);
			goto out;
		} else if (ev->type == TOML_TABLE && (ev->flags & T_DOTTED)) {
			fail_at(ps, open,
			        "table %s is already defined by dotted keys at %d:%d; a table "
			        "cannot "
			        "be defined twice",
			        name, ev->pos.line, ev->pos.col);
			goto out;
		} else {
			cannot_extend(ps, open, name, e);
			goto out;
		}
	} else {
		if (e && !(ev->type == TOML_ARRAY && (ev->flags & A_TABLES))) {
			if (ev->type == TOML_ARRAY)
				fail_at(ps, open,
				        "%s is a static array (defined at %d:%d); [[%s]] cannot "
				        "append to it",
				        name, e->pos.line, e->pos.col, name);
			else
				fail_at(ps, open,
				        "%s is already %s (defined at %d:%d); [[%s]] needs an "
				        "array "
				        "of tables",
				        name, a_type(ev->type), ev->pos.line, ev->pos.col, name);
			goto out;
		}
		if (!e) {
			if (!(ev = value_new(ps, TOML_ARRAY, open)))
				goto out;
			ev->flags = A_TABLES;
			if (table_add(ps, t, last, ev) < 0)
				goto out;
		}
		if (!(nt = value_new(ps, TOML_TABLE, open)))
			goto out;
		nt->flags = T_HEADER;
		if (array_add(ps, ev, nt) < 0)
			goto out;
		ps->cur = nt;
	}
	rc = expect_eol(ps, "the table header");
out:
	keypath_clear(&kp);
	return rc;
}

int toml_parse(struct toml_value **out, const char *text, size_t len, char *err, size_t errlen)
{
	if (!text && !len)
		text = "";
	struct parser ps = {
	        .p = text, .end = text + len, .line = 1, .col = 1, .err = err, .errlen = errlen};

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!text && len)
		return fail_at(&ps, here(&ps), "no input");
	if (len > TOML_MAX_INPUT)
		return fail_at(
		        &ps, here(&ps),
		        "the input is %zu bytes, more than the 1 MiB (%zu bytes) this reader "
		        "accepts",
		        len, TOML_MAX_INPUT);
	if (utf8_check(&ps) < 0)
		return -1;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		ps.p += 3; /* a byte order mark; the column stays 1 */
	ps.root = value_new(&ps, TOML_TABLE, here(&ps));
	if (!ps.root)
		return -1;
	ps.root->flags = T_HEADER;
	ps.cur = ps.root;
	for (;;) {
		skip_ws(&ps);
		if (cur_c(&ps) < 0)
			break;
		if (cur_c(&ps) == '#') {
			if (skip_comment(&ps) < 0)
				goto fail;
		} else if (at_newline(&ps)) {
			skip_newline(&ps);
		} else if (cur_c(&ps) == '[') {
			if (parse_header(&ps) < 0)
				goto fail;
		} else if (parse_keyval(&ps, ps.cur, 0) < 0 || expect_eol(&ps, "the value") < 0) {
			goto fail;
		}
	}
	*out = ps.root;
	return 0;
fail:
	toml_free(ps.root);
	return -1;
}

/* ---- getters ---- */

const char *toml_type_name(enum toml_type type)
{
	switch (type) {
	case TOML_STRING: return "string";
	case TOML_INTEGER: return "integer";
	case TOML_FLOAT: return "float";
	case TOML_BOOLEAN: return "boolean";
	case TOML_ARRAY: return "array";
	case TOML_TABLE: return "table";
	}
	return "unknown";
}

enum toml_type toml_type(const struct toml_value *v)
{
	return v->type;
}

struct toml_pos toml_pos(const struct toml_value *v)
{
	return v ? v->pos : (struct toml_pos){0, 0};
}

const char *toml_string(const struct toml_value *v, size_t *len)
{
	if (!v || v->type != TOML_STRING)
		return NULL;
	if (len)
		*len = v->u.str.len;
	return v->u.str.ptr;
}

int64_t toml_integer(const struct toml_value *v)
{
	return v && v->type == TOML_INTEGER ? v->u.integer : 0;
}

double toml_float(const struct toml_value *v)
{
	return v && v->type == TOML_FLOAT ? v->u.flt : 0.0;
}

bool toml_boolean(const struct toml_value *v)
{
	return v && v->type == TOML_BOOLEAN && v->u.boolean;
}

const struct toml_value *toml_get(const struct toml_value *table, const char *key)
{
	const struct entry *e;

	if (!table || table->type != TOML_TABLE || !key)
		return NULL;
	e = table_find(table, key, strlen(key));
	return e ? e->value : NULL;
}

size_t toml_table_len(const struct toml_value *table)
{
	return table && table->type == TOML_TABLE ? table->u.tab.len : 0;
}

const char *toml_table_key(const struct toml_value *table, size_t i)
{
	return i < toml_table_len(table) ? table->u.tab.items[i].key : NULL;
}

const struct toml_value *toml_table_value(const struct toml_value *table, size_t i)
{
	return i < toml_table_len(table) ? table->u.tab.items[i].value : NULL;
}

struct toml_pos toml_table_key_pos(const struct toml_value *table, size_t i)
{
	return i < toml_table_len(table) ? table->u.tab.items[i].pos : (struct toml_pos){0, 0};
}

size_t toml_array_len(const struct toml_value *array)
{
	return array && array->type == TOML_ARRAY ? array->u.arr.len : 0;
}

const struct toml_value *toml_array_at(const struct toml_value *array, size_t i)
{
	return i < toml_array_len(array) ? array->u.arr.items[i] : NULL;
}
