/* tests/fuzz/fuzz.c: the input reader and model builder the fuzz targets share (fuzz.h). */
#include "model/finding.h"
#include "model/tests.h"
#include "tests/fuzz/fuzz.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Texts that broke or could break a writer: XML and HTML terminators, terminal escapes,
 * invalid UTF-8 of every kind, characters XML 1.0 forbids, format directives. */
static const char *const hostile[] = {
        "]]>",
        "</script>",
        "<!--",
        "-->",
        "<![CDATA[",
        "&amp;",
        "&#0;",
        "\"'<>&",
        "\x1b[2J\x1b[H",
        "\x1b]0;title\x07",
        "\x1b[31mred\x1b[0m",
        "\x1b[",
        "\x1b",
        ("\xc2\x9b"
         "31m"),
        "\xff\xfe",
        "\xc0\xaf",
        "\xe0\x80\xaf",
        "\xed\xa0\x80",
        "\xf4\x90\x80\x80",
        "\xef\xbf\xbe",
        "\xef\xbf\xbf",
        "\xe2\x80\xae",
        "\xf0\x9f\x98\x80",
        "\xe2",
        "\x01\x02\x08\x0b\x0c\x1f\x7f",
        "\r\n",
        "\n\n\n",
        "\t",
        "%s%n%x",
        "--",
        " ",
        "Elixir.",
        "test ",
        "gate.memory",
        "\xe2\x80\xa6",
};

uint8_t fuzz_u8(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

int64_t fuzz_i64(struct fuzz_in *in)
{
	uint8_t kind = fuzz_u8(in);
	switch (kind & 7) {
	case 0: return 0;
	case 1: return INT64_MAX;
	case 2: return INT64_MIN;
	case 3: return -1;
	case 4: return fuzz_u8(in);
	default: {
		uint64_t v = 0;
		for (int i = 0; i < 8; i++)
			v = v << 8 | fuzz_u8(in);
		return (int64_t)v;
	}
	}
}

/* A figure of a snapshot: what the decoders let through (model/snapshot.h), limits included. */
static int64_t fuzz_figure(struct fuzz_in *in)
{
	int64_t v = fuzz_i64(in);
	if (v == INT64_MAX || v == INT64_MIN)
		return MODEL_FIGURE_MAX;
	if (v < 0)
		v = -(v + 1);
	return v % (MODEL_FIGURE_MAX + 1);
}

static char *dup_or_die(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (!d)
		fuzz_fail("out of memory");
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *fuzz_str(struct fuzz_in *in, int nullable)
{
	uint8_t kind = fuzz_u8(in);
	if (nullable && kind == 0xFF)
		return NULL;
	/* long names are 1 in 16 strings: many of them only slow the writers down */
	int longs_left = in->longs < 4;
	switch ((kind & 3) == 1 && ((kind & 0x0C) || !longs_left) ? 2 : kind & 3) {
	case 0: { /* raw bytes: a length, then that many bytes (NUL ends the string early) */
		size_t n = fuzz_u8(in);
		if (n > in->n)
			n = in->n;
		char *s = dup_or_die((const char *)in->p, n);
		in->p += n;
		in->n -= n;
		return s;
	}
	case 1: { /* a long name, one byte repeated: up to 4 kB, or 100 kB */
		uint8_t len = fuzz_u8(in);
		size_t n = (size_t)(len + 1) * ((len & 0xF) == 0xF && !in->longs ? 400 : 16);
		in->longs++;
		char c = (char)fuzz_u8(in);
		char *s = malloc(n + 1);
		if (!s)
			fuzz_fail("out of memory");
		memset(s, c ? c : 'x', n);
		s[n] = '\0';
		return s;
	}
	default: { /* up to 4 hostile pieces and raw bytes in between */
		char buf[512];
		size_t len = 0, parts = (size_t)(kind >> 2 & 3) + 1;
		for (size_t i = 0; i < parts; i++) {
			const char *h = hostile[fuzz_u8(in) % (sizeof(hostile) / sizeof(*hostile))];
			size_t hl = strlen(h);
			if (len + hl + 2 < sizeof(buf)) {
				memcpy(buf + len, h, hl);
				len += hl;
			}
			uint8_t c = fuzz_u8(in);
			if (c && len + 1 < sizeof(buf))
				buf[len++] = (char)c;
		}
		return dup_or_die(buf, len);
	}
	}
}

static void add_finding(struct fuzz_model *m, struct fuzz_in *in)
{
	static const char *const rules[] = {"growth", "ets",       "binary",   "process",
	                                    "atom",   "allocator", "baseline", "trend"};
	char *subject = fuzz_str(in, 1), *message = fuzz_str(in, 1);
	uint8_t k = fuzz_u8(in);
	const char *rule = rules[k % 8];
	char *own_rule = (k & 0x80) ? fuzz_str(in, 0) : NULL;
	enum verdict v = (enum verdict)(fuzz_u8(in) % 3);
	int64_t before = fuzz_i64(in), after = fuzz_i64(in), floor = fuzz_i64(in);
	double pct = (double)(int8_t)fuzz_u8(in) * 3.5;
	if (findings_add(&m->findings, own_rule ? own_rule : rule, subject, v, before, after, floor,
	                 pct, message) < 0)
		fuzz_fail("out of memory");
	m->findings.items[m->findings.count - 1].delta = fuzz_i64(in);
	/* how it is shown, from k's bits the rule's index leaves (no new input byte) */
	findings_show(&m->findings, m->findings.count - 1, (k >> 5) & 1 ? UNIT_COUNT : UNIT_BYTES,
	              (k >> 3) & 0xF);
	free(subject);
	free(message);
	free(own_rule);
}

static void add_test(struct fuzz_model *m, struct fuzz_in *in)
{
	struct test_result *t = test_run_add(&m->run);
	if (!t)
		fuzz_fail("out of memory");
	t->module = fuzz_str(in, 1);
	t->name = fuzz_str(in, 1);
	t->file = fuzz_str(in, 1);
	t->message = fuzz_str(in, 1);
	t->line = (int)fuzz_i64(in);
	t->time_us = fuzz_i64(in);
	t->state = (enum test_state)(fuzz_u8(in) % 5);
}

static void *calloc_or_die(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		fuzz_fail("out of memory");
	return p;
}

static void make_snapshot(struct snapshot *s, struct fuzz_in *in)
{
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		s->have[c] = fuzz_u8(in) & 1;
		s->mem[c] = fuzz_figure(in);
	}
	s->process_count = fuzz_figure(in);
	s->process_limit = fuzz_figure(in);
	s->atom_count = fuzz_figure(in);
	s->atom_limit = fuzz_figure(in);
	s->ets_count = fuzz_figure(in);
	s->gc_us = fuzz_figure(in);
	s->taken_at_ms = fuzz_figure(in);
	s->born_count = fuzz_figure(in);
	s->born_memory = fuzz_figure(in);
	char *t = fuzz_str(in, 0);
	snprintf(s->node, sizeof(s->node), "%s", t);
	free(t);
	t = fuzz_str(in, 0);
	snprintf(s->otp_release, sizeof(s->otp_release), "%s", t);
	free(t);

	size_t n = fuzz_u8(in) % 9;
	s->procs = calloc_or_die(n, sizeof(*s->procs));
	for (; s->nprocs < n; s->nprocs++) {
		struct proc_info *p = &s->procs[s->nprocs];
		p->pid = fuzz_str(in, 0);
		p->name = fuzz_str(in, 1);
		p->initial_call = fuzz_str(in, 1);
		p->current_function = fuzz_str(in, 1);
		p->memory = fuzz_figure(in);
		p->message_queue_len = fuzz_figure(in);
		p->bin_refs = fuzz_figure(in);
		p->bin_bytes = fuzz_figure(in);
		p->born = fuzz_u8(in) & 1;
	}
	n = fuzz_u8(in) % 9;
	s->born = calloc_or_die(n, sizeof(*s->born));
	for (; s->nborn < n; s->nborn++) {
		struct proc_group *g = &s->born[s->nborn];
		g->key = fuzz_str(in, 0);
		g->example_pid = fuzz_str(in, 1);
		g->count = fuzz_figure(in);
		g->memory = fuzz_figure(in);
	}
	n = fuzz_u8(in) % 9;
	s->ets = calloc_or_die(n, sizeof(*s->ets));
	for (; s->nets < n; s->nets++) {
		struct ets_info *e = &s->ets[s->nets];
		e->name = fuzz_str(in, 0);
		e->id = fuzz_str(in, 0);
		e->type = fuzz_str(in, 1);
		e->protection = fuzz_str(in, 1);
		e->owner_pid = fuzz_str(in, 1);
		e->owner_name = fuzz_str(in, 1);
		e->size = fuzz_figure(in);
		e->memory = fuzz_figure(in);
		e->named = fuzz_u8(in) & 1;
		e->created = fuzz_u8(in) & 1;
	}
	n = fuzz_u8(in) % 9;
	s->allocs = calloc_or_die(n, sizeof(*s->allocs));
	for (; s->nallocs < n; s->nallocs++) {
		struct alloc_info *a = &s->allocs[s->nallocs];
		a->type = fuzz_str(in, 0);
		a->carriers_size = fuzz_figure(in);
		a->blocks_size = fuzz_figure(in);
		a->fragmentation = (double)fuzz_figure(in) / (double)MODEL_FIGURE_MAX;
	}
	/* what grew: read last, so that older seeds keep their meaning */
	s->have_pterm = fuzz_u8(in) & 1;
	s->pterm_count = fuzz_figure(in);
	s->pterm_memory = fuzz_figure(in);
	s->have_growth = fuzz_u8(in) & 1;
	s->ports_opened = fuzz_figure(in);
	n = fuzz_u8(in) % 5;
	s->grew_procs = calloc_or_die(n, sizeof(*s->grew_procs));
	for (; s->ngrew_procs < n; s->ngrew_procs++) {
		struct proc_growth *p = &s->grew_procs[s->ngrew_procs];
		p->pid = fuzz_str(in, 1);
		p->name = fuzz_str(in, 1);
		p->initial_call = fuzz_str(in, 1);
		p->current_function = fuzz_str(in, 1);
		p->ancestor = fuzz_str(in, 1);
		p->module = fuzz_str(in, 1);
		p->memory_before = fuzz_figure(in);
		p->memory = fuzz_figure(in);
		p->mailbox_before = fuzz_figure(in);
		p->mailbox = fuzz_figure(in);
		p->bin_before = fuzz_figure(in);
		p->bin = fuzz_figure(in);
		p->born = fuzz_u8(in) & 1;
	}
	n = fuzz_u8(in) % 5;
	s->grew_ets = calloc_or_die(n, sizeof(*s->grew_ets));
	for (; s->ngrew_ets < n; s->ngrew_ets++) {
		struct ets_growth *e = &s->grew_ets[s->ngrew_ets];
		e->name = fuzz_str(in, 1);
		e->id = fuzz_str(in, 1);
		e->owner_pid = fuzz_str(in, 1);
		e->owner_name = fuzz_str(in, 1);
		e->owner_call = fuzz_str(in, 1);
		e->module = fuzz_str(in, 1);
		e->rows_before = fuzz_figure(in);
		e->rows = fuzz_figure(in);
		e->bytes_before = fuzz_figure(in);
		e->bytes = fuzz_figure(in);
		e->bin_bytes = fuzz_figure(in);
		e->created = fuzz_u8(in) & 1;
	}
	struct key_group **kg[] = {&s->pterm_new, &s->atoms_new};
	size_t *nkg[] = {&s->npterm_new, &s->natoms_new};
	for (size_t k = 0; k < 2; k++) {
		n = fuzz_u8(in) % 5;
		*kg[k] = calloc_or_die(n, sizeof(**kg[k]));
		for (; *nkg[k] < n; (*nkg[k])++) {
			struct key_group *g = &(*kg[k])[*nkg[k]];
			g->key = fuzz_str(in, 1);
			g->example = fuzz_str(in, 1);
			g->count = fuzz_figure(in);
			g->bytes = fuzz_figure(in);
		}
	}
	n = fuzz_u8(in) % 5;
	s->ports = calloc_or_die(n, sizeof(*s->ports));
	for (; s->nports < n; s->nports++) {
		struct port_group *g = &s->ports[s->nports];
		g->name = fuzz_str(in, 1);
		g->owner_pid = fuzz_str(in, 1);
		g->owner_name = fuzz_str(in, 1);
		g->owner_call = fuzz_str(in, 1);
		g->module = fuzz_str(in, 1);
		g->count = fuzz_figure(in);
		g->os_pid = fuzz_figure(in);
	}
}

void fuzz_model_make(struct fuzz_model *m, const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size, 0};
	memset(m, 0, sizeof(*m));
	size_t nf = fuzz_u8(&in) % 9, nt = fuzz_u8(&in) % 13;
	for (size_t i = 0; i < nf; i++)
		add_finding(m, &in);
	for (size_t i = 0; i < nt; i++)
		add_test(m, &in);
	m->run.finished = fuzz_u8(&in) & 1;
	m->run.run_us = fuzz_i64(&in);
	m->run.load_us = fuzz_i64(&in);
	m->run.wall_us = fuzz_i64(&in);
	m->run.seed = fuzz_i64(&in);
	m->meta.hostname = m->strs[0] = fuzz_str(&in, 1);
	m->meta.project = m->strs[1] = fuzz_str(&in, 1);
	m->meta.node = m->strs[2] = fuzz_str(&in, 1);
	m->meta.error = m->strs[3] = fuzz_str(&in, 1);
	m->meta.started = fuzz_i64(&in);
	m->meta.memory_time_s = (double)fuzz_i64(&in) / 1e6;
	make_snapshot(&m->snap, &in);
}

void fuzz_model_clear(struct fuzz_model *m)
{
	findings_clear(&m->findings);
	test_run_clear(&m->run);
	snapshot_clear(&m->snap);
	for (size_t i = 0; i < sizeof(m->strs) / sizeof(*m->strs); i++)
		free(m->strs[i]);
	memset(m, 0, sizeof(*m));
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	fputs("fuzz: oracle failed: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

int fuzz_utf8_scan(const unsigned char *s, size_t n, size_t *at, int terminal)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		*at = i;
		if (c < 0x80) {
			if (terminal && ((c < 0x20 && c != '\n') || c == 0x7F))
				return -1;
			i++;
			continue;
		}
		size_t len = c >= 0xC2 && c <= 0xDF   ? 2
		             : c >= 0xE0 && c <= 0xEF ? 3
		             : c >= 0xF0 && c <= 0xF4 ? 4
		                                      : 0;
		if (!len || i + len > n)
			return -1;
		uint32_t cp = c & (0xFF >> (len + 1));
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return -1;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		if ((terminal && cp < 0xA0) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF ||
		    (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
			return -1;
		i += len;
	}
	return 0;
}
