/* gate/probe/boot_modules.h: the modules a node gate starts for `mix test` loads in the
 * background from its first moment (gate/node/node.h: node_opts.preload).
 *
 * Bare `mix test` loads about 200 modules of Elixir, Mix, ExUnit and OTP's compiler one at a
 * time, each when first called, through code_server: the path searched, the file read, the
 * code prepared and committed in turn, about 1.6 ms a module here, and most of the time
 * between the VM's start and the first test. Loaded in batches by
 * code:ensure_modules_loaded/1 (the files read and prepared in parallel, one commit a batch),
 * in the order mix test needs them, they are there when Mix asks for them. The list
 * (gate/probe/boot_modules.c) holds only modules of Elixir's own applications and OTP's
 * kernel, stdlib and compiler, which every `mix test` loads: never the project's, its
 * dependencies' or the suite's. A name the node's Elixir or OTP lacks is skipped. The probe
 * waits for that process before the before-snapshot (gate_probe_run:prepare/0), so that
 * nothing it loads is counted as the run's. */
#ifndef GATE_PROBE_BOOT_MODULES_H
#define GATE_PROBE_BOOT_MODULES_H

#include <stddef.h>

extern const char *const probe_boot_modules[];
extern const size_t probe_boot_nmodules;

/* Modules per batch: each batch is committed as soon as it is prepared, so that the first
 * ones are there early. Measured on a 1 000-test suite, gate - bare over interleaved rounds
 * (the modules loaded by an -eval given to gate's node): batches of 20 -16 ms, of 40 -4 ms,
 * all in one batch +23 ms (10 rounds; Mix's boot found nothing loaded before that batch's
 * one commit and loaded them itself); in another series, one batch +18 ms against +95 ms
 * without them (14 rounds). */
#define PROBE_BOOT_BATCH 20

#endif
