/* ci/utf8.h: strict UTF-8 decoding and encoding, shared by the writers that must never pass
 * invalid text on (JUnit, the CI reports) and by the TOML reader. */
#ifndef GATE_CI_UTF8_H
#define GATE_CI_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one UTF-8 sequence at s strictly (no overlongs, surrogates or values past
 * U+10FFFF). Returns the bytes it takes, and *cp = U+FFFD with length 1 for a byte that
 * starts no valid sequence. s must be NUL-terminated (a NUL ends any sequence). */
size_t utf8_next(const unsigned char *s, uint32_t *cp);

/* Writes the UTF-8 encoding of cp (at most 4 bytes, no NUL) to out; returns its length. */
size_t utf8_put(char *out, uint32_t cp);

#endif
