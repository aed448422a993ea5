/* tests/rules_fixture.h: hand-built snapshots for the rules' tests (snap, add_proc, add_ets,
 * add_alloc, add_group, deep) and helpers that read findings (find, expect, count, has).
 * Header-only: each test is one program. */
#ifndef GATE_TESTS_RULES_FIXTURE_H
#define GATE_TESTS_RULES_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/rules.h"

/* ---- building snapshots (owned by the snapshot: snapshot_clear frees them) ---- */

static inline char *copy_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static inline void snap(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		s->mem[i] = 10000000;
		s->have[i] = true;
	}
	s->atom_count = 20000;
	s->atom_limit = 1048576;
	s->process_count = 100;
	s->word_size = 8;
}

/* The pointers these return are valid until the next add to the same snapshot. */
static inline struct proc_info *add_proc(struct snapshot *s, const char *pid, const char *name,
                                         const char *initial_call)
{
	s->procs = realloc(s->procs, (s->nprocs + 1) * sizeof(*s->procs));
	assert_non_null(s->procs);
	struct proc_info *p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = copy_or_null(pid);
	p->name = copy_or_null(name);
	p->initial_call = copy_or_null(initial_call);
	p->memory = 2000;
	p->heap_size = 1000;
	p->total_heap_size = 1500;
	return p;
}

static inline struct ets_info *add_ets(struct snapshot *s, const char *name, const char *id,
                                       const char *owner_pid, const char *owner_name,
                                       int64_t memory, int64_t size, bool created)
{
	s->ets = realloc(s->ets, (s->nets + 1) * sizeof(*s->ets));
	assert_non_null(s->ets);
	struct ets_info *t = &s->ets[s->nets++];
	memset(t, 0, sizeof(*t));
	t->name = copy_or_null(name);
	t->id = copy_or_null(id ? id : name);
	t->named = id == NULL;
	t->type = copy_or_null("set");
	t->protection = copy_or_null("protected");
	t->owner_pid = copy_or_null(owner_pid);
	t->owner_name = copy_or_null(owner_name);
	t->memory = memory;
	t->size = size;
	t->created = created;
	return t;
}

static inline struct alloc_info *add_alloc(struct snapshot *s, const char *type, int64_t carriers,
                                           int64_t blocks, double fragmentation)
{
	s->allocs = realloc(s->allocs, (s->nallocs + 1) * sizeof(*s->allocs));
	assert_non_null(s->allocs);
	struct alloc_info *a = &s->allocs[s->nallocs++];
	a->type = copy_or_null(type);
	a->carriers_size = carriers;
	a->blocks_size = blocks;
	a->fragmentation = fragmentation;
	return a;
}

static inline void add_group(struct snapshot *s, const char *key, int64_t count, int64_t memory,
                             const char *pid)
{
	s->born = realloc(s->born, (s->nborn + 1) * sizeof(*s->born));
	assert_non_null(s->born);
	struct proc_group *g = &s->born[s->nborn++];
	memset(g, 0, sizeof(*g));
	g->key = copy_or_null(key);
	g->count = count;
	g->memory = memory;
	g->example_pid = copy_or_null(pid);
}

/* A deep snapshot of a quiet node: a few system processes, tables and allocators. */
static inline void deep(struct snapshot *s)
{
	snap(s);
	add_proc(s, "<0.0.0>", "init", "otp_ring0:start/2");
	add_proc(s, "<0.1.0>", "erts_code_purger", "erts_code_purger:start/0");
	add_proc(s, "<0.44.0>", "Elixir.Logger", "proc_lib:init_p/5");
	add_ets(s, "ac_tab", NULL, "<0.42.0>", "application_controller", 7000, 40, false);
	add_ets(s, "file_io_servers", NULL, "<0.45.0>", "file_server_2", 1000, 0, false);
	add_alloc(s, "eheap_alloc", 8000000, 4000000, 0.5);
	add_alloc(s, "binary_alloc", 2000000, 1500000, 0.25);
}

/* ---- reading findings ---- */

static inline const struct finding *find(const struct findings *f, const char *rule,
                                         const char *subject)
{
	for (size_t i = 0; i < f->count; i++)
		if (strcmp(f->items[i].rule, rule) == 0 &&
		    strcmp(f->items[i].subject, subject) == 0)
			return &f->items[i];
	return NULL;
}

/* The finding, which must exist with that verdict. */
static inline const struct finding *expect(const struct findings *f, const char *rule,
                                           const char *subject, enum verdict v)
{
	const struct finding *x = find(f, rule, subject);
	if (!x) {
		for (size_t i = 0; i < f->count; i++)
			print_message("  have %s/%s %s: %s\n", f->items[i].rule,
			              f->items[i].subject, verdict_name(f->items[i].verdict),
			              f->items[i].message);
		fail_msg("no finding %s/%s", rule, subject);
	}
	if (x->verdict != v)
		fail_msg("%s/%s is %s, want %s: %s", rule, subject, verdict_name(x->verdict),
		         verdict_name(v), x->message);
	return x;
}

static inline size_t count(const struct findings *f, const char *rule, int verdict)
{
	size_t n = 0;
	for (size_t i = 0; i < f->count; i++)
		if (strcmp(f->items[i].rule, rule) == 0 &&
		    (verdict < 0 || f->items[i].verdict == (enum verdict)verdict))
			n++;
	return n;
}

#define ANY (-1)

static inline void has(const struct finding *x, const char *text)
{
	if (!strstr(x->message, text))
		fail_msg("%s/%s: message lacks \"%s\":\n%s", x->rule, x->subject, text, x->message);
}

/* n tests in run, most passed, some excluded. */
static inline void add_tests(struct test_run *run, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct test_result *t = test_run_add(run);
		assert_non_null(t);
		t->state = i % 7 ? TEST_PASSED : TEST_EXCLUDED; /* every test's name is an atom */
	}
}

#endif
