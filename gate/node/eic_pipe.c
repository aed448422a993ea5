/* gate/node/eic_pipe.c: the pipe transport of gate/node/eic.h: the channel to the node gate
 * started, without distribution. Each message is an external term framed by a
 * 4-byte big-endian length, as the node's `open_port({fd, 3, 4}, [{packet, 4}, binary])`
 * reads and writes them. gate sends {call, Id, Mod, Fun, Args}; the node's bootstrap (see
 * gate/node/node.c) applies it in a process of its own and answers {gate_reply, Id, Result},
 * Result being {badrpc, {'EXIT', Reason}} when the call raised, as rpc's are. */
#include "gate/node/eic.h"

#include "base/atomic.h"
#include "base/errtext.h"
#include "gate/node/clock.h"
#include "gate/node/eic_backend.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One frame: the length, then the term (x begins with the version byte). */
static int frame_send(struct eic *c, const ei_x_buff *x, const char *what, char *err, size_t errlen)
{
	uint32_t n = (uint32_t)x->index;
	unsigned char hdr[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
	                        (unsigned char)(n >> 8), (unsigned char)n};
	if (write_all(c->wfd, (const char *)hdr, 4) < 0 ||
	    write_all(c->wfd, x->buff, (size_t)x->index) < 0) {
		errtext_set(err, errlen, NULL,
		            "sending %s to node %s failed (%s): the node stopped or crashed", what,
		            c->node, strerror(errno ? errno : EIO));
		return EIC_ERROR;
	}
	return EIC_OK;
}

static uint32_t frame_len(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The read buffer's usual size: a reply larger than it (a deep snapshot) grows the buffer
 * for as long as it takes to read, and the buffer shrinks back once it is taken, so that a
 * day-long watch holds what one sample needs, not its largest reply. */
#define PIPE_BUF_USUAL 65536

/* Back to the usual size when what is left fits in it; a failed shrink keeps the buffer. */
static void pipe_buf_shrink(struct eic *c)
{
	if (c->rcap <= PIPE_BUF_USUAL || c->rlen > PIPE_BUF_USUAL)
		return;
	unsigned char *nb = realloc(c->rbuf, PIPE_BUF_USUAL);
	if (nb) {
		c->rbuf = nb;
		c->rcap = PIPE_BUF_USUAL;
	}
}

int eic_pipe_take(struct eic *c, const char *what, struct term **out, char *err, size_t errlen)
{
	*out = NULL;
	if (c->rlen < 4) {
		if (c->rcap >= PIPE_BUF_USUAL)
			return EIC_PIPE_MORE;
		unsigned char *nb = realloc(c->rbuf, PIPE_BUF_USUAL);
		if (!nb) {
			errtext_set(err, errlen, NULL, "out of memory");
			return EIC_ERROR;
		}
		c->rbuf = nb;
		c->rcap = PIPE_BUF_USUAL;
		return EIC_PIPE_MORE;
	}
	uint32_t n = frame_len(c->rbuf);
	if (n > c->max_reply) {
		errtext_set(err, errlen, NULL,
		            "node %s answered %s with %u bytes, more than the %zu gate accepts",
		            c->node, what, n, c->max_reply);
		return EIC_ERROR;
	}
	size_t need = 4 + (size_t)n;
	if (c->rlen >= need) {
		size_t idx = 0;
		char derr[256];
		int rc = term_decode(out, c->rbuf + 4, n, &idx, c->limits, derr, sizeof(derr));
		memmove(c->rbuf, c->rbuf + need, c->rlen - need);
		c->rlen -= need;
		pipe_buf_shrink(c);
		if (rc < 0) {
			errtext_set(err, errlen, NULL,
			            "node %s sent an undecodable reply to %s: %s", c->node, what,
			            derr);
			return EIC_ERROR;
		}
		return EIC_OK;
	}
	if (c->rlen == c->rcap) {
		/* doubled as the bytes arrive, not sized by the length alone: a frame cut short
		 * or a length that lies costs what was sent, not up to max_reply */
		size_t cap = c->rcap * 2 < need ? c->rcap * 2 : need;
		unsigned char *nb = realloc(c->rbuf, cap);
		if (!nb) {
			errtext_set(err, errlen, NULL,
			            "out of memory reading %u bytes from node %s", n, c->node);
			return EIC_ERROR;
		}
		c->rbuf = nb;
		c->rcap = cap;
	}
	return EIC_PIPE_MORE;
}

/* Reads what the node sent within wait_ms; when a whole frame is there, decodes it into
 * *out (owned) and returns EIC_OK; EIC_PIPE_MORE when none is whole yet; EIC_ERROR with err
 * when the pipe closed, broke, or carried more or other than gate accepts. */
static int frame_recv(struct eic *c, int wait_ms, const char *what, struct term **out, char *err,
                      size_t errlen)
{
	for (;;) {
		int rc = eic_pipe_take(c, what, out, err, errlen);
		if (rc != EIC_PIPE_MORE)
			return rc;
		struct pollfd pf = {.fd = c->fd, .events = POLLIN};
		int pr = poll(&pf, 1, wait_ms);
		if (pr < 0 && errno == EINTR)
			return EIC_PIPE_MORE; /* the poll callback decides */
		if (pr <= 0)
			return pr == 0 ? EIC_PIPE_MORE : EIC_ERROR;
		ssize_t got = read(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			return EIC_PIPE_MORE;
		if (got <= 0) {
			errtext_set(
			        err, errlen, NULL,
			        "the channel to node %s closed during %s (%s): the node stopped "
			        "or crashed",
			        c->node, what, got == 0 ? "end of file" : strerror(errno));
			return EIC_ERROR;
		}
		c->rlen += (size_t)got;
		wait_ms = 0; /* take what is there; wait again only for the rest */
	}
}

static int is_ready(struct eic *c, const struct term *t)
{
	(void)c;
	return t->type == TERM_TUPLE && term_is_atom(term_tuple_at(t, 0), "gate_ready");
}

/* Waits until deadline for a frame that accept() takes (returns EIC_OK: *out kept) or
 * drops (EIC_PIPE_MORE: freed); the poll callback runs between slices. */
static int pipe_wait(struct eic *c, long long deadline, const char *what,
                     int (*accept)(struct eic *c, const struct term *t), struct term **out,
                     char *err, size_t errlen)
{
	*out = NULL;
	for (;;) {
		if (c->poll && c->poll(c->poll_arg, err, errlen))
			return EIC_CANCELLED;
		long long left = deadline - clock_ms();
		if (left <= 0)
			return EIC_TIMEOUT;
		struct term *t;
		int rc = frame_recv(c, (int)(left < EIC_SLICE_MS ? left : EIC_SLICE_MS), what, &t,
		                    err, errlen);
		if (rc == EIC_PIPE_MORE)
			continue;
		if (rc != EIC_OK)
			return rc;
		if (is_ready(c, t))
			c->ready =
			        true; /* the project booted: said once, whichever wait reads it */
		if (accept && accept(c, t)) {
			*out = t;
			return EIC_OK;
		}
		/* not for this wait: a late reply to an abandoned call (counted), or a frame no
		 * call asked for */
		if (t->type == TERM_TUPLE && t->u.seq.n == 3 &&
		    term_is_atom(term_tuple_at(t, 0), "gate_reply"))
			c->late++;
		term_free(t);
	}
}

static int is_reply(struct eic *c, const struct term *t)
{
	const struct term *id = term_tuple_at(t, 1);
	return t->type == TERM_TUPLE && t->u.seq.n == 3 &&
	       term_is_atom(term_tuple_at(t, 0), "gate_reply") && id && id->type == TERM_INT &&
	       (unsigned long long)id->u.i == (unsigned long long)c->seq;
}

void eic_take_pipe(struct eic *c, int rfd, int wfd, const char *name)
{
	c->transport = EIC_PIPE;
	c->fd = rfd;
	c->wfd = wfd;
	c->rlen = 0;
	c->ready = false;
	snprintf(c->node, sizeof(c->node), "%s", name);
}

int eic_pipe_booted(struct eic *c, int timeout_ms, char *err, size_t errlen)
{
	if (c->ready)
		return EIC_OK;
	struct term *t;
	int rc = pipe_wait(c, clock_ms() + timeout_ms, "the start", is_ready, &t, err, errlen);
	term_free(t);
	return rc;
}

int eic_open_pipe(struct eic *c, int rfd, int wfd, const char *name, int timeout_ms, char *err,
                  size_t errlen)
{
	eic_take_pipe(c, rfd, wfd, name);
	return eic_pipe_booted(c, timeout_ms, err, errlen);
}

int eic_pipe_send(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args, char *err,
                  size_t errlen)
{
	char what[160];
	snprintf(what, sizeof(what), "%s:%s", mod, fun);
	const char *abuf;
	int alen;
	eic_args_bare(args, &abuf, &alen);
	ei_x_buff x;
	if (ei_x_new_with_version(&x) < 0) {
		errtext_set(err, errlen, NULL, "out of memory");
		return EIC_ERROR;
	}
	c->seq++;
	int rc = EIC_ERROR;
	if (ei_x_encode_tuple_header(&x, 5) < 0 || ei_x_encode_atom(&x, "call") < 0 ||
	    ei_x_encode_ulonglong(&x, (unsigned long long)c->seq) < 0 ||
	    ei_x_encode_atom(&x, mod) < 0 || ei_x_encode_atom(&x, fun) < 0 ||
	    ei_x_append_buf(&x, abuf, alen) < 0) {
		errtext_set(err, errlen, NULL, "out of memory building the call %s", what);
		goto out;
	}
	rc = frame_send(c, &x, what, err, errlen);
out:
	ei_x_free(&x);
	return rc;
}

/* The reply to the last call sent (its id is c->seq); an older call's is dropped. */
int eic_pipe_wait(struct eic *c, const char *mod, const char *fun, int timeout_ms,
                  struct term **out_root, const struct term **out_reply, char *err, size_t errlen)
{
	char what[160];
	snprintf(what, sizeof(what), "%s:%s", mod, fun);
	struct term *root;
	int rc = pipe_wait(c, clock_ms() + timeout_ms, what, is_reply, &root, err, errlen);
	if (rc == EIC_TIMEOUT)
		errtext_set(err, errlen, NULL, "node %s did not answer %s within %d ms", c->node,
		            what, timeout_ms);
	if (rc == EIC_OK)
		rc = eic_reply_take(c, mod, fun, root, term_tuple_at(root, 2), out_root, out_reply,
		                    err, errlen);
	return rc;
}

int eic_pipe_idle(struct eic *c, int timeout_ms, char *err, size_t errlen)
{
	struct term *t;
	int rc = pipe_wait(c, clock_ms() + timeout_ms, "an idle wait", NULL, &t, err, errlen);
	return rc == EIC_TIMEOUT ? EIC_OK : rc; /* the time is up: what idling is for */
}

void eic_pipe_close(struct eic *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->wfd >= 0)
		close(c->wfd);
	c->fd = c->wfd = -1;
	free(c->rbuf);
	c->rbuf = NULL;
	c->rlen = c->rcap = 0;
}
