/* model/snapshot.c: the memory categories' names, and freeing a snapshot */
#include "model/snapshot.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

static const char *const mem_cat_names[MEM_CAT_COUNT] = {
        "total",     "processes", "processes_used", "system", "atom",
        "atom_used", "binary",    "code",           "ets",
};

const char *mem_cat_name(enum mem_cat cat)
{
	if ((int)cat < 0 || cat >= MEM_CAT_COUNT)
		return NULL;
	return mem_cat_names[cat];
}

int mem_cat_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < MEM_CAT_COUNT; i++)
		if (strcmp(mem_cat_names[i], name) == 0)
			return i;
	return -1;
}

void starter_clear(struct starter *s)
{
	if (!s)
		return;
	free(s->test);
	free(s->file);
	free(s->module);
	free(s->code);
	free(s->by);
	memset(s, 0, sizeof(*s));
}

static void inside_parts_free(struct inside_part *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].where);
		free(p[i].type);
		free(p[i].unit);
	}
	free(p);
}

void proc_inside_clear(struct proc_inside *in)
{
	if (!in)
		return;
	free(in->pid);
	free(in->kind);
	free(in->why);
	inside_parts_free(in->parts, in->nparts);
	inside_parts_free(in->parts_before, in->nparts_before);
	starter_clear(&in->started);
	memset(in, 0, sizeof(*in));
}

void snapshot_clear(struct snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++) {
		free(s->procs[i].pid);
		free(s->procs[i].name);
		free(s->procs[i].initial_call);
		free(s->procs[i].current_function);
	}
	free(s->procs);
	for (size_t i = 0; i < s->nborn; i++) {
		free(s->born[i].key);
		free(s->born[i].example_pid);
		starter_clear(&s->born[i].started);
	}
	free(s->born);
	for (size_t i = 0; i < s->nowners; i++)
		free(s->owners[i].module);
	free(s->owners);
	for (size_t i = 0; i < s->nets; i++) {
		free(s->ets[i].name);
		free(s->ets[i].id);
		free(s->ets[i].type);
		free(s->ets[i].protection);
		free(s->ets[i].owner_pid);
		free(s->ets[i].owner_name);
	}
	free(s->ets);
	for (size_t i = 0; i < s->nallocs; i++)
		free(s->allocs[i].type);
	free(s->allocs);
	fine_level_clear(&s->fine); /* the fine level's readings (rules/fine.c) */
	for (size_t i = 0; i < s->ngrew_procs; i++) {
		struct proc_growth *g = &s->grew_procs[i];
		free(g->pid);
		free(g->name);
		free(g->initial_call);
		free(g->current_function);
		free(g->ancestor);
		free(g->module);
	}
	free(s->grew_procs);
	for (size_t i = 0; i < s->ninside; i++)
		proc_inside_clear(&s->inside[i]);
	free(s->inside);
	for (size_t i = 0; i < s->ngrew_ets; i++) {
		struct ets_growth *g = &s->grew_ets[i];
		free(g->name);
		free(g->id);
		free(g->owner_pid);
		free(g->owner_name);
		free(g->owner_call);
		free(g->module);
	}
	free(s->grew_ets);
	struct key_group *kg[] = {s->pterm_new, s->atoms_new, s->code_groups};
	size_t nkg[] = {s->npterm_new, s->natoms_new, s->ncode_groups};
	for (size_t k = 0; k < 3; k++) {
		for (size_t i = 0; i < nkg[k]; i++) {
			free(kg[k][i].key);
			free(kg[k][i].example);
		}
		free(kg[k]);
	}
	for (size_t i = 0; i < s->nports; i++) {
		struct port_group *g = &s->ports[i];
		free(g->name);
		free(g->owner_pid);
		free(g->owner_name);
		free(g->owner_call);
		free(g->module);
	}
	free(s->ports);
	for (size_t i = 0; i < s->nets_groups; i++) {
		struct ets_group *g = &s->ets_groups[i];
		free(g->name);
		free(g->owner_pid);
		free(g->owner_name);
		free(g->owner_call);
		free(g->module);
	}
	free(s->ets_groups);
	memset(s, 0, sizeof(*s));
}
