/* tests/test_version.c: what `gate --version` says: "gate VERSION" alone on the
 * first line (mix gate and the CI templates read it), then how this binary was built, the
 * libraries it runs with and the OTP release of its ei and of its probe's erlc. The unit
 * tests link the objects of a build from source; the release binary's wording is checked on
 * the binary itself (tests/release/check.sh, e2e release_binary_static). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <git2.h>
#include <jansson.h>

#include "gate/cmd/version_cmd.h"
#include "gate/probe/probe_blob.h"
#include "gate/version.h"

static char *printed(void)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	assert_non_null(f);
	version_print(f);
	fclose(f);
	return buf;
}

static void first_line_is_the_version_alone(void **state)
{
	(void)state;
	const char *out = printed();
	char want[64];
	snprintf(want, sizeof(want), "gate %s\n", GATE_VERSION);
	assert_memory_equal(out, want, strlen(want));
}

static void a_source_build_says_so_with_its_libraries(void **state)
{
	(void)state;
	const char *out = printed();
	int major, minor, rev;
	git_libgit2_version(&major, &minor, &rev);
	char git[64], jansson[64], probe[96];
	snprintf(git, sizeof(git), "libgit2 %d.%d.%d, ", major, minor, rev);
	snprintf(jansson, sizeof(jansson), "jansson %s", jansson_version_str());
	snprintf(probe, sizeof(probe), "probe: compiled by Erlang/OTP %s's erlc; nodes of OTP 25",
	         probe_otp_release);
	assert_non_null(strstr(out, "\nbuild: from source (linux-"));
	assert_null(strstr(out, "release binary"));
	assert_non_null(strstr(out, git));
	assert_non_null(strstr(out, jansson));
	assert_non_null(strstr(out, "libxml2 2."));
	assert_non_null(strstr(out, "static: ei (erl_interface-"));
	assert_null(strstr(out, "of Erlang/OTP unknown"));
	assert_non_null(strstr(out, probe));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(first_line_is_the_version_alone),
	        cmocka_unit_test(a_source_build_says_so_with_its_libraries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
