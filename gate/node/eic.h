/* gate/node/eic.h: gate's one channel to a node, whatever carries it: RPCs with timeouts,
 * replies decoded with gate/node/term.h. Everything above gate/node (the probe, the run
 * modes, the commands) calls through this interface and never learns the transport.
 *
 * Two transports:
 * - distribution (eic_dist.c): gate is a hidden C node connected to a running node (attach
 *   and cluster mode). Ticks from the node are answered inside ei_rpc_from, so long calls (a
 *   whole test suite) keep the connection alive. A call is a gen_server call to the node's
 *   rex server with a reference of its own, and its reply carries that reference.
 * - a pipe pair (eic_pipe.c): the node gate starts for a project. Requests and replies are
 *   Erlang external terms, each framed by a 4-byte big-endian length (the node's side is
 *   `open_port({fd, 3, 4}, [{packet, 4}, binary])`, served by the bootstrap of
 *   gate/node/node.c). No distribution: the node is `nonode@nohost` as under bare `mix test`,
 *   and the suite may start and stop distribution without touching this channel.
 *
 * Waits are cut into slices of at most 200 ms; between slices the poll callback runs, so a
 * signal or a dead node process ends a wait at once.
 *
 * Over both transports a reply is matched to its call (the pipe: an id; distribution: a
 * reference): a reply that comes after its call's wait ended (a timeout, an error in between)
 * is dropped when it arrives and counted in c->late, never taken for another call's.
 */
#ifndef GATE_EIC_H
#define GATE_EIC_H

#include <stdbool.h>
#include <stddef.h>

#include <ei.h>

#include "gate/node/term.h"

enum eic_status {
	EIC_OK = 0,
	EIC_ERROR = -1,     /* err says what */
	EIC_TIMEOUT = -2,   /* no answer in time */
	EIC_CANCELLED = -3, /* the poll callback asked to stop */
	EIC_BADRPC = -4,    /* the call ran and failed in the node: {badrpc, Reason} */
};

/* Returns non-zero to abandon the current wait; may write a reason to err. */
typedef int (*eic_poll_fn)(void *arg, char *err, size_t errlen);

enum eic_transport {
	EIC_DIST = 0, /* distribution: gate as a hidden C node */
	EIC_PIPE = 1, /* a pipe pair to a node gate started */
};

struct eic {
	enum eic_transport transport;
	ei_cnode ec;         /* distribution only */
	int fd;              /* distribution: the socket; pipe: the read end (the node's
	                        replies); -1 when not connected */
	int wfd;             /* pipe: the write end (requests; the node's lifeline) */
	unsigned long seq;   /* pipe: the id of the last call; a late reply to an abandoned call
	                        carries an older one and is dropped */
	erlang_ref call_ref; /* distribution: the reference of the last call, in its reply */
	unsigned long late;  /* replies dropped because their call's wait had ended */
	bool ready;          /* pipe: the node's bootstrap said it booted ({gate_ready}) */
	unsigned char *rbuf; /* pipe: bytes read but not yet a whole frame */
	size_t rlen, rcap;
	char node[256];   /* the peer, e.g. gate_ab12@127.0.0.1 */
	size_t max_reply; /* bytes; larger replies are rejected */
	/* the decoder's caps on a reply (nesting, terms, text); NULL: term_limits_default */
	const struct term_limits *limits;
	eic_poll_fn poll;
	void *poll_arg;
	bool fetch_stdout; /* RPCs run with the caller's output sent back ({rex_stdout, Bin})
	                      and written to gate's stdout: for a node gate did not start */
};

void eic_init(struct eic *c);

/* Takes the pipe pair of a node gate started: rfd carries its replies, wfd gate's requests
 * (both owned from now on: eic_close closes them, and closing wfd is the node's end). name is
 * for messages. Calls may be made at once: the node's bootstrap serves them while the
 * project boots (see gate/node/node.c). */
void eic_take_pipe(struct eic *c, int rfd, int wfd, const char *name);

/* Waits up to timeout_ms for the bootstrap to say the project booted ({gate_ready}); at once
 * when it said so during an earlier call. Returns EIC_OK, EIC_TIMEOUT, EIC_CANCELLED (poll)
 * or EIC_ERROR with err. */
int eic_pipe_booted(struct eic *c, int timeout_ms, char *err, size_t errlen);

/* eic_take_pipe, then eic_pipe_booted. */
int eic_open_pipe(struct eic *c, int rfd, int wfd, const char *name, int timeout_ms, char *err,
                  size_t errlen);

/* eic_pipe_take's "no whole frame yet" (besides an enum eic_status). */
#define EIC_PIPE_MORE 1

/* The pipe's framing without I/O: looks at the bytes read so far (c->rbuf[0..rlen)). A whole
 * frame there is decoded into *out (owned), taken out of the buffer, and EIC_OK returned;
 * EIC_PIPE_MORE when no frame is whole yet, the buffer then having room for more
 * (c->rcap > c->rlen: the reader appends up to rcap - rlen bytes and calls again); EIC_ERROR
 * with err (what names the call, for the message) when the frame's length is over
 * c->max_reply, its term does not decode (that frame is dropped) or memory runs out. */
int eic_pipe_take(struct eic *c, const char *what, struct term **out, char *err, size_t errlen);

/* True while the channel is open. */
bool eic_connected(const struct eic *c);

/* Connects to a running node through its host's epmd: long names (name@host.domain or
 * name@IP) or short names (name@host). The C node takes a name of the same kind. An unknown
 * host, no epmd and no such node are told apart; cookie_from (where the cookie was read)
 * goes into the message when the node rejects the cookie. */
int eic_connect_node(struct eic *c, const char *node, const char *this_alive, const char *cookie,
                     const char *cookie_from, int timeout_ms, char *err, size_t errlen);

/* Calls mod:fun(args...) where args is an encoded list (version byte optional). On EIC_OK,
 * *out_root owns the decoded reply message and *out_reply points at Reply inside it (borrowed).
 * On EIC_BADRPC *out_root is the reply too, *out_reply the reason; err holds it as text. */
int eic_rpc(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args, int timeout_ms,
            struct term **out_root, const struct term **out_reply, char *err, size_t errlen);

/* eic_rpc in two halves, for work gate does while the node answers: eic_call_send sends the
 * call, eic_call_wait waits for its reply (the same statuses and ownership as eic_rpc). One
 * call at a time: a call sent and not waited for (an error in between) has its reply dropped
 * and counted in c->late when it arrives, never taken for the next one's. */
int eic_call_send(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args, char *err,
                  size_t errlen);
int eic_call_wait(struct eic *c, const char *mod, const char *fun, int timeout_ms,
                  struct term **out_root, const struct term **out_reply, char *err, size_t errlen);

/* Appends the strings v[0..n) to x as one Erlang list of binaries (mix test's arguments). */
void eic_encode_binaries(ei_x_buff *x, char *const *v, size_t n);

/* eic_rpc of mod:fun() with no arguments; the same ownership, and EIC_ERROR with "out of
 * memory" when the request cannot be built. */
int eic_rpc0(struct eic *c, const char *mod, const char *fun, int timeout_ms,
             struct term **out_root, const struct term **out_reply, char *err, size_t errlen);

/* Keeps the connection alive for timeout_ms while gate waits for something else (a
 * workload): answers the node's ticks and drops stray messages. Returns EIC_OK when the time
 * is up, EIC_CANCELLED when the poll callback asked to stop, EIC_ERROR (err says so) when
 * the connection broke: the node stopped. */
int eic_idle(struct eic *c, int timeout_ms, char *err, size_t errlen);

/* Closes the connection (the pipe: both ends, so a node gate started halts); a no-op when not
 * connected. */
void eic_close(struct eic *c);

#endif
