/* gate/probe/probe_erl.h: the C side of the Erlang runners (gate_probe_erl.erl): a rebar3
 * project's EUnit and Common Test run inside the node, their results decoded as mix test's
 * (probe_tests_decode: the same suite map). Every function returns an enum eic_status. */
#ifndef GATE_PROBE_ERL_H
#define GATE_PROBE_ERL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate/node/eic.h"
#include "model/tests.h"

/* What prepare found in the project. */
struct probe_erl_found {
	int64_t eunit_modules; /* modules with EUnit tests */
	int64_t suites;        /* Common Test suites */
};

/* Adds the project's test directories to the code path and pays the runners' one-time costs
 * (their modules, EUnit's server) before the before-snapshot. root: the project. */
int probe_erl_prepare(struct eic *c, const char *root, int timeout_ms, struct probe_erl_found *out,
                      char *err, size_t errlen);

/* Runs EUnit then Common Test (as eunit and ct say) with args (rebar3's --module, --suite,
 * --group, --case) and decodes the suite into out, as probe_run_tests does for mix test. */
int probe_erl_run(struct eic *c, const char *root, bool eunit, bool ct, char *const *args,
                  size_t nargs, enum attribution_mode mode, int timeout_ms,
                  void (*replied)(void *arg), void *arg, struct test_run *out, char **suite_error,
                  char *err, size_t errlen);

#endif
