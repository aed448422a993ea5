/* tests/test_drilldown.c: what grew: the drill-down that names the structure first
 * in failing categories, the ports and persistent_term rules, and the decoding of the
 * after-snapshot's diff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ei.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/store/snapshot_json.h"
#include "gate/node/term.h"
#include "gate/probe/probe.h"
#include "model/finding.h"
#include "rules/rules.h"

/* ---- building snapshots (owned by the snapshot: snapshot_clear frees them) ---- */

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void snap(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		s->mem[i] = 20000000;
		s->have[i] = true;
	}
	s->atom_count = 20000;
	s->atom_limit = 1048576;
	s->word_size = 8;
	s->have_pterm = true;
	s->pterm_count = 20;
	s->pterm_memory = 30000;
}

static void add_grew_ets(struct snapshot *s, const char *name, const char *owner_name,
                         int64_t rows0, int64_t rows, int64_t bytes0, int64_t bytes, bool created)
{
	s->grew_ets = realloc(s->grew_ets, (s->ngrew_ets + 1) * sizeof(*s->grew_ets));
	assert_non_null(s->grew_ets);
	struct ets_growth *e = &s->grew_ets[s->ngrew_ets++];
	memset(e, 0, sizeof(*e));
	e->name = dup0(name);
	e->id = dup0("#Ref<0.1.2.3>");
	e->owner_pid = dup0("<0.200.0>");
	e->owner_name = dup0(owner_name);
	e->owner_call = dup0("Corpus.Cache:init/1");
	e->rows_before = rows0;
	e->rows = rows;
	e->bytes_before = bytes0;
	e->bytes = bytes;
	e->created = created;
	s->have_growth = true;
}

static struct proc_growth *add_grew_proc(struct snapshot *s, const char *pid, const char *name,
                                         const char *call, int64_t mem0, int64_t mem)
{
	s->grew_procs = realloc(s->grew_procs, (s->ngrew_procs + 1) * sizeof(*s->grew_procs));
	assert_non_null(s->grew_procs);
	struct proc_growth *p = &s->grew_procs[s->ngrew_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = dup0(pid);
	p->name = dup0(name);
	p->initial_call = dup0(call);
	p->current_function = dup0("gen_server:loop/7");
	p->memory_before = mem0;
	p->memory = mem;
	s->have_growth = true;
	return p;
}

static void add_port_group(struct snapshot *s, const char *name, const char *module, int64_t n)
{
	s->ports = realloc(s->ports, (s->nports + 1) * sizeof(*s->ports));
	assert_non_null(s->ports);
	struct port_group *g = &s->ports[s->nports++];
	memset(g, 0, sizeof(*g));
	g->name = dup0(name);
	g->owner_pid = dup0("<0.250.0>");
	g->owner_call = dup0("spawned fun in Process:sleep/1");
	g->module = dup0(module);
	g->count = n;
	g->os_pid = 4242;
	s->ports_opened += n;
	s->have_growth = true;
}

static void add_key_group(struct key_group **list, size_t *n, const char *key, int64_t count,
                          int64_t bytes, const char *example)
{
	*list = realloc(*list, (*n + 1) * sizeof(**list));
	assert_non_null(*list);
	struct key_group *g = &(*list)[(*n)++];
	g->key = dup0(key);
	g->count = count;
	g->bytes = bytes;
	g->example = dup0(example);
}

/* a failing growth finding of category cat that grew by delta */
static void fail_growth(struct findings *f, enum mem_cat cat, int64_t delta)
{
	char msg[128];
	snprintf(msg, sizeof(msg), "%s grew a lot", mem_cat_name(cat));
	assert_int_equal(findings_add(f, "growth", mem_cat_name(cat), VERDICT_FAIL, 20000000,
	                              20000000 + delta, 1000000, 10.0, msg),
	                 0);
	f->items[f->count - 1].delta = delta;
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- the drill-down ---- */

static void test_list_orders_by_bytes(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct drill_item items[DRILL_MAX];

	snap(&b);
	snap(&a);
	add_grew_ets(&a, "corpus_cache", "Corpus.Cache", 10, 60010, 5000, 7105000, false);
	struct proc_growth *p = add_grew_proc(&a, "<0.234.0>", "Corpus.Store",
	                                      "Agent.Server:init/1", 3000, 9603000);
	p->ancestor = dup0("Corpus.Supervisor");
	p->bin_before = 0;
	p->bin = 200000;
	a.pterm_count = 4020;
	a.pterm_memory = 642000;
	add_key_group(&a.pterm_new, &a.npterm_new, "{Corpus.Settings, _}", 4000, 128000,
	              "{Corpus.Settings, 17}");
	a.atom_count = 80000;
	a.mem[MEM_ATOM_USED] = b.mem[MEM_ATOM_USED] + 2000000;
	add_key_group(&a.atoms_new, &a.natoms_new, "user_#", 60000, 0, "user_1");

	size_t n = drilldown_list(items, DRILL_MAX, &b, &a);
	assert_int_equal(n, 5);
	assert_int_equal(items[0].kind, DRILL_PROCESS);
	assert_string_equal(items[0].text, "process Corpus.Store (<0.234.0>, Agent.Server:init/1, "
	                                   "under Corpus.Supervisor) memory +9.6 MB");
	assert_int_equal(items[1].kind, DRILL_ETS);
	assert_string_equal(items[1].text,
	                    "ETS table corpus_cache (owner Corpus.Cache) +60 000 rows, +7.1 MB");
	assert_int_equal(items[2].kind, DRILL_ATOMS);
	assert_string_equal(items[2].text, "atoms +60 000: user_# x 60 000 (e.g. user_1)");
	assert_int_equal(items[3].kind, DRILL_PTERM);
	assert_string_equal(items[3].text,
	                    "persistent_term +4 000 entries, +612.0 kB: "
	                    "{Corpus.Settings, _} x 4 000 (e.g. {Corpus.Settings, 17})");
	assert_int_equal(items[4].kind, DRILL_BINARY);
	assert_non_null(strstr(items[4].text, "holds +200.0 kB of refc binaries"));
	/* a cap on the list is kept */
	assert_int_equal(drilldown_list(items, 2, &b, &a), 2);
	/* nothing without an after-snapshot */
	assert_int_equal(drilldown_list(items, DRILL_MAX, &b, NULL), 0);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

static void test_annotate_names_structure_first(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};

	snap(&b);
	snap(&a);
	add_grew_ets(&a, "corpus_cache", "Corpus.Cache", 0, 60000, 0, 7100000, true);
	struct proc_growth *p =
	        add_grew_proc(&a, "<0.240.0>", NULL, "erlang:apply/2", 2000, 9600000);
	free(p->current_function);
	p->current_function = dup0("Process:sleep/1");
	p->born = true;
	fail_growth(&f, MEM_ETS, 7200000);
	fail_growth(&f, MEM_PROCESSES_USED, 9500000);
	fail_growth(&f, MEM_TOTAL, 17000000);
	fail_growth(&f, MEM_CODE, 9000000);
	fail_growth(&f, MEM_BINARY, 3000000);
	assert_int_equal(findings_add(&f, "growth", "system", VERDICT_PASS, 1, 2, 0, 10, "fine"),
	                 0);
	assert_int_equal(findings_add(&f, "ets", "table corpus_cache", VERDICT_FAIL, 0, 7100000, 0,
	                              -1, "ETS table corpus_cache (owner Corpus.Cache) grew"),
	                 0);

	/* any rule that judges a category: the baseline too */
	assert_int_equal(findings_add(&f, "baseline", "ets", VERDICT_FAIL, 0, 7100000, 1000000,
	                              20.0, "ets is 7.1 MB above its baseline"),
	                 0);

	assert_int_equal(drilldown_annotate(&f, &b, &a), 0);
	assert_true(
	        starts_with(f.items[7].message, "ETS table corpus_cache (owner Corpus.Cache, "));
	assert_non_null(strstr(f.items[7].message, "; ets is 7.1 MB above its baseline"));
	/* the category's structure, then the original message */
	assert_string_equal(f.items[0].message, "ETS table corpus_cache (owner Corpus.Cache, "
	                                        "created during the run) +60 000 rows, +7.1 MB; "
	                                        "ets grew a lot");
	assert_string_equal(f.items[1].message,
	                    "process <0.240.0> (spawned fun in Process:sleep/1) memory +9.6 MB, "
	                    "born during the run; processes_used grew a lot");
	/* total: the largest two whose bytes count in it */
	assert_true(starts_with(f.items[2].message, "process <0.240.0>"));
	assert_non_null(strstr(f.items[2].message, ", ETS table corpus_cache"));
	assert_non_null(strstr(f.items[2].message, "; total grew a lot"));
	/* code: nothing grew that counts in it; binary: nothing held binaries */
	assert_string_equal(f.items[3].message, "code grew a lot");
	assert_string_equal(f.items[4].message, "binary grew a lot");
	/* passing findings and findings that name their structure are left alone */
	assert_string_equal(f.items[5].message, "fine");
	assert_string_equal(f.items[6].message, "ETS table corpus_cache (owner Corpus.Cache) grew");
	/* a second pass names nothing twice */
	char *once = strdup(f.items[0].message);
	assert_int_equal(drilldown_annotate(&f, &b, &a), 0);
	assert_string_equal(f.items[0].message, once);
	free(once);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* Binaries held in an ETS table's rows count under binary: the table is named for it, with
 * the new rows' share of the sampled estimate. */
static void test_annotate_binaries_in_ets(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};

	snap(&b);
	snap(&a);
	add_grew_ets(&a, "demo_sessions", "Demo.Sessions", 0, 20000, 2700, 4100000, true);
	a.grew_ets[0].bin_bytes = 10300000;
	add_grew_ets(&a, "old_cache", "Old.Cache", 10000, 20000, 1000000, 2000000, false);
	a.grew_ets[1].bin_bytes = 4000000; /* half its rows are new: 2 MB of it */
	fail_growth(&f, MEM_BINARY, 10300000);
	assert_int_equal(drilldown_annotate(&f, &b, &a), 0);
	assert_string_equal(f.items[0].message,
	                    "ETS table demo_sessions (owner Demo.Sessions, created during the run) "
	                    "+20 000 rows, +4.1 MB, holding ~10.3 MB of refc binaries, ETS table "
	                    "old_cache (owner Old.Cache) +10 000 rows, +1.0 MB, holding ~2.0 MB of "
	                    "refc binaries; binary grew a lot");
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* A structure that explains under a tenth of a category's growth is not named for it. */
static void test_annotate_share(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};

	snap(&b);
	snap(&a);
	add_grew_ets(&a, "small", "Small.Owner", 0, 10, 0, 99999, false);
	fail_growth(&f, MEM_ETS, 1000000);
	fail_growth(&f, MEM_SYSTEM, 999990);
	/* the judged delta of system is below ten times the table */
	assert_int_equal(drilldown_annotate(&f, &b, &a), 0);
	assert_string_equal(f.items[0].message, "ets grew a lot");
	assert_true(
	        starts_with(f.items[1].message, "ETS table small (owner Small.Owner) +10 rows"));
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* Rules that judge a count name their kind's largest structure: born processes, atoms, the
 * ETS total; "and N more" and other rules' findings are left alone. */
static void test_annotate_count_rules(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};

	snap(&b);
	snap(&a);
	a.born_count = 500;
	a.born_memory = 1400000;
	a.born = calloc(1, sizeof(*a.born));
	a.nborn = 1;
	a.born[0] = (struct proc_group){.key = dup0("Elixir.Plant.Worker:init/1"),
	                                .count = 500,
	                                .memory = 1400000,
	                                .example_pid = dup0("<0.300.0>")};
	a.atom_count = 80000;
	add_key_group(&a.atoms_new, &a.natoms_new, "plant_user_#", 60000, 0, "plant_user_1");
	add_grew_ets(&a, "sessions", NULL, 0, 20000, 0, 4100000, true);
	findings_add(&f, "process", "born", VERDICT_FAIL, 0, 500, 0, -1, "500 processes born");
	findings_add(&f, "atom", "growth", VERDICT_FAIL, 20000, 80000, 0, -1, "atom count grew");
	findings_add(&f, "ets", "total", VERDICT_FAIL, 0, 0, 0, -1, "ETS total grew");
	findings_add(&f, "process", "mailbox", VERDICT_FAIL, 0, 0, 0, -1, "and 3 more processes");
	findings_add(&f, "allocator", "fragmentation eheap_alloc", VERDICT_FAIL, 0, 0, 0, -1,
	             "eheap_alloc wastes");

	assert_int_equal(drilldown_annotate(&f, &b, &a), 0);
	/* the process rule's born finding names its groups and their starters itself: no lead,
	 * which would say them a second time */
	assert_string_equal(f.items[0].message, "500 processes born");
	assert_string_equal(
	        f.items[1].message,
	        "atoms +60 000: plant_user_# x 60 000 (e.g. plant_user_1); atom count grew");
	assert_true(starts_with(f.items[2].message,
	                        "ETS table sessions (owner <0.200.0> "
	                        "Corpus.Cache:init/1, created during the run)"));
	assert_string_equal(f.items[3].message, "and 3 more processes");
	assert_string_equal(f.items[4].message, "eheap_alloc wastes");
	/* no snapshots: nothing to say, nothing changed */
	assert_int_equal(drilldown_annotate(&f, NULL, NULL), 0);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* ---- the ports rule ---- */

static const struct finding *last(const struct findings *f)
{
	assert_true(f->count > 0);
	return &f->items[f->count - 1];
}

static void test_ports(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct ports_config cfg;

	ports_config_default(&cfg);
	assert_int_equal(cfg.max_opened, 50);
	snap(&b);
	snap(&a);
	/* no diff against the before set: skipped */
	assert_int_equal(ports_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_SKIP);

	/* one supervised connection left open passes; so does the limit itself */
	add_port_group(&a, "tcp_inet", NULL, 1);
	assert_int_equal(ports_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_PASS);
	assert_string_equal(last(&f)->message,
	                    "1 port opened during the run is still open, limit 50");
	assert_null(last(&f)->culprit);
	a.ports_opened = 50;
	assert_int_equal(ports_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_PASS);

	/* hundreds fail, the groups first */
	a.ports_opened = 1;
	add_port_group(&a, "cat", "Elixir.Ports.LeakTest", 300);
	/* the probe ships the largest group first */
	struct port_group tmp = a.ports[0];
	a.ports[0] = a.ports[1];
	a.ports[1] = tmp;
	assert_int_equal(ports_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_FAIL);
	assert_string_equal(
	        last(&f)->message,
	        "port cat x 300, owner <0.250.0> (spawned fun in Process:sleep/1) from "
	        "test module Ports.LeakTest, e.g. OS pid 4242, port tcp_inet x 1, owner "
	        "<0.250.0> (spawned fun in Process:sleep/1), e.g. OS pid 4242; 301 ports "
	        "opened during the run are still open, limit 50");
	assert_string_equal(last(&f)->rule, "ports");
	assert_string_equal(last(&f)->subject, "open");
	/* its culprit (a reviewer's file and line): the largest group's test module */
	assert_string_equal(last(&f)->culprit, "Elixir.Ports.LeakTest");
	assert_int_equal(last(&f)->unit, UNIT_COUNT);

	/* off */
	cfg.max_opened = RULES_OFF;
	assert_int_equal(ports_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_SKIP);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* ---- the persistent_term rule ---- */

static void test_pterm(void **state)
{
	(void)state;
	struct snapshot b, a;
	struct findings f = {0};
	struct pterm_config cfg;

	pterm_config_default(&cfg);
	assert_int_equal(cfg.max_entries, 1000);
	assert_int_equal(cfg.max_bytes, 1000000);
	snap(&b);
	snap(&a);
	a.pterm_count = b.pterm_count + 1000;
	a.pterm_memory = b.pterm_memory + 1000000;
	assert_int_equal(pterm_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_PASS); /* at both limits */

	a.pterm_count++;
	add_key_group(&a.pterm_new, &a.npterm_new, "{Foo.Settings, _}", 1001, 32000,
	              "{Foo.Settings, 1}");
	assert_int_equal(pterm_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_FAIL);
	assert_string_equal(last(&f)->message,
	                    "persistent_term {Foo.Settings, _} x 1 001 (e.g. {Foo.Settings, 1}), "
	                    "32.0 kB; persistent_term grew +1 001 entries, +1.0 MB (now 1 021 "
	                    "entries, 1.0 MB), limit +1 000 entries, +1.0 MB");
	assert_int_equal(last(&f)->delta, 1000000);

	/* bytes alone fail too; with entries off */
	cfg.max_entries = RULES_OFF;
	assert_int_equal(pterm_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_PASS);
	a.pterm_memory += 1;
	assert_int_equal(pterm_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_FAIL);
	assert_non_null(strstr(last(&f)->message, "limit +off entries"));

	/* both off; a snapshot without persistent_term */
	cfg.max_bytes = RULES_OFF;
	assert_int_equal(pterm_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_SKIP);
	pterm_config_default(&cfg);
	b.have_pterm = false;
	assert_int_equal(pterm_check(&f, &b, &a, &cfg), 0);
	assert_int_equal(last(&f)->verdict, VERDICT_SKIP);
	findings_clear(&f);
	snapshot_clear(&a);
	snapshot_clear(&b);
}

/* ---- decoding the after-snapshot's diff ---- */

static void bin(ei_x_buff *x, const char *s)
{
	ei_x_encode_binary(x, s, (long)strlen(s));
}

/* code_new: the modules loaded during the run by origin, with their literals' refc bytes */
static void encode_code_new(ei_x_buff *x)
{
	static const char *const keys[] = {"disk", "test", "created"};
	ei_x_encode_atom(x, "code_new");
	ei_x_encode_map_header(x, 5);
	for (int i = 0; i < 3; i++) {
		ei_x_encode_atom(x, keys[i]);
		ei_x_encode_tuple_header(x, 3);
		ei_x_encode_long(x, 10 * (i + 1));
		ei_x_encode_long(x, 100000 * (i + 1));
		ei_x_encode_long(x, 1000000 * (i + 1));
	}
	ei_x_encode_atom(x, "literals_unread");
	ei_x_encode_long(x, 7);
	ei_x_encode_atom(x, "groups");
	ei_x_encode_empty_list(x);
}

static void encode_reply(ei_x_buff *x, bool bad)
{
	ei_x_new_with_version(x);
	ei_x_encode_map_header(x, 16);
	encode_code_new(x);
	ei_x_encode_atom(x, "memory");
	ei_x_encode_map_header(x, 1);
	ei_x_encode_atom(x, "total");
	ei_x_encode_long(x, 30000000);
	const char *keys[] = {"process_count", "ets_count",   "port_count",
	                      "gc_us",         "taken_at_ms", "atom_count"};
	for (int i = 0; i < 6; i++) {
		ei_x_encode_atom(x, keys[i]);
		ei_x_encode_long(x, 10 + i);
	}
	ei_x_encode_atom(x, "pterm_count");
	ei_x_encode_long(x, 4020);
	ei_x_encode_atom(x, "pterm_memory");
	ei_x_encode_long(x, 642000);
	ei_x_encode_atom(x, "grew_procs");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_tuple_header(x, 13);
	bin(x, "<0.234.0>");
	bin(x, "Corpus.Store");
	bin(x, "Agent.Server:init/1");
	bin(x, "gen_server:loop/7");
	bin(x, "Corpus.Supervisor");
	bin(x, "");
	for (int i = 0; i < 6; i++)
		ei_x_encode_long(x, bad && i == 3 ? -1 : 1000 * (i + 1));
	ei_x_encode_atom(x, "false");
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "grew_ets");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_tuple_header(x, 12);
	bin(x, "corpus_cache");
	bin(x, "#Ref<0.1.2.3>");
	bin(x, "<0.200.0>");
	bin(x, "Corpus.Cache");
	bin(x, "Corpus.Cache:init/1");
	bin(x, "Corpus.CacheTest");
	ei_x_encode_long(x, 0);
	ei_x_encode_long(x, 60000);
	ei_x_encode_long(x, 2440);
	ei_x_encode_long(x, 7100000);
	ei_x_encode_atom(x, "true");
	ei_x_encode_long(x, 6000000);
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "pterm_new");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_tuple_header(x, 4);
	bin(x, "{Corpus.Settings, _}");
	ei_x_encode_long(x, 4000);
	ei_x_encode_long(x, 128000);
	bin(x, "{Corpus.Settings, 17}");
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "atoms_new");
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "ports_opened");
	ei_x_encode_long(x, 300);
	ei_x_encode_atom(x, "ports");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_tuple_header(x, 7);
	bin(x, "cat");
	bin(x, "<0.250.0>");
	bin(x, "");
	bin(x, "spawned fun in Process:sleep/1");
	bin(x, "Ports.LeakTest");
	ei_x_encode_long(x, 300);
	ei_x_encode_long(x, 4242);
	ei_x_encode_empty_list(x);
}

static void test_decode_growth(void **state)
{
	(void)state;
	ei_x_buff x;
	struct term *t = NULL;
	struct snapshot s;
	char err[256] = "";
	size_t idx = 0;

	encode_reply(&x, false);
	assert_int_equal(term_decode(&t, (const unsigned char *)x.buff, (size_t)x.index, &idx, NULL,
	                             err, sizeof(err)),
	                 0);
	if (probe_snapshot_decode(t, &s, err, sizeof(err)) < 0)
		fail_msg("decode: %s", err);
	assert_true(s.have_pterm && s.have_growth);
	assert_int_equal(s.pterm_count, 4020);
	assert_int_equal(s.ngrew_procs, 1);
	assert_string_equal(s.grew_procs[0].name, "Corpus.Store");
	assert_string_equal(s.grew_procs[0].ancestor, "Corpus.Supervisor");
	assert_null(s.grew_procs[0].module);
	assert_int_equal(s.grew_procs[0].memory_before, 1000);
	assert_int_equal(s.grew_procs[0].bin, 6000);
	assert_int_equal(s.ngrew_ets, 1);
	assert_true(s.grew_ets[0].created);
	assert_int_equal(s.grew_ets[0].rows, 60000);
	assert_string_equal(s.grew_ets[0].module, "Corpus.CacheTest");
	assert_int_equal(s.grew_ets[0].bin_bytes, 6000000);
	assert_int_equal(s.npterm_new, 1);
	assert_string_equal(s.pterm_new[0].example, "{Corpus.Settings, 17}");
	assert_int_equal(s.natoms_new, 0);
	assert_int_equal(s.ports_opened, 300);
	assert_int_equal(s.nports, 1);
	assert_null(s.ports[0].owner_name);
	assert_int_equal(s.ports[0].os_pid, 4242);
	assert_true(s.have_code_new && s.have_code_lits);
	assert_int_equal(s.code_disk.lit_bytes, 1000000);
	assert_int_equal(s.code_test.count, 20);
	assert_int_equal(s.code_created.lit_bytes, 3000000);
	assert_int_equal(s.code_lits_unread, 7);
	snapshot_clear(&s);
	term_free(t);
	ei_x_free(&x);

	/* a negative figure is refused, naming the list */
	encode_reply(&x, true);
	idx = 0;
	assert_int_equal(term_decode(&t, (const unsigned char *)x.buff, (size_t)x.index, &idx, NULL,
	                             err, sizeof(err)),
	                 0);
	assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot: grew_procs entry 1 is malformed");
	term_free(t);
	ei_x_free(&x);
}

/* gate snapshot --json of an after-snapshot carries what grew and persistent_term. */
static void test_snapshot_json_what_grew(void **state)
{
	(void)state;
	struct snapshot a;
	snap(&a);
	json_t *j = snapshot_json(&a);
	assert_non_null(j);
	assert_null(json_object_get(j, "what_grew")); /* no before set: absent */
	assert_int_equal(
	        json_integer_value(json_object_get(json_object_get(j, "persistent_term"), "count")),
	        20);
	json_decref(j);

	add_grew_ets(&a, "corpus_cache", "Corpus.Cache", 0, 60000, 0, 7100000, true);
	add_port_group(&a, "cat", "Elixir.Ports.LeakTest", 300);
	add_key_group(&a.atoms_new, &a.natoms_new, "user_#", 60000, 0, "user_1");
	j = snapshot_json(&a);
	assert_non_null(j);
	json_t *w = json_object_get(j, "what_grew");
	assert_non_null(w);
	assert_int_equal(json_integer_value(json_object_get(w, "ports_opened")), 300);
	json_t *t = json_array_get(json_object_get(w, "ets"), 0);
	assert_string_equal(json_string_value(json_object_get(t, "name")), "corpus_cache");
	assert_int_equal(json_integer_value(json_object_get(t, "size")), 60000);
	assert_true(json_is_true(json_object_get(t, "created")));
	assert_string_equal(json_string_value(json_object_get(
	                            json_array_get(json_object_get(w, "ports"), 0), "module")),
	                    "Elixir.Ports.LeakTest");
	assert_int_equal(json_array_size(json_object_get(w, "atoms_new")), 1);
	assert_int_equal(json_array_size(json_object_get(w, "processes")), 0);
	json_decref(j);
	snapshot_clear(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_list_orders_by_bytes),
	        cmocka_unit_test(test_annotate_names_structure_first),
	        cmocka_unit_test(test_annotate_binaries_in_ets),
	        cmocka_unit_test(test_annotate_share),
	        cmocka_unit_test(test_annotate_count_rules),
	        cmocka_unit_test(test_ports),
	        cmocka_unit_test(test_pterm),
	        cmocka_unit_test(test_decode_growth),
	        cmocka_unit_test(test_snapshot_json_what_grew),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
