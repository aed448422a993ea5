/* tests/test_units.c: unit tests for durations, sizes and percentages (gate/config/units.c):
 * the grammar, its refusals and their messages, and that gate.toml and the command line
 * (gate run --test-timeout, --boot-timeout, --sample) accept and refuse alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/cmd/cli.h"
#include "gate/config/config.h"
#include "gate/config/interval.h"
#include "gate/config/units.h"

#define MIN UNITS_TIMEOUT_MIN_MS
#define MAX UNITS_TIMEOUT_MAX_MS
#define DUR_RANGE "use a duration above 0 and at most 24 h, e.g. \"90 s\""
#define DUR_UNITS "use ms, s, sec, m, min or h"
#define DUR_FIX                                                                                    \
	"write a number and a unit, e.g. \"90 s\" (units: ms, s, sec, m, min, h; a number alone "  \
	"is seconds)"

/* s must parse as a timeout of want ms. */
static void duration_ok(const char *s, int64_t want)
{
	char err[256] = "";
	int64_t ms = -1;

	if (units_parse_duration(s, MIN, MAX, &ms, err, sizeof(err)) != 0 || ms != want)
		fail_msg("\"%s\": %lld ms (%s), want %lld", s, (long long)ms, err, (long long)want);
}

/* s must be refused as a timeout with exactly want, *out untouched. */
static void duration_err(const char *s, const char *want)
{
	char err[256] = "";
	int64_t ms = 7;

	if (units_parse_duration(s, MIN, MAX, &ms, err, sizeof(err)) != -1 || ms != 7 ||
	    strcmp(err, want) != 0)
		fail_msg("\"%s\": got %lld ms, \"%s\"\n want \"%s\"", s, (long long)ms, err, want);
}

static void test_durations_accepted(void **state)
{
	(void)state;
	/* every spelling gate.toml or the command line took before they shared one grammar */
	duration_ok("90 s", 90000);
	duration_ok("90s", 90000);
	duration_ok("90", 90000); /* a number alone is seconds */
	duration_ok("1.5", 1500);
	duration_ok("30min", 1800000);
	duration_ok("30 min", 1800000);
	duration_ok("30m", 1800000);
	duration_ok("30 sec", 30000);
	duration_ok("250ms", 250);
	duration_ok("2h", 7200000);
	duration_ok("24 h", 86400000);
	duration_ok("86400", 86400000);
	duration_ok(" 3 s ", 3000);
	duration_ok("3\ts", 3000);
	duration_ok("+5", 5000);
	duration_ok(".5 s", 500);
	duration_ok("5.", 5000);
	duration_ok("1e3", 1000000);
	duration_ok("1e3 ms", 1000);
	duration_ok("2.5E-1 min", 15000);
	duration_ok("1 ms", 1);
	duration_ok("0.5 ms", 1); /* rounded to the millisecond */
	duration_ok("0.0015", 2);
	duration_ok("00090 s", 90000);
}

static void test_durations_refused(void **state)
{
	(void)state;
	duration_err("", "\"\" is not a duration; " DUR_FIX);
	duration_err("   ", "\"   \" is not a duration; " DUR_FIX);
	duration_err("s", "\"s\" is not a duration; " DUR_FIX);
	duration_err("soon", "\"soon\" is not a duration; " DUR_FIX);
	duration_err(".", "\".\" is not a duration; " DUR_FIX);
	duration_err("nan", "\"nan\" is not a duration; " DUR_FIX);
	duration_err("inf", "\"inf\" is not a duration; " DUR_FIX);
	/* negative */
	duration_err("-5", "\"-5\" is negative; " DUR_RANGE);
	duration_err(" -1 s", "\" -1 s\" is negative; " DUR_RANGE);
	/* junk after the number */
	duration_err("5 mins", "unknown unit \"mins\" in \"5 mins\"; " DUR_UNITS);
	duration_err("5 S", "unknown unit \"S\" in \"5 S\"; " DUR_UNITS);
	duration_err("5s5", "unknown unit \"s5\" in \"5s5\"; " DUR_UNITS);
	duration_err("2parsecs", "unknown unit \"parsecs\" in \"2parsecs\"; " DUR_UNITS);
	duration_err("1.5.2 s", "unknown unit \".2 s\" in \"1.5.2 s\"; " DUR_UNITS);
	duration_err("0x10", "unknown unit \"x10\" in \"0x10\"; " DUR_UNITS);
	duration_err("1e", "unknown unit \"e\" in \"1e\"; " DUR_UNITS);
	duration_err("5 s s", "unknown unit \"s s\" in \"5 s s\"; " DUR_UNITS);
	/* range and overflow */
	duration_err("0", "\"0\" is out of range; " DUR_RANGE);
	duration_err("0 ms", "\"0 ms\" is out of range; " DUR_RANGE);
	duration_err("0.4 ms", "\"0.4 ms\" is out of range; " DUR_RANGE);
	duration_err("24.001 h", "\"24.001 h\" is out of range; " DUR_RANGE);
	duration_err("86401", "\"86401\" is out of range; " DUR_RANGE);
	duration_err("1e999", "\"1e999\" is out of range; " DUR_RANGE);
	duration_err("1e-999 s", "\"1e-999 s\" is out of range; " DUR_RANGE);
	duration_err("9223372036854775807 h",
	             "\"9223372036854775807 h\" is out of range; " DUR_RANGE);
	duration_err("99999999999999999999 s",
	             "\"99999999999999999999 s\" has too many digits; " DUR_RANGE);
}

static void test_duration_ranges(void **state)
{
	(void)state;
	char err[256];
	int64_t ms = 0;

	assert_int_equal(units_parse_duration("5ms", 10, UNITS_MS_PER_H, &ms, err, sizeof(err)),
	                 -1);
	assert_string_equal(
	        err, "\"5ms\" is out of range; use a duration from 10 ms to 1 h, e.g. \"90 s\"");
	assert_int_equal(units_parse_duration("2h", 10, UNITS_MS_PER_H, &ms, err, sizeof(err)), -1);
	assert_int_equal(units_parse_duration("1h", 10, UNITS_MS_PER_H, &ms, err, sizeof(err)), 0);
	assert_int_equal(ms, UNITS_MS_PER_H);
	/* the example stays inside the range */
	assert_int_equal(units_parse_duration("1 h", 1, 60000, &ms, err, sizeof(err)), -1);
	assert_string_equal(err,
	                    "\"1 h\" is out of range; use a duration above 0 and at most 1 min, "
	                    "e.g. \"1 ms\"");
	assert_int_equal(units_check_duration(0, "0 s", MIN, MAX, err, sizeof(err)), -1);
	assert_string_equal(err, "0 s is out of range; " DUR_RANGE);
	assert_int_equal(units_check_duration(MAX, "86400 s", MIN, MAX, err, sizeof(err)), 0);
	/* no err buffer: still refused */
	assert_int_equal(units_parse_duration("x", MIN, MAX, &ms, NULL, 0), -1);
	/* interval_parse (gate watch) is the same grammar */
	assert_int_equal(interval_parse("30 min", 10, MAX, &ms), 0);
	assert_int_equal(ms, 1800000);
	assert_int_equal(interval_parse("30 mins", 10, MAX, &ms), -1);
}

#define SIZE_RANGE "use a size of at least 0 B and below 2^62 bytes, e.g. \"1 MB\""

static void test_sizes(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t bytes;
	} ok[] = {
	        {"0 B", 0},
	        {"3B", 3},
	        {"512 kB", 512000},
	        {"1 KB", 1000},
	        {"64 MB", 64000000},
	        {"1 GB", 1000000000},
	        {"64 KiB", 65536},
	        {"1 MiB", 1048576},
	        {"2 GiB", 2147483648},
	        {"1.5 KiB", 1536},
	        {"1e3 B", 1000},
	        {" +2 MB ", 2000000},
	        {"4294967295 GiB", INT64_C(4611686017353646080)},
	};
	static const struct {
		const char *s, *err;
	} bad[] = {
	        {"", "\"\" is not a size; " UNITS_SIZE_FIX},
	        {"MB", "\"MB\" is not a size; " UNITS_SIZE_FIX},
	        {"-1 MB", "\"-1 MB\" is negative; " SIZE_RANGE},
	        {"1000",
	         "\"1000\" has no unit; add one of B, kB, MB, GB, KiB, MiB, GiB, e.g. \"1000 "
	         "MB\" (an integer without quotes means bytes)"},
	        {"1 mb", "unknown unit \"mb\" in \"1 mb\"; use B, kB, MB, GB (1000^n) or KiB, MiB, "
	                 "GiB (1024^n)"},
	        {"1 MBs", "unknown unit \"MBs\" in \"1 MBs\"; use B, kB, MB, GB (1000^n) or KiB, "
	                  "MiB, GiB (1024^n)"},
	        {"1.5 B", "\"1.5 B\" is not a whole number of bytes; round it"},
	        {"1e-30 GB", "\"1e-30 GB\" is not a whole number of bytes; round it"},
	        {"4294967296 GiB", "\"4294967296 GiB\" is out of range; " SIZE_RANGE},
	        {"1e30 B", "\"1e30 B\" is out of range; " SIZE_RANGE},
	        {"99999999999999999999 B",
	         "\"99999999999999999999 B\" has too many digits; " SIZE_RANGE},
	};
	char err[256];
	int64_t n;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		n = -1;
		if (units_parse_size(ok[i].s, &n, err, sizeof(err)) != 0 || n != ok[i].bytes)
			fail_msg("\"%s\": %lld bytes, want %lld", ok[i].s, (long long)n,
			         (long long)ok[i].bytes);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 7;
		if (units_parse_size(bad[i].s, &n, err, sizeof(err)) != -1 || n != 7 ||
		    strcmp(err, bad[i].err) != 0)
			fail_msg("\"%s\": \"%s\"\n want \"%s\"", bad[i].s, err, bad[i].err);
	}
	assert_int_equal(units_check_size(-1, "-1 bytes", err, sizeof(err)), -1);
	assert_string_equal(err, "-1 bytes is out of range; " SIZE_RANGE);
	assert_int_equal(units_check_size(UNITS_SIZE_LIMIT - 1, "x", err, sizeof(err)), 0);
}

static void test_percentages(void **state)
{
	(void)state;
	char err[256];
	double pct = -1;

	assert_int_equal(units_parse_percent("10 %", &pct, err, sizeof(err)), 0);
	assert_true(pct == 10.0);
	assert_int_equal(units_parse_percent(" 2.5% ", &pct, err, sizeof(err)), 0);
	assert_true(pct == 2.5);
	/* percentages keep their strict numbers: no exponent, no sign */
	assert_int_equal(units_parse_percent("1e3 %", &pct, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown unit \"e3 %\" in \"1e3 %\"; percentages end in %");
	assert_int_equal(units_parse_percent("+1 %", &pct, err, sizeof(err)), -1);
	assert_int_equal(units_parse_percent("10", &pct, err, sizeof(err)), -1);
	assert_string_equal(err, "\"10\" has no % sign; write \"10 %\"");
	assert_int_equal(units_check_percent(-1, err, sizeof(err)), -1);
	assert_string_equal(err, "-1 % is out of range; use a finite percentage of 0 or more, e.g. "
	                         "\"10 %\"");
}

/* ---- the command line and gate.toml alike ---- */

/* Runs gate with args (stdout and stderr captured, stderr into err); the exit code. */
static int run_cli(const char *const *args, char *err, size_t errlen)
{
	char *argv[16];
	int argc = 0;
	FILE *out = tmpfile(), *errf = tmpfile();
	int saved_out = dup(1), saved_err = dup(2);

	assert_non_null(out);
	assert_non_null(errf);
	for (; args[argc]; argc++)
		argv[argc] = (char *)args[argc];
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(out), 1);
	dup2(fileno(errf), 2);
	int rc = cli_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	rewind(errf);
	size_t n = fread(err, 1, errlen - 1, errf);
	err[n] = '\0';
	fclose(out);
	fclose(errf);
	return rc;
}

/* gate.toml's message for test_timeout = "value", without its "t.toml:2:16: key: " prefix. */
static const char *toml_message(const char *value, char *buf, size_t n)
{
	char text[256];
	struct config cfg = {0};

	snprintf(text, sizeof(text), "[node]\ntest_timeout = \"%s\"\n", value);
	if (config_load_text(&cfg, text, strlen(text), "t.toml", buf, n) == 0) {
		config_clear(&cfg);
		return NULL;
	}
	config_clear(&cfg);
	const char *prefix = "t.toml:2:16: node.test_timeout: ";
	assert_int_equal(strncmp(buf, prefix, strlen(prefix)), 0);
	return buf + strlen(prefix);
}

static void test_cli_and_toml_alike(void **state)
{
	(void)state;
	static const char *const values[] = {
	        "30min", "30 min", "1800", "90s", "2h",  "250ms", "24 h", "1.5",   /* accepted */
	        "soon",  "5 mins", "0",    "-5",  "25h", "",      "0x10", "1e999", /* refused */
	};
	static const char *const options[] = {"--test-timeout", "--boot-timeout"};

	for (size_t o = 0; o < 2; o++) {
		for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
			const char *args[] = {"gate", "run", options[o], values[i], "--help", NULL};
			char err[1024], tomlbuf[512], want[1024];
			const char *toml = toml_message(values[i], tomlbuf, sizeof(tomlbuf));
			int rc = run_cli(args, err, sizeof(err));

			if (!toml) {
				if (rc != 0)
					fail_msg("%s %s: refused (%s), gate.toml takes it",
					         options[o], values[i], err);
				continue;
			}
			snprintf(want, sizeof(want), "gate: error: %s %s: %s\n", options[o],
			         values[i], toml);
			if (rc != 2 || strncmp(err, want, strlen(want)) != 0)
				fail_msg("%s %s: rc %d, stderr:\n%s\nwant:\n%s", options[o],
				         values[i], rc, err, want);
		}
	}
}

static void test_cli_sample(void **state)
{
	(void)state;
	char err[1024];
	const char *bad[] = {"gate", "run", "--sample", "2parsecs", NULL};
	const char *small[] = {"gate", "run", "--sample", "5ms", NULL};
	const char *ok[] = {"gate", "run", "--sample", "250 ms", "--help", NULL};

	assert_int_equal(run_cli(bad, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "gate: error: --sample 2parsecs: expected an interval: unknown "
	                            "unit \"parsecs\" in \"2parsecs\"; " DUR_UNITS "\n"));
	assert_int_equal(run_cli(small, err, sizeof(err)), 2);
	assert_non_null(strstr(err,
	                       "--sample 5ms: expected an interval: \"5ms\" is out of range; use "
	                       "a duration from 10 ms to 1 h"));
	assert_int_equal(run_cli(ok, err, sizeof(err)), 0);
}

/* gate watch's --floor and --margin take gate.toml's spellings of a size and a percentage */
static void test_cli_watch_floor_margin(void **state)
{
	(void)state;
	static const char *const good[][2] = {
	        {"--floor", "1000000"}, {"--floor", "1MB"},  {"--floor", "2 MiB"},
	        {"--floor", "0"},       {"--margin", "20"},  {"--margin", "20%"},
	        {"--margin", "2.5 %"},  {"--margin", "1e2"},
	};
	static const char *const bad[][3] = {
	        {"--floor", "-5", "out of range"},
	        {"--floor", "abc", "is not a size"},
	        {"--floor", "5 parsecs", "unknown unit"},
	        {"--margin", "x", "is not a percentage"},
	        {"--margin", "-3", "out of range"},
	        {"--margin", "200001", "above 100000 %"},
	        {"--margin", "20 px", "percentages end in %"},
	};
	char err[1024];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *args[] = {"gate", "watch", good[i][0], good[i][1], "--help", NULL};
		if (run_cli(args, err, sizeof(err)) != 0)
			fail_msg("%s %s refused: %s", good[i][0], good[i][1], err);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = {"gate", "watch", bad[i][0], bad[i][1], "--help", NULL};
		char want[128];
		snprintf(want, sizeof(want), "gate: error: %s %s: ", bad[i][0], bad[i][1]);
		assert_int_equal(run_cli(args, err, sizeof(err)), 2);
		if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, bad[i][2]))
			fail_msg("%s %s: %s", bad[i][0], bad[i][1], err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_durations_accepted),
	        cmocka_unit_test(test_durations_refused),
	        cmocka_unit_test(test_duration_ranges),
	        cmocka_unit_test(test_sizes),
	        cmocka_unit_test(test_percentages),
	        cmocka_unit_test(test_cli_and_toml_alike),
	        cmocka_unit_test(test_cli_sample),
	        cmocka_unit_test(test_cli_watch_floor_margin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
