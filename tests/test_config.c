/* tests/test_config.c: unit tests for gate.toml loading, checking and printing (gate/config.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/config.h"
#include "gate/toml.h"

/* ---- helpers ---- */

static void load_ok(struct config *cfg, const char *text)
{
	char err[512];

	if (config_load_text(cfg, text, strlen(text), "t.toml", err, sizeof(err)) != 0)
		fail_msg("load failed: %s\n--- input:\n%s", err, text);
}

static void assert_config_equal(const struct config *a, const struct config *b)
{
	assert_string_equal(a->mix_env, b->mix_env);
	assert_string_equal(a->erl_flags, b->erl_flags);
	assert_int_equal(a->boot_timeout_ms, b->boot_timeout_ms);
	assert_int_equal(a->rpc_timeout_ms, b->rpc_timeout_ms);
	assert_int_equal(a->test_timeout_ms, b->test_timeout_ms);
	assert_int_equal(a->stop_timeout_ms, b->stop_timeout_ms);
	assert_string_equal(a->junit, b->junit);
	assert_int_equal(a->growth.live_totals, b->growth.live_totals);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		const struct growth_limit *x = &a->growth.cat[c], *y = &b->growth.cat[c];
		if (x->enabled != y->enabled || x->max_pct != y->max_pct ||
		    x->floor_bytes != y->floor_bytes)
			fail_msg("growth.%s: enabled %d max %.17g floor %lld, want enabled %d max "
				 "%.17g floor %lld",
				 mem_cat_name((enum mem_cat)c), x->enabled, x->max_pct,
				 (long long)x->floor_bytes, y->enabled, y->max_pct,
				 (long long)y->floor_bytes);
	}
}

static void assert_is_defaults(const struct config *cfg)
{
	struct config def;

	assert_int_equal(config_default(&def), 0);
	assert_config_equal(cfg, &def);
	assert_string_equal(cfg->source, "defaults");
	config_clear(&def);
}

/* text must fail with exactly want, leaving the defaults in cfg. */
static void load_err(const char *text, const char *want)
{
	struct config cfg = {0};
	char err[512];

	int rc = config_load_text(&cfg, text, strlen(text), "t.toml", err, sizeof(err));
	if (rc != -1 || strcmp(err, want) != 0)
		fail_msg("input:\n%s\n--- want: %s\n--- got (rc %d): %s", text, want, rc,
			 rc ? err : "(loaded)");
	assert_is_defaults(&cfg);
	config_clear(&cfg);
}

/* "<table>\n<key> = <value>\n", loaded. */
static void load_kv(struct config *cfg, const char *table, const char *key, const char *value)
{
	char text[512];

	snprintf(text, sizeof(text), "%s\n%s = %s\n", table, key, value);
	load_ok(cfg, text);
}

static char *print_to_string(const struct config *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	config_print(cfg, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* ---- defaults ---- */

static void test_defaults(void **state)
{
	(void)state;
	struct config cfg = {0};
	struct growth_config g;

	assert_int_equal(config_default(&cfg), 0);
	assert_string_equal(cfg.mix_env, "test");
	assert_string_equal(cfg.erl_flags, "");
	assert_int_equal(cfg.boot_timeout_ms, 120000);
	assert_int_equal(cfg.rpc_timeout_ms, 60000);
	assert_int_equal(cfg.test_timeout_ms, 30 * 60000);
	assert_int_equal(cfg.stop_timeout_ms, 10000);
	assert_string_equal(cfg.junit, "_build/gate/junit.xml");
	assert_string_equal(cfg.source, "defaults");
	growth_config_default(&g);
	assert_int_equal(cfg.growth.live_totals, g.live_totals);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		assert_int_equal(cfg.growth.cat[c].enabled, g.cat[c].enabled);
		assert_true(cfg.growth.cat[c].max_pct == g.cat[c].max_pct);
		assert_int_equal(cfg.growth.cat[c].floor_bytes, g.cat[c].floor_bytes);
	}
	config_clear(&cfg);
	assert_null(cfg.mix_env);
	config_clear(&cfg); /* twice is fine */
	config_clear(NULL);
}

static void test_empty_text_is_defaults(void **state)
{
	(void)state;
	struct config cfg = {0}, def;
	const char *texts[] = {"", "\n", "# nothing but comments\n\n# here\n", "[node]\n[output]\n[growth]\n"};

	assert_int_equal(config_default(&def), 0);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		load_ok(&cfg, texts[i]);
		assert_config_equal(&cfg, &def);
		assert_string_equal(cfg.source, "t.toml");
		config_clear(&cfg);
	}
	config_clear(&def);
}

/* What gate/cli.c and gate/run.c do: defaults first, then a load (or two) replacing them. */
static void test_load_replaces_what_cfg_held(void **state)
{
	(void)state;
	struct config cfg;
	char err[512];

	assert_int_equal(config_default(&cfg), 0);
	load_ok(&cfg, "[node]\nmix_env = \"first\"\nboot_timeout = 1\n");
	assert_string_equal(cfg.mix_env, "first");
	/* a second load starts from the defaults again, not from the first file */
	load_ok(&cfg, "[output]\njunit = \"x.xml\"\n");
	assert_string_equal(cfg.mix_env, "test");
	assert_int_equal(cfg.boot_timeout_ms, 120000);
	assert_string_equal(cfg.junit, "x.xml");
	/* a failed one leaves the defaults */
	assert_int_equal(config_load_text(&cfg, "x = 1", 5, "t.toml", err, sizeof(err)), -1);
	assert_is_defaults(&cfg);
	assert_int_equal(config_load(&cfg, "/nonexistent/gate.toml", err, sizeof(err)), -1);
	assert_is_defaults(&cfg);
	config_clear(&cfg);
}

/* ---- every key ---- */

static void test_every_key(void **state)
{
	(void)state;
	struct config cfg = {0};

	load_ok(&cfg, "[node]\n"
		      "mix_env = \"ci\"\n"
		      "erl_flags = \"+S 4 +A 8\"\n"
		      "boot_timeout = \"2 min\"\n"
		      "rpc_timeout = 5\n"
		      "test_timeout = \"1 h\"\n"
		      "stop_timeout = \"500 ms\"\n"
		      "\n"
		      "[output]\n"
		      "junit = \"out/junit.xml\"\n"
		      "\n"
		      "[growth]\n"
		      "max = \"20 %\"\n"
		      "floor = \"2 MB\"\n"
		      "live_totals = false\n"
		      "\n"
		      "[growth.binary]\n"
		      "enabled = false\n"
		      "max = 2.5\n"
		      "floor = 4096\n"
		      "\n"
		      "[growth.ets]\n"
		      "max = 0\n");
	assert_string_equal(cfg.mix_env, "ci");
	assert_string_equal(cfg.erl_flags, "+S 4 +A 8");
	assert_int_equal(cfg.boot_timeout_ms, 120000);
	assert_int_equal(cfg.rpc_timeout_ms, 5000);
	assert_int_equal(cfg.test_timeout_ms, 3600000);
	assert_int_equal(cfg.stop_timeout_ms, 500);
	assert_string_equal(cfg.junit, "out/junit.xml");
	assert_false(cfg.growth.live_totals);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		const struct growth_limit *l = &cfg.growth.cat[c];
		if (c == MEM_BINARY) {
			assert_false(l->enabled);
			assert_true(l->max_pct == 2.5);
			assert_int_equal(l->floor_bytes, 4096);
		} else if (c == MEM_ETS) {
			assert_true(l->enabled);
			assert_true(l->max_pct == 0.0);
			assert_int_equal(l->floor_bytes, 2000000);
		} else {
			/* processes and atom are off by default; [growth] max/floor do not enable */
			assert_int_equal(l->enabled, c != MEM_PROCESSES && c != MEM_ATOM);
			assert_true(l->max_pct == 20.0);
			assert_int_equal(l->floor_bytes, 2000000);
		}
	}
	assert_string_equal(cfg.source, "t.toml");
	config_clear(&cfg);
}

static void test_dotted_and_inline_forms(void **state)
{
	(void)state;
	struct config cfg = {0};

	load_ok(&cfg, "node = { mix_env = \"dev\", boot_timeout = 7 }\n"
		      "output.junit = 'j.xml'\n"
		      "growth.code.max = \"1 %\"\n"
		      "growth.atom = { enabled = false }\n");
	assert_string_equal(cfg.mix_env, "dev");
	assert_int_equal(cfg.boot_timeout_ms, 7000);
	assert_string_equal(cfg.junit, "j.xml");
	assert_true(cfg.growth.cat[MEM_CODE].max_pct == 1.0);
	assert_false(cfg.growth.cat[MEM_ATOM].enabled);
	assert_true(cfg.growth.cat[MEM_ATOM_USED].enabled);
	config_clear(&cfg);
}

/* ---- value syntax ---- */

static void test_durations(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		int ms;
	} cases[] = {
		{"120", 120000},	 {"1", 1000},	      {"86399", 86399000},
		{"\"500 ms\"", 500},	 {"\"1 ms\"", 1},     {"\"90 s\"", 90000},
		{"\"90s\"", 90000},	 {"\"2 min\"", 120000}, {"\"2min\"", 120000},
		{"\"1 h\"", 3600000},	 {"\"23 h\"", 23 * 3600000},
		{"\"1.5 s\"", 1500},	 {"\"0.25 min\"", 15000}, {"\"1.000 s\"", 1000},
		{"\"0.001 s\"", 1},	 {"\" 3 s \"", 3000},	 {"\"3  s\"", 3000},
		{"\"86399999 ms\"", 86399999},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config cfg = {0};
		load_kv(&cfg, "[node]", "boot_timeout", cases[i].value);
		if (cfg.boot_timeout_ms != cases[i].ms)
			fail_msg("%s: %d ms, want %d", cases[i].value, cfg.boot_timeout_ms,
				 cases[i].ms);
		config_clear(&cfg);
	}
}

static void test_sizes(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		int64_t bytes;
	} cases[] = {
		{"0", 0},
		{"4096", 4096},
		{"4611686018427387903", INT64_C(4611686018427387903)},
		{"\"3 B\"", 3},
		{"\"0 B\"", 0},
		{"\"512 kB\"", 512000},
		{"\"1 KB\"", 1000},
		{"\"64 MB\"", 64000000},
		{"\"1 GB\"", 1000000000},
		{"\"1 MiB\"", 1048576},
		{"\"64 KiB\"", 65536},
		{"\"2 GiB\"", INT64_C(2147483648)},
		{"\"1.5 MB\"", 1500000},
		{"\"1.5 KiB\"", 1536},
		{"\"0.001 kB\"", 1},
		{"\"1MB\"", 1000000},
		{"\"4294967295 GiB\"", INT64_C(4611686017353646080)},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config cfg = {0};
		load_kv(&cfg, "[growth.code]", "floor", cases[i].value);
		if (cfg.growth.cat[MEM_CODE].floor_bytes != cases[i].bytes)
			fail_msg("%s: %lld bytes, want %lld", cases[i].value,
				 (long long)cfg.growth.cat[MEM_CODE].floor_bytes,
				 (long long)cases[i].bytes);
		config_clear(&cfg);
	}
}

static void test_percentages(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		double pct;
	} cases[] = {
		{"10", 10.0},	      {"0", 0.0},	       {"2.5", 2.5},
		{"1e3", 1000.0},      {"\"10 %\"", 10.0},     {"\"10%\"", 10.0},
		{"\"2.5 %\"", 2.5},   {"\"0.1 %\"", 0.1},     {"\"0 %\"", 0.0},
		{"\"150 %\"", 150.0}, {"\" 7 % \"", 7.0},     {"-0.0", 0.0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config cfg = {0};
		load_kv(&cfg, "[growth.ets]", "max", cases[i].value);
		if (cfg.growth.cat[MEM_ETS].max_pct != cases[i].pct ||
		    signbit(cfg.growth.cat[MEM_ETS].max_pct))
			fail_msg("%s: %.17g %%, want %.17g", cases[i].value,
				 cfg.growth.cat[MEM_ETS].max_pct, cases[i].pct);
		config_clear(&cfg);
	}
}

/* ---- precedence ---- */

static void test_growth_precedence(void **state)
{
	(void)state;
	struct config cfg = {0}, def;

	assert_int_equal(config_default(&def), 0);

	/* [growth] written after [growth.code]: the category still wins */
	load_ok(&cfg, "[growth.code]\nmax = \"50 %\"\n[growth]\nmax = \"5 %\"\nfloor = \"2 MB\"\n");
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		assert_true(cfg.growth.cat[c].max_pct == (c == MEM_CODE ? 50.0 : 5.0));
		assert_int_equal(cfg.growth.cat[c].floor_bytes, 2000000);
	}
	config_clear(&cfg);

	/* and before it */
	load_ok(&cfg, "[growth]\nfloor = 0\n[growth.system]\nfloor = \"3 MB\"\nenabled = false\n");
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		assert_int_equal(cfg.growth.cat[c].floor_bytes, c == MEM_SYSTEM ? 3000000 : 0);
		assert_int_equal(cfg.growth.cat[c].enabled,
				 def.growth.cat[c].enabled && c != MEM_SYSTEM);
		assert_true(cfg.growth.cat[c].max_pct == def.growth.cat[c].max_pct);
	}
	config_clear(&cfg);

	/* a category that sets only floor takes [growth] max, and the reverse */
	load_ok(&cfg, "growth.binary.floor = 1\ngrowth.max = 3\ngrowth.floor = 7\ngrowth.ets.max = 9\n");
	assert_true(cfg.growth.cat[MEM_BINARY].max_pct == 3.0);
	assert_int_equal(cfg.growth.cat[MEM_BINARY].floor_bytes, 1);
	assert_true(cfg.growth.cat[MEM_ETS].max_pct == 9.0);
	assert_int_equal(cfg.growth.cat[MEM_ETS].floor_bytes, 7);
	config_clear(&cfg);

	/* no [growth] max: categories keep their own defaults */
	load_ok(&cfg, "[growth.code]\nmax = 1\n");
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (c != MEM_CODE)
			assert_true(cfg.growth.cat[c].max_pct == def.growth.cat[c].max_pct);
	assert_true(cfg.growth.live_totals == def.growth.live_totals);
	config_clear(&cfg);
	config_clear(&def);
}

/* ---- errors ---- */

struct err_case {
	const char *in;
	const char *err;
};

static void run_cases(const struct err_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		load_err(c[i].in, c[i].err);
}

#define RUN(cases) run_cases(cases, sizeof(cases) / sizeof(cases[0]))

#define DUR_RANGE "use a duration above 0 and below 24 h, e.g. \"90 s\""
#define DUR_FIX                                                                                    \
	"write an integer number of seconds or a string such as \"90 s\" (units: ms, s, min, h)"

static void test_duration_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
		{"[node]\nboot_timeout = 0",
		 "t.toml:2:16: node.boot_timeout: 0 s is out of range; " DUR_RANGE},
		{"[node]\nboot_timeout = -5",
		 "t.toml:2:16: node.boot_timeout: -5 s is out of range; " DUR_RANGE},
		{"[node]\nrpc_timeout = 86400",
		 "t.toml:2:15: node.rpc_timeout: 86400 s is out of range; " DUR_RANGE},
		{"[node]\ntest_timeout = \"24 h\"",
		 "t.toml:2:16: node.test_timeout: \"24 h\" is out of range; " DUR_RANGE},
		{"[node]\ntest_timeout = \"1440 min\"",
		 "t.toml:2:16: node.test_timeout: \"1440 min\" is out of range; " DUR_RANGE},
		{"[node]\nstop_timeout = \"0 s\"",
		 "t.toml:2:16: node.stop_timeout: \"0 s\" is out of range; " DUR_RANGE},
		{"[node]\nstop_timeout = \"-5 s\"",
		 "t.toml:2:16: node.stop_timeout: \"-5 s\" is negative; " DUR_RANGE},
		{"[node]\nstop_timeout = \"99999999999999999999 s\"",
		 "t.toml:2:16: node.stop_timeout: \"99999999999999999999 s\" has too many digits; " DUR_RANGE},
		{"[node]\nboot_timeout = \"5 mins\"",
		 "t.toml:2:16: node.boot_timeout: unknown unit \"mins\" in \"5 mins\"; use ms, s, min or h"},
		{"[node]\nboot_timeout = \"5 S\"",
		 "t.toml:2:16: node.boot_timeout: unknown unit \"S\" in \"5 S\"; use ms, s, min or h"},
		{"[node]\nboot_timeout = \"90\"",
		 "t.toml:2:16: node.boot_timeout: \"90\" has no unit; add one of ms, s, min, h, e.g. "
		 "\"90 s\" (an integer without quotes also means seconds)"},
		{"[node]\nboot_timeout = \"s\"",
		 "t.toml:2:16: node.boot_timeout: \"s\" is not a duration; " DUR_FIX},
		{"[node]\nboot_timeout = \"1. s\"",
		 "t.toml:2:16: node.boot_timeout: \"1. s\" is not a duration; " DUR_FIX},
		{"[node]\nboot_timeout = \"0.5 ms\"",
		 "t.toml:2:16: node.boot_timeout: \"0.5 ms\" is not a whole number of milliseconds; "
		 "round it, e.g. to ms"},
		{"[node]\nboot_timeout = 1.5",
		 "t.toml:2:16: node.boot_timeout: expected a duration, got a float; " DUR_FIX},
		{"[node]\nboot_timeout = true",
		 "t.toml:2:16: node.boot_timeout: expected a duration, got a boolean; " DUR_FIX},
		{"[node]\nboot_timeout = [1]",
		 "t.toml:2:16: node.boot_timeout: expected a duration, got an array; " DUR_FIX},
	};
	RUN(cases);
}

#define SIZE_RANGE "use a size of at least 0 B and below 2^62 bytes, e.g. \"1 MB\""
#define SIZE_FIX                                                                                   \
	"write an integer number of bytes or a string such as \"64 MB\" (units: B, kB, MB, GB, "  \
	"KiB, MiB, GiB)"

static void test_size_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
		{"[growth]\nfloor = -1",
		 "t.toml:2:9: growth.floor: -1 bytes is out of range; " SIZE_RANGE},
		{"[growth]\nfloor = 4611686018427387904",
		 "t.toml:2:9: growth.floor: 4611686018427387904 bytes is out of range; " SIZE_RANGE},
		{"[growth]\nfloor = \"4294967296 GiB\"",
		 "t.toml:2:9: growth.floor: \"4294967296 GiB\" is out of range; " SIZE_RANGE},
		{"[growth]\nfloor = \"999999999999999999 GB\"",
		 "t.toml:2:9: growth.floor: \"999999999999999999 GB\" is out of range; " SIZE_RANGE},
		{"[growth]\nfloor = \"-1 MB\"", "t.toml:2:9: growth.floor: \"-1 MB\" is negative; " SIZE_RANGE},
		{"[growth]\nfloor = \"1 mb\"",
		 "t.toml:2:9: growth.floor: unknown unit \"mb\" in \"1 mb\"; use B, kB, MB, GB (1000^n) "
		 "or KiB, MiB, GiB (1024^n)"},
		{"[growth]\nfloor = \"1 TB\"",
		 "t.toml:2:9: growth.floor: unknown unit \"TB\" in \"1 TB\"; use B, kB, MB, GB (1000^n) "
		 "or KiB, MiB, GiB (1024^n)"},
		{"[growth]\nfloor = \"1000\"",
		 "t.toml:2:9: growth.floor: \"1000\" has no unit; add one of B, kB, MB, GB, KiB, MiB, "
		 "GiB, e.g. \"1000 MB\" (an integer without quotes means bytes)"},
		{"[growth]\nfloor = \"MB\"", "t.toml:2:9: growth.floor: \"MB\" is not a size; " SIZE_FIX},
		{"[growth]\nfloor = \"1.5 B\"",
		 "t.toml:2:9: growth.floor: \"1.5 B\" is not a whole number of bytes; round it"},
		{"[growth.code]\nfloor = 1.5",
		 "t.toml:2:9: growth.code.floor: expected a size, got a float; " SIZE_FIX},
		{"[growth.code]\nfloor = false",
		 "t.toml:2:9: growth.code.floor: expected a size, got a boolean; " SIZE_FIX},
	};
	RUN(cases);
}

#define PCT_RANGE "use a finite percentage of 0 or more, e.g. \"10 %\""
#define PCT_FIX "write a string such as \"10 %\" or a number of percent"

static void test_percent_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
		{"[growth]\nmax = -1", "t.toml:2:7: growth.max: -1 % is out of range; " PCT_RANGE},
		{"[growth]\nmax = -0.5", "t.toml:2:7: growth.max: -0.5 % is out of range; " PCT_RANGE},
		{"[growth]\nmax = inf", "t.toml:2:7: growth.max: inf % is out of range; " PCT_RANGE},
		{"[growth]\nmax = nan", "t.toml:2:7: growth.max: nan % is out of range; " PCT_RANGE},
		{"[growth]\nmax = \"-1 %\"", "t.toml:2:7: growth.max: \"-1 %\" is negative; " PCT_RANGE},
		{"[growth]\nmax = \"10\"",
		 "t.toml:2:7: growth.max: \"10\" has no % sign; write \"10 %\""},
		{"[growth]\nmax = \"10 percent\"",
		 "t.toml:2:7: growth.max: unknown unit \"percent\" in \"10 percent\"; percentages end "
		 "in %"},
		{"[growth]\nmax = \"%\"", "t.toml:2:7: growth.max: \"%\" is not a percentage; " PCT_FIX},
		{"[growth]\nmax = \"1e3 %\"",
		 "t.toml:2:7: growth.max: unknown unit \"e3 %\" in \"1e3 %\"; percentages end in %"},
		{"[growth.atom]\nmax = true",
		 "t.toml:2:7: growth.atom.max: expected a percentage, got a boolean; " PCT_FIX},
	};
	RUN(cases);
}

static void test_unknown_keys(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
		{"[node]\nboot_timout = 5",
		 "t.toml:2:1: node.boot_timout: unknown key; did you mean \"boot_timeout\"?"},
		{"[node]\n  Boot_Timeout = 5",
		 "t.toml:2:3: node.Boot_Timeout: unknown key; did you mean \"boot_timeout\"?"},
		{"[node]\n\"boot timeout\" = 5",
		 "t.toml:2:1: node.\"boot timeout\": unknown key; did you mean \"boot_timeout\"?"},
		{"[node]\nmixenv = 'x'", "t.toml:2:1: node.mixenv: unknown key; did you mean \"mix_env\"?"},
		{"[node]\ncookie = 'x'",
		 "t.toml:2:1: node.cookie: unknown key; [node] takes mix_env, erl_flags, boot_timeout, "
		 "rpc_timeout, test_timeout, stop_timeout"},
		{"[output]\njunit_path = 'x'",
		 "t.toml:2:1: output.junit_path: unknown key; [output] takes junit"},
		{"[nodes]\n", "t.toml:1:2: nodes: unknown key; did you mean \"node\"?"},
		{"outptu.junit = 'x'", "t.toml:1:1: outptu: unknown key; did you mean \"output\"?"},
		{"colour = 1",
		 "t.toml:1:1: colour: unknown key; the configuration has only the tables [node], "
		 "[output] and [growth]"},
		{"[growth]\nmaxx = 1", "t.toml:2:1: growth.maxx: unknown key; did you mean \"max\"?"},
		{"[growth]\nlive_total = true",
		 "t.toml:2:1: growth.live_total: unknown key; did you mean \"live_totals\"?"},
		{"[growth]\nlimit = 1",
		 "t.toml:2:1: growth.limit: unknown key; [growth] takes max, floor, live_totals, total, "
		 "processes, processes_used, system, atom, atom_used, binary, code, ets"},
		{"[growth.binery]\n",
		 "t.toml:1:9: growth.binery: unknown category; did you mean \"binary\"?"},
		{"[growth.atoms]\nmax = 1\n",
		 "t.toml:1:9: growth.atoms: unknown category; did you mean \"atom\"?"},
		{"[growth.heap]\n",
		 "t.toml:1:9: growth.heap: unknown category; use one of total, processes, "
		 "processes_used, system, atom, atom_used, binary, code, ets"},
		{"[growth.code]\nfloor_bytes = 1",
		 "t.toml:2:1: growth.code.floor_bytes: unknown key; [growth.code] takes enabled, max, "
		 "floor"},
		{"[growth.code]\nenable = true",
		 "t.toml:2:1: growth.code.enable: unknown key; did you mean \"enabled\"?"},
		/* the first problem in file order is the one reported */
		{"[node]\nmix_env = 'x'\nbad = 1\nboot_timeout = 0\n",
		 "t.toml:3:1: node.bad: unknown key; [node] takes mix_env, erl_flags, boot_timeout, "
		 "rpc_timeout, test_timeout, stop_timeout"},
	};
	RUN(cases);
}

static void test_wrong_types_and_strings(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
		{"node = 1",
		 "t.toml:1:8: node: expected a table, got an integer; write [node] with its keys below it"},
		{"[[node]]\n",
		 "t.toml:1:1: node: expected a table, got an array; write [node] with its keys below it"},
		{"output = 'x.xml'",
		 "t.toml:1:10: output: expected a table, got a string; write [output] with its keys "
		 "below it"},
		{"[growth]\ncode = 5",
		 "t.toml:2:8: growth.code: expected a table, got an integer; write [growth.code] with "
		 "enabled, max and floor below it"},
		{"[node]\nmix_env = 5",
		 "t.toml:2:11: node.mix_env: expected a string, got an integer; e.g. mix_env = \"test\""},
		{"[node]\nmix_env = \"\"",
		 "t.toml:2:11: node.mix_env: must not be empty; e.g. mix_env = \"test\""},
		{"[node]\nmix_env = \"a\\u0000b\"",
		 "t.toml:2:11: node.mix_env: contains a NUL character (\\u0000); remove it"},
		{"[node]\nerl_flags = ['+S', '4']",
		 "t.toml:2:13: node.erl_flags: expected a string, got an array; e.g. erl_flags = \"+S 4\""},
		{"[output]\njunit = ''",
		 "t.toml:2:9: output.junit: must not be empty; e.g. junit = \"_build/gate/junit.xml\""},
		{"[growth]\nlive_totals = \"yes\"",
		 "t.toml:2:15: growth.live_totals: expected a boolean, got a string; write true or false, "
		 "without quotes"},
		{"[growth.code]\nenabled = 1",
		 "t.toml:2:11: growth.code.enabled: expected a boolean, got an integer; write true or "
		 "false, without quotes"},
	};
	RUN(cases);

	/* an empty erl_flags is fine: no extra flags */
	struct config cfg = {0};
	load_kv(&cfg, "[node]", "erl_flags", "''");
	assert_string_equal(cfg.erl_flags, "");
	config_clear(&cfg);
}

static void test_toml_errors_are_prefixed(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
		{"[node]\nmix_env = 'x'\nmix_env = 'y'\n",
		 "t.toml:3:1: duplicate key mix_env: already defined at 2:1"},
		{"[node]\nboot_timeout = 1979-05-27\n",
		 "t.toml:2:16: dates are not supported here; write it as a string, e.g. \"1979-05-27\""},
		{"[node]\nmix_env = test\n",
		 "t.toml:2:11: expected a value, found 'test'; strings must be quoted, booleans are true or "
		 "false"},
	};
	RUN(cases);
}

/* ---- files ---- */

static char tmpdir[64];

static int setup_tmpdir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/test_config.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_load_file(void **state)
{
	(void)state;
	struct config cfg = {0};
	char path[128], err[512];
	const char *text = "[node]\nmix_env = \"bench\"\n";

	snprintf(path, sizeof(path), "%s/gate.toml", tmpdir);
	write_file(path, text, strlen(text));
	assert_int_equal(config_load(&cfg, path, err, sizeof(err)), 0);
	assert_string_equal(cfg.mix_env, "bench");
	assert_string_equal(cfg.source, path);
	config_clear(&cfg);

	/* a TOML error names the file */
	text = "[node]\nmix_env = 'x'\n  junk\n";
	write_file(path, text, strlen(text));
	assert_int_equal(config_load(&cfg, path, err, sizeof(err)), -1);
	char want[256];
	snprintf(want, sizeof(want), "%s:3:7: expected '=' after the key junk, found a newline", path);
	assert_string_equal(err, want);
	assert_is_defaults(&cfg);
	config_clear(&cfg);
}

static void test_file_errors(void **state)
{
	(void)state;
	struct config cfg = {0};
	char path[128], err[512], want[512];

	/* missing */
	snprintf(path, sizeof(path), "%s/missing.toml", tmpdir);
	assert_int_equal(config_load(&cfg, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: cannot open: %s", path, strerror(ENOENT));
	assert_string_equal(err, want);
	assert_is_defaults(&cfg);
	config_clear(&cfg);

	/* a directory */
	assert_int_equal(config_load(&cfg, tmpdir, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: cannot read: %s; give the path of a TOML file", tmpdir,
		 strerror(EISDIR));
	assert_string_equal(err, want);
	assert_is_defaults(&cfg);
	config_clear(&cfg);

	/* larger than 1 MiB; exactly 1 MiB is read */
	char *big = malloc(TOML_MAX_INPUT + 1);
	assert_non_null(big);
	memset(big, ' ', TOML_MAX_INPUT + 1);
	big[0] = '#';
	snprintf(path, sizeof(path), "%s/big.toml", tmpdir);
	write_file(path, big, TOML_MAX_INPUT);
	assert_int_equal(config_load(&cfg, path, err, sizeof(err)), 0);
	config_clear(&cfg);
	write_file(path, big, TOML_MAX_INPUT + 1);
	free(big);
	assert_int_equal(config_load(&cfg, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "%s: larger than 1 MiB, the most gate reads for a configuration; is it the right "
		 "file?",
		 path);
	assert_string_equal(err, want);
	assert_is_defaults(&cfg);
	config_clear(&cfg);

	/* unreadable: root reads anything, so only as another user */
	snprintf(path, sizeof(path), "%s/secret.toml", tmpdir);
	write_file(path, "", 0);
	assert_int_equal(chmod(path, 0), 0);
	if (geteuid() != 0) {
		assert_int_equal(config_load(&cfg, path, err, sizeof(err)), -1);
		snprintf(want, sizeof(want), "%s: cannot open: %s", path, strerror(EACCES));
		assert_string_equal(err, want);
		assert_is_defaults(&cfg);
		config_clear(&cfg);
	}
}

/* ---- printing ---- */

static void test_print_defaults(void **state)
{
	(void)state;
	struct config cfg, back = {0};
	char *text;
	const char *lines[] = {
		"# gate configuration in effect, from defaults\n",
		"\n[node]\nmix_env = \"test\"\nerl_flags = \"\"\nboot_timeout = \"120 s\"\n",
		"\nrpc_timeout = \"60 s\"\ntest_timeout = \"30 min\"\nstop_timeout = \"10 s\"\n",
		"\n[output]\njunit = \"_build/gate/junit.xml\"\n",
		"\n[growth]\nlive_totals = true\n",
		"\n[growth.total]\nenabled = true\nmax = \"10 %\"\nfloor = \"1 MB\"\n",
		"\n[growth.ets]\nenabled = true\nmax = \"10 %\"\nfloor = \"1 MB\"\n",
	};

	assert_int_equal(config_default(&cfg), 0);
	text = print_to_string(&cfg);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (!strstr(text, lines[i]))
			fail_msg("missing:\n%s\n--- in:\n%s", lines[i], text);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		char head[64];
		snprintf(head, sizeof(head), "\n[growth.%s]\n", mem_cat_name((enum mem_cat)c));
		assert_non_null(strstr(text, head));
	}
	load_ok(&back, text);
	assert_config_equal(&back, &cfg);
	free(text);
	config_clear(&back);
	config_clear(&cfg);
}

static int set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : -1;
}

static void test_print_round_trip(void **state)
{
	(void)state;
	static const int ms[] = {1, 1500, 61000, 600000, 90 * 60000, 3600000, 86399999, 119999};
	static const int64_t bytes[] = {0,	   1234,     1024,	     1048576,
					1500000,   3000000000, INT64_C(4611686018427387903),
					1536,	   999,	     (int64_t)1 << 30, 7000};
	static const double pcts[] = {0,     0.1,	 2.5, 1e-7, 12345.678, 1e300, 100.0 / 3,
				      100.0, 0.30000000000000004, 5e-324, 1e15, 123456789012345.67};
	struct config cfg, back = {0};
	char *text, *again;

	assert_int_equal(config_default(&cfg), 0);
	assert_int_equal(set_str(&cfg.mix_env, "we\"ird\\ env\n\tü\x01"), 0);
	assert_int_equal(set_str(&cfg.erl_flags, "+S 4 -kernel inet_dist_listen_min 9100"), 0);
	assert_int_equal(set_str(&cfg.junit, "reports/'j u'.xml"), 0);
	assert_int_equal(set_str(&cfg.source, "some\nwhere"), 0);
	cfg.growth.live_totals = false;

	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i += 4) {
		cfg.boot_timeout_ms = ms[i];
		cfg.rpc_timeout_ms = ms[i + 1];
		cfg.test_timeout_ms = ms[i + 2];
		cfg.stop_timeout_ms = ms[i + 3];
		for (size_t k = 0; k < sizeof(bytes) / sizeof(bytes[0]); k++) {
			for (int c = 0; c < MEM_CAT_COUNT; c++) {
				cfg.growth.cat[c].enabled = (c + k) % 2;
				cfg.growth.cat[c].floor_bytes =
					bytes[(k + (size_t)c) % (sizeof(bytes) / sizeof(bytes[0]))];
				cfg.growth.cat[c].max_pct =
					pcts[(k + (size_t)c) % (sizeof(pcts) / sizeof(pcts[0]))];
			}
			text = print_to_string(&cfg);
			load_ok(&back, text);
			assert_config_equal(&back, &cfg);
			/* printing what was read gives the same text, but for the source */
			again = print_to_string(&back);
			assert_string_equal(strchr(again, '\n'), strchr(text, '\n'));
			free(again);
			free(text);
			config_clear(&back);
		}
	}

	/* units as people write them, exact bytes otherwise */
	cfg.boot_timeout_ms = 1500;
	cfg.rpc_timeout_ms = 90 * 60000;
	cfg.test_timeout_ms = 2 * 3600000;
	cfg.stop_timeout_ms = 600000;
	cfg.growth.cat[MEM_TOTAL].enabled = true;
	cfg.growth.cat[MEM_TOTAL].max_pct = 0;
	cfg.growth.cat[MEM_TOTAL].floor_bytes = 1024;
	cfg.growth.cat[MEM_PROCESSES].floor_bytes = 1048576;
	cfg.growth.cat[MEM_SYSTEM].floor_bytes = 1234;
	cfg.growth.cat[MEM_ATOM].floor_bytes = 64000;
	cfg.growth.cat[MEM_ATOM_USED].floor_bytes = 0;
	cfg.growth.cat[MEM_BINARY].max_pct = 1e300;
	cfg.growth.cat[MEM_CODE].max_pct = 1e-7;
	cfg.growth.cat[MEM_ETS].max_pct = 2.5;
	text = print_to_string(&cfg);
	const char *want[] = {
		"# gate configuration in effect, from some?where\n",
		"mix_env = \"we\\\"ird\\\\ env\\n\\tü\\u0001\"\n",
		"junit = \"reports/'j u'.xml\"\n",
		"boot_timeout = \"1500 ms\"\n", "rpc_timeout = \"90 min\"\n",
		"test_timeout = \"2 h\"\n",	"stop_timeout = \"10 min\"\n",
		"live_totals = false\n",
		"[growth.total]\nenabled = true\nmax = \"0 %\"\nfloor = \"1 KiB\"\n",
		"floor = \"1 MiB\"\n",		"floor = \"1234 B\"\n",
		"floor = \"64 kB\"\n",		"floor = \"0 B\"\n",
		"max = 1e+300\n",		"max = \"0.0000001 %\"\n",
		"max = \"2.5 %\"\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("missing:\n%s\n--- in:\n%s", want[i], text);
	load_ok(&back, text);
	assert_config_equal(&back, &cfg);
	free(text);
	config_clear(&back);
	config_clear(&cfg);
}

/* ---- allocation failures inside the TOML reader ---- */

static long alloc_left;

static void *failing_realloc(void *ptr, size_t size)
{
	if (size == 0) {
		free(ptr);
		return NULL;
	}
	if (alloc_left == 0)
		return NULL;
	alloc_left--;
	return realloc(ptr, size);
}

static void test_allocation_failures(void **state)
{
	(void)state;
	const char *text = "[node]\nmix_env = \"x\"\n[growth.code]\nmax = \"1 %\"\n";
	struct config cfg = {0};
	char err[512];
	long n;

	toml_set_realloc(failing_realloc);
	for (n = 0;; n++) {
		alloc_left = n;
		int rc = config_load_text(&cfg, text, strlen(text), "t.toml", err, sizeof(err));
		if (rc == 0)
			break;
		if (strncmp(err, "t.toml:", 7) != 0 || !strstr(err, ": out of memory"))
			fail_msg("allocation %ld: %s", n, err);
		assert_is_defaults(&cfg);
		config_clear(&cfg);
	}
	toml_set_realloc(NULL);
	assert_true(n > 5);
	assert_string_equal(cfg.mix_env, "x");
	config_clear(&cfg);
}

/* ---- the repository's gate.toml documents the defaults ---- */

static void test_repo_gate_toml_is_defaults(void **state)
{
	(void)state;
	const char *path = getenv("GATE_TOML");
	struct config cfg = {0}, def;
	char err[512];

	if (!path || !*path)
		path = "gate.toml";
	if (access(path, F_OK) != 0) {
		print_message("%s not found (set GATE_TOML or run from the repository root)\n", path);
		skip();
	}
	if (config_load(&cfg, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(config_default(&def), 0);
	assert_config_equal(&cfg, &def);
	config_clear(&def);
	config_clear(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_empty_text_is_defaults),
		cmocka_unit_test(test_load_replaces_what_cfg_held),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_dotted_and_inline_forms),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_percentages),
		cmocka_unit_test(test_growth_precedence),
		cmocka_unit_test(test_duration_errors),
		cmocka_unit_test(test_size_errors),
		cmocka_unit_test(test_percent_errors),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_wrong_types_and_strings),
		cmocka_unit_test(test_toml_errors_are_prefixed),
		cmocka_unit_test_setup_teardown(test_load_file, setup_tmpdir, teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_file_errors, setup_tmpdir, teardown_tmpdir),
		cmocka_unit_test(test_print_defaults),
		cmocka_unit_test(test_print_round_trip),
		cmocka_unit_test(test_allocation_failures),
		cmocka_unit_test(test_repo_gate_toml_is_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
