/* gate/probe/probe_blob.h: the compiled probe modules embedded in the binary at build time. */
#ifndef GATE_PROBE_BLOB_H
#define GATE_PROBE_BLOB_H

#include <stddef.h>

struct probe_blob {
	const char *module; /* the module's name, e.g. "gate_probe" */
	const unsigned char *beam;
	size_t size;
};

/* Terminated by an entry whose module is NULL. */
extern const struct probe_blob probe_blobs[];

/* The OTP release of the erlc that compiled them, e.g. "25" ("" when the build did not say). */
extern const char probe_otp_release[];

#endif
