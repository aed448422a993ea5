/* gate/error.c: how gate reports an error (see error.h). */
#include "gate/error.h"

#include <stdarg.h>
#include <stdio.h>

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	/* one write of the whole line, so that it is not interleaved with the node's stderr;
	 * after what stdout holds, so that a message lands after the output it concerns */
	char line[8192];
	fflush(stdout);
	int n = snprintf(line, sizeof(line), "gate: %s: ", kind);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

int gate_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error", fmt, ap);
	va_end(ap);
	return GATE_EXIT_ERROR;
}

void gate_warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning", fmt, ap);
	va_end(ap);
}

int gate_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Run 'gate %s--help' for usage.\n", cmd);
	return GATE_EXIT_ERROR;
}
