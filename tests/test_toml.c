/* tests/test_toml.c: unit tests for the strict TOML reader (gate/config/toml*.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config/toml.h"

/* ---- helpers ---- */

static struct toml_value *parse_ok(const char *text)
{
	struct toml_value *v = NULL;
	char err[512];

	if (toml_parse(&v, text, strlen(text), err, sizeof(err)) != 0)
		fail_msg("parse failed: %s\n--- input:\n%s", err, text);
	assert_non_null(v);
	assert_int_equal(toml_type(v), TOML_TABLE);
	return v;
}

/* Parses len bytes that must fail with exactly want. */
static void expect_err_len(const char *text, size_t len, const char *want)
{
	struct toml_value *v = (struct toml_value *)1;
	char err[512];

	int rc = toml_parse(&v, text, len, err, sizeof(err));
	if (rc != -1 || strcmp(err, want) != 0)
		fail_msg("input:\n%.*s\n--- want: %s\n--- got (rc %d): %s", (int)len, text, want,
		         rc, rc ? err : "(parsed)");
	assert_null(v);
}

static void expect_err(const char *text, const char *want)
{
	expect_err_len(text, strlen(text), want);
}

static const char *str_at(const struct toml_value *t, const char *key)
{
	const struct toml_value *v = toml_get(t, key);
	if (!v || toml_type(v) != TOML_STRING)
		fail_msg("%s: not a string", key);
	return toml_string(v, NULL);
}

static int64_t int_at(const struct toml_value *t, const char *key)
{
	const struct toml_value *v = toml_get(t, key);
	if (!v || toml_type(v) != TOML_INTEGER)
		fail_msg("%s: not an integer", key);
	return toml_integer(v);
}

static double float_at(const struct toml_value *t, const char *key)
{
	const struct toml_value *v = toml_get(t, key);
	if (!v || toml_type(v) != TOML_FLOAT)
		fail_msg("%s: not a float", key);
	return toml_float(v);
}

static void assert_pos(struct toml_pos pos, int line, int col)
{
	if (pos.line != line || pos.col != col)
		fail_msg("position %d:%d, want %d:%d", pos.line, pos.col, line, col);
}

/* ---- values ---- */

static void test_empty_and_comments(void **state)
{
	(void)state;
	const char *docs[] = {"", "\n\n", "# only a comment", "  # c\r\n\t\n# é ünïcödé\n",
	                      "\xEF\xBB\xBF# after a byte order mark\n"};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct toml_value *v = parse_ok(docs[i]);
		assert_int_equal(toml_table_len(v), 0);
		toml_free(v);
	}
	toml_free(NULL);
}

static void test_basic_strings(void **state)
{
	(void)state;
	struct toml_value *v = parse_ok("plain = \"hello world\"\n"
	                                "esc = \"q\\\" b\\\\ n\\n t\\t r\\r b\\b f\\f\"\n"
	                                "u = \"\\u00e9\\u20AC\"\n"
	                                "U = \"\\U0001F600\"\n"
	                                "nul = \"a\\u0000b\"\n"
	                                "empty = \"\"\n"
	                                "tab = \"a\tb\"\n"
	                                "raw = \"ünï €\" # trailing comment\n"
	                                "hash = \"# not a comment\"\n");
	size_t len;

	assert_string_equal(str_at(v, "plain"), "hello world");
	assert_string_equal(str_at(v, "esc"), "q\" b\\ n\n t\t r\r b\b f\f");
	assert_string_equal(str_at(v, "u"), "\xC3\xA9\xE2\x82\xAC");
	assert_string_equal(str_at(v, "U"), "\xF0\x9F\x98\x80");
	const char *nul = toml_string(toml_get(v, "nul"), &len);
	assert_int_equal(len, 3);
	assert_memory_equal(nul, "a\0b", 4);
	assert_string_equal(str_at(v, "empty"), "");
	assert_string_equal(str_at(v, "tab"), "a\tb");
	assert_string_equal(str_at(v, "raw"), "ünï €");
	assert_string_equal(str_at(v, "hash"), "# not a comment");
	toml_free(v);
}

static void test_literal_and_multiline_strings(void **state)
{
	(void)state;
	struct toml_value *v =
	        parse_ok("lit = 'C:\\Users\\x \"quoted\"'\n"
	                 "lempty = ''\n"
	                 "ml = \"\"\"\nRoses are red\nViolets are blue\"\"\"\n"
	                 "mlcrlf = \"\"\"\r\none\r\ntwo\"\"\"\n"
	                 "fold = \"\"\"The quick \\\n\n    brown \\   \n  fox.\"\"\"\n"
	                 "quotes = \"\"\"He said \"\"yes\"\" \"\"\"\"\"\n"
	                 "mlesc = \"\"\"tab\\there \\u00e9\"\"\"\n"
	                 "mllit = '''\nfirst line\n  \\n is literal '' ok'''\n"
	                 "mllit2 = ''''two quotes inside'''''\n"
	                 "oneline = \"\"\"no newline\"\"\"\n");

	assert_string_equal(str_at(v, "lit"), "C:\\Users\\x \"quoted\"");
	assert_string_equal(str_at(v, "lempty"), "");
	assert_string_equal(str_at(v, "ml"), "Roses are red\nViolets are blue");
	assert_string_equal(str_at(v, "mlcrlf"), "one\ntwo");
	assert_string_equal(str_at(v, "fold"), "The quick brown fox.");
	assert_string_equal(str_at(v, "quotes"), "He said \"\"yes\"\" \"\"");
	assert_string_equal(str_at(v, "mlesc"), "tab\there \xC3\xA9");
	assert_string_equal(str_at(v, "mllit"), "first line\n  \\n is literal '' ok");
	assert_string_equal(str_at(v, "mllit2"), "'two quotes inside''");
	assert_string_equal(str_at(v, "oneline"), "no newline");
	toml_free(v);
}

static void test_integers(void **state)
{
	(void)state;
	struct toml_value *v =
	        parse_ok("a = 42\nb = +17\nc = -5\nd = 0\ne = -0\nf = +0\n"
	                 "g = 1_000_000\nh = 5_349_221\n"
	                 "max = 9223372036854775807\nmin = -9223372036854775808\n"
	                 "hex = 0xDEAD_beef\nhex0 = 0x00ff\noct = 0o755\nbin = 0b1101_0110\n"
	                 "hexmax = 0x7fffffffffffffff\n");

	assert_int_equal(int_at(v, "a"), 42);
	assert_int_equal(int_at(v, "b"), 17);
	assert_int_equal(int_at(v, "c"), -5);
	assert_int_equal(int_at(v, "d"), 0);
	assert_int_equal(int_at(v, "e"), 0);
	assert_int_equal(int_at(v, "f"), 0);
	assert_int_equal(int_at(v, "g"), 1000000);
	assert_int_equal(int_at(v, "h"), 5349221);
	assert_true(int_at(v, "max") == INT64_MAX);
	assert_true(int_at(v, "min") == INT64_MIN);
	assert_int_equal(int_at(v, "hex"), 0xDEADBEEF);
	assert_int_equal(int_at(v, "hex0"), 255);
	assert_int_equal(int_at(v, "oct"), 0755);
	assert_int_equal(int_at(v, "bin"), 0xD6);
	assert_true(int_at(v, "hexmax") == INT64_MAX);
	toml_free(v);
}

static void test_floats(void **state)
{
	(void)state;
	struct toml_value *v =
	        parse_ok("a = 3.1415\nb = -0.01\nc = 5e+22\nd = 1e06\ne = -2E-2\n"
	                 "f = 6.626e-34\ng = 224_617.445_991\nh = 0.5\ni = +1.5\n"
	                 "j = 1_0e1_0\nk = inf\nl = +inf\nm = -inf\nn = nan\no = -nan\n"
	                 "p = +nan\nq = -0.0\nr = 1e-400\n");

	assert_true(float_at(v, "a") == 3.1415);
	assert_true(float_at(v, "b") == -0.01);
	assert_true(float_at(v, "c") == 5e22);
	assert_true(float_at(v, "d") == 1e6);
	assert_true(float_at(v, "e") == -2e-2);
	assert_true(float_at(v, "f") == 6.626e-34);
	assert_true(float_at(v, "g") == 224617.445991);
	assert_true(float_at(v, "h") == 0.5);
	assert_true(float_at(v, "i") == 1.5);
	assert_true(float_at(v, "j") == 10e10);
	assert_true(isinf(float_at(v, "k")) && float_at(v, "k") > 0);
	assert_true(isinf(float_at(v, "l")) && float_at(v, "l") > 0);
	assert_true(isinf(float_at(v, "m")) && float_at(v, "m") < 0);
	assert_true(isnan(float_at(v, "n")));
	assert_true(isnan(float_at(v, "o")));
	assert_true(isnan(float_at(v, "p")));
	assert_true(float_at(v, "q") == 0.0 && signbit(float_at(v, "q")));
	assert_true(float_at(v, "r") == 0.0); /* underflow reads as 0, not an error */
	toml_free(v);
}

static void test_booleans_and_wrong_type_getters(void **state)
{
	(void)state;
	struct toml_value *v = parse_ok("t = true\nf = false\ns = \"true\"\n");
	const struct toml_value *t = toml_get(v, "t"), *s = toml_get(v, "s");

	assert_int_equal(toml_type(t), TOML_BOOLEAN);
	assert_true(toml_boolean(t));
	assert_int_equal(toml_type(toml_get(v, "f")), TOML_BOOLEAN);
	assert_false(toml_boolean(toml_get(v, "f")));
	/* getters of another type answer 0 / NULL / false */
	assert_int_equal(toml_type(s), TOML_STRING);
	assert_false(toml_boolean(s));
	assert_int_equal(toml_integer(s), 0);
	assert_true(toml_float(s) == 0.0);
	assert_null(toml_string(t, NULL));
	assert_null(toml_get(t, "x"));
	assert_int_equal(toml_table_len(t), 0);
	assert_int_equal(toml_array_len(t), 0);
	assert_null(toml_array_at(t, 0));
	assert_null(toml_get(v, "missing"));
	assert_null(toml_get(NULL, "t"));
	assert_null(toml_table_key(v, 3));
	assert_null(toml_table_value(v, 3));
	assert_pos(toml_table_key_pos(v, 3), 0, 0);
	assert_string_equal(toml_type_name(TOML_INTEGER), "integer");
	assert_string_equal(toml_type_name(TOML_TABLE), "table");
	toml_free(v);
}

static void test_arrays(void **state)
{
	(void)state;
	struct toml_value *v =
	        parse_ok("empty = []\n"
	                 "ints = [1, 2, 3]\n"
	                 "mixed = [1, \"two\", 3.0, true, [4], {five = 5}]\n"
	                 "trailing = [1, 2,]\n"
	                 "multi = [\n  1, # one\n  # a comment line\n  2\r\n  ,3,\n]\n"
	                 "nested = [[1, 2], [\"a\"], [[]]]\n");
	const struct toml_value *a;

	assert_int_equal(toml_array_len(toml_get(v, "empty")), 0);
	a = toml_get(v, "ints");
	assert_int_equal(toml_type(a), TOML_ARRAY);
	assert_int_equal(toml_array_len(a), 3);
	assert_int_equal(toml_integer(toml_array_at(a, 2)), 3);
	assert_null(toml_array_at(a, 3));
	a = toml_get(v, "mixed");
	assert_int_equal(toml_array_len(a), 6);
	assert_int_equal(toml_type(toml_array_at(a, 0)), TOML_INTEGER);
	assert_string_equal(toml_string(toml_array_at(a, 1), NULL), "two");
	assert_int_equal(toml_type(toml_array_at(a, 2)), TOML_FLOAT);
	assert_int_equal(toml_type(toml_array_at(a, 3)), TOML_BOOLEAN);
	assert_int_equal(toml_integer(toml_array_at(toml_array_at(a, 4), 0)), 4);
	assert_int_equal(toml_integer(toml_get(toml_array_at(a, 5), "five")), 5);
	assert_int_equal(toml_array_len(toml_get(v, "trailing")), 2);
	a = toml_get(v, "multi");
	assert_int_equal(toml_array_len(a), 3);
	assert_int_equal(toml_integer(toml_array_at(a, 1)), 2);
	assert_int_equal(toml_integer(toml_array_at(a, 2)), 3);
	a = toml_get(v, "nested");
	assert_int_equal(toml_array_len(a), 3);
	assert_string_equal(toml_string(toml_array_at(toml_array_at(a, 1), 0), NULL), "a");
	assert_int_equal(toml_array_len(toml_array_at(toml_array_at(a, 2), 0)), 0);
	toml_free(v);
}

static void test_inline_tables(void **state)
{
	(void)state;
	struct toml_value *v = parse_ok("point = { x = 1, y = 2 }\n"
	                                "empty = {}\n"
	                                "deep = { a = { b = { c = \"x\" } }, n.m = 3, n.o = 4 }\n");
	const struct toml_value *p = toml_get(v, "point"), *d = toml_get(v, "deep");

	assert_int_equal(toml_type(p), TOML_TABLE);
	assert_int_equal(toml_table_len(p), 2);
	assert_int_equal(int_at(p, "y"), 2);
	assert_int_equal(toml_table_len(toml_get(v, "empty")), 0);
	assert_string_equal(str_at(toml_get(toml_get(d, "a"), "b"), "c"), "x");
	assert_int_equal(int_at(toml_get(d, "n"), "m"), 3);
	assert_int_equal(int_at(toml_get(d, "n"), "o"), 4);
	toml_free(v);
}

static void test_keys_and_tables(void **state)
{
	(void)state;
	struct toml_value *v =
	        parse_ok("top = 1\n"
	                 "\"quoted key\" = 2\n"
	                 "'lit.key' = 3\n"
	                 "\"\" = 4\n"
	                 "1234 = 5\n"
	                 "bare-key_2 = 6\n"
	                 "site.\"google.com\" = true\n"
	                 "a . b . c = 7\n"
	                 "a.b.d = 8\n"
	                 "[tbl]\n"
	                 "x = 1\n"
	                 "[ dog . \"tater.man\" ]\n"
	                 "type.name = \"pug\"\n"
	                 "[x.y.z.w] # only w is defined\n"
	                 "[x] # and x may still be defined once\n"
	                 "k = 1\n"
	                 "[fruit]\n"
	                 "apple.color = \"red\"\n"
	                 "[fruit.apple.texture] # a sub-table of a dotted table is fine\n"
	                 "smooth = true\n");
	const struct toml_value *t;

	/* keys in file order */
	const char *order[] = {"top",  "quoted key", "lit.key", "",    "1234", "bare-key_2",
	                       "site", "a",          "tbl",     "dog", "x",    "fruit"};
	assert_int_equal(toml_table_len(v), sizeof(order) / sizeof(order[0]));
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		assert_string_equal(toml_table_key(v, i), order[i]);
	assert_int_equal(int_at(v, "quoted key"), 2);
	assert_int_equal(int_at(v, "lit.key"), 3);
	assert_int_equal(int_at(v, ""), 4);
	assert_int_equal(int_at(v, "1234"), 5);
	assert_true(toml_boolean(toml_get(toml_get(v, "site"), "google.com")));
	t = toml_get(toml_get(v, "a"), "b");
	assert_int_equal(int_at(t, "c"), 7);
	assert_int_equal(int_at(t, "d"), 8);
	assert_int_equal(int_at(toml_get(v, "tbl"), "x"), 1);
	t = toml_get(toml_get(toml_get(v, "dog"), "tater.man"), "type");
	assert_string_equal(str_at(t, "name"), "pug");
	t = toml_get(v, "x");
	assert_int_equal(int_at(t, "k"), 1);
	assert_int_equal(toml_type(toml_get(toml_get(toml_get(t, "y"), "z"), "w")), TOML_TABLE);
	t = toml_get(toml_get(v, "fruit"), "apple");
	assert_string_equal(str_at(t, "color"), "red");
	assert_true(toml_boolean(toml_get(toml_get(t, "texture"), "smooth")));
	toml_free(v);
}

static void test_array_of_tables(void **state)
{
	(void)state;
	struct toml_value *v = parse_ok("[[products]]\n"
	                                "name = \"Hammer\"\n"
	                                "[[products]] # empty element\n"
	                                "[[products]]\n"
	                                "name = \"Nail\"\n"
	                                "[products.dims]\n"
	                                "w = 1\n"
	                                "[[products.parts]]\n"
	                                "p = 1\n"
	                                "[[products.parts]]\n"
	                                "p = 2\n"
	                                "[[fruits]]\n"
	                                "name = \"apple\"\n");
	const struct toml_value *a = toml_get(v, "products"), *last, *parts;

	assert_int_equal(toml_type(a), TOML_ARRAY);
	assert_int_equal(toml_array_len(a), 3);
	assert_string_equal(str_at(toml_array_at(a, 0), "name"), "Hammer");
	assert_int_equal(toml_table_len(toml_array_at(a, 1)), 0);
	last = toml_array_at(a, 2);
	assert_string_equal(str_at(last, "name"), "Nail");
	assert_int_equal(int_at(toml_get(last, "dims"), "w"), 1);
	parts = toml_get(last, "parts");
	assert_int_equal(toml_array_len(parts), 2);
	assert_int_equal(int_at(toml_array_at(parts, 1), "p"), 2);
	assert_string_equal(str_at(toml_array_at(toml_get(v, "fruits"), 0), "name"), "apple");
	toml_free(v);
}

static void test_value_and_key_positions(void **state)
{
	(void)state;
	struct toml_value *v = parse_ok("a = 1\n"
	                                "  b   =   \"x\"\n"
	                                "\"é\" = [1, { c = true }]\n"
	                                "\"ü\".d = 2.5 # columns count characters\n"
	                                "[t]\n"
	                                "[u.v]\n"
	                                "[[w]]\n"
	                                "[[w]]\n"
	                                "x = 'é' \n");
	const struct toml_value *arr, *w;

	assert_pos(toml_pos(v), 1, 1);
	assert_pos(toml_pos(toml_get(v, "a")), 1, 5);
	assert_pos(toml_table_key_pos(v, 0), 1, 1);
	assert_pos(toml_pos(toml_get(v, "b")), 2, 11);
	assert_pos(toml_table_key_pos(v, 1), 2, 3);
	arr = toml_get(v, "é");
	assert_pos(toml_pos(arr), 3, 7);
	assert_pos(toml_pos(toml_array_at(arr, 0)), 3, 8);
	assert_pos(toml_pos(toml_array_at(arr, 1)), 3, 11);
	assert_pos(toml_pos(toml_get(toml_array_at(arr, 1), "c")), 3, 17);
	assert_pos(toml_pos(toml_get(v, "ü")), 4, 1); /* made by the dotted key */
	assert_pos(toml_pos(toml_get(toml_get(v, "ü"), "d")), 4, 9);
	assert_pos(toml_pos(toml_get(v, "t")), 5, 1);
	assert_pos(toml_table_key_pos(v, 4), 5, 2);
	assert_pos(toml_pos(toml_get(v, "u")), 6, 2); /* the parent in a header */
	assert_pos(toml_pos(toml_get(toml_get(v, "u"), "v")), 6, 1);
	w = toml_get(v, "w");
	assert_pos(toml_pos(w), 7, 1);
	assert_pos(toml_pos(toml_array_at(w, 1)), 8, 1);
	assert_pos(toml_pos(toml_get(toml_array_at(w, 1), "x")), 9, 5);
	toml_free(v);
}

/* ---- errors, each with its exact position ---- */

struct err_case {
	const char *in;
	const char *err;
};

static void run_cases(const struct err_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect_err(c[i].in, c[i].err);
}

#define RUN(cases) run_cases(cases, sizeof(cases) / sizeof(cases[0]))

static void test_err_duplicates_and_redefinition(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"a = 1\na = 2\n", "2:1: duplicate key a: already defined at 1:1"},
	        {"a = 1\n\"a\" = 2\n", "2:1: duplicate key a: already defined at 1:1"},
	        {"a.b = 1\na.b = 2\n", "2:3: duplicate key a.b: already defined at 1:3"},
	        {"p = { x = 1, x = 2 }", "1:14: duplicate key x: already defined at 1:7"},
	        {"[a]\nb = 1\n[a]\n", "3:1: table [a] is defined twice (first at 1:1)"},
	        {"[a.b]\n[a]\n[a.b]\n", "3:1: table [a.b] is defined twice (first at 1:1)"},
	        {"a = 1\n[a]\n", "2:1: a is already an integer (defined at 1:1), not a table"},
	        {"a = 1\n[a.b]\n", "2:2: a is already an integer (defined at 1:1), not a table"},
	        {"a = 1\na.b = 2\n", "2:1: a is already an integer (defined at 1:1), not a table"},
	        {"[fruit]\napple.color = 'red'\n[fruit.apple]\n",
	         "3:1: table fruit.apple is already defined by dotted keys at 2:1; a table cannot "
	         "be "
	         "defined twice"},
	        {"a.b = 1\n[a]\n",
	         "2:1: table a is already defined by dotted keys at 1:1; a table cannot be defined "
	         "twice"},
	        {"[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n",
	         "4:1: table b belongs to a [header] (at 1:4); dotted keys cannot add to it, write "
	         "the key under that header"},
	        {"[a.b]\n[a]\nb.x = 1\n",
	         "3:1: table b belongs to a [header] (at 1:1); dotted keys cannot add to it, write "
	         "the key under that header"},
	        {"p = {x = 1}\n[p]\n",
	         "2:1: p is an inline table (at 1:5); inline tables cannot be extended"},
	        {"p = {x = 1}\n[p.q]\n",
	         "2:2: p is an inline table (at 1:5); inline tables cannot be extended"},
	        {"p = {x = 1}\np.y = 2\n",
	         "2:1: p is an inline table (at 1:5); inline tables cannot be extended"},
	        {"p = {x = {y = 1}}\n[p.x.z]\n",
	         "2:2: p is an inline table (at 1:5); inline tables cannot be extended"},
	        {"a = []\n[[a]]\n",
	         "2:1: a is a static array (defined at 1:1); [[a]] cannot append to it"},
	        {"a = [{b = 1}]\n[a.c]\n",
	         "2:2: a is already an array (defined at 1:1), not a table"},
	        {"[[a]]\n[a]\n", "2:1: a is an array of tables ([[a]] at 1:1), not a table"},
	        {"[a]\n[[a]]\n",
	         "2:1: a is already a table (defined at 1:1); [[a]] needs an array of tables"},
	        {"a = 'x'\n[[a]]\n",
	         "2:1: a is already a string (defined at 1:5); [[a]] needs an array of tables"},
	};
	RUN(cases);
}

static void test_err_strings(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"a = \"x\\qy\"",
	         "1:7: invalid escape \\q; expected one of \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX "
	         "\\UXXXXXXXX"},
	        {"a = \"\\x41\"",
	         "1:6: invalid escape \\x; expected one of \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX "
	         "\\UXXXXXXXX"},
	        {"a = \"x\\\ny\"",
	         "1:7: invalid escape: a backslash followed by a newline; expected one of \\b \\t "
	         "\\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX"},
	        {"a = \"\\u12\"", "1:6: invalid escape: \\u needs 4 hex digits, found '\"'"},
	        {"a = \"\\U0001F60\"", "1:6: invalid escape: \\U needs 8 hex digits, found '\"'"},
	        {"a = \"\\uD800\"",
	         "1:6: invalid escape: \\uD800 is not a Unicode scalar value (0 to D7FF or E000 to "
	         "10FFFF)"},
	        {"a = \"\\U00110000\"", "1:6: invalid escape: \\U00110000 is not a Unicode scalar "
	                                "value (0 to D7FF or E000 "
	                                "to 10FFFF)"},
	        {"a = \"\"\"x\\  y\"\"\"", "1:9: invalid escape: a backslash followed by blanks "
	                                   "must end the line; remove the "
	                                   "blanks after it or escape it as \\\\"},
	        {"a = \"a\x01\"",
	         "1:7: control character U+0001 in a string; write it as an escape such as \\u0001 "
	         "in a \"...\" string"},
	        {"a = 'a\x7f'",
	         "1:7: control character U+007F in a string; write it as an escape such as \\u007F "
	         "in a \"...\" string"},
	        {"a = \"\"\"a\rb\"\"\"",
	         "1:9: a carriage return (not followed by a newline) in a string; write it as an "
	         "escape such as \\u000D in a \"...\" string"},
	        {"a = '''x\x1b'''",
	         "1:9: control character U+001B in a string; write it as an escape such as \\u001B "
	         "in a \"...\" string"},
	        {"a = \"abc\nb = 1\n", "1:9: unterminated string (opened at 1:5): expected '\"' "
	                               "before the end of the line"},
	        {"a = \"abc", "1:9: unterminated string (opened at 1:5): expected '\"' before the "
	                      "end of the input"},
	        {"a = 'abc\n", "1:9: unterminated string (opened at 1:5): expected \"'\" before "
	                       "the end of the line"},
	        {"a = \"\"\"abc\n\ndef\"\"\n",
	         "4:1: unterminated multi-line string (opened at 1:5): expected \"\"\""},
	        {"a = '''abc''\n",
	         "2:1: unterminated multi-line string (opened at 1:5): expected '''"},
	        {"a = \"\"\"x\"\"\"\"\"\"", "1:14: too many quotes: at most two may come right "
	                                    "before the closing \"\"\"; escape them"},
	        {"\"\"\"k\"\"\" = 1",
	         "1:1: a multi-line string cannot be a key; use \"...\" or '...'"},
	        {"'''k''' = 1", "1:1: a multi-line string cannot be a key; use \"...\" or '...'"},
	        {"\"k\n\" = 1", "1:3: unterminated string (opened at 1:1): expected '\"' before "
	                        "the end of the line"},
	};
	RUN(cases);
}

static void test_err_numbers(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"a = 9223372036854775808", "1:5: integer out of range: TOML integers are 64-bit, "
	                                    "from -9223372036854775808 to "
	                                    "9223372036854775807"},
	        {"a = -9223372036854775809", "1:5: integer out of range: TOML integers are 64-bit, "
	                                     "from -9223372036854775808 to "
	                                     "9223372036854775807"},
	        {"a = 99999999999999999999999", "1:5: integer out of range: TOML integers are "
	                                        "64-bit, from -9223372036854775808 to "
	                                        "9223372036854775807"},
	        {"a = 0x8000000000000000",
	         "1:5: integer out of range: TOML integers are 64-bit, at most 9223372036854775807 "
	         "(0x7fffffffffffffff)"},
	        {"a = 01", "1:5: leading zeros are not allowed in a number"},
	        {"a = -01", "1:5: leading zeros are not allowed in a number"},
	        {"a = 00.5", "1:5: leading zeros are not allowed in a number"},
	        {"a = 0_1", "1:5: leading zeros are not allowed in a number"},
	        {"a = 1__0", "1:7: expected a digit after '_' (an underscore must sit between "
	                     "digits), found '_'"},
	        {"a = 1_",
	         "1:7: expected a digit after '_' (an underscore must sit between digits), "
	         "found end of input"},
	        {"a = 1_.5", "1:7: expected a digit after '_' (an underscore must sit between "
	                     "digits), found '.'"},
	        {"a = _1",
	         "1:5: expected a value, found '_1'; strings must be quoted, booleans are "
	         "true or false"},
	        {"a = 1.", "1:7: expected a digit after the decimal point, found end of input"},
	        {"a = 1.e5", "1:7: expected a digit after the decimal point, found 'e'"},
	        {"a = .5",
	         "1:5: expected a value (a string, number, boolean, array or inline table), "
	         "found '.'"},
	        {"a = 1e", "1:7: expected a digit in the exponent, found end of input"},
	        {"a = 1e+", "1:8: expected a digit in the exponent, found end of input"},
	        {"a = 1.5.3", "1:8: expected a newline or a comment after the value, found '.'"},
	        {"a = 1e400", "1:5: float out of range: its magnitude is above 1.8e308"},
	        {"a = -1e400", "1:5: float out of range: its magnitude is above 1.8e308"},
	        {"a = +0x10", "1:5: a sign is not allowed on hex, octal or binary integers"},
	        {"a = 0x", "1:7: expected a hex digit after 0x, found end of input"},
	        {"a = 0o8", "1:7: expected an octal digit after 0o, found '8'"},
	        {"a = 0b2", "1:7: expected a binary digit after 0b, found '2'"},
	        {"a = 0X10", "1:6: expected a newline or a comment after the value, found 'X'"},
	        {"a = -", "1:6: expected a digit after the sign, found end of input"},
	        {"a = +x", "1:6: expected a digit after the sign, found 'x'"},
	        {"a = -infinity", "1:6: expected a number, inf or nan, found 'infinity'"},
	        {"a = infinity", "1:5: expected a value, found 'infinity'; strings must be quoted, "
	                         "booleans are true or false"},
	        {"a = 1979-05-27",
	         "1:5: dates are not supported here; write it as a string, e.g. \"1979-05-27\""},
	        {"a = 1979-05-27T07:32:00Z",
	         "1:5: dates are not supported here; write it as a string, e.g. \"1979-05-27\""},
	        {"a = 07:32:00",
	         "1:5: dates are not supported here; write it as a string, e.g. \"1979-05-27\""},
	        {"a = [1, 2, 1979-05-27]",
	         "1:12: dates are not supported here; write it as a string, e.g. \"1979-05-27\""},
	};
	RUN(cases);
}

static void test_err_structure(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"a =", "1:4: missing value: expected a value, found end of input"},
	        {"a =\nb = 1", "1:4: missing value: expected a value, found a newline"},
	        {"a = # c", "1:5: missing value: expected a value, found '#'"},
	        {"a", "1:2: expected '=' after the key a, found end of input"},
	        {"a 1", "1:3: expected '=' after the key a, found '1'"},
	        {"a.b\n", "1:4: expected '=' after the key a.b, found a newline"},
	        {"= 1", "1:1: expected a key (letters, digits, '_' and '-', or a quoted string), "
	                "found '='"},
	        {"a. = 1", "1:4: expected a key (letters, digits, '_' and '-', or a quoted "
	                   "string), found '='"},
	        {"a$ = 1", "1:2: expected '=' after the key a, found '$'"},
	        {"é = 1", "1:1: expected a key (letters, digits, '_' and '-', or a quoted string), "
	                  "found 'é'"},
	        {"a = 1 2", "1:7: expected a newline or a comment after the value, found '2'"},
	        {"a = \"x\" y", "1:9: expected a newline or a comment after the value, found 'y'"},
	        {"a = true b = 2",
	         "1:10: expected a newline or a comment after the value, found 'b'"},
	        {"a = truex",
	         "1:5: expected a value, found 'truex'; strings must be quoted, booleans are "
	         "true or false"},
	        {"a = yes",
	         "1:5: expected a value, found 'yes'; strings must be quoted, booleans are "
	         "true or false"},
	        {"a = [1, 2", "1:10: unterminated array (opened at 1:5): expected ']'"},
	        {"a = [1,\n2,\n", "3:1: unterminated array (opened at 1:5): expected ']'"},
	        {"a = [1 2]", "1:8: expected ',' or ']' after an array element, found '2'"},
	        {"a = [,]", "1:6: expected a value or ']', found ','"},
	        {"a = [1,,2]", "1:8: expected a value or ']', found ','"},
	        {"a = [1, # c\x01\n]",
	         "1:12: control character U+0001 in a comment; only tab is allowed "
	         "among control characters"},
	        {"a = {x = 1,}",
	         "1:12: a trailing comma is not allowed in an inline table; remove it"},
	        {"a = {x = 1\n}",
	         "1:11: unterminated inline table (opened at 1:5): expected ',' or '}' on "
	         "the same line, found a newline"},
	        {"a = {\nx = 1}",
	         "1:6: unterminated inline table (opened at 1:5): expected a key on the "
	         "same line, found a newline"},
	        {"a = {x = 1 y = 2}",
	         "1:12: expected ',' or '}' after a value in an inline table, found 'y'"},
	        {"a = {x}", "1:7: expected '=' after the key x, found '}'"},
	        {"[a", "1:3: expected ']' to close the [table] header, found end of input"},
	        {"[a]]\n",
	         "1:4: expected a newline or a comment after the table header, found ']'"},
	        {"[]", "1:2: expected a key (letters, digits, '_' and '-', or a quoted string), "
	               "found ']'"},
	        {"[[a]\n",
	         "1:5: expected ']]' to close the [[array of tables]] header, found a newline"},
	        {"[[a] ]\n",
	         "1:5: expected ']]' to close the [[array of tables]] header, found ' '"},
	        {"[a] b = 1",
	         "1:5: expected a newline or a comment after the table header, found 'b'"},
	        {"a = 1\r",
	         "1:6: expected a newline or a comment after the value, found a carriage "
	         "return (not followed by a newline)"},
	        {"a = 1\rb = 2",
	         "1:6: expected a newline or a comment after the value, found a carriage "
	         "return (not followed by a newline)"},
	        {"# c\x7f\n",
	         "1:4: control character U+007F in a comment; only tab is allowed among "
	         "control characters"},
	        {"# c\rx\n",
	         "1:4: a carriage return (not followed by a newline) in a comment; only tab "
	         "is allowed among control characters"},
	        {"\x01 = 1",
	         "1:1: expected a key (letters, digits, '_' and '-', or a quoted string), found "
	         "control character U+0001"},
	        {"a = \x01",
	         "1:5: expected a value (a string, number, boolean, array or inline table), "
	         "found control character U+0001"},
	};
	RUN(cases);
	/* a NUL byte in the input is a control character like any other */
	expect_err_len(
	        "a = 1\n\0", 7,
	        "2:1: expected a key (letters, digits, '_' and '-', or a quoted string), found "
	        "control character U+0000");
	expect_err_len("# \0", 3,
	               "1:3: control character U+0000 in a comment; only tab is allowed among "
	               "control characters");
}

static void test_err_utf8(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"a = \"\x80\"", "1:6: invalid UTF-8 (byte 0x80); the file must be UTF-8 text"},
	        {"# ok\na = \"\xC0\x80\"",
	         "2:6: invalid UTF-8 (byte 0xC0); the file must be UTF-8 text"},
	        {"a = \"\xE0\x80\x80\"",
	         "1:6: invalid UTF-8 (byte 0xE0); the file must be UTF-8 text"},
	        {"a = \"\xED\xA0\x80\"",
	         "1:6: invalid UTF-8 (byte 0xED); the file must be UTF-8 text"},
	        {"a = \"\xF4\x90\x80\x80\"",
	         "1:6: invalid UTF-8 (byte 0xF4); the file must be UTF-8 text"},
	        {"a = \"\xF5\x80\x80\x80\"",
	         "1:6: invalid UTF-8 (byte 0xF5); the file must be UTF-8 text"},
	        {"a = \"é\xFF\"", "1:7: invalid UTF-8 (byte 0xFF); the file must be UTF-8 text"},
	        {"a = \"\xE2\x82\"", "1:6: invalid UTF-8 (byte 0xE2); the file must be UTF-8 text"},
	        {"a = 1 # \xE2\x82", "1:9: invalid UTF-8 (byte 0xE2); the file must be UTF-8 text"},
	};
	RUN(cases);
}

/* ---- caps ---- */

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * n + tl + 1), *p = s;

	assert_non_null(s);
	memcpy(p, head, hl);
	p += hl;
	for (size_t i = 0; i < n; i++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	return s;
}

static void test_cap_input_size(void **state)
{
	(void)state;
	size_t n = TOML_MAX_INPUT;
	char *s = malloc(n + 1);
	struct toml_value *v;

	assert_non_null(s);
	memset(s, ' ', n);
	s[0] = '#';
	s[n] = '\n';
	/* exactly 1 MiB is read */
	assert_int_equal(toml_parse(&v, s, n, NULL, 0), 0);
	toml_free(v);
	expect_err_len(s, n + 1,
	               "1:1: the input is 1048577 bytes, more than the 1 MiB (1048576 bytes) this "
	               "reader accepts");
	free(s);
}

/* "head" + n opening brackets + the matching closing ones */
static char *nested(const char *head, const char *open, size_t n, const char *inner, char close)
{
	char *s = repeat(head, open, n, inner), *full = malloc(strlen(s) + n + 1);

	assert_non_null(full);
	strcpy(full, s);
	memset(full + strlen(s), close, n);
	full[strlen(s) + n] = '\0';
	free(s);
	return full;
}

static void test_cap_nesting(void **state)
{
	(void)state;
	struct toml_value *v;
	const struct toml_value *a;
	char *s;

	/* the value of a is level 1: 64 arrays are 64 levels */
	s = nested("a = ", "[", 64, "", ']');
	v = parse_ok(s);
	a = toml_get(v, "a");
	for (int i = 0; i < 63; i++)
		a = toml_array_at(a, 0);
	assert_int_equal(toml_type(a), TOML_ARRAY);
	assert_int_equal(toml_array_len(a), 0);
	toml_free(v);
	free(s);
	s = nested("a = ", "[", 65, "", ']');
	expect_err(s, "1:69: nesting deeper than 64 levels is not supported here");
	free(s);
	/* a scalar counts as a level too */
	s = nested("a = ", "[", 64, "1", ']');
	expect_err(s, "1:69: nesting deeper than 64 levels is not supported here");
	free(s);

	/* inline tables count the same way */
	s = nested("a = ", "{b = ", 63, "{}", '}');
	v = parse_ok(s);
	toml_free(v);
	free(s);
	s = nested("a = ", "{b = ", 64, "{}", '}');
	expect_err(s, "1:325: nesting deeper than 64 levels is not supported here");
	free(s);

	/* a key has at most 64 parts, in a line and in a header */
	s = repeat("k", ".k", 63, " = 1");
	v = parse_ok(s);
	toml_free(v);
	free(s);
	s = repeat("k", ".k", 64, " = 1");
	expect_err(s, "1:129: a key has more than 64 parts; nesting deeper than 64 levels is not "
	              "supported here");
	free(s);
	s = repeat("[k", ".k", 63, "]");
	v = parse_ok(s);
	toml_free(v);
	free(s);
	s = repeat("[k", ".k", 64, "]");
	expect_err(s, "1:130: a key has more than 64 parts; nesting deeper than 64 levels is not "
	              "supported here");
	free(s);
	/* key parts and arrays share the budget */
	s = repeat("k", ".k", 63, " = [1]");
	expect_err(s, "1:132: nesting deeper than 64 levels is not supported here");
	free(s);
	s = repeat("k", ".k", 62, " = [1]");
	v = parse_ok(s);
	toml_free(v);
	free(s);
}

static void test_cap_keys_per_table(void **state)
{
	(void)state;
	size_t n = TOML_MAX_KEYS + 1;
	char *s = malloc(n * 16 + 1), *p = s;
	struct toml_value *v;

	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "k%zu = 1\n", i);
	/* the first TOML_MAX_KEYS keys are fine */
	char *cut = strstr(s, "k1024 =");
	assert_non_null(cut);
	assert_int_equal(toml_parse(&v, s, (size_t)(cut - s), NULL, 0), 0);
	assert_int_equal(toml_table_len(v), TOML_MAX_KEYS);
	toml_free(v);
	expect_err(s, "1025:1: a table has more than 1024 keys, more than this reader accepts");
	free(s);
}

static void test_error_buffer(void **state)
{
	(void)state;
	struct toml_value *v = (struct toml_value *)1;
	char small[8];

	/* truncated to the buffer, still NUL-terminated */
	assert_int_equal(toml_parse(&v, "a = ", 4, small, sizeof(small)), -1);
	assert_null(v);
	assert_string_equal(small, "1:5: mi");
	/* no buffer at all */
	assert_int_equal(toml_parse(&v, "a = ", 4, NULL, 0), -1);
	/* a successful parse clears the buffer */
	strcpy(small, "junk");
	assert_int_equal(toml_parse(&v, "a = 1", 5, small, sizeof(small)), 0);
	assert_string_equal(small, "");
	toml_free(v);
	/* no text at all is an empty document */
	assert_int_equal(toml_parse(&v, NULL, 0, NULL, 0), 0);
	assert_int_equal(toml_table_len(v), 0);
	toml_free(v);
	/* len, not NUL, ends the input */
	assert_int_equal(toml_parse(&v, "a = 1garbage", 5, NULL, 0), 0);
	assert_int_equal(int_at(v, "a"), 1);
	toml_free(v);
}

/* ---- allocation failures ---- */

static long alloc_left; /* allocations that still succeed; < 0: no limit */
static long alloc_live; /* blocks currently allocated */

static void *failing_realloc(void *ptr, size_t size)
{
	void *p;

	if (size == 0) {
		if (ptr)
			alloc_live--;
		free(ptr);
		return NULL;
	}
	if (alloc_left == 0)
		return NULL;
	if (alloc_left > 0)
		alloc_left--;
	p = realloc(ptr, size);
	if (p && !ptr)
		alloc_live++;
	return p;
}

static const char oom_doc[] = "# everything, to reach every allocation\n"
                              "title = \"TOML \\u00e9 example\"\n"
                              "lit = 'x'\n"
                              "ml = \"\"\"\nline\\\n  two\"\"\"\n"
                              "mll = '''a\nb'''\n"
                              "n = -1_000\nf = 1.5e3\nh = 0xff\nb = true\n"
                              "arr = [1, [2, 3], {x = 1, y.z = 2}, \"s\"]\n"
                              "a.b.c = 1\n"
                              "[t]\nk = 1\n"
                              "[u.v.w]\n"
                              "[u]\n"
                              "[[aot]]\nx = 1\n[[aot]]\n[aot.sub]\ny = 2\n";

static void test_allocation_failures(void **state)
{
	(void)state;
	struct toml_value *v;
	char err[256];
	long n;

	toml_set_realloc(failing_realloc);
	for (n = 0;; n++) {
		alloc_left = n;
		alloc_live = 0;
		int rc = toml_parse(&v, oom_doc, strlen(oom_doc), err, sizeof(err));
		if (rc == 0) {
			const struct toml_value *aot = toml_get(v, "aot");
			assert_int_equal(int_at(toml_get(toml_array_at(aot, 1), "sub"), "y"), 2);
			toml_free(v);
			assert_int_equal(alloc_live, 0);
			break;
		}
		assert_null(v);
		if (!strstr(err, ": out of memory"))
			fail_msg("allocation %ld failed with: %s", n, err);
		/* every block allocated before the failure was freed */
		assert_int_equal(alloc_live, 0);
	}
	toml_set_realloc(NULL);
	/* a document that size needs dozens of allocations: the loop really ran */
	assert_true(n > 50);
	v = parse_ok(oom_doc);
	toml_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_empty_and_comments),
	        cmocka_unit_test(test_basic_strings),
	        cmocka_unit_test(test_literal_and_multiline_strings),
	        cmocka_unit_test(test_integers),
	        cmocka_unit_test(test_floats),
	        cmocka_unit_test(test_booleans_and_wrong_type_getters),
	        cmocka_unit_test(test_arrays),
	        cmocka_unit_test(test_inline_tables),
	        cmocka_unit_test(test_keys_and_tables),
	        cmocka_unit_test(test_array_of_tables),
	        cmocka_unit_test(test_value_and_key_positions),
	        cmocka_unit_test(test_err_duplicates_and_redefinition),
	        cmocka_unit_test(test_err_strings),
	        cmocka_unit_test(test_err_numbers),
	        cmocka_unit_test(test_err_structure),
	        cmocka_unit_test(test_err_utf8),
	        cmocka_unit_test(test_cap_input_size),
	        cmocka_unit_test(test_cap_nesting),
	        cmocka_unit_test(test_cap_keys_per_table),
	        cmocka_unit_test(test_error_buffer),
	        cmocka_unit_test(test_allocation_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
