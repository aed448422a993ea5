/* gate/run/runner.c: which tests gate run runs (see runner.h). */
#include "gate/run/runner.h"

#include <string.h>

#include "base/errtext.h"
#include "rules/reproduce.h"

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
	for (size_t i = 0; i < nargs;) {
		/* the flags rebar3's selection takes (rules/reproduce.h), each with a value */
		size_t k = reproduce_selecting(REPRODUCE_REBAR, args, nargs, i);
		const char *eq = strchr(args[i], '=');
		bool valued = k == 2 ? args[i + 1][0] != '\0' : k == 1 && eq && eq[1];
		if (!valued) {
			errtext_set(
			        err, errlen, NULL,
			        "the test argument %s is not one gate passes to a rebar3 project's "
			        "runners: after -- give --module M[,M] (EUnit), --suite S[,S], "
			        "--group G[,G] or --case C[,C] (Common Test), each with its value",
			        args[i]);
			return -1;
		}
		i += k;
	}
	return 0;
}

const char *runner_name(const struct runner_choice *c)
{
	if (!c->rebar3)
		return "mix test";
	return c->eunit && c->ct ? "EUnit and Common Test" : c->eunit ? "EUnit" : "Common Test";
}
