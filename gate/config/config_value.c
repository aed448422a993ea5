/* gate/config/config_value.c: gate.toml's values converted and checked, one kind at a time
 * (strings, booleans, durations, sizes, percentages, counts, refs), each refusal a message
 * naming the place, the key and the fix (config_internal.h). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config/config.h"
#include "gate/config/config_internal.h"
#include "gate/config/units.h"

int config_type_fail(struct loader *ld, const struct toml_value *v, const char *path,
                     const char *expected, const char *fix)
{
	enum toml_type t = toml_type(v);
	return config_fail(ld, toml_pos(v), path, "expected %s, got %s %s; %s", expected,
	                   t == TOML_INTEGER || t == TOML_ARRAY ? "an" : "a", toml_type_name(t),
	                   fix);
}

int config_get_table(struct loader *ld, const struct toml_value *v, const char *path,
                     const char *fix)
{
	if (toml_type(v) != TOML_TABLE)
		return config_type_fail(ld, v, path, "a table", fix);
	return 0;
}

int config_get_string(struct loader *ld, const struct toml_value *v, const char *path,
                      bool nonempty, const char *example, char **dst)
{
	size_t len;
	const char *s = toml_string(v, &len);
	char *copy;

	if (!s)
		return config_type_fail(ld, v, path, "a string", example);
	if (strlen(s) != len)
		return config_fail(ld, toml_pos(v), path,
		                   "contains a NUL character (\\u0000); remove it");
	if (nonempty && len == 0)
		return config_fail(ld, toml_pos(v), path, "must not be empty; %s", example);
	copy = strdup(s);
	if (!copy)
		return config_fail(ld, toml_pos(v), path, "out of memory");
	free(*dst);
	*dst = copy;
	return 0;
}

int config_get_bool(struct loader *ld, const struct toml_value *v, const char *path, bool *dst)
{
	if (toml_type(v) != TOML_BOOLEAN)
		return config_type_fail(ld, v, path, "a boolean",
		                        "write true or false, without quotes");
	*dst = toml_boolean(v);
	return 0;
}

/* A TOML integer of n units of factor (seconds: 1000 ms), saturated. */
static int64_t times(int64_t n, int64_t factor)
{
	if (n > INT64_MAX / factor)
		return INT64_MAX;
	if (n < INT64_MIN / factor)
		return INT64_MIN;
	return n * factor;
}

/* The timeouts: an integer of seconds or a string in units.h's grammar. */
int config_get_duration(struct loader *ld, const struct toml_value *v, const char *path, int *dst)
{
	static const char fix[] = "write an integer number of seconds or a string such as "
	                          "\"90 s\" (units: ms, s, sec, m, min, h)";
	char why[1024], shown[48];
	int64_t ms;
	const char *s;

	if (toml_type(v) == TOML_INTEGER) {
		snprintf(shown, sizeof(shown), "%lld s", (long long)toml_integer(v));
		ms = times(toml_integer(v), UNITS_MS_PER_S);
		if (units_check_duration(ms, shown, UNITS_TIMEOUT_MIN_MS, UNITS_TIMEOUT_MAX_MS, why,
		                         sizeof(why)) < 0)
			return config_fail(ld, toml_pos(v), path, "%s", why);
	} else if ((s = toml_string(v, NULL))) {
		if (units_parse_duration(s, UNITS_TIMEOUT_MIN_MS, UNITS_TIMEOUT_MAX_MS, &ms, why,
		                         sizeof(why)) < 0)
			return config_fail(ld, toml_pos(v), path, "%s", why);
	} else {
		return config_type_fail(ld, v, path, "a duration", fix);
	}
	*dst = (int)ms;
	return 0;
}

/* An integer of bytes or a string in units.h's grammar. */
int config_get_size(struct loader *ld, const struct toml_value *v, const char *path, int64_t *dst)
{
	char why[1024], shown[48];
	const char *s;

	if (toml_type(v) == TOML_INTEGER) {
		snprintf(shown, sizeof(shown), "%lld bytes", (long long)toml_integer(v));
		if (units_check_size(toml_integer(v), shown, why, sizeof(why)) < 0)
			return config_fail(ld, toml_pos(v), path, "%s", why);
		*dst = toml_integer(v);
		return 0;
	}
	if (!(s = toml_string(v, NULL)))
		return config_type_fail(ld, v, path, "a size", UNITS_SIZE_FIX);
	if (units_parse_size(s, dst, why, sizeof(why)) < 0)
		return config_fail(ld, toml_pos(v), path, "%s", why);
	return 0;
}

/* A number of percent or a string in units.h's grammar ("10 %"). */
int config_get_percent(struct loader *ld, const struct toml_value *v, const char *path, double *dst)
{
	char why[1024];
	const char *s;
	double pct;

	if (toml_type(v) == TOML_INTEGER || toml_type(v) == TOML_FLOAT) {
		pct = toml_type(v) == TOML_INTEGER ? (double)toml_integer(v) : toml_float(v);
		if (units_check_percent(pct, why, sizeof(why)) < 0)
			return config_fail(ld, toml_pos(v), path, "%s", why);
		*dst = pct == 0 ? 0.0 : pct; /* -0.0 would print as "-0 %" */
		return 0;
	}
	if (!(s = toml_string(v, NULL)))
		return config_type_fail(ld, v, path, "a percentage", UNITS_PERCENT_FIX);
	if (units_parse_percent(s, dst, why, sizeof(why)) < 0)
		return config_fail(ld, toml_pos(v), path, "%s", why);
	return 0;
}

/* ---- limits that can be off, whole numbers, plain numbers, paths and refs ---- */

/* A limit written as "off" is not applied (RULES_OFF, or a negative percentage). */
static bool is_off(const struct toml_value *v)
{
	size_t len;
	const char *s = toml_string(v, &len);

	return s && len == 3 && strcmp(s, "off") == 0;
}

/* After a failed value of a limit that may be off: says so at the end of the message. */
static int off_hint(struct loader *ld)
{
	size_t n;

	if (ld->err && ld->errlen && (n = strlen(ld->err)) + 1 < ld->errlen)
		snprintf(ld->err + n, ld->errlen - n, "; or \"off\" for no limit");
	return -1;
}

static int get_count(struct loader *ld, const struct toml_value *v, const char *path, int64_t min,
                     int64_t max, const char *example, int64_t *dst)
{
	struct toml_pos pos = toml_pos(v);
	char fix[160];

	snprintf(fix, sizeof(fix), "write a whole number without quotes, e.g. %s", example);
	if (toml_type(v) != TOML_INTEGER)
		return config_type_fail(ld, v, path, "a whole number", fix);
	int64_t n = toml_integer(v);
	if (n < min)
		return config_fail(
		        ld, pos, path,
		        "%lld is out of range; use a whole number of at least %lld, e.g. %s",
		        (long long)n, (long long)min, example);
	if (n > max)
		return config_fail(
		        ld, pos, path,
		        "%lld is out of range; use a whole number of at most %lld, e.g. %s",
		        (long long)n, (long long)max, example);
	*dst = n;
	return 0;
}

/* A number of 0 or more; within [min, max] when the key declares a range (max > min). */
static int get_number(struct loader *ld, const struct toml_value *v, const char *path,
                      const char *example, int64_t min, int64_t max, double *dst)
{
	char fix[160];
	double x;

	snprintf(fix, sizeof(fix), "write a number without quotes, e.g. %s", example);
	if (toml_type(v) != TOML_INTEGER && toml_type(v) != TOML_FLOAT)
		return config_type_fail(ld, v, path, "a number", fix);
	x = toml_type(v) == TOML_INTEGER ? (double)toml_integer(v) : toml_float(v);
	if (!isfinite(x) || x < 0)
		return config_fail(ld, toml_pos(v), path,
		                   "%g is out of range; use a finite number of 0 or more, e.g. %s",
		                   x, example);
	if (max > min && (x < (double)min || x > (double)max))
		return config_fail(ld, toml_pos(v), path,
		                   "%g is out of range; use %lld to %lld, e.g. %s", x,
		                   (long long)min, (long long)max, example);
	*dst = x == 0 ? 0.0 : x; /* -0.0 would print as "-0.0" */
	return 0;
}

/* A percentage of a whole (fragmentation, usage of a limit): 0 to 100. */
static int get_share(struct loader *ld, const struct toml_value *v, const char *path,
                     const char *example, double *dst)
{
	double pct;

	if (config_get_percent(ld, v, path, &pct) < 0)
		return -1;
	if (pct > 100)
		return config_fail(
		        ld, toml_pos(v), path,
		        "%g %% is out of range; use a percentage from 0 to 100 %%, e.g. %s", pct,
		        example);
	*dst = pct;
	return 0;
}

/* Why git would refuse s as (part of) a ref name (git check-ref-format), or false. */
static bool ref_problem(const char *s, char *why, size_t len)
{
	size_t n = strlen(s);

	if (s[0] == '/' || s[n - 1] == '/')
		snprintf(why, len, "it starts or ends with /");
	else if (s[0] == '.' || strstr(s, "/."))
		snprintf(why, len, "a part of it starts with a dot");
	else if (s[n - 1] == '.' || (n >= 5 && strcmp(s + n - 5, ".lock") == 0))
		snprintf(why, len, "it ends with %s", s[n - 1] == '.' ? "a dot" : ".lock");
	else if (strstr(s, ".."))
		snprintf(why, len, "it contains \"..\"");
	else if (strstr(s, "//"))
		snprintf(why, len, "it contains \"//\"");
	else if (strstr(s, "@{"))
		snprintf(why, len, "it contains \"@{\"");
	else {
		for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
			if (*p < 0x20 || *p == 0x7f) {
				snprintf(why, len, "it contains a control character");
				return true;
			}
			if (strchr(" ~^:?*[\\", *p)) {
				snprintf(why, len, "it contains '%c'", *p);
				return true;
			}
		}
		return false;
	}
	return true;
}

enum str_kind { STR_GLOB, STR_PATH, STR_REF, STR_NOTES_REF };

static int get_checked_string(struct loader *ld, const struct toml_value *v, const char *path,
                              enum str_kind kind, const char *example, char **dst)
{
	struct toml_pos pos = toml_pos(v);
	char why[96];
	const char *s;

	if (config_get_string(ld, v, path, true, example, dst) < 0)
		return -1;
	s = *dst;
	switch (kind) {
	case STR_GLOB: break;
	case STR_PATH:
		if (s[0] == '/')
			return config_fail(
			        ld, pos, path,
			        "\"%s\" is absolute; write a path inside the repository, %s", s,
			        example);
		for (const char *p = s; (p = strstr(p, "..")); p += 2)
			if ((p == s || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
				return config_fail(
				        ld, pos, path,
				        "\"%s\" leaves the repository; write a path inside it, %s",
				        s, example);
		break;
	case STR_NOTES_REF:
		if (strncmp(s, "refs/", 5) != 0)
			return config_fail(ld, pos, path,
			                   "\"%s\" is not a full ref; write it under refs/, %s", s,
			                   example);
		/* fall through */
	case STR_REF:
		if (ref_problem(s, why, sizeof(why)))
			return config_fail(ld, pos, path, "\"%s\" is not a valid git ref: %s; %s",
			                   s, why, example);
		break;
	}
	return 0;
}

/* Reads v into the field spec describes, in the struct at base. */
int config_load_key(struct loader *ld, const struct key_spec *spec, const struct toml_value *v,
                    const char *path, void *base)
{
	void *field = (char *)base + spec->off;
	char example[160];
	int64_t n;

	snprintf(example, sizeof(example), "e.g. %s = %s", spec->key, spec->example);
	switch (spec->kind) {
	case KEY_SIZE: return config_get_size(ld, v, path, field);
	case KEY_SIZE_OFF:
		if (is_off(v)) {
			*(int64_t *)field = RULES_OFF;
			return 0;
		}
		return config_get_size(ld, v, path, field) < 0 ? off_hint(ld) : 0;
	case KEY_COUNT: return get_count(ld, v, path, spec->min, spec->max, spec->example, field);
	case KEY_COUNT_OFF:
		if (is_off(v)) {
			*(int64_t *)field = RULES_OFF;
			return 0;
		}
		return get_count(ld, v, path, spec->min, spec->max, spec->example, field) < 0
		               ? off_hint(ld)
		               : 0;
	case KEY_INT:
		if (get_count(ld, v, path, spec->min, spec->max, spec->example, &n) < 0)
			return -1;
		*(int *)field = (int)n;
		return 0;
	case KEY_PCT: return config_get_percent(ld, v, path, field);
	case KEY_PCT_OFF:
	case KEY_SHARE_OFF:
		if (is_off(v)) {
			*(double *)field = -1;
			return 0;
		}
		if (spec->kind == KEY_PCT_OFF)
			return config_get_percent(ld, v, path, field) < 0 ? off_hint(ld) : 0;
		return get_share(ld, v, path, spec->example, field) < 0 ? off_hint(ld) : 0;
	case KEY_NUMBER: return get_number(ld, v, path, spec->example, spec->min, spec->max, field);
	case KEY_BOOL: return config_get_bool(ld, v, path, field);
	case KEY_SEVERITY: {
		const char *sv = toml_string(v, NULL);
		if (sv && (strcmp(sv, "error") == 0 || strcmp(sv, "warn") == 0)) {
			*(bool *)field = strcmp(sv, "warn") == 0;
			return 0;
		}
		return config_fail(ld, toml_pos(v), path,
		                   "%s%s%s is not a severity; write \"error\" "
		                   "(fails the gate) or \"warn\" (reported, never failing)",
		                   sv ? "\"" : "", sv ? sv : "this value", sv ? "\"" : "");
	}
	case KEY_GLOB: return get_checked_string(ld, v, path, STR_GLOB, example, field);
	case KEY_PATH: return get_checked_string(ld, v, path, STR_PATH, example, field);
	case KEY_REF: return get_checked_string(ld, v, path, STR_REF, example, field);
	case KEY_NOTES_REF: return get_checked_string(ld, v, path, STR_NOTES_REF, example, field);
	case KEY_STRING: return config_get_string(ld, v, path, true, example, field);
	case KEY_FLAGS: return config_get_string(ld, v, path, false, example, field);
	case KEY_DURATION: return config_get_duration(ld, v, path, field);
	case KEY_DURATION_OFF:
		if (is_off(v)) { /* no wait at all */
			*(int *)field = 0;
			return 0;
		}
		return config_get_duration(ld, v, path, field);
	}
	return -1;
}
