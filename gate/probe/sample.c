/* gate/probe/sample.c: the C side of the probe's sampler (gate run --sample). */
#include "gate/probe/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"
#include "gate/probe/probe.h"
#include "model/snapshot.h"

/* the tuple's fields after t, in this order (gate_probe's SAMPLE_KEYS, then the counts) */
static const enum mem_cat sample_cats[] = {MEM_TOTAL,  MEM_PROCESSES, MEM_PROCESSES_USED,
                                           MEM_SYSTEM, MEM_ATOM,      MEM_ATOM_USED,
                                           MEM_BINARY, MEM_CODE,      MEM_ETS};
#define NCATS (sizeof(sample_cats) / sizeof(sample_cats[0]))
#define NFIELDS (1 + NCATS + 4)

int sample_start(struct eic *c, int64_t interval_ms, int timeout_ms, char *err, size_t errlen)
{
	ei_x_buff args;
	struct term *root = NULL;
	const struct term *reply;
	if (ei_x_new(&args) < 0) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	ei_x_encode_list_header(&args, 2);
	ei_x_encode_longlong(&args, interval_ms);
	ei_x_encode_long(&args, SAMPLE_CAP);
	ei_x_encode_empty_list(&args);
	int rc = eic_rpc(c, probe_entry(), "sample_start", &args, timeout_ms, &root, &reply, err,
	                 errlen);
	ei_x_free(&args);
	if (rc == EIC_OK && !term_is_atom(reply, "ok")) {
		errtext_set(err, errlen, NULL, "the probe's sampler did not start in node %s",
		            c->node);
		rc = EIC_ERROR;
	}
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}

static int fig(const struct term *t, int64_t *out)
{
	int64_t v;
	if (term_int(t, &v) < 0 || v < 0 || v > MODEL_FIGURE_MAX)
		return -1;
	*out = v;
	return 0;
}

int sample_decode(const struct term *reply, struct sample_series *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (term_is_atom(reply, "none")) {
		errtext_set(err, errlen, NULL,
		            "the probe's sampler was not running: it stopped during the run");
		return -1;
	}
	const struct term *iv = term_map_get(reply, "interval_ms");
	const struct term *list = term_map_get(reply, "samples");
	if (!iv || fig(iv, &out->interval_ms) < 0 || !list || list->type != TERM_LIST ||
	    list->u.seq.n > SAMPLE_CAP) {
		errtext_set(err, errlen, NULL, "samples: malformed reply from the probe");
		return -1;
	}
	size_t n = list->u.seq.n;
	if (n && !(out->items = calloc(n, sizeof(*out->items)))) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct term *t = &list->u.seq.items[i];
		struct sample *s = &out->items[i];
		if (t->type != TERM_TUPLE || t->u.seq.n != NFIELDS ||
		    fig(term_tuple_at(t, 0), &s->t_ms) < 0)
			goto bad;
		for (size_t k = 0; k < NCATS; k++)
			if (fig(term_tuple_at(t, 1 + k), &s->mem[sample_cats[k]]) < 0)
				goto bad;
		if (fig(term_tuple_at(t, 1 + NCATS), &s->process_count) < 0 ||
		    fig(term_tuple_at(t, 2 + NCATS), &s->ets_count) < 0 ||
		    fig(term_tuple_at(t, 3 + NCATS), &s->atom_count) < 0 ||
		    fig(term_tuple_at(t, 4 + NCATS), &s->port_count) < 0 ||
		    (i && s->t_ms < out->items[i - 1].t_ms))
			goto bad;
		out->n++;
		continue;
	bad:
		errtext_set(err, errlen, NULL, "samples: entry %zu is malformed", i + 1);
		sample_series_clear(out);
		return -1;
	}
	return 0;
}

int sample_fetch(struct eic *c, int timeout_ms, struct sample_series *out, char *err, size_t errlen)
{
	struct term *root = NULL;
	const struct term *reply;
	int rc = eic_rpc0(c, probe_entry(), "sample_stop", timeout_ms, &root, &reply, err, errlen);
	if (rc == EIC_OK)
		rc = sample_decode(reply, out, err, errlen) < 0 ? EIC_ERROR : EIC_OK;
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}
