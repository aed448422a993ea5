/* gate/config/discover.c: finding the project and its gate.toml (see discover.h). */
#include "gate/config/discover.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errtext.h"

int discover_project(const char *dir, enum discover_need need, const char *alt, char out[PATH_MAX],
                     char *err, size_t errlen)
{
	const char *d = dir ? dir : ".";
	const char *sep = alt ? ", " : "";
	struct stat st;
	char mixexs[PATH_MAX + 16];

	if (!realpath(d, out)) {
		errtext_set(err, errlen, NULL,
		            "project directory %s: %s; pass the Mix project with -C DIR%s%s", d,
		            strerror(errno), sep, alt ? alt : "");
		return -1;
	}
	if (stat(out, &st) < 0 || !S_ISDIR(st.st_mode)) {
		errtext_set(err, errlen, NULL,
		            "project directory %s is not a directory; pass the Mix project with "
		            "-C DIR%s%s",
		            d, sep, alt ? alt : "");
		return -1;
	}
	if (need == DISCOVER_DIR || (need == DISCOVER_TESTS && discover_is_rebar3(out)))
		return 0;
	snprintf(mixexs, sizeof(mixexs), "%s/mix.exs", out);
	if (access(mixexs, R_OK) < 0) {
		if (need == DISCOVER_TESTS)
			errtext_set(
			        err, errlen, NULL,
			        "%s has no readable mix.exs or rebar.config: gate runs the tests "
			        "of a Mix or rebar3 project; pass its directory with -C DIR%s%s",
			        out, sep, alt ? alt : "");
		else
			errtext_set(
			        err, errlen, NULL,
			        "%s has no readable mix.exs: gate runs in a Mix project; pass its "
			        "directory with -C DIR%s%s",
			        out, sep, alt ? alt : "");
		return -1;
	}
	return 0;
}

bool discover_has_rebar3(const char *project)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/rebar.config", project);
	return access(path, R_OK) == 0;
}

bool discover_is_rebar3(const char *project)
{
	char mixexs[PATH_MAX + 16], helper[PATH_MAX + 32];
	snprintf(mixexs, sizeof(mixexs), "%s/mix.exs", project);
	snprintf(helper, sizeof(helper), "%s/test/test_helper.exs", project);
	/* a library that ships a mix.exs for Elixir users, its tests EUnit and Common Test */
	if (access(mixexs, F_OK) == 0 && access(helper, F_OK) == 0)
		return false;
	return discover_has_rebar3(project);
}

int discover_config_path(const char *project, const char *explicit_path, char *out, size_t outlen,
                         char *err, size_t errlen)
{
	int n;
	out[0] = '\0';
	if (!explicit_path && !project)
		return 0; /* no project (attach mode without -C): the defaults */
	if (explicit_path)
		n = snprintf(out, outlen, "%s", explicit_path);
	else
		n = snprintf(out, outlen, "%s/gate.toml", project);
	if (n < 0 || (size_t)n >= outlen) {
		errtext_set(
		        err, errlen, NULL,
		        "the configuration path %s%s is too long; pass a shorter one with -c FILE",
		        explicit_path ? explicit_path : project, explicit_path ? "" : "/gate.toml");
		return -1;
	}
	if (!explicit_path && access(out, F_OK) < 0)
		out[0] = '\0'; /* no gate.toml: the defaults */
	return 0;
}

int discover_config(struct config *cfg, const char *project, const char *explicit_path, char *err,
                    size_t errlen)
{
	char path[PATH_MAX + 16];
	if (config_default(cfg) < 0) {
		errtext_set(err, errlen, NULL, "out of memory reading the configuration");
		return -1;
	}
	if (discover_config_path(project, explicit_path, path, sizeof(path), err, errlen) < 0)
		return -1;
	return path[0] ? config_load(cfg, path, err, errlen) : 0;
}
