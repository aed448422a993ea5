/* tests/test_config_rules.c: unit tests for gate.toml's rule tables (gate/config/config_schema.c):
 * [ets], [[ets.table]], [binary], [process], [atom], [allocator], [baseline] and the others read,
 * turned off and printed back. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_rule_defaults),
	        cmocka_unit_test(test_rule_every_key),
	        cmocka_unit_test(test_rule_limits_off),
	        cmocka_unit_test(test_ets_table_forms),
	        cmocka_unit_test(test_print_rule_defaults),
	        cmocka_unit_test(test_print_rule_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
