/* gate/probe/probe_erl.c: calls into gate_probe_erl (see probe_erl.h). */
#include "gate/probe/probe_erl.h"

#include <stdio.h>
#include <string.h>

#include "base/errtext.h"
#include "gate/probe/faithful.h"
#include "gate/probe/probe.h"

/* gate_probe_erl under the names the probe was loaded with (probe_names.h) */
static const char *erl_module(char *buf, size_t len)
{
	snprintf(buf, len, "gate_probe_erl%s", probe_entry() + strlen("gate_probe"));
	return buf;
}

int probe_erl_prepare(struct eic *c, const char *root, int timeout_ms, struct probe_erl_found *out,
                      char *err, size_t errlen)
{
	char mod[64];
	ei_x_buff a;
	struct term *root_t = NULL;
	const struct term *r;
	memset(out, 0, sizeof(*out));
	ei_x_new(&a);
	ei_x_encode_list_header(&a, 1);
	ei_x_encode_map_header(&a, 1);
	ei_x_encode_atom(&a, "root");
	ei_x_encode_binary(&a, root, (long)strlen(root));
	ei_x_encode_empty_list(&a);
	int rc = eic_rpc(c, erl_module(mod, sizeof(mod)), "prepare", &a, timeout_ms, &root_t, &r,
	                 err, errlen);
	ei_x_free(&a);
	if (rc == EIC_OK) {
		const struct term *m = term_tuple_at(r, 1);
		if (!term_is_atom(term_tuple_at(r, 0), "ok") || !m || m->type != TERM_MAP ||
		    term_int(term_map_get(m, "eunit"), &out->eunit_modules) < 0 ||
		    term_int(term_map_get(m, "suites"), &out->suites) < 0) {
			errtext_set(err, errlen, NULL,
			            "preparing the project's EUnit and Common Test runs gave an "
			            "unexpected reply");
			rc = EIC_ERROR;
		}
	}
	term_free(root_t);
	return rc;
}

int probe_erl_run(struct eic *c, const char *root, bool eunit, bool ct, char *const *args,
                  size_t nargs, enum attribution_mode mode, int timeout_ms,
                  void (*replied)(void *arg), void *arg, struct test_run *out, char **suite_error,
                  char *err, size_t errlen)
{
	static const char *const modes[] = {"off", "module", "test"};
	char mod[64];
	ei_x_buff a;
	ei_x_new(&a);
	ei_x_encode_list_header(&a, 2);
	eic_encode_binaries(&a, args, nargs);
	ei_x_encode_map_header(&a, 4);
	ei_x_encode_atom(&a, "root");
	ei_x_encode_binary(&a, root, (long)strlen(root));
	ei_x_encode_atom(&a, "runners");
	ei_x_encode_list_header(&a, (eunit ? 1 : 0) + (ct ? 1 : 0));
	if (eunit)
		ei_x_encode_atom(&a, "eunit");
	if (ct)
		ei_x_encode_atom(&a, "ct");
	ei_x_encode_empty_list(&a);
	ei_x_encode_atom(&a, "attribution");
	ei_x_encode_atom(&a, modes[mode]);
	ei_x_encode_atom(&a, "max_tests");
	ei_x_encode_longlong(&a, faithful_test_cap());
	ei_x_encode_empty_list(&a);
	struct term *root_t;
	const struct term *r;
	*suite_error = NULL;
	const struct term_limits *limits = c->limits;
	c->limits = probe_tests_limits();
	int rc = eic_rpc(c, erl_module(mod, sizeof(mod)), "run_tests", &a, timeout_ms, &root_t, &r,
	                 err, errlen);
	c->limits = limits;
	ei_x_free(&a);
	if (rc == EIC_OK && replied)
		replied(arg);
	if (rc == EIC_OK && probe_tests_decode(r, out, suite_error, err, errlen) < 0)
		rc = EIC_ERROR;
	term_free(root_t);
	return rc;
}
