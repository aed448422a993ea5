/* rules/blame.c: which test module grew one structure, from the structure's own growth at the
 * modules' edges (see blame.h). */
#include "rules/blame.h"

#include <stdio.h>
#include <string.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/culprits.h"
#include "rules/tags.h"

/* Whether the edges read structures of key's kind: processes and tables are not read past
 * the probe's caps, which each module's reading then says ("procs_unread", "ets_unread"). */
static bool read_at_edges(const struct test_run *run, const char *key)
{
	const char *unread;
	if (strcmp(key, "atoms") == 0 || strcmp(key, "ports") == 0)
		return true;
	if (strncmp(key, "ets:", 4) == 0 || strncmp(key, "ets_owner:", 10) == 0)
		unread = "ets_unread";
	else if (strncmp(key, "proc:", 5) == 0)
		unread = "procs_unread";
	else
		return false;
	for (size_t i = 0; i < run->nstructs; i++)
		for (size_t k = 0; k < run->structs[i].nitems; k++)
			if (strcmp(run->structs[i].items[k].key, unread) == 0)
				return false;
	return true;
}

/* Whether module ran in a window of its own: sync modules run alone; an async one that
 * overlapped others shares its window with them, and they see the same growth. */
static bool own_window(const struct test_run *run, const char *module)
{
	for (size_t i = 0; i < run->nmodules; i++)
		if (run->modules[i].module && strcmp(run->modules[i].module, module) == 0)
			return !run->modules[i].async || !run->modules[i].overlapped;
	return true; /* no timing: taken as its own */
}

int64_t blame_share(const struct module_structs *m, const char *key)
{
	int64_t v = 0;
	for (size_t k = 0; k < m->nitems; k++)
		if (strcmp(m->items[k].key, key) == 0)
			v += m->items[k].value;
	return v;
}

/* The structure's growth over the run, in the unit its edges count it in. */
static int64_t judged_of(const struct snapshot *before, const struct snapshot *after,
                         const struct finding *f)
{
	const char *key = f->structure_key;
	if (strcmp(key, "atoms") == 0)
		return before && after ? after->atom_count - before->atom_count : f->delta;
	if (strcmp(key, "ports") == 0)
		return after ? after->ports_opened : f->delta;
	/* what the edges read of it: a table's bytes (not the refc binaries its rows hold), a
	 * process's memory and refc binaries */
	int64_t own = strncmp(key, "proc:", 5) == 0
	                      ? f->explains[MEM_PROCESSES_USED] + f->explains[MEM_BINARY]
	                      : f->explains[MEM_ETS];
	return own > 0 ? own : f->delta;
}

void blame_structure(struct blame *out, const struct test_run *run, const struct snapshot *before,
                     const struct snapshot *after, const struct finding *f)
{
	memset(out, 0, sizeof(*out));
	if (!run || !run->have_structs || !run->nstructs || !f->structure_key ||
	    !read_at_edges(run, f->structure_key))
		return;
	const char *key = f->structure_key;
	out->count = strcmp(key, "atoms") == 0 || strcmp(key, "ports") == 0;
	out->judged = judged_of(before, after, f);
	/* --repeat: the rules judged runs 2..N, the edges are the last run's */
	if (run->judged_runs > 1) {
		out->judged /= run->judged_runs;
		out->per_run = true;
	}
	if (out->judged <= 0)
		return;
	int64_t noise = out->judged / BLAME_VISIBLE, second = 0, sum = 0;
	int64_t floor = out->count ? BLAME_NOISE_COUNT : BLAME_NOISE_BYTES;
	if (noise < floor)
		noise = floor;
	size_t own = 0;
	for (size_t i = 0; i < run->nstructs; i++) {
		int64_t v = blame_share(&run->structs[i], key);
		/* @moduletag gate: false (or every test of it that ran exempt): never named */
		if (v < noise || tags_module_exempt(run, run->structs[i].module))
			continue;
		out->modules++;
		own += own_window(run, run->structs[i].module);
		sum += v;
		if (v > out->value) {
			second = out->value;
			out->value = v;
			out->module = run->structs[i].module;
		} else if (v > second) {
			second = v;
		}
	}
	/* The structure's own garbage (a heap not yet collected at the edge) may show more than
	 * it kept; far more is a swell that went again, no evidence of what stayed. The others
	 * together stay well under it: a process's memory read without GC grows in steps (its
	 * heap is resized, each step about 1.6 times the last), so a leak filled by every
	 * module shows its largest step in one window and the smaller ones in others (an Agent
	 * filled by every request of a Phoenix app: 4.3 MB in one module, 3.5 MB in the four
	 * after it). */
	if (2 * out->value >= out->judged && out->value - noise <= 4 * out->judged &&
	    4 * second < out->value && 2 * (sum - out->value) < out->value) {
		out->kind = BLAME_CULPRIT;
	} else if (out->modules >= 2 && 2 * sum >= out->judged) {
		/* two windows of their own that both grew it: spread for sure; else async
		 * neighbours that may have seen the same growth */
		out->kind = BLAME_SPREAD;
		out->side_by_side = own < 2;
	} else {
		out->kind = BLAME_NONE;
	}
}

/* "+11 600 of +12 542 atoms" or "+2.4 MB of +2.5 MB", the share capped at the growth */
static void share_text(char *buf, size_t len, const struct blame *b, const struct finding *f)
{
	char v[32], j[32];
	int64_t shown = b->value < b->judged ? b->value : b->judged;
	if (b->count) {
		rules_count_format(v, sizeof(v), shown);
		rules_count_format(j, sizeof(j), b->judged);
		snprintf(buf, len, "+%s of +%s %s%s", v, j,
		         strcmp(f->structure_key, "ports") == 0 ? "ports" : "atoms",
		         b->per_run ? " a run" : "");
		return;
	}
	model_bytes_format(v, sizeof(v), shown);
	model_bytes_format(j, sizeof(j), b->judged);
	snprintf(buf, len, "%s +%s of +%s%s", f->structure ? f->structure : "it", v, j,
	         b->per_run ? " a run" : "");
}

void blame_format(char *buf, size_t len, const struct blame *b, const struct finding *f)
{
	char s[512];
	buf[0] = '\0';
	if (b->kind == BLAME_NO_EVIDENCE)
		return;
	share_text(s, sizeof(s), b, f);
	switch (b->kind) {
	case BLAME_CULPRIT:
		if (b->started_by)
			snprintf(buf, len,
			         "; likely culprit: %s (%s, between its edges; started by %s)",
			         rules_display(b->module), s, rules_display(b->started_by));
		else
			snprintf(buf, len, "; likely culprit: %s (%s, between its edges)",
			         rules_display(b->module), s);
		break;
	case BLAME_SPREAD:
		if (b->side_by_side)
			snprintf(
			        buf, len,
			        "; no test stands out: %zu async test modules running side by side "
			        "saw it grow, no single one (the most in %s: %s)",
			        b->modules, rules_display(b->module), s);
		else
			snprintf(buf, len,
			         "; spread over %zu test modules, no single one (the most in %s: "
			         "%s)",
			         b->modules, rules_display(b->module), s);
		break;
	default:
		if (b->module)
			snprintf(
			        buf, len,
			        "; no test stands out (no test module's edges show most of it: the "
			        "most in %s, %s)",
			        rules_display(b->module), s);
		else
			snprintf(buf, len,
			         "; no test stands out (no test module's edges show it grow)");
		break;
	}
}
