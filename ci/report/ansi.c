/* ci/report/ansi.c: recognising ANSI escape sequences in text from the test suite. */
#include "ci/report/ansi.h"

/* Length of the ANSI escape sequence at s (s[0] is ESC), 0 when it starts none: CSI
 * ("\e[31m"), the string sequences OSC/DCS/SOS/PM/APC ("\e]8;;url\e\\") ended by ST or BEL,
 * and the short ones ("\e7", "\e(B"). An ESC that starts none is kept, written visibly. */
size_t ansi_escape_len(const unsigned char *s)
{
	size_t i;
	if (s[1] == '[') {
		for (i = 2; s[i] >= 0x20 && s[i] <= 0x3F; i++)
			;
		return s[i] >= 0x40 && s[i] <= 0x7E ? i + 1 : 0;
	}
	if (s[1] == ']' || s[1] == 'P' || s[1] == 'X' || s[1] == '^' || s[1] == '_') {
		for (i = 2; s[i]; i++) {
			if (s[i] == 0x07)
				return i + 1;
			if (s[i] == 0x1B && s[i + 1] == '\\')
				return i + 2;
		}
		return 0;
	}
	/* intermediates, then a final byte; a space after ESC is taken as text */
	for (i = 1; s[i] >= 0x21 && s[i] <= 0x2F; i++)
		;
	return s[i] >= 0x30 && s[i] <= 0x7E ? i + 1 : 0;
}
