/* gate/config/interval.c: durations for callers that word their own message (see interval.h). */
#include "gate/config/interval.h"

#include "gate/config/units.h"

int interval_parse(const char *s, int64_t min_ms, int64_t max_ms, int64_t *out_ms)
{
	if (!s)
		return -1;
	return units_parse_duration(s, min_ms, max_ms, out_ms, NULL, 0);
}
