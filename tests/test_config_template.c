/* tests/test_config_template.c: unit tests for `gate config init` (gate/config/config_template.c,
 * gate/cmd/config_cmd.c): the short gate.toml loads to the defaults, sets only keys the
 * reference documents, stays short, and is written atomically, never over anything. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/readfile.h"
#include "gate/cmd/config_cmd.h"
#include "gate/config/config.h"
#include "tests/config_helpers.h"

/* config_print's text without its first line (which names the source). */
static char *printed_body(const struct config *cfg)
{
	char *text = print_to_string(cfg);
	size_t first = strcspn(text, "\n");

	assert_int_equal(text[first], '\n');
	char *body = strdup(text + first + 1);
	assert_non_null(body);
	free(text);
	return body;
}

/* ---- the text ---- */

/* Written, it changes nothing: every value it sets is the default, and [growth] max and
 * floor do not narrow code's wider limit. */
static void test_template_loads_to_the_defaults(void **state)
{
	(void)state;
	struct config cfg = {0}, def;

	load_ok(&cfg, config_template);
	assert_int_equal(config_default(&def), 0);
	assert_config_equal(&cfg, &def);
	char *got = printed_body(&cfg), *want = printed_body(&def);
	assert_string_equal(got, want);
	free(got);
	free(want);
	config_clear(&cfg);
	config_clear(&def);
}

static void test_template_keys_are_known(void **state)
{
	(void)state;
	assert_keys_documented(config_template);
}

/* Short, and each part a newcomer needs is there. */
static void test_template_is_short_and_points_on(void **state)
{
	(void)state;
	size_t lines = 0, len = strlen(config_template);
	const char *line = config_template;

	assert_true(len > 0 && config_template[len - 1] == '\n');
	for (const char *p = config_template; *p; p++) {
		if (*p != '\n')
			continue;
		lines++;
		if (p - line > 100)
			fail_msg("line %zu is %td characters, over 100", lines, p - line);
		line = p + 1;
	}
	if (lines >= 60)
		fail_msg("the template has %zu lines: keep it well under 80", lines);
	const char *needles[] = {"docs/configuration.md",
	                         "gate config reference",
	                         "gate config check",
	                         "[growth]\n",
	                         "[ets]\n",
	                         "[process]\n",
	                         "[baseline]\n",
	                         "\nrequire = false\n",
	                         "# [severity]\n"};
	for (size_t i = 0; i < sizeof(needles) / sizeof(needles[0]); i++)
		if (!strstr(config_template, needles[i]))
			fail_msg("the template lacks %s", needles[i]);
}

/* The commented severity example is valid once uncommented. */
static void test_template_severity_example_loads(void **state)
{
	(void)state;
	static const char example[] = "# [severity]\n# ets = \"warn\"\n";
	const char *at = strstr(config_template, example);
	struct config cfg = {0};

	assert_non_null(at);
	load_ok(&cfg, "[severity]\nets = \"warn\"\n");
	assert_true(cfg.rules.severity.warn[SEVERITY_ETS]);
	config_clear(&cfg);
}

/* ---- the write ---- */

static char *temp_dir(void)
{
	char *dir = strdup("/tmp/gate-test-init.XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void remove_dir(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The names in dir, sorted, joined by spaces: no temp file may be left beside the target. */
static void assert_dir_holds(const char *dir, const char *want)
{
	struct dirent **names;
	char got[1024] = "";
	int n = scandir(dir, &names, NULL, alphasort);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0) {
			strncat(got, got[0] ? " " : "", sizeof(got) - strlen(got) - 1);
			strncat(got, names[i]->d_name, sizeof(got) - strlen(got) - 1);
		}
		free(names[i]);
	}
	free(names);
	assert_string_equal(got, want);
}

static char *slurp(const char *path)
{
	char err[256];
	char *text = NULL;
	size_t len;

	if (readfile_bounded(path, 1 << 20, READFILE_STREAM, &text, &len, err, sizeof(err)) !=
	    READFILE_OK)
		fail_msg("%s", err);
	return text;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_write_creates_the_file(void **state)
{
	(void)state;
	char *dir = temp_dir(), path[300], err[512];

	snprintf(path, sizeof(path), "%s/gate.toml", dir);
	assert_int_equal(config_template_write(path, err, sizeof(err)), 0);
	char *text = slurp(path);
	assert_string_equal(text, config_template);
	free(text);
	assert_dir_holds(dir, "gate.toml");
	/* into directories that do not exist yet */
	snprintf(path, sizeof(path), "%s/config/ci/gate.toml", dir);
	assert_int_equal(config_template_write(path, err, sizeof(err)), 0);
	text = slurp(path);
	assert_string_equal(text, config_template);
	free(text);
	snprintf(path, sizeof(path), "%s/config/ci", dir);
	assert_dir_holds(path, "gate.toml");
	remove_dir(dir);
	free(dir);
}

/* A file there stays byte for byte, and the message names it and the way on. */
static void test_write_refuses_an_existing_file(void **state)
{
	(void)state;
	char *dir = temp_dir(), path[300], err[512];
	static const char mine[] = "[node]\nmix_env = \"ci\"\n# my own\n";

	snprintf(path, sizeof(path), "%s/gate.toml", dir);
	put(path, mine);
	assert_int_equal(config_template_write(path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "already exists"));
	assert_non_null(strstr(err, "remove it"));
	assert_non_null(strstr(err, "another FILE"));
	char *text = slurp(path);
	assert_string_equal(text, mine);
	free(text);
	assert_dir_holds(dir, "gate.toml");
	/* an empty file is a file too */
	put(path, "");
	assert_int_equal(config_template_write(path, err, sizeof(err)), -1);
	text = slurp(path);
	assert_string_equal(text, "");
	free(text);
	remove_dir(dir);
	free(dir);
}

static void test_write_refuses_a_symlink_and_a_directory(void **state)
{
	(void)state;
	char *dir = temp_dir(), path[300], target[300], err[512], link_to[300];

	/* a dangling symlink: writing through it would create its target */
	snprintf(path, sizeof(path), "%s/gate.toml", dir);
	snprintf(target, sizeof(target), "%s/elsewhere.toml", dir);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(config_template_write(path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "already exists"));
	ssize_t n = readlink(path, link_to, sizeof(link_to) - 1);
	assert_true(n > 0);
	link_to[n] = '\0';
	assert_string_equal(link_to, target);
	assert_dir_holds(dir, "gate.toml");
	/* a directory: say so, with the file to give instead */
	assert_int_equal(config_template_write(dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is a directory"));
	assert_non_null(strstr(err, "/gate.toml"));
	remove_dir(dir);
	free(dir);
}

/* A parent that is a file: the message names the path, and nothing is left behind. */
static void test_write_failure_leaves_nothing(void **state)
{
	(void)state;
	char *dir = temp_dir(), path[300], err[512];

	snprintf(path, sizeof(path), "%s/plain", dir);
	put(path, "x");
	snprintf(path, sizeof(path), "%s/plain/gate.toml", dir);
	assert_int_equal(config_template_write(path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
	assert_dir_holds(dir, "plain");
	remove_dir(dir);
	free(dir);
}

/* ---- the command ---- */

/* gate config ARGS with stdout (the help, config check's print) thrown away. */
static int cmd(int argc, const char *a1, const char *a2, const char *a3)
{
	char *argv[] = {(char *)"config", (char *)a1, (char *)a2, (char *)a3, NULL};
	int saved, null, rc;

	fflush(stdout);
	assert_true((saved = dup(STDOUT_FILENO)) >= 0);
	assert_true((null = open("/dev/null", O_WRONLY)) >= 0);
	assert_true(dup2(null, STDOUT_FILENO) >= 0);
	close(null);
	rc = config_cmd_main(argc, argv);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	return rc;
}

static void test_cmd_init_exit_codes(void **state)
{
	(void)state;
	char *dir = temp_dir(), path[300];
	static const char mine[] = "[growth]\nmax = \"5 %\"\n";

	snprintf(path, sizeof(path), "%s/gate.toml", dir);
	assert_int_equal(cmd(3, "init", path, NULL), 0);
	assert_int_equal(cmd(3, "check", path, NULL), 0);
	put(path, mine);
	assert_int_equal(cmd(3, "init", path, NULL), 2);
	char *text = slurp(path);
	assert_string_equal(text, mine);
	free(text);
	assert_int_equal(cmd(4, "init", path, "extra"), 2);
	assert_int_equal(cmd(3, "init", "--force", NULL), 2);
	assert_int_equal(cmd(3, "init", "-", NULL), 2);
	assert_int_equal(cmd(3, "init", "--help", NULL), 0);
	assert_int_equal(cmd(1, NULL, NULL, NULL), 2);
	assert_int_equal(cmd(2, "initialise", NULL, NULL), 2);
	assert_dir_holds(dir, "gate.toml");
	remove_dir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_template_loads_to_the_defaults),
	        cmocka_unit_test(test_template_keys_are_known),
	        cmocka_unit_test(test_template_is_short_and_points_on),
	        cmocka_unit_test(test_template_severity_example_loads),
	        cmocka_unit_test(test_write_creates_the_file),
	        cmocka_unit_test(test_write_refuses_an_existing_file),
	        cmocka_unit_test(test_write_refuses_a_symlink_and_a_directory),
	        cmocka_unit_test(test_write_failure_leaves_nothing),
	        cmocka_unit_test(test_cmd_init_exit_codes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
