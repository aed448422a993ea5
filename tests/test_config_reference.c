/* tests/test_config_reference.c: unit tests for `gate config reference`
 * (gate/config/config_reference.c, the docs in gate/config/config_schema.c): every key has a
 * description and an example that loads, every key is in the reference under its table with
 * the default config_default gives it, and every key gate prints back is documented. */
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
#include "tests/config_helpers.h"

static char *reference_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(config_reference(f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The heading of table as the reference writes it: "## [node]", "## [[ets.table]]". */
static void heading(char *out, size_t n, const char *table)
{
	if (strcmp(table, "ets.table") == 0)
		snprintf(out, n, "\n## [[%s]]\n", table);
	else
		snprintf(out, n, "\n## [%s]\n", table);
}

/* The text of table's part of ref (up to the next heading), in a buffer the caller frees. */
static char *table_part(const char *ref, const char *table)
{
	char h[128];

	heading(h, sizeof(h), table);
	const char *at = strstr(ref, h);
	if (!at)
		fail_msg("the reference has no heading %s", h + 1);
	if (strstr(at + 1, h))
		fail_msg("the reference has the heading %s twice", h + 1);
	const char *end = strstr(at + strlen(h), "\n## ");
	size_t len = end ? (size_t)(end - at) : strlen(at);
	char *part = strndup(at, len);
	assert_non_null(part);
	return part;
}

/* The row of key in part ("| `key` | ..."), in a buffer the caller frees. */
static char *key_row(const char *part, const char *table, const char *key)
{
	char start[128];

	snprintf(start, sizeof(start), "\n| `%s` |", key);
	const char *at = strstr(part, start);
	if (!at)
		fail_msg("the reference has no row for %s.%s", table, key);
	const char *end = strchr(at + 1, '\n');
	char *row = strndup(at + 1, end ? (size_t)(end - at - 1) : strlen(at + 1));
	assert_non_null(row);
	return row;
}

/* ---- the schema's words ---- */

/* A key added to config_schema.c without its doc fails here. */
static void test_every_key_has_a_description(void **state)
{
	(void)state;
	struct config_key_doc d, e;
	size_t n = 0;

	for (size_t i = 0; config_key_doc_at(i, &d); i++, n++) {
		if (!d.doc || !d.doc[0])
			fail_msg("%s.%s has no description: give it a doc in gate/config/"
			         "config_schema.c",
			         d.table, d.key);
		if (strchr(d.doc, '\n') || strchr(d.doc, '|'))
			fail_msg("%s.%s: a description is one line without '|'", d.table, d.key);
		if (d.doc[strlen(d.doc) - 1] != '.')
			fail_msg("%s.%s: a description is a sentence: end it with a period",
			         d.table, d.key);
		if (!d.example || !d.example[0])
			fail_msg("%s.%s has no example", d.table, d.key);
		for (size_t j = 0; j < i; j++) {
			assert_true(config_key_doc_at(j, &e));
			if (strcmp(d.table, e.table) == 0 && strcmp(d.key, e.key) == 0)
				fail_msg("%s.%s is listed twice", d.table, d.key);
		}
	}
	if (n < 60) /* every table, and the keys config.c reads itself */
		fail_msg("only %zu keys are documented", n);
	assert_false(config_key_doc_at(n, &d));
	assert_false(config_key_doc_at((size_t)-1, &d));
}

/* A table, a category or a key without words prints "(undocumented)". */
static void test_reference_has_nothing_undocumented(void **state)
{
	(void)state;
	char *ref = reference_text();
	const char *at = strstr(ref, "(undocumented)");

	if (at) {
		while (at > ref && at[-1] != '\n')
			at--;
		fail_msg("the reference has an undocumented part: %.*s", (int)strcspn(at, "\n"),
		         at);
	}
	free(ref);
}

/* Each key's example, written in its table, loads. */
static void test_every_example_loads(void **state)
{
	(void)state;
	struct config_key_doc d;

	for (size_t i = 0; config_key_doc_at(i, &d); i++) {
		char text[512];
		struct config cfg = {0};

		if (strcmp(d.table, "growth.CATEGORY") == 0)
			snprintf(text, sizeof(text), "[growth.ets]\n%s = %s\n", d.key, d.example);
		else if (strcmp(d.table, "ets.table") == 0 && strcmp(d.key, "name") == 0)
			snprintf(text, sizeof(text), "[[ets.table]]\nname = %s\nmax_size = 1\n",
			         d.example);
		else if (strcmp(d.table, "ets.table") == 0)
			snprintf(text, sizeof(text), "[[ets.table]]\nname = \"t\"\n%s = %s\n",
			         d.key, d.example);
		else
			snprintf(text, sizeof(text), "[%s]\n%s = %s\n", d.table, d.key, d.example);
		load_ok(&cfg, text);
		config_clear(&cfg);
	}
}

/* ---- the reference ---- */

static void test_every_key_is_in_its_table(void **state)
{
	(void)state;
	char *ref = reference_text();
	struct config_key_doc d;

	for (size_t i = 0; config_key_doc_at(i, &d); i++) {
		char *part = table_part(ref, d.table);
		char *row = key_row(part, d.table, d.key);
		if (d.doc && !strstr(row, d.doc))
			fail_msg("the row of %s.%s lacks its description: %s", d.table, d.key, row);
		free(row);
		free(part);
	}
	free(ref);
}

/* What gate prints back (config_print, with its own code for [growth]) is documented: every
 * table has its heading and every key its row, an [[ets.table]] entry's keys too. */
static void test_printed_keys_are_in_the_reference(void **state)
{
	(void)state;
	char *ref = reference_text();
	struct config cfg = {0};
	struct toml_value *root = NULL;
	char err[256];

	load_ok(&cfg, "[[ets.table]]\nname = \"t\"\nmax_bytes = 1\nmax_size = 2\nmax_growth = 3\n");
	char *printed = print_to_string(&cfg);
	assert_keys_documented(printed);
	assert_int_equal(toml_parse(&root, printed, strlen(printed), err, sizeof(err)), 0);
	for (size_t i = 0; i < toml_table_len(root); i++) {
		const char *table = toml_table_key(root, i);
		const struct toml_value *t = toml_table_value(root, i);
		char *part = table_part(ref, table);
		for (size_t k = 0; k < toml_table_len(t); k++) {
			const char *key = toml_table_key(t, k);
			const struct toml_value *v = toml_table_value(t, k);
			if (toml_type(v) == TOML_TABLE || toml_type(v) == TOML_ARRAY)
				continue; /* [growth.<category>], [[ets.table]]: checked above */
			free(key_row(part, table, key));
		}
		free(part);
	}
	toml_free(root);
	free(printed);
	config_clear(&cfg);
	free(ref);
}

/* Each default as config_print writes it ("key = VALUE" under "[table]") is the default
 * cell of the key's row: "| `key` | TYPE | `VALUE` |". */
static void test_defaults_are_config_default(void **state)
{
	(void)state;
	char *ref = reference_text();
	struct config def;

	assert_int_equal(config_default(&def), 0);
	char *printed = print_to_string(&def);
	char table[128] = "";
	char *save = NULL;
	size_t checked = 0;

	for (char *line = strtok_r(printed, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strstr(line, " = ");
		if (line[0] == '[') {
			snprintf(table, sizeof(table), "%.*s", (int)strlen(line) - 2, line + 1);
			continue;
		}
		if (line[0] == '#' || !eq)
			continue;
		*eq = '\0';
		const char *key = line, *value = eq + 3;
		char want[256];
		if (strncmp(table, "growth.", 7) == 0) {
			/* the categories' table: "| `ets` | `true` | `"10 %"` | `"1 MB"` |" */
			char *part = table_part(ref, "growth.CATEGORY");
			char *row = key_row(part, "growth.CATEGORY", table + 7);
			snprintf(want, sizeof(want), " `%s` |", value);
			if (!strstr(row, want))
				fail_msg("%s.%s: the categories' row lacks %s: %s", table, key,
				         want, row);
			free(row);
			free(part);
		} else {
			char *part = table_part(ref, table);
			char *row = key_row(part, table, key);
			const char *type_end = strstr(row + strlen(key) + 6, " | ");
			assert_non_null(type_end);
			snprintf(want, sizeof(want), " | `%s` | ", value);
			if (strncmp(type_end, want, strlen(want)) != 0)
				fail_msg("%s.%s: the default is not %s: %s", table, key, value,
				         row);
			free(row);
			free(part);
		}
		checked++;
	}
	assert_true(checked > 60);
	free(printed);
	config_clear(&def);
	free(ref);
}

/* [growth] max and floor have no default of their own, and every category is listed. */
static void test_growth_categories_listed(void **state)
{
	(void)state;
	char *ref = reference_text();
	char *part = table_part(ref, "growth");
	char *row = key_row(part, "growth", "max");

	assert_non_null(strstr(row, "each category's (below)"));
	free(row);
	free(part);
	part = table_part(ref, "growth.CATEGORY");
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		row = key_row(part, "growth.CATEGORY", mem_cat_name((enum mem_cat)c));
		free(row);
	}
	free(part);
	free(ref);
}

/* The same text every time, ending in one newline, no blank at a line's end. */
static void test_reference_is_stable_markdown(void **state)
{
	(void)state;
	char *a = reference_text(), *b = reference_text();
	size_t len = strlen(a);

	assert_string_equal(a, b);
	assert_true(len > 2 && a[len - 1] == '\n' && a[len - 2] != '\n');
	assert_null(strstr(a, " \n"));
	assert_null(strstr(a, "\t"));
	assert_int_equal(strncmp(a, "# gate.toml reference\n\n", 23), 0);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_every_key_has_a_description),
	        cmocka_unit_test(test_reference_has_nothing_undocumented),
	        cmocka_unit_test(test_every_example_loads),
	        cmocka_unit_test(test_every_key_is_in_its_table),
	        cmocka_unit_test(test_printed_keys_are_in_the_reference),
	        cmocka_unit_test(test_defaults_are_config_default),
	        cmocka_unit_test(test_growth_categories_listed),
	        cmocka_unit_test(test_reference_is_stable_markdown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
