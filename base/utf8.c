/* base/utf8.c: strict UTF-8 decoding and encoding. */
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>

size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	unsigned char c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t n;
	uint32_t v, min;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2, v = c & 0x1F, min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3, v = c & 0x0F, min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4, v = c & 0x07, min = 0x10000;
	} else {
		*cp = 0xFFFD;
		return 1;
	}
	for (size_t i = 1; i < n; i++) {
		/* a NUL terminator is not a continuation byte, so this never reads past it */
		if ((s[i] & 0xC0) != 0x80) {
			*cp = 0xFFFD;
			return 1;
		}
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
		*cp = 0xFFFD;
		return 1;
	}
	*cp = v;
	return n;
}

size_t utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static int escaped_control(unsigned char c)
{
	return (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != 0x1B) || c == 0x7F;
}

char *utf8_dup_escaped(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += escaped_control((unsigned char)s[i]) ? 4 : 1;
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (escaped_control(c)) {
			snprintf(out + o, 5, "\\x%02x", c);
			o += 4;
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return out;
}
