/* tests/test_readfile.c: bounded file reading (base/readfile.h): regular files, caps, what is
 * not a file, and streams (a pipe, /dev/null) for the callers that take them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/readfile.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gate-test-readfile-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *name, const char *text, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_regular_and_caps(void **state)
{
	(void)state;
	char path[128], err[256], *buf;
	size_t n;
	put("a", "hello\n", path, sizeof(path));
	assert_int_equal(readfile_bounded(path, 100, 0, &buf, &n, err, sizeof(err)), READFILE_OK);
	assert_int_equal(n, 6);
	assert_string_equal(buf, "hello\n");
	free(buf);
	assert_int_equal(readfile_bounded(path, 6, 0, &buf, &n, err, sizeof(err)), READFILE_OK);
	free(buf);
	assert_int_equal(readfile_bounded(path, 5, 0, &buf, &n, err, sizeof(err)), READFILE_ERROR);
	assert_null(buf);
	assert_non_null(strstr(err, "more than the 5"));
	assert_int_equal(readfile_bounded(path, 3, READFILE_TRUNCATE, &buf, &n, err, sizeof(err)),
	                 READFILE_OK);
	assert_string_equal(buf, "hel");
	free(buf);

	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(readfile_bounded(path, 10, 0, &buf, &n, err, sizeof(err)),
	                 READFILE_MISSING);
	assert_non_null(strstr(err, path));
	assert_int_equal(readfile_bounded(dir, 10, READFILE_STREAM, &buf, &n, err, sizeof(err)),
	                 READFILE_ERROR);
	assert_non_null(strstr(err, "is a directory"));
}

/* A FIFO nobody writes to: refused at once without READFILE_STREAM (no hang in open), read as
 * empty with it. */
static void test_fifo(void **state)
{
	(void)state;
	char path[128], err[256], *buf;
	size_t n;
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(readfile_bounded(path, 10, 0, &buf, &n, err, sizeof(err)), READFILE_ERROR);
	assert_non_null(strstr(err, "is not a regular file; give the path of a file"));
	assert_int_equal(readfile_bounded(path, 10, READFILE_STREAM, &buf, &n, err, sizeof(err)),
	                 READFILE_OK);
	assert_int_equal(n, 0);
	free(buf);
}

/* A pipe with a writer, as bash's <(printf secret) gives one: read to its end, capped. */
static void test_pipe_stream(void **state)
{
	(void)state;
	int fds[2];
	char path[64], err[256], *buf;
	size_t n;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "secret\n", 7), 7);
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	assert_int_equal(readfile_bounded(path, 100, READFILE_STREAM, &buf, &n, err, sizeof(err)),
	                 READFILE_OK);
	assert_string_equal(buf, "secret\n");
	free(buf);
	close(fds[0]);

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "0123456789", 10), 10);
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	assert_int_equal(readfile_bounded(path, 4, READFILE_STREAM, &buf, &n, err, sizeof(err)),
	                 READFILE_ERROR);
	assert_non_null(strstr(err, "grew past the 4 bytes"));
	close(fds[0]);

	assert_int_equal(
	        readfile_bounded("/dev/null", 4, READFILE_STREAM, &buf, &n, err, sizeof(err)),
	        READFILE_OK);
	assert_int_equal(n, 0);
	free(buf);
	assert_int_equal(readfile_bounded("/dev/null", 4, 0, &buf, &n, err, sizeof(err)),
	                 READFILE_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_regular_and_caps),
	        cmocka_unit_test(test_fifo),
	        cmocka_unit_test(test_pipe_stream),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
