/* gate/probe/probe_names.h: the names the probe's modules are loaded under in a node.
 *
 * Removing a module from a node takes a purge, and a purge scans every process of the node
 * (about 250 ms at 100 000 processes). A module whose old code is not purged yet cannot be
 * loaded again under its name, so a snapshot taken right after another one waited for the
 * previous one's purges. A session that may (gate snapshot, gate watch) loads the probe under
 * the names of a free slot instead: slot 0 is the names as compiled (gate_probe,
 * gate_probe_snapshot, ...), slot N the same names with "__N" appended (gate_probe__1, ...).
 * The renaming rewrites the compiled module's atom table: the module's own name and every
 * call to another module of the probe change together, so the slot's modules call each
 * other. There are PROBE_SLOTS slots: a node gets at most that many sets of atoms from gate.
 */
#ifndef GATE_PROBE_NAMES_H
#define GATE_PROBE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define PROBE_SLOTS 8

/* Whether module is renamed in slots other than 0: the probe's own modules (gate_probe*);
 * not the ExUnit formatter, which Mix finds by its name. */
bool probe_name_renamed(const char *module);

/* The name of module in slot (module itself in slot 0 or when it is not renamed). */
void probe_name(const char *module, unsigned slot, char *out, size_t len);

/* A copy of the compiled module beam (len bytes) whose atoms naming a module of the probe are
 * renamed for slot (every atom equal to one of modules[0..nmod-1] that probe_name_renamed
 * accepts). Returns a malloc'd buffer and its size in *outlen, or NULL when beam is not a
 * BEAM file this code can rewrite (then the caller loads the names as compiled). */
unsigned char *probe_beam_rename(const unsigned char *beam, size_t len, const char *const *modules,
                                 size_t nmod, unsigned slot, size_t *outlen);

#endif
