/* rules/culprits.c: naming, ranking and capping the culprits the rules report. */
#include "rules/culprits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "model/finding.h"
#include "rules/consolidate.h"

const char *rules_display(const char *name)
{
	if (name && strncmp(name, "Elixir.", 7) == 0 && name[7])
		return name + 7;
	return name;
}

void rules_count_format(char *buf, size_t len, int64_t n)
{
	model_count_format(buf, len, n);
}

void rules_proc_label(char *buf, size_t len, const struct proc_info *p)
{
	const char *pid = p->pid ? p->pid : "?";

	if (p->name)
		snprintf(buf, len, "%s (%s)", rules_display(p->name), pid);
	else if (p->initial_call)
		snprintf(buf, len, "%s (%s)", pid, rules_display(p->initial_call));
	else
		snprintf(buf, len, "%s", pid);
}

const char *rules_proc_subject(const struct proc_info *p)
{
	if (p->name)
		return rules_display(p->name);
	return p->pid ? p->pid : "?";
}

int rules_proc_structure(struct finding *f, const struct proc_info *p, enum mem_cat cat,
                         int64_t bytes)
{
	char label[300];
	snprintf(label, sizeof(label), "%sprocess %s", cat == MEM_BINARY ? "the binaries of " : "",
	         rules_proc_subject(p));
	return rules_pid_structure(f, p->pid, label, cat, bytes);
}

int rules_pid_structure(struct finding *f, const char *pid, const char *label, enum mem_cat cat,
                        int64_t bytes)
{
	char key[300];
	snprintf(key, sizeof(key), "proc:%s", pid ? pid : "?");
	return consolidate_name(f, key, label, cat, bytes);
}

int rules_table_structure(struct finding *f, const char *name, int64_t ets_bytes, int64_t bin_bytes)
{
	char key[320], label[320];
	snprintf(key, sizeof(key), "ets:%s", name ? name : "?");
	snprintf(label, sizeof(label), "ETS table %s", name ? name : "?");
	if (consolidate_name(f, key, label, MEM_ETS, ets_bytes) < 0)
		return -1;
	consolidate_explains_add(f->explains, MEM_BINARY, bin_bytes);
	return 0;
}

const struct proc_info *rules_proc_find(const struct snapshot *s, const char *pid)
{
	if (!pid)
		return NULL;
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid && strcmp(s->procs[i].pid, pid) == 0)
			return &s->procs[i];
	return NULL;
}

int culprits_add(struct culprits *list, size_t index, int64_t key)
{
	if (GROW(list->items, list->cap, list->count + 1, 16) < 0)
		return -1;
	list->items[list->count].index = index;
	list->items[list->count].key = key;
	list->count++;
	return 0;
}

static int culprit_cmp(const void *a, const void *b)
{
	const struct culprit *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	/* qsort is not stable: the index, in the order added, breaks ties */
	return x->index < y->index ? -1 : x->index > y->index;
}

void culprits_sort(struct culprits *list)
{
	if (list->count > 1)
		qsort(list->items, list->count, sizeof(list->items[0]), culprit_cmp);
}

void culprits_clear(struct culprits *list)
{
	if (!list)
		return;
	free(list->items);
	memset(list, 0, sizeof(*list));
}

int culprits_add_more(struct findings *out, const char *rule, const char *subject,
                      const struct culprits *list, const char *what)
{
	char n[32], msg[512];

	if (list->count <= RULES_MAX_CULPRITS)
		return 0;
	rules_count_format(n, sizeof(n), (int64_t)(list->count - RULES_MAX_CULPRITS));
	snprintf(msg, sizeof(msg), "and %s more %s; the %d worst are named above", n, what,
	         RULES_MAX_CULPRITS);
	if (findings_add(out, rule, subject, VERDICT_FAIL, 0, 0, 0, -1, msg) < 0)
		return -1;
	out->items[out->count - 1].show |= SHOW_MORE;
	return 0;
}
