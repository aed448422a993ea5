/* gate/run/runner.h: which tests `gate run` runs: mix test in a Mix project; EUnit and Common
 * Test in a rebar3 project (gate/run/rebar_mode.c), picked by --runner or [run] runner. */
#ifndef GATE_RUN_RUNNER_H
#define GATE_RUN_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

struct runner_choice {
	bool rebar3; /* a rebar3 project: EUnit and/or Common Test; else mix test */
	bool eunit;  /* rebar3: EUnit runs */
	bool ct;     /* rebar3: Common Test runs (where the project has suites) */
};

/* The runners for a project (rebar3: a rebar3 project) from the command line's --runner
 * (cli, NULL when not given) over gate.toml's [run] runner (cfg): "auto" (mix test, or EUnit
 * then Common Test), "mix", "eunit", "ct", "eunit,ct". Returns 0, or -1 with err naming the
 * value, where it was given and what fits the project. */
int runner_pick(const char *cli, const char *cfg, bool rebar3, struct runner_choice *out, char *err,
                size_t errlen);

/* A rebar3 project's test arguments (after --): --module M[,M], --suite S[,S], --group G[,G]
 * and --case C[,C], each with its value (or --name=value). Returns 0, or -1 with err naming
 * the argument, before anything starts (gate_probe_erl checks them again in the node). */
int runner_check_args(char *const *args, size_t nargs, char *err, size_t errlen);

/* "mix test", "EUnit", "Common Test", "EUnit and Common Test": for messages. */
const char *runner_name(const struct runner_choice *c);

#endif
