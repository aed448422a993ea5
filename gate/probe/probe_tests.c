/* gate/probe/probe_tests.c: runs mix test through the probe and decodes the suite's result
 * (the tests, mix test's exit status, the formatter's attribution) into a test run. */
#include "gate/probe/probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"
#include "base/utf8.h"
#include "gate/probe/faithful.h"
#include "gate/probe/probe_tags.h"
#include "model/tests.h"
#include "rules/attribution.h"

/* A test's text as the node sent it, NUL and control bytes escaped (never cut at a NUL). */
static char *dup_text(const struct term *t)
{
	const char *s = term_text(t);
	return s ? utf8_dup_escaped(s, t->u.bin.len) : strdup("");
}

static int state_from(const struct term *t, enum test_state *out)
{
	static const struct {
		const char *name;
		enum test_state state;
	} states[] = {
	        {"passed", TEST_PASSED},     {"failed", TEST_FAILED},   {"skipped", TEST_SKIPPED},
	        {"excluded", TEST_EXCLUDED}, {"invalid", TEST_INVALID},
	};
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (term_is_atom(t, states[i].name)) {
			*out = states[i].state;
			return 0;
		}
	return -1;
}

/* A memory map into mem[]; unknown categories are skipped, a non-integer is an error. */
static int decode_mem(const struct term *map, int64_t *mem)
{
	if (!map || map->type != TERM_MAP)
		return -1;
	for (size_t i = 0; i < map->u.seq.n; i++) {
		int cat = mem_cat_from_name(term_text(&map->u.seq.items[2 * i]));
		int64_t v;
		if (cat < 0)
			continue;
		if (term_int(&map->u.seq.items[2 * i + 1], &v) < 0)
			return -1;
		mem[cat] = v;
	}
	return 0;
}

/* none, or {Async, MemoryDeltaMap, ProcessDelta, EtsDelta} */
static int decode_test_delta(const struct term *t, struct test_result *r)
{
	if (term_is_atom(t, "none"))
		return 0;
	if (!t || t->type != TERM_TUPLE || t->u.seq.n != 4 ||
	    decode_mem(term_tuple_at(t, 1), r->delta.mem) < 0 ||
	    term_int(term_tuple_at(t, 2), &r->delta.processes) < 0 ||
	    term_int(term_tuple_at(t, 3), &r->delta.ets_tables) < 0)
		return -1;
	r->async = term_is_atom(term_tuple_at(t, 0), "true");
	r->measured = true;
	return 0;
}

static int edge_from(const struct term *kind, enum module_edge *out)
{
	static const struct {
		const char *atom;
		enum module_edge edge;
	} edges[] = {{"start", EDGE_MODULE_START},
	             {"finish", EDGE_MODULE_FINISH},
	             {"test_start", EDGE_TEST_START},
	             {"test_finish", EDGE_TEST_FINISH}};
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		if (term_is_atom(kind, edges[i].atom)) {
			*out = edges[i].edge;
			return 0;
		}
	return -1;
}

/* The structures that grew between each module's edges: [{Module, [{Key, Value}]}], into
 * run->structs. Absent: an older probe, attribution off or late. */
static int decode_structs(const struct term *body, struct test_run *out, char *err, size_t errlen)
{
	const struct term *l = term_map_get(body, "module_structs");
	if (!l)
		return 0;
	if (l->type != TERM_LIST) {
		errtext_set(err, errlen, NULL, "the suite result's module_structs is not a list");
		return -1;
	}
	out->have_structs = true;
	if (!l->u.seq.n)
		return 0;
	if (!(out->structs = calloc(l->u.seq.n, sizeof(*out->structs))))
		goto oom;
	for (size_t i = 0; i < l->u.seq.n; i++) {
		const struct term *m = &l->u.seq.items[i], *items = term_tuple_at(m, 1);
		struct module_structs *ms = &out->structs[out->nstructs];
		if (m->type != TERM_TUPLE || m->u.seq.n != 2 || !term_text(term_tuple_at(m, 0)) ||
		    !items || items->type != TERM_LIST) {
			errtext_set(err, errlen, NULL, "module structures %zu are malformed",
			            i + 1);
			return -1;
		}
		if (!(ms->module = dup_text(term_tuple_at(m, 0))))
			goto oom;
		out->nstructs++;
		if (items->u.seq.n && !(ms->items = calloc(items->u.seq.n, sizeof(*ms->items))))
			goto oom;
		for (size_t k = 0; k < items->u.seq.n; k++) {
			const struct term *kv = &items->u.seq.items[k];
			struct struct_share *sh = &ms->items[ms->nitems];
			if (kv->type != TERM_TUPLE || kv->u.seq.n != 2 ||
			    !term_text(term_tuple_at(kv, 0)) ||
			    term_int(term_tuple_at(kv, 1), &sh->value) < 0) {
				errtext_set(err, errlen, NULL,
				            "module structures %zu: item %zu is malformed", i + 1,
				            k + 1);
				return -1;
			}
			if (!(sh->key = dup_text(term_tuple_at(kv, 0))))
				goto oom;
			ms->nitems++;
		}
	}
	return 0;
oom:
	errtext_set(err, errlen, NULL, "out of memory");
	return -1;
}

/* The formatter's attribution mode and module events ({Kind, Module, Async, Us, MemoryMap,
 * ProcessCount, EtsCount}, in order; Kind start | finish | test_start | test_finish), turned into
 * run->modules. Absent keys: an older probe, no attribution. */
static int decode_attribution(const struct term *body, struct test_run *out, char *err,
                              size_t errlen)
{
	const struct term *mode = term_map_get(body, "attribution");
	const struct term *evs = term_map_get(body, "module_events");
	int rc = -1;

	out->attribution = term_is_atom(mode, "test")     ? ATTRIBUTION_TEST
	                   : term_is_atom(mode, "module") ? ATTRIBUTION_MODULE
	                                                  : ATTRIBUTION_OFF;
	out->attribution_sync = term_is_atom(term_map_get(body, "attribution_sync"), "true");
	const char *hook_error = term_text(term_map_get(body, "hook_error"));
	if (hook_error && *hook_error && !(out->attribution_error = strdup(hook_error))) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	if (term_int(term_map_get(body, "module_events_dropped"), &out->module_events_dropped) < 0)
		out->module_events_dropped = 0;
	if (!evs)
		return 0;
	if (evs->type != TERM_LIST) {
		errtext_set(err, errlen, NULL, "the suite result's module_events is not a list");
		return -1;
	}
	size_t n = evs->u.seq.n;
	struct module_event *ev = n ? calloc(n, sizeof(*ev)) : NULL;
	if (n && !ev) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct term *e = &evs->u.seq.items[i];
		const struct term *kind = term_tuple_at(e, 0);
		if (e->type != TERM_TUPLE || e->u.seq.n != 7 || edge_from(kind, &ev[i].edge) < 0 ||
		    !(ev[i].module = term_text(term_tuple_at(e, 1))) ||
		    term_int(term_tuple_at(e, 3), &ev[i].at_us) < 0 ||
		    !((ev[i].edge >= EDGE_TEST_START &&
		       term_is_atom(term_tuple_at(e, 4), "none")) ||
		      (ev[i].has_mem = decode_mem(term_tuple_at(e, 4), ev[i].mem) == 0)) ||
		    term_int(term_tuple_at(e, 5), &ev[i].processes) < 0 ||
		    term_int(term_tuple_at(e, 6), &ev[i].ets_tables) < 0) {
			errtext_set(err, errlen, NULL, "module event %zu is malformed", i + 1);
			goto out;
		}
		ev[i].async = term_is_atom(term_tuple_at(e, 2), "true");
	}
	if (attribution_build(out, ev, n) < 0) {
		errtext_set(err, errlen, NULL, "out of memory");
		goto out;
	}
	if (decode_structs(body, out, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	free(ev);
	return rc;
}

/* One record {Module, Name, File, Line, TimeUs, State, Message[, Delta[, Extra]]}, the i-th,
 * added to out. */
static int decode_test_record(const struct term *t, size_t i, struct test_run *out, char *err,
                              size_t errlen)
{
	int64_t line, time_us;
	enum test_state state;
	if (t->type != TERM_TUPLE || t->u.seq.n < 7 || t->u.seq.n > 9 ||
	    !term_text(term_tuple_at(t, 0)) || !term_text(term_tuple_at(t, 1)) ||
	    !term_text(term_tuple_at(t, 2)) || term_int(term_tuple_at(t, 3), &line) < 0 ||
	    term_int(term_tuple_at(t, 4), &time_us) < 0 ||
	    state_from(term_tuple_at(t, 5), &state) < 0 || !term_text(term_tuple_at(t, 6))) {
		errtext_set(err, errlen, NULL, "test record %zu is malformed", i + 1);
		return -1;
	}
	struct test_result *r = test_run_add(out);
	if (!r) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	r->module = dup_text(term_tuple_at(t, 0));
	r->name = dup_text(term_tuple_at(t, 1));
	r->file = dup_text(term_tuple_at(t, 2));
	r->message = dup_text(term_tuple_at(t, 6));
	if (!r->module || !r->name || !r->file || !r->message) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	r->line = line > 0 && line < INT32_MAX ? (int)line : 0;
	r->time_us = time_us;
	r->state = state;
	if (t->u.seq.n >= 8 && decode_test_delta(term_tuple_at(t, 7), r) < 0) {
		errtext_set(err, errlen, NULL, "test record %zu has a malformed memory delta",
		            i + 1);
		return -1;
	}
	if (t->u.seq.n == 9 && faithful_test_decode(term_tuple_at(t, 8), r) < 0) {
		errtext_set(err, errlen, NULL, "test record %zu has malformed app and reason",
		            i + 1);
		return -1;
	}
	if (t->u.seq.n == 9 && probe_tags_decode(term_tuple_at(t, 8), r) < 0) {
		errtext_set(err, errlen, NULL, "test record %zu has a malformed gate tag", i + 1);
		return -1;
	}
	return 0;
}

/* The records the formatter sent still packed (tests_packed: binaries, each a list of records
 * in the external term format, in the order the tests finished), after the `first` records
 * of the tests list: each decoded on its own, within the suite's limits, and freed before the
 * next. An old probe sends none (NULL). */
static int decode_packed_tests(const struct term *packed, size_t first, struct test_run *out,
                               char *err, size_t errlen)
{
	if (!packed)
		return 0;
	if (packed->type != TERM_LIST) {
		errtext_set(err, errlen, NULL, "the suite result's tests_packed is not a list");
		return -1;
	}
	size_t k = first;
	for (size_t c = 0; c < packed->u.seq.n; c++) {
		const struct term *bin = &packed->u.seq.items[c];
		char derr[256];
		struct term *list = NULL;
		size_t idx = 0;
		if (bin->type != TERM_BINARY ||
		    term_decode(&list, (const unsigned char *)bin->u.bin.data, bin->u.bin.len, &idx,
		                probe_tests_limits(), derr, sizeof(derr)) < 0 ||
		    idx != bin->u.bin.len || list->type != TERM_LIST) {
			errtext_set(err, errlen, NULL,
			            "the suite result's packed records %zu are malformed: %s",
			            c + 1,
			            bin->type != TERM_BINARY ? "not a binary"
			            : !list                  ? derr
			            : idx != bin->u.bin.len  ? "bytes after the term"
			                                     : "not a list");
			term_free(list);
			return -1;
		}
		for (size_t i = 0; i < list->u.seq.n; i++, k++)
			if (decode_test_record(&list->u.seq.items[i], k, out, err, errlen) < 0) {
				term_free(list);
				return -1;
			}
		term_free(list);
	}
	return 0;
}

int probe_tests_decode(const struct term *reply, struct test_run *out, char **suite_error,
                       char *err, size_t errlen)
{
	*suite_error = NULL;
	const struct term *tag = term_tuple_at(reply, 0);
	const struct term *body = term_tuple_at(reply, 1);
	if (term_is_atom(tag, "error")) {
		const char *why = term_text(body);
		errtext_set(err, errlen, NULL, "%s", why ? why : "mix test failed in the node");
		return -1;
	}
	if (!term_is_atom(tag, "ok") || !body || body->type != TERM_MAP) {
		errtext_set(err, errlen, NULL, "the suite result is not {ok, Map}");
		return -1;
	}
	const struct term *tests = term_map_get(body, "tests");
	if (!tests || tests->type != TERM_LIST) {
		errtext_set(err, errlen, NULL, "the suite result has no list of tests");
		return -1;
	}
	for (size_t i = 0; i < tests->u.seq.n; i++)
		if (decode_test_record(&tests->u.seq.items[i], i, out, err, errlen) < 0)
			return -1;
	if (decode_packed_tests(term_map_get(body, "tests_packed"), tests->u.seq.n, out, err,
	                        errlen) < 0)
		return -1;
	out->finished = true;
	if (decode_attribution(body, out, err, errlen) < 0)
		return -1;
	if (term_int(term_map_get(body, "run_us"), &out->run_us) < 0)
		out->run_us = -1;
	if (term_int(term_map_get(body, "load_us"), &out->load_us) < 0)
		out->load_us = -1;
	if (term_int(term_map_get(body, "wall_us"), &out->wall_us) < 0)
		out->wall_us = -1;
	if (term_int(term_map_get(body, "seed"), &out->seed) < 0)
		out->seed = 0;
	if (faithful_run_decode(body, out, err, errlen) < 0)
		return -1;
	const char *suite_err = term_text(term_map_get(body, "error"));
	if (suite_err && *suite_err) {
		*suite_error = strdup(suite_err);
	}
	return 0;
}

/* The suite's reply holds every test gate records (faithful_test_cap(), 200 000): a record is
 * about 14 terms, 36 with --per-test's delta (its memory map), so the default 4 M terms ran
 * out at 116 000 tests with --per-test while the cap promises 200 000. Room for 48 terms a
 * test at the cap, and the module events' (at most 200 000, 27 terms each with figures). */
static const struct term_limits suite_limits = {
        .max_depth = 32,
        .max_elements = 16u << 20,
        .max_bytes = 256u << 20,
};

const struct term_limits *probe_tests_limits(void)
{
	return &suite_limits;
}

int probe_run_tests(struct eic *c, char *const *args, size_t nargs, enum attribution_mode mode,
                    bool fresh_node, int timeout_ms, void (*replied)(void *arg), void *arg,
                    struct test_run *out, char **suite_error, char *err, size_t errlen)
{
	static const char *const modes[] = {"off", "module", "test"};
	ei_x_buff a;
	ei_x_new(&a);
	ei_x_encode_list_header(&a, 2);
	eic_encode_binaries(&a, args, nargs);
	ei_x_encode_map_header(&a, 3);
	ei_x_encode_atom(&a, "attribution");
	ei_x_encode_atom(&a, modes[mode]);
	ei_x_encode_atom(&a, "max_tests");
	ei_x_encode_longlong(&a, faithful_test_cap());
	ei_x_encode_atom(&a, "ex_unit_by_gate");
	ei_x_encode_atom(&a, fresh_node ? "true" : "false");
	ei_x_encode_empty_list(&a);
	struct term *root;
	const struct term *r;
	*suite_error = NULL;
	const struct term_limits *limits = c->limits;
	c->limits = &suite_limits;
	int rc = eic_rpc(c, probe_entry(), "run_tests", &a, timeout_ms, &root, &r, err, errlen);
	c->limits = limits;
	ei_x_free(&a);
	if (rc == EIC_OK && replied)
		replied(arg);
	if (rc == EIC_OK && probe_tests_decode(r, out, suite_error, err, errlen) < 0)
		rc = EIC_ERROR;
	term_free(root);
	return rc;
}
