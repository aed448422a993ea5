/* gate/node/term.c: a bounded decoder of the Erlang external term format for probe replies. */
#include "gate/node/term.h"

#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"

const struct term_limits term_limits_default = {
        .max_depth = 32,
        .max_elements = 4u << 20,
        .max_bytes = 256u << 20,
};

enum {
	TAG_VERSION = 131,
	TAG_NEW_FLOAT = 70,
	TAG_BIT_BINARY = 77,
	TAG_NEWER_REFERENCE = 90,
	TAG_NEW_PID = 88,
	TAG_NEW_PORT = 89,
	TAG_SMALL_INTEGER = 97,
	TAG_INTEGER = 98,
	TAG_FLOAT = 99,
	TAG_ATOM = 100,
	TAG_REFERENCE = 101,
	TAG_PORT = 102,
	TAG_PID = 103,
	TAG_SMALL_TUPLE = 104,
	TAG_LARGE_TUPLE = 105,
	TAG_NIL = 106,
	TAG_STRING = 107,
	TAG_LIST = 108,
	TAG_BINARY = 109,
	TAG_SMALL_BIG = 110,
	TAG_LARGE_BIG = 111,
	TAG_NEW_FUN = 112,
	TAG_EXPORT = 113,
	TAG_NEW_REFERENCE = 114,
	TAG_SMALL_ATOM = 115,
	TAG_MAP = 116,
	TAG_ATOM_UTF8 = 118,
	TAG_SMALL_ATOM_UTF8 = 119,
	TAG_V4_PORT = 120,
};

struct dec {
	const unsigned char *buf;
	size_t len;
	size_t pos;
	const struct term_limits *lim;
	size_t elements;
	size_t bytes;
	char *err;
	size_t errlen;
};

static int fail(struct dec *d, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	errtext_set(d->err, d->errlen, NULL, "%s at byte %zu of %zu", what, d->pos, d->len);
	return -1;
}

static int need(struct dec *d, size_t n)
{
	if (d->len - d->pos < n)
		return fail(d, "term truncated: %zu more bytes expected", n);
	return 0;
}

static uint32_t rd32(struct dec *d)
{
	const unsigned char *p = d->buf + d->pos;
	d->pos += 4;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t rd16(struct dec *d)
{
	const unsigned char *p = d->buf + d->pos;
	d->pos += 2;
	return (uint16_t)(p[0] << 8 | p[1]);
}

static int count_element(struct dec *d)
{
	if (++d->elements > d->lim->max_elements)
		return fail(d, "reply has more than %zu terms", d->lim->max_elements);
	return 0;
}

static int take_text(struct dec *d, struct term *t, enum term_type type, size_t n)
{
	if (need(d, n) < 0)
		return -1;
	if (n > d->lim->max_bytes - d->bytes)
		return fail(d, "reply has more than %zu bytes of text", d->lim->max_bytes);
	d->bytes += n;
	t->u.bin.data = malloc(n + 1);
	if (!t->u.bin.data)
		return fail(d, "out of memory for %zu bytes", n);
	memcpy(t->u.bin.data, d->buf + d->pos, n);
	t->u.bin.data[n] = '\0';
	t->u.bin.len = n;
	t->type = type;
	d->pos += n;
	return 0;
}

static int decode(struct dec *d, struct term *t, size_t depth);
static void term_clear(struct term *t);

/* ATOM_EXT and SMALL_ATOM_EXT hold Latin-1 (older or foreign encoders send them): kept as
 * UTF-8 like every other text, so that writers never meet an atom that is not UTF-8. */
static int take_latin1_atom(struct dec *d, struct term *t, size_t n)
{
	if (take_text(d, t, TERM_ATOM, n) < 0)
		return -1;
	size_t high = 0;
	for (size_t i = 0; i < n; i++)
		high += (unsigned char)t->u.bin.data[i] >= 0x80;
	if (!high)
		return 0;
	if (high > d->lim->max_bytes - d->bytes)
		return fail(d, "reply has more than %zu bytes of text", d->lim->max_bytes);
	d->bytes += high;
	char *u = malloc(n + high + 1), *o = u;
	if (!u)
		return fail(d, "out of memory for %zu bytes", n + high);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t->u.bin.data[i];
		if (c < 0x80) {
			*o++ = (char)c;
		} else {
			*o++ = (char)(0xC0 | c >> 6);
			*o++ = (char)(0x80 | (c & 0x3F));
		}
	}
	*o = '\0';
	free(t->u.bin.data);
	t->u.bin.data = u;
	t->u.bin.len = n + high;
	return 0;
}

/* Skips an atom inside an opaque term (the node name of a pid, port or reference). The
 * node name is decoded one level deeper, so that a pid whose node is a pid whose node is
 * ... stops at max_depth, and cleared whatever it turned out to be. */
static int skip_atom(struct dec *d, size_t depth)
{
	struct term a = {0};
	int rc = decode(d, &a, depth + 1);
	int ok = rc == 0 && a.type == TERM_ATOM;
	term_clear(&a);
	if (rc < 0)
		return -1;
	return ok ? 0 : fail(d, "atom expected");
}

static int alloc_seq(struct dec *d, struct term *t, enum term_type type, size_t n,
                     size_t min_bytes_each)
{
	/* each element takes at least min_bytes_each bytes: reject lengths the buffer cannot hold
	 */
	if (min_bytes_each && n > (d->len - d->pos) / min_bytes_each)
		return fail(d, "length %zu exceeds the reply", n);
	if (n > d->lim->max_elements)
		return fail(d, "reply has more than %zu terms", d->lim->max_elements);
	t->type = type;
	t->u.seq.n = 0;
	t->u.seq.items = n ? calloc(n, sizeof(struct term)) : NULL;
	if (n && !t->u.seq.items)
		return fail(d, "out of memory for %zu terms", n);
	return 0;
}

static int decode_seq(struct dec *d, struct term *t, size_t n, size_t depth)
{
	for (size_t i = 0; i < n; i++) {
		/* counted before it is decoded: a failure inside item i leaves it partly built,
		 * and term_free must free that part too (items start zeroed by calloc) */
		t->u.seq.n = i + 1;
		if (decode(d, &t->u.seq.items[i], depth + 1) < 0)
			return -1;
	}
	return 0;
}

static int decode_big(struct dec *d, struct term *t, size_t n)
{
	if (need(d, 1 + n) < 0)
		return -1;
	int neg = d->buf[d->pos++];
	const unsigned char *p = d->buf + d->pos;
	uint64_t v = 0;
	int fits = 1;
	double f = 0, scale = 1;
	for (size_t i = 0; i < n; i++) {
		if (i < 8)
			v |= (uint64_t)p[i] << (8 * i);
		else if (p[i])
			fits = 0;
		f += p[i] * scale;
		scale *= 256.0;
	}
	d->pos += n;
	if (fits && (neg ? v <= (uint64_t)INT64_MAX + 1 : v <= (uint64_t)INT64_MAX)) {
		t->type = TERM_INT;
		t->u.i = neg ? (int64_t)(0 - v) : (int64_t)v;
	} else {
		t->type = TERM_FLOAT;
		t->u.f = neg ? -f : f;
	}
	return 0;
}

/* Reads a length or count of width 1, 2 or 4 bytes (big-endian) into *n. */
static int read_len(struct dec *d, size_t width, size_t *n)
{
	if (need(d, width) < 0)
		return -1;
	*n = width == 4 ? rd32(d) : width == 2 ? rd16(d) : d->buf[d->pos++];
	return 0;
}

/* Integers, floats, and bignums (an int64 when they fit, a float otherwise). */
static int decode_number(struct dec *d, struct term *t, unsigned tag)
{
	size_t n;
	switch (tag) {
	case TAG_SMALL_INTEGER:
	case TAG_INTEGER:
		if (read_len(d, tag == TAG_INTEGER ? 4 : 1, &n) < 0)
			return -1;
		t->type = TERM_INT;
		t->u.i = tag == TAG_INTEGER ? (int32_t)(uint32_t)n : (int64_t)n;
		return 0;
	case TAG_NEW_FLOAT: {
		if (need(d, 8) < 0)
			return -1;
		uint64_t bits = (uint64_t)rd32(d) << 32;
		bits |= rd32(d);
		double f;
		memcpy(&f, &bits, sizeof(f));
		t->type = TERM_FLOAT;
		t->u.f = f;
		return 0;
	}
	case TAG_FLOAT: {
		char txt[32];
		if (need(d, 31) < 0)
			return -1;
		memcpy(txt, d->buf + d->pos, 31);
		txt[31] = '\0';
		d->pos += 31;
		t->type = TERM_FLOAT;
		t->u.f = strtod(txt, NULL);
		return 0;
	}
	default: /* TAG_SMALL_BIG, TAG_LARGE_BIG */
		if (read_len(d, tag == TAG_LARGE_BIG ? 4 : 1, &n) < 0)
			return -1;
		return decode_big(d, t, n);
	}
}

/* Atoms (Latin-1 ones turned into UTF-8), binaries, bitstrings (their bytes) and charlists
 * sent as STRING_EXT (a binary). */
static int decode_text(struct dec *d, struct term *t, unsigned tag)
{
	size_t n;
	switch (tag) {
	case TAG_ATOM:
	case TAG_ATOM_UTF8:
	case TAG_SMALL_ATOM:
	case TAG_SMALL_ATOM_UTF8: {
		bool small = tag == TAG_SMALL_ATOM || tag == TAG_SMALL_ATOM_UTF8;
		if (read_len(d, small ? 1 : 2, &n) < 0)
			return -1;
		return tag == TAG_ATOM || tag == TAG_SMALL_ATOM ? take_latin1_atom(d, t, n)
		                                                : take_text(d, t, TERM_ATOM, n);
	}
	case TAG_BINARY:
		if (read_len(d, 4, &n) < 0)
			return -1;
		return take_text(d, t, TERM_BINARY, n);
	case TAG_BIT_BINARY:
		if (need(d, 5) < 0)
			return -1;
		n = rd32(d);
		d->pos++; /* bits used in the last byte: a bitstring, kept as its bytes */
		return take_text(d, t, TERM_BINARY, n);
	default: /* TAG_STRING */
		if (read_len(d, 2, &n) < 0)
			return -1;
		return take_text(d, t, TERM_BINARY, n);
	}
}

/* Tuples, proper lists (an improper tail is an error) and maps. */
static int decode_seq_term(struct dec *d, struct term *t, unsigned tag, size_t depth)
{
	size_t n;
	if (read_len(d, tag == TAG_SMALL_TUPLE ? 1 : 4, &n) < 0)
		return -1;
	if (tag == TAG_MAP) {
		if (n > SIZE_MAX / 2)
			return fail(d, "map too large");
		/* decoded as a tuple of 2n items, so that a failure half-way frees the right
		 * count; it becomes a map of n pairs once complete */
		if (alloc_seq(d, t, TERM_TUPLE, 2 * n, 1) < 0 || decode_seq(d, t, 2 * n, depth) < 0)
			return -1;
		t->type = TERM_MAP;
		t->u.seq.n = n;
		return 0;
	}
	enum term_type type = tag == TAG_LIST ? TERM_LIST : TERM_TUPLE;
	if (alloc_seq(d, t, type, n, 1) < 0 || decode_seq(d, t, n, depth) < 0)
		return -1;
	if (tag != TAG_LIST)
		return 0;
	struct term tail;
	int rc = decode(d, &tail, depth + 1);
	int proper = rc == 0 && tail.type == TERM_LIST && tail.u.seq.n == 0;
	term_clear(&tail);
	if (rc < 0)
		return -1;
	return proper ? 0 : fail(d, "improper list");
}

/* Pids, ports and references: their node name (an atom) is checked, the rest skipped. */
static int decode_ident(struct dec *d, struct term *t, unsigned tag, size_t depth)
{
	size_t ids = 0, rest;
	t->type = TERM_OPAQUE;
	if (tag == TAG_NEW_REFERENCE || tag == TAG_NEWER_REFERENCE) {
		if (read_len(d, 2, &ids) < 0)
			return -1;
		if (ids > 5)
			return fail(d, "reference with %zu ids", ids);
	}
	if (skip_atom(d, depth) < 0)
		return -1;
	switch (tag) {
	case TAG_NEW_PID: rest = 12; break;
	case TAG_PID: rest = 9; break;
	case TAG_NEW_PORT: rest = 8; break;
	case TAG_V4_PORT: rest = 12; break;
	case TAG_PORT:
	case TAG_REFERENCE: rest = 5; break;
	case TAG_NEW_REFERENCE: rest = 1 + 4 * ids; break;
	default: rest = 4 + 4 * ids; break; /* TAG_NEWER_REFERENCE */
	}
	if (need(d, rest) < 0)
		return -1;
	d->pos += rest;
	return 0;
}

/* Funs: an export (three terms) or a closure (skipped whole as a block). */
static int decode_fun(struct dec *d, struct term *t, unsigned tag, size_t depth)
{
	t->type = TERM_OPAQUE;
	if (tag == TAG_EXPORT) {
		for (int i = 0; i < 3; i++) {
			struct term part;
			int rc = decode(d, &part, depth + 1);
			term_clear(&part);
			if (rc < 0)
				return -1;
		}
		return 0;
	}
	/* NEW_FUN_EXT: Size covers the whole fun, tag excluded */
	size_t size;
	if (read_len(d, 4, &size) < 0)
		return -1;
	if (size < 4 || need(d, size - 4) < 0)
		return fail(d, "bad fun size");
	d->pos += size - 4;
	return 0;
}

static int decode(struct dec *d, struct term *t, size_t depth)
{
	memset(t, 0, sizeof(*t));
	if (depth > d->lim->max_depth)
		return fail(d, "reply nested deeper than %zu", d->lim->max_depth);
	if (count_element(d) < 0 || need(d, 1) < 0)
		return -1;
	unsigned tag = d->buf[d->pos++];

	switch (tag) {
	case TAG_SMALL_INTEGER:
	case TAG_INTEGER:
	case TAG_NEW_FLOAT:
	case TAG_FLOAT:
	case TAG_SMALL_BIG:
	case TAG_LARGE_BIG: return decode_number(d, t, tag);
	case TAG_ATOM:
	case TAG_ATOM_UTF8:
	case TAG_SMALL_ATOM:
	case TAG_SMALL_ATOM_UTF8:
	case TAG_BINARY:
	case TAG_BIT_BINARY:
	case TAG_STRING: return decode_text(d, t, tag);
	case TAG_NIL: t->type = TERM_LIST; return 0;
	case TAG_SMALL_TUPLE:
	case TAG_LARGE_TUPLE:
	case TAG_LIST:
	case TAG_MAP: return decode_seq_term(d, t, tag, depth);
	case TAG_NEW_PID:
	case TAG_PID:
	case TAG_NEW_PORT:
	case TAG_V4_PORT:
	case TAG_PORT:
	case TAG_REFERENCE:
	case TAG_NEW_REFERENCE:
	case TAG_NEWER_REFERENCE: return decode_ident(d, t, tag, depth);
	case TAG_EXPORT:
	case TAG_NEW_FUN: return decode_fun(d, t, tag, depth);
	default: d->pos--; return fail(d, "unsupported term tag %u", tag);
	}
}

int term_decode(struct term **out, const unsigned char *buf, size_t len, size_t *index,
                const struct term_limits *limits, char *err, size_t errlen)
{
	struct dec d = {
	        .buf = buf,
	        .len = len,
	        .pos = *index,
	        .lim = limits ? limits : &term_limits_default,
	        .err = err,
	        .errlen = errlen,
	};
	*out = NULL;
	if (d.pos > len)
		return fail(&d, "index past the end");
	if (d.pos < len && buf[d.pos] == TAG_VERSION)
		d.pos++;
	struct term *t = calloc(1, sizeof(*t));
	if (!t)
		return fail(&d, "out of memory");
	if (decode(&d, t, 0) < 0) {
		term_free(t);
		return -1;
	}
	*index = d.pos;
	*out = t;
	return 0;
}

static void term_clear(struct term *t)
{
	switch (t->type) {
	case TERM_ATOM:
	case TERM_BINARY: free(t->u.bin.data); break;
	case TERM_LIST:
	case TERM_TUPLE:
	case TERM_MAP: {
		size_t n = t->type == TERM_MAP ? 2 * t->u.seq.n : t->u.seq.n;
		for (size_t i = 0; i < n; i++)
			term_clear(&t->u.seq.items[i]);
		free(t->u.seq.items);
		break;
	}
	default: break;
	}
	memset(t, 0, sizeof(*t));
}

void term_free(struct term *t)
{
	if (!t)
		return;
	term_clear(t);
	free(t);
}

const struct term *term_map_get(const struct term *map, const char *atom_key)
{
	if (!map || map->type != TERM_MAP)
		return NULL;
	for (size_t i = 0; i < map->u.seq.n; i++) {
		const struct term *k = &map->u.seq.items[2 * i];
		if (k->type == TERM_ATOM && strcmp(k->u.bin.data, atom_key) == 0)
			return &map->u.seq.items[2 * i + 1];
	}
	return NULL;
}

const struct term *term_tuple_at(const struct term *tuple, size_t i)
{
	if (!tuple || tuple->type != TERM_TUPLE || i >= tuple->u.seq.n)
		return NULL;
	return &tuple->u.seq.items[i];
}

int term_is_atom(const struct term *t, const char *name)
{
	return t && t->type == TERM_ATOM && strcmp(t->u.bin.data, name) == 0;
}

int term_int(const struct term *t, int64_t *out)
{
	if (!t || t->type != TERM_INT)
		return -1;
	*out = t->u.i;
	return 0;
}

const char *term_text(const struct term *t)
{
	if (!t || (t->type != TERM_BINARY && t->type != TERM_ATOM))
		return NULL;
	return t->u.bin.data;
}

struct out {
	char *buf;
	size_t len, pos;
};

static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && o->pos + 1 < o->len; i++)
		o->buf[o->pos++] = s[i];
	o->buf[o->pos] = '\0';
}

static void format(struct out *o, const struct term *t, int depth)
{
	char num[48];
	if (depth > 8) {
		put(o, "...", 3);
		return;
	}
	switch (t->type) {
	case TERM_INT:
		put(o, num, (size_t)snprintf(num, sizeof(num), "%lld", (long long)t->u.i));
		break;
	case TERM_FLOAT: put(o, num, (size_t)snprintf(num, sizeof(num), "%g", t->u.f)); break;
	case TERM_ATOM: put(o, t->u.bin.data, t->u.bin.len); break;
	case TERM_BINARY:
		put(o, "<<\"", 3);
		for (size_t i = 0; i < t->u.bin.len; i++) {
			unsigned char c = (unsigned char)t->u.bin.data[i];
			char e[8];
			if (c >= 32 && c < 127 && c != '"')
				put(o, (const char *)&t->u.bin.data[i], 1);
			else
				put(o, e, (size_t)snprintf(e, sizeof(e), "\\x%02x", c));
		}
		put(o, "\">>", 3);
		break;
	case TERM_LIST:
	case TERM_TUPLE:
	case TERM_MAP: {
		int map = t->type == TERM_MAP;
		put(o, t->type == TERM_LIST ? "[" : map ? "#{" : "{", map ? 2 : 1);
		for (size_t i = 0; i < t->u.seq.n; i++) {
			if (i)
				put(o, ",", 1);
			if (map) {
				format(o, &t->u.seq.items[2 * i], depth + 1);
				put(o, "=>", 2);
				format(o, &t->u.seq.items[2 * i + 1], depth + 1);
			} else {
				format(o, &t->u.seq.items[i], depth + 1);
			}
		}
		put(o, t->type == TERM_LIST ? "]" : "}", 1);
		break;
	}
	case TERM_OPAQUE: put(o, "#opaque", 7); break;
	}
}

void term_format(const struct term *t, char *buf, size_t len)
{
	if (!len)
		return;
	struct out o = {buf, len, 0};
	buf[0] = '\0';
	if (!t) {
		put(&o, "(none)", 6);
		return;
	}
	format(&o, t, 0);
	if (o.pos + 1 >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}
