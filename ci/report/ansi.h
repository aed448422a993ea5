/* ci/report/ansi.h: recognising ANSI escape sequences in text from the test suite, so that the
 * writers (JUnit, console summary) can drop them. */
#ifndef GATE_CI_REPORT_ANSI_H
#define GATE_CI_REPORT_ANSI_H

#include <stddef.h>

/* Length of the ANSI escape sequence at s (s[0] is ESC), 0 when it starts none: CSI
 * ("\e[31m"), the string sequences OSC/DCS/SOS/PM/APC ("\e]8;;url\e\\") ended by ST or BEL,
 * and the short ones ("\e7", "\e(B"). s must be NUL-terminated. */
size_t ansi_escape_len(const unsigned char *s);

#endif
