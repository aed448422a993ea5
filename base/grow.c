/* base/grow.c: growing buffers (see grow.h). */
#include "base/grow.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int grow_array(void **items, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : (first ? first : 1);
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -1;
		n *= 2;
	}
	if (elem && n > SIZE_MAX / elem)
		return -1;
	void *p = realloc(*items, n * elem);
	if (!p)
		return -1;
	*items = p;
	*cap = n;
	return 0;
}

/* false when n more bytes would pass b's limit: b is full from then on */
static bool textbuf_room(struct textbuf *b, size_t n)
{
	if (b->full)
		return false;
	if (b->limit && (n > b->limit || b->len > b->limit - n)) {
		b->full = true;
		return false;
	}
	return true;
}

void textbuf_add(struct textbuf *b, const char *s, size_t n)
{
	if (b->oom || !textbuf_room(b, n))
		return;
	if (n > SIZE_MAX - b->len - 1 || GROW(b->s, b->cap, b->len + n + 1, 64) < 0) {
		b->oom = true;
		return;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void textbuf_puts(struct textbuf *b, const char *s)
{
	textbuf_add(b, s, strlen(s));
}

void textbuf_printf(struct textbuf *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		textbuf_add(b, small, (size_t)n);
		return;
	}
	if (!textbuf_room(b, (size_t)n))
		return;
	if (GROW(b->s, b->cap, b->len + (size_t)n + 1, 64) < 0) {
		b->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *textbuf_take(struct textbuf *b)
{
	char *s = b->oom ? NULL : (b->s ? b->s : strdup(""));
	if (b->oom)
		free(b->s);
	*b = (struct textbuf){0};
	return s;
}

void textbuf_free(struct textbuf *b)
{
	free(b->s);
	*b = (struct textbuf){0};
}

int text_append(char **s, const char *add)
{
	size_t ol = *s ? strlen(*s) : 0, al = strlen(add);
	char *p = realloc(*s, ol + al + 1);
	if (!p)
		return -1;
	memcpy(p + ol, add, al + 1);
	*s = p;
	return 0;
}
