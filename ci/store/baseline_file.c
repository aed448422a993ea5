/* ci/store/baseline_file.c: the baseline file and the history summary as JSON (jansson), written
 * deterministically and atomically, read strictly. */
#include "base/atomic.h"
#include "base/errtext.h"
#include "base/readfile.h"
#include "ci/store/baseline_file.h"
#include "ci/store/json_text.h"
#include "model/snapshot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

/* ---- writing ---- */

static void format_time(char *buf, size_t len, int64_t unix_s)
{
	time_t t = (time_t)unix_s;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "1970-01-01T00:00:00Z");
}

/* Sets key to s (NULL: JSON null). Returns -1 when s is not valid UTF-8 or on OOM. */
static int set_str(json_t *obj, const char *key, const char *s)
{
	json_t *v = s ? json_string(s) : json_null();
	return v ? json_object_set_new(obj, key, v) : -1;
}

static int set_int(json_t *obj, const char *key, int64_t v)
{
	json_t *j = json_integer((json_int_t)v);
	return j ? json_object_set_new(obj, key, j) : -1;
}

/* Builds the JSON object; full adds the ETS tables and allocators. On failure *why says
 * what could not be represented. */
static json_t *to_json(const struct baseline *b, bool full, const char **why)
{
	json_t *root = json_object(), *mem = json_object();
	char ts[32];

	*why = "out of memory";
	if (!root || !mem)
		goto fail;
	for (int i = 0; i < MEM_CAT_COUNT; i++)
		if (b->have[i] && set_int(mem, mem_cat_name((enum mem_cat)i), b->mem[i]) < 0)
			goto fail;
	if (json_object_set_new(root, "memory", mem) < 0) {
		mem = NULL;
		goto fail;
	}
	mem = NULL;
	format_time(ts, sizeof(ts), b->timestamp);
	if (set_int(root, "version", BASELINE_FORMAT_VERSION) < 0 ||
	    set_int(root, "process_count", b->process_count) < 0 ||
	    set_int(root, "atom_count", b->atom_count) < 0 ||
	    set_int(root, "test_count", b->test_count) < 0 || set_str(root, "timestamp", ts) < 0)
		goto fail;
	*why = "a version or commit string is not valid UTF-8";
	if (set_str(root, "gate", b->gate_version) < 0 ||
	    set_str(root, "otp", b->otp_release) < 0 ||
	    set_str(root, "elixir", b->elixir_version) < 0 ||
	    set_str(root, "commit", b->commit) < 0)
		goto fail;
	/* measured on a working tree with local changes: said as what it is */
	if (b->commit_dirty && set_str(root, "worktree", "with local changes") < 0)
		goto fail;
	if (!full)
		return root;

	json_t *ets = json_object(), *allocs = json_object();
	if (!ets || !allocs) {
		json_decref(ets);
		json_decref(allocs);
		goto fail;
	}
	if (json_object_set_new(root, "ets", ets) < 0) {
		json_decref(allocs);
		goto fail;
	}
	if (json_object_set_new(root, "allocators", allocs) < 0)
		goto fail;
	for (size_t i = 0; i < b->nets; i++) {
		json_t *t = json_object();
		*why = "out of memory";
		if (!t || set_int(t, "memory", b->ets[i].memory) < 0 ||
		    set_int(t, "size", b->ets[i].size) < 0) {
			json_decref(t);
			goto fail;
		}
		*why = "an ETS table name is not valid UTF-8";
		if (!b->ets[i].name || json_object_set_new(ets, b->ets[i].name, t) < 0)
			goto fail;
	}
	for (size_t i = 0; i < b->nallocs; i++) {
		json_t *a = json_object();
		*why = "out of memory";
		if (!a || set_int(a, "carriers_size", b->allocs[i].carriers_size) < 0 ||
		    set_int(a, "blocks_size", b->allocs[i].blocks_size) < 0) {
			json_decref(a);
			goto fail;
		}
		*why = "an allocator type is not valid UTF-8";
		if (!b->allocs[i].type || json_object_set_new(allocs, b->allocs[i].type, a) < 0)
			goto fail;
	}
	return root;
fail:
	json_decref(mem);
	json_decref(root);
	return NULL;
}

static bool is_hex_id(const char *s);

/* What the reader would refuse is not written either: a file gate cannot read back would
 * also block the next update (see baseline_check_replaceable). */
static int validate(const struct baseline *b, bool full, char *why, size_t len)
{
	for (int i = 0; i < MEM_CAT_COUNT; i++)
		if (b->have[i] && b->mem[i] < 0) {
			snprintf(why, len, "memory.%s is negative (%lld)",
			         mem_cat_name((enum mem_cat)i), (long long)b->mem[i]);
			return -1;
		}
	if (b->process_count < 0 || b->atom_count < 0 || b->test_count < 0) {
		snprintf(why, len, "a count is negative");
		return -1;
	}
	/* what "YYYY-MM-DDTHH:MM:SSZ" can say */
	if (b->timestamp < 0 || b->timestamp > 253402300799LL) {
		snprintf(why, len, "timestamp %lld is outside 1970..9999", (long long)b->timestamp);
		return -1;
	}
	if (b->commit && !is_hex_id(b->commit)) {
		snprintf(why, len, "commit \"%.80s\" is not a commit id", b->commit);
		return -1;
	}
	for (size_t i = 0; full && i < b->nets; i++)
		if (b->ets[i].memory < 0 || b->ets[i].size < 0) {
			snprintf(why, len, "ets.%s has a negative figure", b->ets[i].name);
			return -1;
		}
	for (size_t i = 0; full && i < b->nallocs; i++)
		if (b->allocs[i].carriers_size < 0 || b->allocs[i].blocks_size < 0) {
			snprintf(why, len, "allocators.%s has a negative figure",
			         b->allocs[i].type);
			return -1;
		}
	return 0;
}

/* The checked JSON object: what the reader would refuse is refused here, with err saying why. */
static json_t *checked_json(const struct baseline *b, bool full, char *err, size_t errlen)
{
	const char *why;
	char bad[160];
	if (validate(b, full, bad, sizeof(bad)) < 0) {
		errtext_set(err, errlen, "baseline", "cannot write it: %s", bad);
		return NULL;
	}
	json_t *root = to_json(b, full, &why);
	if (!root)
		errtext_set(err, errlen, "baseline", "cannot write it as JSON: %s", why);
	return root;
}

json_t *baseline_json(const struct baseline *b, char *err, size_t errlen)
{
	return checked_json(b, true, err, errlen);
}

json_t *baseline_summary_json(const struct baseline *b, char *err, size_t errlen)
{
	return checked_json(b, false, err, errlen);
}

static int dump(char **out, size_t *len, const struct baseline *b, bool full, char *err,
                size_t errlen)
{
	*out = NULL;
	json_t *root = checked_json(b, full, err, errlen);
	if (!root)
		return BASELINE_ERROR;
	/* sorted keys and integers only: equal figures give equal bytes, and a change reads
	 * as a small diff in a pull request */
	size_t flags = JSON_SORT_KEYS | (full ? JSON_INDENT(2) : JSON_COMPACT);
	char *text = json_text(root, flags, len);
	json_decref(root);
	if (!text) {
		errtext_set(err, errlen, "baseline", "cannot write it as JSON: out of memory");
		return BASELINE_ERROR;
	}
	*out = text;
	return BASELINE_OK;
}

int baseline_format(char **out, size_t *len, const struct baseline *b, char *err, size_t errlen)
{
	return dump(out, len, b, true, err, errlen);
}

int baseline_summary_format(char **out, const struct baseline *b, char *err, size_t errlen)
{
	return dump(out, NULL, b, false, err, errlen);
}

/* ---- reading ---- */

struct rd {
	const char *name;
	char *err;
	size_t errlen;
};

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number with a fraction";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "something else";
}

/* A required non-negative integer at obj[key]; where is the path of obj ("" for the top). */
static int rd_int(struct rd *r, const json_t *obj, const char *where, const char *key, int64_t *out)
{
	const json_t *v = json_object_get(obj, key);
	if (!v) {
		errtext_set(r->err, r->errlen, r->name, "%s%s: missing", where, key);
		return -1;
	}
	if (!json_is_integer(v)) {
		errtext_set(r->err, r->errlen, r->name, "%s%s: expected an integer, got %s", where,
		            key, json_type_name(v));
		return -1;
	}
	json_int_t i = json_integer_value(v);
	if (i < 0) {
		errtext_set(r->err, r->errlen, r->name, "%s%s: %lld is negative", where, key,
		            (long long)i);
		return -1;
	}
	*out = (int64_t)i;
	return 0;
}

/* An optional string: absent or null gives NULL. */
static int rd_str(struct rd *r, const json_t *obj, const char *key, char **out)
{
	const json_t *v = json_object_get(obj, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		errtext_set(r->err, r->errlen, r->name, "%s: expected a string or null, got %s",
		            key, json_type_name(v));
		return -1;
	}
	if (!(*out = strdup(json_string_value(v)))) {
		errtext_set(r->err, r->errlen, r->name, "out of memory");
		return -1;
	}
	return 0;
}

static const json_t *rd_object(struct rd *r, const json_t *obj, const char *key, bool required)
{
	const json_t *v = json_object_get(obj, key);
	if (!v) {
		if (required)
			errtext_set(r->err, r->errlen, r->name, "%s: missing", key);
		return NULL;
	}
	if (!json_is_object(v)) {
		errtext_set(r->err, r->errlen, r->name, "%s: expected an object, got %s", key,
		            json_type_name(v));
		return NULL;
	}
	return v;
}

/* Strict "YYYY-MM-DDTHH:MM:SSZ" (what format_time writes): it must read back identically. */
static int parse_time(const char *s, int64_t *out)
{
	struct tm tm = {0};
	int n = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    (size_t)n != strlen(s))
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t < 0)
		return -1; /* before 1970: nothing gate measured, and not writable back */
	char back[32];
	format_time(back, sizeof(back), (int64_t)t);
	if (strcmp(back, s) != 0)
		return -1;
	*out = (int64_t)t;
	return 0;
}

static bool is_hex_id(const char *s)
{
	size_t n = strlen(s);
	if (n < 4 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int ets_cmp(const void *a, const void *b)
{
	return strcmp(((const struct baseline_ets *)a)->name,
	              ((const struct baseline_ets *)b)->name);
}

static int alloc_cmp(const void *a, const void *b)
{
	return strcmp(((const struct baseline_alloc *)a)->type,
	              ((const struct baseline_alloc *)b)->type);
}

static int rd_ets(struct rd *r, const json_t *ets, struct baseline *out)
{
	size_t n = json_object_size(ets);
	if (!n)
		return 0;
	if (!(out->ets = calloc(n, sizeof(*out->ets)))) {
		errtext_set(r->err, r->errlen, r->name, "out of memory");
		return -1;
	}
	const char *key;
	const json_t *t;
	json_object_foreach((json_t *)ets, key, t)
	{
		char where[320];
		snprintf(where, sizeof(where), "ets.%s.", key);
		if (!json_is_object(t)) {
			errtext_set(r->err, r->errlen, r->name,
			            "ets.%s: expected an object, got %s", key, json_type_name(t));
			return -1;
		}
		struct baseline_ets *e = &out->ets[out->nets];
		if (rd_int(r, t, where, "memory", &e->memory) < 0 ||
		    rd_int(r, t, where, "size", &e->size) < 0)
			return -1;
		if (!(e->name = strdup(key))) {
			errtext_set(r->err, r->errlen, r->name, "out of memory");
			return -1;
		}
		out->nets++;
	}
	qsort(out->ets, out->nets, sizeof(*out->ets), ets_cmp);
	return 0;
}

static int rd_allocs(struct rd *r, const json_t *allocs, struct baseline *out)
{
	size_t n = json_object_size(allocs);
	if (!n)
		return 0;
	if (!(out->allocs = calloc(n, sizeof(*out->allocs)))) {
		errtext_set(r->err, r->errlen, r->name, "out of memory");
		return -1;
	}
	const char *key;
	const json_t *a;
	json_object_foreach((json_t *)allocs, key, a)
	{
		char where[320];
		snprintf(where, sizeof(where), "allocators.%s.", key);
		if (!json_is_object(a)) {
			errtext_set(r->err, r->errlen, r->name,
			            "allocators.%s: expected an object, got %s", key,
			            json_type_name(a));
			return -1;
		}
		struct baseline_alloc *d = &out->allocs[out->nallocs];
		if (rd_int(r, a, where, "carriers_size", &d->carriers_size) < 0 ||
		    rd_int(r, a, where, "blocks_size", &d->blocks_size) < 0)
			return -1;
		if (!(d->type = strdup(key))) {
			errtext_set(r->err, r->errlen, r->name, "out of memory");
			return -1;
		}
		out->nallocs++;
	}
	qsort(out->allocs, out->nallocs, sizeof(*out->allocs), alloc_cmp);
	return 0;
}

/* The text as a JSON object, refused with a reason when it is blank, invalid or not an object. */
static json_t *load_object(const char *text, size_t len, struct rd *r)
{
	json_error_t jerr;
	if (len > BASELINE_FILE_MAX) {
		errtext_set(r->err, r->errlen, r->name,
		            "%zu bytes, more than the %d a baseline may have", len,
		            BASELINE_FILE_MAX);
		return NULL;
	}
	size_t blank = 0;
	while (blank < len && (text[blank] == ' ' || text[blank] == '\n' || text[blank] == '\r' ||
	                       text[blank] == '\t'))
		blank++;
	if (blank == len) {
		errtext_set(r->err, r->errlen, r->name, "empty, not a baseline (truncated?)");
		return NULL;
	}
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		bool at_end = jerr.position >= 0 && (size_t)jerr.position >= len;
		errtext_set(r->err, r->errlen, r->name, "%d:%d: invalid JSON: %s%s", jerr.line,
		            jerr.column, jerr.text,
		            at_end ? " (the text ends early: truncated?)" : "");
		return NULL;
	}
	if (!json_is_object(root)) {
		errtext_set(r->err, r->errlen, r->name, "expected a JSON object, got %s",
		            json_type_name(root));
		json_decref(root);
		return NULL;
	}
	return root;
}

/* The version first: a newer gate's file may differ in anything else. */
static int rd_version(struct rd *r, const json_t *root, struct baseline *out)
{
	const json_t *ver = json_object_get(root, "version");
	if (!ver) {
		errtext_set(r->err, r->errlen, r->name,
		            "not a gate baseline: it has no \"version\"");
		return -1;
	}
	if (!json_is_integer(ver)) {
		errtext_set(r->err, r->errlen, r->name, "version: expected an integer, got %s",
		            json_type_name(ver));
		return -1;
	}
	json_int_t v = json_integer_value(ver);
	if (v > BASELINE_FORMAT_VERSION) {
		errtext_set(r->err, r->errlen, r->name,
		            "written by a newer gate (format version %lld; this gate reads version "
		            "%d); "
		            "upgrade gate",
		            (long long)v, BASELINE_FORMAT_VERSION);
		return -1;
	}
	if (v < 1) {
		errtext_set(r->err, r->errlen, r->name,
		            "version: %lld is not a format version (they start at 1)",
		            (long long)v);
		return -1;
	}
	out->format_version = (int)v;
	return 0;
}

/* The figures and the strings of the top level: memory, counts, timestamp, versions. */
static int rd_figures(struct rd *r, const json_t *root, struct baseline *out)
{
	const json_t *mem = rd_object(r, root, "memory", true);
	if (!mem)
		return -1;
	const char *key;
	const json_t *val;
	json_object_foreach((json_t *)mem, key, val)
	{
		int cat = mem_cat_from_name(key);
		if (cat < 0)
			continue; /* a category of another OTP release: not ours to judge */
		if (rd_int(r, mem, "memory.", key, &out->mem[cat]) < 0)
			return -1;
		out->have[cat] = true;
	}
	if (rd_int(r, root, "", "process_count", &out->process_count) < 0 ||
	    rd_int(r, root, "", "atom_count", &out->atom_count) < 0 ||
	    rd_int(r, root, "", "test_count", &out->test_count) < 0)
		return -1;

	const json_t *ts = json_object_get(root, "timestamp");
	if (!ts) {
		errtext_set(r->err, r->errlen, r->name, "timestamp: missing");
		return -1;
	}
	if (!json_is_string(ts) || parse_time(json_string_value(ts), &out->timestamp) < 0) {
		errtext_set(r->err, r->errlen, r->name,
		            "timestamp: expected a UTC time like \"2026-12-02T12:00:00Z\", got %s",
		            json_is_string(ts) ? json_string_value(ts) : json_type_name(ts));
		return -1;
	}

	if (rd_str(r, root, "gate", &out->gate_version) < 0 ||
	    rd_str(r, root, "otp", &out->otp_release) < 0 ||
	    rd_str(r, root, "elixir", &out->elixir_version) < 0 ||
	    rd_str(r, root, "commit", &out->commit) < 0)
		return -1;
	if (out->commit && !is_hex_id(out->commit)) {
		errtext_set(r->err, r->errlen, r->name, "commit: \"%.80s\" is not a commit id",
		            out->commit);
		return -1;
	}
	const json_t *wt = json_object_get(root, "worktree");
	out->commit_dirty =
	        json_is_string(wt) && strcmp(json_string_value(wt), "with local changes") == 0;
	return 0;
}

/* The ETS tables and the allocators: required in a file (full), optional in a summary. */
static int rd_tables(struct rd *r, const json_t *root, bool full, struct baseline *out)
{
	const json_t *ets = rd_object(r, root, "ets", full);
	if (!ets && (full || json_object_get(root, "ets")))
		return -1;
	if (ets && rd_ets(r, ets, out) < 0)
		return -1;
	const json_t *allocs = rd_object(r, root, "allocators", full);
	if (!allocs && (full || json_object_get(root, "allocators")))
		return -1;
	if (allocs && rd_allocs(r, allocs, out) < 0)
		return -1;
	return 0;
}

static int parse(struct baseline *out, const char *text, size_t len, const char *name, bool full,
                 char *err, size_t errlen)
{
	struct rd r = {.name = name ? name : "baseline", .err = err, .errlen = errlen};

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	json_t *root = load_object(text, len, &r);
	if (!root)
		return BASELINE_ERROR;
	int rc = rd_version(&r, root, out) < 0 || rd_figures(&r, root, out) < 0 ||
	                         rd_tables(&r, root, full, out) < 0
	                 ? BASELINE_ERROR
	                 : BASELINE_OK;
	json_decref(root);
	if (rc != BASELINE_OK)
		baseline_clear(out);
	return rc;
}

int baseline_parse(struct baseline *out, const char *text, size_t len, const char *name, char *err,
                   size_t errlen)
{
	return parse(out, text, len, name, true, err, errlen);
}

int baseline_summary_parse(struct baseline *out, const char *text, size_t len, const char *name,
                           char *err, size_t errlen)
{
	return parse(out, text, len, name, false, err, errlen);
}

/* Reads the file at path (a regular file of at most BASELINE_FILE_MAX bytes) into *out,
 * NUL-terminated. BASELINE_MISSING ("no baseline at PATH") when it does not exist. */
static int slurp(char **out, size_t *len, const char *path, char *err, size_t errlen)
{
	switch (readfile_bounded(path, BASELINE_FILE_MAX, 0, out, len, err, errlen)) {
	case READFILE_OK: return BASELINE_OK;
	case READFILE_MISSING:
		errtext_set(err, errlen, NULL, "no baseline at %s", path);
		return BASELINE_MISSING;
	case READFILE_ERROR: break;
	}
	/* the likeliest mistake gets its fix */
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		errtext_set(err, errlen, path,
		            "is a directory, not a baseline file; point the baseline "
		            "path at a file (default %s)",
		            BASELINE_DEFAULT_PATH);
	return BASELINE_ERROR;
}

int baseline_read_file(struct baseline *out, const char *path, char *err, size_t errlen)
{
	char *text;
	size_t len;
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	int rc = slurp(&text, &len, path, err, errlen);
	if (rc != BASELINE_OK)
		return rc;
	rc = baseline_parse(out, text, len, path, err, errlen);
	free(text);
	return rc;
}

int baseline_check_replaceable(const char *text, size_t len, const char *name, char *err,
                               size_t errlen)
{
	struct baseline old;
	char why[512];
	if (baseline_parse(&old, text, len, name, why, sizeof(why)) == BASELINE_OK) {
		baseline_clear(&old);
		return BASELINE_OK;
	}
	/* the parser's text starts with the name, which this message gives already */
	size_t nl = strlen(name);
	const char *reason = strncmp(why, name, nl) == 0 && why[nl] == ':' ? why + nl + 2 : why;
	errtext_set(err, errlen, NULL,
	            "refusing to overwrite %s, which is not a baseline this gate can read (%s); "
	            "move it away or force the update",
	            name, reason);
	return BASELINE_ERROR;
}

int baseline_write(const char *path, const struct baseline *b, unsigned flags, char *err,
                   size_t errlen)
{
	char *text = NULL, *old = NULL;
	size_t len = 0, oldlen = 0;
	struct atomic_file t = {0};
	int rc = BASELINE_ERROR;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !*path) {
		errtext_set(err, errlen, "baseline", "no path given for the baseline file");
		return BASELINE_ERROR;
	}
	if (baseline_format(&text, &len, b, err, errlen) != BASELINE_OK)
		return BASELINE_ERROR;

	/* what is there now must be a file, and one we may replace */
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			errtext_set(err, errlen, path,
			            "is a directory, not a baseline file; point the "
			            "baseline path at a file (default %s)",
			            BASELINE_DEFAULT_PATH);
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			errtext_set(err, errlen, path,
			            "is not a regular file; refusing to replace it");
			goto out;
		}
		if (!(flags & BASELINE_WRITE_FORCE)) {
			int r = slurp(&old, &oldlen, path, err, errlen);
			if (r == BASELINE_ERROR) {
				/* too large or unreadable: not a baseline we know, so not ours */
				char why[512];
				snprintf(why, sizeof(why), "%s", err ? err : "unreadable");
				errtext_set(err, errlen, NULL,
				            "refusing to overwrite %s, which is not a baseline "
				            "this gate "
				            "can read (%s); move it away or force the update",
				            path, why);
				goto out;
			}
			if (r == BASELINE_OK && baseline_check_replaceable(old, oldlen, path, err,
			                                                   errlen) != BASELINE_OK)
				goto out;
		}
	} else if (errno != ENOENT) {
		errtext_set(err, errlen, path, "cannot stat it: %s", strerror(errno));
		goto out;
	}

	if (atomic_file_write(&t, path, text, len, false, err, errlen) != BASELINE_OK)
		goto out;
	rc = atomic_file_commit(&t, err, errlen);
out:
	atomic_file_abort(&t);
	free(text);
	free(old);
	return rc;
}
