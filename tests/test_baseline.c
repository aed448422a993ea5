/* tests/test_baseline.c: the baseline file: deterministic JSON, strict reading (corrupt,
 * truncated, wrong-typed, future-version, directories, FIFOs, oversized), atomic writes that
 * never replace a file they cannot read, allocation failures inside jansson. Each test works
 * in its own mkdtemp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/helpers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "ci/store/baseline_file.h"
#include "model/snapshot.h"

#define TS_2026_12_02_NOON 1796212800 /* 2026-12-02T12:00:00Z */

struct fixture {
	char dir[64];
	char path[256];
	struct baseline b;
	char err[1024];
};

/* A baseline with a bit of everything, built by hand (no snapshot needed). */
static void sample(struct baseline *b)
{
	memset(b, 0, sizeof(*b));
	b->format_version = 1;
	b->gate_version = strdup("0.1.0");
	b->otp_release = strdup("25");
	b->elixir_version = strdup("1.14.0");
	b->commit = strdup("0123456789abcdef0123456789abcdef01234567");
	b->timestamp = TS_2026_12_02_NOON;
	b->test_count = 42;
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		b->have[i] = true;
		b->mem[i] = 1000000 * (i + 1);
	}
	b->mem[MEM_TOTAL] = 9223372036854775807LL; /* the largest figure round-trips exactly */
	b->process_count = 77;
	b->atom_count = 12345;
	b->nets = 2;
	b->ets = calloc(2, sizeof(*b->ets));
	b->ets[0] = (struct baseline_ets){strdup("cache"), 4096, 3};
	b->ets[1] = (struct baseline_ets){strdup("sessions"), 1234567, 20000};
	b->nallocs = 1;
	b->allocs = calloc(1, sizeof(*b->allocs));
	b->allocs[0] = (struct baseline_alloc){strdup("binary_alloc"), 3000000, 1000000};
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/gate_test_baseline.XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/.gate/baseline.json", fx->dir);
	sample(&fx->b);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	baseline_clear(&fx->b);
	rm_rf(fx->dir);
	free(fx);
	return 0;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got < 4096)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static void write_all(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* Entries in dir other than "." and ".." whose name contains ".tmp." (our temp files). */
static int temp_files_in(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return n;
}

static void assert_parse_fails(const char *text, const char *want)
{
	struct baseline b;
	char err[1024] = "";
	int rc = baseline_parse(&b, text, strlen(text), "t.json", err, sizeof(err));
	if (rc != BASELINE_ERROR || !strstr(err, want) || strncmp(err, "t.json", 6) != 0)
		fail_msg("parse of <%s>: rc %d, err \"%s\", want \"%s\"", text, rc, err, want);
	/* out is zeroed on failure: clearing it is safe and frees nothing */
	assert_null(b.ets);
	assert_null(b.commit);
}

/* ---- writing ---- */

/* The exact bytes: sorted keys, 2-space indent, integers, UTC time, trailing newline. */
static void test_baseline__format_golden(void **state)
{
	(void)state;
	struct baseline b = {0};
	b.format_version = 1;
	b.gate_version = strdup("0.1.0");
	b.commit = strdup("abcdef0");
	b.timestamp = TS_2026_12_02_NOON;
	b.test_count = 3;
	b.have[MEM_TOTAL] = b.have[MEM_ETS] = true;
	b.mem[MEM_TOTAL] = 30000000;
	b.mem[MEM_ETS] = 512;
	b.process_count = 50;
	b.atom_count = 9000;
	b.nets = 1;
	b.ets = calloc(1, sizeof(*b.ets));
	b.ets[0] = (struct baseline_ets){strdup("sessions"), 4096, 7};
	char *text = NULL;
	size_t len = 0;
	char err[256];
	assert_int_equal(baseline_format(&text, &len, &b, err, sizeof(err)), BASELINE_OK);
	const char *want = "{\n"
	                   "  \"allocators\": {},\n"
	                   "  \"atom_count\": 9000,\n"
	                   "  \"commit\": \"abcdef0\",\n"
	                   "  \"elixir\": null,\n"
	                   "  \"ets\": {\n"
	                   "    \"sessions\": {\n"
	                   "      \"memory\": 4096,\n"
	                   "      \"size\": 7\n"
	                   "    }\n"
	                   "  },\n"
	                   "  \"gate\": \"0.1.0\",\n"
	                   "  \"memory\": {\n"
	                   "    \"ets\": 512,\n"
	                   "    \"total\": 30000000\n"
	                   "  },\n"
	                   "  \"otp\": null,\n"
	                   "  \"process_count\": 50,\n"
	                   "  \"test_count\": 3,\n"
	                   "  \"timestamp\": \"2026-12-02T12:00:00Z\",\n"
	                   "  \"version\": 1\n"
	                   "}\n";
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	free(text);

	/* the summary for a note: one line, no tables or allocators */
	assert_int_equal(baseline_summary_format(&text, &b, err, sizeof(err)), BASELINE_OK);
	assert_string_equal(text, "{\"atom_count\":9000,\"commit\":\"abcdef0\",\"elixir\":null,"
	                          "\"gate\":\"0.1.0\",\"memory\":{\"ets\":512,\"total\":30000000},"
	                          "\"otp\":null,\"process_count\":50,\"test_count\":3,"
	                          "\"timestamp\":\"2026-12-02T12:00:00Z\",\"version\":1}\n");
	free(text);
	baseline_clear(&b);
}

/* Equal input, equal bytes; the text parses back to the same figures. */
static void test_baseline__roundtrip(void **state)
{
	struct fixture *fx = *state;
	char *t1, *t2, *t3;
	size_t l1, l2, l3;
	assert_int_equal(baseline_format(&t1, &l1, &fx->b, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(baseline_format(&t2, &l2, &fx->b, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(l1, l2);
	assert_memory_equal(t1, t2, l1);

	struct baseline back;
	assert_int_equal(baseline_parse(&back, t1, l1, "x", fx->err, sizeof(fx->err)), BASELINE_OK);
	assert_int_equal(back.format_version, 1);
	assert_string_equal(back.gate_version, "0.1.0");
	assert_string_equal(back.otp_release, "25");
	assert_string_equal(back.elixir_version, "1.14.0");
	assert_string_equal(back.commit, fx->b.commit);
	assert_int_equal(back.timestamp, TS_2026_12_02_NOON);
	assert_int_equal(back.test_count, 42);
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		assert_true(back.have[i]);
		assert_int_equal(back.mem[i], fx->b.mem[i]);
	}
	assert_int_equal(back.process_count, 77);
	assert_int_equal(back.atom_count, 12345);
	assert_int_equal(back.nets, 2);
	assert_string_equal(back.ets[1].name, "sessions");
	assert_int_equal(back.ets[1].memory, 1234567);
	assert_int_equal(back.ets[1].size, 20000);
	assert_int_equal(back.nallocs, 1);
	assert_int_equal(back.allocs[0].carriers_size, 3000000);
	assert_int_equal(back.allocs[0].blocks_size, 1000000);
	/* formatting what was read gives the same bytes again */
	assert_int_equal(baseline_format(&t3, &l3, &back, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(l3, l1);
	assert_memory_equal(t3, t1, l1);

	/* the summary reads back too, without tables */
	struct baseline sum;
	char *s;
	assert_int_equal(baseline_summary_format(&s, &fx->b, fx->err, sizeof(fx->err)), 0);
	assert_ptr_equal(strchr(s, '\n'), s + strlen(s) - 1); /* one line */
	assert_int_equal(
	        baseline_summary_parse(&sum, s, strlen(s), "note", fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	assert_int_equal(sum.nets, 0);
	assert_int_equal(sum.mem[MEM_CODE], fx->b.mem[MEM_CODE]);
	/* a summary is not a whole baseline file */
	struct baseline whole;
	assert_int_equal(baseline_parse(&whole, s, strlen(s), "note", fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "note: ets: missing"));
	free(s);
	baseline_clear(&sum);
	baseline_clear(&back);
	free(t1);
	free(t2);
	free(t3);
}

/* A string that is not UTF-8 cannot go into JSON: an error, not a broken file. */
static void test_baseline__format_bad_utf8(void **state)
{
	struct fixture *fx = *state;
	free(fx->b.ets[0].name);
	fx->b.ets[0].name = strdup("bad\xff name");
	char *t = (char *)"untouched";
	assert_int_equal(baseline_format(&t, NULL, &fx->b, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_null(t);
	assert_non_null(strstr(fx->err, "ETS table name is not valid UTF-8"));
	assert_int_equal(baseline_write(fx->path, &fx->b, 0, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_int_equal(access(fx->path, F_OK), -1);
}

/* baseline_json is the object baseline_format prints: the same keys and values (the text
 * parsed back compares equal, and the object printed the house way gives the same bytes);
 * the summary's likewise; what the writer refuses it refuses with the same message. */
static void test_baseline__json_object(void **state)
{
	struct fixture *fx = *state;
	char *text = NULL, *sum = NULL;
	size_t len;
	assert_int_equal(baseline_format(&text, &len, &fx->b, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(baseline_summary_format(&sum, &fx->b, fx->err, sizeof(fx->err)), 0);

	json_t *o = baseline_json(&fx->b, fx->err, sizeof(fx->err));
	assert_non_null(o);
	json_t *back = json_loads(text, 0, NULL);
	assert_non_null(back);
	assert_true(json_equal(o, back));
	assert_non_null(json_object_get(o, "ets"));
	assert_non_null(json_object_get(o, "allocators"));
	char *printed = json_dumps(o, JSON_SORT_KEYS | JSON_INDENT(2));
	assert_non_null(printed);
	assert_int_equal(strlen(printed) + 1, len);
	assert_memory_equal(printed, text, len - 1);
	free(printed);
	json_decref(back);
	json_decref(o);

	json_t *so = baseline_summary_json(&fx->b, fx->err, sizeof(fx->err));
	assert_non_null(so);
	json_t *sback = json_loads(sum, 0, NULL);
	assert_non_null(sback);
	assert_true(json_equal(so, sback));
	assert_null(json_object_get(so, "ets"));
	assert_null(json_object_get(so, "allocators"));
	json_decref(sback);
	json_decref(so);

	/* refused as baseline_format refuses it */
	fx->b.mem[MEM_BINARY] = -1;
	char want[1024];
	char *t = NULL;
	assert_int_equal(baseline_format(&t, NULL, &fx->b, want, sizeof(want)), BASELINE_ERROR);
	assert_null(baseline_json(&fx->b, fx->err, sizeof(fx->err)));
	assert_string_equal(fx->err, want);
	assert_non_null(strstr(fx->err, "memory.binary is negative"));
	assert_null(baseline_summary_json(&fx->b, fx->err, sizeof(fx->err)));
	assert_string_equal(fx->err, want);
	free(text);
	free(sum);
}

/* What the reader refuses is not written: negative figures, a bad commit id, a time the
 * format cannot hold. */
static void test_baseline__format_refuses_unreadable(void **state)
{
	struct fixture *fx = *state;
	char *t = NULL;
	fx->b.mem[MEM_BINARY] = -1;
	assert_int_equal(baseline_format(&t, NULL, &fx->b, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "memory.binary is negative (-1)"));
	fx->b.mem[MEM_BINARY] = 1;
	fx->b.ets[1].size = -5;
	assert_int_equal(baseline_format(&t, NULL, &fx->b, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "ets.sessions has a negative figure"));
	/* the summary has no tables, so it does not mind */
	assert_int_equal(baseline_summary_format(&t, &fx->b, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	free(t);
	fx->b.ets[1].size = 5;
	free(fx->b.commit);
	fx->b.commit = strdup("HEAD");
	assert_int_equal(baseline_summary_format(&t, &fx->b, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "commit \"HEAD\" is not a commit id"));
	free(fx->b.commit);
	fx->b.commit = NULL;
	fx->b.timestamp = 253402300800LL; /* year 10000 */
	assert_int_equal(baseline_format(&t, NULL, &fx->b, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "outside 1970..9999"));
	fx->b.timestamp = 253402300799LL;
	size_t len;
	assert_int_equal(baseline_format(&t, &len, &fx->b, fx->err, sizeof(fx->err)), BASELINE_OK);
	assert_non_null(strstr(t, "\"timestamp\": \"9999-12-31T23:59:59Z\""));
	struct baseline back;
	assert_int_equal(baseline_parse(&back, t, len, "max", fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_int_equal(back.timestamp, 253402300799LL);
	baseline_clear(&back);
	free(t);
}

/* ---- reading ---- */

static const char *valid_text(void)
{
	return "{\"allocators\":{},\"atom_count\":1,\"commit\":null,\"elixir\":null,\"ets\":{},"
	       "\"gate\":null,\"memory\":{\"total\":5},\"otp\":null,\"process_count\":2,"
	       "\"test_count\":3,\"timestamp\":\"2026-12-02T12:00:00Z\",\"version\":1}";
}

/* Every prefix of a valid file is refused: a truncated write is never taken as a baseline. */
static void test_baseline__truncated(void **state)
{
	struct fixture *fx = *state;
	char *text;
	size_t len;
	assert_int_equal(baseline_format(&text, &len, &fx->b, fx->err, sizeof(fx->err)), 0);
	for (size_t cut = 0; cut < len - 1; cut++) { /* len - 1: only the newline missing is fine */
		struct baseline b;
		char err[1024] = "";
		int rc = baseline_parse(&b, text, cut, "cut.json", err, sizeof(err));
		if (rc != BASELINE_ERROR)
			fail_msg("a prefix of %zu of %zu bytes was accepted", cut, len);
		assert_true(strncmp(err, "cut.json: ", 10) == 0);
	}
	char err[1024];
	struct baseline b;
	assert_int_equal(baseline_parse(&b, text, len / 2, "cut.json", err, sizeof(err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(err, "invalid JSON"));
	assert_non_null(strstr(err, "truncated"));
	free(text);
}

static void test_baseline__corrupt(void **state)
{
	(void)state;
	assert_parse_fails("", "empty");
	assert_parse_fails("   \n", "empty");
	assert_parse_fails("this is not json", "1:4: invalid JSON");
	assert_parse_fails("{\"version\": 1,,}", "1:15: invalid JSON");
	assert_parse_fails("[1, 2]", "expected a JSON object, got an array");
	assert_parse_fails("{\"version\":1} trailing", "invalid JSON");
	assert_parse_fails("{\"version\":1,\"version\":1}", "invalid JSON"); /* duplicate key */
	assert_parse_fails("{\"memory\":{}}", "not a gate baseline: it has no \"version\"");
	/* a NUL in the middle of the text */
	struct baseline b;
	char err[512];
	const char nul[] = "{\"version\":1\0}";
	assert_int_equal(baseline_parse(&b, nul, sizeof(nul) - 1, "nul.json", err, sizeof(err)),
	                 BASELINE_ERROR);
}

/* A newer gate's file is refused with what to do; the version is read before anything
 * else, so a newer layout does not produce confusing type errors. */
static void test_baseline__future_version(void **state)
{
	(void)state;
	assert_parse_fails("{\"version\":2,\"memory\":\"whatever\"}",
	                   "written by a newer gate (format version 2; this gate reads version 1); "
	                   "upgrade gate");
	assert_parse_fails("{\"version\":0}", "version: 0 is not a format version");
	assert_parse_fails("{\"version\":-3}", "version: -3 is not a format version");
	assert_parse_fails("{\"version\":\"1\"}", "version: expected an integer, got a string");
	assert_parse_fails("{\"version\":1.0}",
	                   "version: expected an integer, got a number with a fraction");
}

/* Replace one key's value in the valid text and expect an error naming it. */
static void assert_field_fails(const char *key, const char *value, const char *want)
{
	json_error_t jerr;
	json_t *root = json_loads(valid_text(), 0, &jerr);
	assert_non_null(root);
	json_t *v = value ? json_loads(value, JSON_DECODE_ANY, &jerr) : NULL;
	if (value)
		assert_non_null(v);
	const char *dot = strchr(key, '.');
	if (dot) {
		char top[64];
		snprintf(top, sizeof(top), "%.*s", (int)(dot - key), key);
		json_t *obj = json_object_get(root, top);
		assert_non_null(obj);
		if (v)
			json_object_set_new(obj, dot + 1, v);
		else
			json_object_del(obj, dot + 1);
	} else if (v) {
		json_object_set_new(root, key, v);
	} else {
		json_object_del(root, key);
	}
	char *text = json_dumps(root, JSON_SORT_KEYS);
	json_decref(root);
	assert_parse_fails(text, want);
	free(text);
}

static void test_baseline__wrong_types(void **state)
{
	(void)state;
	assert_field_fails("memory", "[]", "memory: expected an object, got an array");
	assert_field_fails("memory", NULL, "memory: missing");
	assert_field_fails("memory.total", "\"5\"",
	                   "memory.total: expected an integer, got a string");
	assert_field_fails("memory.binary", "-1", "memory.binary: -1 is negative");
	assert_field_fails("memory.ets", "1.5", "memory.ets: expected an integer, got a number");
	assert_field_fails("process_count", "true",
	                   "process_count: expected an integer, got a boolean");
	assert_field_fails("atom_count", NULL, "atom_count: missing");
	assert_field_fails("test_count", "null", "test_count: expected an integer, got null");
	assert_field_fails("timestamp", "1796212800", "timestamp: expected a UTC time");
	assert_field_fails("timestamp", "\"2026-12-02 12:00:00\"",
	                   "timestamp: expected a UTC time");
	assert_field_fails("timestamp", "\"2026-13-02T12:00:00Z\"",
	                   "timestamp: expected a UTC time");
	assert_field_fails("gate", "1", "gate: expected a string or null, got an integer");
	assert_field_fails("commit", "\"not hex!\"", "commit: \"not hex!\" is not a commit id");
	assert_field_fails("ets", NULL, "ets: missing");
	assert_field_fails("ets", "{\"t\": 5}", "ets.t: expected an object, got an integer");
	assert_field_fails("ets", "{\"t\": {\"memory\": 1}}", "ets.t.size: missing");
	assert_field_fails("ets", "{\"t\": {\"memory\": \"x\", \"size\": 1}}",
	                   "ets.t.memory: expected an integer");
	assert_field_fails("allocators", "{\"a\": {\"carriers_size\": 1, \"blocks_size\": -2}}",
	                   "allocators.a.blocks_size: -2 is negative");
	assert_field_fails("allocators", "7", "allocators: expected an object, got an integer");
}

/* Unknown keys and categories are ignored: version 1 may grow without breaking readers. */
static void test_baseline__unknown_keys(void **state)
{
	(void)state;
	const char *text =
	        "{\"allocators\":{},\"atom_count\":1,\"ets\":{},\"future\":[1,2],"
	        "\"memory\":{\"total\":5,\"gpu\":9},\"process_count\":2,\"test_count\":3,"
	        "\"timestamp\":\"1970-01-01T00:00:00Z\",\"version\":1}";
	struct baseline b;
	char err[512];
	assert_int_equal(baseline_parse(&b, text, strlen(text), "u.json", err, sizeof(err)),
	                 BASELINE_OK);
	assert_true(b.have[MEM_TOTAL]);
	assert_false(b.have[MEM_BINARY]);
	assert_null(b.gate_version);
	assert_int_equal(b.timestamp, 0);
	baseline_clear(&b);
}

static void test_baseline__read_file(void **state)
{
	struct fixture *fx = *state;
	struct baseline b;
	char p[512];

	/* missing: not an error */
	assert_int_equal(baseline_read_file(&b, fx->path, fx->err, sizeof(fx->err)),
	                 BASELINE_MISSING);
	assert_non_null(strstr(fx->err, "no baseline at"));
	assert_non_null(strstr(fx->err, fx->path));

	/* a directory */
	snprintf(p, sizeof(p), "%s/adir", fx->dir);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(baseline_read_file(&b, p, fx->err, sizeof(fx->err)), BASELINE_ERROR);
	assert_non_null(strstr(fx->err, p));
	assert_non_null(strstr(fx->err, "is a directory"));

	/* a FIFO must not block the reader */
	snprintf(p, sizeof(p), "%s/fifo", fx->dir);
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(baseline_read_file(&b, p, fx->err, sizeof(fx->err)), BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "not a regular file"));

	/* more than the cap (sparse, so it costs no disk) */
	snprintf(p, sizeof(p), "%s/huge.json", fx->dir);
	int fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, BASELINE_FILE_MAX + 1), 0);
	close(fd);
	assert_int_equal(baseline_read_file(&b, p, fx->err, sizeof(fx->err)), BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "more than the"));

	/* a corrupt file: the message names it */
	snprintf(p, sizeof(p), "%s/bad.json", fx->dir);
	write_all(p, "{\"version\": 1, \"memory\": {");
	assert_int_equal(baseline_read_file(&b, p, fx->err, sizeof(fx->err)), BASELINE_ERROR);
	assert_true(strncmp(fx->err, p, strlen(p)) == 0);

	/* a parent that is a file */
	snprintf(p, sizeof(p), "%s/bad.json/x.json", fx->dir);
	assert_int_equal(baseline_read_file(&b, p, fx->err, sizeof(fx->err)), BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "Not a directory"));

	/* and a good one */
	snprintf(p, sizeof(p), "%s/good.json", fx->dir);
	write_all(p, valid_text());
	assert_int_equal(baseline_read_file(&b, p, fx->err, sizeof(fx->err)), BASELINE_OK);
	assert_int_equal(b.mem[MEM_TOTAL], 5);
	baseline_clear(&b);
}

/* The first write creates .gate/; a second replaces the file; no temp file is left. */
static void test_baseline__write_and_replace(void **state)
{
	struct fixture *fx = *state;
	struct baseline b;
	char gate_dir[300];
	snprintf(gate_dir, sizeof(gate_dir), "%s/.gate", fx->dir);
	assert_int_equal(baseline_write(fx->path, &fx->b, 0, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_int_equal(baseline_read_file(&b, fx->path, fx->err, sizeof(fx->err)), BASELINE_OK);
	assert_int_equal(b.test_count, 42);
	baseline_clear(&b);
	struct stat st;
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	fx->b.test_count = 43;
	assert_int_equal(baseline_write(fx->path, &fx->b, 0, fx->err, sizeof(fx->err)),
	                 BASELINE_OK);
	assert_int_equal(baseline_read_file(&b, fx->path, fx->err, sizeof(fx->err)), BASELINE_OK);
	assert_int_equal(b.test_count, 43);
	baseline_clear(&b);
	assert_int_equal(temp_files_in(gate_dir), 0);

	/* the file on disk is exactly baseline_format's text */
	char *want, *got;
	size_t wl, gl;
	assert_int_equal(baseline_format(&want, &wl, &fx->b, fx->err, sizeof(fx->err)), 0);
	got = read_all(fx->path, &gl);
	assert_int_equal(gl, wl);
	assert_memory_equal(got, want, wl);
	free(want);
	free(got);
}

/* A file the gate cannot read (corrupt, truncated, newer) is never replaced silently: the
 * write fails, names the file and why, and leaves it byte for byte; FORCE replaces it. */
static void test_baseline__never_overwrites_unreadable(void **state)
{
	struct fixture *fx = *state;
	const char *olds[] = {
	        "{\"version\": 1, \"memory\": {\"total\": 1", /* truncated */
	        "garbage\n",
	        "{\"version\": 7, \"layout\": \"new\"}\n", /* a newer gate's */
	        "",
	};
	char gate_dir[300];
	snprintf(gate_dir, sizeof(gate_dir), "%s/.gate", fx->dir);
	mkdir(gate_dir, 0755);
	for (size_t i = 0; i < sizeof(olds) / sizeof(olds[0]); i++) {
		write_all(fx->path, olds[i]);
		assert_int_equal(baseline_write(fx->path, &fx->b, 0, fx->err, sizeof(fx->err)),
		                 BASELINE_ERROR);
		assert_non_null(strstr(fx->err, "refusing to overwrite"));
		assert_non_null(strstr(fx->err, fx->path));
		if (i == 2)
			assert_non_null(strstr(fx->err, "newer gate"));
		size_t len;
		char *now = read_all(fx->path, &len);
		assert_int_equal(len, strlen(olds[i]));
		assert_memory_equal(now, olds[i], len);
		free(now);
		assert_int_equal(temp_files_in(gate_dir), 0);
	}
	assert_int_equal(
	        baseline_write(fx->path, &fx->b, BASELINE_WRITE_FORCE, fx->err, sizeof(fx->err)),
	        BASELINE_OK);
	struct baseline b;
	assert_int_equal(baseline_read_file(&b, fx->path, fx->err, sizeof(fx->err)), BASELINE_OK);
	baseline_clear(&b);
}

/* A directory at the path is refused, even when forced, and left alone. */
static void test_baseline__write_to_directory(void **state)
{
	struct fixture *fx = *state;
	char inner[300];
	snprintf(inner, sizeof(inner), "%s/keep", fx->path);
	assert_int_equal(mkdir(fx->dir, 0755) == 0 || errno == EEXIST, 1);
	char gate_dir[300];
	snprintf(gate_dir, sizeof(gate_dir), "%s/.gate", fx->dir);
	assert_int_equal(mkdir(gate_dir, 0755), 0);
	assert_int_equal(mkdir(fx->path, 0755), 0);
	write_all(inner, "x");
	assert_int_equal(
	        baseline_write(fx->path, &fx->b, BASELINE_WRITE_FORCE, fx->err, sizeof(fx->err)),
	        BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "is a directory"));
	assert_int_equal(access(inner, F_OK), 0);
	assert_int_equal(temp_files_in(gate_dir), 0);

	/* a path ending in "/" names no file */
	char slash[300];
	snprintf(slash, sizeof(slash), "%s/x/", fx->dir);
	assert_int_equal(baseline_write(slash, &fx->b, 0, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	/* a parent that is a file */
	char under_file[300];
	snprintf(under_file, sizeof(under_file), "%s/file", fx->dir);
	write_all(under_file, "x");
	snprintf(under_file, sizeof(under_file), "%s/file/b.json", fx->dir);
	assert_int_equal(baseline_write(under_file, &fx->b, 0, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_int_equal(baseline_write("", &fx->b, 0, fx->err, sizeof(fx->err)), BASELINE_ERROR);
}

/* Runs baseline_write in a child whose files may not grow past fsize bytes (so that the
 * write fails even for root), and returns its rc with its message in err. */
static int write_limited(const char *path, const struct baseline *b, rlim_t fsize, char *err,
                         size_t errlen)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char e[1024] = "";
		struct rlimit rl = {fsize, fsize};
		close(pfd[0]);
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(4);
		int rc = baseline_write(path, b, 0, e, sizeof(e));
		if (write(pfd[1], e, strlen(e)) < 0)
			_exit(5);
		_exit(rc == BASELINE_OK ? 0 : 1);
	}
	close(pfd[1]);
	size_t n = 0;
	ssize_t k;
	while (n + 1 < errlen && (k = read(pfd[0], err + n, errlen - 1 - n)) > 0)
		n += (size_t)k;
	err[n] = '\0';
	close(pfd[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_true(WEXITSTATUS(status) <= 1);
	return WEXITSTATUS(status) == 0 ? BASELINE_OK : BASELINE_ERROR;
}

/* A write that fails half-way (file size limit; a read-only directory when not root) reports
 * why, leaves the old file byte for byte and no temp file. */
static void test_baseline__write_fails_keeps_old(void **state)
{
	struct fixture *fx = *state;
	char gate_dir[300];
	snprintf(gate_dir, sizeof(gate_dir), "%s/.gate", fx->dir);
	assert_int_equal(baseline_write(fx->path, &fx->b, 0, fx->err, sizeof(fx->err)), 0);
	size_t l1, l2;
	char *before = read_all(fx->path, &l1), *after;

	fx->b.test_count = 1;
	assert_int_equal(write_limited(fx->path, &fx->b, 100, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_non_null(strstr(fx->err, "cannot write the temp file"));
	assert_non_null(strstr(fx->err, "File too large"));
	after = read_all(fx->path, &l2);
	assert_int_equal(l1, l2);
	assert_memory_equal(before, after, l1);
	free(after);
	assert_int_equal(temp_files_in(gate_dir), 0);

	/* the directories made for a failed write are removed again */
	char nested[300], made[300];
	snprintf(nested, sizeof(nested), "%s/new/deeper/b.json", fx->dir);
	snprintf(made, sizeof(made), "%s/new", fx->dir);
	assert_int_equal(write_limited(nested, &fx->b, 100, fx->err, sizeof(fx->err)),
	                 BASELINE_ERROR);
	assert_int_equal(access(made, F_OK), -1);

	if (geteuid() != 0) {
		assert_int_equal(chmod(gate_dir, 0555), 0);
		assert_int_equal(baseline_write(fx->path, &fx->b, 0, fx->err, sizeof(fx->err)),
		                 BASELINE_ERROR);
		assert_non_null(strstr(fx->err, "cannot create a temp file"));
		chmod(gate_dir, 0755);
		after = read_all(fx->path, &l2);
		assert_int_equal(l1, l2);
		assert_memory_equal(before, after, l1);
		free(after);
	}
	free(before);
}

/* ---- allocation failures inside jansson ---- */

static long alloc_budget = -1; /* allocations left before failing; < 0: never fail */

static void *counting_malloc(size_t n)
{
	if (alloc_budget == 0)
		return NULL;
	if (alloc_budget > 0)
		alloc_budget--;
	return malloc(n);
}

/* Every allocation jansson makes fails in turn: parse and format return errors, never
 * crash or leak (ASan checks the leaks). */
static void test_baseline__jansson_oom(void **state)
{
	struct fixture *fx = *state;
	char *text;
	size_t len;
	assert_int_equal(baseline_format(&text, &len, &fx->b, fx->err, sizeof(fx->err)), 0);
	json_set_alloc_funcs(counting_malloc, free);
	int parse_failures = 0, format_failures = 0;
	for (long n = 0; n < 2000; n++) {
		struct baseline b;
		alloc_budget = n;
		int rc = baseline_parse(&b, text, len, "oom.json", fx->err, sizeof(fx->err));
		alloc_budget = -1;
		if (rc == BASELINE_OK) {
			baseline_clear(&b);
			break;
		}
		parse_failures++;
		assert_null(b.ets);
	}
	for (long n = 0; n < 2000; n++) {
		char *t = NULL;
		alloc_budget = n;
		int rc = baseline_format(&t, NULL, &fx->b, fx->err, sizeof(fx->err));
		alloc_budget = -1;
		if (rc == BASELINE_OK) {
			assert_string_equal(t, text);
			free(t);
			break;
		}
		format_failures++;
		assert_null(t);
	}
	json_set_alloc_funcs(malloc, free);
	assert_true(parse_failures > 5);
	assert_true(format_failures > 5);
	free(text);
}

int main(void)
{
	setenv("LC_ALL", "C", 1);
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_baseline__format_golden, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__roundtrip, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__format_bad_utf8, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__json_object, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__format_refuses_unreadable, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__truncated, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__corrupt, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__future_version, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__wrong_types, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__unknown_keys, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__read_file, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__write_and_replace, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__never_overwrites_unreadable, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__write_to_directory, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__write_fails_keeps_old, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_baseline__jansson_oom, setup, teardown),
	};
	return cmocka_run_group_tests_name("baseline", tests, NULL, NULL);
}
