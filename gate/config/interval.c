/* gate/config/interval.c: durations on the command line (see interval.h). */
#include "gate/config/interval.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int interval_parse(const char *s, int64_t min_ms, int64_t max_ms, int64_t *out_ms)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = {{"ms", 1},      {"s", 1000},    {"", 1000}, {"m", 60000},
	             {"min", 60000}, {"h", 3600000}, {NULL, 0}};
	char *end;
	if (!s || !*s || strchr("+-", *s))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 0 && v < 1e15))
		return -1;
	while (*end == ' ')
		end++;
	for (size_t i = 0; units[i].unit; i++) {
		if (strcmp(end, units[i].unit) != 0)
			continue;
		double ms = v * units[i].ms;
		if (ms < (double)min_ms || ms > (double)max_ms)
			return -1;
		*out_ms = (int64_t)(ms + 0.5);
		return 0;
	}
	return -1;
}
