/* gate/run/runner.c: which tests gate run runs (see runner.h). */
#include "gate/run/runner.h"

#include <string.h>

#include "base/errtext.h"

int runner_pick(const char *cli, const char *cfg, bool rebar3, struct runner_choice *out, char *err,
                size_t errlen)
{
	const char *v = cli ? cli : cfg ? cfg : "auto";
	const char *where = cli ? "--runner" : "gate.toml's [run] runner";
	memset(out, 0, sizeof(*out));
	out->rebar3 = rebar3;
	if (strcmp(v, "auto") == 0) {
		out->eunit = out->ct = rebar3;
		return 0;
	}
	if (strcmp(v, "mix") == 0 && !rebar3)
		return 0;
	if (rebar3 && (strcmp(v, "eunit") == 0 || strcmp(v, "ct") == 0 ||
	               strcmp(v, "eunit,ct") == 0 || strcmp(v, "ct,eunit") == 0)) {
		out->eunit = strstr(v, "eunit") != NULL;
		out->ct = strncmp(v, "ct", 2) == 0 || strstr(v, ",ct") != NULL;
		return 0;
	}
	bool known = strcmp(v, "mix") == 0 || strcmp(v, "eunit") == 0 || strcmp(v, "ct") == 0 ||
	             strcmp(v, "eunit,ct") == 0 || strcmp(v, "ct,eunit") == 0;
	if (known)
		errtext_set(err, errlen, NULL,
		            "%s \"%s\" does not fit this project, a %s project: use %s", where, v,
		            rebar3 ? "rebar3" : "Mix",
		            rebar3 ? "\"auto\", \"eunit\", \"ct\" or \"eunit,ct\""
		                   : "\"auto\" or \"mix\"");
	else
		errtext_set(err, errlen, NULL,
		            "%s \"%s\" is not a runner: expected \"auto\", \"mix\", \"eunit\", "
		            "\"ct\" or \"eunit,ct\"",
		            where, v);
	return -1;
}

int runner_check_args(char *const *args, size_t nargs, char *err, size_t errlen)
{
	static const char *const flags[] = {"--module", "--suite", "--group", "--case"};
	for (size_t i = 0; i < nargs; i++) {
		const char *a = args[i];
		bool known = false;
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
			size_t n = strlen(flags[f]);
			if (strncmp(a, flags[f], n) == 0 &&
			    (a[n] == '\0' || (a[n] == '=' && a[n + 1])))
				known = a[n] == '=' || (i + 1 < nargs && args[++i][0]);
		}
		if (!known) {
			errtext_set(
			        err, errlen, NULL,
			        "the test argument %s is not one gate passes to a rebar3 project's "
			        "runners: after -- give --module M[,M] (EUnit), --suite S[,S], "
			        "--group G[,G] or --case C[,C] (Common Test), each with its value",
			        a);
			return -1;
		}
	}
	return 0;
}

const char *runner_name(const struct runner_choice *c)
{
	if (!c->rebar3)
		return "mix test";
	return c->eunit && c->ct ? "EUnit and Common Test" : c->eunit ? "EUnit" : "Common Test";
}
