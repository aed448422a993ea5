/* model/figures.c: counts and byte sizes for people */
#include "model/figures.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void model_count_format(char *buf, size_t len, int64_t n)
{
	char digits[32];
	/* the magnitude as unsigned so INT64_MIN cannot overflow */
	uint64_t mag = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
	int nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)mag);
	char out[48];
	size_t o = 0;

	if (n < 0)
		out[o++] = '-';
	for (int i = 0; i < nd; i++) {
		if (i > 0 && (nd - i) % 3 == 0)
			out[o++] = ' ';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	snprintf(buf, len, "%s", out);
}

void model_bytes_format(char *buf, size_t len, int64_t bytes)
{
	const char *sign = bytes < 0 ? "-" : "";
	/* the magnitude as unsigned so INT64_MIN cannot overflow */
	uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
	if (mag < 1000)
		snprintf(buf, len, "%s%llu B", sign, (unsigned long long)mag);
	else if (mag < 1000000)
		snprintf(buf, len, "%s%.1f kB", sign, (double)mag / 1e3);
	else if (mag < 1000000000)
		snprintf(buf, len, "%s%.1f MB", sign, (double)mag / 1e6);
	else
		snprintf(buf, len, "%s%.2f GB", sign, (double)mag / 1e9);
}
