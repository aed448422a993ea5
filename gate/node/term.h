/* gate/node/term.h: a bounded decoder of the Erlang external term format for probe replies.
 *
 * ei's own ei_decode_* functions take no buffer length and trust their input; replies from a
 * node are outside input, so this decoder checks every length against the buffer and caps
 * depth, element counts and total size. A decoded tree is owned by the caller: term_free().
 */
#ifndef GATE_TERM_H
#define GATE_TERM_H

#include <stddef.h>
#include <stdint.h>

enum term_type {
	TERM_INT,    /* fits int64 */
	TERM_FLOAT,  /* also bignums that do not fit int64 */
	TERM_ATOM,   /* text in bin */
	TERM_BINARY, /* also charlists sent as STRING_EXT */
	TERM_LIST,   /* proper list; an improper tail is an error */
	TERM_TUPLE,
	TERM_MAP,   /* items holds key, value, key, value, ... ; n counts pairs */
	TERM_OPAQUE /* pid, port, reference, fun: kept as a marker only */
};

struct term {
	enum term_type type;
	union {
		int64_t i;
		double f;
		struct {
			char *data; /* NUL-terminated for convenience; len excludes it */
			size_t len;
		} bin;
		struct {
			struct term *items;
			size_t n;
		} seq;
	} u;
};

struct term_limits {
	size_t max_depth;    /* nesting */
	size_t max_elements; /* terms in the whole tree */
	size_t max_bytes;    /* total of binary/atom payloads */
};

/* Defaults used for probe replies: depth 32, 4 M elements, 256 MiB of text. */
extern const struct term_limits term_limits_default;

/* Decodes one term from buf[*index..len). With a version byte (131) at *index it is
 * skipped. On success returns 0, *out is the tree and *index is past the term. On failure
 * returns -1 and err says what was wrong and at which byte offset. */
int term_decode(struct term **out, const unsigned char *buf, size_t len, size_t *index,
                const struct term_limits *limits, char *err, size_t errlen);

void term_free(struct term *t);

/* Look-ups; each returns NULL when t is NULL, of another type, or has no such element. */
const struct term *term_map_get(const struct term *map, const char *atom_key);
const struct term *term_tuple_at(const struct term *tuple, size_t i);
int term_is_atom(const struct term *t, const char *name);
/* 0 and *out on success, -1 when t is not an integer. */
int term_int(const struct term *t, int64_t *out);
/* The text of a binary or atom, or NULL. */
const char *term_text(const struct term *t);

/* Prints t in Erlang-like syntax into buf (truncated with "..." past len). For messages. */
void term_format(const struct term *t, char *buf, size_t len);

#endif
