/* base/grow.h: growing buffers, the one way gate grows them: arrays that double, and a text
 * buffer that appends and formats. Every layer (rules/, ci/, gate/) uses these. */
#ifndef GATE_BASE_GROW_H
#define GATE_BASE_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* Makes *items (an array of elements of elem bytes, *cap of them allocated) hold at least need
 * elements: the capacity doubles from first (when 0) until it does. Returns 0, or -1 when out
 * of memory or the size would overflow (*items and *cap then unchanged). */
int grow_array(void **items, size_t *cap, size_t need, size_t elem, size_t first);

/* GROW(ptr, cap, need, first): grow_array for a typed pointer. */
#define GROW(ptr, cap, need, first)                                                                \
	grow_array((void **)&(ptr), &(cap), (need), sizeof(*(ptr)), (first))

/* A NUL-terminated text that grows; zero-initialized is empty. After a failed allocation it
 * stays as it was and oom is set: later appends are no-ops, so callers check once at the end.
 * With a limit, an append that would pass it is dropped whole and full is set: every later
 * append is dropped too (a later short line must not jump the queue), so that a writer can
 * stop early and say so. */
struct textbuf {
	char *s;      /* NULL until something is added */
	size_t len;   /* bytes, without the NUL */
	size_t cap;   /* bytes allocated */
	size_t limit; /* 0: none */
	bool full;    /* an append was dropped at the limit */
	bool oom;
};

void textbuf_add(struct textbuf *b, const char *s, size_t n);
void textbuf_puts(struct textbuf *b, const char *s);
void textbuf_printf(struct textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The text, owned by the caller ("" when empty), or NULL when oom; b is empty afterwards. */
char *textbuf_take(struct textbuf *b);
void textbuf_free(struct textbuf *b);

/* Appends add to the malloc'd string *s (NULL is empty). Returns 0, or -1 when out of memory
 * (*s unchanged). */
int text_append(char **s, const char *add);

#endif
