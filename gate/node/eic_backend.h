/* gate/node/eic_backend.h: what the two transports behind gate/node/eic.h share with the
 * interface (eic.c dispatches to eic_dist.c or eic_pipe.c); nothing outside gate/node
 * includes it. */
#ifndef GATE_EIC_BACKEND_H
#define GATE_EIC_BACKEND_H

#include <stddef.h>

#include <ei.h>

/* declared in gate/node/eic.h and gate/node/term.h, which include nothing of this file's */
struct eic;
struct term;

/* Waits are cut into slices of this many milliseconds; the poll callback runs between them. */
#define EIC_SLICE_MS 200

/* The answer to mod:fun, reply inside root (owned: handed to *out_root): EIC_OK, or
 * EIC_BADRPC with err when reply is {badrpc, Reason}. */
int eic_reply_take(struct eic *c, const char *mod, const char *fun, struct term *root,
                   const struct term *reply, struct term **out_root, const struct term **out_reply,
                   char *err, size_t errlen);

/* The call's arguments without the version byte (ei_rpc_to and a tuple element want them so). */
void eic_args_bare(const ei_x_buff *args, const char **buf, int *len);

int eic_dist_send(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args, char *err,
                  size_t errlen);
int eic_dist_wait(struct eic *c, const char *mod, const char *fun, int timeout_ms,
                  struct term **out_root, const struct term **out_reply, char *err, size_t errlen);
int eic_dist_idle(struct eic *c, int timeout_ms, char *err, size_t errlen);
void eic_dist_close(struct eic *c);

int eic_pipe_send(struct eic *c, const char *mod, const char *fun, const ei_x_buff *args, char *err,
                  size_t errlen);
int eic_pipe_wait(struct eic *c, const char *mod, const char *fun, int timeout_ms,
                  struct term **out_root, const struct term **out_reply, char *err, size_t errlen);
int eic_pipe_idle(struct eic *c, int timeout_ms, char *err, size_t errlen);
void eic_pipe_close(struct eic *c);

#endif
