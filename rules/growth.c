/* rules/growth.c: the growth rule: each erlang:memory category, after vs before the suite,
 * judged on the memory model of growth.h. */
#include "growth.h"

#include "culprits.h"

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

/* What failing findings of other rules explain, per category: the growth of the structures
 * they name, and how to name them. */
struct spec {
	int64_t bytes[MEM_CAT_COUNT];
	char what[MEM_CAT_COUNT][200];
	size_t n[MEM_CAT_COUNT];
};

/* One category as judged: the figures shown, the raw growth and the part explained. */
struct judged {
	bool known;
	int64_t before, after, raw, delta;
	int64_t spec; /* of raw, in structures that fail on their own */
	bool fail;
	char explained[512]; /* "" when nothing was subtracted */
	char msg[1024];
};

static int64_t pos(int64_t v)
{
	return v > 0 ? v : 0;
}

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
		double pct = pct_of(j->delta, j->before);
		j->fail = j->delta > lim->floor_bytes && pct > lim->max_pct;
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

	int64_t spec = sp ? sp->bytes[c] : 0;
	if (spec > pos(j->raw))
		spec = pos(j->raw);
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
		model_bytes_format(cs, sizeof(cs), raw_of(b, a, MEM_CODE));
		model_bytes_format(ls, sizeof(ls), la - lb);
		snprintf(j->msg, sizeof(j->msg),
		         "code and literals grew %s -> %s (%s%s, %+.1f %%: code %s%s, literals of "
		         "loaded modules %s%s), %s",
		         bs, as, j->raw >= 0 ? "+" : "", rs, pct,
		         raw_of(b, a, MEM_CODE) >= 0 ? "+" : "", cs, la - lb >= 0 ? "+" : "", ls,
		         lt);
	} else if (spec > 0) {
		char ss[32];
		model_bytes_format(ss, sizeof(ss), spec);
		snprintf(j->msg, sizeof(j->msg),
		         "%s grew %s -> %s (%s%s); +%s of it is in %s, which fails on its own: %s "
		         "judged %s%s (%+.1f %%), %s%s",
		         name, bs, as, j->raw >= 0 ? "+" : "", rs, ss, sp->what[c], name,
		         j->delta >= 0 ? "+" : "", ds, pct, lt,
		         j->fail ? "" : "; context: that failure is this growth");
	} else {
		snprintf(j->msg, sizeof(j->msg), "%s grew %s -> %s (%s%s, %+.1f %%), %s", name, bs,
		         as, j->raw >= 0 ? "+" : "", rs, pct, lt);
	}
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
			v = l->fail ? pos(l->raw) : l->spec;
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
	snprintf(j->msg, sizeof(j->msg),
	         "total grew %s -> %s (%s%s)%s%s: judged %s%s (%+.1f %%), %s%s", bs, as,
	         j->raw >= 0 ? "+" : "", rs, *j->explained ? "; explained: " : "", j->explained,
	         j->delta >= 0 ? "+" : "", ds, pct, lt,
	         !j->fail && any_failing ? "; context: its growth is judged by the failing rows"
	                                 : "");
}

static void judge_all(struct judged j[MEM_CAT_COUNT], const struct snapshot *b,
                      const struct snapshot *a, const struct growth_config *cfg,
                      const struct spec *sp)
{
	memset(j, 0, sizeof(*j) * MEM_CAT_COUNT);
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		if (c != MEM_TOTAL)
			judge_leaf(&j[c], c, b, a, cfg, sp);
	judge_total(&j[MEM_TOTAL], b, a, cfg, j);
}

static int set_judged(struct finding *f, const struct judged *j, const struct growth_limit *lim)
{
	char *msg = strdup(j->msg);
	char *ex = j->explained[0] ? strdup(j->explained) : NULL;
	if (!msg || (j->explained[0] && !ex)) {
		free(msg);
		free(ex);
		return -1;
	}
	free(f->message);
	free(f->explained);
	f->message = msg;
	f->explained = ex;
	f->verdict = j->fail ? VERDICT_FAIL : VERDICT_PASS;
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

/* The name after "table ", "left_alive ", "process ", "mailbox ", "memory ". */
static const char *after_space(const char *s)
{
	const char *p = s ? strchr(s, ' ') : NULL;
	return p ? p + 1 : s ? s : "";
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

/* Whether subject's structure was counted already by an earlier failing finding of rule. */
static bool seen_before(const struct findings *out, size_t start, size_t i, const char *rule,
                        const char *name)
{
	for (size_t k = start; k < i; k++) {
		const struct finding *g = &out->items[k];
		if (g->verdict == VERDICT_FAIL && g->rule && strcmp(g->rule, rule) == 0 &&
		    strcmp(after_space(g->subject), name) == 0)
			return true;
	}
	return false;
}

/* issue 31: the categories a failing structure finding ("process X", "table X", "group K")
 * grew: a process's refc binaries in binary and its heap in processes_used (from the
 * after-snapshot's growth list), a table in ets and the refc binaries its rows hold in
 * binary, a group of born processes in processes_used. */
static void structure_spec(struct spec *sp, const struct snapshot *after, const char *subj,
                           int64_t grew)
{
	char label[200];
	const char *name = after_space(subj);
	if (strncmp(subj, "table ", 6) == 0) {
		snprintf(label, sizeof(label), "ETS table %s", name);
		spec_add(sp, MEM_ETS, grew, label);
		/* and the refc binaries its rows hold (the probe's estimate from a sample) */
		for (size_t i = 0; i < after->ngrew_ets; i++) {
			const struct ets_growth *t = &after->grew_ets[i];
			if (t->name && strcmp(t->name, name) == 0) {
				snprintf(label, sizeof(label), "the binaries of ETS table %s",
				         name);
				spec_add(sp, MEM_BINARY, t->bin_bytes, label);
				break;
			}
		}
	} else if (strncmp(subj, "group ", 6) == 0) {
		snprintf(label, sizeof(label), "the processes %s left alive", name);
		spec_add(sp, MEM_PROCESSES_USED, grew, label);
	} else if (strncmp(subj, "process ", 8) == 0) {
		for (size_t i = 0; i < after->ngrew_procs; i++) {
			const struct proc_growth *p = &after->grew_procs[i];
			const char *pn = p->name ? rules_display(p->name) : p->pid;
			if (!pn || strcmp(pn, name) != 0)
				continue;
			snprintf(label, sizeof(label), "the binaries of process %s", name);
			spec_add(sp, MEM_BINARY, pos(p->bin - p->bin_before), label);
			snprintf(label, sizeof(label), "process %s", name);
			spec_add(sp, MEM_PROCESSES_USED, pos(p->memory - p->memory_before), label);
			return;
		}
	}
}

int growth_consolidate(struct findings *out, size_t start, const struct snapshot *before,
                       const struct snapshot *after, const struct growth_config *cfg)
{
	struct spec *sp;
	struct judged *j;
	int rc = 0;

	if (!cfg->live_totals)
		return 0;
	sp = calloc(1, sizeof(*sp));
	j = malloc(sizeof(*j) * MEM_CAT_COUNT);
	if (!sp || !j) {
		free(sp);
		free(j);
		return -1;
	}
	for (size_t i = start; i < out->count; i++) {
		const struct finding *f = &out->items[i];
		const char *rule = f->rule ? f->rule : "", *subj = f->subject ? f->subject : "";
		char label[200];
		int64_t grew = pos(finding_raw_delta(f));
		if (f->verdict != VERDICT_FAIL ||
		    (f->message && strncmp(f->message, "and ", 4) == 0))
			continue;
		if (strcmp(rule, "ets") == 0) {
			if (strcmp(subj, "total") == 0) {
				spec_add(sp, MEM_ETS, grew, "the ETS total over its cap");
			} else if (!seen_before(out, start, i, rule, after_space(subj))) {
				snprintf(label, sizeof(label), "ETS table %s", after_space(subj));
				spec_add(sp, MEM_ETS, grew, label);
			}
		} else if (strcmp(rule, "binary") == 0) {
			snprintf(label, sizeof(label), "the binaries of process %s",
			         after_space(subj));
			spec_add(sp, MEM_BINARY, grew, label);
		} else if (strcmp(rule, "process") == 0) {
			if (strcmp(subj, "born") == 0) {
				spec_add(sp, MEM_PROCESSES_USED, after->born_memory,
				         "the processes left alive");
			} else if (!seen_before(out, start, i, rule, after_space(subj))) {
				snprintf(label, sizeof(label), "process %s", after_space(subj));
				spec_add(sp, MEM_PROCESSES_USED, grew, label);
			}
		} else if (strcmp(rule, "structure") == 0) {
			/* issue 31: a structure judged on its own explains what it grew */
			structure_spec(sp, after, subj, grew);
		} else if (strcmp(rule, "atom") == 0 && strcmp(subj, "growth") == 0) {
			spec_add(sp, MEM_ATOM_USED, grew, "the new atoms");
			spec_add(sp, MEM_ATOM, grew, "the new atoms");
			/* the atom table's entries and index, beyond the text memory(atom) counts,
			 * are in the rest of system (ll_alloc) */
			int64_t atoms = after->atom_count - before->atom_count;
			if (atoms > 0)
				spec_add(sp, MEM_SYSTEM, atoms * GROWTH_ATOM_ENTRY_BYTES,
				         "the new atoms' table entries");
		}
	}
	judge_all(j, before, after, cfg, sp);
	for (size_t i = start; i < out->count; i++) {
		struct finding *f = &out->items[i];
		int c = mem_cat_from_name(f->subject);
		if (!f->rule || strcmp(f->rule, "growth") != 0 || c < 0 ||
		    f->verdict == VERDICT_SKIP || !j[c].known)
			continue;
		if (set_judged(f, &j[c], &cfg->cat[c]) < 0) {
			rc = -1;
			break;
		}
	}
	free(sp);
	free(j);
	return rc;
}
