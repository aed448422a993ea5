/* tests/test_grow.c: the one way gate grows buffers (base/grow.h): arrays that double, and the
 * text buffer every writer appends to, with and without a limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/grow.h"

static void test_grow__array_doubles(void **state)
{
	(void)state;
	int *v = NULL;
	size_t cap = 0;
	assert_int_equal(GROW(v, cap, 1, 4), 0);
	assert_int_equal(cap, 4);
	assert_int_equal(GROW(v, cap, 4, 4), 0);
	assert_int_equal(cap, 4); /* enough already: unchanged */
	assert_int_equal(GROW(v, cap, 9, 4), 0);
	assert_int_equal(cap, 16);
	for (int i = 0; i < 9; i++)
		v[i] = i;
	/* a size that would overflow is refused, the array kept */
	assert_int_equal(grow_array((void **)&v, &cap, SIZE_MAX / 2, sizeof(*v), 4), -1);
	assert_int_equal(cap, 16);
	assert_int_equal(v[8], 8);
	free(v);
}

static void test_grow__text_appends(void **state)
{
	(void)state;
	struct textbuf b = {0};
	textbuf_puts(&b, "ab");
	textbuf_add(&b, "cdef", 2);
	textbuf_printf(&b, "-%d-", 42);
	char long_line[600];
	memset(long_line, 'x', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	textbuf_printf(&b, "%s", long_line); /* past printf's small buffer */
	assert_false(b.oom);
	assert_false(b.full);
	assert_int_equal(b.len, 8 + 599);
	assert_memory_equal(b.s, "abcd-42-x", 9);
	char *s = textbuf_take(&b);
	assert_non_null(s);
	assert_int_equal(strlen(s), 8 + 599);
	assert_null(b.s); /* taken: empty again */
	free(s);
	struct textbuf e = {0};
	char *empty = textbuf_take(&e);
	assert_string_equal(empty, "");
	free(empty);
}

/* A limit drops an append that would pass it whole, and every later one (a short line must not
 * jump the queue); lifting the limit lets the writer say it was cut. */
static void test_grow__text_limit(void **state)
{
	(void)state;
	struct textbuf b = {.limit = 10};
	textbuf_puts(&b, "12345678");
	assert_false(b.full);
	textbuf_puts(&b, "abc"); /* 11 > 10: dropped whole */
	assert_true(b.full);
	assert_int_equal(b.len, 8);
	textbuf_puts(&b, "z"); /* would fit, but the buffer is full */
	assert_int_equal(b.len, 8);
	char long_line[400];
	memset(long_line, 'y', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	textbuf_printf(&b, "%s", long_line);
	assert_int_equal(b.len, 8);
	assert_string_equal(b.s, "12345678");
	b.limit = 0;
	b.full = false;
	textbuf_printf(&b, "%s", long_line); /* the long path, no limit */
	assert_int_equal(b.len, 8 + 399);
	assert_false(b.oom);
	textbuf_free(&b);
	/* exactly at the limit fits */
	struct textbuf c = {.limit = 4};
	textbuf_puts(&c, "1234");
	assert_false(c.full);
	assert_string_equal(c.s, "1234");
	textbuf_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_grow__array_doubles),
	        cmocka_unit_test(test_grow__text_appends),
	        cmocka_unit_test(test_grow__text_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
