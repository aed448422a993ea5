/* tests/config_helpers.h: what the gate.toml tests share (test_config.c, test_config_errors.c,
 * test_config_rules.c, test_config_reference.c, test_config_template.c): loading text that
 * must pass or fail with one exact message, comparing whole configurations, and whether the
 * reference documents every key of a file. Header-only: each test is one program. */
#ifndef GATE_TESTS_CONFIG_HELPERS_H
#define GATE_TESTS_CONFIG_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config/config.h"
#include "gate/config/toml.h"
#include "model/snapshot.h"

static inline void load_ok(struct config *cfg, const char *text)
{
	char err[512];

	if (config_load_text(cfg, text, strlen(text), "t.toml", err, sizeof(err)) != 0)
		fail_msg("load failed: %s\n--- input:\n%s", err, text);
}

/* A NULL baseline string means its BASELINE_DEFAULT_*: compared as what it means. */
static inline const char *or_default(const char *s, const char *def)
{
	return s ? s : def;
}

static inline void assert_rules_equal(const struct rules_config *a, const struct rules_config *b)
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

static inline void assert_config_equal(const struct config *a, const struct config *b)
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

static inline void assert_is_defaults(const struct config *cfg)
{
	struct config def;

	assert_int_equal(config_default(&def), 0);
	assert_config_equal(cfg, &def);
	assert_string_equal(cfg->source, "defaults");
	config_clear(&def);
}

/* text must fail with exactly want, leaving the defaults in cfg. */
static inline void load_err(const char *text, const char *want)
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
static inline void load_kv(struct config *cfg, const char *table, const char *key,
                           const char *value)
{
	char text[512];

	snprintf(text, sizeof(text), "%s\n%s = %s\n", table, key, value);
	load_ok(cfg, text);
}

static inline char *print_to_string(const struct config *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	config_print(cfg, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

struct err_case {
	const char *in;
	const char *err;
};

static inline void run_cases(const struct err_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		load_err(c[i].in, c[i].err);
}

#define RUN(cases) run_cases(cases, sizeof(cases) / sizeof(cases[0]))

/* Whether the reference documents key in table (config_key_doc_at): "growth.CATEGORY" for
 * every [growth.<category>], "ets.table" for an [[ets.table]] entry. */
static inline bool key_documented(const char *table, const char *key)
{
	struct config_key_doc d;

	for (size_t i = 0; config_key_doc_at(i, &d); i++)
		if (strcmp(d.table, table) == 0 && strcmp(d.key, key) == 0)
			return true;
	return false;
}

static inline void assert_table_documented(const struct toml_value *t, const char *table)
{
	for (size_t i = 0; i < toml_table_len(t); i++)
		if (!key_documented(table, toml_table_key(t, i)))
			fail_msg("%s.%s is not in the reference", table, toml_table_key(t, i));
}

/* Every key of the TOML text is one the reference documents (and it parses). */
static inline void assert_keys_documented(const char *text)
{
	struct toml_value *root = NULL;
	char err[256];

	if (toml_parse(&root, text, strlen(text), err, sizeof(err)) != 0)
		fail_msg("does not parse: %s\n--- input:\n%s", err, text);
	for (size_t i = 0; i < toml_table_len(root); i++) {
		const char *table = toml_table_key(root, i);
		const struct toml_value *t = toml_table_value(root, i);

		if (toml_type(t) != TOML_TABLE)
			fail_msg("%s is a key outside any table", table);
		for (size_t k = 0; k < toml_table_len(t); k++) {
			const char *key = toml_table_key(t, k);
			const struct toml_value *v = toml_table_value(t, k);
			if (strcmp(table, "growth") == 0 && mem_cat_from_name(key) >= 0) {
				assert_int_equal(toml_type(v), TOML_TABLE);
				assert_table_documented(v, "growth.CATEGORY");
			} else if (strcmp(table, "ets") == 0 && strcmp(key, "table") == 0) {
				assert_int_equal(toml_type(v), TOML_ARRAY);
				for (size_t e = 0; e < toml_array_len(v); e++)
					assert_table_documented(toml_array_at(v, e), "ets.table");
			} else if (!key_documented(table, key)) {
				fail_msg("%s.%s is not in the reference", table, key);
			}
		}
	}
	toml_free(root);
}

#endif
