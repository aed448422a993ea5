/* gate/run/rebar_build.h: a rebar3 project compiled as `rebar3 as test compile` compiles it
 * (its test profile, erl_opts and deps: rebar3 itself does it), and its code paths as
 * `rebar3 as test path` gives them, for the node gate starts with erl. */
#ifndef GATE_RUN_REBAR_BUILD_H
#define GATE_RUN_REBAR_BUILD_H

#include <stdbool.h>
#include <stddef.h>

struct rebar_paths {
	char **paths; /* owned, each owned */
	size_t n;
};

/* Runs `rebar3 as test do compile, path` in project (rebar3 from PATH, or $GATE_REBAR3). Its
 * lines go to stderr unless quiet. Returns 0 with out filled, or -1 with err: rebar3 not found,
 * or the project did not compile (rebar3's own words: the compiler's message). */
int rebar_build(const char *project, bool quiet, struct rebar_paths *out, char *err, size_t errlen);

void rebar_paths_clear(struct rebar_paths *p);

#endif
