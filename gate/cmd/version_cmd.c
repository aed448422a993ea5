/* gate/cmd/version_cmd.c: what `gate --version` says. The Makefile says how the binary is
 * built (GATE_BUILD_KIND "release" for `make release`, else a build from source) and which
 * ei it was given (GATE_EI, GATE_EI_OTP); the libraries' versions are asked at run time, so
 * that a source build reports the shared libraries it actually loaded. */
#include "gate/cmd/version_cmd.h"
#include "gate/version.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ci/git/git2_lib.h"
#include "ci/report/xml_lib.h"
#include "gate/probe/otp.h"
#include "gate/probe/probe_blob.h"

#ifndef GATE_BUILD_KIND
#define GATE_BUILD_KIND "source"
#endif
#ifndef GATE_BUILD_TARGET
#define GATE_BUILD_TARGET "unknown"
#endif
#ifndef GATE_EI
#define GATE_EI "erl_interface"
#endif
#ifndef GATE_EI_OTP
#define GATE_EI_OTP "unknown"
#endif

void version_print(FILE *out)
{
	int major = 0, minor = 0, rev = 0;
	char git[96], xmlv[96], why[512];
	/* a library gate opens on first use (ci/git/git2_lib.h) may be missing: say which */
	if (git2_lib_load(why, sizeof(why)) == 0) {
		git_libgit2_version(&major, &minor, &rev);
		snprintf(git, sizeof(git), "libgit2 %d.%d.%d", major, minor, rev);
	} else {
		snprintf(git, sizeof(git), "libgit2 missing");
		fprintf(stderr, "gate: %s\n", why);
	}
	if (xml2_lib_load(why, sizeof(why)) == 0) {
		/* "20914" for 2.9.14 */
		int xml = atoi(xml2_lib_version());
		snprintf(xmlv, sizeof(xmlv), "libxml2 %d.%d.%d", xml / 10000, xml / 100 % 100,
		         xml % 100);
	} else {
		snprintf(xmlv, sizeof(xmlv), "libxml2 missing");
		fprintf(stderr, "gate: %s\n", why);
	}
	char libs[256];
	snprintf(libs, sizeof libs, "%s, %s, jansson %s", git, xmlv, jansson_version_str());
	fprintf(out, "gate %s\n", GATE_VERSION);
	if (strcmp(GATE_BUILD_KIND, "release") == 0)
		fprintf(out,
		        "build: release binary gate-%s-%s, static: %s and ei (%s of Erlang/OTP "
		        "%s); "
		        "dynamic: the C library only\n",
		        GATE_VERSION, GATE_BUILD_TARGET, libs, GATE_EI, GATE_EI_OTP);
	else
		fprintf(out,
		        "build: from source (%s), shared: %s; static: ei (%s of Erlang/OTP %s)\n",
		        GATE_BUILD_TARGET, libs, GATE_EI, GATE_EI_OTP);
	fprintf(out, "probe: compiled by Erlang/OTP %s's erlc; nodes of OTP %d and later\n",
	        probe_otp_release[0] ? probe_otp_release : "(unknown)", OTP_MIN_RELEASE);
}
