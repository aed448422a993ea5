/* gate/config/toml_parse.c: a small strict TOML 1.0 reader (what it accepts: see toml.h): the
 * input checked, messages, comments, keys, arrays, inline tables, key/value lines, [headers]
 * and toml_parse; strings and numbers are in toml_scalar.c, the tree in toml_tree.c. */
#include "gate/config/toml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config/toml_internal.h"

/* Names the character at the cursor for "found ..." in messages. */
const char *toml_describe(const struct parser *ps, char *buf, size_t n)
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

int toml_fail_at(struct parser *ps, struct toml_pos pos, const char *fmt, ...)
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

int toml_oom(struct parser *ps)
{
	return toml_fail_at(ps, here(ps), "out of memory");
}

/* "a string", "an integer", ... for messages. */
static const char *toml_a_type(enum toml_type t)
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
			return toml_fail_at(
			        ps, here(&scan),
			        "invalid UTF-8 (byte 0x%02X); the file must be UTF-8 text",
			        (unsigned char)*scan.p);
		adv_n(&scan, n);
	}
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
			return toml_fail_at(
			        ps, here(ps),
			        "%s in a comment; only tab is allowed among control characters",
			        toml_describe(ps, d, sizeof(d)));
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
	return toml_fail_at(ps, here(ps), "expected a newline or a comment after %s, found %s",
	                    after, toml_describe(ps, d, sizeof(d)));
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
			return toml_fail_at(
			        ps, here(ps),
			        "a multi-line string cannot be a key; use \"...\" or '...'");
		rc = toml_parse_line_string(ps, &b);
	} else if (is_bare(c)) {
		const char *s = ps->p;
		while (is_bare(cur_c(ps)))
			adv(ps);
		rc = toml_buf_add(ps, &b, s, (size_t)(ps->p - s));
	} else {
		return toml_fail_at(
		        ps, here(ps),
		        "expected a key (letters, digits, '_' and '-', or a quoted string), "
		        "found %s",
		        toml_describe(ps, d, sizeof(d)));
	}
	if (rc < 0) {
		toml_mem_free(b.p);
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
			toml_mem_free(kp->part[i].s);
	kp->n = 0;
}

/* a.b."c" with blanks around the dots; the caller clears kp even on failure. */
static int parse_key(struct parser *ps, struct keypath *kp)
{
	kp->n = 0;
	for (;;) {
		skip_ws(ps);
		if (kp->n == TOML_MAX_DEPTH)
			return toml_fail_at(
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
const char *toml_word(const struct parser *ps, char *buf, size_t n)
{
	size_t len = 0;
	while (ps->p + len < ps->end && is_bare((unsigned char)ps->p[len]) && len < 32)
		len++;
	snprintf(buf, n, "'%.*s'", (int)len, ps->p);
	return buf;
}

static int nest_fail(struct parser *ps, struct toml_pos pos)
{
	return toml_fail_at(ps, pos, "nesting deeper than %d levels is not supported here",
	                    TOML_MAX_DEPTH);
}

static int parse_array(struct parser *ps, int depth, struct toml_value **out)
{
	struct toml_pos open = here(ps);
	struct toml_value *arr, *item;
	char d[48];

	arr = toml_value_new(ps, TOML_ARRAY, open);
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
			toml_fail_at(ps, here(ps), "expected a value or ']', found ','");
			goto fail;
		}
		if (parse_value(ps, depth + 1, &item) < 0 || toml_array_put(ps, arr, item) < 0)
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
		toml_fail_at(ps, here(ps), "expected ',' or ']' after an array element, found %s",
		             toml_describe(ps, d, sizeof(d)));
		goto fail;
	}
	adv(ps);
	*out = arr;
	return 0;
unterminated:
	toml_fail_at(ps, here(ps), "unterminated array (opened at %d:%d): expected ']'", open.line,
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

	t = toml_value_new(ps, TOML_TABLE, open);
	if (!t)
		return -1;
	adv(ps);
	skip_ws(ps);
	if (cur_c(ps) != '}') {
		for (;;) {
			skip_ws(ps);
			if (cur_c(ps) < 0 || at_newline(ps)) {
				toml_fail_at(
				        ps, here(ps),
				        "unterminated inline table (opened at %d:%d): expected a "
				        "key "
				        "on the same line, found %s",
				        open.line, open.col, toml_describe(ps, d, sizeof(d)));
				goto fail;
			}
			if (parse_keyval(ps, t, depth) < 0)
				goto fail;
			skip_ws(ps);
			if (cur_c(ps) == ',') {
				adv(ps);
				skip_ws(ps);
				if (cur_c(ps) == '}') {
					toml_fail_at(ps, here(ps),
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
				toml_fail_at(
				        ps, here(ps),
				        "unterminated inline table (opened at %d:%d): expected ',' "
				        "or "
				        "'}' on the same line, found %s",
				        open.line, open.col, toml_describe(ps, d, sizeof(d)));
			else
				toml_fail_at(
				        ps, here(ps),
				        "expected ',' or '}' after a value in an inline table, "
				        "found %s",
				        toml_describe(ps, d, sizeof(d)));
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
		int rc = peek_at(ps, 1) == c && peek_at(ps, 2) == c
		                 ? toml_parse_ml_string(ps, &b)
		                 : toml_parse_line_string(ps, &b);
		if (rc < 0 || !(v = toml_value_new(ps, TOML_STRING, pos))) {
			toml_mem_free(b.p);
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
		if (!(v = toml_value_new(ps, TOML_BOOLEAN, pos)))
			return -1;
		v->u.boolean = c == 't';
		adv_n(ps, c == 't' ? 4 : 5);
		*out = v;
		return 0;
	}
	if (c == '+' || c == '-' || is_digit(c, 10) || match_word(ps, "inf") ||
	    match_word(ps, "nan"))
		return toml_parse_number(ps, out);
	if (c < 0 || at_newline(ps) || c == '#')
		return toml_fail_at(ps, pos, "missing value: expected a value, found %s",
		                    toml_describe(ps, d, sizeof(d)));
	if (is_bare(c))
		return toml_fail_at(
		        ps, pos,
		        "expected a value, found %s; strings must be quoted, booleans are "
		        "true or false",
		        toml_word(ps, d, sizeof(d)));
	return toml_fail_at(ps, pos,
	                    "expected a value (a string, number, boolean, array or inline table), "
	                    "found %s",
	                    toml_describe(ps, d, sizeof(d)));
}

/* Why a dotted key or header cannot go through (or redefine) the value at e. */
static int cannot_extend(struct parser *ps, struct toml_pos at, const char *name,
                         const struct entry *e)
{
	const struct toml_value *v = e->value;

	if (v->type == TOML_TABLE && (v->flags & T_INLINE))
		return toml_fail_at(ps, at,
		                    "%s is an inline table (at %d:%d); inline tables cannot be "
		                    "extended",
		                    name, v->pos.line, v->pos.col);
	if (v->type == TOML_TABLE)
		return toml_fail_at(
		        ps, at,
		        "table %s belongs to a [header] (at %d:%d); dotted keys cannot add "
		        "to it, write the key under that header",
		        name, v->pos.line, v->pos.col);
	if (v->type == TOML_ARRAY && (v->flags & A_TABLES))
		return toml_fail_at(ps, at,
		                    "%s is an array of tables ([[%s]] at %d:%d), not a table", name,
		                    name, v->pos.line, v->pos.col);
	return toml_fail_at(ps, at, "%s is already %s (defined at %d:%d), not a table", name,
	                    toml_a_type(v->type), e->pos.line, e->pos.col);
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
		toml_fail_at(ps, here(ps), "expected '=' after the key %s, found %s", name,
		             toml_describe(ps, d, sizeof(d)));
		goto out;
	}
	adv(ps);
	skip_ws(ps);
	for (int i = 0; i < kp.n - 1; i++) {
		e = toml_table_find(t, kp.part[i].s, kp.part[i].len);
		if (!e) {
			struct toml_value *nt = toml_value_new(ps, TOML_TABLE, kp.part[i].pos);
			if (!nt)
				goto out;
			nt->flags = T_DOTTED;
			if (toml_table_put(ps, t, &kp.part[i], nt) < 0)
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
	e = toml_table_find(t, last->s, last->len);
	if (e) {
		key_name(name, sizeof(name), &kp, kp.n);
		toml_fail_at(ps, last->pos, "duplicate key %s: already defined at %d:%d", name,
		             e->pos.line, e->pos.col);
		goto out;
	}
	if (parse_value(ps, depth + kp.n, &v) < 0)
		goto out;
	rc = toml_table_put(ps, t, last, v);
out:
	keypath_clear(&kp);
	return rc;
}

/* The tables a header goes through, [a.b] of [a.b.c]: made when missing (implicit), the last
 * element when an array of tables. *t starts at the root and ends at the parent. */
static int header_parents(struct parser *ps, struct keypath *kp, struct toml_value **t)
{
	char name[256];

	for (int i = 0; i < kp->n - 1; i++) {
		struct entry *e = toml_table_find(*t, kp->part[i].s, kp->part[i].len);
		struct toml_value *ev;
		if (!e) {
			struct toml_value *nt = toml_value_new(ps, TOML_TABLE, kp->part[i].pos);
			if (!nt)
				return -1;
			nt->flags = T_IMPLICIT;
			if (toml_table_put(ps, *t, &kp->part[i], nt) < 0)
				return -1;
			*t = nt;
			continue;
		}
		ev = e->value;
		if (ev->type == TOML_TABLE && !(ev->flags & T_INLINE)) {
			*t = ev;
			continue;
		}
		if (ev->type == TOML_ARRAY && (ev->flags & A_TABLES)) {
			*t = ev->u.arr.items[ev->u.arr.len - 1];
			continue;
		}
		key_name(name, sizeof(name), kp, i + 1);
		return cannot_extend(ps, kp->part[i].pos, name, e);
	}
	return 0;
}

/* [name] into t: a new table, or one made implicit by an earlier header; never twice. */
static int header_table(struct parser *ps, struct toml_pos open, struct toml_value *t,
                        struct key *last, const char *name)
{
	struct entry *e = toml_table_find(t, last->s, last->len);
	struct toml_value *ev = e ? e->value : NULL, *nt;

	if (!e) {
		if (!(nt = toml_value_new(ps, TOML_TABLE, open)))
			return -1;
		nt->flags = T_HEADER;
		if (toml_table_put(ps, t, last, nt) < 0)
			return -1;
		ps->cur = nt;
		return 0;
	}
	if (ev->type == TOML_TABLE && ev->flags == T_IMPLICIT) {
		ev->flags = T_HEADER;
		ev->pos = open;
		ps->cur = ev;
		return 0;
	}
	if (ev->type == TOML_TABLE && (ev->flags & T_HEADER))
		return toml_fail_at(ps, open, "table [%s] is defined twice (first at %d:%d)", name,
		                    ev->pos.line, ev->pos.col);
	if (ev->type == TOML_TABLE && (ev->flags & T_DOTTED))
		return toml_fail_at(ps, open,
		                    "table %s is already defined by dotted keys at %d:%d; a table "
		                    "cannot be defined twice",
		                    name, ev->pos.line, ev->pos.col);
	return cannot_extend(ps, open, name, e);
}

/* [[name]] into t: a new table appended to the array of tables, made when missing. */
static int header_array(struct parser *ps, struct toml_pos open, struct toml_value *t,
                        struct key *last, const char *name)
{
	struct entry *e = toml_table_find(t, last->s, last->len);
	struct toml_value *ev = e ? e->value : NULL, *nt;

	if (e && !(ev->type == TOML_ARRAY && (ev->flags & A_TABLES))) {
		if (ev->type == TOML_ARRAY)
			return toml_fail_at(
			        ps, open,
			        "%s is a static array (defined at %d:%d); [[%s]] cannot "
			        "append to it",
			        name, e->pos.line, e->pos.col, name);
		return toml_fail_at(ps, open,
		                    "%s is already %s (defined at %d:%d); [[%s]] needs an array "
		                    "of tables",
		                    name, toml_a_type(ev->type), ev->pos.line, ev->pos.col, name);
	}
	if (!e) {
		if (!(ev = toml_value_new(ps, TOML_ARRAY, open)))
			return -1;
		ev->flags = A_TABLES;
		if (toml_table_put(ps, t, last, ev) < 0)
			return -1;
	}
	if (!(nt = toml_value_new(ps, TOML_TABLE, open)))
		return -1;
	nt->flags = T_HEADER;
	if (toml_array_put(ps, ev, nt) < 0)
		return -1;
	ps->cur = nt;
	return 0;
}

/* [a.b] or [[a.b]]. */
static int parse_header(struct parser *ps)
{
	struct toml_pos open = here(ps);
	bool aot = peek_at(ps, 1) == '[';
	struct toml_value *t = ps->root;
	struct keypath kp = {.n = 0};
	char name[256], d[48];
	int rc = -1;

	adv_n(ps, aot ? 2 : 1);
	if (parse_key(ps, &kp) < 0)
		goto out;
	if (aot && cur_c(ps) == ']' && peek_at(ps, 1) != ']')
		adv(ps);
	if (cur_c(ps) != ']' || (aot && peek_at(ps, 1) != ']')) {
		toml_fail_at(ps, here(ps), "expected '%s' to close the %s header, found %s",
		             aot ? "]]" : "]", aot ? "[[array of tables]]" : "[table]",
		             toml_describe(ps, d, sizeof(d)));
		goto out;
	}
	adv_n(ps, aot ? 2 : 1);
	if (header_parents(ps, &kp, &t) < 0)
		goto out;
	key_name(name, sizeof(name), &kp, kp.n);
	if ((aot ? header_array : header_table)(ps, open, t, &kp.part[kp.n - 1], name) < 0)
		goto out;
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
		return toml_fail_at(&ps, here(&ps), "no input");
	if (len > TOML_MAX_INPUT)
		return toml_fail_at(
		        &ps, here(&ps),
		        "the input is %zu bytes, more than the 1 MiB (%zu bytes) this reader "
		        "accepts",
		        len, TOML_MAX_INPUT);
	if (utf8_check(&ps) < 0)
		return -1;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		ps.p += 3; /* a byte order mark; the column stays 1 */
	ps.root = toml_value_new(&ps, TOML_TABLE, here(&ps));
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
