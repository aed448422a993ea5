/* gate/probe/probe_inside.c: decodes the probe's look inside the processes that grew. */
#include "gate/probe/probe_inside.h"

#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"
#include "model/snapshot.h"

/* NULL for the empty binary, which the probe sends for "none", and for an absent key; -1
 * when t is no text. */
static int text_or_null(const struct term *t, char **out)
{
	const char *s = t ? term_text(t) : NULL;
	*out = NULL;
	if (!t)
		return 0;
	if (!s)
		return -1;
	if (!*s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -1;
}

static int figure(const struct term *t, int64_t *out, bool may_be_unknown)
{
	int64_t v;
	if (!t || term_int(t, &v) < 0 || v > MODEL_FIGURE_MAX ||
	    (v < 0 && !(may_be_unknown && v == -1)))
		return -1;
	*out = v;
	return 0;
}

int probe_starter_decode(const struct term *t, struct starter *out)
{
	memset(out, 0, sizeof(*out));
	if (!t)
		return 0;
	if (t->type != TERM_MAP)
		return -1;
	char **texts[] = {&out->test, &out->file, &out->module, &out->code, &out->by};
	static const char *const keys[] = {"test", "file", "module", "code", "by"};
	for (size_t k = 0; k < 5; k++)
		if (text_or_null(term_map_get(t, keys[k]), texts[k]) < 0)
			goto bad;
	if (term_map_get(t, "line") && figure(term_map_get(t, "line"), &out->line, false) < 0)
		goto bad;
	return 0;
bad:
	starter_clear(out);
	return -1;
}

static int kind_of(const struct term *t, enum inside_kind *out)
{
	static const char *const names[] = {"state", "data", "dict", "mailbox", "handlers"};
	for (int k = 0; k < INSIDE_KIND_COUNT; k++)
		if (term_is_atom(t, names[k])) {
			*out = (enum inside_kind)k;
			return 0;
		}
	return -1;
}

/* [{Kind, Where, Type, Unit, Count, Bytes}] */
static int parts_decode(const struct term *t, struct inside_part **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	if (!t || t->type != TERM_LIST)
		return -1;
	if (!t->u.seq.n)
		return 0;
	if (!(*out = calloc(t->u.seq.n, sizeof(**out))))
		return -1;
	for (size_t i = 0; i < t->u.seq.n; i++) {
		const struct term *r = &t->u.seq.items[i];
		struct inside_part *p = &(*out)[i];
		*nout = i + 1;
		if (r->type != TERM_TUPLE || r->u.seq.n != 6 ||
		    kind_of(term_tuple_at(r, 0), &p->kind) ||
		    text_or_null(term_tuple_at(r, 1), &p->where) ||
		    text_or_null(term_tuple_at(r, 2), &p->type) ||
		    text_or_null(term_tuple_at(r, 3), &p->unit) ||
		    figure(term_tuple_at(r, 4), &p->count, false) ||
		    figure(term_tuple_at(r, 5), &p->bytes, true))
			return -1;
	}
	return 0;
}

static int one_decode(const struct term *r, struct proc_inside *in)
{
	const struct term *pb;
	if (r->type != TERM_MAP || text_or_null(term_map_get(r, "pid"), &in->pid) || !in->pid ||
	    text_or_null(term_map_get(r, "kind"), &in->kind) ||
	    text_or_null(term_map_get(r, "why"), &in->why) ||
	    parts_decode(term_map_get(r, "parts"), &in->parts, &in->nparts) ||
	    probe_starter_decode(term_map_get(r, "started"), &in->started))
		return -1;
	in->inspected = term_is_atom(term_map_get(r, "inspected"), "true");
	if (term_map_get(r, "mailbox_before") &&
	    figure(term_map_get(r, "mailbox_before"), &in->mailbox_before, false) < 0)
		return -1;
	pb = term_map_get(r, "parts_before");
	if (pb && term_is_atom(pb, "born"))
		in->before = INSIDE_BEFORE_BORN;
	else if (!pb || term_is_atom(pb, "none"))
		in->before = INSIDE_BEFORE_NOT_READ;
	else if (parts_decode(pb, &in->parts_before, &in->nparts_before) == 0)
		in->before = INSIDE_BEFORE_READ;
	else
		return -1;
	/* the map shape of an empty started: nothing known */
	return 0;
}

int probe_inside_decode(const struct term *inside, struct snapshot *out, char *err, size_t errlen)
{
	if (!inside)
		return 0;
	if (inside->type != TERM_LIST) {
		errtext_set(err, errlen, NULL, "snapshot: inside is not a list");
		return -1;
	}
	if (!inside->u.seq.n)
		return 0;
	if (!(out->inside = calloc(inside->u.seq.n, sizeof(*out->inside)))) {
		errtext_set(err, errlen, NULL, "snapshot: inside: out of memory");
		return -1;
	}
	for (size_t i = 0; i < inside->u.seq.n; i++) {
		out->ninside = i + 1;
		if (one_decode(&inside->u.seq.items[i], &out->inside[i]) < 0) {
			errtext_set(err, errlen, NULL,
			            "snapshot: inside entry %zu is malformed (want #{pid, kind, "
			            "inspected, why, parts, parts_before, started})",
			            i + 1);
			return -1;
		}
	}
	return 0;
}
