/* gate/run/cluster.h: `gate run --cluster`: the attached node and every node it is connected
 * to, observed through the attached node alone.
 *
 * gate keeps its one connection (to the attached node, which already has the probe) and
 * never connects to the others: the probe there pushes itself to them with
 * code:load_binary over erpc, snapshots all of them in parallel and removes itself from
 * them at the end (gate_probe:cluster_*). Each node keeps its own before set, so the born
 * and created checks work per node. A node that fails or disconnects gets its error and is
 * left out of the later steps; the others carry on.
 */
#ifndef GATE_CLUSTER_H
#define GATE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/node/eic.h"
#include "gate/probe/probe.h"
#include "model/finding.h"

/* The most nodes a cluster run observes: the list comes from the attached node, and each node
 * costs two snapshots in gate's memory. A larger cluster is refused (exit 2) before any
 * probe is pushed: observe a part of it, attaching to a node connected to fewer others. */
#define CLUSTER_NODES_MAX 64

struct cluster_node {
	char name[256];
	struct snapshot before, after;
	bool have_before, have_after;
	struct findings findings;
	char error[1024]; /* non-empty: the node failed or left; the step that says so */
};

struct cluster {
	struct cluster_node *nodes; /* the attached node first */
	size_t n;
	bool pushed;      /* the probe went out to the others */
	struct eic *conn; /* borrowed: the connection to the attached node */
	int timeout_ms;
};

/* Lists the attached node and its nodes() through conn (cluster_nodes_decode). Returns 0, or
 * -1 with err. */
int cluster_discover(struct cluster *cl, struct eic *conn, int timeout_ms, char *err,
                     size_t errlen);

/* The node list answered by the attached node (named by from, in messages): a non-empty list
 * of at most CLUSTER_NODES_MAX distinct node names. Fills cl->nodes and cl->n. Returns 0, or
 * -1 with err (cl then holds no nodes). */
int cluster_nodes_decode(struct cluster *cl, const struct term *list, const char *from, char *err,
                         size_t errlen);

/* Loads the probe on every node but the attached one. A node that refuses is an error for
 * the whole run: returns -1 with err naming it. */
int cluster_push(struct cluster *cl, char *err, size_t errlen);

/* One snapshot of every node still in the run, in parallel, into before or after (by
 * opts->mark). Per-node failures go into that node's error. Returns 0 when the call itself
 * went through (even when some nodes failed), or -1 with err (the attached node is gone,
 * the wait was cancelled). */
int cluster_snapshot(struct cluster *cl, const struct probe_snapshot_opts *opts, char *err,
                     size_t errlen);

/* Removes the probe from every node but the attached one; best effort. */
void cluster_unload(struct cluster *cl);

/* Every node's findings in one list for the reports that know one node (the Markdown
 * summary, the HTML report, annotations): subjects prefixed with the node ("a@h: ets"), and
 * a failing "node" finding (shown SHOW_NODE_LOST) for each node that failed or left. Returns 0,
 * or -1 when out of memory. */
int cluster_findings_merge(const struct cluster *cl, struct findings *out);

/* Nodes whose error is set. */
size_t cluster_lost(const struct cluster *cl);

/* Frees everything; safe on a zeroed cluster and twice. */
void cluster_clear(struct cluster *cl);

#endif
