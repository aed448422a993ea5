/* gate/probe/probe.h: the C side of the probe: load its modules into the node, call it, decode
 * its replies into the model, and remove it again.
 *
 * Every function returning int returns an enum eic_status (EIC_OK == 0) and writes a
 * message to err otherwise; EIC_CANCELLED means the wait was abandoned (a signal).
 */
#ifndef GATE_PROBE_H
#define GATE_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/node/eic.h"
#include "gate/node/term.h"
#include "model/tests.h"

struct probe_info {
	char otp_release[16];
	char erts[32];
	char elixir[32];
	char mix_env[32];
	char node[96]; /* node() when hello ran: a node gate booted may be named by its flags */
	bool mix_project;
	int word_size;
};

struct probe_blob;

/* Whether a session loads the embedded module b: every module where tests run (for_tests),
 * else those snapshots need (not tests_only). Every module costs a purge at the end, and a
 * purge scans every process of the node. */
bool probe_blob_wanted(const struct probe_blob *b, bool for_tests);
/* Appends the wanted modules, in load order, as the list [{Module, File, Beam}] that
 * gate_probe:cluster_load/3 takes, and their names as [<<"Module">>] for cluster_unload/3. */
void probe_blobs_encode(ei_x_buff *x, bool for_tests);
void probe_modules_encode(ei_x_buff *x, bool for_tests);

/* Loads the embedded modules with code:load_binary/3 (nothing is written to the node): those
 * snapshots need, and with for_tests those of the test run and the ExUnit formatter too.
 * fresh: under the names of the first free slot (see probe_names.h), so that a
 * previous gate's purge still running in the node is not waited for; only for sessions
 * whose calls all go through probe_entry() (gate snapshot, gate watch). new_node: a node
 * gate has just started, which holds nothing of gate's: all but gate_probe in one
 * code:atomic_load/1. */
int probe_load(struct eic *c, bool for_tests, bool fresh, bool new_node, int timeout_ms, char *err,
               size_t errlen);
/* The name of the probe's entry module as this process loaded it: "gate_probe", or a
 * slot's "gate_probe__N" after a fresh probe_load. */
const char *probe_entry(void);
/* How the embedded modules leave the node at the end:
 *   PROBE_UNLOAD_HANDOFF  one call, gate_probe:unload/1: the helpers stopped, the modules
 *                         deleted (code:is_loaded/1 says false on return), their purges (a
 *                         scan of every process each) done afterwards by one process of the
 *                         node, without holding code_server: gate waits for no scan
 *   PROBE_UNLOAD_HALTING  the node is halted right after: the helpers are stopped, the code
 *                         stays (it goes with the node) */
enum probe_unload_mode { PROBE_UNLOAD_HANDOFF, PROBE_UNLOAD_HALTING };
/* Stops the probe's helpers in the node, then removes the embedded modules as mode says;
 * best effort, errors are ignored. */
void probe_unload(struct eic *c, bool for_tests, enum probe_unload_mode mode, int timeout_ms);

int probe_hello(struct eic *c, int timeout_ms, struct probe_info *out, char *err, size_t errlen);
/* Starts loading what mix test loads, in a process of the node, and returns at once: asked
 * while the node gate started still boots (see gate_probe_run:preload/0). */
int probe_preload(struct eic *c, int timeout_ms, char *err, size_t errlen);
/* Pays ExUnit's one-time costs before the before-snapshot (see gate_probe:prepare/0). */
int probe_prepare(struct eic *c, int timeout_ms, char *err, size_t errlen);
enum probe_mark { PROBE_MARK_NONE, PROBE_MARK_BEFORE, PROBE_MARK_AFTER };

struct probe_snapshot_opts {
	bool gc;              /* force GC of every process first */
	bool deep;            /* processes, ETS tables, allocators too */
	int top;              /* processes per ranking; 0: the probe's default (20) */
	enum probe_mark mark; /* BEFORE remembers what exists; AFTER reports what was born */
	bool no_bin_leak;     /* skip each process's refc binaries before its GC (recon's
	                       * bin_leak: 1.5x the pass); the before-GC figures are then -1 */
	/* the fine level (gate_probe_alloc.erl), deep snapshots only: the heap size the node's
	 * system monitor reports from (0: the probe's default) */
	int64_t heap_watch;
	/* wait at most this long (ms) for the input buffers ports keep until their
	 * next read to be released before the snapshot (gate_probe_snapshot's settle_ports);
	 * 0: no wait */
	int settle_ms;
	/* --repeat's snapshots between runs (mark AFTER for what was born since the warm-up):
	 * the peak tracker goes on, so the last snapshot reports the peak of runs 2..N */
	bool keep_peak;
};

/* Appends opts as the map gate_probe:snapshot/1 takes (cluster mode sends it on). */
void probe_snapshot_opts_encode(ei_x_buff *x, const struct probe_snapshot_opts *opts);
/* Takes one snapshot; *out is owned by the caller (snapshot_clear). */
int probe_snapshot(struct eic *c, const struct probe_snapshot_opts *opts, int timeout_ms,
                   struct snapshot *out, char *err, size_t errlen);
/* probe_snapshot in two halves (eic_call_send and eic_call_wait), for gate's own work while
 * the node takes it: nothing else goes to c in between. */
int probe_snapshot_send(struct eic *c, const struct probe_snapshot_opts *opts, char *err,
                        size_t errlen);
int probe_snapshot_wait(struct eic *c, int timeout_ms, struct snapshot *out, char *err,
                        size_t errlen);
/* Runs mix test with args in the node. *suite_error gets mix test's own error text when it
 * raised after running tests (owned by the caller, NULL when none). */
/* mode: what the formatter measures for attribution (module events, GC'd per-test deltas).
 * fresh_node: gate booted the node (so ExUnit runs because gate started it, and a suite that
 * never calls ExUnit.start() is red, as under bare mix test). */
/* replied (NULL: none) is called with arg once the node's reply is in, before gate decodes
 * the tests in it (a call sent then, such as the after-snapshot, runs in the node meanwhile). */
int probe_run_tests(struct eic *c, char *const *args, size_t nargs, enum attribution_mode mode,
                    bool fresh_node, int timeout_ms, void (*replied)(void *arg), void *arg,
                    struct test_run *out, char **suite_error, char *err, size_t errlen);

/* The decoder's caps on the suite's reply, which holds every test recorded (up to
 * faithful_test_cap()) and the module events: for the unit tests. */
const struct term_limits *probe_tests_limits(void);

/* Decoders, on their own for the unit tests. Return 0, or -1 with err. */
int probe_snapshot_decode(const struct term *reply, struct snapshot *out, char *err, size_t errlen);
/* Also decodes the formatter's attribution (module events into out->modules, per-test
 * deltas); without those keys (an older probe) out->attribution is ATTRIBUTION_OFF. */
int probe_tests_decode(const struct term *reply, struct test_run *out, char **suite_error,
                       char *err, size_t errlen);

#endif
