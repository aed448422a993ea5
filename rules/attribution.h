/* rules/attribution.h: which test modules and tests grew the memory, and the culprit text a
 * failing memory rule gets.
 *
 * Ownership: attribution_build fills run->modules (owned by run, freed by test_run_clear);
 * the events it reads are borrowed. Nothing here does I/O.
 */
#ifndef GATE_RULES_ATTRIBUTION_H
#define GATE_RULES_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>

#include "model/finding.h"
#include "model/tests.h"

/* [attribution] in gate.toml. */
struct attribution_config {
	bool per_test; /* a GC'd snapshot around every test (gate run --per-test); default false */
};

/* How many modules, tests, process groups, tables and holders one culprit list names. */
#define ATTRIBUTION_TOP 5

/* Binary holders below this are not listed as culprits: every node has processes holding a
 * few hundred bytes (init, Mix's stacks), which explain no growth worth a failure. */
#define ATTRIBUTION_MIN_HOLDER (64 * 1024)

/* Builds run->modules from the module events, in the order they happened. The growth
 * between two snapshots with figures (module edges) goes to the modules running then, in
 * proportion to how long each was busy in that stretch: a sync module always (it runs
 * alone), an async one in its setup_all and inside its tests (their edges carry only their
 * time); evenly when none was; while no module runs, to nobody. A finish with no start is
 * ignored. Returns 0, or -1 on allocation failure (run->modules then holds what was built). */
int attribution_build(struct test_run *run, const struct module_event *events, size_t n);

/* What culprits are ranked by: an erlang:memory category (enum mem_cat), or this one, the
 * growth of the process count. */
#define ATTRIBUTION_KEY_PROCESSES MEM_CAT_COUNT
/* None: the finding's figures are counts no test's memory measures (UNIT_COUNT: the ports
 * rule); its rule names its culprit itself (the ports' owners by spawn ancestry). */
#define ATTRIBUTION_KEY_NONE (-1)

/* The growth of key in d; and written for people: "+2.6 MB ets", "+198 processes". */
int64_t attribution_value(const struct mem_delta *d, int key);
void attribution_value_format(char *buf, size_t len, int key, int64_t v);

/* The modules (or, with tests true, the measured tests) ranked by growth of key, largest
 * first, only those that grew. Writes up to max indices into out and returns how many. */
size_t attribution_rank(const struct test_run *run, int key, bool tests, size_t *out, size_t max);

/* What a finding's culprits are ranked by: ATTRIBUTION_KEY_NONE when its figures are counts
 * (UNIT_COUNT); its category for growth, baseline and trend; ets, binary, atom_used for those
 * rules; the process count for the process rule's born, processes_used for its mailbox and
 * memory findings; total otherwise. */
int attribution_key(const struct finding *f);

/* run->modules by name (then by position), for finding the growth of each of thousands of
 * modules without a pass over all of them each time. A new array the caller frees, of
 * run->nmodules pointers into run->modules; NULL when there are none or out of memory. */
const struct module_growth **attribution_modules_sorted(const struct test_run *run);
/* The first module of run->modules named module (as a pass in order would find it), from
 * the n pointers attribution_modules_sorted gave; NULL when none. */
const struct module_growth *attribution_module_find(const struct module_growth *const *sorted,
                                                    size_t n, const char *module);

/* What o left behind that key measures: processes (the process count), their memory
 * (processes, processes_used), their refc binary bytes (binary), their tables' bytes (ets);
 * -1 for a key it says nothing about. */
int64_t attribution_owner_value(const struct module_owner *o, int key);

/* The noise floors of attribution: a module or test measured under these (light snapshots
 * at its edges, no GC: a clean suite's modules move a few hundred kB either way) is never
 * named as a culprit. */
#define ATTRIBUTION_NOISE_BYTES (256 * 1000)
#define ATTRIBUTION_NOISE_PROCESSES 10
/* A module or test measured above this many times the judged growth (plus the noise floor)
 * carries mostly garbage counted between its edges without GC: it is evidence of nothing. */
#define ATTRIBUTION_MAX_OVER 2

/* Whether a module or test measured growing by measured (in key's unit) is evidence for a
 * finding that judged judged: above the noise floor, at least a quarter of judged, and not
 * more than ATTRIBUTION_MAX_OVER times judged plus the noise floor. The figure cited is
 * then min(measured, judged): never more than what it is attributed from. */
bool attribution_evidence(int64_t measured, int64_t judged, int key);

/* Appends to every failing finding (except the "and N more" ones and those with no key, which
 * name their own) the likely culprits: to
 * its message "; likely culprit: MODULE (...)" naming the module that left the most of it
 * behind by spawn ancestry (after->owners) when that is at least a quarter of the judged
 * growth, else the test or module that grew that category most when attribution_evidence
 * says it is evidence (the figure cited is never more than the judged growth), else
 * "; no test stands out (...)",
 * and to its detail the lists: modules (and tests, when measured) with the most growth,
 * processes born and still alive grouped, ETS tables created and left alive with owner, and
 * the processes holding the most binary bytes after GC with what GC freed. before, after and
 * run may be NULL. Returns 0, or -1 on allocation failure. */
int attribution_annotate(struct findings *findings, const struct snapshot *before,
                         const struct snapshot *after, const struct test_run *run);

#endif
