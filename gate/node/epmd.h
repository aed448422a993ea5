/* gate/node/epmd.h: asks a host's epmd where a node listens, so that an attach that fails says
 * why: an unknown host, no epmd, no such node. (ei reports all of these, and a rejected
 * cookie, as the same EIO.) */
#ifndef GATE_EPMD_H
#define GATE_EPMD_H

#include <stddef.h>

/* Looks up node (name@host) with the epmd on host (port $ERL_EPMD_PORT, else 4369), within
 * timeout_ms. Returns 0 with *out_port the node's distribution port, or -1 with err saying
 * what is wrong and how to fix it. */
int epmd_port_please(const char *host, const char *node, int timeout_ms, int *out_port, char *err,
                     size_t errlen);

/* The epmd port in use: $ERL_EPMD_PORT, else 4369. */
int epmd_port(void);

/* Whether something accepts a TCP connection on host:port within timeout_ms: 0, or the
 * errno of the failure (ECONNREFUSED: nothing listens; a stale epmd registration). */
int epmd_port_answers(const char *host, int port, int timeout_ms);

#endif
