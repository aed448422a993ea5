/* tests/test_atomic.c: base/atomic.c's files get the modes the umask gives, as every other
 * program's output does (not forced to 0644/0755). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/helpers.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic.h"

static mode_t mode_of(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void test_atomic__modes_follow_umask(void **state)
{
	(void)state;
	char dir[] = "/tmp/gate_test_atomic.XXXXXX", path[128], err[512];
	assert_non_null(mkdtemp(dir));
	static const struct {
		mode_t mask, file, exec;
	} cases[] = {
	        {022, 0644, 0755},
	        {027, 0640, 0750},
	        {077, 0600, 0700},
	        {002, 0664, 0775},
	};
	mode_t old = umask(022);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		umask(cases[i].mask);
		snprintf(path, sizeof(path), "%s/out/report-%zu.xml", dir, i);
		assert_int_equal(atomic_file_replace(path, "x\n", 2, err, sizeof(err)), 0);
		assert_int_equal(mode_of(path), cases[i].file);
		struct atomic_file t = {0};
		snprintf(path, sizeof(path), "%s/hook-%zu", dir, i);
		assert_int_equal(
		        atomic_file_write(&t, path, "#!/bin/sh\n", 10, true, err, sizeof(err)), 0);
		assert_int_equal(atomic_file_commit(&t, err, sizeof(err)), 0);
		assert_int_equal(mode_of(path), cases[i].exec);
	}
	umask(old);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_atomic__modes_follow_umask),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
