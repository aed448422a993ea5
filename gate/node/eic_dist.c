/* gate/node/eic_dist.c: the distribution transport of gate/node/eic.h: gate as a hidden C node
 * connected to a running node (attach and cluster mode): connect, RPC with timeouts, idle. */
#include "gate/node/eic.h"

#include "base/errtext.h"
#include "gate/node/clock.h"
#include "gate/node/eic_backend.h"
#include "gate/node/epmd.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int split_host(const char *node, char *host, size_t len)
{
	const char *at = strchr(node, '@');
	if (!at || !at[1] || strlen(at + 1) >= len)
		return -1;
	strcpy(host, at + 1);
	return 0;
}

int eic_connect_node(struct eic *c, const char *node, const char *this_alive, const char *cookie,
                     const char *cookie_from, int timeout_ms, char *err, size_t errlen)
{
	char host[256], self[320];
	if (split_host(node, host, sizeof(host)) < 0 || node[0] == '@') {
		errtext_set(err, errlen, NULL,
		            "node name %s: expected name@host (e.g. app@127.0.0.1)", node);
		return EIC_ERROR;
	}
	/* a long-name node only talks to long names, a short-name node to short ones */
	bool long_name = strchr(host, '.') != NULL;
	char myhost[256] = "localhost";
	if (long_name) {
		snprintf(myhost, sizeof(myhost), "%s",
		         host[0] >= '0' && host[0] <= '9' ? "127.0.0.1" : host);
	} else {
		gethostname(myhost, sizeof(myhost) - 1);
		myhost[strcspn(myhost, ".")] = '\0';
	}
	snprintf(self, sizeof(self), "%s@%s", this_alive, myhost);
	struct in_addr any = {.s_addr = htonl(INADDR_LOOPBACK)};
	if (ei_connect_xinit(&c->ec, myhost, this_alive, self, (Erl_IpAddr)&any, cookie, 0) < 0) {
		errtext_set(err, errlen, NULL, "ei_connect_xinit for %s failed (erl_errno %d)",
		            self, erl_errno);
		return EIC_ERROR;
	}
	/* epmd first: "unknown host", "no epmd", "no such node" each have their own fix, and ei
	 * reports all of them as EIO, like a rejected cookie */
	long long t0 = clock_ms();
	int port;
	if (epmd_port_please(host, node, timeout_ms, &port, err, errlen) < 0)
		return EIC_ERROR;
	int left = timeout_ms - (int)(clock_ms() - t0);
	int fd = ei_connect_tmo(&c->ec, (char *)node, (unsigned)(left > 100 ? left : 100));
	if (fd < 0) {
		int e = erl_errno;
		if (e == ETIMEDOUT)
			errtext_set(err, errlen, NULL,
			            "connecting to node %s (port %d) timed out after %d ms: "
			            "is the node overloaded, or a firewall in the way?",
			            node, port, timeout_ms);
		else if (epmd_port_answers(host, port, 2000) != 0)
			errtext_set(
			        err, errlen, NULL,
			        "epmd on %s (port %d) lists node %s at port %d, but "
			        "nothing answers there: a stale registration, the node is gone; "
			        "restart "
			        "the node, or the epmd that keeps its entry",
			        host, epmd_port(), node, port);
		else if (e == EIO)
			errtext_set(
			        err, errlen, NULL,
			        "node %s (port %d) rejected the connection: the cookie "
			        "read from %s was rejected (or the node uses %s names); give the "
			        "node's "
			        "cookie with --cookie-file or GATE_COOKIE",
			        node, port, cookie_from, long_name ? "short" : "long");
		else
			errtext_set(err, errlen, NULL, "cannot connect to node %s (port %d): %s",
			            node, port, strerror(e ? e : errno));
		return e == ETIMEDOUT ? EIC_TIMEOUT : EIC_ERROR;
	}
	c->fd = fd;
	snprintf(c->node, sizeof(c->node), "%s", node);
	return EIC_OK;
}

/* Sends the call as a gen_server call to the node's rex server, with a reference of its own:
 * {'$gen_call', {Self, Ref}, {call, Mod, Fun, Args, GroupLeader}}. rex runs it as it runs
 * rpc:call's (a process of its own, a crash as {badrpc, {'EXIT', Reason}}) and answers
 * {Ref, Reply}; ei_rpc_to's plain form is answered {rex, Reply}, which no call can be matched
 * by. The group leader is the node's user, or with fetch_stdout rex's forwarder to this C
 * node ({rex_stdout, Bin}, the reply sent after the output). rex serves both forms from OTP
 * 25 to 27. */
static int rpc_send(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args,
                    char *err, size_t errlen)
{
	const char *abuf;
	int alen;
	eic_args_bare(args, &abuf, &alen);
	erlang_pid *self = ei_self(&c->ec);
	erlang_ref ref;
	ei_x_buff x;
	if (ei_make_ref(&c->ec, &ref) < 0 || ei_x_new_with_version(&x) < 0) {
		errtext_set(err, errlen, NULL, "out of memory building the call %s:%s", mod, fun);
		return EIC_ERROR;
	}
	int rc = EIC_ERROR;
	if (ei_x_encode_tuple_header(&x, 3) < 0 || ei_x_encode_atom(&x, "$gen_call") < 0 ||
	    ei_x_encode_tuple_header(&x, 2) < 0 || ei_x_encode_pid(&x, self) < 0 ||
	    ei_x_encode_ref(&x, &ref) < 0 || ei_x_encode_tuple_header(&x, 5) < 0 ||
	    ei_x_encode_atom(&x, "call") < 0 || ei_x_encode_atom(&x, mod) < 0 ||
	    ei_x_encode_atom(&x, fun) < 0 || ei_x_append_buf(&x, abuf, alen) < 0 ||
	    (c->fetch_stdout ? ei_x_encode_tuple_header(&x, 2) < 0 ||
	                               ei_x_encode_atom(&x, "send_stdout_to_caller") < 0 ||
	                               ei_x_encode_pid(&x, self) < 0
	                     : ei_x_encode_atom(&x, "user") < 0)) {
		errtext_set(err, errlen, NULL, "out of memory building the call %s:%s", mod, fun);
		goto out;
	}
	if (ei_reg_send(&c->ec, c->fd, "rex", x.buff, x.index) < 0) {
		errtext_set(err, errlen, NULL, "sending the call %s:%s to node %s failed: %s", mod,
		            fun, c->node, strerror(erl_errno ? erl_errno : EIO));
		goto out;
	}
	c->call_ref = ref;
	rc = EIC_OK;
out:
	ei_x_free(&x);
	return rc;
}

/* Not the answer yet: keep waiting (rpc_take's return besides an enum eic_status). */
#define RPC_AGAIN 1

static bool ref_same(const erlang_ref *a, const erlang_ref *b)
{
	return a->len == b->len && a->len > 0 && a->len <= 5 && a->creation == b->creation &&
	       strcmp(a->node, b->node) == 0 &&
	       memcmp(a->n, b->n, (size_t)a->len * sizeof(a->n[0])) == 0;
}

/* A reply to one of gate's calls: {Ref, Reply}, root the message decoded (so the bytes are
 * known to be a whole term, which ei's decoders below do not check). Its reference in *ref. */
static bool is_call_reply(const ei_x_buff *x, const struct term *root, erlang_ref *ref)
{
	if (root->type != TERM_TUPLE || root->u.seq.n != 2 ||
	    term_tuple_at(root, 0)->type != TERM_OPAQUE)
		return false;
	int idx = 0, ver, arity, type, size;
	if (ei_decode_version(x->buff, &idx, &ver) < 0)
		idx = 0;
	return ei_decode_tuple_header(x->buff, &idx, &arity) == 0 &&
	       ei_get_type(x->buff, &idx, &type, &size) == 0 &&
	       (type == ERL_NEW_REFERENCE_EXT || type == ERL_NEWER_REFERENCE_EXT) &&
	       ei_decode_ref(x->buff, &idx, ref) == 0;
}

/* One message that came in: what a call wrote (rex_stdout: to stdout), a stray message, a
 * late reply to an earlier call (dropped and counted), or with want (waiting for a call) its
 * answer {Ref, Reply}, decoded into *out_root. */
static int rpc_take(struct eic *c, bool want, const char *mod, const char *fun, const ei_x_buff *x,
                    struct term **out_root, const struct term **out_reply, char *err, size_t errlen)
{
	if ((size_t)x->index > c->max_reply) {
		errtext_set(err, errlen, NULL,
		            "node %s answered %s:%s with %d bytes, more than the %zu gate accepts",
		            c->node, mod, fun, x->index, c->max_reply);
		return EIC_ERROR;
	}
	size_t idx = 0;
	struct term *root;
	char derr[256];
	if (term_decode(&root, (const unsigned char *)x->buff, (size_t)x->index, &idx, c->limits,
	                derr, sizeof(derr)) < 0) {
		errtext_set(err, errlen, NULL, "node %s sent an undecodable reply to %s:%s: %s",
		            c->node, mod, fun, derr);
		return EIC_ERROR;
	}
	const struct term *tag = term_tuple_at(root, 0);
	const struct term *reply = term_tuple_at(root, 1);
	if (term_is_atom(tag, "rex_stdout") && reply && reply->type == TERM_BINARY) {
		fwrite(reply->u.bin.data, 1, reply->u.bin.len, stdout);
		fflush(stdout);
		term_free(root);
		return RPC_AGAIN;
	}
	erlang_ref ref;
	if (!is_call_reply(x, root, &ref)) {
		term_free(root); /* not the answer to a call: a stray message */
		return RPC_AGAIN;
	}
	if (!want || !ref_same(&ref, &c->call_ref)) {
		c->late++; /* an earlier call's, whose wait ended: never this one's */
		term_free(root);
		return RPC_AGAIN;
	}
	return eic_reply_take(c, mod, fun, root, reply, out_root, out_reply, err, errlen);
}

int eic_dist_send(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args, char *err,
                  size_t errlen)
{
	return rpc_send(c, mod, fun, args, err, errlen);
}

int eic_dist_wait(struct eic *c, const char *mod, const char *fun, int timeout_ms,
                  struct term **out_root, const struct term **out_reply, char *err, size_t errlen)
{
	long long deadline = clock_ms() + timeout_ms;
	ei_x_buff x;
	if (ei_x_new(&x) < 0) {
		errtext_set(err, errlen, NULL, "out of memory");
		return EIC_ERROR;
	}
	int status = RPC_AGAIN;
	while (status == RPC_AGAIN) {
		if (c->poll && c->poll(c->poll_arg, err, errlen)) {
			status = EIC_CANCELLED;
			break;
		}
		long long left = deadline - clock_ms();
		if (left <= 0) {
			errtext_set(err, errlen, NULL, "node %s did not answer %s:%s within %d ms",
			            c->node, mod, fun, timeout_ms);
			status = EIC_TIMEOUT;
			break;
		}
		erlang_msg msg;
		x.index = 0;
		int rc = ei_xreceive_msg_tmo(c->fd, &msg, &x,
		                             (unsigned)(left < EIC_SLICE_MS ? left : EIC_SLICE_MS));
		if (rc == ERL_TICK || rc == ERL_TIMEOUT)
			continue;
		if (rc == ERL_ERROR) {
			/* EINTR: a signal arrived while waiting (SIGINT/SIGTERM set their flag and
			 * the poll above says so); it is no broken connection */
			if (erl_errno == ETIMEDOUT || erl_errno == EINTR)
				continue;
			errtext_set(err, errlen, NULL,
			            "the connection to node %s broke during %s:%s (%s): the node "
			            "stopped or crashed",
			            c->node, mod, fun, strerror(erl_errno ? erl_errno : EIO));
			status = EIC_ERROR;
			break;
		}
		if (msg.msgtype != ERL_SEND && msg.msgtype != ERL_REG_SEND)
			continue; /* link, unlink, exit: control messages, not the reply */
		if (x.index == 0)
			continue; /* a receive cut short by a signal (seen under ASan): the poll
			             callback above decides */
		status = rpc_take(c, true, mod, fun, &x, out_root, out_reply, err, errlen);
	}
	ei_x_free(&x);
	return status;
}

int eic_dist_idle(struct eic *c, int timeout_ms, char *err, size_t errlen)
{
	long long deadline = clock_ms() + timeout_ms;
	ei_x_buff x;
	if (ei_x_new(&x) < 0) {
		errtext_set(err, errlen, NULL, "out of memory");
		return EIC_ERROR;
	}
	int status = EIC_OK;
	for (;;) {
		if (c->poll && c->poll(c->poll_arg, err, errlen)) {
			status = EIC_CANCELLED;
			break;
		}
		long long left = deadline - clock_ms();
		if (left <= 0)
			break;
		erlang_msg msg;
		x.index = 0;
		int rc = ei_xreceive_msg_tmo(c->fd, &msg, &x,
		                             (unsigned)(left < EIC_SLICE_MS ? left : EIC_SLICE_MS));
		if (rc == ERL_ERROR && erl_errno != ETIMEDOUT && erl_errno != EAGAIN) {
			errtext_set(err, errlen, NULL,
			            "the connection to node %s broke (%s): the node stopped "
			            "or crashed",
			            c->node, strerror(erl_errno ? erl_errno : EIO));
			status = EIC_ERROR;
			break;
		}
		/* ticks are answered inside ei; a late reply is counted, anything else is not
		 * for us */
		if (rc == ERL_MSG && (msg.msgtype == ERL_SEND || msg.msgtype == ERL_REG_SEND) &&
		    x.index > 0) {
			struct term *none = NULL;
			const struct term *nreply = NULL;
			char ignored[256];
			rpc_take(c, false, "an idle wait", "", &x, &none, &nreply, ignored,
			         sizeof(ignored));
		}
	}
	ei_x_free(&x);
	return status;
}

void eic_dist_close(struct eic *c)
{
	if (c->fd >= 0) {
		ei_close_connection(c->fd);
		c->fd = -1;
	}
}
