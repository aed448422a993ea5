/* base/errtext.c: the one way ci/ writers fill a caller's error buffer. */
#include "base/errtext.h"

#include <stdarg.h>
#include <stdio.h>

void errtext_set(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	if (!err || errlen == 0)
		return;
	int n = name ? snprintf(err, errlen, "%s: ", name) : 0;
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}
