/* gate/probe/probe.c: loads the probe's modules into the node, calls gate_probe and decodes its
 * replies. */
#include "gate/probe/probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"
#include "gate/probe/probe_blob.h"
#include "gate/probe/probe_fine.h" /* deep snapshots' fine level */
#include "gate/probe/probe_inside.h"
#include "gate/probe/probe_names.h"
#include "model/snapshot.h"

/* Calls gate_probe:fun with the already encoded argument list in args (or none). */
static int call(struct eic *c, const char *mod, const char *fun, ei_x_buff *args, int timeout_ms,
                struct term **root, const struct term **reply, char *err, size_t errlen)
{
	ei_x_buff none;
	int rc;
	if (!args) {
		ei_x_new(&none);
		ei_x_encode_empty_list(&none);
		rc = eic_rpc(c, mod, fun, &none, timeout_ms, root, reply, err, errlen);
		ei_x_free(&none);
	} else {
		rc = eic_rpc(c, mod, fun, args, timeout_ms, root, reply, err, errlen);
	}
	return rc;
}

bool probe_blob_wanted(const struct probe_blob *b, bool for_tests)
{
	return for_tests || !b->tests_only;
}

/* The file name a module is loaded under: "gate:" tells the probe's modules from the node's
 * own (the watchdog removes every module loaded so, see gate_probe.erl). */
static void blob_file(const struct probe_blob *b, char *file, size_t len)
{
	snprintf(file, len, "gate:%s.beam", b->module);
}

static long wanted_count(bool for_tests)
{
	long n = 0;
	for (const struct probe_blob *b = probe_blobs; b->module; b++)
		n += probe_blob_wanted(b, for_tests);
	return n;
}

void probe_blobs_encode(ei_x_buff *x, bool for_tests)
{
	if (wanted_count(for_tests))
		ei_x_encode_list_header(x, wanted_count(for_tests));
	for (const struct probe_blob *b = probe_blobs; b->module; b++) {
		char file[128];
		if (!probe_blob_wanted(b, for_tests))
			continue;
		blob_file(b, file, sizeof(file));
		ei_x_encode_tuple_header(x, 3);
		ei_x_encode_atom(x, b->module);
		ei_x_encode_string(x, file);
		ei_x_encode_binary(x, b->beam, (long)b->size);
	}
	ei_x_encode_empty_list(x);
}

void probe_modules_encode(ei_x_buff *x, bool for_tests)
{
	if (wanted_count(for_tests))
		ei_x_encode_list_header(x, wanted_count(for_tests));
	for (const struct probe_blob *b = probe_blobs; b->module; b++) {
		if (!probe_blob_wanted(b, for_tests))
			continue;
		ei_x_encode_binary(x, b->module, (long)strlen(b->module));
	}
	ei_x_encode_empty_list(x);
}

/* The slot this process's session loaded the probe under (see probe_names.h); the names of
 * its entry module for every call gate makes. */
static unsigned slot;
static char entry[64] = "gate_probe";

const char *probe_entry(void)
{
	return entry;
}

/* One RPC Mod:Fun(Arg) with an atom as its only argument. Returns the reply's truth (true
 * for the atom true), false when the call failed. */
static bool call_atom(struct eic *c, const char *mod, const char *fun, const char *arg,
                      int timeout_ms)
{
	char ignored[256];
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, arg);
	ei_x_encode_empty_list(&args);
	struct term *root;
	const struct term *reply;
	int rc = call(c, mod, fun, &args, timeout_ms, &root, &reply, ignored, sizeof(ignored));
	bool yes = rc == EIC_OK && term_is_atom(reply, "true");
	term_free(root);
	ei_x_free(&args);
	return yes;
}

/* The first slot whose entry module has neither current code (another gate in it) nor old
 * code (its purge not done yet): a gate's purger removes the entry module last, so its other
 * modules are gone too. No slot free: slot 0, whose leftovers load_one purges first. */
static unsigned slot_pick(struct eic *c, int timeout_ms)
{
	for (unsigned s = 0; s < PROBE_SLOTS; s++) {
		char name[64];
		probe_name("gate_probe", s, name, sizeof(name));
		if (!call_atom(c, "erlang", "module_loaded", name, timeout_ms) &&
		    !call_atom(c, "erlang", "check_old_code", name, timeout_ms))
			return s;
	}
	return 0;
}

/* code:load_binary(Name, "gate:Name.beam", Beam) for b under the slot's names. */
static int load_one(struct eic *c, const struct probe_blob *b, int timeout_ms, char *err,
                    size_t errlen)
{
	const char *mods[64];
	size_t nmod = 0;
	for (const struct probe_blob *o = probe_blobs; o->module && nmod < 64; o++)
		mods[nmod++] = o->module;
	size_t size = b->size;
	unsigned char *renamed = NULL;
	if (slot) {
		renamed = probe_beam_rename(b->beam, b->size, mods, nmod, slot, &size);
		if (!renamed) {
			errtext_set(err, errlen, NULL, "cannot rename the probe module %s",
			            b->module);
			return EIC_ERROR;
		}
	}
	char name[64], file[128];
	probe_name(b->module, slot, name, sizeof(name));
	snprintf(file, sizeof(file), "gate:%s.beam", name);
	/* Old code of a previous gate whose purge has not run yet: loading would still work
	 * (the new code becomes current beside it), but then nothing could delete the module at
	 * the end before that purge. It is purged now, waiting for its scan: only where no free
	 * slot was taken (gate run; every slot busy) */
	if (call_atom(c, "erlang", "check_old_code", name, timeout_ms))
		call_atom(c, "code", "purge", name, timeout_ms);
	bool purged = false;
	int rc;
	for (;;) {
		ei_x_buff args;
		ei_x_new(&args);
		ei_x_encode_list_header(&args, 3);
		ei_x_encode_atom(&args, name);
		ei_x_encode_string(&args, file);
		ei_x_encode_binary(&args, renamed ? renamed : b->beam, (long)size);
		ei_x_encode_empty_list(&args);
		struct term *root;
		const struct term *reply;
		rc = call(c, "code", "load_binary", &args, timeout_ms, &root, &reply, err, errlen);
		ei_x_free(&args);
		/* {module, Mod} or {error, What}. not_purged: current and old code both there
		 * (another gate loaded it meanwhile): purge the old and load again, once */
		if (rc == EIC_OK && !purged && term_is_atom(term_tuple_at(reply, 0), "error") &&
		    term_is_atom(term_tuple_at(reply, 1), "not_purged")) {
			term_free(root);
			call_atom(c, "code", "purge", name, timeout_ms);
			purged = true;
			continue;
		}
		if (rc == EIC_OK && !term_is_atom(term_tuple_at(reply, 0), "module")) {
			char what[256];
			term_format(reply, what, sizeof(what));
			errtext_set(err, errlen, NULL,
			            "node %s refused to load the probe module %s: %s", c->node,
			            name, what);
			rc = EIC_ERROR;
		}
		term_free(root);
		break;
	}
	free(renamed);
	return rc;
}

/* A node gate has just started holds nothing of gate's: every module but gate_probe (its
 * on_load starts the watchdog, and code:atomic_load/1 takes no on_load) is loaded by one
 * call of code:atomic_load/1, which prepares them in the calling process of the node (beside
 * Mix's own loading, which goes through code_server) and commits them at once. */
static bool batched(const struct probe_blob *b, bool for_tests)
{
	return probe_blob_wanted(b, for_tests) && strcmp(b->module, "gate_probe") != 0;
}

static int load_batch(struct eic *c, bool for_tests, int timeout_ms, char *err, size_t errlen)
{
	long n = 0;
	for (const struct probe_blob *b = probe_blobs; b->module; b++)
		n += batched(b, for_tests);
	if (n == 0)
		return EIC_OK;
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_list_header(&args, n);
	for (const struct probe_blob *b = probe_blobs; b->module; b++) {
		char file[128];
		if (!batched(b, for_tests))
			continue;
		blob_file(b, file, sizeof(file));
		ei_x_encode_tuple_header(&args, 3);
		ei_x_encode_atom(&args, b->module);
		ei_x_encode_string(&args, file);
		ei_x_encode_binary(&args, b->beam, (long)b->size);
	}
	ei_x_encode_empty_list(&args);
	ei_x_encode_empty_list(&args);
	struct term *root;
	const struct term *reply;
	int rc = call(c, "code", "atomic_load", &args, timeout_ms, &root, &reply, err, errlen);
	ei_x_free(&args);
	if (rc == EIC_OK && !term_is_atom(reply, "ok")) {
		char what[256];
		term_format(reply, what, sizeof(what));
		errtext_set(err, errlen, NULL, "node %s refused to load the probe's modules: %s",
		            c->node, what);
		rc = EIC_ERROR;
	}
	term_free(root);
	return rc;
}

int probe_load(struct eic *c, bool for_tests, bool fresh, bool new_node, int timeout_ms, char *err,
               size_t errlen)
{
	slot = fresh ? slot_pick(c, timeout_ms) : 0;
	probe_name("gate_probe", slot, entry, sizeof(entry));
	bool batch = new_node && slot == 0;
	if (batch && load_batch(c, for_tests, timeout_ms, err, errlen) != EIC_OK)
		return EIC_ERROR;
	for (const struct probe_blob *b = probe_blobs; b->module; b++) {
		if (!probe_blob_wanted(b, for_tests) || (batch && batched(b, for_tests)))
			continue;
		int rc = load_one(c, b, timeout_ms, err, errlen);
		if (rc != EIC_OK)
			return rc;
	}
	return EIC_OK;
}

void probe_unload(struct eic *c, bool for_tests, enum probe_unload_mode mode, int timeout_ms)
{
	char ignored[256];
	struct term *root;
	const struct term *reply;
	if (mode == PROBE_UNLOAD_HALTING) {
		call(c, entry, "cleanup", NULL, timeout_ms, &root, &reply, ignored,
		     sizeof(ignored));
		term_free(root);
		return;
	}
	/* one call: the helpers stopped, every module deleted, their purge handed to a process
	 * of the node that runs once this call has returned (gate_probe:unload/1). It scans
	 * nothing, but stopping an interrupted suite can take a loaded node seconds: the call
	 * gets at least 10 s, so that gate leaves only once its modules are deleted */
	if (timeout_ms < 10000)
		timeout_ms = 10000;
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 1);
	if (wanted_count(for_tests))
		ei_x_encode_list_header(&args, wanted_count(for_tests));
	for (const struct probe_blob *b = probe_blobs; b->module; b++) {
		char name[64];
		if (!probe_blob_wanted(b, for_tests))
			continue;
		probe_name(b->module, slot, name, sizeof(name));
		ei_x_encode_binary(&args, name, (long)strlen(name));
	}
	ei_x_encode_empty_list(&args);
	ei_x_encode_empty_list(&args);
	call(c, entry, "unload", &args, timeout_ms, &root, &reply, ignored, sizeof(ignored));
	term_free(root);
	ei_x_free(&args);
}

static void copy_text(char *dst, size_t len, const struct term *t)
{
	const char *s = term_text(t);
	snprintf(dst, len, "%s", s ? s : "");
}

int probe_hello(struct eic *c, int timeout_ms, struct probe_info *out, char *err, size_t errlen)
{
	struct term *root;
	const struct term *r;
	int rc = call(c, entry, "hello", NULL, timeout_ms, &root, &r, err, errlen);
	if (rc == EIC_OK) {
		memset(out, 0, sizeof(*out));
		if (!r || r->type != TERM_MAP) {
			errtext_set(err, errlen, NULL,
			            "gate_probe:hello/0 on node %s answered with a %s, not a map",
			            c->node, r ? "different term" : "nothing");
			rc = EIC_ERROR;
		} else {
			int64_t ws = 0;
			copy_text(out->otp_release, sizeof(out->otp_release),
			          term_map_get(r, "otp_release"));
			copy_text(out->erts, sizeof(out->erts), term_map_get(r, "erts"));
			copy_text(out->elixir, sizeof(out->elixir), term_map_get(r, "elixir"));
			copy_text(out->mix_env, sizeof(out->mix_env), term_map_get(r, "mix_env"));
			copy_text(out->node, sizeof(out->node), term_map_get(r, "node"));
			out->mix_project = term_is_atom(term_map_get(r, "mix_project"), "true");
			term_int(term_map_get(r, "word_size"), &ws);
			out->word_size = (int)ws;
		}
	}
	term_free(root);
	return rc;
}

/* entry:fun() whose answer says nothing: the call's status only */
static int call_entry(struct eic *c, const char *fun, int timeout_ms, char *err, size_t errlen)
{
	struct term *root;
	const struct term *r;
	int rc = call(c, entry, fun, NULL, timeout_ms, &root, &r, err, errlen);
	term_free(root);
	return rc;
}

int probe_preload(struct eic *c, int timeout_ms, char *err, size_t errlen)
{
	return call_entry(c, "preload", timeout_ms, err, errlen);
}

int probe_prepare(struct eic *c, int timeout_ms, char *err, size_t errlen)
{
	return call_entry(c, "prepare", timeout_ms, err, errlen);
}

/* An optional text: NULL for the empty binary, which the probe sends for "none". */
static int opt_text(const struct term *t, char **out)
{
	const char *s = term_text(t);
	*out = NULL;
	if (!s)
		return -1;
	if (!*s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -1;
}

static int req_text(const struct term *t, char **out)
{
	const char *s = term_text(t);
	*out = s ? strdup(s) : NULL;
	return *out ? 0 : -1;
}

/* A figure: an integer in [0, MODEL_FIGURE_MAX] (model/snapshot.h). */
static int req_int(const struct term *t, int64_t *out)
{
	int64_t v;
	if (term_int(t, &v) < 0 || v < 0 || v > MODEL_FIGURE_MAX)
		return -1;
	*out = v;
	return 0;
}

/* The list under key, or NULL; an absent key is an empty list, another type an error. */
static int list_of(const struct term *t, const char *what, size_t *n, char *err, size_t errlen)
{
	*n = 0;
	if (!t)
		return 0;
	if (t->type != TERM_LIST) {
		errtext_set(err, errlen, NULL, "snapshot: %s is not a list", what);
		return -1;
	}
	*n = t->u.seq.n;
	return 0;
}

static int bad_row(const char *what, size_t i, char *err, size_t errlen)
{
	errtext_set(err, errlen, NULL, "snapshot: %s entry %zu is malformed", what, i + 1);
	return -1;
}

static int decode_procs(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (list_of(t, "procs", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->procs = calloc(n, sizeof(*out->procs))))
		return bad_row("procs (out of memory)", 0, err, errlen);
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct proc_info *p = &out->procs[i];
		out->nprocs = i + 1;
		int64_t *nums[] = {&p->memory,
		                   &p->heap_size,
		                   &p->total_heap_size,
		                   &p->message_queue_len,
		                   &p->bin_refs,
		                   &p->bin_bytes,
		                   &p->bin_refs_before_gc,
		                   &p->bin_bytes_before_gc};
		if (r->type != TERM_TUPLE || r->u.seq.n != 13 ||
		    req_text(term_tuple_at(r, 0), &p->pid) ||
		    opt_text(term_tuple_at(r, 1), &p->name) ||
		    req_text(term_tuple_at(r, 2), &p->initial_call) ||
		    req_text(term_tuple_at(r, 3), &p->current_function))
			return bad_row("procs", i, err, errlen);
		for (size_t k = 0; k < 8; k++) {
			/* the before-GC figures: undefined when not measured (bin_leak off) */
			if (k >= 6 && term_is_atom(term_tuple_at(r, 4 + k), "undefined"))
				*nums[k] = -1;
			else if (req_int(term_tuple_at(r, 4 + k), nums[k]) < 0)
				return bad_row("procs", i, err, errlen);
		}
		p->born = term_is_atom(term_tuple_at(r, 12), "true");
	}
	return 0;
}

static int decode_born(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (list_of(t, "born", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->born = calloc(n, sizeof(*out->born))))
		return bad_row("born (out of memory)", 0, err, errlen);
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct proc_group *g = &out->born[i];
		out->nborn = i + 1;
		/* a fifth element: who started the example (gate_probe_state.erl) */
		if (r->type != TERM_TUPLE || (r->u.seq.n != 4 && r->u.seq.n != 5) ||
		    req_text(term_tuple_at(r, 0), &g->key) ||
		    req_int(term_tuple_at(r, 1), &g->count) ||
		    req_int(term_tuple_at(r, 2), &g->memory) ||
		    req_text(term_tuple_at(r, 3), &g->example_pid) ||
		    (r->u.seq.n == 5 && probe_starter_decode(term_tuple_at(r, 4), &g->started) < 0))
			return bad_row("born", i, err, errlen);
	}
	return 0;
}

/* {Module, Processes, Memory, BinBytes, Tables, TableBytes}; absent: no attribution. */
static int decode_owners(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (!t)
		return 0;
	if (list_of(t, "owners", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->owners = calloc(n, sizeof(*out->owners))))
		return bad_row("owners (out of memory)", 0, err, errlen);
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct module_owner *o = &out->owners[i];
		out->nowners = i + 1;
		int64_t *nums[] = {&o->processes, &o->memory, &o->bin_bytes, &o->tables,
		                   &o->table_bytes};
		if (r->type != TERM_TUPLE || r->u.seq.n != 6 ||
		    req_text(term_tuple_at(r, 0), &o->module))
			return bad_row("owners", i, err, errlen);
		for (size_t k = 0; k < 5; k++)
			if (req_int(term_tuple_at(r, 1 + k), nums[k]) < 0)
				return bad_row("owners", i, err, errlen);
	}
	return 0;
}

static int decode_ets(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (list_of(t, "ets", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->ets = calloc(n, sizeof(*out->ets))))
		return bad_row("ets (out of memory)", 0, err, errlen);
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct ets_info *e = &out->ets[i];
		out->nets = i + 1;
		if (r->type != TERM_TUPLE || r->u.seq.n != 10 ||
		    req_text(term_tuple_at(r, 0), &e->name) ||
		    req_text(term_tuple_at(r, 1), &e->id) ||
		    req_text(term_tuple_at(r, 3), &e->type) ||
		    req_text(term_tuple_at(r, 4), &e->protection) ||
		    req_int(term_tuple_at(r, 5), &e->size) ||
		    req_int(term_tuple_at(r, 6), &e->memory) ||
		    req_text(term_tuple_at(r, 7), &e->owner_pid) ||
		    opt_text(term_tuple_at(r, 8), &e->owner_name))
			return bad_row("ets", i, err, errlen);
		e->named = term_is_atom(term_tuple_at(r, 2), "true");
		e->created = term_is_atom(term_tuple_at(r, 9), "true");
	}
	return 0;
}

static int decode_allocs(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (list_of(t, "allocs", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->allocs = calloc(n, sizeof(*out->allocs))))
		return bad_row("allocs (out of memory)", 0, err, errlen);
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct alloc_info *a = &out->allocs[i];
		out->nallocs = i + 1;
		if (r->type != TERM_TUPLE || r->u.seq.n != 3 ||
		    req_text(term_tuple_at(r, 0), &a->type) ||
		    req_int(term_tuple_at(r, 1), &a->carriers_size) ||
		    req_int(term_tuple_at(r, 2), &a->blocks_size))
			return bad_row("allocs", i, err, errlen);
		a->fragmentation = a->carriers_size > 0
		                           ? 1.0 - (double)a->blocks_size / (double)a->carriers_size
		                           : 0.0;
		if (a->fragmentation < 0)
			a->fragmentation = 0;
	}
	return 0;
}

/* What grew: rows of a fixed arity with texts then figures. texts[k] NULL-able
 * when opt[k]; figures in [0, MODEL_FIGURE_MAX]. */
static int row_fields(const struct term *r, size_t arity, char **texts[], const bool *opt,
                      size_t ntexts, int64_t *nums[], size_t nnums)
{
	if (r->type != TERM_TUPLE || r->u.seq.n != arity)
		return -1;
	for (size_t k = 0; k < ntexts; k++)
		if ((opt[k] ? opt_text : req_text)(term_tuple_at(r, k), texts[k]) < 0)
			return -1;
	for (size_t k = 0; k < nnums; k++)
		if (req_int(term_tuple_at(r, ntexts + k), nums[k]) < 0)
			return -1;
	return 0;
}

/* {Pid, Name, InitialCall, Current, Ancestor, Module, Mem0, Mem, Mq0, Mq, Bin0, Bin, Born} */
static int decode_grew_procs(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (list_of(t, "grew_procs", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->grew_procs = calloc(n, sizeof(*out->grew_procs))))
		return bad_row("grew_procs (out of memory)", 0, err, errlen);
	static const bool opt[] = {false, true, false, false, true, true};
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct proc_growth *g = &out->grew_procs[i];
		out->ngrew_procs = i + 1;
		char **texts[] = {&g->pid,      &g->name,  &g->initial_call, &g->current_function,
		                  &g->ancestor, &g->module};
		int64_t *nums[] = {&g->memory_before, &g->memory,     &g->mailbox_before,
		                   &g->mailbox,       &g->bin_before, &g->bin};
		if (row_fields(r, 13, texts, opt, 6, nums, 6) < 0)
			return bad_row("grew_procs", i, err, errlen);
		g->born = term_is_atom(term_tuple_at(r, 12), "true");
	}
	return 0;
}

/* {Name, Id, OwnerPid, OwnerName, OwnerCall, Module, Rows0, Rows, Bytes0, Bytes, Created,
 *  BinBytes} */
static int decode_grew_ets(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (list_of(t, "grew_ets", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->grew_ets = calloc(n, sizeof(*out->grew_ets))))
		return bad_row("grew_ets (out of memory)", 0, err, errlen);
	static const bool opt[] = {false, false, false, true, false, true};
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct ets_growth *g = &out->grew_ets[i];
		out->ngrew_ets = i + 1;
		char **texts[] = {&g->name,       &g->id,         &g->owner_pid,
		                  &g->owner_name, &g->owner_call, &g->module};
		int64_t *nums[] = {&g->rows_before, &g->rows, &g->bytes_before, &g->bytes};
		if (row_fields(r, 12, texts, opt, 6, nums, 4) < 0 ||
		    req_int(term_tuple_at(r, 11), &g->bin_bytes) < 0)
			return bad_row("grew_ets", i, err, errlen);
		g->created = term_is_atom(term_tuple_at(r, 10), "true");
	}
	return 0;
}

/* {Shape, Count, Bytes, Example}, or with BinBytes after it (persistent_term's groups) */
static int decode_key_groups(const struct term *t, const char *what, struct key_group **out,
                             size_t *nout, char *err, size_t errlen)
{
	size_t n;
	if (list_of(t, what, &n, err, errlen) < 0)
		return -1;
	if (n && !(*out = calloc(n, sizeof(**out))))
		return bad_row(what, 0, err, errlen);
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct key_group *g = &(*out)[i];
		*nout = i + 1;
		if (r->type != TERM_TUPLE || (r->u.seq.n != 4 && r->u.seq.n != 5) ||
		    req_text(term_tuple_at(r, 0), &g->key) ||
		    req_int(term_tuple_at(r, 1), &g->count) ||
		    req_int(term_tuple_at(r, 2), &g->bytes) ||
		    req_text(term_tuple_at(r, 3), &g->example) ||
		    (r->u.seq.n == 5 && req_int(term_tuple_at(r, 4), &g->bin_bytes)))
			return bad_row(what, i, err, errlen);
	}
	return 0;
}

/* #{disk => {N, Bytes, Lits}, test => ..., created => ..., literals_unread => N, groups =>
 * [...]}: the modules loaded during the run by origin, Lits the refc bytes of their literals
 * ({N, Bytes} from a probe that does not read them); absent or none: not reported */
static int decode_code_new(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	static const char *const keys[] = {"disk", "test", "created"};
	struct code_class *cls[] = {&out->code_disk, &out->code_test, &out->code_created};
	if (!t || t->type != TERM_MAP)
		return 0;
	const struct term *unread = term_map_get(t, "literals_unread");
	for (size_t i = 0; i < 3; i++) {
		const struct term *c = term_map_get(t, keys[i]);
		size_t n = c && c->type == TERM_TUPLE ? c->u.seq.n : 0;
		if ((n != 2 && n != 3) || (n == 3) != (unread != NULL) ||
		    req_int(term_tuple_at(c, 0), &cls[i]->count) ||
		    req_int(term_tuple_at(c, 1), &cls[i]->bytes) ||
		    (n == 3 && req_int(term_tuple_at(c, 2), &cls[i]->lit_bytes))) {
			errtext_set(
			        err, errlen, NULL,
			        "snapshot: code_new's %s is not {Count, Bytes} or {Count, Bytes, "
			        "LiteralBytes} from 0 to %lld (with literals_unread when it has "
			        "literals)",
			        keys[i], (long long)MODEL_FIGURE_MAX);
			return -1;
		}
	}
	if (unread && req_int(unread, &out->code_lits_unread)) {
		errtext_set(err, errlen, NULL,
		            "snapshot: code_new's literals_unread is not a count from 0 to %lld",
		            (long long)MODEL_FIGURE_MAX);
		return -1;
	}
	out->have_code_lits = unread != NULL;
	if (decode_key_groups(term_map_get(t, "groups"), "code_new groups", &out->code_groups,
	                      &out->ncode_groups, err, errlen) < 0)
		return -1;
	out->have_code_new = true;
	return 0;
}

/* {Name, OwnerPid, OwnerName, OwnerCall, Module, Count, OsPid} */
static int decode_ports(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (list_of(t, "ports", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->ports = calloc(n, sizeof(*out->ports))))
		return bad_row("ports (out of memory)", 0, err, errlen);
	static const bool opt[] = {false, false, true, false, true};
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct port_group *g = &out->ports[i];
		out->nports = i + 1;
		char **texts[] = {&g->name, &g->owner_pid, &g->owner_name, &g->owner_call,
		                  &g->module};
		int64_t *nums[] = {&g->count, &g->os_pid};
		if (row_fields(r, 7, texts, opt, 5, nums, 2) < 0)
			return bad_row("ports", i, err, errlen);
	}
	return 0;
}

/* {Name, OwnerPid, OwnerName, OwnerCall, Module, Count, Bytes}; absent: none */
static int decode_ets_groups(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (!t)
		return 0;
	if (list_of(t, "ets_groups_new", &n, err, errlen) < 0)
		return -1;
	if (n && !(out->ets_groups = calloc(n, sizeof(*out->ets_groups))))
		return bad_row("ets_groups_new (out of memory)", 0, err, errlen);
	static const bool opt[] = {false, false, true, false, true};
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct ets_group *g = &out->ets_groups[i];
		out->nets_groups = i + 1;
		char **texts[] = {&g->name, &g->owner_pid, &g->owner_name, &g->owner_call,
		                  &g->module};
		int64_t *nums[] = {&g->count, &g->bytes};
		if (row_fields(r, 7, texts, opt, 5, nums, 2) < 0)
			return bad_row("ets_groups_new", i, err, errlen);
	}
	return 0;
}

/* {Pid, Monitors, MonitoredBy, Links} of grown processes; absent: none */
static int decode_grew_refs(const struct term *t, struct snapshot *out, char *err, size_t errlen)
{
	size_t n;
	if (!t)
		return 0;
	if (list_of(t, "grew_refs", &n, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &t->u.seq.items[i];
		char *pid = NULL;
		int64_t m, b, l;
		if (r->type != TERM_TUPLE || r->u.seq.n != 4 ||
		    req_text(term_tuple_at(r, 0), &pid) || req_int(term_tuple_at(r, 1), &m) ||
		    req_int(term_tuple_at(r, 2), &b) || req_int(term_tuple_at(r, 3), &l)) {
			free(pid);
			return bad_row("grew_refs", i, err, errlen);
		}
		for (size_t k = 0; k < out->ngrew_procs; k++) {
			struct proc_growth *g = &out->grew_procs[k];
			if (g->pid && strcmp(g->pid, pid) == 0) {
				g->monitors = m;
				g->monitored_by = b;
				g->links = l;
			}
		}
		free(pid);
	}
	return 0;
}

/* The after-snapshot's diff against the before set; absent keys: not computed. */
static int decode_growth(const struct term *reply, struct snapshot *out, char *err, size_t errlen)
{
	const struct term *c = term_map_get(reply, "pterm_count");
	const struct term *m = term_map_get(reply, "pterm_memory");
	if (c || m) {
		if (req_int(c, &out->pterm_count) < 0 || req_int(m, &out->pterm_memory) < 0) {
			errtext_set(err, errlen, NULL,
			            "snapshot: pterm_count or pterm_memory is not an "
			            "integer from 0 to %lld",
			            (long long)MODEL_FIGURE_MAX);
			return -1;
		}
		out->have_pterm = true;
	}
	if (!term_map_get(reply, "grew_procs"))
		return 0;
	out->have_growth = true;
	const struct term *po = term_map_get(reply, "ports_opened");
	if (po && req_int(po, &out->ports_opened) < 0) {
		errtext_set(err, errlen, NULL, "snapshot: ports_opened is out of range");
		return -1;
	}
	if (decode_grew_procs(term_map_get(reply, "grew_procs"), out, err, errlen) < 0 ||
	    decode_grew_ets(term_map_get(reply, "grew_ets"), out, err, errlen) < 0 ||
	    decode_key_groups(term_map_get(reply, "pterm_new"), "pterm_new", &out->pterm_new,
	                      &out->npterm_new, err, errlen) < 0 ||
	    decode_key_groups(term_map_get(reply, "atoms_new"), "atoms_new", &out->atoms_new,
	                      &out->natoms_new, err, errlen) < 0 ||
	    decode_ports(term_map_get(reply, "ports"), out, err, errlen) < 0 ||
	    decode_ets_groups(term_map_get(reply, "ets_groups_new"), out, err, errlen) < 0 ||
	    decode_code_new(term_map_get(reply, "code_new"), out, err, errlen) < 0 ||
	    decode_grew_refs(term_map_get(reply, "grew_refs"), out, err, errlen) < 0 ||
	    probe_inside_decode(term_map_get(reply, "inside"), out, err, errlen) < 0)
		return -1;
	return 0;
}

/* The memory map: a byte count per category this gate knows. */
static int decode_memory(const struct term *reply, struct snapshot *out, char *err, size_t errlen)
{
	const struct term *mem = term_map_get(reply, "memory");
	if (!mem || mem->type != TERM_MAP) {
		errtext_set(err, errlen, NULL, "snapshot has no memory map");
		return -1;
	}
	for (size_t i = 0; i < mem->u.seq.n; i++) {
		const struct term *k = &mem->u.seq.items[2 * i];
		const struct term *v = &mem->u.seq.items[2 * i + 1];
		int cat = mem_cat_from_name(term_text(k));
		int64_t bytes;
		if (cat < 0 || k->type != TERM_ATOM)
			continue; /* a category this gate does not know: a newer OTP */
		if (req_int(v, &bytes) < 0) {
			errtext_set(err, errlen, NULL,
			            "snapshot: memory category %s is not a byte count",
			            term_text(k));
			return -1;
		}
		out->mem[cat] = bytes;
		out->have[cat] = true;
	}
	return 0;
}

/* The counts and limits, the node's name and release, persistent_term's memory. */
static int decode_settle(const struct term *reply, struct snapshot *out, char *err, size_t errlen);

static int decode_figures(const struct term *reply, struct snapshot *out, char *err, size_t errlen)
{
	struct {
		const char *key;
		int64_t *dst;
	} ints[] = {
	        {"process_count", &out->process_count},
	        {"atom_count", &out->atom_count},
	        {"ets_count", &out->ets_count},
	        {"port_count", &out->port_count},
	        {"gc_us", &out->gc_us},
	        {"taken_at_ms", &out->taken_at_ms},
	};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		if (req_int(term_map_get(reply, ints[i].key), ints[i].dst) < 0) {
			errtext_set(err, errlen, NULL,
			            "snapshot: %s missing or not an integer from 0 to %lld",
			            ints[i].key, (long long)MODEL_FIGURE_MAX);
			return -1;
		}
	}
	copy_text(out->otp_release, sizeof(out->otp_release), term_map_get(reply, "otp_release"));
	copy_text(out->node, sizeof(out->node), term_map_get(reply, "node"));
	/* optional figures: older probes or light snapshots may lack them */
	struct {
		const char *key;
		int64_t *dst;
	} opt[] = {
	        {"process_limit", &out->process_limit}, {"atom_limit", &out->atom_limit},
	        {"ets_limit", &out->ets_limit},         {"port_limit", &out->port_limit},
	        {"word_size", &out->word_size},         {"schedulers", &out->schedulers},
	        {"born_count", &out->born_count},       {"born_memory", &out->born_memory},
	};
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++) {
		const struct term *v = term_map_get(reply, opt[i].key);
		if (v && v->type == TERM_INT && req_int(v, opt[i].dst) < 0) {
			errtext_set(err, errlen, NULL, "snapshot: %s is out of range (0 to %lld)",
			            opt[i].key, (long long)MODEL_FIGURE_MAX);
			return -1;
		}
	}
	const struct term *pt = term_map_get(reply, "persistent_term_memory");
	if (pt && pt->type == TERM_INT) {
		if (req_int(pt, &out->persistent_term_memory) < 0) {
			errtext_set(err, errlen, NULL,
			            "snapshot: persistent_term_memory is out of range (0 to %lld)",
			            (long long)MODEL_FIGURE_MAX);
			return -1;
		}
		out->have_persistent_term = true;
	}
	return decode_settle(reply, out, err, errlen);
}

/* What the settling before the snapshot saw (optional: no settling, an older
 * probe, a node without instrument) */
static int decode_settle(const struct term *reply, struct snapshot *out, char *err, size_t errlen)
{
	struct {
		const char *key;
		int64_t *dst;
	} s[] = {
	        {"settle_us", &out->settle_us},
	        {"settle_port_buffers", &out->settle_port_buffers},
	        {"settle_port_buffers_left", &out->settle_port_buffers_left},
	        {"settle_binary_before", &out->settle_binary_before},
	        {"settle_binary_after", &out->settle_binary_after},
	        {"set_aside_bytes", &out->set_aside_bytes},
	        {"set_aside_sockets", &out->set_aside_sockets},
	        {"set_aside_binary_raw", &out->set_aside_binary_raw},
	        {"settle_floor", &out->settle_floor},
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		const struct term *v = term_map_get(reply, s[i].key);
		if (!v)
			continue;
		if (req_int(v, s[i].dst) < 0) {
			errtext_set(err, errlen, NULL, "snapshot: %s is out of range (0 to %lld)",
			            s[i].key, (long long)MODEL_FIGURE_MAX);
			return -1;
		}
		if (s[i].dst == &out->set_aside_bytes)
			out->have_set_aside = true;
		else if (s[i].dst != &out->set_aside_sockets &&
		         s[i].dst != &out->set_aside_binary_raw)
			out->have_settle = true;
	}
	out->set_aside_exact = term_is_atom(term_map_get(reply, "set_aside_exact"), "true");
	return 0;
}

int probe_snapshot_decode(const struct term *reply, struct snapshot *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (decode_memory(reply, out, err, errlen) < 0 ||
	    decode_figures(reply, out, err, errlen) < 0)
		return -1;
	if (decode_procs(term_map_get(reply, "procs"), out, err, errlen) < 0 ||
	    decode_born(term_map_get(reply, "born"), out, err, errlen) < 0 ||
	    decode_ets(term_map_get(reply, "ets"), out, err, errlen) < 0 ||
	    decode_owners(term_map_get(reply, "owners"), out, err, errlen) < 0 ||
	    decode_allocs(term_map_get(reply, "allocs"), out, err, errlen) < 0 ||
	    decode_growth(reply, out, err, errlen) < 0 ||
	    /* the fine level, when the probe sent one */
	    probe_fine_decode(term_map_get(reply, "fine"), &out->fine, err, errlen) < 0) {
		snapshot_clear(out);
		return -1;
	}
	return 0;
}

void probe_snapshot_opts_encode(ei_x_buff *x, const struct probe_snapshot_opts *opts)
{
	static const char *const marks[] = {"none", "before", "after"};
	ei_x_encode_map_header(x, (opts->top > 0 ? 4 : 3) + (opts->no_bin_leak ? 1 : 0) +
	                                  /* heap_watch: deep snapshots only */
	                                  (opts->heap_watch > 0 && opts->deep ? 1 : 0) +
	                                  (opts->settle_ms > 0 ? 1 : 0) + /* settle_ms */
	                                  (opts->keep_peak && opts->deep ? 1 : 0));
	ei_x_encode_atom(x, "gc");
	ei_x_encode_atom(x, opts->gc ? "true" : "false");
	ei_x_encode_atom(x, "deep");
	ei_x_encode_atom(x, opts->deep ? "true" : "false");
	ei_x_encode_atom(x, "mark");
	ei_x_encode_atom(x, marks[opts->mark]);
	if (opts->top > 0) {
		ei_x_encode_atom(x, "top");
		ei_x_encode_long(x, opts->top);
	}
	if (opts->no_bin_leak) {
		ei_x_encode_atom(x, "bin_leak");
		ei_x_encode_atom(x, "false");
	}
	/* the heap size the probe's system monitor reports from */
	if (opts->heap_watch > 0 && opts->deep) {
		ei_x_encode_atom(x, "heap_watch");
		ei_x_encode_longlong(x, opts->heap_watch);
	}
	if (opts->settle_ms > 0) { /* 0: no settling, the probe's default */
		ei_x_encode_atom(x, "settle_ms");
		ei_x_encode_long(x, opts->settle_ms);
	}
	if (opts->keep_peak && opts->deep) {
		ei_x_encode_atom(x, "keep_peak");
		ei_x_encode_atom(x, "true");
	}
}

int probe_snapshot_send(struct eic *c, const struct probe_snapshot_opts *opts, char *err,
                        size_t errlen)
{
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 1);
	probe_snapshot_opts_encode(&args, opts);
	ei_x_encode_empty_list(&args);
	int rc = eic_call_send(c, entry, "snapshot", &args, err, errlen);
	ei_x_free(&args);
	return rc;
}

int probe_snapshot(struct eic *c, const struct probe_snapshot_opts *opts, int timeout_ms,
                   struct snapshot *out, char *err, size_t errlen)
{
	int rc = probe_snapshot_send(c, opts, err, errlen);
	return rc == EIC_OK ? probe_snapshot_wait(c, timeout_ms, out, err, errlen) : rc;
}

int probe_snapshot_wait(struct eic *c, int timeout_ms, struct snapshot *out, char *err,
                        size_t errlen)
{
	struct term *root;
	const struct term *r;
	int rc = eic_call_wait(c, entry, "snapshot", timeout_ms, &root, &r, err, errlen);
	if (rc == EIC_OK) {
		char why[256];
		if (probe_snapshot_decode(r, out, why, sizeof(why)) < 0) {
			errtext_set(err, errlen, NULL, "node %s sent a malformed snapshot: %s",
			            c->node, why);
			rc = EIC_ERROR;
		}
	}
	term_free(root);
	return rc;
}
