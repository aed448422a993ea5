/* ci/store/snapshot_json.c: a snapshot as JSON, with the field names ci/store/snapshot_json.h
 * documents. */
#include "ci/store/snapshot_json.h"

#include "base/atomic.h"
#include "base/json_stdout.h"
#include "base/errtext.h"
#include "ci/store/fine_json.h" /* a snapshot's "fine" */
#include "ci/store/json_text.h"
#include "model/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Length of the well-formed UTF-8 sequence at s (no overlongs, surrogates or values past
 * U+10FFFF), 0 when none starts there. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t n = c >= 0xC2 && c <= 0xDF   ? 2
	           : c >= 0xE0 && c <= 0xEF ? 3
	           : c >= 0xF0 && c <= 0xF4 ? 4
	                                    : 0;
	for (size_t k = 1; k < n; k++)
		if ((s[k] & 0xC0) != 0x80)
			return 0;
	if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0) ||
	    (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* A name from the node (a table, a process) may be any bytes: one that is not UTF-8 is
 * written with U+FFFD in place of each bad byte rather than losing the whole snapshot. */
static json_t *str_or_null(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s);
	char *fixed = malloc(3 * len + 1), *o = fixed;
	if (!fixed)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_len(u + i);
		if (n) {
			memcpy(o, u + i, n);
			o += n;
			i += n;
		} else {
			memcpy(o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
		}
	}
	*o = '\0';
	j = json_string(fixed);
	free(fixed);
	return j;
}

/* json_object_set_new, remembering a failure instead of checking every call */
static void put(json_t *o, const char *key, json_t *v, int *bad)
{
	if (!v || json_object_set_new(o, key, v) < 0)
		*bad = 1;
}

static void append(json_t *a, json_t *v, int *bad)
{
	if (!v || json_array_append_new(a, v) < 0)
		*bad = 1;
}

/* [{key, count, bytes, example}] */
static json_t *groups_json(const struct key_group *g, size_t n, int *bad)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n && !*bad; i++) {
		json_t *j = json_object();
		put(j, "key", str_or_null(g[i].key), bad);
		put(j, "count", json_integer(g[i].count), bad);
		put(j, "bytes", json_integer(g[i].bytes), bad);
		put(j, "example", str_or_null(g[i].example), bad);
		append(a, j, bad);
	}
	return a;
}

/* The modules loaded during the run, by origin: {"disk": {"count", "bytes"[,
 * "literal_bytes"]}, "test": ..., "created": ..., ["literals_unread": N,] "created_groups":
 * [...]}; literal_bytes: the refc binaries their literals hold, where the probe read them */
static json_t *modules_json(const struct snapshot *s, int *bad)
{
	const char *names[] = {"disk", "test", "created"};
	const struct code_class *cls[] = {&s->code_disk, &s->code_test, &s->code_created};
	json_t *o = json_object();
	if (!o)
		*bad = 1;
	for (size_t i = 0; i < 3 && !*bad; i++) {
		json_t *c = json_object();
		put(c, "count", json_integer(cls[i]->count), bad);
		put(c, "bytes", json_integer(cls[i]->bytes), bad);
		if (s->have_code_lits)
			put(c, "literal_bytes", json_integer(cls[i]->lit_bytes), bad);
		put(o, names[i], c, bad);
	}
	if (s->have_code_lits)
		put(o, "literals_unread", json_integer(s->code_lits_unread), bad);
	put(o, "created_groups", groups_json(s->code_groups, s->ncode_groups, bad), bad);
	return o;
}

static json_t *starter_json(const struct starter *st, int *bad)
{
	json_t *j = json_object();
	if (!j)
		*bad = 1;
	put(j, "test", str_or_null(st->test), bad);
	put(j, "file", str_or_null(st->file), bad);
	put(j, "line", json_integer(st->line), bad);
	put(j, "module", str_or_null(st->module), bad);
	put(j, "code", str_or_null(st->code), bad);
	put(j, "by", str_or_null(st->by), bad);
	return j;
}

static json_t *parts_json(const struct inside_part *parts, size_t n, int *bad)
{
	static const char *const kinds[] = {"state", "data", "dict", "mailbox", "handlers"};
	json_t *a = json_array();
	if (!a)
		*bad = 1;
	for (size_t i = 0; i < n && !*bad; i++) {
		const struct inside_part *p = &parts[i];
		json_t *j = json_object();
		put(j, "kind", json_string(p->kind < INSIDE_KIND_COUNT ? kinds[p->kind] : "?"),
		    bad);
		put(j, "where", str_or_null(p->where), bad);
		put(j, "type", str_or_null(p->type), bad);
		put(j, "unit", str_or_null(p->unit), bad);
		put(j, "count", json_integer(p->count), bad);
		/* null: not sized (a state too large to walk) */
		put(j, "bytes", p->bytes < 0 ? json_null() : json_integer(p->bytes), bad);
		append(a, j, bad);
	}
	return a;
}

/* Inside the processes that grew: each part now and before, and who started it. */
static json_t *inside_json(const struct snapshot *s, int *bad)
{
	static const char *const befores[] = {"not_read", "born", "read"};
	json_t *a = json_array();
	if (!a)
		*bad = 1;
	for (size_t i = 0; i < s->ninside && !*bad; i++) {
		const struct proc_inside *in = &s->inside[i];
		json_t *j = json_object();
		put(j, "pid", str_or_null(in->pid), bad);
		put(j, "kind", str_or_null(in->kind), bad);
		put(j, "inspected", json_boolean(in->inspected), bad);
		put(j, "why_not", str_or_null(in->why), bad);
		put(j, "before", json_string(befores[in->before]), bad);
		put(j, "mailbox_before", json_integer(in->mailbox_before), bad);
		put(j, "parts", parts_json(in->parts, in->nparts, bad), bad);
		put(j, "parts_before",
		    in->before == INSIDE_BEFORE_READ
		            ? parts_json(in->parts_before, in->nparts_before, bad)
		            : json_null(),
		    bad);
		put(j, "started", starter_json(&in->started, bad), bad);
		append(a, j, bad);
	}
	return a;
}

/* What grew since the before-snapshot (after-snapshots of gate run only). */
static json_t *growth_json(const struct snapshot *s, int *bad)
{
	json_t *o = json_object(), *procs = json_array(), *ets = json_array(),
	       *ports = json_array();
	if (!o || !procs || !ets || !ports)
		*bad = 1;
	for (size_t i = 0; i < s->ngrew_procs && !*bad; i++) {
		const struct proc_growth *p = &s->grew_procs[i];
		json_t *j = json_object();
		put(j, "pid", str_or_null(p->pid), bad);
		put(j, "name", str_or_null(p->name), bad);
		put(j, "initial_call", str_or_null(p->initial_call), bad);
		put(j, "current_function", str_or_null(p->current_function), bad);
		put(j, "ancestor", str_or_null(p->ancestor), bad);
		put(j, "module", str_or_null(p->module), bad);
		put(j, "memory_before", json_integer(p->memory_before), bad);
		put(j, "memory", json_integer(p->memory), bad);
		put(j, "mailbox_before", json_integer(p->mailbox_before), bad);
		put(j, "mailbox", json_integer(p->mailbox), bad);
		put(j, "bin_bytes_before", json_integer(p->bin_before), bad);
		put(j, "bin_bytes", json_integer(p->bin), bad);
		put(j, "born", json_boolean(p->born), bad);
		append(procs, j, bad);
	}
	for (size_t i = 0; i < s->ngrew_ets && !*bad; i++) {
		const struct ets_growth *e = &s->grew_ets[i];
		json_t *j = json_object();
		put(j, "name", str_or_null(e->name), bad);
		put(j, "id", str_or_null(e->id), bad);
		put(j, "owner_pid", str_or_null(e->owner_pid), bad);
		put(j, "owner_name", str_or_null(e->owner_name), bad);
		put(j, "owner_call", str_or_null(e->owner_call), bad);
		put(j, "module", str_or_null(e->module), bad);
		put(j, "size_before", json_integer(e->rows_before), bad);
		put(j, "size", json_integer(e->rows), bad);
		put(j, "memory_before", json_integer(e->bytes_before), bad);
		put(j, "memory", json_integer(e->bytes), bad);
		put(j, "created", json_boolean(e->created), bad);
		put(j, "bin_bytes", json_integer(e->bin_bytes), bad);
		append(ets, j, bad);
	}
	for (size_t i = 0; i < s->nports && !*bad; i++) {
		const struct port_group *g = &s->ports[i];
		json_t *j = json_object();
		put(j, "name", str_or_null(g->name), bad);
		put(j, "owner_pid", str_or_null(g->owner_pid), bad);
		put(j, "owner_name", str_or_null(g->owner_name), bad);
		put(j, "owner_call", str_or_null(g->owner_call), bad);
		put(j, "module", str_or_null(g->module), bad);
		put(j, "count", json_integer(g->count), bad);
		put(j, "os_pid", json_integer(g->os_pid), bad);
		append(ports, j, bad);
	}
	put(o, "processes", procs, bad);
	put(o, "ets", ets, bad);
	put(o, "ports", ports, bad);
	put(o, "ports_opened", json_integer(s->ports_opened), bad);
	put(o, "inside", inside_json(s, bad), bad);
	put(o, "persistent_term_new", groups_json(s->pterm_new, s->npterm_new, bad), bad);
	put(o, "atoms_new", groups_json(s->atoms_new, s->natoms_new, bad), bad);
	if (s->have_code_new)
		put(o, "modules_new", modules_json(s, bad), bad);
	return o;
}

static json_t *proc_json(const struct proc_info *p, int *bad)
{
	json_t *j = json_object();
	put(j, "pid", str_or_null(p->pid), bad);
	put(j, "name", str_or_null(p->name), bad);
	put(j, "initial_call", str_or_null(p->initial_call), bad);
	put(j, "current_function", str_or_null(p->current_function), bad);
	put(j, "memory", json_integer(p->memory), bad);
	put(j, "heap_size", json_integer(p->heap_size), bad);
	put(j, "total_heap_size", json_integer(p->total_heap_size), bad);
	put(j, "message_queue_len", json_integer(p->message_queue_len), bad);
	put(j, "bin_refs", json_integer(p->bin_refs), bad);
	put(j, "bin_bytes", json_integer(p->bin_bytes), bad);
	/* -1: not measured (gate snapshot without --bin-leak) */
	put(j, "bin_refs_before_gc",
	    p->bin_refs_before_gc < 0 ? json_null() : json_integer(p->bin_refs_before_gc), bad);
	put(j, "bin_bytes_before_gc",
	    p->bin_bytes_before_gc < 0 ? json_null() : json_integer(p->bin_bytes_before_gc), bad);
	put(j, "born", json_boolean(p->born), bad);
	return j;
}

static json_t *born_group_json(const struct proc_group *g, int *bad)
{
	json_t *j = json_object();
	put(j, "key", str_or_null(g->key), bad);
	put(j, "count", json_integer(g->count), bad);
	put(j, "memory", json_integer(g->memory), bad);
	put(j, "example_pid", str_or_null(g->example_pid), bad);
	put(j, "started", starter_json(&g->started, bad), bad);
	return j;
}

static json_t *ets_json(const struct ets_info *e, int *bad)
{
	json_t *j = json_object();
	put(j, "name", str_or_null(e->name), bad);
	put(j, "id", str_or_null(e->id), bad);
	put(j, "named", json_boolean(e->named), bad);
	put(j, "type", str_or_null(e->type), bad);
	put(j, "protection", str_or_null(e->protection), bad);
	put(j, "size", json_integer(e->size), bad);
	put(j, "memory", json_integer(e->memory), bad);
	put(j, "owner_pid", str_or_null(e->owner_pid), bad);
	put(j, "owner_name", str_or_null(e->owner_name), bad);
	put(j, "created", json_boolean(e->created), bad);
	return j;
}

static json_t *alloc_json(const struct alloc_info *a, int *bad)
{
	json_t *j = json_object();
	put(j, "type", str_or_null(a->type), bad);
	put(j, "carriers_size", json_integer(a->carriers_size), bad);
	put(j, "blocks_size", json_integer(a->blocks_size), bad);
	put(j, "fragmentation", json_real(a->fragmentation), bad);
	return j;
}

/* "memory": the categories the node reported */
static json_t *memory_json(const struct snapshot *s, int *bad)
{
	json_t *mem = json_object();
	for (int i = 0; i < MEM_CAT_COUNT && !*bad; i++)
		if (s->have[i])
			put(mem, mem_cat_name((enum mem_cat)i), json_integer(s->mem[i]), bad);
	return mem;
}

/* "system": counts and limits */
static json_t *system_json(const struct snapshot *s, int *bad)
{
	json_t *sys = json_object();
	struct {
		const char *key;
		int64_t v;
	} figures[] = {
	        {"process_count", s->process_count}, {"process_limit", s->process_limit},
	        {"atom_count", s->atom_count},       {"atom_limit", s->atom_limit},
	        {"ets_count", s->ets_count},         {"ets_limit", s->ets_limit},
	        {"port_count", s->port_count},       {"port_limit", s->port_limit},
	        {"word_size", s->word_size},         {"schedulers", s->schedulers},
	};
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]) && !*bad; i++)
		put(sys, figures[i].key, json_integer(figures[i].v), bad);
	if (s->have_persistent_term && !*bad)
		put(sys, "persistent_term_memory", json_integer(s->persistent_term_memory), bad);
	return sys;
}

/* The lists of the snapshot: processes, born groups, ETS tables, allocators. */
static json_t *procs_json(const struct snapshot *s, int *bad)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->nprocs && !*bad; i++)
		append(a, proc_json(&s->procs[i], bad), bad);
	return a;
}

static json_t *born_json(const struct snapshot *s, int *bad)
{
	json_t *born = json_object(), *groups = json_array();
	for (size_t i = 0; groups && i < s->nborn && !*bad; i++)
		append(groups, born_group_json(&s->born[i], bad), bad);
	put(born, "count", json_integer(s->born_count), bad);
	put(born, "memory", json_integer(s->born_memory), bad);
	put(born, "groups", groups, bad);
	return born;
}

static json_t *tables_json(const struct snapshot *s, int *bad)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->nets && !*bad; i++)
		append(a, ets_json(&s->ets[i], bad), bad);
	return a;
}

static json_t *allocs_json(const struct snapshot *s, int *bad)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->nallocs && !*bad; i++)
		append(a, alloc_json(&s->allocs[i], bad), bad);
	return a;
}

json_t *snapshot_json(const struct snapshot *s)
{
	int bad = 0;
	json_t *o = json_object();
	put(o, "format", json_string("gate.snapshot/1"), &bad);
	put(o, "node", str_or_null(s->node), &bad);
	put(o, "otp_release", str_or_null(s->otp_release), &bad);
	put(o, "taken_at_ms", json_integer(s->taken_at_ms), &bad);
	put(o, "gc_us", json_integer(s->gc_us), &bad);
	put(o, "memory", memory_json(s, &bad), &bad);
	if (s->have_set_aside) { /* binary, system and total are judged without these */
		json_t *sa = json_object();
		put(sa, "bytes", json_integer(s->set_aside_bytes), &bad);
		put(sa, "sockets", json_integer(s->set_aside_sockets), &bad);
		put(sa, "exact", json_boolean(s->set_aside_exact), &bad);
		put(sa, "binary_measured", json_integer(s->set_aside_binary_raw), &bad);
		put(sa, "why",
		    json_string("the input buffers of open sockets, released at their next read"),
		    &bad);
		put(o, "set_aside", sa, &bad);
	}
	if (s->have_settle) { /* the wait for port-driver binaries no socket explains */
		json_t *w = json_object();
		put(w, "waited_us", json_integer(s->settle_us), &bad);
		put(w, "unexplained_first", json_integer(s->settle_port_buffers), &bad);
		put(w, "unexplained_left", json_integer(s->settle_port_buffers_left), &bad);
		put(o, "settle_wait", w, &bad);
	}
	put(o, "system", system_json(s, &bad), &bad);
	put(o, "processes", procs_json(s, &bad), &bad);
	put(o, "born", born_json(s, &bad), &bad);
	put(o, "ets", tables_json(s, &bad), &bad);
	put(o, "allocators", allocs_json(s, &bad), &bad);
	if (s->have_pterm) {
		json_t *pt = json_object();
		put(pt, "count", json_integer(s->pterm_count), &bad);
		put(pt, "memory", json_integer(s->pterm_memory), &bad);
		put(o, "persistent_term", pt, &bad);
	}
	if (s->have_growth)
		put(o, "what_grew", growth_json(s, &bad), &bad);
	if (s->fine.have) /* RSS, carriers, origins (ci/store/fine_json.h) */
		put(o, "fine", fine_json_snapshot(s), &bad);
	if (bad || !o) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int snapshot_json_write(const char *path, const struct snapshot *s, char *err, size_t errlen)
{
	json_t *j = snapshot_json(s);
	size_t len = 0;
	char *text = j ? json_text(j, JSON_INDENT(2) | JSON_SORT_KEYS, &len) : NULL;
	json_decref(j);
	if (!text) {
		errtext_set(err, errlen, path, "out of memory");
		return -1;
	}
	int rc = 0;
	if (strcmp(path, "-") == 0)
		rc = json_stdout_write(text, len, err, errlen);
	else
		rc = atomic_file_replace_report(path, text, len, err, errlen);
	free(text);
	return rc;
}
