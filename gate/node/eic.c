/* gate/node/eic.c: gate's channel to a node: the interface, dispatched to the transport
 * (eic_dist.c, eic_pipe.c), and the reply handling both share. */
#include "gate/node/eic.h"

#include "base/errtext.h"
#include "gate/node/eic_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eic_init(struct eic *c)
{
	static int ei_ready;
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->wfd = -1;
	c->max_reply = 256u << 20;
	if (!ei_ready) {
		ei_init(); /* ei_connect_tmo crashes without it */
		ei_ready = 1;
	}
}

bool eic_connected(const struct eic *c)
{
	return c->fd >= 0;
}

void eic_args_bare(const ei_x_buff *args, const char **buf, int *len)
{
	*buf = args->buff;
	*len = args->index;
	if (*len > 0 && (unsigned char)(*buf)[0] == 131) {
		(*buf)++;
		(*len)--;
	}
}

int eic_reply_take(struct eic *c, const char *mod, const char *fun, struct term *root,
                   const struct term *reply, struct term **out_root, const struct term **out_reply,
                   char *err, size_t errlen)
{
	*out_root = root;
	if (reply->type == TERM_TUPLE && reply->u.seq.n == 2 &&
	    term_is_atom(term_tuple_at(reply, 0), "badrpc")) {
		char what[1024];
		*out_reply = term_tuple_at(reply, 1);
		term_format(*out_reply, what, sizeof(what));
		errtext_set(err, errlen, NULL, "%s:%s failed in node %s: %s", mod, fun, c->node,
		            what);
		return EIC_BADRPC;
	}
	*out_reply = reply;
	return EIC_OK;
}

int eic_call_send(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args, char *err,
                  size_t errlen)
{
	if (c->fd < 0) {
		errtext_set(err, errlen, NULL, "%s:%s: not connected to the node", mod, fun);
		return EIC_ERROR;
	}
	return c->transport == EIC_PIPE ? eic_pipe_send(c, mod, fun, args, err, errlen)
	                                : eic_dist_send(c, mod, fun, args, err, errlen);
}

int eic_call_wait(struct eic *c, const char *mod, const char *fun, int timeout_ms,
                  struct term **out_root, const struct term **out_reply, char *err, size_t errlen)
{
	*out_root = NULL;
	*out_reply = NULL;
	if (c->fd < 0) {
		errtext_set(err, errlen, NULL, "%s:%s: not connected to the node", mod, fun);
		return EIC_ERROR;
	}
	return c->transport == EIC_PIPE
	               ? eic_pipe_wait(c, mod, fun, timeout_ms, out_root, out_reply, err, errlen)
	               : eic_dist_wait(c, mod, fun, timeout_ms, out_root, out_reply, err, errlen);
}

int eic_rpc(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args, int timeout_ms,
            struct term **out_root, const struct term **out_reply, char *err, size_t errlen)
{
	*out_root = NULL;
	*out_reply = NULL;
	if (eic_call_send(c, mod, fun, args, err, errlen) != EIC_OK)
		return EIC_ERROR;
	return eic_call_wait(c, mod, fun, timeout_ms, out_root, out_reply, err, errlen);
}

int eic_idle(struct eic *c, int timeout_ms, char *err, size_t errlen)
{
	if (c->fd < 0) {
		errtext_set(err, errlen, NULL, "not connected to the node");
		return EIC_ERROR;
	}
	return c->transport == EIC_PIPE ? eic_pipe_idle(c, timeout_ms, err, errlen)
	                                : eic_dist_idle(c, timeout_ms, err, errlen);
}

void eic_close(struct eic *c)
{
	if (c->transport == EIC_PIPE)
		eic_pipe_close(c);
	else
		eic_dist_close(c);
}
int eic_rpc0(struct eic *c, const char *mod, const char *fun, int timeout_ms,
             struct term **out_root, const struct term **out_reply, char *err, size_t errlen)
{
	ei_x_buff args;
	*out_root = NULL;
	*out_reply = NULL;
	if (ei_x_new(&args) < 0 || ei_x_encode_empty_list(&args) < 0) {
		errtext_set(err, errlen, NULL, "out of memory");
		return EIC_ERROR;
	}
	int rc = eic_rpc(c, mod, fun, &args, timeout_ms, out_root, out_reply, err, errlen);
	ei_x_free(&args);
	return rc;
}

void eic_encode_binaries(ei_x_buff *x, char *const *v, size_t n)
{
	if (n) {
		ei_x_encode_list_header(x, (long)n);
		for (size_t i = 0; i < n; i++)
			ei_x_encode_binary(x, v[i], (long)strlen(v[i]));
	}
	ei_x_encode_empty_list(x);
}
