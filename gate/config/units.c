/* gate/config/units.c: durations, sizes and percentages, one grammar for gate.toml and the
 * command line (see units.h). */
#include "gate/config/units.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"

struct unit {
	const char *name;
	int64_t factor;
};

/* milliseconds; a number alone is seconds */
static const struct unit duration_units[] = {
        {"ms", 1},
        {"s", UNITS_MS_PER_S},
        {"sec", UNITS_MS_PER_S},
        {"m", UNITS_MS_PER_MIN},
        {"min", UNITS_MS_PER_MIN},
        {"h", UNITS_MS_PER_H},
        {NULL, 0},
};

/* bytes; "KB" is read as kB (1000), people write both */
static const struct unit size_units[] = {
        {"B", 1},
        {"kB", 1000},
        {"KB", 1000},
        {"MB", 1000 * 1000},
        {"GB", 1000 * 1000 * 1000},
        {"KiB", (int64_t)1 << 10},
        {"MiB", (int64_t)1 << 20},
        {"GiB", (int64_t)1 << 30},
        {NULL, 0},
};

/* "12.5 MB" as the exact decimal mant * 10^-scale and the unit text after it. */
struct amount {
	uint64_t mant;
	int scale;       /* may be negative after an exponent: "1e3" is 1 * 10^3 */
	const char *num; /* the number's text, numlen bytes, as strtod reads it */
	size_t numlen;
	const char *unit; /* blanks after it trimmed into unitlen */
	size_t unitlen;
};

enum { AMOUNT_OK = 0, AMOUNT_NOT_NUMBER = -1, AMOUNT_NEGATIVE = -2, AMOUNT_TOO_LONG = -3 };

/* The grammar of numbers: strict (percentages) is digits with an optional fraction; otherwise
 * also a leading "+", ".5", "5." and an exponent, as the command line always took them. */
enum amount_form { AMOUNT_STRICT, AMOUNT_LOOSE };

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Adds the digits at *p to a (counting them into scale when frac); how many there were. */
static int amount_digits(const char **p, struct amount *a, bool frac)
{
	int n = 0;

	for (; is_digit(**p); (*p)++, n++) {
		if (a->mant > (UINT64_MAX - 9) / 10 || (frac && a->scale >= 18))
			return -1;
		a->mant = a->mant * 10 + (uint64_t)(**p - '0');
		if (frac)
			a->scale++;
	}
	return n;
}

/* An exponent "e-3" at *p, read into a->scale; nothing read when it is not one (a unit). */
static void amount_exponent(const char **p, struct amount *a)
{
	const char *q = *p + 1;
	int sign = 1, e = 0;

	if (**p != 'e' && **p != 'E')
		return;
	if (*q == '+' || *q == '-')
		sign = *q++ == '-' ? -1 : 1;
	if (!is_digit(*q))
		return;
	for (; is_digit(*q); q++)
		if (e < 1000) /* beyond any range: 1e999 is out of it, 1e-999 rounds to 0 */
			e = e * 10 + (*q - '0');
	a->scale -= sign * e;
	*p = q;
}

static int amount_parse(const char *s, enum amount_form form, struct amount *a)
{
	const char *p = s;
	int n, m = 0;

	memset(a, 0, sizeof(*a));
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '-')
		return AMOUNT_NEGATIVE;
	if (*p == '+' && form == AMOUNT_LOOSE)
		p++;
	a->num = p;
	if ((n = amount_digits(&p, a, false)) < 0)
		return AMOUNT_TOO_LONG;
	if (*p == '.' && (n > 0 || form == AMOUNT_LOOSE)) {
		p++;
		if ((m = amount_digits(&p, a, true)) < 0)
			return AMOUNT_TOO_LONG;
		if (m == 0 && form == AMOUNT_STRICT)
			return AMOUNT_NOT_NUMBER;
	}
	if (n + m == 0)
		return AMOUNT_NOT_NUMBER;
	if (form == AMOUNT_LOOSE)
		amount_exponent(&p, a);
	a->numlen = (size_t)(p - a->num);
	while (*p == ' ' || *p == '\t')
		p++;
	a->unit = p;
	a->unitlen = strlen(p);
	while (a->unitlen && (p[a->unitlen - 1] == ' ' || p[a->unitlen - 1] == '\t'))
		a->unitlen--;
	return AMOUNT_OK;
}

/* The number as strtod reads it (the exponent included). */
static double amount_double(const struct amount *a)
{
	char num[64];

	if (a->numlen >= sizeof(num))
		return HUGE_VAL;
	memcpy(num, a->num, a->numlen);
	num[a->numlen] = '\0';
	return strtod(num, NULL);
}

static const struct unit *unit_find(const struct unit *units, const char *s, size_t len)
{
	for (; units->name; units++)
		if (strlen(units->name) == len && memcmp(units->name, s, len) == 0)
			return units;
	return NULL;
}

/* mant * 10^-scale * factor when that is a whole number below limit: 0; -1 when it is not
 * whole, -2 when it is too large. */
static int amount_scale(const struct amount *a, int64_t factor, int64_t limit, int64_t *out)
{
	uint64_t mant = a->mant, pow10 = 1;
	int scale = a->scale;

	if (mant == 0) {
		*out = 0;
		return 0;
	}
	while (scale > 0 && mant % 10 == 0) {
		mant /= 10;
		scale--;
	}
	for (; scale < 0; scale++) {
		if (mant > (uint64_t)INT64_MAX / 10)
			return -2;
		mant *= 10;
	}
	if (scale > 18)
		return -1; /* mant has at most 19 digits: a fraction of a byte remains */
	for (int i = 0; i < scale; i++)
		pow10 *= 10;
	if (mant > (uint64_t)INT64_MAX / (uint64_t)factor)
		return -2;
	uint64_t v = mant * (uint64_t)factor;
	if (v % pow10 != 0)
		return -1;
	v /= pow10;
	if (v >= (uint64_t)limit)
		return -2;
	*out = (int64_t)v;
	return 0;
}

/* ---- durations ---- */

/* "90 s", "30 min", "24 h", "250 ms": the largest unit that keeps the figure whole. */
static void duration_text(char *buf, size_t n, int64_t ms)
{
	if (ms > 0 && ms % UNITS_MS_PER_H == 0)
		errtext_set(buf, n, NULL, "%lld h", (long long)(ms / UNITS_MS_PER_H));
	else if (ms > 0 && ms % UNITS_MS_PER_MIN == 0)
		errtext_set(buf, n, NULL, "%lld min", (long long)(ms / UNITS_MS_PER_MIN));
	else if (ms > 0 && ms % UNITS_MS_PER_S == 0)
		errtext_set(buf, n, NULL, "%lld s", (long long)(ms / UNITS_MS_PER_S));
	else
		errtext_set(buf, n, NULL, "%lld ms", (long long)ms);
}

/* "use a duration above 0 and at most 24 h, e.g. \"90 s\"" for [min_ms, max_ms]. */
static void duration_range(char *buf, size_t n, int64_t min_ms, int64_t max_ms)
{
	char lo[32], hi[32], eg[32];

	duration_text(lo, sizeof(lo), min_ms);
	duration_text(hi, sizeof(hi), max_ms);
	duration_text(eg, sizeof(eg),
	              90 * UNITS_MS_PER_S >= min_ms && 90 * UNITS_MS_PER_S <= max_ms
	                      ? 90 * UNITS_MS_PER_S
	                      : min_ms);
	if (min_ms <= 1)
		errtext_set(buf, n, NULL, "use a duration above 0 and at most %s, e.g. \"%s\"", hi,
		            eg);
	else
		errtext_set(buf, n, NULL, "use a duration from %s to %s, e.g. \"%s\"", lo, hi, eg);
}

int units_check_duration(int64_t ms, const char *shown, int64_t min_ms, int64_t max_ms, char *err,
                         size_t errlen)
{
	char range[128];

	if (ms >= min_ms && ms <= max_ms)
		return 0;
	duration_range(range, sizeof(range), min_ms, max_ms);
	errtext_set(err, errlen, NULL, "%s is out of range; %s", shown, range);
	return -1;
}

int units_parse_duration(const char *s, int64_t min_ms, int64_t max_ms, int64_t *out_ms, char *err,
                         size_t errlen)
{
	char range[128], shown[96];
	struct amount a;
	const struct unit *u;

	duration_range(range, sizeof(range), min_ms, max_ms);
	switch (amount_parse(s, AMOUNT_LOOSE, &a)) {
	case AMOUNT_NEGATIVE:
		errtext_set(err, errlen, NULL, "\"%s\" is negative; %s", s, range);
		return -1;
	case AMOUNT_NOT_NUMBER:
		errtext_set(err, errlen, NULL, "\"%s\" is not a duration; %s", s,
		            UNITS_DURATION_FIX);
		return -1;
	case AMOUNT_TOO_LONG:
		errtext_set(err, errlen, NULL, "\"%s\" has too many digits; %s", s, range);
		return -1;
	}
	if (a.unitlen == 0) {
		u = unit_find(duration_units, "s", 1); /* a number alone is seconds */
	} else if (!(u = unit_find(duration_units, a.unit, a.unitlen))) {
		errtext_set(err, errlen, NULL,
		            "unknown unit \"%.*s\" in \"%s\"; use ms, s, sec, m, min or h",
		            (int)a.unitlen, a.unit, s);
		return -1;
	}
	/* rounded to the millisecond, as the command line always did */
	double ms = amount_double(&a) * (double)u->factor;
	snprintf(shown, sizeof(shown), "\"%s\"", s);
	if (!(ms < (double)INT64_MAX / 2))
		return units_check_duration(INT64_MAX, shown, min_ms, max_ms, err, errlen);
	int64_t rounded = (int64_t)(ms + 0.5); /* ms >= 0 */
	if (units_check_duration(rounded, shown, min_ms, max_ms, err, errlen) < 0)
		return -1;
	*out_ms = rounded;
	return 0;
}

/* ---- sizes ---- */

#define SIZE_RANGE "use a size of at least 0 B and below 2^62 bytes, e.g. \"1 MB\""

int units_check_size(int64_t bytes, const char *shown, char *err, size_t errlen)
{
	if (bytes >= 0 && bytes < UNITS_SIZE_LIMIT)
		return 0;
	errtext_set(err, errlen, NULL, "%s is out of range; " SIZE_RANGE, shown);
	return -1;
}

int units_parse_size(const char *s, int64_t *out_bytes, char *err, size_t errlen)
{
	struct amount a;
	const struct unit *u;

	switch (amount_parse(s, AMOUNT_LOOSE, &a)) {
	case AMOUNT_NEGATIVE:
		errtext_set(err, errlen, NULL, "\"%s\" is negative; " SIZE_RANGE, s);
		return -1;
	case AMOUNT_NOT_NUMBER:
		errtext_set(err, errlen, NULL, "\"%s\" is not a size; " UNITS_SIZE_FIX, s);
		return -1;
	case AMOUNT_TOO_LONG:
		errtext_set(err, errlen, NULL, "\"%s\" has too many digits; " SIZE_RANGE, s);
		return -1;
	}
	if (a.unitlen == 0) {
		errtext_set(err, errlen, NULL,
		            "\"%s\" has no unit; add one of B, kB, MB, GB, KiB, MiB, GiB, e.g. "
		            "\"%s MB\" (an integer without quotes means bytes)",
		            s, s);
		return -1;
	}
	if (!(u = unit_find(size_units, a.unit, a.unitlen))) {
		errtext_set(err, errlen, NULL,
		            "unknown unit \"%.*s\" in \"%s\"; use B, kB, MB, GB (1000^n) or KiB, "
		            "MiB, GiB (1024^n)",
		            (int)a.unitlen, a.unit, s);
		return -1;
	}
	switch (amount_scale(&a, u->factor, UNITS_SIZE_LIMIT, out_bytes)) {
	case -1:
		errtext_set(err, errlen, NULL, "\"%s\" is not a whole number of bytes; round it",
		            s);
		return -1;
	case -2:
		errtext_set(err, errlen, NULL, "\"%s\" is out of range; " SIZE_RANGE, s);
		return -1;
	}
	return 0;
}

/* ---- percentages ---- */

#define PCT_RANGE "use a finite percentage of 0 or more, e.g. \"10 %\""

int units_check_percent(double pct, char *err, size_t errlen)
{
	if (isfinite(pct) && pct >= 0)
		return 0;
	errtext_set(err, errlen, NULL, "%g %% is out of range; %s", pct, PCT_RANGE);
	return -1;
}

int units_parse_percent(const char *s, double *out_pct, char *err, size_t errlen)
{
	struct amount a;

	switch (amount_parse(s, AMOUNT_STRICT, &a)) {
	case AMOUNT_NEGATIVE:
		errtext_set(err, errlen, NULL, "\"%s\" is negative; %s", s, PCT_RANGE);
		return -1;
	case AMOUNT_NOT_NUMBER:
		errtext_set(err, errlen, NULL, "\"%s\" is not a percentage; %s", s,
		            UNITS_PERCENT_FIX);
		return -1;
	case AMOUNT_TOO_LONG:
		errtext_set(err, errlen, NULL, "\"%s\" has too many digits; %s", s,
		            UNITS_PERCENT_FIX);
		return -1;
	}
	if (a.unitlen == 0) {
		errtext_set(err, errlen, NULL, "\"%s\" has no %% sign; write \"%s %%\"", s, s);
		return -1;
	}
	if (a.unitlen != 1 || a.unit[0] != '%') {
		errtext_set(err, errlen, NULL,
		            "unknown unit \"%.*s\" in \"%s\"; percentages end in %%",
		            (int)a.unitlen, a.unit, s);
		return -1;
	}
	if (a.numlen >= 64) {
		errtext_set(err, errlen, NULL, "\"%s\" has too many digits; %s", s,
		            UNITS_PERCENT_FIX);
		return -1;
	}
	/* strtod, as for TOML floats, so that what config_print writes reads back the same */
	*out_pct = amount_double(&a);
	return 0;
}
