/* gate/version.h: gate's version, the one place it is written (--version, JSON, baselines). */
#ifndef GATE_VERSION_H
#define GATE_VERSION_H

#define GATE_VERSION "0.1.0"

#endif
