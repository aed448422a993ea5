/* rules/drilldown.c: what grew, named first in every failing category. */
#include "rules/drilldown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/finding.h"
#include "rules/culprits.h"
#include "rules/inside.h"

#define BIT(c) (1u << (c))
/* the categories each kind's bytes count in */
#define CATS_ETS (BIT(MEM_ETS) | BIT(MEM_SYSTEM) | BIT(MEM_TOTAL))
#define CATS_PROC (BIT(MEM_PROCESSES) | BIT(MEM_PROCESSES_USED) | BIT(MEM_TOTAL))
#define CATS_BINARY (BIT(MEM_BINARY) | BIT(MEM_SYSTEM) | BIT(MEM_TOTAL))
#define CATS_PTERM (BIT(MEM_SYSTEM) | BIT(MEM_TOTAL))
#define CATS_ATOMS (BIT(MEM_ATOM) | BIT(MEM_ATOM_USED) | BIT(MEM_SYSTEM) | BIT(MEM_TOTAL))
/* a failing category names the structures that grew by at least this part of its growth */
#define DRILL_SHARE 10
/* and at most this many of them */
#define DRILL_IN_MESSAGE 2

const char *drill_kind_name(enum drill_kind kind)
{
	switch (kind) {
	case DRILL_ETS: return "ETS table";
	case DRILL_PROCESS: return "process";
	case DRILL_BINARY: return "refc binaries";
	case DRILL_BORN: return "processes left alive";
	case DRILL_PTERM: return "persistent_term";
	case DRILL_ATOMS: return "atoms";
	case DRILL_KIND_COUNT: break;
	}
	return "?";
}

static void signed_count(char *buf, size_t len, int64_t n)
{
	char c[32];
	rules_count_format(c, sizeof(c), n);
	snprintf(buf, len, "%s%s", n >= 0 ? "+" : "", c);
}

static void signed_bytes(char *buf, size_t len, int64_t n)
{
	char b[32];
	model_bytes_format(b, sizeof(b), n);
	snprintf(buf, len, "%s%s", n >= 0 ? "+" : "", b);
}

/* "Corpus.Store (<0.234.0>, Agent.Server:init/1, under Corpus.Supervisor)"; a spawned fun
 * (erlang:apply/2 says nothing) by where it is now. */
static void proc_label(char *buf, size_t len, const struct proc_growth *p)
{
	char call[300];
	const char *ic = p->initial_call ? p->initial_call : "?";
	if (strcmp(ic, "erlang:apply/2") == 0 && p->current_function)
		snprintf(call, sizeof(call), "spawned fun in %s", p->current_function);
	else
		snprintf(call, sizeof(call), "%s", ic);
	const char *pid = p->pid ? p->pid : "?";
	char under[300] = "";
	if (p->ancestor)
		snprintf(under, sizeof(under), ", under %s", p->ancestor);
	if (p->name)
		snprintf(buf, len, "%s (%s, %s%s)", p->name, pid, call, under);
	else
		snprintf(buf, len, "%s (%s%s)", pid, call, under);
}

static void owner_label(char *buf, size_t len, const struct ets_growth *e)
{
	if (e->owner_name)
		snprintf(buf, len, "%s", e->owner_name);
	else
		snprintf(buf, len, "%s %s", e->owner_pid ? e->owner_pid : "?",
		         e->owner_call ? e->owner_call : "?");
}

static size_t add(struct drill_item *out, size_t n, size_t max, enum drill_kind kind, int64_t bytes,
                  unsigned cats)
{
	if (n >= max)
		return n;
	memset(&out[n], 0, sizeof(out[n]));
	out[n].kind = kind;
	out[n].bytes = bytes;
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (cats & BIT(c))
			out[n].by_cat[c] = bytes;
	return n + 1;
}

static int by_bytes_desc(const void *x, const void *y)
{
	const struct drill_item *a = x, *b = y;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return (int)a->kind - (int)b->kind;
}

int64_t drilldown_ets_bin(const struct ets_growth *e)
{
	int64_t dr = e->rows - e->rows_before;
	if (e->created)
		return e->bin_bytes;
	return dr > 0 && e->rows > 0
	               ? (int64_t)((double)e->bin_bytes * (double)dr / (double)e->rows)
	               : 0;
}

/* "proc:<0.1.0>" and "process Foo.Store" for item k: a process as findings name it */
static void proc_key(struct drill_item *it, const struct proc_growth *p)
{
	snprintf(it->key, sizeof(it->key), "proc:%s", p->pid ? p->pid : "?");
	snprintf(it->label, sizeof(it->label), "process %s",
	         p->name  ? p->name
	         : p->pid ? p->pid
	                  : "?");
}

static size_t list_ets(struct drill_item *out, size_t n, size_t max, const struct snapshot *a)
{
	char owner[400], rows[40], bytes[40];
	for (size_t i = 0; i < a->ngrew_ets; i++) {
		const struct ets_growth *e = &a->grew_ets[i];
		int64_t db = e->bytes - e->bytes_before, dr = e->rows - e->rows_before;
		if (db <= 0 && dr <= 0)
			continue;
		size_t k = n;
		n = add(out, n, max, DRILL_ETS, db > 0 ? db : 0, CATS_ETS);
		if (n == k)
			break;
		owner_label(owner, sizeof(owner), e);
		signed_count(rows, sizeof(rows), dr);
		signed_bytes(bytes, sizeof(bytes), db);
		/* the refc binaries its rows hold count under binary, not ets */
		int64_t bin = drilldown_ets_bin(e);
		char held[80] = "";
		if (bin > 0) {
			char hb[32];
			model_bytes_format(hb, sizeof(hb), bin);
			snprintf(held, sizeof(held), ", holding ~%s of refc binaries", hb);
			out[k].by_cat[MEM_BINARY] = bin;
			out[k].by_cat[MEM_SYSTEM] += bin;
			out[k].by_cat[MEM_TOTAL] += bin;
			out[k].bytes += bin;
		}
		snprintf(out[k].key, sizeof(out[k].key), "ets:%s", e->name ? e->name : "?");
		snprintf(out[k].label, sizeof(out[k].label), "ETS table %s",
		         e->name ? e->name : "?");
		snprintf(out[k].text, sizeof(out[k].text),
		         "ETS table %s (owner %s%s) %s row%s, %s%s", e->name ? e->name : "?", owner,
		         e->created ? ", created during the run" : "", rows,
		         dr == 1 || dr == -1 ? "" : "s", bytes, held);
	}
	return n;
}

/* The count of monitors or links the drill-down names a process by: thousands. The probe
 * reports counts from fewer on (the repeat rule pairs the two ends of monitors that grow a
 * little in every run), so every count is read through many(). */
#define DRILL_MANY_REFS 1000

static int64_t many(int64_t v)
{
	return v >= DRILL_MANY_REFS ? v : 0;
}

/* The monitors or links p holds (the larger), counted from the thousands; else 0. */
static int64_t refs_held(const struct proc_growth *p)
{
	return many(p->monitors) > many(p->links) ? many(p->monitors) : many(p->links);
}

/* the process holding the most monitors or links, in the thousands, or NULL. */
static const struct proc_growth *refs_holder(const struct snapshot *a)
{
	const struct proc_growth *h = NULL;
	for (size_t i = 0; i < a->ngrew_procs; i++) {
		const struct proc_growth *p = &a->grew_procs[i];
		if (refs_held(p) > 0 && (!h || refs_held(p) > refs_held(h)))
			h = p;
	}
	return h;
}

/* The other end of h's monitors or links: a process monitored or linked in the thousands. */
static bool other_end(const struct proc_growth *p, const struct proc_growth *h)
{
	return h && p != h && (many(p->monitored_by) > 0 || many(p->links) > 0);
}

/* "holds 30 000 monitors (+30 000), " for a process with many; "" else. */
static void refs_text(char *buf, size_t len, const struct proc_growth *p)
{
	char m[32], l[32];
	buf[0] = '\0';
	rules_count_format(m, sizeof(m), p->monitors);
	rules_count_format(l, sizeof(l), p->links);
	if (many(p->monitors) > 0)
		snprintf(buf, len, "holds %s monitors%s%s%s, ", m, p->born ? " (+" : "",
		         p->born ? m : "", p->born ? ")" : "");
	else if (many(p->links) > 0)
		snprintf(buf, len, "holds %s links%s%s%s, ", l, p->born ? " (+" : "",
		         p->born ? l : "", p->born ? ")" : "");
}

/* After a process's text (o its length): who started it and what grew inside it, from the
 * probe's look inside (rules/inside.h), when it looked. */
static void inside_add(struct drill_item *it, int o, const struct proc_inside *in, int64_t dm)
{
	char started[600], what[1024];
	size_t len = sizeof(it->text);
	if (!in || o < 0 || (size_t)o >= len)
		return;
	/* the label names its initial call already: the starter without its code */
	struct starter s = in->started;
	s.code = NULL;
	inside_starter_text(started, sizeof(started), &s);
	inside_describe(what, sizeof(what), in, dm > 0 ? dm : 0);
	if (*started) {
		it->started_at = (size_t)o + 2;
		it->started_len = strlen(started);
	}
	snprintf(it->text + o, len - (size_t)o, "%s%s%s%s", *started ? ", " : "", started,
	         *what ? ": " : "", what);
	it->inside = *what != '\0';
	if (it->started_at + it->started_len > strlen(it->text))
		it->started_at = it->started_len = 0;
}

/* The process item of p; with h the holder of many monitors or links, the other ends' growth
 * (the same monitors, counted on both sides) is h's, said once. */
static void proc_item(struct drill_item *it, const struct proc_growth *p, const char *label,
                      int64_t dm, int64_t dq, const struct snapshot *a, const struct proc_growth *h)
{
	char b[40], q[40], refs[96], ends[300] = "";
	proc_key(it, p);
	if (p == h)
		for (size_t i = 0; i < a->ngrew_procs; i++) {
			const struct proc_growth *o = &a->grew_procs[i];
			int64_t od = o->memory - o->memory_before;
			char ob[32], oc[32];
			if (!other_end(o, h) || od <= 0)
				continue;
			model_bytes_format(ob, sizeof(ob), od);
			rules_count_format(oc, sizeof(oc),
			                   many(o->monitored_by) ? o->monitored_by : o->links);
			snprintf(ends, sizeof(ends), " (the other end: %s, %s %s times, +%s)",
			         o->name  ? o->name
			         : o->pid ? o->pid
			                  : "?",
			         many(o->monitored_by) ? "monitored" : "linked", oc, ob);
			for (int c = 0; c < MEM_CAT_COUNT; c++)
				if (it->by_cat[c])
					it->by_cat[c] += od;
			it->bytes += od;
			break;
		}
	refs_text(refs, sizeof(refs), p);
	signed_bytes(b, sizeof(b), dm);
	signed_count(q, sizeof(q), dq);
	int o;
	if (dq > 0)
		o = snprintf(it->text, sizeof(it->text),
		             "process %s %smailbox %s messages, memory %s%s%s", label, refs, q, b,
		             p->born ? ", born during the run" : "", ends);
	else
		o = snprintf(it->text, sizeof(it->text), "process %s %smemory %s%s%s", label, refs,
		             b, p->born ? ", born during the run" : "", ends);
	inside_add(it, o, inside_find(a, p->pid), dm);
}

static size_t list_procs(struct drill_item *out, size_t n, size_t max, const struct snapshot *a)
{
	char label[700], b[40];
	const struct proc_growth *h = refs_holder(a);
	for (size_t i = 0; i < a->ngrew_procs; i++) {
		const struct proc_growth *p = &a->grew_procs[i];
		int64_t dm = p->memory - p->memory_before, dq = p->mailbox - p->mailbox_before;
		int64_t dbin = p->bin - p->bin_before;
		proc_label(label, sizeof(label), p);
		if ((dm > 0 || dq > 0) && !other_end(p, h)) {
			size_t k = n;
			n = add(out, n, max, DRILL_PROCESS, dm > 0 ? dm : 0, CATS_PROC);
			if (n == k)
				break;
			proc_item(&out[k], p, label, dm, dq, a, h);
		}
		if (dbin > 0) {
			size_t k = n;
			n = add(out, n, max, DRILL_BINARY, dbin, CATS_BINARY);
			if (n == k)
				break;
			proc_key(&out[k], p);
			signed_bytes(b, sizeof(b), dbin);
			int o = snprintf(out[k].text, sizeof(out[k].text),
			                 "process %s holds %s of refc binaries%s", label, b,
			                 p->born ? ", born during the run" : "");
			/* no growth of its heap to weigh: what grew inside holds the binaries */
			inside_add(&out[k], o, inside_find(a, p->pid), 0);
		}
	}
	return n;
}

static size_t list_born(struct drill_item *out, size_t n, size_t max, const struct snapshot *a)
{
	char c[32], b[32], gc[32];
	if (a->born_count <= 0 || !a->nborn)
		return n;
	/* one born process holding most of their memory is named on its own (list_procs): the
	 * group would name the same bytes a second time, as a second cause */
	for (size_t i = 0; i < a->ngrew_procs; i++)
		if (a->grew_procs[i].born && 2 * a->grew_procs[i].memory >= a->born_memory)
			return n;
	size_t k = n;
	n = add(out, n, max, DRILL_BORN, a->born_memory, CATS_PROC);
	if (n == k)
		return n;
	const struct proc_group *g = &a->born[0];
	rules_count_format(c, sizeof(c), a->born_count);
	rules_count_format(gc, sizeof(gc), g->count);
	model_bytes_format(b, sizeof(b), a->born_memory);
	snprintf(out[k].key, sizeof(out[k].key), "born");
	snprintf(out[k].label, sizeof(out[k].label), "%s process%s left alive (%s x %s)", c,
	         a->born_count == 1 ? "" : "es", g->key ? rules_display(g->key) : "?", gc);
	/* who started them before where they wait */
	char started[600];
	inside_starter_text(started, sizeof(started), &g->started);
	int o = snprintf(out[k].text, sizeof(out[k].text),
	                 "%s process%s born during the run still alive (%s): ", c,
	                 a->born_count == 1 ? "" : "es", b);
	/* a key naming the code that spawned them says where they wait itself */
	bool spawner = g->key && strncmp(g->key, "spawned by ", 11) == 0;
	snprintf(out[k].text + o, sizeof(out[k].text) - (size_t)o, "%s%s%s x %s (e.g. %s)", started,
	         !*started ? ""
	         : spawner ? ", "
	                   : ", waiting in ",
	         g->key ? rules_display(g->key) : "?", gc, g->example_pid ? g->example_pid : "?");
	/* the starter up to its code ("with ..."), which the process's own text leaves out */
	const char *with = strstr(started, ", with ");
	size_t sl = with ? (size_t)(with - started) : strlen(started);
	if (*started && (size_t)o + sl < strlen(out[k].text)) {
		out[k].started_at = (size_t)o;
		out[k].started_len = sl;
	}
	return n;
}

/* "{Foo.Cache, _} x 4 000 (e.g. {Foo.Cache, 17})" for the largest group, and each other
 * group of at least a tenth of total (at most three in all: two shapes that leak are two
 * leaks to look for), into buf. */
static void group_text(char *buf, size_t len, const struct key_group *g, size_t ngroups,
                       int64_t total)
{
	char c[32];
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ngroups && i < 3 && o < len; i++) {
		if (i && 10 * g[i].count < total)
			break;
		rules_count_format(c, sizeof(c), g[i].count);
		o += (size_t)snprintf(buf + o, len - o, "%s%s x %s (e.g. %s)", i ? ", " : ": ",
		                      g[i].key ? g[i].key : "?", c,
		                      g[i].example ? g[i].example : "?");
	}
}

static size_t list_pterm(struct drill_item *out, size_t n, size_t max, const struct snapshot *b,
                         const struct snapshot *a)
{
	char c[40], by[40], grp[600];
	if (!b || !b->have_pterm || !a->have_pterm)
		return n;
	int64_t dc = a->pterm_count - b->pterm_count, dm = a->pterm_memory - b->pterm_memory;
	if (dc <= 0 && dm <= 0)
		return n;
	size_t k = n;
	n = add(out, n, max, DRILL_PTERM, dm > 0 ? dm : 0, CATS_PTERM);
	if (n == k)
		return n;
	signed_count(c, sizeof(c), dc);
	signed_bytes(by, sizeof(by), dm);
	group_text(grp, sizeof(grp), a->pterm_new, a->npterm_new, dc);
	snprintf(out[k].text, sizeof(out[k].text), "persistent_term %s entries, %s%s", c, by, grp);
	snprintf(out[k].key, sizeof(out[k].key), "persistent_term");
	snprintf(out[k].label, sizeof(out[k].label), "persistent_term %s%s",
	         a->npterm_new && a->pterm_new[0].key ? a->pterm_new[0].key : "entries",
	         a->npterm_new ? " entries" : "");
	return n;
}

static size_t list_atoms(struct drill_item *out, size_t n, size_t max, const struct snapshot *b,
                         const struct snapshot *a)
{
	char c[40], grp[600];
	if (!b || a->atom_count <= b->atom_count)
		return n;
	int64_t bytes = b->have[MEM_ATOM_USED] && a->have[MEM_ATOM_USED]
	                        ? a->mem[MEM_ATOM_USED] - b->mem[MEM_ATOM_USED]
	                        : 0;
	size_t k = n;
	n = add(out, n, max, DRILL_ATOMS, bytes > 0 ? bytes : 0, CATS_ATOMS);
	if (n == k)
		return n;
	signed_count(c, sizeof(c), a->atom_count - b->atom_count);
	group_text(grp, sizeof(grp), a->atoms_new, a->natoms_new, a->atom_count - b->atom_count);
	snprintf(out[k].text, sizeof(out[k].text), "atoms %s%s", c, grp);
	snprintf(out[k].key, sizeof(out[k].key), "atoms");
	snprintf(out[k].label, sizeof(out[k].label), "%s new atoms", c);
	return n;
}

size_t drilldown_list(struct drill_item *out, size_t max, const struct snapshot *before,
                      const struct snapshot *after)
{
	size_t n = 0;
	if (!after || !out || !max)
		return 0;
	n = list_ets(out, n, max, after);
	n = list_procs(out, n, max, after);
	n = list_born(out, n, max, after);
	n = list_pterm(out, n, max, before, after);
	n = list_atoms(out, n, max, before, after);
	qsort(out, n, sizeof(*out), by_bytes_desc);
	return n;
}

/* What a finding judges: a category (*cat), or one kind of structure (*kind). */
static bool finding_target(const struct finding *f, int *cat, int *kind)
{
	const char *rule = f->rule ? f->rule : "";
	const char *subject = f->subject ? f->subject : "";
	int c = mem_cat_from_name(subject);

	*cat = -1;
	*kind = -1;
	/* growth, baseline, trend: whatever rule judges a category as a whole */
	if (c >= 0) {
		*cat = c;
		return true;
	}
	/* (the process rule's born finding names its groups and who started them itself) */
	if (strcmp(rule, "ets") == 0 && strcmp(subject, "total") == 0)
		*kind = DRILL_ETS;
	else if (strcmp(rule, "atom") == 0)
		*kind = DRILL_ATOMS;
	return *kind >= 0;
}

/* The lead for f: the structures it names, "A, B", or "" when none. */
static void finding_lead(char *buf, size_t len, const struct finding *f,
                         const struct drill_item *items, size_t n, bool *own_inside)
{
	int cat, kind;
	size_t o = 0, named = 0;

	buf[0] = '\0';
	*own_inside = false;
	if (!finding_target(f, &cat, &kind))
		return;
	int64_t judged = f->delta > 0 ? f->delta : finding_raw_delta(f);
	int64_t least = judged > 0 ? judged / DRILL_SHARE : 1;
	if (least < 1)
		least = 1;
	const struct drill_item *said[DRILL_IN_MESSAGE];
	for (size_t i = 0; i < n && named < DRILL_IN_MESSAGE && o < len; i++) {
		const struct drill_item *it = &items[i];
		if (kind >= 0) {
			/* a rule about one kind: its largest structure, whatever its bytes */
			if ((int)it->kind != kind)
				continue;
		} else if (it->by_cat[cat] < least) {
			continue;
		}
		const struct drill_item *alike = NULL;
		for (size_t j = 0; j < named && !alike; j++)
			if (said[j]->started_len && said[j]->started_len == it->started_len &&
			    memcmp(said[j]->text + said[j]->started_at, it->text + it->started_at,
			           it->started_len) == 0)
				alike = said[j];
		if (alike)
			o += (size_t)snprintf(buf + o, len - o, "%s%.*sstarted by the same test%s",
			                      named ? ", " : "", (int)it->started_at, it->text,
			                      it->text + it->started_at + it->started_len);
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%s", named ? ", " : "",
			                      it->text);
		said[named++] = it;
		if (it->inside && f->structure_key && strcmp(it->key, f->structure_key) == 0)
			*own_inside = true;
		if (kind >= 0)
			break;
	}
	if (o >= len && len > 4)
		strcpy(buf + len - 4, "...");
}

/* A failing finding that names one process (structure "proc:PID": the mailbox and memory
 * limits of the process rule, the structure rule) ends with what grew inside it, when the
 * probe looked and the lead did not say it; once (a second call adds nothing). Returns 0, or
 * -1 on allocation failure. */
static int inside_annotate(struct finding *f, const struct snapshot *after)
{
	char what[1024];
	const char *key = f->structure_key;
	if (!key || strncmp(key, "proc:", 5) != 0 || !f->message || f->inside_named ||
	    finding_has_part(f, PART_INSIDE, NULL))
		return 0;
	const struct proc_inside *in = inside_find(after, key + 5);
	const struct proc_growth *g = NULL;
	for (size_t i = 0; in && i < after->ngrew_procs; i++)
		if (after->grew_procs[i].pid && strcmp(after->grew_procs[i].pid, in->pid) == 0)
			g = &after->grew_procs[i];
	inside_describe(what, sizeof(what), in, g ? g->memory - g->memory_before : 0);
	if (!*what)
		return 0;
	return finding_part_add(f, PART_INSIDE, false, "; inside: ", what);
}

int drilldown_annotate(struct findings *findings, const struct snapshot *before,
                       const struct snapshot *after)
{
	struct drill_item *items;
	size_t n;
	char lead[2048];

	if (!findings || !before || !after)
		return 0;
	if (!(items = malloc(DRILL_MAX * sizeof(*items))))
		return -1;
	n = drilldown_list(items, DRILL_MAX, before, after);
	for (size_t i = 0; i < findings->count; i++) {
		struct finding *f = &findings->items[i];
		if (f->verdict != VERDICT_FAIL || !f->message)
			continue;
		bool own_inside;
		finding_lead(lead, sizeof(lead) - 3, f, items, n, &own_inside);
		size_t ll = strlen(lead);
		/* nothing to name, or named already (a second call names nothing twice) */
		if (!ll || finding_has_part(f, PART_GREW, NULL))
			continue;
		memcpy(lead + ll, "; ", 3);
		if (finding_part_add(f, PART_GREW, true, NULL, lead) < 0) {
			free(items);
			return -1;
		}
		f->inside_named = own_inside;
	}
	/* after the leads, which may say it already */
	for (size_t i = 0; i < findings->count; i++) {
		struct finding *f = &findings->items[i];
		if (f->verdict == VERDICT_FAIL && inside_annotate(f, after) < 0) {
			free(items);
			return -1;
		}
	}
	free(items);
	return 0;
}

int64_t drilldown_held(const struct drill_item *items, size_t n, enum mem_cat c)
{
	int64_t held = 0;
	for (size_t i = 0; i < n; i++)
		held += items[i].by_cat[c] > 0 ? items[i].by_cat[c] : 0;
	return held;
}
