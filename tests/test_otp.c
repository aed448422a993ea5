/* tests/test_otp.c: the node's OTP release against the supported minimum. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gate/probe/otp.h"
#include "gate/probe/probe_blob.h"

static void supported_releases_pass(void **state)
{
	(void)state;
	char err[512] = "";
	assert_int_equal(otp_release_check("n@127.0.0.1", "25", err, sizeof(err)), 0);
	assert_int_equal(otp_release_check("n@127.0.0.1", "27", err, sizeof(err)), 0);
	assert_int_equal(otp_release_check("n@127.0.0.1", "28", err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

static void older_releases_are_refused_naming_both(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(otp_release_check("app@127.0.0.1", "24", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "node app@127.0.0.1 runs Erlang/OTP 24"));
	assert_non_null(strstr(err, "OTP 25 and later"));
	assert_non_null(strstr(err, "otp-version"));
	assert_int_equal(otp_release_check("old@h", "R16B03", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "runs Erlang/OTP R16B03"));
}

static void unknown_release_is_let_through(void **state)
{
	(void)state;
	char err[64] = "";
	assert_int_equal(otp_release_check("n@h", "", err, sizeof(err)), 0);
	assert_int_equal(otp_release_check("n@h", "twenty", err, sizeof(err)), 0);
	assert_int_equal(otp_release_check("n@h", NULL, err, sizeof(err)), 0);
}

static void probe_load_failure_is_explained_only_for_older_nodes(void **state)
{
	(void)state;
	char err[1024];
	/* this build's probe OTP is the build machine's erlc: a node one release older than it
	 * gets the explanation, a node of that release keeps the loader's words */
	int built = atoi(probe_otp_release);
	assert_true(built >= 25);
	char older[8], same[8];
	snprintf(older, sizeof(older), "%d", built - 1);
	snprintf(same, sizeof(same), "%d", built);
	snprintf(err, sizeof(err), "badfile");
	otp_explain_probe_load("n@h", same, err, sizeof(err));
	assert_string_equal(err, "badfile");
	otp_explain_probe_load("n@h", older, err, sizeof(err));
	assert_non_null(strstr(err, "runs Erlang/OTP"));
	assert_non_null(strstr(err, "compiled by OTP"));
	assert_non_null(strstr(err, "(badfile)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(supported_releases_pass),
	        cmocka_unit_test(older_releases_are_refused_naming_both),
	        cmocka_unit_test(unknown_release_is_let_through),
	        cmocka_unit_test(probe_load_failure_is_explained_only_for_older_nodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
