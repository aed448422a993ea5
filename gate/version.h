/* gate/version.h: gate's version (--version, JSON, baselines). It is written once, in the
 * VERSION file (a link to integrations/mix/VERSION, which the Mix package carries); the
 * Makefile writes it into $(BUILD)/gen/gate_version.h as GATE_VERSION, a string literal. */
#ifndef GATE_VERSION_H
#define GATE_VERSION_H

#include "gen/gate_version.h"

#endif
