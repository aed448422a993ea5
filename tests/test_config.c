/* tests/test_config.c: unit tests for gate.toml loading, checking and printing (gate/config/):
 * defaults, every key, value syntax, precedence, files, printing; the refusals are in
 * test_config_errors.c, the rule tables in test_config_rules.c. */
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
#include "model/snapshot.h"
#include "tests/config_helpers.h"

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

/* What gate/cmd/cli.c and gate/config/discover.c do: defaults first, then a load (or two) replacing
 * them. */
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
	        cmocka_unit_test_setup_teardown(test_load_file, setup_tmpdir, teardown_tmpdir),
	        cmocka_unit_test_setup_teardown(test_file_errors, setup_tmpdir, teardown_tmpdir),
	        cmocka_unit_test(test_print_defaults),
	        cmocka_unit_test(test_print_round_trip),
	        cmocka_unit_test(test_allocation_failures),
	        cmocka_unit_test(test_repo_gate_toml_is_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
