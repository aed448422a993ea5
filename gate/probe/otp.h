/* gate/probe/otp.h: the Erlang/OTP releases gate supports, and the check of a node's release.
 *
 * gate is tested on OTP 25 and 27 (Elixir 1.14 and 1.18). Its probe is compiled at build time
 * by the erlc of the OTP on PATH (probe_otp_release, from the build) with the options that keep
 * it loadable by OTP 25 (see the Makefile); a node older than OTP_MIN_RELEASE, or older than
 * the probe's OTP when that build could not keep it loadable there, is refused with both
 * versions named instead of the loader's "badfile".
 */
#ifndef GATE_OTP_H
#define GATE_OTP_H

#include <stddef.h>

#include "gate/node/eic.h"

#define OTP_MIN_RELEASE 25

/* Judges a node's OTP release (e.g. "25", as erlang:system_info(otp_release) says) against
 * the supported minimum. Returns 0 when supported; -1 with err naming the node, both
 * releases and the fix. An unparsable release is let through (0): the probe's load says more. */
int otp_release_check(const char *node, const char *node_release, char *err, size_t errlen);

/* Asks the node for its OTP release (into release, "" when it cannot tell) and checks it with
 * otp_release_check. Returns EIC_OK, EIC_ERROR with err, or eic_rpc's error. */
int otp_node_check(struct eic *c, int timeout_ms, char *release, size_t rlen, char *err,
                   size_t errlen);

/* After the probe failed to load (err holds why): when the node's release is older than the
 * OTP that compiled the probe, rewrites err to say so, naming both releases and the fix. */
void otp_explain_probe_load(const char *node, const char *node_release, char *err, size_t errlen);

#endif
