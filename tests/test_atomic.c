/* tests/test_atomic.c: base/atomic.c's files get the modes the umask gives, as every other
 * program's output does (not forced to 0644/0755), and a report is replaced whole. */
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

/* A report is replaced whole, over an older one, through a temp file that does not stay
 * behind, as a durable file is; and a report that cannot be written leaves nothing. */
static void test_atomic__report_replaced_whole(void **state)
{
	(void)state;
	char dir[] = "/tmp/gate_test_atomic.XXXXXX", path[128], err[512];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gate/junit.xml", dir);
	assert_int_equal(atomic_file_replace_report(path, "old\n", 4, err, sizeof(err)), 0);
	assert_int_equal(atomic_file_replace_report(path, "<new/>\n", 7, err, sizeof(err)), 0);
	char text[64] = "";
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(text, 1, sizeof(text), f), 7);
	fclose(f);
	assert_memory_equal(text, "<new/>\n", 7);
	snprintf(path, sizeof(path), "%s/gate", dir);
	DIR *d = opendir(path);
	assert_non_null(d);
	int entries = 0;
	for (struct dirent *e; (e = readdir(d));)
		entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	assert_int_equal(entries, 1); /* junit.xml alone: no temp file */
	snprintf(path, sizeof(path), "%s/gate/junit.xml/under-a-file.xml", dir);
	assert_int_equal(atomic_file_replace_report(path, "x", 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "under-a-file.xml"));
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_atomic__modes_follow_umask),
	        cmocka_unit_test(test_atomic__report_replaced_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
