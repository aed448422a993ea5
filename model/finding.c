/* model/finding.c: findings: adding, copying, showing, freeing */
#include "model/finding.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

const char *verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_PASS: return "pass";
	case VERDICT_FAIL: return "FAIL";
	case VERDICT_SKIP: return "skip";
	}
	return "unknown";
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int findings_add(struct findings *list, const char *rule, const char *subject, enum verdict verdict,
                 int64_t before, int64_t after, int64_t floor, double max_pct, const char *message)
{
	if (GROW(list->items, list->cap, list->count + 1, 16) < 0)
		return -1;
	struct finding *f = &list->items[list->count];
	f->rule = dup_or_null(rule);
	f->subject = dup_or_null(subject);
	f->message = dup_or_null(message);
	f->detail = NULL;
	f->explained = NULL;
	f->warned = false;
	f->culprit = f->culprit_test = f->file = NULL;
	f->line = 0;
	f->unit = UNIT_BYTES;
	f->show = 0;
	f->structure_key = f->structure = f->explained_by = NULL;
	f->what = NULL;
	f->parts = NULL;
	f->nparts = 0;
	f->inside_named = false;
	memset(f->explains, 0, sizeof(f->explains));
	f->judges = 0;
	if ((rule && !f->rule) || (subject && !f->subject) || (message && !f->message)) {
		free(f->rule);
		free(f->subject);
		free(f->message);
		return -1;
	}
	f->verdict = verdict;
	f->before = before;
	f->after = after;
	f->delta = finding_raw_delta(f);
	f->floor = floor;
	f->max_pct = max_pct;
	list->count++;
	return 0;
}

/* Frees f's strings, not f. */
static void finding_free(struct finding *f)
{
	free(f->rule);
	free(f->subject);
	free(f->message);
	free(f->detail);
	free(f->explained);
	free(f->culprit);
	free(f->culprit_test);
	free(f->file);
	free(f->structure_key);
	free(f->structure);
	free(f->explained_by);
	free(f->what);
	for (size_t i = 0; i < f->nparts; i++) {
		free(f->parts[i].sep);
		free(f->parts[i].text);
	}
	free(f->parts);
}

int findings_add_copy(struct findings *list, const struct finding *f, const char *subject)
{
	if (GROW(list->items, list->cap, list->count + 1, 16) < 0)
		return -1;
	struct finding *c = &list->items[list->count];
	*c = *f;
	c->rule = dup_or_null(f->rule);
	c->subject = dup_or_null(subject ? subject : f->subject);
	c->message = dup_or_null(f->message);
	c->detail = dup_or_null(f->detail);
	c->explained = dup_or_null(f->explained);
	c->culprit = dup_or_null(f->culprit);
	c->culprit_test = dup_or_null(f->culprit_test);
	c->file = dup_or_null(f->file);
	c->structure_key = dup_or_null(f->structure_key);
	c->structure = dup_or_null(f->structure);
	c->explained_by = dup_or_null(f->explained_by);
	c->what = dup_or_null(f->what);
	c->parts = f->nparts ? calloc(f->nparts, sizeof(*c->parts)) : NULL;
	c->nparts = c->parts ? f->nparts : 0;
	bool parts_ok = !f->nparts || c->parts;
	for (size_t i = 0; i < c->nparts; i++) {
		c->parts[i] = (struct finding_part){.kind = f->parts[i].kind,
		                                    .before = f->parts[i].before,
		                                    .sep = dup_or_null(f->parts[i].sep),
		                                    .text = dup_or_null(f->parts[i].text)};
		parts_ok = parts_ok && (!f->parts[i].sep || c->parts[i].sep) &&
		           (!f->parts[i].text || c->parts[i].text);
	}
	if ((f->structure_key && !c->structure_key) || (f->structure && !c->structure) ||
	    (f->explained_by && !c->explained_by) || (f->what && !c->what) || !parts_ok) {
		finding_free(c);
		return -1;
	}
	if ((f->rule && !c->rule) || ((subject || f->subject) && !c->subject) ||
	    (f->message && !c->message) || (f->detail && !c->detail) ||
	    (f->explained && !c->explained) || (f->culprit && !c->culprit) ||
	    (f->culprit_test && !c->culprit_test) || (f->file && !c->file)) {
		finding_free(c);
		return -1;
	}
	list->count++;
	return 0;
}

int64_t finding_raw_delta(const struct finding *f)
{
	int64_t d;
	/* figures come from the node or a file: saturate rather than overflow */
	if (__builtin_sub_overflow(f->after, f->before, &d))
		d = f->after < f->before ? INT64_MIN : INT64_MAX;
	return d;
}

bool finding_adjusted(const struct finding *f)
{
	return f->delta != finding_raw_delta(f);
}

void findings_show(struct findings *list, size_t first, enum finding_unit unit, unsigned show)
{
	for (size_t i = first; i < list->count; i++) {
		list->items[i].unit = unit;
		list->items[i].show |= show;
	}
}

const char *finding_rule_name(const struct finding *f)
{
	return f->rule ? f->rule : "rule";
}

bool finding_same_rule(const struct finding *a, const struct finding *b)
{
	return a->rule && b->rule && strcmp(a->rule, b->rule) == 0;
}

void finding_figure_format(char *buf, size_t len, const struct finding *f, int64_t v)
{
	if (f->unit == UNIT_COUNT)
		model_count_format(buf, len, v);
	else
		model_bytes_format(buf, len, v);
}

void findings_clear(struct findings *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->count; i++)
		finding_free(&list->items[i]);
	free(list->items);
	memset(list, 0, sizeof(*list));
}

size_t findings_failed(const struct findings *list)
{
	size_t n = 0;
	for (size_t i = 0; i < list->count; i++)
		if (list->items[i].verdict == VERDICT_FAIL)
			n++;
	return n;
}

/* The sentence: the parts put before, the last added first (each carries its separator), the
 * rule's words, then the parts put after in the order they came, each with its separator when
 * anything precedes it. */
static char *finding_sentence(const char *what, const struct finding_part *parts, size_t n)
{
	struct textbuf b = {0};
	for (size_t i = n; i-- > 0;)
		if (parts[i].before)
			textbuf_puts(&b, parts[i].text);
	if (what)
		textbuf_puts(&b, what);
	/* the command that reproduces it ends the sentence */
	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < n; i++) {
			if (parts[i].before || (parts[i].kind == PART_REPRODUCE) != last)
				continue;
			if (b.len && parts[i].sep)
				textbuf_puts(&b, parts[i].sep);
			textbuf_puts(&b, parts[i].text);
		}
	return textbuf_take(&b);
}

int finding_part_add(struct finding *f, enum finding_part_kind kind, bool before, const char *sep,
                     const char *text)
{
	char *what = f->what ? f->what : dup_or_null(f->message);
	char *s = dup_or_null(sep), *t = dup_or_null(text);
	struct finding_part *p = realloc(f->parts, (f->nparts + 1) * sizeof(*p));
	if (p)
		f->parts = p;
	if ((f->message && !what) || (sep && !s) || !t || !p) {
		if (what != f->what)
			free(what);
		free(s);
		free(t);
		return -1;
	}
	p[f->nparts] = (struct finding_part){.kind = kind, .before = before, .sep = s, .text = t};
	char *m = finding_sentence(what, p, f->nparts + 1);
	if (!m) {
		if (what != f->what)
			free(what);
		free(s);
		free(t);
		return -1;
	}
	f->nparts++;
	f->what = what;
	free(f->message);
	f->message = m;
	return 0;
}

int finding_what_set(struct finding *f, const char *what)
{
	char *w = dup_or_null(what);
	if (what && !w)
		return -1;
	if (!f->nparts) {
		free(f->message);
		f->message = w;
		return 0;
	}
	char *m = finding_sentence(w, f->parts, f->nparts);
	if (!m) {
		free(w);
		return -1;
	}
	free(f->what);
	free(f->message);
	f->what = w;
	f->message = m;
	return 0;
}

bool finding_has_part(const struct finding *f, enum finding_part_kind kind, const char *text)
{
	for (size_t i = 0; i < f->nparts; i++)
		if (f->parts[i].kind == kind && (!text || strcmp(f->parts[i].text, text) == 0))
			return true;
	return false;
}

size_t finding_acting_split(const struct finding *f, const struct finding_part *out[2])
{
	out[0] = out[1] = NULL;
	if (!f->message)
		return 0;
	size_t end = strlen(f->message);
	/* from the end: the parts that end the sentence, each moved once */
	for (bool moved = true; moved;) {
		moved = false;
		for (size_t k = 0; k < f->nparts; k++) {
			const struct finding_part *p = &f->parts[k];
			int slot = p->kind == PART_CONFIRM ? 0 : p->kind == PART_REPRODUCE ? 1 : -1;
			if (slot < 0 || out[slot] || p->before || !p->text)
				continue;
			size_t t = strlen(p->text), sep = p->sep ? strlen(p->sep) : 0;
			if (end < t + sep || strncmp(f->message + end - t, p->text, t) != 0 ||
			    (sep && strncmp(f->message + end - t - sep, p->sep, sep) != 0))
				continue;
			end -= t + sep;
			out[slot] = p;
			moved = true;
		}
	}
	return end;
}
