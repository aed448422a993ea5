/* rules/ets.c: the ETS rule: total cap, per-table caps by name glob, tables left alive. */
#include "rules/ets.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "model/finding.h"
#include "rules/consolidate.h"
#include "rules/drilldown.h"

#define RULE "ets"

/* Off by default: the total moves with what the suite legitimately caches; the per-table
 * caps and the left-alive check name the table instead. gate.toml says why. */
void ets_config_default(struct ets_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_total = RULES_OFF;
	cfg->max_left_alive = 0;
	cfg->left_alive_floor = 1000000;
}

struct ets_table_limit *ets_config_table_add(struct ets_config *cfg, const char *name)
{
	size_t n = strlen(name) + 1;
	char *copy = malloc(n);
	struct ets_table_limit *t;

	if (!copy)
		return NULL;
	memcpy(copy, name, n);
	if (GROW(cfg->tables, cfg->tables_cap, cfg->ntables + 1, 8) < 0) {
		free(copy);
		return NULL;
	}
	t = &cfg->tables[cfg->ntables++];
	t->name = copy;
	t->max_bytes = RULES_OFF;
	t->max_size = RULES_OFF;
	t->max_growth_pct = -1;
	return t;
}

void ets_config_clear(struct ets_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->ntables; i++)
		free(cfg->tables[i].name);
	free(cfg->tables);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- naming ---- */

/* The name is always set by the probe; the id stands in should it not be. */
static const char *table_name(const struct ets_info *t)
{
	return t->name ? t->name : t->id ? t->id : "?";
}

static const char *owner_name(const struct ets_info *t)
{
	return t->owner_name ? rules_display(t->owner_name) : t->owner_pid ? t->owner_pid : "?";
}

/* The same table in the before-snapshot: the same id (the same table object) first, else
 * the first one of the same name (recreated, or an unnamed table's name). */
static const struct ets_info *find_before(const struct snapshot *before, const struct ets_info *t)
{
	if (t->id)
		for (size_t i = 0; i < before->nets; i++)
			if (before->ets[i].id && strcmp(before->ets[i].id, t->id) == 0)
				return &before->ets[i];
	for (size_t i = 0; i < before->nets; i++)
		if (strcmp(table_name(&before->ets[i]), table_name(t)) == 0)
			return &before->ets[i];
	return NULL;
}

/* "ETS table corpus_cache (owner LeakEts.Corpus) grew 600.0 kB -> 7.8 MB (+60 000 rows)" */
static void describe_table(char *buf, size_t len, const struct ets_info *t,
                           const struct ets_info *was)
{
	int64_t b = was ? was->memory : 0, rows = t->size - (was ? was->size : 0);
	char bs[32], as[32], rs[32];

	model_bytes_format(bs, sizeof(bs), b);
	model_bytes_format(as, sizeof(as), t->memory);
	rules_count_format(rs, sizeof(rs), rows);
	snprintf(buf, len, "ETS table %s (owner %s) %s %s -> %s (%s%s rows%s)", table_name(t),
	         owner_name(t),
	         t->memory > b   ? "grew"
	         : t->memory < b ? "shrank"
	                         : "stayed at",
	         bs, as, rows >= 0 ? "+" : "", rs, !was ? ", created during the run" : "");
}

/* the table as a structure (rules/consolidate.h): its growth in ets, and the refc binaries its new
 * rows hold (measured in the node) in binary. */
static int table_structure(struct finding *f, const struct snapshot *after,
                           const struct ets_info *t, int64_t grew)
{
	int64_t bin = 0;
	for (size_t i = 0; i < after->ngrew_ets; i++) {
		const struct ets_growth *e = &after->grew_ets[i];
		if ((t->id && e->id && strcmp(t->id, e->id) == 0) ||
		    (!t->id && e->name && strcmp(e->name, table_name(t)) == 0)) {
			bin = drilldown_ets_bin(e);
			break;
		}
	}
	return rules_table_structure(f, table_name(t), grew, bin);
}

/* ---- total ---- */

static int check_total(struct findings *out, const struct snapshot *before,
                       const struct snapshot *after, const struct ets_config *cfg)
{
	char msg[1024], bs[32], as[32], cap[32];
	struct culprits top = {0};
	size_t o;

	if (cfg->max_total == RULES_OFF)
		return 0;
	model_bytes_format(cap, sizeof(cap), cfg->max_total);
	if (!after->have[MEM_ETS])
		return findings_add(out, RULE, "total", VERDICT_SKIP, 0, 0, cfg->max_total, -1,
		                    "ETS total: not reported by the node in the after snapshot");

	int64_t b = before->have[MEM_ETS] ? before->mem[MEM_ETS] : 0, a = after->mem[MEM_ETS];
	bool fail = a > cfg->max_total;
	model_bytes_format(bs, sizeof(bs), b);
	model_bytes_format(as, sizeof(as), a);
	if (!before->have[MEM_ETS])
		o = (size_t)snprintf(msg, sizeof(msg), "ETS total is %s", as);
	else
		o = (size_t)snprintf(msg, sizeof(msg), "ETS total %s %s -> %s",
		                     a > b   ? "grew"
		                     : a < b ? "shrank"
		                             : "stayed at",
		                     bs, as);
	if (!fail) {
		snprintf(msg + o, sizeof(msg) - o, ", within the cap of %s", cap);
	} else {
		o += (size_t)snprintf(msg + o, sizeof(msg) - o, ", cap %s", cap);
		/* the largest tables say where it went */
		for (size_t i = 0; i < after->nets; i++)
			if (culprits_add(&top, i, after->ets[i].memory) < 0) {
				culprits_clear(&top);
				return -1;
			}
		culprits_sort(&top);
		for (size_t k = 0; k < top.count && k < 3 && o < sizeof(msg); k++) {
			const struct ets_info *t = &after->ets[top.items[k].index];
			char ts[32];
			model_bytes_format(ts, sizeof(ts), t->memory);
			o += (size_t)snprintf(msg + o, sizeof(msg) - o, "%s%s %s (owner %s)",
			                      k ? ", " : "; largest tables: ", table_name(t), ts,
			                      owner_name(t));
		}
		culprits_clear(&top);
	}
	return findings_add(out, RULE, "total", fail ? VERDICT_FAIL : VERDICT_PASS, b, a,
	                    cfg->max_total, -1, msg);
}

/* ---- [[ets.table]] ---- */

/* Whether t breaks one of lim's limits; why lists each broken one ("cap 2.0 MB; ..."). */
static bool table_over(const struct ets_table_limit *lim, const struct ets_info *t,
                       const struct ets_info *was, char *why, size_t len)
{
	size_t o = 0;
	char s[32];

	why[0] = '\0';
	if (lim->max_bytes != RULES_OFF && t->memory > lim->max_bytes) {
		model_bytes_format(s, sizeof(s), lim->max_bytes);
		o += (size_t)snprintf(why + o, len - o, "%scap %s", o ? "; " : "", s);
	}
	if (lim->max_size != RULES_OFF && t->size > lim->max_size && o < len) {
		rules_count_format(s, sizeof(s), lim->max_size);
		o += (size_t)snprintf(why + o, len - o, "%scap %s rows", o ? "; " : "", s);
	}
	if (lim->max_growth_pct >= 0 && o < len) {
		int64_t b = was ? was->memory : 0, d = t->memory - b;
		/* from 0 any growth is infinitely many percent; compared without dividing */
		bool over = b > 0 ? (double)d * 100.0 > lim->max_growth_pct * (double)b : d > 0;
		if (over) {
			if (b > 0)
				o += (size_t)snprintf(why + o, len - o,
				                      "%sgrowth %+.1f %% above the limit of +%g %%",
				                      o ? "; " : "", 100.0 * (double)d / (double)b,
				                      lim->max_growth_pct);
			else
				o += (size_t)snprintf(
				        why + o, len - o,
				        "%sgrowth from nothing above the limit of +%g %%",
				        o ? "; " : "", lim->max_growth_pct);
		}
	}
	return o > 0;
}

/* "2.0 MB, 50 000 rows, +50 % growth" */
static void limits_describe(char *buf, size_t len, const struct ets_table_limit *lim)
{
	size_t o = 0;
	char s[32];

	buf[0] = '\0';
	if (lim->max_bytes != RULES_OFF) {
		model_bytes_format(s, sizeof(s), lim->max_bytes);
		o += (size_t)snprintf(buf + o, len - o, "%s", s);
	}
	if (lim->max_size != RULES_OFF && o < len) {
		rules_count_format(s, sizeof(s), lim->max_size);
		o += (size_t)snprintf(buf + o, len - o, "%s%s rows", o ? ", " : "", s);
	}
	if (lim->max_growth_pct >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, "%s+%g %% growth", o ? ", " : "",
		                      lim->max_growth_pct);
	if (o == 0)
		snprintf(buf, len, "no limits");
}

static int check_table_limit(struct findings *out, const struct snapshot *before,
                             const struct snapshot *after, const struct ets_table_limit *lim)
{
	struct culprits bad = {0};
	size_t nmatch = 0;
	const struct ets_info *largest = NULL;
	char msg[1024], why[512], desc[512], lims[160], family[300], subject[300];
	int rc = 0;

	limits_describe(lims, sizeof(lims), lim);
	snprintf(family, sizeof(family), "table %s", lim->name);
	if (after->nets == 0) {
		snprintf(msg, sizeof(msg),
		         "ETS tables matching %s: the after-snapshot lists no ETS tables (a light "
		         "snapshot)",
		         lim->name);
		return findings_add(out, RULE, family, VERDICT_SKIP, 0, 0,
		                    lim->max_bytes == RULES_OFF ? 0 : lim->max_bytes,
		                    lim->max_growth_pct, msg);
	}
	for (size_t i = 0; i < after->nets; i++) {
		const struct ets_info *t = &after->ets[i];
		if (fnmatch(lim->name, table_name(t), 0) != 0)
			continue;
		nmatch++;
		if (!largest || t->memory > largest->memory)
			largest = t;
		if (table_over(lim, t, find_before(before, t), why, sizeof(why)) &&
		    culprits_add(&bad, i, t->memory) < 0)
			goto oom;
	}
	culprits_sort(&bad);
	for (size_t k = 0; k < bad.count && k < RULES_MAX_CULPRITS; k++) {
		const struct ets_info *t = &after->ets[bad.items[k].index];
		const struct ets_info *was = find_before(before, t);
		describe_table(desc, sizeof(desc), t, was);
		table_over(lim, t, was, why, sizeof(why));
		if (strcmp(lim->name, table_name(t)) == 0)
			snprintf(msg, sizeof(msg), "%s, %s", desc, why);
		else
			snprintf(msg, sizeof(msg), "%s, %s (for tables matching %s)", desc, why,
			         lim->name);
		snprintf(subject, sizeof(subject), "table %s", table_name(t));
		if (findings_add(out, RULE, subject, VERDICT_FAIL, was ? was->memory : 0, t->memory,
		                 lim->max_bytes == RULES_OFF ? 0 : lim->max_bytes,
		                 lim->max_growth_pct, msg) < 0 ||
		    table_structure(&out->items[out->count - 1], after, t,
		                    t->memory - (was ? was->memory : 0)) < 0)
			goto oom;
	}
	if (culprits_add_more(out, RULE, family, &bad, "ETS tables over their limits") < 0)
		goto oom;
	if (bad.count == 0) {
		if (!largest) {
			snprintf(msg, sizeof(msg), "no ETS table matches %s (limits %s)", lim->name,
			         lims);
		} else {
			char ms[32], rows[32];
			model_bytes_format(ms, sizeof(ms), largest->memory);
			rules_count_format(rows, sizeof(rows), largest->size);
			snprintf(msg, sizeof(msg),
			         "%zu ETS %s matching %s within %s (largest: %s, %s, %s rows)",
			         nmatch, nmatch == 1 ? "table" : "tables", lim->name, lims,
			         table_name(largest), ms, rows);
		}
		if (findings_add(out, RULE, family, VERDICT_PASS, 0, largest ? largest->memory : 0,
		                 lim->max_bytes == RULES_OFF ? 0 : lim->max_bytes,
		                 lim->max_growth_pct, msg) < 0)
			goto oom;
	}
	goto out;
oom:
	rc = -1;
out:
	culprits_clear(&bad);
	return rc;
}

/* ---- left alive ---- */

/* Tables created during the run and left alive, by owner whatever their names: code that
 * creates its working tables on every call (a planner's `vertices`, `neighbours`, ...) and
 * never deletes them leaves one pile under one owner, one cause. The probe groups them by
 * name and owner (two or more of a name) and lists the largest tables one by one; both are
 * gathered here by owner. */
#define OWNER_NAMES 4 /* names written out in a group's message; the rest counted */

struct owner_group {
	const char *owner_pid, *owner_name, *owner_call, *module; /* borrowed from the snapshot */
	int64_t count, bytes;
	const char *names[OWNER_NAMES];
	size_t nnames, more_names;
	size_t table; /* its one table's index in after->ets when count is 1 */
};

static bool same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void owner_name_add(struct owner_group *o, const char *name)
{
	for (size_t k = 0; k < o->nnames; k++)
		if (same(o->names[k], name))
			return;
	if (o->nnames < OWNER_NAMES)
		o->names[o->nnames++] = name;
	else
		o->more_names++;
}

static struct owner_group *owner_find(struct owner_group *g, size_t *n, size_t cap, const char *pid)
{
	for (size_t k = 0; k < *n; k++)
		if (same(g[k].owner_pid, pid))
			return &g[k];
	if (*n == cap)
		return NULL;
	memset(&g[*n], 0, sizeof(g[*n]));
	g[*n].owner_pid = pid;
	return &g[(*n)++];
}

/* Whether the probe grouped t with other tables of its name and owner. */
static bool in_name_group(const struct snapshot *after, const struct ets_info *t)
{
	for (size_t i = 0; i < after->nets_groups; i++) {
		const struct ets_group *g = &after->ets_groups[i];
		if (g->count > 1 && same(g->name, table_name(t)) &&
		    same(g->owner_pid, t->owner_pid))
			return true;
	}
	return false;
}

/* The owner groups of after into g (at most cap), most bytes first; returns how many. */
static size_t owner_groups(struct owner_group *g, size_t cap, const struct snapshot *after)
{
	size_t n = 0;
	for (size_t i = 0; i < after->nets_groups; i++) {
		const struct ets_group *eg = &after->ets_groups[i];
		struct owner_group *o;
		if (eg->count < 2 || !eg->owner_pid || !(o = owner_find(g, &n, cap, eg->owner_pid)))
			continue;
		o->owner_name = eg->owner_name;
		o->owner_call = eg->owner_call;
		if (!o->module)
			o->module = eg->module;
		o->count += eg->count;
		o->bytes += eg->bytes;
		owner_name_add(o, eg->name);
	}
	for (size_t i = 0; i < after->nets; i++) {
		const struct ets_info *t = &after->ets[i];
		struct owner_group *o;
		if (!t->created || !t->owner_pid || in_name_group(after, t) ||
		    !(o = owner_find(g, &n, cap, t->owner_pid)))
			continue;
		o->owner_name = t->owner_name;
		o->count++;
		o->bytes += t->memory;
		o->table = i;
		owner_name_add(o, table_name(t));
	}
	for (size_t i = 1; i < n; i++) /* a handful: insertion sort, most bytes first */
		for (size_t k = i; k > 0 && g[k].bytes > g[k - 1].bytes; k--) {
			struct owner_group t = g[k];
			g[k] = g[k - 1];
			g[k - 1] = t;
		}
	return n;
}

/* A group judged as one: two or more tables of one owner, at least floor bytes together. */
static bool group_big(const struct owner_group *g, const struct ets_config *cfg)
{
	return g->count > 1 && g->bytes >= cfg->left_alive_floor;
}

/* Whether t is one of a group judged as one (its own finding would say it twice). */
static bool in_big_group(const struct owner_group *g, size_t n, const struct ets_info *t,
                         const struct ets_config *cfg)
{
	for (size_t i = 0; i < n; i++)
		if (group_big(&g[i], cfg) && same(g[i].owner_pid, t->owner_pid))
			return true;
	return false;
}

/* "400 ETS tables `leaked` (owner MyApp.Holder) created during the run still alive, 2.3 MB
 * together", or with several names "`vertices`, `edges` and 2 more names"; its test module
 * the culprit, the group one structure. */
static int group_finding(struct findings *out, const struct owner_group *g, const char *more)
{
	char msg[1400], subject[300], key[400], label[600], c[32], b[32], names[700];
	const char *owner = g->owner_name ? rules_display(g->owner_name) : g->owner_pid;
	size_t o = 0;
	rules_count_format(c, sizeof(c), g->count);
	model_bytes_format(b, sizeof(b), g->bytes);
	names[0] = '\0';
	for (size_t k = 0; k < g->nnames && o < sizeof(names); k++)
		o += (size_t)snprintf(names + o, sizeof(names) - o, "%s`%s`",
		                      k == 0                                 ? ""
		                      : k + 1 == g->nnames && !g->more_names ? " and "
		                                                             : ", ",
		                      g->names[k]);
	if (g->more_names && o < sizeof(names))
		snprintf(names + o, sizeof(names) - o, " and %zu more names", g->more_names);
	snprintf(msg, sizeof(msg),
	         "%s ETS tables %s (owner %s%s%s) created during the run still alive, %s "
	         "together%s%s; %s",
	         c, names, owner ? owner : "?", !g->owner_name && g->owner_call ? ", " : "",
	         !g->owner_name && g->owner_call ? rules_display(g->owner_call) : "", b,
	         g->module ? ", from test module " : "", g->module ? rules_display(g->module) : "",
	         more);
	if (g->nnames == 1)
		snprintf(subject, sizeof(subject), "left_alive group %s", g->names[0]);
	else
		snprintf(subject, sizeof(subject), "left_alive group owner %s",
		         owner ? owner : "?");
	snprintf(key, sizeof(key), "ets_owner:%s", g->owner_pid ? g->owner_pid : "?");
	/* the label as the contexts quote it: the names without their quotes */
	size_t lo = (size_t)snprintf(label, sizeof(label), "%s ETS tables ", c);
	for (size_t k = 0; k < g->nnames && lo < sizeof(label); k++)
		lo += (size_t)snprintf(label + lo, sizeof(label) - lo, "%s%s", k ? ", " : "",
		                       g->names[k]);
	if (g->more_names && lo < sizeof(label))
		lo += (size_t)snprintf(label + lo, sizeof(label) - lo, " and %zu more names",
		                       g->more_names);
	if (lo < sizeof(label))
		snprintf(label + lo, sizeof(label) - lo, " (owner %s)", owner ? owner : "?");
	if (findings_add(out, RULE, subject, VERDICT_FAIL, 0, g->bytes, 0, -1, msg) < 0)
		return -1;
	struct finding *f = &out->items[out->count - 1];
	if (g->module && !(f->culprit = strdup(g->module)))
		return -1;
	return consolidate_name(f, key, label, MEM_ETS, g->bytes);
}

/* The owners a snapshot's left-alive tables are grouped under, at most. */
#define OWNER_GROUPS_MAX 64

static int check_left_alive(struct findings *out, const struct snapshot *after,
                            const struct ets_config *cfg)
{
	struct culprits big = {0};
	struct owner_group og[OWNER_GROUPS_MAX];
	size_t created = 0, nog;
	char msg[1024], fl[32], n[32], lim[32], subject[300];
	int rc = 0;

	if (cfg->max_left_alive == RULES_OFF)
		return 0;
	model_bytes_format(fl, sizeof(fl), cfg->left_alive_floor);
	rules_count_format(lim, sizeof(lim), cfg->max_left_alive);
	if (after->nets == 0)
		return findings_add(out, RULE, "left_alive", VERDICT_SKIP, 0, 0,
		                    cfg->left_alive_floor, -1,
		                    "ETS tables left alive: the after-snapshot lists no ETS tables "
		                    "(a light snapshot)");
	nog = owner_groups(og, OWNER_GROUPS_MAX, after);
	size_t groups = 0;
	for (size_t i = 0; i < nog; i++)
		groups += group_big(&og[i], cfg);
	for (size_t i = 0; i < after->nets; i++) {
		const struct ets_info *t = &after->ets[i];
		if (!t->created)
			continue;
		created++;
		if (t->memory >= cfg->left_alive_floor && !in_big_group(og, nog, t, cfg) &&
		    culprits_add(&big, i, t->memory) < 0)
			goto oom;
	}
	rules_count_format(n, sizeof(n), (int64_t)(big.count + groups));
	if ((int64_t)(big.count + groups) <= cfg->max_left_alive) {
		snprintf(msg, sizeof(msg),
		         "%zu ETS %s created during the run %s still alive, %s of at least %s "
		         "(limit %s)",
		         created, created == 1 ? "table" : "tables", created == 1 ? "is" : "are", n,
		         fl, lim);
		rc = findings_add(out, RULE, "left_alive", VERDICT_PASS, 0, 0,
		                  cfg->left_alive_floor, -1, msg);
		goto out;
	}
	/* a group is judged on its total and named as one */
	for (size_t i = 0; i < nog; i++) {
		char more[200];
		snprintf(more, sizeof(more),
		         "%s %s of at least %s left alive (one owner's tables count as one), "
		         "max_left_alive %s",
		         n, big.count + groups == 1 ? "table or group" : "tables or groups", fl,
		         lim);
		if (group_big(&og[i], cfg) && group_finding(out, &og[i], more) < 0)
			goto oom;
	}
	culprits_sort(&big);
	for (size_t k = 0; k < big.count && k < RULES_MAX_CULPRITS; k++) {
		const struct ets_info *t = &after->ets[big.items[k].index];
		char ms[32], rows[32];
		model_bytes_format(ms, sizeof(ms), t->memory);
		rules_count_format(rows, sizeof(rows), t->size);
		snprintf(msg, sizeof(msg),
		         "ETS table %s (owner %s) was created during the run and left alive with "
		         "%s in %s rows; %s such tables of at least %s, max_left_alive %s",
		         table_name(t), owner_name(t), ms, rows, n, fl, lim);
		snprintf(subject, sizeof(subject), "left_alive %s", table_name(t));
		if (findings_add(out, RULE, subject, VERDICT_FAIL, 0, t->memory,
		                 cfg->left_alive_floor, -1, msg) < 0 ||
		    table_structure(&out->items[out->count - 1], after, t, t->memory) < 0)
			goto oom;
	}
	if (culprits_add_more(out, RULE, "left_alive", &big,
	                      "ETS tables created during the run and left alive") < 0)
		goto oom;
	goto out;
oom:
	rc = -1;
out:
	culprits_clear(&big);
	return rc;
}

int ets_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
              const struct ets_config *cfg)
{
	if (check_total(out, before, after, cfg) < 0)
		return -1;
	for (size_t i = 0; i < cfg->ntables; i++)
		if (check_table_limit(out, before, after, &cfg->tables[i]) < 0)
			return -1;
	return check_left_alive(out, after, cfg);
}
