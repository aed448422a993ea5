/* gate/config/config_msg.c: what gate.toml's messages say: "name:line:col: key: what; fix",
 * keys as TOML writes them, and the valid key closest to a misspelt one (config_internal.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gate/config/config_internal.h"

int config_fail(struct loader *ld, struct toml_pos pos, const char *key, const char *fmt, ...)
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
void config_key_path(char *out, size_t n, const char *prefix, const char *key)
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
const char *config_suggest(const char *key, const char *const *valid)
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

void config_join_keys(char *out, size_t n, const char *const *keys)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; keys[i] && o < n; i++)
		o += (size_t)snprintf(out + o, n - o, "%s%s", i ? ", " : "", keys[i]);
}

int config_unknown_key(struct loader *ld, struct toml_pos pos, const char *path, const char *key,
                       const char *const *valid, const char *table)
{
	const char *s = config_suggest(key, valid);
	char list[256];

	if (s)
		return config_fail(ld, pos, path, "unknown key; did you mean \"%s\"?", s);
	config_join_keys(list, sizeof(list), valid);
	return config_fail(ld, pos, path, "unknown key; %s takes %s", table, list);
}
