/* ci/store/snapshot_json.h: a snapshot as JSON (`gate snapshot --json`), with stable field names.
 *
 * Format "gate.snapshot/1", keys sorted:
 *   format, node, otp_release, taken_at_ms, gc_us
 *   memory      {total, processes, processes_used, system, atom, atom_used, binary, code, ets}
 *               bytes; a category the node did not report is absent
 *   system      {process_count, process_limit, atom_count, atom_limit, ets_count, ets_limit,
 *                port_count, port_limit, word_size, schedulers}
 *   processes   [{pid, name (null), initial_call, current_function, memory, heap_size,
 *                 total_heap_size, message_queue_len, bin_refs, bin_bytes,
 *                 bin_refs_before_gc, bin_bytes_before_gc, born}]   sizes in bytes; the
 *                 before-GC figures are null unless measured (gate snapshot --bin-leak)
 *   born        {count, memory, groups: [{key, count, memory, example_pid}]}
 *   ets         [{name, id, named, type, protection, size (rows), memory (bytes), owner_pid,
 *                 owner_name (null), created}]
 *   allocators  [{type, carriers_size, blocks_size, fragmentation (0..1)}]
 *   persistent_term {count, memory}                        (deep snapshots; else absent)
 *   what_grew   (an after-snapshot with its before set; else absent)
 *               {processes: [{pid, name, initial_call, current_function, ancestor, module,
 *                 memory_before, memory, mailbox_before, mailbox, bin_bytes_before,
 *                 bin_bytes, born}], ets: [{name, id, owner_pid, owner_name, owner_call,
 *                 module, size_before, size, memory_before, memory, created,
 *                 bin_bytes (refc binaries its rows hold, estimated)}],
 *                ports_opened, ports: [{name, owner_pid, owner_name, owner_call, module,
 *                 count, os_pid}], persistent_term_new, atoms_new: [{key, count, bytes,
 *                 example}]}    (null: unknown or none)
 */
#ifndef GATE_CI_STORE_SNAPSHOT_JSON_H
#define GATE_CI_STORE_SNAPSHOT_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "model/snapshot.h"

/* A new reference owned by the caller (json_decref), or NULL when out of memory. */
json_t *snapshot_json(const struct snapshot *s);

/* Writes snapshot_json(s) to path atomically ("-" is stdout). Returns 0, or -1 with err. */
int snapshot_json_write(const char *path, const struct snapshot *s, char *err, size_t errlen);

#endif
