/* rules/inside.c: what grew inside a process, and who started it, in words. */
#include "rules/inside.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/snapshot.h"
#include "rules/culprits.h"

/* at most this many parts of the state (and dictionary) named, and mailbox shapes */
#define INSIDE_NAMED 2
/* a part whose bytes grew by less than this share of the process's growth is not named as
 * what grew (a counter, a timestamp); and never by less than INSIDE_MIN_BYTES */
#define INSIDE_SHARE 20
#define INSIDE_MIN_BYTES 1024
#define INSIDE_CHANGES_MAX 64

const struct proc_inside *inside_find(const struct snapshot *after, const char *pid)
{
	if (!after || !pid)
		return NULL;
	for (size_t i = 0; i < after->ninside; i++)
		if (after->inside[i].pid && strcmp(after->inside[i].pid, pid) == 0)
			return &after->inside[i];
	return NULL;
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static const struct inside_part *part_before(const struct proc_inside *in,
                                             const struct inside_part *p)
{
	for (size_t i = 0; i < in->nparts_before; i++) {
		const struct inside_part *b = &in->parts_before[i];
		if (b->kind == p->kind && same_text(b->where, p->where))
			return b;
	}
	return NULL;
}

static int64_t weight(const struct inside_change *c)
{
	return c->dbytes > 0 ? c->dbytes : 0;
}

static int by_growth_desc(const void *x, const void *y)
{
	const struct inside_change *a = x, *b = y;
	if (weight(a) != weight(b))
		return weight(a) < weight(b) ? 1 : -1;
	if (a->dcount != b->dcount)
		return a->dcount < b->dcount ? 1 : -1;
	return 0;
}

size_t inside_compare(struct inside_change *out, size_t max, const struct proc_inside *in)
{
	size_t n = 0;
	if (!in || !out)
		return 0;
	for (size_t i = 0; i < in->nparts && n < max; i++) {
		const struct inside_part *p = &in->parts[i];
		struct inside_change *c = &out[n++];
		memset(c, 0, sizeof(*c));
		c->now = p;
		c->bytes_before = -1;
		if (in->before == INSIDE_BEFORE_BORN) {
			c->known = true;
			c->bytes_before = 0;
		} else if (in->before == INSIDE_BEFORE_READ) {
			/* read before: a part absent then was empty (a key put since) */
			c->was = part_before(in, p);
			c->known = true;
			c->count_before = c->was ? c->was->count : 0;
			c->bytes_before = c->was ? c->was->bytes : 0;
		}
		if (c->known) {
			c->dcount = p->count - c->count_before;
			c->dbytes = p->bytes >= 0 && c->bytes_before >= 0
			                    ? p->bytes - c->bytes_before
			                    : 0;
		}
	}
	qsort(out, n, sizeof(*out), by_growth_desc);
	return n;
}

static void count_text(char *buf, size_t len, int64_t n)
{
	rules_count_format(buf, len, n);
}

static void bytes_text(char *buf, size_t len, int64_t n)
{
	char b[32];
	model_bytes_format(b, sizeof(b), n < 0 ? -n : n);
	snprintf(buf, len, "%s%s", n < 0 ? "-" : "+", b);
}

/* "its state's field :keys (a MapSet)", "its data (a :queue)" */
static void part_name(char *buf, size_t len, const struct inside_part *p)
{
	const char *whose = p->kind == INSIDE_DATA ? "its data" : "its state";
	const char *type = p->type ? p->type : "a term";
	if (p->where)
		snprintf(buf, len, "%s's %s (%s)", whose, p->where, type);
	else
		snprintf(buf, len, "%s (%s)", whose, type);
}

/* One state, data, dictionary or handlers part that grew, appended at buf[*o]. */
static void change_text(char *buf, size_t len, size_t *o, const struct inside_change *c)
{
	const struct inside_part *p = c->now;
	char name[400], c0[32], c1[32], dc[32], db[40] = "", b0[32], b1[32];
	const char *sep = *o ? ", " : "";
	if (*o >= len)
		return;
	count_text(c0, sizeof(c0), c->count_before);
	count_text(c1, sizeof(c1), p->count);
	count_text(dc, sizeof(dc), c->dcount);
	if (c->dbytes != 0) {
		char b[40];
		bytes_text(b, sizeof(b), c->dbytes);
		snprintf(db, sizeof(db), ", %s", b);
	}
	switch (p->kind) {
	case INSIDE_DICT:
		*o += (size_t)snprintf(
		        buf + *o, len - *o, "%sprocess dictionary %s%s keys %s (%s -> %s)%s", sep,
		        c->dcount >= 0 ? "+" : "", dc, p->where ? p->where : "?", c0, c1, db);
		return;
	case INSIDE_HANDLERS:
		*o += (size_t)snprintf(buf + *o, len - *o, "%s%s handlers %s (%s before)", sep, c1,
		                       p->where ? p->where : "?", c0);
		return;
	default: break;
	}
	part_name(name, sizeof(name), p);
	if (p->unit && c->dcount != 0) {
		*o += (size_t)snprintf(buf + *o, len - *o, "%s%s grew %s -> %s %s%s", sep, name, c0,
		                       c1, p->unit, db);
	} else {
		/* not counted (a struct, a number): by its size alone */
		model_bytes_format(b0, sizeof(b0), c->bytes_before > 0 ? c->bytes_before : 0);
		model_bytes_format(b1, sizeof(b1), p->bytes > 0 ? p->bytes : 0);
		*o += (size_t)snprintf(buf + *o, len - *o, "%s%s grew %s -> %s", sep, name, b0, b1);
	}
}

/* A part of a process not read before: what it holds now. */
static void holds_text(char *buf, size_t len, size_t *o, const struct inside_part *p)
{
	char name[400], c[32], b[32] = "";
	if (*o >= len)
		return;
	count_text(c, sizeof(c), p->count);
	if (p->bytes >= 0)
		model_bytes_format(b, sizeof(b), p->bytes);
	if (p->kind == INSIDE_DICT) {
		*o += (size_t)snprintf(buf + *o, len - *o,
		                       "%sprocess dictionary holds %s keys %s%s%s", *o ? ", " : "",
		                       c, p->where ? p->where : "?", *b ? ", " : "", b);
		return;
	}
	part_name(name, sizeof(name), p);
	*o += (size_t)snprintf(buf + *o, len - *o, "%s%s holds %s%s%s%s%s", *o ? ", " : "", name,
	                       p->unit ? c : "", p->unit ? " " : "", p->unit ? p->unit : "",
	                       *b ? (p->unit ? ", " : "") : "", b);
}

/* "mailbox 0 -> 30 000 messages: 30 000 {:DOWN, ...} (2.2 MB)": the total before and now,
 * then the largest shapes */
static void mailbox_text(char *buf, size_t len, size_t *o, const struct proc_inside *in)
{
	size_t named = 0;
	int64_t total = 0;
	char c0[32], c1[32];
	for (size_t i = 0; i < in->nparts; i++)
		if (in->parts[i].kind == INSIDE_MAILBOX)
			total += in->parts[i].count;
	if (!total || *o >= len)
		return;
	count_text(c0, sizeof(c0), in->mailbox_before);
	count_text(c1, sizeof(c1), total);
	*o += (size_t)snprintf(buf + *o, len - *o, "%smailbox %s -> %s messages:", *o ? ", " : "",
	                       c0, c1);
	for (size_t i = 0; i < in->nparts && named < INSIDE_NAMED && *o < len; i++) {
		const struct inside_part *p = &in->parts[i];
		char c[32], b[32];
		if (p->kind != INSIDE_MAILBOX)
			continue;
		count_text(c, sizeof(c), p->count);
		if (p->bytes >= 0) {
			model_bytes_format(b, sizeof(b), p->bytes);
			*o += (size_t)snprintf(buf + *o, len - *o, "%s %s %s (%s)",
			                       named ? "," : "", c, p->where ? p->where : "?", b);
		} else {
			*o += (size_t)snprintf(buf + *o, len - *o, "%s (%s)", named ? "," : "",
			                       p->where ? p->where : "?");
		}
		named++;
	}
}

static bool state_kind(enum inside_kind k)
{
	return k == INSIDE_STATE || k == INSIDE_DATA || k == INSIDE_DICT || k == INSIDE_HANDLERS;
}

/* The state's flat size (state or data parts), or -1 when a part is not sized. */
static int64_t state_bytes(const struct inside_part *parts, size_t n)
{
	int64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (parts[i].kind != INSIDE_STATE && parts[i].kind != INSIDE_DATA)
			continue;
		if (parts[i].bytes < 0)
			return -1;
		sum += parts[i].bytes;
	}
	return sum;
}

void inside_describe(char *buf, size_t len, const struct proc_inside *in, int64_t memory_growth)
{
	struct inside_change ch[INSIDE_CHANGES_MAX];
	size_t o = 0, named = 0;

	if (!buf || !len)
		return;
	buf[0] = '\0';
	if (!in)
		return;
	if (!in->inspected)
		o += (size_t)snprintf(buf, len, "not inspected: %s", in->why ? in->why : "?");
	size_t n = inside_compare(ch, INSIDE_CHANGES_MAX, in);
	int64_t least = memory_growth / INSIDE_SHARE;
	if (least < INSIDE_MIN_BYTES)
		least = INSIDE_MIN_BYTES;
	/* the parts that grew, largest first */
	for (size_t i = 0; i < n && named < INSIDE_NAMED; i++) {
		const struct inside_change *c = &ch[i];
		if (!c->known || !state_kind(c->now->kind))
			continue;
		bool grew = c->now->bytes >= 0 && c->bytes_before >= 0 ? c->dbytes >= least
		                                                       : c->dcount > 0;
		if (c->now->kind == INSIDE_HANDLERS)
			grew = c->dcount > 0;
		if (!grew)
			continue;
		change_text(buf, len, &o, c);
		named++;
	}
	/* not read before: the largest part now, said as what it holds */
	if (!named && in->inspected && in->before == INSIDE_BEFORE_NOT_READ) {
		const struct inside_part *big = NULL;
		for (size_t i = 0; i < in->nparts; i++) {
			const struct inside_part *p = &in->parts[i];
			if (state_kind(p->kind) &&
			    (!big || p->bytes > big->bytes ||
			     (p->bytes == big->bytes && p->count > big->count)))
				big = p;
		}
		if (big) {
			holds_text(buf, len, &o, big);
			if (o < len)
				o += (size_t)snprintf(
				        buf + o, len - o,
				        " (its state was not read at the before-snapshot)");
			named++;
		}
	}
	/* read before and born alike: nothing of the state grew, so the growth is heap */
	if (!named && in->inspected && in->before != INSIDE_BEFORE_NOT_READ && memory_growth > 0) {
		int64_t s1 = state_bytes(in->parts, in->nparts);
		int64_t s0 = in->before == INSIDE_BEFORE_BORN
		                     ? 0
		                     : state_bytes(in->parts_before, in->nparts_before);
		char g[40], a[32], b[32];
		bytes_text(g, sizeof(g), memory_growth);
		if (s0 >= 0 && s1 >= 0 && o < len) {
			model_bytes_format(a, sizeof(a), s0);
			model_bytes_format(b, sizeof(b), s1);
			o += (size_t)snprintf(
			        buf + o, len - o,
			        "%sits state did not grow (%s -> %s): the %s is heap, not "
			        "state",
			        o ? ", " : "", a, b, g);
		}
	}
	mailbox_text(buf, len, &o, in);
	if (o >= len && len > 4)
		strcpy(buf + len - 4, "...");
}

void inside_starter_text(char *buf, size_t len, const struct starter *s)
{
	size_t o = 0;
	char line[32] = "";
	if (!buf || !len)
		return;
	buf[0] = '\0';
	if (!s)
		return;
	if (s->line > 0)
		snprintf(line, sizeof(line), ":%lld", (long long)s->line);
	if (s->test)
		o += (size_t)snprintf(buf, len, "started by \"%s\" (%s%s%s%s)", s->test,
		                      s->file ? s->file : "?", line, s->module ? ", in " : "",
		                      s->module ? rules_display(s->module) : "");
	else if (s->module)
		o += (size_t)snprintf(buf, len, "started by test module %s",
		                      rules_display(s->module));
	if (s->code && o < len)
		o += (size_t)snprintf(buf + o, len - o, "%swith %s", o ? ", " : "started ",
		                      s->code);
	if (s->by && o < len)
		o += (size_t)snprintf(buf + o, len - o, "%svia %s", o ? ", " : "started ", s->by);
	if (o >= len && len > 4)
		strcpy(buf + len - 4, "...");
}

bool inside_starter_same_test(const struct starter *a, const struct starter *b)
{
	return a->test && same_text(a->test, b->test) && same_text(a->file, b->file) &&
	       a->line == b->line && same_text(a->module, b->module);
}
