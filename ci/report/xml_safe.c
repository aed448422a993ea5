/* ci/report/xml_safe.c: outside text made safe for XML 1.0 (ci/report/xml_safe.h). */
#include "ci/report/xml_safe.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/grow.h"
#include "base/utf8.h"
#include "ci/report/ansi.h"

char *xml_safe(const char *in, size_t max, enum safe_mode mode)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	struct textbuf b = {0};
	bool cut = false;
	size_t cut_at = 0; /* offset in s where output stopped for the cap */

	if (mode == SAFE_FIRST_LINE)
		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			s++;
	for (size_t i = 0; s[i];) {
		char piece[8];
		size_t plen, used;
		uint32_t cp;

		if (s[i] == 0x1B && (used = ansi_escape_len(s + i)) > 0) {
			i += used;
			continue;
		}
		used = utf8_next(s + i, &cp);
		if (mode == SAFE_FIRST_LINE && (cp == '\n' || cp == '\r'))
			break;
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F) {
			plen = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", (unsigned)cp);
		} else {
			if (cp == 0xFFFE || cp == 0xFFFF)
				cp = 0xFFFD;
			if (cp == 0xFFFD) {
				memcpy(piece, "\xEF\xBF\xBD", 3);
				plen = 3;
			} else {
				memcpy(piece, s + i, used);
				plen = used;
			}
		}
		if (b.len + plen > max) {
			cut = true;
			cut_at = i;
			break;
		}
		textbuf_add(&b, piece, plen);
		i += used;
	}
	if (mode == SAFE_FIRST_LINE)
		while (b.len > 0 && (b.s[b.len - 1] == ' ' || b.s[b.len - 1] == '\t'))
			b.s[--b.len] = '\0';
	if (cut) {
		if (mode == SAFE_FIRST_LINE) {
			textbuf_add(&b, "\xE2\x80\xA6", 3);
		} else {
			char note[96];
			int n = snprintf(note, sizeof(note),
			                 "\n[gate: truncated here, %zu more bytes not shown]",
			                 strlen((const char *)s + cut_at));
			textbuf_add(&b, note, (size_t)n);
		}
	}
	return textbuf_take(&b);
}
