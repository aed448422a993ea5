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

#include "gate/config/config.h"
#include "gate/config/toml.h"

/* ---- helpers ---- */

static void load_ok(struct config *cfg, const char *text)
{
	char err[512];

	if (config_load_text(cfg, text, strlen(text), "t.toml", err, sizeof(err)) != 0)
		fail_msg("load failed: %s\n--- input:\n%s", err, text);
}

/* A NULL baseline string means its BASELINE_DEFAULT_*: compared as what it means. */
static const char *or_default(const char *s, const char *def)
{
	return s ? s : def;
}

static void assert_rules_equal(const struct rules_config *a, const struct rules_config *b)
{
	assert_int_equal(a->ets.max_total, b->ets.max_total);
	assert_int_equal(a->ets.max_left_alive, b->ets.max_left_alive);
	assert_int_equal(a->ets.left_alive_floor, b->ets.left_alive_floor);
	assert_int_equal(a->ets.ntables, b->ets.ntables);
	for (size_t i = 0; i < a->ets.ntables; i++) {
		const struct ets_table_limit *x = &a->ets.tables[i], *y = &b->ets.tables[i];
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->max_bytes, y->max_bytes);
		assert_int_equal(x->max_size, y->max_size);
		if (x->max_growth_pct != y->max_growth_pct)
			fail_msg("ets.table[%zu].max_growth %.17g, want %.17g", i,
			         x->max_growth_pct, y->max_growth_pct);
	}
	assert_int_equal(a->binary.max_refs_per_process, b->binary.max_refs_per_process);
	assert_int_equal(a->binary.max_bytes_per_process, b->binary.max_bytes_per_process);
	assert_int_equal(a->process.max_born, b->process.max_born);
	assert_int_equal(a->process.max_mailbox, b->process.max_mailbox);
	assert_int_equal(a->process.max_memory, b->process.max_memory);
	assert_int_equal(a->atom.max_growth, b->atom.max_growth);
	assert_int_equal(a->atom.per_test, b->atom.per_test);
	assert_true(a->atom.max_usage_pct == b->atom.max_usage_pct);
	assert_true(a->allocator.max_fragmentation_pct == b->allocator.max_fragmentation_pct);
	assert_int_equal(a->allocator.waste_floor, b->allocator.waste_floor);
	assert_string_equal(or_default(a->baseline.path, BASELINE_DEFAULT_PATH),
	                    or_default(b->baseline.path, BASELINE_DEFAULT_PATH));
	assert_string_equal(or_default(a->baseline.ref, BASELINE_DEFAULT_REF),
	                    or_default(b->baseline.ref, BASELINE_DEFAULT_REF));
	assert_string_equal(or_default(a->baseline.notes_ref, BASELINE_DEFAULT_NOTES_REF),
	                    or_default(b->baseline.notes_ref, BASELINE_DEFAULT_NOTES_REF));
	assert_int_equal(a->baseline.require, b->baseline.require);
	assert_int_equal(a->baseline.skip_ci, b->baseline.skip_ci);
	assert_true(a->baseline.max_pct == b->baseline.max_pct);
	assert_int_equal(a->baseline.floor_bytes, b->baseline.floor_bytes);
	assert_int_equal(a->baseline.trend_window, b->baseline.trend_window);
	assert_true(a->baseline.trend_sigma == b->baseline.trend_sigma);
	assert_true(a->baseline.trend_min_pct == b->baseline.trend_min_pct);
	assert_int_equal(a->attribution.per_test, b->attribution.per_test);
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
	assert_int_equal(a->rules.growth.live_totals, b->rules.growth.live_totals);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		const struct growth_limit *x = &a->rules.growth.cat[c],
		                          *y = &b->rules.growth.cat[c];
		if (x->enabled != y->enabled || x->max_pct != y->max_pct ||
		    x->floor_bytes != y->floor_bytes)
			fail_msg("growth.%s: enabled %d max %.17g floor %lld, want enabled %d max "
			         "%.17g floor %lld",
			         mem_cat_name((enum mem_cat)c), x->enabled, x->max_pct,
			         (long long)x->floor_bytes, y->enabled, y->max_pct,
			         (long long)y->floor_bytes);
	}
	assert_rules_equal(&a->rules, &b->rules);
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
	assert_int_equal(cfg.rules.growth.live_totals, g.live_totals);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		assert_int_equal(cfg.rules.growth.cat[c].enabled, g.cat[c].enabled);
		assert_true(cfg.rules.growth.cat[c].max_pct == g.cat[c].max_pct);
		assert_int_equal(cfg.rules.growth.cat[c].floor_bytes, g.cat[c].floor_bytes);
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
	const char *texts[] = {"", "\n", "# nothing but comments\n\n# here\n",
	                       "[node]\n[output]\n[growth]\n"};

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
	assert_false(cfg.rules.growth.live_totals);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		const struct growth_limit *l = &cfg.rules.growth.cat[c];
		if (c == MEM_BINARY) {
			assert_false(l->enabled);
			assert_true(l->max_pct == 2.5);
			assert_int_equal(l->floor_bytes, 4096);
		} else if (c == MEM_ETS) {
			assert_true(l->enabled);
			assert_true(l->max_pct == 0.0);
			assert_int_equal(l->floor_bytes, 2000000);
		} else {
			/* processes and atom are off by default; [growth] max/floor do not enable
			 */
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
	assert_true(cfg.rules.growth.cat[MEM_CODE].max_pct == 1.0);
	assert_false(cfg.rules.growth.cat[MEM_ATOM].enabled);
	assert_true(cfg.rules.growth.cat[MEM_ATOM_USED].enabled);
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
	        {"120", 120000},
	        {"1", 1000},
	        {"86399", 86399000},
	        {"\"500 ms\"", 500},
	        {"\"1 ms\"", 1},
	        {"\"90 s\"", 90000},
	        {"\"90s\"", 90000},
	        {"\"2 min\"", 120000},
	        {"\"2min\"", 120000},
	        {"\"1 h\"", 3600000},
	        {"\"23 h\"", 23 * 3600000},
	        {"\"1.5 s\"", 1500},
	        {"\"0.25 min\"", 15000},
	        {"\"1.000 s\"", 1000},
	        {"\"0.001 s\"", 1},
	        {"\" 3 s \"", 3000},
	        {"\"3  s\"", 3000},
	        {"\"86399999 ms\"", 86399999},
	        /* the command line's spellings too (units.h): one grammar for both */
	        {"86400", 86400000},
	        {"\"24 h\"", 86400000},
	        {"\"1440 min\"", 86400000},
	        {"\"90\"", 90000},
	        {"\"1.5\"", 1500},
	        {"\"30sec\"", 30000},
	        {"\"30 sec\"", 30000},
	        {"\"2m\"", 120000},
	        {"\"30min\"", 1800000},
	        {"\"1. s\"", 1000},
	        {"\".5 s\"", 500},
	        {"\"+5 s\"", 5000},
	        {"\"1e3 ms\"", 1000},
	        {"\"1E-3 s\"", 1},
	        {"\"0.5 ms\"", 1}, /* rounded to the millisecond */
	        {"\"1.2346 s\"", 1235},
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
	        /* numbers as durations take them (units.h) */
	        {"\"1e3 B\"", 1000},
	        {"\"+1 kB\"", 1000},
	        {"\".5 kB\"", 500},
	        {"\"2. MB\"", 2000000},
	        {"\"1.5e3 KiB\"", 1536000},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config cfg = {0};
		load_kv(&cfg, "[growth.code]", "floor", cases[i].value);
		if (cfg.rules.growth.cat[MEM_CODE].floor_bytes != cases[i].bytes)
			fail_msg("%s: %lld bytes, want %lld", cases[i].value,
			         (long long)cfg.rules.growth.cat[MEM_CODE].floor_bytes,
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
	        {"10", 10.0},       {"0", 0.0},           {"2.5", 2.5},       {"1e3", 1000.0},
	        {"\"10 %\"", 10.0}, {"\"10%\"", 10.0},    {"\"2.5 %\"", 2.5}, {"\"0.1 %\"", 0.1},
	        {"\"0 %\"", 0.0},   {"\"150 %\"", 150.0}, {"\" 7 % \"", 7.0}, {"-0.0", 0.0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config cfg = {0};
		load_kv(&cfg, "[growth.ets]", "max", cases[i].value);
		if (cfg.rules.growth.cat[MEM_ETS].max_pct != cases[i].pct ||
		    signbit(cfg.rules.growth.cat[MEM_ETS].max_pct))
			fail_msg("%s: %.17g %%, want %.17g", cases[i].value,
			         cfg.rules.growth.cat[MEM_ETS].max_pct, cases[i].pct);
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
		assert_true(cfg.rules.growth.cat[c].max_pct == (c == MEM_CODE ? 50.0 : 5.0));
		assert_int_equal(cfg.rules.growth.cat[c].floor_bytes, 2000000);
	}
	config_clear(&cfg);

	/* and before it */
	load_ok(&cfg, "[growth]\nfloor = 0\n[growth.system]\nfloor = \"3 MB\"\nenabled = false\n");
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		assert_int_equal(cfg.rules.growth.cat[c].floor_bytes,
		                 c == MEM_SYSTEM ? 3000000 : 0);
		assert_int_equal(cfg.rules.growth.cat[c].enabled,
		                 def.rules.growth.cat[c].enabled && c != MEM_SYSTEM);
		assert_true(cfg.rules.growth.cat[c].max_pct == def.rules.growth.cat[c].max_pct);
	}
	config_clear(&cfg);

	/* a category that sets only floor takes [growth] max, and the reverse */
	load_ok(&cfg,
	        "growth.binary.floor = 1\ngrowth.max = 3\ngrowth.floor = 7\ngrowth.ets.max = 9\n");
	assert_true(cfg.rules.growth.cat[MEM_BINARY].max_pct == 3.0);
	assert_int_equal(cfg.rules.growth.cat[MEM_BINARY].floor_bytes, 1);
	assert_true(cfg.rules.growth.cat[MEM_ETS].max_pct == 9.0);
	assert_int_equal(cfg.rules.growth.cat[MEM_ETS].floor_bytes, 7);
	config_clear(&cfg);

	/* no [growth] max: categories keep their own defaults */
	load_ok(&cfg, "[growth.code]\nmax = 1\n");
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (c != MEM_CODE)
			assert_true(cfg.rules.growth.cat[c].max_pct ==
			            def.rules.growth.cat[c].max_pct);
	assert_true(cfg.rules.growth.live_totals == def.rules.growth.live_totals);
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

#define DUR_RANGE "use a duration above 0 and at most 24 h, e.g. \"90 s\""
#define DUR_FIX                                                                                    \
	"write an integer number of seconds or a string such as \"90 s\" (units: ms, s, sec, m, "  \
	"min, h)"
#define DUR_TEXT_FIX                                                                               \
	"write a number and a unit, e.g. \"90 s\" (units: ms, s, sec, m, min, h; a number alone "  \
	"is seconds)"
#define DUR_UNITS "use ms, s, sec, m, min or h"

static void test_duration_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[node]\nboot_timeout = 0",
	         "t.toml:2:16: node.boot_timeout: 0 s is out of range; " DUR_RANGE},
	        {"[node]\nboot_timeout = -5",
	         "t.toml:2:16: node.boot_timeout: -5 s is out of range; " DUR_RANGE},
	        {"[node]\nrpc_timeout = 86401",
	         "t.toml:2:15: node.rpc_timeout: 86401 s is out of range; " DUR_RANGE},
	        {"[node]\nrpc_timeout = 9223372036854775807",
	         "t.toml:2:15: node.rpc_timeout: 9223372036854775807 s is out of "
	         "range; " DUR_RANGE},
	        {"[node]\ntest_timeout = \"25 h\"",
	         "t.toml:2:16: node.test_timeout: \"25 h\" is out of range; " DUR_RANGE},
	        {"[node]\ntest_timeout = \"1441 min\"",
	         "t.toml:2:16: node.test_timeout: \"1441 min\" is out of range; " DUR_RANGE},
	        {"[node]\ntest_timeout = \"86400001 ms\"",
	         "t.toml:2:16: node.test_timeout: \"86400001 ms\" is out of range; " DUR_RANGE},
	        {"[node]\ntest_timeout = \"1e999 s\"",
	         "t.toml:2:16: node.test_timeout: \"1e999 s\" is out of range; " DUR_RANGE},
	        {"[node]\nstop_timeout = \"0 s\"",
	         "t.toml:2:16: node.stop_timeout: \"0 s\" is out of range; " DUR_RANGE},
	        {"[node]\nstop_timeout = \"-5 s\"",
	         "t.toml:2:16: node.stop_timeout: \"-5 s\" is negative; " DUR_RANGE},
	        {"[node]\nstop_timeout = \"99999999999999999999 s\"",
	         "t.toml:2:16: node.stop_timeout: \"99999999999999999999 s\" has too many "
	         "digits; " DUR_RANGE},
	        {"[node]\nboot_timeout = \"5 mins\"",
	         "t.toml:2:16: node.boot_timeout: unknown unit \"mins\" in \"5 mins\"; " DUR_UNITS},
	        {"[node]\nboot_timeout = \"5 S\"",
	         "t.toml:2:16: node.boot_timeout: unknown unit \"S\" in \"5 S\"; " DUR_UNITS},
	        {"[node]\nboot_timeout = \"0x10 s\"", "t.toml:2:16: node.boot_timeout: unknown "
	                                              "unit \"x10 s\" in \"0x10 s\"; " DUR_UNITS},
	        {"[node]\nboot_timeout = \"s\"",
	         "t.toml:2:16: node.boot_timeout: \"s\" is not a duration; " DUR_TEXT_FIX},
	        {"[node]\nboot_timeout = \"\"",
	         "t.toml:2:16: node.boot_timeout: \"\" is not a duration; " DUR_TEXT_FIX},
	        {"[node]\nboot_timeout = \". s\"",
	         "t.toml:2:16: node.boot_timeout: \". s\" is not a duration; " DUR_TEXT_FIX},
	        {"[node]\nboot_timeout = \"0.4 ms\"",
	         "t.toml:2:16: node.boot_timeout: \"0.4 ms\" is out of range; " DUR_RANGE},
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
	"write an integer number of bytes or a string such as \"64 MB\" (units: B, kB, MB, GB, "   \
	"KiB, MiB, GiB)"

static void test_size_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[growth]\nfloor = -1",
	         "t.toml:2:9: growth.floor: -1 bytes is out of range; " SIZE_RANGE},
	        {"[growth]\nfloor = 4611686018427387904",
	         "t.toml:2:9: growth.floor: 4611686018427387904 bytes is out of "
	         "range; " SIZE_RANGE},
	        {"[growth]\nfloor = \"4294967296 GiB\"",
	         "t.toml:2:9: growth.floor: \"4294967296 GiB\" is out of range; " SIZE_RANGE},
	        {"[growth]\nfloor = \"999999999999999999 GB\"",
	         "t.toml:2:9: growth.floor: \"999999999999999999 GB\" is out of "
	         "range; " SIZE_RANGE},
	        {"[growth]\nfloor = \"-1 MB\"",
	         "t.toml:2:9: growth.floor: \"-1 MB\" is negative; " SIZE_RANGE},
	        {"[growth]\nfloor = \"1 mb\"", "t.toml:2:9: growth.floor: unknown unit \"mb\" in "
	                                       "\"1 mb\"; use B, kB, MB, GB (1000^n) "
	                                       "or KiB, MiB, GiB (1024^n)"},
	        {"[growth]\nfloor = \"1 TB\"", "t.toml:2:9: growth.floor: unknown unit \"TB\" in "
	                                       "\"1 TB\"; use B, kB, MB, GB (1000^n) "
	                                       "or KiB, MiB, GiB (1024^n)"},
	        {"[growth]\nfloor = \"1000\"",
	         "t.toml:2:9: growth.floor: \"1000\" has no unit; add one of B, kB, MB, GB, KiB, "
	         "MiB, "
	         "GiB, e.g. \"1000 MB\" (an integer without quotes means bytes)"},
	        {"[growth]\nfloor = \"MB\"",
	         "t.toml:2:9: growth.floor: \"MB\" is not a size; " SIZE_FIX},
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
	        {"[growth]\nmax = -0.5",
	         "t.toml:2:7: growth.max: -0.5 % is out of range; " PCT_RANGE},
	        {"[growth]\nmax = inf",
	         "t.toml:2:7: growth.max: inf % is out of range; " PCT_RANGE},
	        {"[growth]\nmax = nan",
	         "t.toml:2:7: growth.max: nan % is out of range; " PCT_RANGE},
	        {"[growth]\nmax = \"-1 %\"",
	         "t.toml:2:7: growth.max: \"-1 %\" is negative; " PCT_RANGE},
	        {"[growth]\nmax = \"10\"",
	         "t.toml:2:7: growth.max: \"10\" has no % sign; write \"10 %\""},
	        {"[growth]\nmax = \"10 percent\"", "t.toml:2:7: growth.max: unknown unit "
	                                           "\"percent\" in \"10 percent\"; percentages end "
	                                           "in %"},
	        {"[growth]\nmax = \"%\"",
	         "t.toml:2:7: growth.max: \"%\" is not a percentage; " PCT_FIX},
	        {"[growth]\nmax = \"1e3 %\"", "t.toml:2:7: growth.max: unknown unit \"e3 %\" in "
	                                      "\"1e3 %\"; percentages end in %"},
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
	        {"[node]\nmixenv = 'x'",
	         "t.toml:2:1: node.mixenv: unknown key; did you mean \"mix_env\"?"},
	        {"[node]\ncookie = 'x'", "t.toml:2:1: node.cookie: unknown key; [node] takes "
	                                 "mix_env, erl_flags, boot_timeout, "
	                                 "rpc_timeout, test_timeout, stop_timeout"},
	        {"[output]\njunit_path = 'x'",
	         "t.toml:2:1: output.junit_path: unknown key; [output] takes junit"},
	        {"[nodes]\n", "t.toml:1:2: nodes: unknown key; did you mean \"node\"?"},
	        {"outptu.junit = 'x'", "t.toml:1:1: outptu: unknown key; did you mean \"output\"?"},
	        {"colour = 1",
	         "t.toml:1:1: colour: unknown key; the configuration has only the tables [node], "
	         "[output], [growth], [ets], [binary], [process], [atom], [allocator], "
	         "[baseline], [attribution], [ports], [persistent_term] and [run]"},
	        {"[ports]\nmax_open = 10",
	         "t.toml:2:1: ports.max_open: unknown key; did you mean \"max_opened\"?"},
	        {"[growth]\nmaxx = 1",
	         "t.toml:2:1: growth.maxx: unknown key; did you mean \"max\"?"},
	        {"[growth]\nlive_total = true",
	         "t.toml:2:1: growth.live_total: unknown key; did you mean \"live_totals\"?"},
	        {"[growth]\nlimit = 1",
	         "t.toml:2:1: growth.limit: unknown key; [growth] takes max, floor, live_totals, "
	         "total, "
	         "processes, processes_used, system, atom, atom_used, binary, code, ets"},
	        {"[growth.binery]\n",
	         "t.toml:1:9: growth.binery: unknown category; did you mean \"binary\"?"},
	        {"[growth.atoms]\nmax = 1\n",
	         "t.toml:1:9: growth.atoms: unknown category; did you mean \"atom\"?"},
	        {"[growth.heap]\n",
	         "t.toml:1:9: growth.heap: unknown category; use one of total, processes, "
	         "processes_used, system, atom, atom_used, binary, code, ets"},
	        {"[growth.code]\nfloor_bytes = 1", "t.toml:2:1: growth.code.floor_bytes: unknown "
	                                           "key; [growth.code] takes enabled, max, "
	                                           "floor"},
	        {"[growth.code]\nenable = true",
	         "t.toml:2:1: growth.code.enable: unknown key; did you mean \"enabled\"?"},
	        /* the first problem in file order is the one reported */
	        {"[node]\nmix_env = 'x'\nbad = 1\nboot_timeout = 0\n",
	         "t.toml:3:1: node.bad: unknown key; [node] takes mix_env, erl_flags, "
	         "boot_timeout, "
	         "rpc_timeout, test_timeout, stop_timeout"},
	};
	RUN(cases);
}

static void test_wrong_types_and_strings(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"node = 1", "t.toml:1:8: node: expected a table, got an integer; write [node] "
	                     "with its keys below it"},
	        {"[[node]]\n", "t.toml:1:1: node: expected a table, got an array; write [node] "
	                       "with its keys below it"},
	        {"output = 'x.xml'", "t.toml:1:10: output: expected a table, got a string; write "
	                             "[output] with its keys "
	                             "below it"},
	        {"[growth]\ncode = 5", "t.toml:2:8: growth.code: expected a table, got an integer; "
	                               "write [growth.code] with "
	                               "enabled, max and floor below it"},
	        {"[node]\nmix_env = 5", "t.toml:2:11: node.mix_env: expected a string, got an "
	                                "integer; e.g. mix_env = \"test\""},
	        {"[node]\nmix_env = \"\"",
	         "t.toml:2:11: node.mix_env: must not be empty; e.g. mix_env = \"test\""},
	        {"[node]\nmix_env = \"a\\u0000b\"",
	         "t.toml:2:11: node.mix_env: contains a NUL character (\\u0000); remove it"},
	        {"[node]\nerl_flags = ['+S', '4']",
	         "t.toml:2:13: node.erl_flags: expected a string, got an array; e.g. erl_flags = "
	         "\"+S 4\""},
	        {"[output]\njunit = ''", "t.toml:2:9: output.junit: must not be empty; e.g. junit "
	                                 "= \"_build/gate/junit.xml\""},
	        {"[growth]\nlive_totals = \"yes\"", "t.toml:2:15: growth.live_totals: expected a "
	                                            "boolean, got a string; write true or false, "
	                                            "without quotes"},
	        {"[growth.code]\nenabled = 1", "t.toml:2:11: growth.code.enabled: expected a "
	                                       "boolean, got an integer; write true or "
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
	         "t.toml:2:16: dates are not supported here; write it as a string, e.g. "
	         "\"1979-05-27\""},
	        {"[node]\nmix_env = test\n", "t.toml:2:11: expected a value, found 'test'; strings "
	                                     "must be quoted, booleans are true or "
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
	snprintf(want, sizeof(want), "%s:3:7: expected '=' after the key junk, found a newline",
	         path);
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
	snprintf(want, sizeof(want), "%s: cannot open it: %s", path, strerror(ENOENT));
	assert_string_equal(err, want);
	assert_is_defaults(&cfg);
	config_clear(&cfg);

	/* a directory */
	assert_int_equal(config_load(&cfg, tmpdir, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: is a directory, not a file; give the path of a TOML file",
	         tmpdir);
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
		snprintf(want, sizeof(want), "%s: cannot open it: %s", path, strerror(EACCES));
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
	static const int64_t bytes[] = {0,
	                                1234,
	                                1024,
	                                1048576,
	                                1500000,
	                                3000000000,
	                                INT64_C(4611686018427387903),
	                                1536,
	                                999,
	                                (int64_t)1 << 30,
	                                7000};
	static const double pcts[] = {0,         0.1,       2.5,
	                              1e-7,      12345.678, 1e300,
	                              100.0 / 3, 100.0,     0.30000000000000004,
	                              5e-324,    1e15,      123456789012345.67};
	struct config cfg, back = {0};
	char *text, *again;

	assert_int_equal(config_default(&cfg), 0);
	assert_int_equal(set_str(&cfg.mix_env, "we\"ird\\ env\n\tü\x01"), 0);
	assert_int_equal(set_str(&cfg.erl_flags, "+S 4 -kernel inet_dist_listen_min 9100"), 0);
	assert_int_equal(set_str(&cfg.junit, "reports/'j u'.xml"), 0);
	assert_int_equal(set_str(&cfg.source, "some\nwhere"), 0);
	cfg.rules.growth.live_totals = false;

	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i += 4) {
		cfg.boot_timeout_ms = ms[i];
		cfg.rpc_timeout_ms = ms[i + 1];
		cfg.test_timeout_ms = ms[i + 2];
		cfg.stop_timeout_ms = ms[i + 3];
		for (size_t k = 0; k < sizeof(bytes) / sizeof(bytes[0]); k++) {
			for (int c = 0; c < MEM_CAT_COUNT; c++) {
				cfg.rules.growth.cat[c].enabled = (c + k) % 2;
				cfg.rules.growth.cat[c].floor_bytes =
				        bytes[(k + (size_t)c) % (sizeof(bytes) / sizeof(bytes[0]))];
				cfg.rules.growth.cat[c].max_pct =
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
	cfg.rules.growth.cat[MEM_TOTAL].enabled = true;
	cfg.rules.growth.cat[MEM_TOTAL].max_pct = 0;
	cfg.rules.growth.cat[MEM_TOTAL].floor_bytes = 1024;
	cfg.rules.growth.cat[MEM_PROCESSES].floor_bytes = 1048576;
	cfg.rules.growth.cat[MEM_SYSTEM].floor_bytes = 1234;
	cfg.rules.growth.cat[MEM_ATOM].floor_bytes = 64000;
	cfg.rules.growth.cat[MEM_ATOM_USED].floor_bytes = 0;
	cfg.rules.growth.cat[MEM_BINARY].max_pct = 1e300;
	cfg.rules.growth.cat[MEM_CODE].max_pct = 1e-7;
	cfg.rules.growth.cat[MEM_ETS].max_pct = 2.5;
	text = print_to_string(&cfg);
	const char *want[] = {
	        "# gate configuration in effect, from some?where\n",
	        "mix_env = \"we\\\"ird\\\\ env\\n\\tü\\u0001\"\n",
	        "junit = \"reports/'j u'.xml\"\n",
	        "boot_timeout = \"1500 ms\"\n",
	        "rpc_timeout = \"90 min\"\n",
	        "test_timeout = \"2 h\"\n",
	        "stop_timeout = \"10 min\"\n",
	        "live_totals = false\n",
	        "[growth.total]\nenabled = true\nmax = \"0 %\"\nfloor = \"1 KiB\"\n",
	        "floor = \"1 MiB\"\n",
	        "floor = \"1234 B\"\n",
	        "floor = \"64 kB\"\n",
	        "floor = \"0 B\"\n",
	        "max = 1e+300\n",
	        "max = \"0.0000001 %\"\n",
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

/* ---- the rule tables: [ets], [[ets.table]], [binary], [process], [atom], [allocator],
 * [baseline] ---- */

static void test_rule_defaults(void **state)
{
	(void)state;
	struct config cfg = {0};
	struct rules_config r;

	assert_int_equal(config_default(&cfg), 0);
	rules_config_default(&r);
	assert_rules_equal(&cfg.rules, &r);
	/* the documented figures (gate.toml) */
	assert_int_equal(cfg.rules.ets.max_total, RULES_OFF);
	assert_int_equal(cfg.rules.ets.max_left_alive, 0);
	assert_int_equal(cfg.rules.ets.left_alive_floor, 1000000);
	assert_int_equal(cfg.rules.ets.ntables, 0);
	assert_null(cfg.rules.ets.tables);
	assert_int_equal(cfg.rules.binary.max_refs_per_process, 50000);
	assert_int_equal(cfg.rules.binary.max_bytes_per_process, 10000000);
	assert_int_equal(cfg.rules.process.max_born, 100);
	assert_int_equal(cfg.rules.process.max_mailbox, 10000);
	assert_int_equal(cfg.rules.process.max_memory, 100000000);
	assert_int_equal(cfg.rules.atom.max_growth, 10000);
	assert_int_equal(cfg.rules.atom.per_test, 5);
	assert_true(cfg.rules.atom.max_usage_pct == 80.0);
	assert_true(cfg.rules.allocator.max_fragmentation_pct == 75.0);
	assert_int_equal(cfg.rules.allocator.waste_floor, 64000000);
	/* NULL strings mean BASELINE_DEFAULT_* */
	assert_null(cfg.rules.baseline.path);
	assert_null(cfg.rules.baseline.ref);
	assert_null(cfg.rules.baseline.notes_ref);
	assert_false(cfg.rules.baseline.require);
	assert_false(cfg.rules.baseline.skip_ci);
	assert_true(cfg.rules.baseline.max_pct == 20.0);
	assert_int_equal(cfg.rules.baseline.floor_bytes, 1000000);
	assert_int_equal(cfg.rules.baseline.trend_window, 10);
	assert_true(cfg.rules.baseline.trend_sigma == 3.0);
	assert_true(cfg.rules.baseline.trend_min_pct == 10.0);
	config_clear(&cfg);
	rules_config_clear(&r);
	rules_config_clear(NULL);
}

static void test_rule_every_key(void **state)
{
	(void)state;
	struct config cfg = {0};

	load_ok(&cfg, "[ets]\n"
	              "max_total = \"64 MB\"\n"
	              "max_left_alive = 3\n"
	              "left_alive_floor = \"512 kB\"\n"
	              "\n"
	              "[[ets.table]]\n"
	              "name = \"corpus_*\"\n"
	              "max_bytes = \"2 MB\"\n"
	              "max_size = 100000\n"
	              "max_growth = \"50 %\"\n"
	              "\n"
	              "[[ets.table]]\n"
	              "name = \"sessions\"\n"
	              "max_size = 0\n"
	              "\n"
	              "[binary]\n"
	              "max_refs_per_process = 1000\n"
	              "max_bytes_per_process = \"1 MiB\"\n"
	              "\n"
	              "[process]\n"
	              "max_born = 0\n"
	              "max_mailbox = 500\n"
	              "max_memory = \"1 GB\"\n"
	              "\n"
	              "[atom]\n"
	              "max_growth = 0\n"
	              "per_test = 0\n"
	              "max_usage = 100\n"
	              "\n"
	              "[allocator]\n"
	              "max_fragmentation = \"0 %\"\n"
	              "waste_floor = 0\n"
	              "\n"
	              "[baseline]\n"
	              "path = \"ci/gate-baseline.json\"\n"
	              "ref = \"worktree\"\n"
	              "notes_ref = \"refs/notes/memory\"\n"
	              "require = true\n"
	              "skip_ci = true\n"
	              "max = 5\n"
	              "floor = \"64 kB\"\n"
	              "trend_window = 2\n"
	              "trend_sigma = 0.5\n"
	              "trend_min = \"2.5 %\"\n");
	const struct rules_config *r = &cfg.rules;
	assert_int_equal(r->ets.max_total, 64000000);
	assert_int_equal(r->ets.max_left_alive, 3);
	assert_int_equal(r->ets.left_alive_floor, 512000);
	assert_int_equal(r->ets.ntables, 2);
	assert_string_equal(r->ets.tables[0].name, "corpus_*");
	assert_int_equal(r->ets.tables[0].max_bytes, 2000000);
	assert_int_equal(r->ets.tables[0].max_size, 100000);
	assert_true(r->ets.tables[0].max_growth_pct == 50.0);
	assert_string_equal(r->ets.tables[1].name, "sessions");
	assert_int_equal(r->ets.tables[1].max_bytes, RULES_OFF);
	assert_int_equal(r->ets.tables[1].max_size, 0);
	assert_true(r->ets.tables[1].max_growth_pct < 0);
	assert_int_equal(r->binary.max_refs_per_process, 1000);
	assert_int_equal(r->binary.max_bytes_per_process, 1048576);
	assert_int_equal(r->process.max_born, 0);
	assert_int_equal(r->process.max_mailbox, 500);
	assert_int_equal(r->process.max_memory, 1000000000);
	assert_int_equal(r->atom.max_growth, 0);
	assert_int_equal(r->atom.per_test, 0);
	assert_true(r->atom.max_usage_pct == 100.0);
	assert_true(r->allocator.max_fragmentation_pct == 0.0);
	assert_int_equal(r->allocator.waste_floor, 0);
	assert_string_equal(r->baseline.path, "ci/gate-baseline.json");
	assert_string_equal(r->baseline.ref, "worktree");
	assert_string_equal(r->baseline.notes_ref, "refs/notes/memory");
	assert_true(r->baseline.require);
	assert_true(r->baseline.skip_ci);
	assert_true(r->baseline.max_pct == 5.0);
	assert_int_equal(r->baseline.floor_bytes, 64000);
	assert_int_equal(r->baseline.trend_window, 2);
	assert_true(r->baseline.trend_sigma == 0.5);
	assert_true(r->baseline.trend_min_pct == 2.5);
	/* the growth rule is untouched by all that */
	struct growth_config g;
	growth_config_default(&g);
	assert_true(cfg.rules.growth.cat[MEM_ETS].max_pct == g.cat[MEM_ETS].max_pct);
	config_clear(&cfg);
}

/* Every limit of the rules below [growth] takes "off"; floors and allowances do not. */
static void test_rule_limits_off(void **state)
{
	(void)state;
	struct config cfg = {0};

	load_ok(&cfg, "ets.max_total = 'off'\n"
	              "ets.max_left_alive = 'off'\n"
	              "binary.max_refs_per_process = 'off'\n"
	              "binary.max_bytes_per_process = 'off'\n"
	              "process = { max_born = 'off', max_mailbox = 'off', max_memory = 'off' }\n"
	              "atom.max_growth = 'off'\n"
	              "atom.max_usage = 'off'\n"
	              "allocator.max_fragmentation = 'off'\n"
	              "[[ets.table]]\n"
	              "name = 'x'\n"
	              "max_bytes = 'off'\n"
	              "max_size = 'off'\n"
	              "max_growth = 10\n");
	const struct rules_config *r = &cfg.rules;
	assert_int_equal(r->ets.max_total, RULES_OFF);
	assert_int_equal(r->ets.max_left_alive, RULES_OFF);
	assert_int_equal(r->binary.max_refs_per_process, RULES_OFF);
	assert_int_equal(r->binary.max_bytes_per_process, RULES_OFF);
	assert_int_equal(r->process.max_born, RULES_OFF);
	assert_int_equal(r->process.max_mailbox, RULES_OFF);
	assert_int_equal(r->process.max_memory, RULES_OFF);
	assert_int_equal(r->atom.max_growth, RULES_OFF);
	assert_true(r->atom.max_usage_pct < 0);
	assert_true(r->allocator.max_fragmentation_pct < 0);
	assert_int_equal(r->ets.ntables, 1);
	assert_int_equal(r->ets.tables[0].max_bytes, RULES_OFF);
	assert_int_equal(r->ets.tables[0].max_size, RULES_OFF);
	assert_true(r->ets.tables[0].max_growth_pct == 10.0);
	/* and back on: a later load starts from the defaults */
	load_ok(&cfg, "");
	assert_int_equal(cfg.rules.process.max_born, 100);
	assert_int_equal(cfg.rules.ets.ntables, 0);
	config_clear(&cfg);
}

static void test_ets_table_forms(void **state)
{
	(void)state;
	struct config cfg = {0};

	/* an inline array of inline tables is the same array of tables; file order is kept */
	load_ok(&cfg, "[ets]\n"
	              "table = [{ name = 'b*', max_bytes = 1 }, { name = 'a?', max_size = 2 }]\n");
	assert_int_equal(cfg.rules.ets.ntables, 2);
	assert_string_equal(cfg.rules.ets.tables[0].name, "b*");
	assert_int_equal(cfg.rules.ets.tables[0].max_bytes, 1);
	assert_string_equal(cfg.rules.ets.tables[1].name, "a?");
	assert_int_equal(cfg.rules.ets.tables[1].max_size, 2);
	config_clear(&cfg);

	/* [[ets.table]] before [ets], and [ets] keys after the entries */
	load_ok(&cfg, "[[ets.table]]\nname = '[a-c]*'\nmax_growth = '0 %'\n"
	              "[ets]\nleft_alive_floor = 0\n");
	assert_int_equal(cfg.rules.ets.ntables, 1);
	assert_true(cfg.rules.ets.tables[0].max_growth_pct == 0.0);
	assert_int_equal(cfg.rules.ets.left_alive_floor, 0);
	config_clear(&cfg);

	/* an empty array is no entries */
	load_ok(&cfg, "ets.table = []\n");
	assert_int_equal(cfg.rules.ets.ntables, 0);
	config_clear(&cfg);

	/* many entries */
	char text[64 * 48], *p = text;
	for (int i = 0; i < 40; i++)
		p += sprintf(p, "[[ets.table]]\nname = 't%d'\nmax_size = %d\n", i, i);
	load_ok(&cfg, text);
	assert_int_equal(cfg.rules.ets.ntables, 40);
	assert_string_equal(cfg.rules.ets.tables[39].name, "t39");
	assert_int_equal(cfg.rules.ets.tables[39].max_size, 39);
	config_clear(&cfg);
}

#define OFF_HINT "; or \"off\" for no limit"

static void test_rule_unknown_keys_and_types(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[atoms]\n", "t.toml:1:2: atoms: unknown key; did you mean \"atom\"?"},
	        {"[allocators]\n",
	         "t.toml:1:2: allocators: unknown key; did you mean \"allocator\"?"},
	        {"[baselin]\n", "t.toml:1:2: baselin: unknown key; did you mean \"baseline\"?"},
	        {"[processes]\n", "t.toml:1:2: processes: unknown key; did you mean \"process\"?"},
	        {"[ets]\nmax_totl = 1",
	         "t.toml:2:1: ets.max_totl: unknown key; did you mean \"max_total\"?"},
	        {"[ets]\ntables = 1",
	         "t.toml:2:1: ets.tables: unknown key; did you mean \"table\"?"},
	        {"[ets]\nlimit = 1",
	         "t.toml:2:1: ets.limit: unknown key; [ets] takes max_total, max_left_alive, "
	         "left_alive_floor, table"},
	        {"[binary]\nmax_refs = 1",
	         "t.toml:2:1: binary.max_refs: unknown key; [binary] takes max_refs_per_process, "
	         "max_bytes_per_process"},
	        {"[process]\nmax_mailbx = 1",
	         "t.toml:2:1: process.max_mailbx: unknown key; did you mean \"max_mailbox\"?"},
	        {"[process]\nmailbox = 1",
	         "t.toml:2:1: process.mailbox: unknown key; [process] takes max_born, max_mailbox, "
	         "max_memory"},
	        {"[atom]\npertest = 1",
	         "t.toml:2:1: atom.pertest: unknown key; did you mean \"per_test\"?"},
	        {"[allocator]\nfloor = 1",
	         "t.toml:2:1: allocator.floor: unknown key; [allocator] takes max_fragmentation, "
	         "waste_floor"},
	        {"[baseline]\nnotes = 'x'",
	         "t.toml:2:1: baseline.notes: unknown key; [baseline] takes path, ref, notes_ref, "
	         "require, skip_ci, max, floor, trend_window, trend_sigma, trend_min"},
	        {"[baseline]\ntrend_windows = 3",
	         "t.toml:2:1: baseline.trend_windows: unknown key; did you mean \"trend_window\"?"},
	        {"ets = 1", "t.toml:1:7: ets: expected a table, got an integer; write [ets] with "
	                    "its keys below it"},
	        {"[[binary]]\n",
	         "t.toml:1:1: binary: expected a table, got an array; write [binary] with its keys "
	         "below it"},
	        {"[baseline]\nrequire = 'yes'",
	         "t.toml:2:11: baseline.require: expected a boolean, got a string; write true or "
	         "false, without quotes"},
	        {"[baseline]\nskip_ci = 0",
	         "t.toml:2:11: baseline.skip_ci: expected a boolean, got an integer; write true or "
	         "false, without quotes"},
	};
	RUN(cases);
}

#define COUNT_FIX(ex) "write a whole number without quotes, e.g. " ex

static void test_rule_value_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        /* sizes that may be off */
	        {"[ets]\nmax_total = true",
	         "t.toml:2:13: ets.max_total: expected a size, got a boolean; " SIZE_FIX OFF_HINT},
	        {"[ets]\nmax_total = \"Off\"",
	         "t.toml:2:13: ets.max_total: \"Off\" is not a size; " SIZE_FIX OFF_HINT},
	        {"[ets]\nmax_total = -1",
	         "t.toml:2:13: ets.max_total: -1 bytes is out of range; " SIZE_RANGE OFF_HINT},
	        {"[binary]\nmax_bytes_per_process = \"10 mb\"",
	         "t.toml:2:25: binary.max_bytes_per_process: unknown unit \"mb\" in \"10 mb\"; use "
	         "B, "
	         "kB, MB, GB (1000^n) or KiB, MiB, GiB (1024^n)" OFF_HINT},
	        {"[process]\nmax_memory = \"100\"",
	         "t.toml:2:14: process.max_memory: \"100\" has no unit; add one of B, kB, MB, GB, "
	         "KiB, "
	         "MiB, GiB, e.g. \"100 MB\" (an integer without quotes means bytes)" OFF_HINT},
	        /* sizes that may not */
	        {"[ets]\nleft_alive_floor = 'off'",
	         "t.toml:2:20: ets.left_alive_floor: \"off\" is not a size; " SIZE_FIX},
	        {"[allocator]\nwaste_floor = 1.5",
	         "t.toml:2:15: allocator.waste_floor: expected a size, got a float; " SIZE_FIX},
	        {"[baseline]\nfloor = \"-1 MB\"",
	         "t.toml:2:9: baseline.floor: \"-1 MB\" is negative; " SIZE_RANGE},
	        /* counts */
	        {"[process]\nmax_born = \"100\"",
	         "t.toml:2:12: process.max_born: expected a whole number, got a string; " COUNT_FIX(
	                 "100") OFF_HINT},
	        {"[process]\nmax_born = 1.5",
	         "t.toml:2:12: process.max_born: expected a whole number, got a float; " COUNT_FIX(
	                 "100") OFF_HINT},
	        {"[process]\nmax_mailbox = -1",
	         "t.toml:2:15: process.max_mailbox: -1 is out of range; use a whole number of at "
	         "least 0, e.g. 10000" OFF_HINT},
	        {"[process]\nmax_mailbox = 4611686018427387904",
	         "t.toml:2:15: process.max_mailbox: 4611686018427387904 is out of range; use a "
	         "whole "
	         "number of at most 4611686018427387903, e.g. 10000" OFF_HINT},
	        {"[binary]\nmax_refs_per_process = [1]",
	         "t.toml:2:24: binary.max_refs_per_process: expected a whole number, got an array; "
	         "" COUNT_FIX("50000") OFF_HINT},
	        {"[ets]\nmax_left_alive = -2", "t.toml:2:18: ets.max_left_alive: -2 is out of "
	                                       "range; use a whole number of at least "
	                                       "0, e.g. 0" OFF_HINT},
	        {"[atom]\nmax_growth = '10 000'",
	         "t.toml:2:14: atom.max_growth: expected a whole number, got a string; " COUNT_FIX(
	                 "10000") OFF_HINT},
	        {"[atom]\nper_test = 'off'",
	         "t.toml:2:12: atom.per_test: expected a whole number, got a string; " COUNT_FIX(
	                 "5")},
	        {"[atom]\nper_test = -1", "t.toml:2:12: atom.per_test: -1 is out of range; use a "
	                                  "whole number of at least 0, "
	                                  "e.g. 5"},
	        {"[baseline]\ntrend_window = 1",
	         "t.toml:2:16: baseline.trend_window: 1 is out of range; use a whole number of at "
	         "least 2, e.g. 10"},
	        {"[baseline]\ntrend_window = 10001", "t.toml:2:16: baseline.trend_window: 10001 is "
	                                             "out of range; use a whole number of at "
	                                             "most 10000, e.g. 10"},
	        {"[baseline]\ntrend_window = 2.0", "t.toml:2:16: baseline.trend_window: expected a "
	                                           "whole number, got a float; " COUNT_FIX("10")},
	        /* percentages */
	        {"[atom]\nmax_usage = \"101 %\"",
	         "t.toml:2:13: atom.max_usage: 101 % is out of range; use a percentage from 0 to "
	         "100 %, e.g. \"80 %\"" OFF_HINT},
	        {"[allocator]\nmax_fragmentation = 100.5",
	         "t.toml:2:21: allocator.max_fragmentation: 100.5 % is out of range; use a "
	         "percentage from 0 to 100 %, e.g. \"75 %\"" OFF_HINT},
	        {"[allocator]\nmax_fragmentation = \"75\"",
	         "t.toml:2:21: allocator.max_fragmentation: \"75\" has no % sign; write \"75 "
	         "%\"" OFF_HINT},
	        {"[atom]\nmax_usage = -1",
	         "t.toml:2:13: atom.max_usage: -1 % is out of range; " PCT_RANGE OFF_HINT},
	        {"[baseline]\nmax = \"-5 %\"",
	         "t.toml:2:7: baseline.max: \"-5 %\" is negative; " PCT_RANGE},
	        {"[baseline]\ntrend_min = 'off'",
	         "t.toml:2:13: baseline.trend_min: \"off\" is not a percentage; " PCT_FIX},
	        /* plain numbers */
	        {"[baseline]\ntrend_sigma = -1", "t.toml:2:15: baseline.trend_sigma: -1 is out of "
	                                         "range; use a finite number of 0 or "
	                                         "more, e.g. 3.0"},
	        {"[baseline]\ntrend_sigma = inf", "t.toml:2:15: baseline.trend_sigma: inf is out "
	                                          "of range; use a finite number of 0 or "
	                                          "more, e.g. 3.0"},
	        {"[baseline]\ntrend_sigma = nan", "t.toml:2:15: baseline.trend_sigma: nan is out "
	                                          "of range; use a finite number of 0 or "
	                                          "more, e.g. 3.0"},
	        {"[baseline]\ntrend_sigma = '3'", "t.toml:2:15: baseline.trend_sigma: expected a "
	                                          "number, got a string; write a number "
	                                          "without quotes, e.g. 3.0"},
	};
	RUN(cases);

	/* the edges that pass */
	struct config cfg = {0};
	load_ok(&cfg, "atom.max_usage = '100 %'\nallocator.max_fragmentation = 0\n"
	              "baseline.trend_window = 10000\nbaseline.trend_sigma = 0\n"
	              "process.max_mailbox = 4611686018427387903\n");
	assert_true(cfg.rules.atom.max_usage_pct == 100.0);
	assert_true(cfg.rules.allocator.max_fragmentation_pct == 0.0);
	assert_int_equal(cfg.rules.baseline.trend_window, 10000);
	assert_true(cfg.rules.baseline.trend_sigma == 0.0);
	assert_false(signbit(cfg.rules.baseline.trend_sigma));
	assert_int_equal(cfg.rules.process.max_mailbox, INT64_C(4611686018427387903));
	config_clear(&cfg);
	load_ok(&cfg, "baseline.trend_sigma = -0.0\nbaseline.trend_window = 2\n");
	assert_false(signbit(cfg.rules.baseline.trend_sigma));
	config_clear(&cfg);
}

#define PATH_EX "e.g. path = \".gate/baseline.json\""
#define REF_EX "e.g. ref = \"origin/main\""
#define NOTES_EX "e.g. notes_ref = \"refs/notes/gate\""

static void test_baseline_strings(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[baseline]\npath = ''", "t.toml:2:8: baseline.path: must not be empty; " PATH_EX},
	        {"[baseline]\npath = 1",
	         "t.toml:2:8: baseline.path: expected a string, got an integer; " PATH_EX},
	        {"[baseline]\npath = '/tmp/b.json'",
	         "t.toml:2:8: baseline.path: \"/tmp/b.json\" is absolute; write a path inside the "
	         "repository, " PATH_EX},
	        {"[baseline]\npath = '../b.json'", "t.toml:2:8: baseline.path: \"../b.json\" "
	                                           "leaves the repository; write a path inside "
	                                           "it, " PATH_EX},
	        {"[baseline]\npath = 'a/../../b.json'",
	         "t.toml:2:8: baseline.path: \"a/../../b.json\" leaves the repository; write a "
	         "path "
	         "inside it, " PATH_EX},
	        {"[baseline]\npath = 'a/..'", "t.toml:2:8: baseline.path: \"a/..\" leaves the "
	                                      "repository; write a path inside it, "
	                                      "" PATH_EX},
	        {"[baseline]\npath = \"a\\u0000b\"",
	         "t.toml:2:8: baseline.path: contains a NUL character (\\u0000); remove it"},
	        {"[baseline]\nref = ''", "t.toml:2:7: baseline.ref: must not be empty; " REF_EX},
	        {"[baseline]\nref = 'origin main'", "t.toml:2:7: baseline.ref: \"origin main\" is "
	                                            "not a valid git ref: it contains ' '; "
	                                            "" REF_EX},
	        {"[baseline]\nref = 'HEAD~1'", "t.toml:2:7: baseline.ref: \"HEAD~1\" is not a "
	                                       "valid git ref: it contains '~'; " REF_EX},
	        {"[baseline]\nref = 'a..b'", "t.toml:2:7: baseline.ref: \"a..b\" is not a valid "
	                                     "git ref: it contains \"..\"; " REF_EX},
	        {"[baseline]\nref = 'main@{1}'", "t.toml:2:7: baseline.ref: \"main@{1}\" is not a "
	                                         "valid git ref: it contains \"@{\"; "
	                                         "" REF_EX},
	        {"[baseline]\nref = 'origin/'", "t.toml:2:7: baseline.ref: \"origin/\" is not a "
	                                        "valid git ref: it starts or ends with "
	                                        "/; " REF_EX},
	        {"[baseline]\nref = 'a//b'", "t.toml:2:7: baseline.ref: \"a//b\" is not a valid "
	                                     "git ref: it contains \"//\"; " REF_EX},
	        {"[baseline]\nref = 'origin/.main'",
	         "t.toml:2:7: baseline.ref: \"origin/.main\" is not a valid git ref: a part of it "
	         "starts with a dot; " REF_EX},
	        {"[baseline]\nref = 'main.lock'", "t.toml:2:7: baseline.ref: \"main.lock\" is not "
	                                          "a valid git ref: it ends with .lock; "
	                                          "" REF_EX},
	        {"[baseline]\nref = 'main.'", "t.toml:2:7: baseline.ref: \"main.\" is not a valid "
	                                      "git ref: it ends with a dot; " REF_EX},
	        {"[baseline]\nref = \"a\\tb\"",
	         "t.toml:2:7: baseline.ref: \"a\tb\" is not a valid git ref: it contains a control "
	         "character; " REF_EX},
	        {"[baseline]\nnotes_ref = 'gate'", "t.toml:2:13: baseline.notes_ref: \"gate\" is "
	                                           "not a full ref; write it under refs/, "
	                                           "" NOTES_EX},
	        {"[baseline]\nnotes_ref = 'refs/notes/a b'",
	         "t.toml:2:13: baseline.notes_ref: \"refs/notes/a b\" is not a valid git ref: it "
	         "contains ' '; " NOTES_EX},
	        {"[baseline]\nnotes_ref = 'refs/notes/x:y'",
	         "t.toml:2:13: baseline.notes_ref: \"refs/notes/x:y\" is not a valid git ref: it "
	         "contains ':'; " NOTES_EX},
	};
	RUN(cases);

	struct config cfg = {0};
	load_ok(&cfg,
	        "[baseline]\npath = 'a..b/c...json'\nref = 'refs/remotes/origin/release-1.2'\n"
	        "notes_ref = 'refs/notes/gate/ci'\n");
	assert_string_equal(cfg.rules.baseline.path, "a..b/c...json");
	assert_string_equal(cfg.rules.baseline.ref, "refs/remotes/origin/release-1.2");
	assert_string_equal(cfg.rules.baseline.notes_ref, "refs/notes/gate/ci");
	config_clear(&cfg);
}

#define TABLE_FIX "write [[ets.table]] (two brackets) above each table's name and limits"

static void test_ets_table_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[ets]\ntable = 1",
	         "t.toml:2:9: ets.table: expected an array of tables, got an integer; " TABLE_FIX},
	        {"[ets.table]\nname = 'x'\nmax_size = 1\n",
	         "t.toml:1:1: ets.table: expected an array of tables, got a table; " TABLE_FIX},
	        {"ets.table = [1]",
	         "t.toml:1:14: ets.table[0]: expected a table, got an integer; " TABLE_FIX},
	        {"[[ets.table]]\nmax_bytes = 1\n", "t.toml:1:1: ets.table[0]: has no name; add "
	                                           "name = \"corpus_*\" (a glob on the ETS "
	                                           "table name)"},
	        {"[[ets.table]]\nname = 'x'\n[[ets.table]]\nname = 'y'\nmax_size = 1\n",
	         "t.toml:1:1: ets.table[0]: sets no limit; add max_bytes, max_size or max_growth"},
	        {"[[ets.table]]\nname = 'x'\nmax_bytes = 'off'\n",
	         "t.toml:1:1: ets.table[0]: sets no limit; add max_bytes, max_size or max_growth"},
	        {"[[ets.table]]\nname = 'x'\nmax_bytes = 1\n[[ets.table]]\nmax_size = 2\nname = "
	         "'x'\n",
	         "t.toml:6:8: ets.table[1].name: \"x\" is already limited by ets.table[0]; merge "
	         "the "
	         "two entries"},
	        {"[[ets.table]]\nname = ''\n",
	         "t.toml:2:8: ets.table[0].name: must not be empty; e.g. name = \"corpus_*\""},
	        {"[[ets.table]]\nname = 5\n",
	         "t.toml:2:8: ets.table[0].name: expected a string, got an integer; e.g. name = "
	         "\"corpus_*\""},
	        {"[[ets.table]]\nnam = 'x'\n",
	         "t.toml:2:1: ets.table[0].nam: unknown key; did you mean \"name\"?"},
	        {"[[ets.table]]\nname = 'x'\nrows = 1\n",
	         "t.toml:3:1: ets.table[0].rows: unknown key; [[ets.table]] takes name, max_bytes, "
	         "max_size, max_growth"},
	        {"[[ets.table]]\nname = 'a'\nmax_size = 1\n[[ets.table]]\nname = 'b'\nmax_size = "
	         "-1\n",
	         "t.toml:6:12: ets.table[1].max_size: -1 is out of range; use a whole number of at "
	         "least 0, e.g. 100000" OFF_HINT},
	        {"[[ets.table]]\nname = 'a'\nmax_growth = -5\n",
	         "t.toml:3:14: ets.table[0].max_growth: -5 % is out of range; " PCT_RANGE OFF_HINT},
	        {"[[ets.table]]\nname = 'a'\nmax_bytes = '2 MB '\nmax_bytes = 3\n",
	         "t.toml:4:1: duplicate key max_bytes: already defined at 3:1"},
	        /* the first problem in file order is the one reported, even before the name */
	        {"[[ets.table]]\nmax_size = true\n",
	         "t.toml:2:12: ets.table[0].max_size: expected a whole number, got a "
	         "boolean; " COUNT_FIX("100000") OFF_HINT},
	};
	RUN(cases);
}

static void test_print_rule_defaults(void **state)
{
	(void)state;
	struct config cfg, back = {0};
	char *text;
	const char *lines[] = {
	        "\n[ets]\nmax_total = \"off\"\nmax_left_alive = 0\nleft_alive_floor = \"1 MB\"\n",
	        "\n[binary]\nmax_refs_per_process = 50000\nmax_bytes_per_process = \"10 MB\"\n",
	        "\n[process]\nmax_born = 100\nmax_mailbox = 10000\nmax_memory = \"100 MB\"\n",
	        "\n[atom]\nmax_growth = 10000\nper_test = 5\nmax_usage = \"80 %\"\n",
	        "\n[allocator]\nmax_fragmentation = \"75 %\"\nwaste_floor = \"64 MB\"\n",
	        "\n[baseline]\npath = \".gate/baseline.json\"\nref = \"origin/main\"\n"
	        "notes_ref = \"refs/notes/gate\"\nrequire = false\nskip_ci = false\nmax = \"20 "
	        "%\"\n"
	        "floor = \"1 MB\"\ntrend_window = 10\ntrend_sigma = 3.0\ntrend_min = \"10 %\"\n",
	};

	assert_int_equal(config_default(&cfg), 0);
	text = print_to_string(&cfg);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (!strstr(text, lines[i]))
			fail_msg("missing:\n%s\n--- in:\n%s", lines[i], text);
	assert_null(strstr(text, "[[ets.table]]"));
	load_ok(&back, text);
	assert_config_equal(&back, &cfg);
	free(text);
	config_clear(&back);
	config_clear(&cfg);
}

static void test_print_rule_round_trip(void **state)
{
	(void)state;
	static const int64_t sizes[] = {
	        0, 1, 1234, 1024, 1000000, 1048576, INT64_C(4611686018427387903), RULES_OFF};
	static const double pcts[] = {0, 0.1, 2.5, 100.0 / 3, 100, 1e-7, 99.99999999999999, -1};
	static const double sigmas[] = {0, 0.5, 3, 1e300, 5e-324, 0.1, 1e15, 2.0 / 3};
	struct config cfg, back = {0};
	char *text, *again;
	struct ets_table_limit *t;

	assert_int_equal(config_default(&cfg), 0);
	for (size_t k = 0; k < 8; k++) {
		struct rules_config *r = &cfg.rules;
		int64_t sz = sizes[k], nsz = sizes[(k + 3) % 8];
		double pct = pcts[k], share = pcts[(k + 5) % 8];
		r->ets.max_total = sz;
		r->ets.max_left_alive = k == 7 ? RULES_OFF : (int64_t)k * 1000;
		r->ets.left_alive_floor = nsz == RULES_OFF ? 7 : nsz;
		r->binary.max_refs_per_process = (int64_t)k - 1 < 0 ? RULES_OFF : (int64_t)k * 7;
		r->binary.max_bytes_per_process = nsz;
		r->process.max_born = k % 2 ? RULES_OFF : (int64_t)k;
		r->process.max_mailbox = INT64_C(4611686018427387903) - (int64_t)k;
		r->process.max_memory = sz;
		r->atom.max_growth = k % 3 ? (int64_t)k : RULES_OFF;
		r->atom.per_test = (int64_t)k;
		r->atom.max_usage_pct = share;
		r->allocator.max_fragmentation_pct = share;
		r->allocator.waste_floor = sz == RULES_OFF ? 0 : sz;
		r->baseline.require = k % 2;
		r->baseline.skip_ci = !(k % 3);
		r->baseline.max_pct = pct < 0 ? 1e300 : pct;
		r->baseline.floor_bytes = sz == RULES_OFF ? 1 : sz;
		r->baseline.trend_window = 2 + (int)k * 1000;
		r->baseline.trend_sigma = sigmas[k];
		r->baseline.trend_min_pct = pct < 0 ? 0 : pct;
		ets_config_clear(&r->ets);
		r->ets.max_total = sz;
		r->ets.left_alive_floor = 5;
		for (size_t i = 0; i < k; i++) {
			char name[32];
			snprintf(name, sizeof(name), i % 2 ? "t\"%zu\\*" : "corpus_%zu_*", i);
			assert_non_null(t = ets_config_table_add(&r->ets, name));
			/* each entry sets a different subset of the limits, at least one */
			if (i % 3 != 1)
				t->max_bytes = sizes[i % 7];
			if (i % 3 != 2)
				t->max_size = (int64_t)i * 100;
			if (i % 2 == 0 || i % 3 == 0)
				t->max_growth_pct = pcts[i % 7];
		}
		free(r->baseline.path);
		free(r->baseline.ref);
		free(r->baseline.notes_ref);
		r->baseline.path = strdup(k % 2 ? "dir with space/b\"q\".json" : "ü/baseline.json");
		r->baseline.ref = k % 2 ? strdup("refs/heads/ü-1") : NULL;
		r->baseline.notes_ref = strdup("refs/notes/gate-memory");

		text = print_to_string(&cfg);
		load_ok(&back, text);
		assert_config_equal(&back, &cfg);
		again = print_to_string(&back);
		assert_string_equal(strchr(again, '\n'), strchr(text, '\n'));
		free(again);
		free(text);
		config_clear(&back);
	}

	/* what the printed entries look like: only the limits an entry sets */
	ets_config_clear(&cfg.rules.ets);
	ets_config_default(&cfg.rules.ets);
	assert_non_null(t = ets_config_table_add(&cfg.rules.ets, "corpus_*"));
	t->max_bytes = 2000000;
	t->max_growth_pct = 50;
	assert_non_null(t = ets_config_table_add(&cfg.rules.ets, "sessions"));
	t->max_size = 0;
	cfg.rules.baseline.trend_sigma = 2.5;
	cfg.rules.atom.max_usage_pct = -1;
	text = print_to_string(&cfg);
	const char *want[] = {
	        "\n[ets]\nmax_total = \"off\"\nmax_left_alive = 0\nleft_alive_floor = \"1 MB\"\n\n"
	        "[[ets.table]]\nname = \"corpus_*\"\nmax_bytes = \"2 MB\"\nmax_growth = \"50 "
	        "%\"\n\n"
	        "[[ets.table]]\nname = \"sessions\"\nmax_size = 0\n\n[binary]\n",
	        "trend_sigma = 2.5\n",
	        "max_usage = \"off\"\n",
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
		print_message("%s not found (set GATE_TOML or run from the repository root)\n",
		              path);
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
	        cmocka_unit_test(test_rule_defaults),
	        cmocka_unit_test(test_rule_every_key),
	        cmocka_unit_test(test_rule_limits_off),
	        cmocka_unit_test(test_ets_table_forms),
	        cmocka_unit_test(test_rule_unknown_keys_and_types),
	        cmocka_unit_test(test_rule_value_errors),
	        cmocka_unit_test(test_baseline_strings),
	        cmocka_unit_test(test_ets_table_errors),
	        cmocka_unit_test(test_print_rule_defaults),
	        cmocka_unit_test(test_print_rule_round_trip),
	        cmocka_unit_test(test_allocation_failures),
	        cmocka_unit_test(test_repo_gate_toml_is_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
