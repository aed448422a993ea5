/* rules/growth.c: the growth rule: each erlang:memory category, after vs before the suite,
 * judged on the memory model of growth.h. */
#include "rules/growth.h"

#include "model/finding.h"
#include "rules/consolidate.h"
#include "rules/culprits.h"
#include "rules/drilldown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The defaults pass a clean suite and fail a leak of a few MB; gate.toml says why. */
void growth_config_default(struct growth_config *cfg)
{
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		cfg->cat[i].enabled = true;
		cfg->cat[i].max_pct = 10.0;
		cfg->cat[i].floor_bytes = 1000000;
	}
	/* allocated figures: free carrier space and atom table chunks, judged by the _used twins */
	cfg->cat[MEM_PROCESSES].enabled = false;
	cfg->cat[MEM_ATOM].enabled = false;
	/* test modules and their literals load during the suite: the floor was 8 MB for code
	 * alone; the literals of loaded modules measured about as much again (gen_stage: code
	 * +1.7 MB, literals +1.9 MB), so 16 MB for both */
	cfg->cat[MEM_CODE].max_pct = 50.0;
	cfg->cat[MEM_CODE].floor_bytes = 16000000;
	cfg->live_totals = true;
}

static const struct alloc_info *alloc_find(const struct snapshot *s, const char *type)
{
	for (size_t i = 0; i < s->nallocs; i++)
		if (s->allocs[i].type && strcmp(s->allocs[i].type, type) == 0)
			return &s->allocs[i];
	return NULL;
}

int64_t growth_code_literals(const struct snapshot *s)
{
	const struct alloc_info *lit = alloc_find(s, "literal_alloc");
	if (!lit)
		return -1;
	int64_t v = lit->blocks_size - (s->have_persistent_term ? s->persistent_term_memory : 0);
	return v > 0 ? v : 0;
}

static int64_t pos(int64_t v)
{
	return v > 0 ? v : 0;
}

void growth_code_split(const struct snapshot *b, const struct snapshot *a, struct code_split *out)
{
	out->suite = out->created = 0;
	if (!a->have_code_new || !b->have[MEM_CODE] || !a->have[MEM_CODE])
		return;
	int64_t suite = a->code_disk.bytes + a->code_test.bytes, made = a->code_created.bytes;
	if (suite + made <= 0)
		return;
	/* code: each class its own modules' bytes, all of it only when the row grew by that much
	 * (what grew beyond the modules loaded stays the row's to judge) */
	int64_t code = pos(a->mem[MEM_CODE] - b->mem[MEM_CODE]);
	double scale = code >= suite + made ? 1.0 : (double)code / (double)(suite + made);
	int64_t lb = growth_code_literals(b), la = growth_code_literals(a);
	int64_t lits = lb >= 0 && la >= 0 ? pos(la - lb) : 0;
	double made_share = (double)made / (double)(suite + made);
	int64_t lits_made = (int64_t)((double)lits * made_share);
	out->created = (int64_t)((double)made * scale) + lits_made;
	out->suite = (int64_t)((double)suite * scale) + lits - lits_made;
}

/* What failing findings of other rules explain, per category: the growth of the structures
 * they name, and how to name them. */
struct spec {
	int64_t bytes[MEM_CAT_COUNT];
	char what[MEM_CAT_COUNT][200];
	size_t n[MEM_CAT_COUNT];
	/* the atom rule passed: the run's new atoms (atoms) are within its limit, so the rows
	 * holding their text are context, and so is their share of total */
	bool atoms_ok;
	int64_t atoms;
	/* the refc binary bytes the structures the drill-down finds hold more than before (a
	 * process, a table, a persistent_term key) */
	int64_t held_bin;
};

/* One category as judged: the figures shown, the raw growth and the part explained. */
struct judged {
	bool known;
	int64_t before, after, raw, delta;
	int64_t spec; /* of raw, in structures that fail on their own */
	bool fail;
	char explained[512]; /* "" when nothing was subtracted */
	char msg[1024];
	char by[512];       /* passing as context: what explains it (finding.explained_by); "" */
	bool atoms_context; /* an atom row the atom rule's pass explains */
	bool literals;      /* the code row, judged with the literal area (SHOW_WITH_LITERALS) */
	int64_t lits; /* set aside as code: binary, the loaded modules' literals; ets, the code
	               * server's table of loaded modules */
	int64_t atom_entries; /* system: the new atoms' table entries, subtracted as explained */
};

static double pct_of(int64_t delta, int64_t before)
{
	return before > 0 ? 100.0 * (double)delta / (double)before : (delta > 0 ? 1e9 : 0);
}

static void add_part(char *buf, size_t len, const char *name, int64_t bytes, const char *why)
{
	char d[32];
	size_t o = strlen(buf);
	if (o >= len)
		return;
	model_bytes_format(d, sizeof(d), bytes);
	snprintf(buf + o, len - o, "%s%s %s%s%s%s%s", o ? ", " : "", name, bytes >= 0 ? "+" : "", d,
	         why && *why ? " (" : "", why ? why : "", why && *why ? ")" : "");
}

static bool have_both(const struct snapshot *b, const struct snapshot *a, int c)
{
	return b->have[c] && a->have[c];
}

static int64_t raw_of(const struct snapshot *b, const struct snapshot *a, int c)
{
	return a->mem[c] - b->mem[c];
}

/* Appends to buf "ll_alloc +552.0 kB, fix_alloc +167.1 kB": the allocators outside the
 * leaves' own (process heaps, ETS, binaries, literals) that grew most, as evidence of where
 * the rest of system went. */
static void movers(char *buf, size_t len, const struct snapshot *b, const struct snapshot *a)
{
	static const char *const own[] = {"eheap_alloc", "ets_alloc", "binary_alloc",
	                                  "literal_alloc", NULL};
	int64_t top[2] = {0, 0};
	const char *name[2] = {NULL, NULL};
	for (size_t i = 0; i < a->nallocs; i++) {
		const struct alloc_info *x = &a->allocs[i], *y;
		bool skip = !x->type;
		for (size_t k = 0; own[k] && !skip; k++)
			skip = strcmp(x->type, own[k]) == 0;
		if (skip || !(y = alloc_find(b, x->type)))
			continue;
		int64_t d = x->blocks_size - y->blocks_size;
		if (d > top[0]) {
			top[1] = top[0], name[1] = name[0];
			top[0] = d, name[0] = x->type;
		} else if (d > top[1]) {
			top[1] = d, name[1] = x->type;
		}
	}
	for (int k = 0; k < 2; k++)
		if (name[k] && top[k] >= 10000)
			add_part(buf, len, name[k], top[k], NULL);
}

static void limit_text(char *buf, size_t len, const struct growth_limit *lim)
{
	char fl[32];
	model_bytes_format(fl, sizeof(fl), lim->floor_bytes);
	snprintf(buf, len, "limit +%.1f %% above a floor of %s", lim->max_pct, fl);
}

/* The code row: what loading the suite's own modules explains (growth_code_split) is context,
 * named with its counts in j->explained and taken from j->delta; returns those bytes. */
static int64_t code_suite(struct judged *j, const struct snapshot *b, const struct snapshot *a)
{
	struct code_split cs;
	char nt[32], nd[32], why[200];
	growth_code_split(b, a, &cs);
	if (cs.suite <= 0)
		return 0;
	model_count_format(nt, sizeof(nt), a->code_test.count);
	model_count_format(nd, sizeof(nd), a->code_disk.count);
	snprintf(why, sizeof(why),
	         "%s module%s compiled from this suite's files, %s module%s loaded from disk", nt,
	         a->code_test.count == 1 ? "" : "s", nd, a->code_disk.count == 1 ? "" : "s");
	add_part(j->explained, sizeof(j->explained), "the suite's own modules", cs.suite, why);
	j->delta -= cs.suite;
	return cs.suite;
}

/* Code set aside from the binary and ets rows only from this many bytes: less moves no verdict
 * (the floors are a megabyte) and is not worth a reader's words in a failing finding. */
#define GROWTH_ASIDE_MIN 65536

/* The binary row: the refc binaries that the literals of the modules loaded during the run
 * hold (read from their object code: gate_probe_code.erl) are code, not growth: no process,
 * table or term holds them, and they stay as long as the modules. Those of the suite's own
 * modules and of modules loaded from disk are context; those of modules created during the
 * run are judged with them, by the modules rule. Named in j->explained, taken from j->delta,
 * at most the row's growth; returns those bytes. */
static int64_t binary_literals(struct judged *j, const struct snapshot *a)
{
	if (!a->have_code_lits)
		return 0;
	int64_t room = pos(j->raw);
	int64_t own = a->code_disk.lit_bytes + a->code_test.lit_bytes;
	int64_t made = a->code_created.lit_bytes;
	own = own < room ? own : room;
	made = made < room - own ? made : room - own;
	if (own + made < GROWTH_ASIDE_MIN)
		return 0;
	char why[200], nt[32], nd[32], nc[32];
	if (own > 0) {
		model_count_format(nt, sizeof(nt), a->code_test.count);
		model_count_format(nd, sizeof(nd), a->code_disk.count);
		snprintf(why, sizeof(why), "of %s module%s of this suite and %s loaded from disk",
		         nt, a->code_test.count == 1 ? "" : "s", nd);
		add_part(j->explained, sizeof(j->explained), "the literals of loaded modules", own,
		         why);
	}
	if (made > 0) {
		model_count_format(nc, sizeof(nc), a->code_created.count);
		snprintf(why, sizeof(why),
		         "of %s module%s created during the run: the modules "
		         "rule judges them",
		         nc, a->code_created.count == 1 ? "" : "s");
		add_part(j->explained, sizeof(j->explained), "the literals of created modules",
		         made, why);
	}
	j->delta -= own + made;
	j->lits = own + made;
	return own + made;
}

/* The ets row: the code server's own table (code, owned by code_server: a row per loaded
 * module with its object file's name) grows with every module loaded, by its path's length
 * (a long checkout path makes it 750 bytes a module: +0.8 MB on absinthe's 1 000 modules).
 * That is the cost of loading code, set aside as code is; returns those bytes. */
static int64_t ets_code_table(struct judged *j, const struct snapshot *a)
{
	for (size_t i = 0; i < a->ngrew_ets; i++) {
		const struct ets_growth *e = &a->grew_ets[i];
		if (e->created || !e->name || strcmp(e->name, "code") != 0 || !e->owner_name ||
		    strcmp(e->owner_name, "code_server") != 0)
			continue;
		int64_t d = pos(e->bytes - e->bytes_before);
		d = d < pos(j->raw) ? d : pos(j->raw);
		if (d < GROWTH_ASIDE_MIN)
			return 0;
		char why[96], n[32];
		model_count_format(n, sizeof(n), e->rows - e->rows_before);
		snprintf(why, sizeof(why), "+%s rows: the modules loaded during the run", n);
		add_part(j->explained, sizeof(j->explained), "the code server's table", d, why);
		j->delta -= d;
		j->lits = d;
		return d;
	}
	return 0;
}

/* The binary row's judged growth that no structure the drill-down finds holds, said as such
 * (at 64 kB and more): a port's or a NIF's buffers, or literals gate could not read. */
static void binary_unheld_say(struct judged *j, const struct snapshot *a, const struct spec *sp,
                              int64_t spec)
{
	int64_t unheld = pos(j->delta - pos(sp->held_bin - spec));
	if (unheld < 65536)
		return;
	char us[32], nr[32], more[160] = "";
	model_bytes_format(us, sizeof(us), unheld);
	if (a->have_code_lits && a->code_lits_unread > 0) {
		model_count_format(nr, sizeof(nr), a->code_lits_unread);
		snprintf(more, sizeof(more),
		         ", or the literals of %s module%s loaded during the run "
		         "whose object code gate could not read",
		         nr, a->code_lits_unread == 1 ? "" : "s");
	}
	size_t o = strlen(j->msg);
	snprintf(j->msg + o, sizeof(j->msg) - o,
	         "; +%s of the judged growth is held by no process, table or term gate sees (a "
	         "port's or a NIF's buffers%s)",
	         us, more);
}

/* The leaves: every category but total (system judged on its rest). */
static void judge_leaf(struct judged *j, int c, const struct snapshot *b, const struct snapshot *a,
                       const struct growth_config *cfg, const struct spec *sp)
{
	const struct growth_limit *lim = &cfg->cat[c];
	const char *name = mem_cat_name((enum mem_cat)c);
	char bs[32], as[32], rs[32], ds[32], lt[128];
	int64_t lb = growth_code_literals(b), la = growth_code_literals(a);
	bool lit = c == MEM_CODE && lb >= 0 && la >= 0;

	j->known = have_both(b, a, c);
	j->explained[0] = '\0';
	j->literals = false;
	if (!j->known)
		return;
	j->before = b->mem[c] + (lit ? lb : 0);
	j->after = a->mem[c] + (lit ? la : 0);
	j->raw = j->after - j->before;
	j->delta = j->raw;
	limit_text(lt, sizeof(lt), lim);
	model_bytes_format(bs, sizeof(bs), j->before);
	model_bytes_format(as, sizeof(as), j->after);
	model_bytes_format(rs, sizeof(rs), j->raw);

	if (c == MEM_SYSTEM && cfg->live_totals) {
		/* the rest of system: what no other row judges */
		static const int inner[] = {MEM_ETS, MEM_BINARY, MEM_ATOM};
		int64_t code = have_both(b, a, MEM_CODE) ? raw_of(b, a, MEM_CODE) : 0;
		int64_t lits = lb >= 0 && la >= 0 ? la - lb : 0;
		if (have_both(b, a, MEM_CODE) || lits)
			add_part(j->explained, sizeof(j->explained),
			         lits ? "code and literals" : "code", code + lits, NULL);
		j->delta -= code + lits;
		for (size_t k = 0; k < sizeof(inner) / sizeof(inner[0]); k++) {
			if (!have_both(b, a, inner[k]))
				continue;
			int64_t d = raw_of(b, a, inner[k]);
			add_part(j->explained, sizeof(j->explained),
			         mem_cat_name((enum mem_cat)inner[k]), d, NULL);
			j->delta -= d;
		}
		size_t o = strlen(j->explained);
		snprintf(j->explained + o, sizeof(j->explained) - o,
		         " (rows of their own judge them)");
		j->spec = sp ? sp->bytes[MEM_SYSTEM] : 0;
		if (j->spec > pos(j->delta))
			j->spec = pos(j->delta);
		if (j->spec > 0) {
			add_part(j->explained, sizeof(j->explained), sp->what[MEM_SYSTEM], j->spec,
			         "failing on its own");
			j->delta -= j->spec;
		}
		if (sp && sp->atoms_ok && sp->atoms > 0) {
			/* the table's entries of atoms the atom rule judged within its limit */
			j->atom_entries = sp->atoms * GROWTH_ATOM_ENTRY_BYTES;
			if (j->atom_entries > pos(j->delta))
				j->atom_entries = pos(j->delta);
			if (j->atom_entries > 0) {
				add_part(j->explained, sizeof(j->explained),
				         "the atom table's entries", j->atom_entries,
				         "the run's atoms, within the atom rule's limit");
				j->delta -= j->atom_entries;
			}
		}
		double pct = pct_of(j->delta, j->before);
		j->fail = j->delta > lim->floor_bytes && pct > lim->max_pct;
		if (!j->fail && j->spec > 0) {
			char ss[32];
			model_bytes_format(ss, sizeof(ss), j->spec);
			snprintf(j->by, sizeof(j->by), "%s (+%s)", sp->what[MEM_SYSTEM], ss);
		}
		model_bytes_format(ds, sizeof(ds), j->delta);
		char mv[200] = "";
		/* persistent_term's values are in the rest (literal area, not code): named first */
		if (b->have_persistent_term && a->have_persistent_term &&
		    a->persistent_term_memory - b->persistent_term_memory >= 10000)
			add_part(mv, sizeof(mv), "persistent_term",
			         a->persistent_term_memory - b->persistent_term_memory, NULL);
		movers(mv, sizeof(mv), b, a);
		snprintf(j->msg, sizeof(j->msg),
		         "system grew %s -> %s (%s%s); less %s, the rest of system grew %s%s "
		         "(%+.1f %%)%s%s%s, %s",
		         bs, as, j->raw >= 0 ? "+" : "", rs, j->explained, j->delta >= 0 ? "+" : "",
		         ds, pct, *mv ? " (largest: " : "", mv, *mv ? ")" : "", lt);
		return;
	}

	int64_t suite = c == MEM_CODE && cfg->live_totals ? code_suite(j, b, a) : 0;
	if (c == MEM_BINARY && cfg->live_totals)
		suite = binary_literals(j, a);
	if (c == MEM_ETS && cfg->live_totals)
		suite = ets_code_table(j, a);
	int64_t spec = sp ? sp->bytes[c] : 0;
	if (spec > pos(j->raw - suite))
		spec = pos(j->raw - suite);
	j->spec = spec;
	if (spec > 0) {
		add_part(j->explained, sizeof(j->explained), sp->what[c], spec,
		         "failing on its own");
		j->delta -= spec;
	}
	double pct = pct_of(j->delta, j->before);
	j->fail = j->delta > lim->floor_bytes && pct > lim->max_pct;
	model_bytes_format(ds, sizeof(ds), j->delta);
	if (lit) {
		char cs[32], ls[32];
		j->literals = true;
		model_bytes_format(cs, sizeof(cs), raw_of(b, a, MEM_CODE));
		model_bytes_format(ls, sizeof(ls), la - lb);
		if (spec > 0 && !j->fail) {
			char ss[32];
			model_bytes_format(ss, sizeof(ss), spec);
			snprintf(j->by, sizeof(j->by), "%s (+%s)", sp->what[c], ss);
		}
		snprintf(j->msg, sizeof(j->msg),
		         "code and literals grew %s -> %s (%s%s: code %s%s, literals of loaded "
		         "modules %s%s)%s%s: judged %s%s (%+.1f %%), %s%s%s",
		         bs, as, j->raw >= 0 ? "+" : "", rs, raw_of(b, a, MEM_CODE) >= 0 ? "+" : "",
		         cs, la - lb >= 0 ? "+" : "", ls, *j->explained ? "; less " : "",
		         j->explained, j->delta >= 0 ? "+" : "", ds, pct, lt,
		         *j->by ? "; context: explained by " : "", j->by);
	} else if (suite > 0) {
		/* binary or ets, less what is set aside as code (and a failing structure's) */
		if (spec > 0 && !j->fail) {
			char ss[32];
			model_bytes_format(ss, sizeof(ss), spec);
			snprintf(j->by, sizeof(j->by), "%s (+%s)", sp->what[c], ss);
		}
		snprintf(j->msg, sizeof(j->msg),
		         "%s grew %s -> %s (%s%s); less %s: judged %s%s (%+.1f %%), %s%s%s", name,
		         bs, as, j->raw >= 0 ? "+" : "", rs, j->explained, j->delta >= 0 ? "+" : "",
		         ds, pct, lt, *j->by ? "; context: explained by " : "", j->by);
	} else if (spec > 0) {
		char ss[32];
		model_bytes_format(ss, sizeof(ss), spec);
		if (!j->fail)
			snprintf(j->by, sizeof(j->by), "%s (+%s)", sp->what[c], ss);
		snprintf(j->msg, sizeof(j->msg),
		         "%s grew %s -> %s (%s%s); +%s of it is in %s, which fails on its own: %s "
		         "judged %s%s (%+.1f %%), %s%s%s",
		         name, bs, as, j->raw >= 0 ? "+" : "", rs, ss, sp->what[c], name,
		         j->delta >= 0 ? "+" : "", ds, pct, lt,
		         j->fail ? "" : "; context: explained by ", j->by);
	} else {
		snprintf(j->msg, sizeof(j->msg), "%s grew %s -> %s (%s%s, %+.1f %%), %s", name, bs,
		         as, j->raw >= 0 ? "+" : "", rs, pct, lt);
	}
	if (c == MEM_BINARY && sp)
		binary_unheld_say(j, a, sp, spec);
}

/* total: context, judged net of code loading, free heap space and every failing leaf. */
static void judge_total(struct judged *j, const struct snapshot *b, const struct snapshot *a,
                        const struct growth_config *cfg, const struct judged *leaf)
{
	static const int leaves[] = {MEM_PROCESSES_USED, MEM_ETS, MEM_BINARY, MEM_ATOM_USED,
	                             MEM_SYSTEM};
	const struct growth_limit *lim = &cfg->cat[MEM_TOTAL];
	char bs[32], as[32], rs[32], ds[32], lt[128], failing[512] = "";
	bool any_failing = false;

	j->known = have_both(b, a, MEM_TOTAL);
	j->explained[0] = '\0';
	if (!j->known)
		return;
	j->before = b->mem[MEM_TOTAL];
	j->after = a->mem[MEM_TOTAL];
	j->raw = j->after - j->before;
	j->delta = j->raw;
	limit_text(lt, sizeof(lt), lim);
	model_bytes_format(bs, sizeof(bs), j->before);
	model_bytes_format(as, sizeof(as), j->after);
	model_bytes_format(rs, sizeof(rs), j->raw);
	if (!cfg->live_totals) {
		double pct = pct_of(j->delta, j->before);
		j->fail = j->delta > lim->floor_bytes && pct > lim->max_pct;
		snprintf(j->msg, sizeof(j->msg), "total grew %s -> %s (%s%s, %+.1f %%), %s", bs, as,
		         j->raw >= 0 ? "+" : "", rs, pct, lt);
		return;
	}
	const struct judged *code = &leaf[MEM_CODE];
	if (code->known && code->raw > 0) {
		add_part(j->explained, sizeof(j->explained),
		         growth_code_literals(a) >= 0 ? "code and literals" : "code", code->raw,
		         "modules the suite loaded");
		j->delta -= code->raw;
	}
	const struct judged *bin = &leaf[MEM_BINARY], *ets = &leaf[MEM_ETS];
	if (bin->known && bin->lits > 0) {
		add_part(j->explained, sizeof(j->explained), "their literals' binaries", bin->lits,
		         "set aside by the binary row");
		j->delta -= bin->lits;
	}
	if (ets->known && ets->lits > 0) {
		add_part(j->explained, sizeof(j->explained), "the code server's table", ets->lits,
		         "set aside by the ets row");
		j->delta -= ets->lits;
	}
	if (have_both(b, a, MEM_PROCESSES) && have_both(b, a, MEM_PROCESSES_USED)) {
		int64_t free_heap = raw_of(b, a, MEM_PROCESSES) - raw_of(b, a, MEM_PROCESSES_USED);
		if (free_heap > 0) {
			add_part(j->explained, sizeof(j->explained), "free heap", free_heap,
			         "carriers the allocators keep");
			j->delta -= free_heap;
		}
	}
	for (size_t k = 0; k < sizeof(leaves) / sizeof(leaves[0]); k++) {
		const struct judged *l = &leaf[leaves[k]];
		int64_t v;
		if (!l->known || !cfg->cat[leaves[k]].enabled)
			continue;
		/* a failing leaf explains its judged growth; any leaf, what failing structures in
		 * it explain (raw - delta; for system that is the other leaves, counted there) */
		if (leaves[k] == MEM_SYSTEM)
			v = (l->fail ? pos(l->delta) : 0) + l->spec;
		else
			v = l->fail ? pos(l->raw - l->lits) : l->spec;
		if (l->atoms_context && l->raw > 0) {
			add_part(j->explained, sizeof(j->explained),
			         mem_cat_name((enum mem_cat)leaves[k]), l->raw,
			         "the run's atoms, within the atom rule's limit");
			j->delta -= l->raw;
			continue;
		}
		if (l->atom_entries > 0) {
			add_part(j->explained, sizeof(j->explained), "the atom table's entries",
			         l->atom_entries, "the run's atoms, within the atom rule's limit");
			j->delta -= l->atom_entries;
		}
		if (v <= 0)
			continue;
		any_failing = true;
		add_part(failing, sizeof(failing),
		         leaves[k] == MEM_SYSTEM ? "the rest of system"
		                                 : mem_cat_name((enum mem_cat)leaves[k]),
		         v, NULL);
		j->delta -= v;
	}
	if (*failing) {
		size_t o = strlen(j->explained);
		snprintf(j->explained + o, sizeof(j->explained) - o,
		         "%sgrowth judged failing above: %s", o ? "; " : "", failing);
	}
	double pct = pct_of(j->delta, j->before);
	j->fail = j->delta > lim->floor_bytes && pct > lim->max_pct;
	model_bytes_format(ds, sizeof(ds), j->delta);
	if (!j->fail && any_failing)
		snprintf(j->by, sizeof(j->by), "the failing rows (%s)", failing);
	snprintf(j->msg, sizeof(j->msg),
	         "total grew %s -> %s (%s%s)%s%s: judged %s%s (%+.1f %%), %s%s%s", bs, as,
	         j->raw >= 0 ? "+" : "", rs, *j->explained ? "; explained: " : "", j->explained,
	         j->delta >= 0 ? "+" : "", ds, pct, lt, *j->by ? "; context: explained by " : "",
	         j->by);
}

/* The rows that hold the atoms' text (atom_used, and atom around it) pass as context when
 * the atom rule passed: a suite's new atoms within that rule's limit (its test names) are
 * judged there, so neither the rows nor total count them as failing. */
static void atoms_context(struct judged j[MEM_CAT_COUNT], int64_t atoms)
{
	static const int rows[] = {MEM_ATOM_USED, MEM_ATOM};
	char d[32];
	rules_count_format(d, sizeof(d), atoms);
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct judged *r = &j[rows[k]];
		if (!r->known || !r->fail)
			continue;
		r->fail = false;
		r->atoms_context = true;
		snprintf(r->by, sizeof(r->by), "the run's +%s atoms, within the atom rule's limit",
		         d);
		size_t o = strlen(r->msg);
		snprintf(r->msg + o, sizeof(r->msg) - o, "; context: explained by %s", r->by);
	}
}

static void judge_all(struct judged j[MEM_CAT_COUNT], const struct snapshot *b,
                      const struct snapshot *a, const struct growth_config *cfg,
                      const struct spec *sp)
{
	memset(j, 0, sizeof(*j) * MEM_CAT_COUNT);
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (c != MEM_TOTAL)
			judge_leaf(&j[c], c, b, a, cfg, sp);
	if (sp && sp->atoms_ok)
		atoms_context(j, sp->atoms);
	judge_total(&j[MEM_TOTAL], b, a, cfg, j);
}

static int set_judged(struct finding *f, const struct judged *j, const struct growth_limit *lim)
{
	char *ex = j->explained[0] ? strdup(j->explained) : NULL;
	char *by = j->by[0] ? strdup(j->by) : NULL;
	if ((j->explained[0] && !ex) || (j->by[0] && !by) || finding_what_set(f, j->msg) < 0) {
		free(ex);
		free(by);
		return -1;
	}
	free(f->explained);
	free(f->explained_by);
	f->explained = ex;
	f->explained_by = by;
	f->verdict = j->fail ? VERDICT_FAIL : VERDICT_PASS;
	f->show = j->literals ? f->show | SHOW_WITH_LITERALS : f->show & ~SHOW_WITH_LITERALS;
	f->before = j->before;
	f->after = j->after;
	f->delta = j->delta;
	f->floor = lim->floor_bytes;
	f->max_pct = lim->max_pct;
	return 0;
}

int growth_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                 const struct growth_config *cfg)
{
	struct judged *j = malloc(sizeof(*j) * MEM_CAT_COUNT);
	if (!j)
		return -1;
	size_t first = out->count;
	judge_all(j, before, after, cfg, NULL);
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		const struct growth_limit *lim = &cfg->cat[i];
		const char *name = mem_cat_name((enum mem_cat)i);
		char msg[512];

		if (!lim->enabled)
			continue;
		if (!j[i].known) {
			snprintf(msg, sizeof(msg), "%s: not reported by the node in %s snapshot",
			         name, before->have[i] ? "the after" : "the before");
			if (findings_add(out, "growth", name, VERDICT_SKIP, 0, 0, lim->floor_bytes,
			                 lim->max_pct, msg) < 0)
				goto oom;
			continue;
		}
		if (findings_add(out, "growth", name, VERDICT_PASS, 0, 0, lim->floor_bytes,
		                 lim->max_pct, NULL) < 0 ||
		    set_judged(&out->items[out->count - 1], &j[i], lim) < 0)
			goto oom;
	}
	/* one row per category of the memory table, its byte figures spelt out when it fails */
	findings_show(out, first, UNIT_BYTES, SHOW_CATEGORY | SHOW_FIGURES);
	free(j);
	return 0;
oom:
	free(j);
	return -1;
}

static void spec_add(struct spec *sp, int c, int64_t bytes, const char *label)
{
	if (bytes <= 0)
		return;
	sp->bytes[c] += bytes;
	if (sp->n[c] == 0)
		snprintf(sp->what[c], sizeof(sp->what[c]), "%s", label);
	else if (sp->n[c] == 1)
		snprintf(sp->what[c] + strlen(sp->what[c]),
		         sizeof(sp->what[c]) - strlen(sp->what[c]), " and more");
	sp->n[c]++;
}

/* The leaves a structure's bytes are judged in; system is judged on its rest. */
static const int spec_leaves[] = {MEM_PROCESSES_USED, MEM_ETS,  MEM_BINARY,
                                  MEM_ATOM_USED,      MEM_ATOM, MEM_CODE};

/* Adds what a structure explains (bytes per category, parents included: model.h) to sp,
 * leaving out category skip (the row that names the structure judges it itself): each leaf
 * its own, system the part in no row of its own (persistent_term's values, the atom table's
 * entries). */
static void spec_add_explains(struct spec *sp, const int64_t ex[MEM_CAT_COUNT], const char *label,
                              int skip)
{
	int64_t rest = ex[MEM_SYSTEM] - ex[MEM_ETS] - ex[MEM_BINARY] - ex[MEM_ATOM] - ex[MEM_CODE];
	for (size_t k = 0; k < sizeof(spec_leaves) / sizeof(spec_leaves[0]); k++)
		if (spec_leaves[k] != skip)
			spec_add(sp, spec_leaves[k], ex[spec_leaves[k]], label);
	if (skip != MEM_SYSTEM)
		spec_add(sp, MEM_SYSTEM, rest, label);
}

/* The failing structures' explanations (one per structure: the largest figure each of its
 * findings gives per category, e.g. a process's memory and its binaries) into sp. */
static void spec_from_findings(struct spec *sp, const struct findings *out, size_t start)
{
	for (size_t i = start; i < out->count; i++) {
		const struct finding *f = &out->items[i];
		int64_t ex[MEM_CAT_COUNT];
		if (!consolidate_first_of(out, start, i))
			continue;
		memcpy(ex, f->explains, sizeof(ex));
		for (size_t k = i + 1; k < out->count; k++) {
			const struct finding *g = &out->items[k];
			if (g->verdict != VERDICT_FAIL || !g->structure_key ||
			    strcmp(g->structure_key, f->structure_key) != 0)
				continue;
			for (int c = 0; c < MEM_CAT_COUNT; c++)
				if (g->explains[c] > ex[c])
					ex[c] = g->explains[c];
		}
		spec_add_explains(sp, ex, f->structure ? f->structure : f->structure_key, -1);
	}
}

/* Whether a failing finding from start on names the structure key already. */
static bool key_failing(const struct findings *out, size_t start, const char *key)
{
	for (size_t i = start; i < out->count; i++)
		if (out->items[i].verdict == VERDICT_FAIL && out->items[i].structure_key &&
		    strcmp(out->items[i].structure_key, key) == 0)
			return true;
	return false;
}

/* Whether another leaf than c adopted item i, or one naming the same structure: one
 * structure is explained once. */
static bool adopted_already_other(const int adopted[MEM_CAT_COUNT], int c,
                                  const struct drill_item *items, size_t i)
{
	for (int k = 0; k < MEM_CAT_COUNT; k++)
		if (k != c && adopted[k] >= 0 && adopted[k] != DRILL_MAX &&
		    strcmp(items[adopted[k]].key, items[i].key) == 0)
			return true;
	return false;
}

/* A leaf that fails with no structure failing for it: the structure that grew most in it (the
 * drill-down's), when that is at least half its judged growth, is what it names; what that
 * structure holds elsewhere (an ETS table's refc binaries) is then explained by it. Returns
 * whether one was adopted. */
static bool adopt(struct spec *sp, int adopted[MEM_CAT_COUNT], const struct judged *j,
                  const struct drill_item *items, size_t n, const struct findings *out,
                  size_t start)
{
	static const int order[] = {MEM_ETS, MEM_PROCESSES_USED, MEM_BINARY, MEM_ATOM_USED};
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
		int c = order[o], best = -1;
		if (!j[c].known || !j[c].fail || adopted[c] >= 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if (items[i].key[0] && !key_failing(out, start, items[i].key) &&
			    2 * items[i].by_cat[c] >= j[c].delta &&
			    (best < 0 || items[i].by_cat[c] > items[best].by_cat[c]))
				best = (int)i;
		adopted[c] = best >= 0 ? best : DRILL_MAX;
		/* the structure another leaf adopted: still failing on what its figures there do
		 * not cover (a binary's allocation beyond its size), this leaf names it too, and
		 * consolidation keeps one finding for it (a process is one cause, whatever parts
		 * of it grew) */
		if (best < 0 || adopted_already_other(adopted, c, items, (size_t)best))
			continue;
		spec_add_explains(sp, items[best].by_cat, items[best].label, c);
		return true;
	}
	return false;
}

/* A failing row is a cause (rules/consolidate.h): the structure it adopted, and its own
 * judged growth. */
static int row_cause(struct finding *f, int c, const struct judged *j, const struct drill_item *it)
{
	int64_t own = c == MEM_SYSTEM || c == MEM_TOTAL ? pos(j->delta) : pos(j->raw);
	if (it) {
		if (consolidate_name(f, it->key, it->label, (enum mem_cat)c, 0) < 0)
			return -1;
		memcpy(f->explains, it->by_cat, sizeof(f->explains));
		own -= it->by_cat[c];
	}
	consolidate_explains_add(f->explains, (enum mem_cat)c, own);
	return 0;
}

int growth_consolidate(struct findings *out, size_t start, const struct snapshot *before,
                       const struct snapshot *after, const struct growth_config *cfg)
{
	struct spec *sp;
	struct judged *j;
	struct drill_item *items;
	int adopted[MEM_CAT_COUNT], rc = 0;
	size_t n;

	if (!cfg->live_totals)
		return 0;
	sp = calloc(1, sizeof(*sp));
	j = malloc(sizeof(*j) * MEM_CAT_COUNT);
	items = malloc(DRILL_MAX * sizeof(*items));
	if (!sp || !j || !items) {
		free(sp);
		free(j);
		free(items);
		return -1;
	}
	spec_from_findings(sp, out, start);
	for (size_t i = start; i < out->count; i++) {
		const struct finding *f = &out->items[i];
		if (f->rule && strcmp(f->rule, "atom") == 0 && f->subject &&
		    strcmp(f->subject, "growth") == 0 && f->verdict == VERDICT_PASS) {
			sp->atoms_ok = true;
			sp->atoms = after->atom_count - before->atom_count;
		}
	}
	n = drilldown_list(items, DRILL_MAX, before, after);
	sp->held_bin = drilldown_held(items, n, MEM_BINARY);
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		adopted[c] = -1;
	/* each adoption may explain another leaf: judge again until none is adopted */
	do
		judge_all(j, before, after, cfg, sp);
	while (adopt(sp, adopted, j, items, n, out, start));
	for (size_t i = start; i < out->count; i++) {
		struct finding *f = &out->items[i];
		int c = mem_cat_from_name(f->subject);
		if (!f->rule || strcmp(f->rule, "growth") != 0 || c < 0 ||
		    f->verdict == VERDICT_SKIP || !j[c].known)
			continue;
		if (set_judged(f, &j[c], &cfg->cat[c]) < 0 ||
		    (j[c].fail &&
		     row_cause(f, c, &j[c],
		               adopted[c] >= 0 && adopted[c] != DRILL_MAX ? &items[adopted[c]]
		                                                          : NULL) < 0)) {
			rc = -1;
			break;
		}
	}
	free(sp);
	free(j);
	free(items);
	return rc;
}
