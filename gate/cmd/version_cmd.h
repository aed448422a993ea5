/* gate/cmd/version_cmd.h: `gate --version`: gate's version and how this binary was built. */
#ifndef GATE_VERSION_CMD_H
#define GATE_VERSION_CMD_H

#include <stdio.h>

/* Prints "gate VERSION" on the first line (what scripts and `mix gate` read), then how the
 * binary was built: a release binary (libgit2, libxml2, jansson and ei linked statically, the
 * C library dynamically) or a build from source, the libraries' versions, the Erlang/OTP
 * release of its ei and of the erlc that compiled its probe. */
void version_print(FILE *out);

#endif
