/* tests/test_exec.c: the --exec workload: the command line split as a shell splits it, a real
 * child's status, a missing command, the timeout killing the child's whole process group,
 * and the cookie file handed to the workload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gate/run/exec.h"

static void split_ok(const char *cmd, int n, const char *const *want)
{
	char **argv, err[256];
	int got = exec_split(cmd, &argv, err, sizeof(err));
	assert_int_equal(got, n);
	for (int i = 0; i < n; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[n]);
	exec_argv_free(argv);
}

static void split_bad(const char *cmd, const char *why)
{
	char **argv = (char **)1, err[256];
	assert_int_equal(exec_split(cmd, &argv, err, sizeof(err)), -1);
	assert_null(argv);
	assert_non_null(strstr(err, why));
}

static void test_exec__split(void **state)
{
	(void)state;
	split_ok("./load.sh --minutes 2", 3, (const char *const[]){"./load.sh", "--minutes", "2"});
	split_ok("  a\t b  ", 2, (const char *const[]){"a", "b"});
	split_ok("sh -c 'echo $HOME | wc'", 3,
	         (const char *const[]){"sh", "-c", "echo $HOME | wc"});
	split_ok("a \"b c\" d\\ e", 3, (const char *const[]){"a", "b c", "d e"});
	split_ok("\"x\\\"y\\\\z\\n\"", 1, (const char *const[]){"x\"y\\z\\n"});
	split_ok("pre'mid dle'post \"\"", 2, (const char *const[]){"premid dlepost", ""});
	split_ok("*.txt > out ; rm", 5, (const char *const[]){"*.txt", ">", "out", ";", "rm"});
	split_bad("echo 'open", "' is not closed");
	split_bad("echo \"open", "\" is not closed");
	split_bad("echo x\\", "ends in a backslash");
	split_bad("   ", "needs a command");
	split_bad("", "needs a command");
}

static int run(const char *cmd, int timeout_ms, struct exec_result *res, char *err, size_t len)
{
	char **argv;
	assert_true(exec_split(cmd, &argv, err, len) > 0);
	struct exec_opts o = {.argv = argv, .timeout_ms = timeout_ms, .stop_ms = 2000};
	int rc = exec_run(&o, res, err, len);
	exec_argv_free(argv);
	return rc;
}

static void test_exec__status(void **state)
{
	(void)state;
	struct exec_result res;
	char err[512], how[128];
	assert_int_equal(run("sh -c 'exit 7'", 10000, &res, err, sizeof(err)), 0);
	assert_true(res.exited);
	assert_int_equal(res.status, 7);
	exec_result_describe(&res, how, sizeof(how));
	assert_string_equal(how, "exited with status 7");
	assert_int_equal(run("true", 10000, &res, err, sizeof(err)), 0);
	assert_int_equal(res.status, 0);
	assert_int_equal(run("sh -c 'kill -TERM $$'", 10000, &res, err, sizeof(err)), 0);
	assert_false(res.exited);
	assert_int_equal(res.status, SIGTERM);
	assert_int_equal(run("no-such-command-for-gate-tests", 10000, &res, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not found on PATH"));
	assert_int_equal(run("/nonexistent/load.sh", 10000, &res, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/load.sh: not found"));
}

/* The command and a grandchild it leaves in the background are both gone after the timeout. */
static void test_exec__timeout_kills_group(void **state)
{
	(void)state;
	struct exec_result res;
	char err[512], cmd[512], path[64];
	snprintf(path, sizeof(path), "/tmp/gate-test-exec.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "sh -c 'sleep 300 & echo $! > %s; wait'", path);
	assert_int_equal(run(cmd, 500, &res, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "did not finish within"));
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int pid = 0;
	assert_int_equal(fscanf(f, "%d", &pid), 1);
	fclose(f);
	unlink(path);
	assert_true(pid > 0);
	/* the background sleep was killed with its group: gone, or a zombie not yet reaped by
	 * init (it lost its parent) */
	char stat_path[64], line[256] = "";
	snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", pid);
	f = fopen(stat_path, "r");
	if (f) {
		assert_non_null(fgets(line, sizeof(line), f));
		fclose(f);
		const char *close_paren = strrchr(line, ')');
		assert_non_null(close_paren);
		assert_int_equal(close_paren[2], 'Z');
	}
}

static void test_exec__cookie_file(void **state)
{
	(void)state;
	struct exec_env env = {0};
	char err[512], path[4300], buf[64] = "";
	struct stat st;
	assert_int_equal(exec_env_add(&env, "GATE_NODE", "a@127.0.0.1"), 0);
	assert_int_equal(exec_env_cookie_file(&env, "s3cret", err, sizeof(err)), 0);
	assert_string_equal(env.vars[0], "GATE_NODE=a@127.0.0.1");
	assert_int_equal(strncmp(env.vars[1], "GATE_COOKIE_FILE=", 17), 0);
	snprintf(path, sizeof(path), "%s", env.vars[1] + 17);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "s3cret");
	assert_null(env.vars[2]);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", env.dir);
	exec_env_clear(&env);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(stat(dir, &st), -1);
	exec_env_clear(&env); /* twice is fine */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_exec__split),
	        cmocka_unit_test(test_exec__status),
	        cmocka_unit_test(test_exec__timeout_kills_group),
	        cmocka_unit_test(test_exec__cookie_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
