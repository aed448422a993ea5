/* gate/config/config.c: gate.toml read over the defaults, checked key by key, and printed back.
 *
 * config_default treats cfg as raw memory. config_load and config_load_text need cfg to hold
 * a config (from config_default, an earlier load, or all zero) and replace it, freeing what
 * it held; the file is always read over the defaults, not over what cfg held.
 */
#include "gate/config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ci/errtext.h"
#include "ci/readfile.h"
#include "gate/config/toml.h"
#include "gate/config/units.h"

static const char *const root_keys[] = {"node",     "output",      "growth",    "ets",
                                        "binary",   "process",     "atom",      "allocator",
                                        "baseline", "attribution", "ports",     "persistent_term",
                                        "run",      "severity",    "attention", NULL};
static const char *const node_keys[] = {"mix_env",     "erl_flags",    "boot_timeout",
                                        "rpc_timeout", "test_timeout", "stop_timeout",
                                        NULL};
static const char *const output_keys[] = {"junit", NULL};
static const char *const growth_own_keys[] = {"max", "floor", "live_totals", NULL};
static const char *const category_keys[] = {"enabled", "max", "floor", NULL};

/* Where messages go: "name:line:col: key: what; fix". */
struct loader {
	const char *name;
	char *err;
	size_t errlen;
};

/* ---- allocation ---- */

/* The one allocation path of this file. */
static char *config_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5))) static int fail(struct loader *ld, struct toml_pos pos,
                                                      const char *key, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!ld->err || !ld->errlen)
		return -1;
	n = snprintf(ld->err, ld->errlen, "%s:%d:%d: %s: ", ld->name, pos.line, pos.col, key);
	if (n >= 0 && (size_t)n < ld->errlen) {
		va_start(ap, fmt);
		vsnprintf(ld->err + n, ld->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* ---- defaults and clearing ---- */

int config_default(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->boot_timeout_ms = 120 * UNITS_MS_PER_S;
	cfg->rpc_timeout_ms = 60 * UNITS_MS_PER_S;
	cfg->test_timeout_ms = 30 * UNITS_MS_PER_MIN;
	cfg->stop_timeout_ms = 10 * UNITS_MS_PER_S;
	rules_config_default(&cfg->rules);
	cfg->annotations = 8; /* issue 19: well under GitHub's 10 per step */
	cfg->repeat = 1;      /* [run] repeat: the suite once */
	cfg->mix_env = config_strdup("test");
	cfg->erl_flags = config_strdup("");
	cfg->junit = config_strdup("_build/gate/junit.xml");
	cfg->source = config_strdup("defaults");
	if (!cfg->mix_env || !cfg->erl_flags || !cfg->junit || !cfg->source) {
		config_clear(cfg);
		return -1;
	}
	return 0;
}

void config_clear(struct config *cfg)
{
	if (!cfg)
		return;
	free(cfg->mix_env);
	free(cfg->erl_flags);
	free(cfg->junit);
	free(cfg->source);
	rules_config_clear(&cfg->rules);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- key names and suggestions ---- */

static bool is_bare_key(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}

/* prefix.key, quoting key as TOML does when it is not bare. */
static void key_path(char *out, size_t n, const char *prefix, const char *key)
{
	size_t o = 0;

	if (!n)
		return;
	out[0] = '\0';
	if (*prefix)
		o = (size_t)snprintf(out, n, "%s.", prefix);
	if (o >= n)
		return;
	if (is_bare_key(key)) {
		snprintf(out + o, n - o, "%s", key);
		return;
	}
	if (o + 1 < n)
		out[o++] = '"';
	for (const unsigned char *s = (const unsigned char *)key; *s && o + 8 < n; s++) {
		if (*s == '"' || *s == '\\') {
			out[o++] = '\\';
			out[o++] = (char)*s;
		} else if (*s < 0x20 || *s == 0x7f) {
			o += (size_t)snprintf(out + o, n - o, "\\u%04X", *s);
		} else {
			out[o++] = (char)*s;
		}
	}
	if (o + 1 < n)
		out[o++] = '"';
	out[o] = '\0';
}

/* Edit distance, or a large number for long strings (keys here are short). */
static size_t levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33];

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The valid key closest to key when it is close enough to be a typo, else NULL. */
static const char *suggest(const char *key, const char *const *valid)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (; *valid; valid++) {
		size_t d = levenshtein(key, *valid);
		if (d < best_d) {
			best_d = d;
			best = *valid;
		}
	}
	/* a one-letter key is two edits from half the list: no guess for those */
	if (best_d <= 2 && best_d * 2 <= strlen(key) + 1)
		return best;
	return NULL;
}

static void join_keys(char *out, size_t n, const char *const *keys)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; keys[i] && o < n; i++)
		o += (size_t)snprintf(out + o, n - o, "%s%s", i ? ", " : "", keys[i]);
}

static int unknown_key(struct loader *ld, struct toml_pos pos, const char *path, const char *key,
                       const char *const *valid, const char *table)
{
	const char *s = suggest(key, valid);
	char list[256];

	if (s)
		return fail(ld, pos, path, "unknown key; did you mean \"%s\"?", s);
	join_keys(list, sizeof(list), valid);
	return fail(ld, pos, path, "unknown key; %s takes %s", table, list);
}

/* ---- typed values ---- */

static int type_fail(struct loader *ld, const struct toml_value *v, const char *path,
                     const char *expected, const char *fix)
{
	enum toml_type t = toml_type(v);
	return fail(ld, toml_pos(v), path, "expected %s, got %s %s; %s", expected,
	            t == TOML_INTEGER || t == TOML_ARRAY ? "an" : "a", toml_type_name(t), fix);
}

static int get_table(struct loader *ld, const struct toml_value *v, const char *path,
                     const char *fix)
{
	if (toml_type(v) != TOML_TABLE)
		return type_fail(ld, v, path, "a table", fix);
	return 0;
}

static int get_string(struct loader *ld, const struct toml_value *v, const char *path,
                      bool nonempty, const char *example, char **dst)
{
	size_t len;
	const char *s = toml_string(v, &len);
	char *copy;

	if (!s)
		return type_fail(ld, v, path, "a string", example);
	if (strlen(s) != len)
		return fail(ld, toml_pos(v), path, "contains a NUL character (\\u0000); remove it");
	if (nonempty && len == 0)
		return fail(ld, toml_pos(v), path, "must not be empty; %s", example);
	copy = config_strdup(s);
	if (!copy)
		return fail(ld, toml_pos(v), path, "out of memory");
	free(*dst);
	*dst = copy;
	return 0;
}

static int get_bool(struct loader *ld, const struct toml_value *v, const char *path, bool *dst)
{
	if (toml_type(v) != TOML_BOOLEAN)
		return type_fail(ld, v, path, "a boolean", "write true or false, without quotes");
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
static int get_duration(struct loader *ld, const struct toml_value *v, const char *path, int *dst)
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
			return fail(ld, toml_pos(v), path, "%s", why);
	} else if ((s = toml_string(v, NULL))) {
		if (units_parse_duration(s, UNITS_TIMEOUT_MIN_MS, UNITS_TIMEOUT_MAX_MS, &ms, why,
		                         sizeof(why)) < 0)
			return fail(ld, toml_pos(v), path, "%s", why);
	} else {
		return type_fail(ld, v, path, "a duration", fix);
	}
	*dst = (int)ms;
	return 0;
}

/* An integer of bytes or a string in units.h's grammar. */
static int get_size(struct loader *ld, const struct toml_value *v, const char *path, int64_t *dst)
{
	char why[1024], shown[48];
	const char *s;

	if (toml_type(v) == TOML_INTEGER) {
		snprintf(shown, sizeof(shown), "%lld bytes", (long long)toml_integer(v));
		if (units_check_size(toml_integer(v), shown, why, sizeof(why)) < 0)
			return fail(ld, toml_pos(v), path, "%s", why);
		*dst = toml_integer(v);
		return 0;
	}
	if (!(s = toml_string(v, NULL)))
		return type_fail(ld, v, path, "a size", UNITS_SIZE_FIX);
	if (units_parse_size(s, dst, why, sizeof(why)) < 0)
		return fail(ld, toml_pos(v), path, "%s", why);
	return 0;
}

/* A number of percent or a string in units.h's grammar ("10 %"). */
static int get_percent(struct loader *ld, const struct toml_value *v, const char *path, double *dst)
{
	char why[1024];
	const char *s;
	double pct;

	if (toml_type(v) == TOML_INTEGER || toml_type(v) == TOML_FLOAT) {
		pct = toml_type(v) == TOML_INTEGER ? (double)toml_integer(v) : toml_float(v);
		if (units_check_percent(pct, why, sizeof(why)) < 0)
			return fail(ld, toml_pos(v), path, "%s", why);
		*dst = pct == 0 ? 0.0 : pct; /* -0.0 would print as "-0 %" */
		return 0;
	}
	if (!(s = toml_string(v, NULL)))
		return type_fail(ld, v, path, "a percentage", UNITS_PERCENT_FIX);
	if (units_parse_percent(s, dst, why, sizeof(why)) < 0)
		return fail(ld, toml_pos(v), path, "%s", why);
	return 0;
}

/* ---- limits that can be off, whole numbers, plain numbers, paths and refs ---- */

/* The largest count gate.toml takes, as for sizes. */
#define COUNT_MAX (UNITS_SIZE_LIMIT - 1)

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
		return type_fail(ld, v, path, "a whole number", fix);
	int64_t n = toml_integer(v);
	if (n < min)
		return fail(ld, pos, path,
		            "%lld is out of range; use a whole number of at least %lld, e.g. %s",
		            (long long)n, (long long)min, example);
	if (n > max)
		return fail(ld, pos, path,
		            "%lld is out of range; use a whole number of at most %lld, e.g. %s",
		            (long long)n, (long long)max, example);
	*dst = n;
	return 0;
}

static int get_number(struct loader *ld, const struct toml_value *v, const char *path,
                      const char *example, double *dst)
{
	char fix[160];
	double x;

	snprintf(fix, sizeof(fix), "write a number without quotes, e.g. %s", example);
	if (toml_type(v) != TOML_INTEGER && toml_type(v) != TOML_FLOAT)
		return type_fail(ld, v, path, "a number", fix);
	x = toml_type(v) == TOML_INTEGER ? (double)toml_integer(v) : toml_float(v);
	if (!isfinite(x) || x < 0)
		return fail(ld, toml_pos(v), path,
		            "%g is out of range; use a finite number of 0 or more, e.g. %s", x,
		            example);
	*dst = x == 0 ? 0.0 : x; /* -0.0 would print as "-0.0" */
	return 0;
}

/* A percentage of a whole (fragmentation, usage of a limit): 0 to 100. */
static int get_share(struct loader *ld, const struct toml_value *v, const char *path,
                     const char *example, double *dst)
{
	double pct;

	if (get_percent(ld, v, path, &pct) < 0)
		return -1;
	if (pct > 100)
		return fail(ld, toml_pos(v), path,
		            "%g %% is out of range; use a percentage from 0 to 100 %%, e.g. %s",
		            pct, example);
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

	if (get_string(ld, v, path, true, example, dst) < 0)
		return -1;
	s = *dst;
	switch (kind) {
	case STR_GLOB: break;
	case STR_PATH:
		if (s[0] == '/')
			return fail(ld, pos, path,
			            "\"%s\" is absolute; write a path inside the repository, %s", s,
			            example);
		for (const char *p = s; (p = strstr(p, "..")); p += 2)
			if ((p == s || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
				return fail(
				        ld, pos, path,
				        "\"%s\" leaves the repository; write a path inside it, %s",
				        s, example);
		break;
	case STR_NOTES_REF:
		if (strncmp(s, "refs/", 5) != 0)
			return fail(ld, pos, path,
			            "\"%s\" is not a full ref; write it under refs/, %s", s,
			            example);
		/* fall through */
	case STR_REF:
		if (ref_problem(s, why, sizeof(why)))
			return fail(ld, pos, path, "\"%s\" is not a valid git ref: %s; %s", s, why,
			            example);
		break;
	}
	return 0;
}

/* ---- tables ---- */

static int load_node(struct loader *ld, const struct toml_value *t, struct config *cfg)
{
	for (size_t i = 0; i < toml_table_len(t); i++) {
		const char *key = toml_table_key(t, i);
		const struct toml_value *v = toml_table_value(t, i);
		char path[256];
		int rc;

		key_path(path, sizeof(path), "node", key);
		if (strcmp(key, "mix_env") == 0)
			rc = get_string(ld, v, path, true, "e.g. mix_env = \"test\"",
			                &cfg->mix_env);
		else if (strcmp(key, "erl_flags") == 0)
			rc = get_string(ld, v, path, false, "e.g. erl_flags = \"+S 4\"",
			                &cfg->erl_flags);
		else if (strcmp(key, "boot_timeout") == 0)
			rc = get_duration(ld, v, path, &cfg->boot_timeout_ms);
		else if (strcmp(key, "rpc_timeout") == 0)
			rc = get_duration(ld, v, path, &cfg->rpc_timeout_ms);
		else if (strcmp(key, "test_timeout") == 0)
			rc = get_duration(ld, v, path, &cfg->test_timeout_ms);
		else if (strcmp(key, "stop_timeout") == 0)
			rc = get_duration(ld, v, path, &cfg->stop_timeout_ms);
		else
			rc = unknown_key(ld, toml_table_key_pos(t, i), path, key, node_keys,
			                 "[node]");
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int load_output(struct loader *ld, const struct toml_value *t, struct config *cfg)
{
	for (size_t i = 0; i < toml_table_len(t); i++) {
		const char *key = toml_table_key(t, i);
		const struct toml_value *v = toml_table_value(t, i);
		char path[256];
		int rc;

		key_path(path, sizeof(path), "output", key);
		if (strcmp(key, "junit") == 0)
			rc = get_string(ld, v, path, true, "e.g. junit = \"_build/gate/junit.xml\"",
			                &cfg->junit);
		else
			rc = unknown_key(ld, toml_table_key_pos(t, i), path, key, output_keys,
			                 "[output]");
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* A table under [growth] is taken for a misspelt category, anything else for a key. */
static int unknown_growth_key(struct loader *ld, struct toml_pos pos, const char *path,
                              const char *key, bool is_table)
{
	const char *names[3 + MEM_CAT_COUNT + 1];
	const char *const *cats = names + 3;
	char list[256];
	const char *s;
	size_t n = 0;

	for (size_t i = 0; growth_own_keys[i]; i++)
		names[n++] = growth_own_keys[i];
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		names[n++] = mem_cat_name((enum mem_cat)c);
	names[n] = NULL;
	if (!is_table)
		return unknown_key(ld, pos, path, key, names, "[growth]");
	join_keys(list, sizeof(list), cats);
	if ((s = suggest(key, cats)))
		return fail(ld, pos, path, "unknown category; did you mean \"%s\"?", s);
	return fail(ld, pos, path, "unknown category; use one of %s", list);
}

/* What a [growth.<category>] table sets; unset fields take [growth]'s or the default. */
struct cat_set {
	bool max, floor;
};

static int load_category(struct loader *ld, const struct toml_value *t, const char *prefix,
                         struct growth_limit *lim, struct cat_set *set)
{
	for (size_t i = 0; i < toml_table_len(t); i++) {
		const char *key = toml_table_key(t, i);
		const struct toml_value *v = toml_table_value(t, i);
		char path[256];
		int rc;

		key_path(path, sizeof(path), prefix, key);
		if (strcmp(key, "enabled") == 0) {
			rc = get_bool(ld, v, path, &lim->enabled);
		} else if (strcmp(key, "max") == 0) {
			rc = get_percent(ld, v, path, &lim->max_pct);
			set->max = true;
		} else if (strcmp(key, "floor") == 0) {
			rc = get_size(ld, v, path, &lim->floor_bytes);
			set->floor = true;
		} else {
			char table[320];
			snprintf(table, sizeof(table), "[%s]", prefix);
			rc = unknown_key(ld, toml_table_key_pos(t, i), path, key, category_keys,
			                 table);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int load_growth(struct loader *ld, const struct toml_value *t, struct growth_config *g)
{
	struct cat_set set[MEM_CAT_COUNT] = {{false, false}};
	bool have_max = false, have_floor = false;
	double max_pct = 0;
	int64_t floor_bytes = 0;

	for (size_t i = 0; i < toml_table_len(t); i++) {
		const char *key = toml_table_key(t, i);
		const struct toml_value *v = toml_table_value(t, i);
		char path[256];
		int cat, rc;

		key_path(path, sizeof(path), "growth", key);
		if (strcmp(key, "max") == 0) {
			rc = get_percent(ld, v, path, &max_pct);
			have_max = true;
		} else if (strcmp(key, "floor") == 0) {
			rc = get_size(ld, v, path, &floor_bytes);
			have_floor = true;
		} else if (strcmp(key, "live_totals") == 0) {
			rc = get_bool(ld, v, path, &g->live_totals);
		} else if ((cat = mem_cat_from_name(key)) >= 0) {
			char fix[320];
			snprintf(fix, sizeof(fix),
			         "write [%s] with enabled, max and floor below it", path);
			rc = get_table(ld, v, path, fix);
			if (rc == 0)
				rc = load_category(ld, v, path, &g->cat[cat], &set[cat]);
		} else {
			rc = unknown_growth_key(ld, toml_table_key_pos(t, i), path, key,
			                        toml_type(v) == TOML_TABLE);
		}
		if (rc < 0)
			return -1;
	}
	/* [growth] max and floor stand in for every category that does not set its own,
	 * wherever they are written in the file */
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		if (have_max && !set[c].max)
			g->cat[c].max_pct = max_pct;
		if (have_floor && !set[c].floor)
			g->cat[c].floor_bytes = floor_bytes;
	}
	return 0;
}

/* ---- the rule tables, key by key: one list drives loading, messages and printing ---- */

enum key_kind {
	KEY_SIZE,      /* int64_t bytes */
	KEY_SIZE_OFF,  /* int64_t bytes, or RULES_OFF */
	KEY_COUNT,     /* int64_t from min to max */
	KEY_COUNT_OFF, /* the same, or RULES_OFF */
	KEY_INT,       /* int from min to max */
	KEY_PCT,       /* double percent, 0 or more */
	KEY_PCT_OFF,   /* the same, or -1 */
	KEY_SHARE_OFF, /* double percent of a whole, 0 to 100, or -1 */
	KEY_NUMBER,    /* double, 0 or more */
	KEY_BOOL,      /* bool */
	KEY_GLOB,      /* char *, not empty */
	KEY_PATH,      /* char *, relative, inside the repository */
	KEY_REF,       /* char *, a git ref or shorthand */
	KEY_NOTES_REF, /* char *, a full git ref */
	KEY_SEVERITY,  /* bool warn: "error" (false) or "warn" (true) (issue 19) */
};

struct key_spec {
	const char *key;
	enum key_kind kind;
	size_t off;          /* of the field in the struct the section fills */
	int64_t min, max;    /* KEY_COUNT, KEY_COUNT_OFF, KEY_INT */
	const char *example; /* a value as written in gate.toml, for messages */
	const char *null_is; /* strings: what a NULL field means (printed for it) */
};

#define IN_CFG(field) offsetof(struct config, rules.field)
#define IN_TABLE(field) offsetof(struct ets_table_limit, field)

static const struct key_spec ets_keys[] = {
        {"max_total", KEY_SIZE_OFF, IN_CFG(ets.max_total), 0, 0, "\"64 MB\"", NULL},
        {"max_left_alive", KEY_COUNT_OFF, IN_CFG(ets.max_left_alive), 0, COUNT_MAX, "0", NULL},
        {"left_alive_floor", KEY_SIZE, IN_CFG(ets.left_alive_floor), 0, 0, "\"1 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec ets_table_keys[] = {
        {"name", KEY_GLOB, IN_TABLE(name), 0, 0, "\"corpus_*\"", NULL},
        {"max_bytes", KEY_SIZE_OFF, IN_TABLE(max_bytes), 0, 0, "\"2 MB\"", NULL},
        {"max_size", KEY_COUNT_OFF, IN_TABLE(max_size), 0, COUNT_MAX, "100000", NULL},
        {"max_growth", KEY_PCT_OFF, IN_TABLE(max_growth_pct), 0, 0, "\"50 %\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec binary_keys[] = {
        {"max_refs_per_process", KEY_COUNT_OFF, IN_CFG(binary.max_refs_per_process), 0, COUNT_MAX,
         "50000", NULL},
        {"max_bytes_per_process", KEY_SIZE_OFF, IN_CFG(binary.max_bytes_per_process), 0, 0,
         "\"10 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec process_keys[] = {
        {"max_born", KEY_COUNT_OFF, IN_CFG(process.max_born), 0, COUNT_MAX, "100", NULL},
        {"max_mailbox", KEY_COUNT_OFF, IN_CFG(process.max_mailbox), 0, COUNT_MAX, "10000", NULL},
        {"max_memory", KEY_SIZE_OFF, IN_CFG(process.max_memory), 0, 0, "\"100 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec atom_keys[] = {
        {"max_growth", KEY_COUNT_OFF, IN_CFG(atom.max_growth), 0, COUNT_MAX, "10000", NULL},
        {"per_test", KEY_COUNT, IN_CFG(atom.per_test), 0, COUNT_MAX, "5", NULL},
        {"max_usage", KEY_SHARE_OFF, IN_CFG(atom.max_usage_pct), 0, 0, "\"80 %\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec allocator_keys[] = {
        {"max_fragmentation", KEY_SHARE_OFF, IN_CFG(allocator.max_fragmentation_pct), 0, 0,
         "\"75 %\"", NULL},
        {"waste_floor", KEY_SIZE, IN_CFG(allocator.waste_floor), 0, 0, "\"64 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec baseline_keys[] = {
        {"path", KEY_PATH, IN_CFG(baseline.path), 0, 0, "\".gate/baseline.json\"",
         BASELINE_DEFAULT_PATH},
        {"ref", KEY_REF, IN_CFG(baseline.ref), 0, 0, "\"origin/main\"", BASELINE_DEFAULT_REF},
        {"notes_ref", KEY_NOTES_REF, IN_CFG(baseline.notes_ref), 0, 0, "\"refs/notes/gate\"",
         BASELINE_DEFAULT_NOTES_REF},
        {"require", KEY_BOOL, IN_CFG(baseline.require), 0, 0, "false", NULL},
        {"skip_ci", KEY_BOOL, IN_CFG(baseline.skip_ci), 0, 0, "false", NULL},
        {"max", KEY_PCT, IN_CFG(baseline.max_pct), 0, 0, "\"20 %\"", NULL},
        {"floor", KEY_SIZE, IN_CFG(baseline.floor_bytes), 0, 0, "\"1 MB\"", NULL},
        {"trend_window", KEY_INT, IN_CFG(baseline.trend_window), 2, 10000, "10", NULL},
        {"trend_sigma", KEY_NUMBER, IN_CFG(baseline.trend_sigma), 0, 0, "3.0", NULL},
        {"trend_min", KEY_PCT, IN_CFG(baseline.trend_min_pct), 0, 0, "\"10 %\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec attribution_keys[] = {
        {"per_test", KEY_BOOL, IN_CFG(attribution.per_test), 0, 0, "false", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec ports_keys[] = {
        {"max_opened", KEY_COUNT_OFF, IN_CFG(ports.max_opened), 0, COUNT_MAX, "50", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec pterm_keys[] = {
        {"max_entries", KEY_COUNT_OFF, IN_CFG(pterm.max_entries), 0, COUNT_MAX, "1000", NULL},
        {"max_bytes", KEY_SIZE_OFF, IN_CFG(pterm.max_bytes), 0, 0, "\"1 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
/* [run] (issue 14): how gate run runs the suite; --repeat overrides repeat */
static const struct key_spec run_keys[] = {
        {"repeat", KEY_INT, offsetof(struct config, repeat), 1, REPEAT_MAX, "3", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};

/* issue 19: [severity] RULE = "error" | "warn"; [attention] the reviewer's budget */
#define IN_SEV(r) offsetof(struct config, rules.severity.warn[r])
static const struct key_spec severity_keys[] = {
        {"growth", KEY_SEVERITY, IN_SEV(SEVERITY_GROWTH), 0, 0, "\"warn\"", NULL},
        {"ets", KEY_SEVERITY, IN_SEV(SEVERITY_ETS), 0, 0, "\"warn\"", NULL},
        {"binary", KEY_SEVERITY, IN_SEV(SEVERITY_BINARY), 0, 0, "\"warn\"", NULL},
        {"process", KEY_SEVERITY, IN_SEV(SEVERITY_PROCESS), 0, 0, "\"warn\"", NULL},
        {"atom", KEY_SEVERITY, IN_SEV(SEVERITY_ATOM), 0, 0, "\"warn\"", NULL},
        {"allocator", KEY_SEVERITY, IN_SEV(SEVERITY_ALLOCATOR), 0, 0, "\"warn\"", NULL},
        {"ports", KEY_SEVERITY, IN_SEV(SEVERITY_PORTS), 0, 0, "\"warn\"", NULL},
        {"persistent_term", KEY_SEVERITY, IN_SEV(SEVERITY_PTERM), 0, 0, "\"warn\"", NULL},
        {"baseline", KEY_SEVERITY, IN_SEV(SEVERITY_BASELINE), 0, 0, "\"warn\"", NULL},
        {"trend", KEY_SEVERITY, IN_SEV(SEVERITY_TREND), 0, 0, "\"warn\"", NULL},
        {"tag", KEY_SEVERITY, IN_SEV(SEVERITY_TAG), 0, 0, "\"warn\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec attention_keys[] = {
        {"annotations", KEY_INT, offsetof(struct config, annotations), 1, 50, "8", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};

struct section {
	const char *name;
	const struct key_spec *keys;
	const char *extra; /* a key the section's own code reads (ets: the [[ets.table]] array) */
};

static const struct section sections[] = {
        {"ets", ets_keys, "table"},
        {"binary", binary_keys, NULL},
        {"process", process_keys, NULL},
        {"atom", atom_keys, NULL},
        {"allocator", allocator_keys, NULL},
        {"baseline", baseline_keys, NULL},
        {"attribution", attribution_keys, NULL},
        {"ports", ports_keys, NULL},
        {"persistent_term", pterm_keys, NULL},
        {"run", run_keys, NULL},
        {"severity", severity_keys, NULL},
        {"attention", attention_keys, NULL},
        {NULL, NULL, NULL},
};

static const struct key_spec *spec_find(const struct key_spec *keys, const char *key)
{
	for (; keys->key; keys++)
		if (strcmp(keys->key, key) == 0)
			return keys;
	return NULL;
}

/* The valid keys of a section, NULL-terminated, for suggestions and lists. */
static void spec_names(const struct key_spec *keys, const char *extra, const char **out, size_t n)
{
	size_t i = 0;

	for (; keys->key && i + 2 < n; keys++)
		out[i++] = keys->key;
	if (extra)
		out[i++] = extra;
	out[i] = NULL;
}

/* Reads v into the field spec describes, in the struct at base. */
static int load_key(struct loader *ld, const struct key_spec *spec, const struct toml_value *v,
                    const char *path, void *base)
{
	void *field = (char *)base + spec->off;
	char example[160];
	int64_t n;

	snprintf(example, sizeof(example), "e.g. %s = %s", spec->key, spec->example);
	switch (spec->kind) {
	case KEY_SIZE: return get_size(ld, v, path, field);
	case KEY_SIZE_OFF:
		if (is_off(v)) {
			*(int64_t *)field = RULES_OFF;
			return 0;
		}
		return get_size(ld, v, path, field) < 0 ? off_hint(ld) : 0;
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
	case KEY_PCT: return get_percent(ld, v, path, field);
	case KEY_PCT_OFF:
	case KEY_SHARE_OFF:
		if (is_off(v)) {
			*(double *)field = -1;
			return 0;
		}
		if (spec->kind == KEY_PCT_OFF)
			return get_percent(ld, v, path, field) < 0 ? off_hint(ld) : 0;
		return get_share(ld, v, path, spec->example, field) < 0 ? off_hint(ld) : 0;
	case KEY_NUMBER: return get_number(ld, v, path, spec->example, field);
	case KEY_BOOL: return get_bool(ld, v, path, field);
	case KEY_SEVERITY: {
		const char *sv = toml_string(v, NULL);
		if (sv && (strcmp(sv, "error") == 0 || strcmp(sv, "warn") == 0)) {
			*(bool *)field = strcmp(sv, "warn") == 0;
			return 0;
		}
		return fail(ld, toml_pos(v), path,
		            "%s%s%s is not a severity; write \"error\" "
		            "(fails the gate) or \"warn\" (reported, never failing)",
		            sv ? "\"" : "", sv ? sv : "this value", sv ? "\"" : "");
	}
	case KEY_GLOB: return get_checked_string(ld, v, path, STR_GLOB, example, field);
	case KEY_PATH: return get_checked_string(ld, v, path, STR_PATH, example, field);
	case KEY_REF: return get_checked_string(ld, v, path, STR_REF, example, field);
	case KEY_NOTES_REF: return get_checked_string(ld, v, path, STR_NOTES_REF, example, field);
	}
	return -1;
}

/* Whether an [[ets.table]] entry sets a limit. */
static bool table_has_limit(const struct ets_table_limit *t)
{
	return t->max_bytes != RULES_OFF || t->max_size != RULES_OFF || t->max_growth_pct >= 0;
}

static int load_ets_table(struct loader *ld, const struct toml_value *e, const char *epath,
                          struct ets_config *ets)
{
	struct ets_table_limit t = {NULL, RULES_OFF, RULES_OFF, -1};
	const char *names[8];
	int rc = -1;

	spec_names(ets_table_keys, NULL, names, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < toml_table_len(e); i++) {
		const char *key = toml_table_key(e, i);
		const struct key_spec *spec = spec_find(ets_table_keys, key);
		char path[320];

		key_path(path, sizeof(path), epath, key);
		if (!spec) {
			unknown_key(ld, toml_table_key_pos(e, i), path, key, names,
			            "[[ets.table]]");
			goto out;
		}
		if (load_key(ld, spec, toml_table_value(e, i), path, &t) < 0)
			goto out;
	}
	if (!t.name) {
		fail(ld, toml_pos(e), epath,
		     "has no name; add name = \"corpus_*\" (a glob on the ETS table name)");
		goto out;
	}
	if (!table_has_limit(&t)) {
		fail(ld, toml_pos(e), epath,
		     "sets no limit; add max_bytes, max_size or max_growth");
		goto out;
	}
	for (size_t k = 0; k < ets->ntables; k++) {
		if (strcmp(ets->tables[k].name, t.name) == 0) {
			char path[320];
			key_path(path, sizeof(path), epath, "name");
			fail(ld, toml_pos(toml_get(e, "name")), path,
			     "\"%s\" is already limited by ets.table[%zu]; merge the two entries",
			     t.name, k);
			goto out;
		}
	}
	struct ets_table_limit *added = ets_config_table_add(ets, t.name);
	if (!added) {
		fail(ld, toml_pos(e), epath, "out of memory");
		goto out;
	}
	added->max_bytes = t.max_bytes;
	added->max_size = t.max_size;
	added->max_growth_pct = t.max_growth_pct;
	rc = 0;
out:
	free(t.name);
	return rc;
}

static int load_ets_tables(struct loader *ld, const struct toml_value *v, const char *path,
                           struct ets_config *ets)
{
	static const char fix[] = "write [[ets.table]] (two brackets) above each table's name and "
	                          "limits";

	if (toml_type(v) != TOML_ARRAY)
		return type_fail(ld, v, path, "an array of tables", fix);
	for (size_t i = 0; i < toml_array_len(v); i++) {
		const struct toml_value *e = toml_array_at(v, i);
		char epath[300];

		snprintf(epath, sizeof(epath), "%s[%zu]", path, i);
		if (toml_type(e) != TOML_TABLE)
			return type_fail(ld, e, epath, "a table", fix);
		if (load_ets_table(ld, e, epath, ets) < 0)
			return -1;
	}
	return 0;
}

static int load_section(struct loader *ld, const struct toml_value *t, const struct section *sec,
                        struct config *cfg)
{
	const char *names[16];

	spec_names(sec->keys, sec->extra, names, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < toml_table_len(t); i++) {
		const char *key = toml_table_key(t, i);
		const struct toml_value *v = toml_table_value(t, i);
		const struct key_spec *spec = spec_find(sec->keys, key);
		char path[256], table[64];
		int rc;

		key_path(path, sizeof(path), sec->name, key);
		if (spec) {
			rc = load_key(ld, spec, v, path, cfg);
		} else if (sec->extra && strcmp(key, sec->extra) == 0) {
			rc = load_ets_tables(ld, v, path, &cfg->rules.ets);
		} else {
			snprintf(table, sizeof(table), "[%s]", sec->name);
			rc = unknown_key(ld, toml_table_key_pos(t, i), path, key, names, table);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

static const struct section *section_find(const char *name)
{
	for (const struct section *s = sections; s->name; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static int load_root(struct loader *ld, const struct toml_value *root, struct config *cfg)
{
	for (size_t i = 0; i < toml_table_len(root); i++) {
		const char *key = toml_table_key(root, i);
		const struct toml_value *v = toml_table_value(root, i);
		const struct section *sec;
		char path[256], fix[320];
		int rc;

		key_path(path, sizeof(path), "", key);
		snprintf(fix, sizeof(fix), "write [%s] with its keys below it", path);
		if (strcmp(key, "node") == 0)
			rc = get_table(ld, v, path, fix) < 0 ? -1 : load_node(ld, v, cfg);
		else if (strcmp(key, "output") == 0)
			rc = get_table(ld, v, path, fix) < 0 ? -1 : load_output(ld, v, cfg);
		else if (strcmp(key, "growth") == 0)
			rc = get_table(ld, v, path, fix) < 0
			             ? -1
			             : load_growth(ld, v, &cfg->rules.growth);
		else if ((sec = section_find(key)))
			rc = get_table(ld, v, path, fix) < 0 ? -1 : load_section(ld, v, sec, cfg);
		else if (suggest(key, root_keys))
			rc = fail(ld, toml_table_key_pos(root, i), path,
			          "unknown key; did you mean \"%s\"?", suggest(key, root_keys));
		else
			rc = fail(ld, toml_table_key_pos(root, i), path,
			          "unknown key; the configuration has only the tables [node], "
			          "[output], [growth], [ets], [binary], [process], [atom], "
			          "[allocator], [baseline], [attribution], [ports], "
			          "[persistent_term] and [run]");
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- loading ---- */

/* Replaces cfg with the defaults after a failed load. */
static int load_failed(struct config *cfg, char *err, size_t errlen)
{
	config_clear(cfg);
	if (config_default(cfg) < 0 && err && errlen && !err[0])
		set_err(err, errlen, "out of memory");
	return -1;
}

int config_load_text(struct config *cfg, const char *text, size_t len, const char *name, char *err,
                     size_t errlen)
{
	struct loader ld = {name, err, errlen};
	struct toml_value *root = NULL;
	struct config tmp;
	char terr[512];
	char *source;

	if (err && errlen)
		err[0] = '\0';
	if (config_default(&tmp) < 0) {
		set_err(err, errlen, "%s: out of memory", name);
		config_clear(cfg);
		return -1;
	}
	if (toml_parse(&root, text, len, terr, sizeof(terr)) < 0) {
		set_err(err, errlen, "%s:%s", name, terr);
		goto fail;
	}
	if (load_root(&ld, root, &tmp) < 0)
		goto fail;
	if (!(source = config_strdup(name))) {
		set_err(err, errlen, "%s: out of memory", name);
		goto fail;
	}
	free(tmp.source);
	tmp.source = source;
	toml_free(root);
	config_clear(cfg);
	*cfg = tmp;
	return 0;
fail:
	toml_free(root);
	config_clear(&tmp);
	return load_failed(cfg, err, errlen);
}

/* Reads all of path, at most TOML_MAX_INPUT bytes, with readfile's message made specific. */
static int read_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	size_t n;

	if (readfile_bounded(path, TOML_MAX_INPUT, 0, out, len, err, errlen) == READFILE_OK)
		return 0;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && err && (n = strlen(err)) < errlen)
		errtext_set(err + n, errlen - n, NULL, "; give the path of a TOML file");
	else if (stat(path, &st) == 0 && (unsigned long long)st.st_size > TOML_MAX_INPUT)
		errtext_set(err, errlen, path,
		            "larger than 1 MiB, the most gate reads for a configuration; is it the "
		            "right file?");
	return -1;
}

int config_load(struct config *cfg, const char *path, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (read_file(path, &text, &len, err, errlen) < 0)
		return load_failed(cfg, err, errlen);
	rc = config_load_text(cfg, text, len, path, err, errlen);
	free(text);
	return rc;
}

/* ---- printing ---- */

static void print_string(FILE *out, const char *key, const char *s)
{
	fprintf(out, "%s = \"", key);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\u%04X", *p);
			else
				fputc(*p, out);
		}
	}
	fputs("\"\n", out);
}

/* The largest unit that keeps the figure whole, but seconds below 10 minutes: "120 s". */
static void print_duration(FILE *out, const char *key, int ms)
{
	if (ms > 0 && ms % UNITS_MS_PER_H == 0)
		fprintf(out, "%s = \"%d h\"\n", key, ms / UNITS_MS_PER_H);
	else if (ms >= 10 * UNITS_MS_PER_MIN && ms % UNITS_MS_PER_MIN == 0)
		fprintf(out, "%s = \"%d min\"\n", key, ms / UNITS_MS_PER_MIN);
	else if (ms > 0 && ms % UNITS_MS_PER_S == 0)
		fprintf(out, "%s = \"%d s\"\n", key, ms / UNITS_MS_PER_S);
	else
		fprintf(out, "%s = \"%d ms\"\n", key, ms);
}

static void print_size(FILE *out, const char *key, int64_t bytes)
{
	static const struct {
		const char *name;
		int64_t factor;
	} units[] = {{"GB", 1000 * 1000 * 1000},
	             {"GiB", (int64_t)1 << 30},
	             {"MB", 1000 * 1000},
	             {"MiB", (int64_t)1 << 20},
	             {"kB", 1000},
	             {"KiB", (int64_t)1 << 10},
	             {NULL, 0}};

	for (size_t i = 0; bytes > 0 && units[i].name; i++) {
		if (bytes % units[i].factor == 0) {
			fprintf(out, "%s = \"%lld %s\"\n", key,
			        (long long)(bytes / units[i].factor), units[i].name);
			return;
		}
	}
	fprintf(out, "%s = \"%lld B\"\n", key, (long long)bytes);
}

/* The shortest figure that reads back as the same double. */
static void print_percent(FILE *out, const char *key, double pct)
{
	char buf[64];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, pct);
		if (strtod(buf, NULL) == pct)
			break;
	}
	/* %g writes 10 as 1e+01: spell it out when up to 17 decimals do (what is read back) */
	if (strchr(buf, 'e') && fabs(pct) < 1e15) {
		char fixed[64];
		for (int dec = 0; dec <= 17; dec++) {
			snprintf(fixed, sizeof(fixed), "%.*f", dec, pct);
			if (strtod(fixed, NULL) == pct) {
				memcpy(buf, fixed, sizeof(buf));
				break;
			}
		}
	}
	if (strchr(buf, 'e') || !isfinite(pct))
		fprintf(out, "%s = %s\n", key, buf); /* a TOML float: "1e+30 %" is not read */
	else
		fprintf(out, "%s = \"%s %%\"\n", key, buf);
}

/* A plain number, shortest form that reads back the same, always as a TOML float. */
static void print_number(FILE *out, const char *key, double x)
{
	char buf[64];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fprintf(out, "%s = %s%s\n", key, buf, strpbrk(buf, ".en") ? "" : ".0");
}

static void print_key(FILE *out, const struct key_spec *spec, const void *base)
{
	const void *field = (const char *)base + spec->off;
	int64_t n;
	double pct;

	switch (spec->kind) {
	case KEY_SIZE: print_size(out, spec->key, *(const int64_t *)field); break;
	case KEY_SIZE_OFF:
		n = *(const int64_t *)field;
		if (n == RULES_OFF)
			fprintf(out, "%s = \"off\"\n", spec->key);
		else
			print_size(out, spec->key, n);
		break;
	case KEY_COUNT:
	case KEY_COUNT_OFF:
		n = *(const int64_t *)field;
		if (n == RULES_OFF)
			fprintf(out, "%s = \"off\"\n", spec->key);
		else
			fprintf(out, "%s = %lld\n", spec->key, (long long)n);
		break;
	case KEY_INT: fprintf(out, "%s = %d\n", spec->key, *(const int *)field); break;
	case KEY_PCT:
	case KEY_PCT_OFF:
	case KEY_SHARE_OFF:
		pct = *(const double *)field;
		if (pct < 0)
			fprintf(out, "%s = \"off\"\n", spec->key);
		else
			print_percent(out, spec->key, pct);
		break;
	case KEY_NUMBER: print_number(out, spec->key, *(const double *)field); break;
	case KEY_BOOL:
		fprintf(out, "%s = %s\n", spec->key, *(const bool *)field ? "true" : "false");
		break;
	case KEY_SEVERITY:
		fprintf(out, "%s = \"%s\"\n", spec->key, *(const bool *)field ? "warn" : "error");
		break;
	case KEY_GLOB:
	case KEY_PATH:
	case KEY_REF:
	case KEY_NOTES_REF:
		print_string(out, spec->key,
		             *(char *const *)field ? *(char *const *)field : spec->null_is);
		break;
	}
}

static void print_sections(const struct config *cfg, FILE *out)
{
	for (const struct section *sec = sections; sec->name; sec++) {
		fprintf(out, "\n[%s]\n", sec->name);
		for (const struct key_spec *k = sec->keys; k->key; k++)
			print_key(out, k, cfg);
		if (!sec->extra)
			continue;
		/* [[ets.table]]: the limits an entry sets; one it does not is not applied */
		for (size_t i = 0; i < cfg->rules.ets.ntables; i++) {
			const struct ets_table_limit *t = &cfg->rules.ets.tables[i];
			fputs("\n[[ets.table]]\n", out);
			print_string(out, "name", t->name);
			for (const struct key_spec *k = ets_table_keys + 1; k->key; k++) {
				const void *f = (const char *)t + k->off;
				if (k->kind == KEY_PCT_OFF ? *(const double *)f >= 0
				                           : *(const int64_t *)f != RULES_OFF)
					print_key(out, k, t);
			}
		}
	}
}

void config_print(const struct config *cfg, FILE *out)
{
	const struct growth_config *g = &cfg->rules.growth;

	fputs("# gate configuration in effect, from ", out);
	for (const char *s = cfg->source ? cfg->source : "defaults"; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
	fputs("\n\n[node]\n", out);
	print_string(out, "mix_env", cfg->mix_env);
	print_string(out, "erl_flags", cfg->erl_flags);
	print_duration(out, "boot_timeout", cfg->boot_timeout_ms);
	print_duration(out, "rpc_timeout", cfg->rpc_timeout_ms);
	print_duration(out, "test_timeout", cfg->test_timeout_ms);
	print_duration(out, "stop_timeout", cfg->stop_timeout_ms);
	fputs("\n[output]\n", out);
	print_string(out, "junit", cfg->junit);
	fprintf(out, "\n[growth]\nlive_totals = %s\n", g->live_totals ? "true" : "false");
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		fprintf(out, "\n[growth.%s]\nenabled = %s\n", mem_cat_name((enum mem_cat)c),
		        g->cat[c].enabled ? "true" : "false");
		print_percent(out, "max", g->cat[c].max_pct);
		print_size(out, "floor", g->cat[c].floor_bytes);
	}
	print_sections(cfg, out);
}
