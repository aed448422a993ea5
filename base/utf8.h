/* base/utf8.h: strict UTF-8 decoding and encoding, shared by the writers that must never pass
 * invalid text on (JUnit, the CI reports) and by the TOML reader. */
#ifndef GATE_BASE_UTF8_H
#define GATE_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one UTF-8 sequence at s strictly (no overlongs, surrogates or values past
 * U+10FFFF). Returns the bytes it takes, and *cp = U+FFFD with length 1 for a byte that
 * starts no valid sequence. s must be NUL-terminated (a NUL ends any sequence). */
size_t utf8_next(const unsigned char *s, uint32_t *cp);

/* Writes the UTF-8 encoding of cp (at most 4 bytes, no NUL) to out; returns its length. */
size_t utf8_put(char *out, uint32_t cp);

/* A NUL-terminated copy of the len bytes at s in which NUL and the C0 controls other than
 * tab, newline, carriage return and ESC (kept for the writers' ANSI handling), and DEL, are
 * written as the text \xNN: a name or message from the node is shown escaped in every
 * report, never cut at a NUL. Other bytes are copied as they are (the writers deal with
 * invalid UTF-8). malloc'd; NULL when out of memory. */
char *utf8_dup_escaped(const char *s, size_t len);

#endif
