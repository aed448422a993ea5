/* gate/run/cluster.c: every node of a cluster, reached through the attached node alone. */
#include "gate/run/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"
#include "gate/probe/probe_blob.h"
#include "model/finding.h"

/* The reply's list of {NodeBin, Result}, checked. */
static int node_results(const struct term *reply, const char *what, char *err, size_t errlen)
{
	if (!reply || reply->type != TERM_LIST) {
		errtext_set(err, errlen, NULL,
		            "gate_probe:%s answered with something else than a list", what);
		return -1;
	}
	for (size_t i = 0; i < reply->u.seq.n; i++) {
		const struct term *t = &reply->u.seq.items[i];
		if (t->type != TERM_TUPLE || t->u.seq.n != 2 || !term_text(term_tuple_at(t, 0))) {
			errtext_set(err, errlen, NULL, "gate_probe:%s: entry %zu is malformed",
			            what, i + 1);
			return -1;
		}
	}
	return 0;
}

static struct cluster_node *find(struct cluster *cl, const char *name)
{
	for (size_t i = 0; i < cl->n; i++)
		if (strcmp(cl->nodes[i].name, name) == 0)
			return &cl->nodes[i];
	return NULL;
}

/* The error text of {error, Text}, or a description of whatever else came. */
static void result_error(const struct term *res, char *buf, size_t len)
{
	const char *t = term_text(term_tuple_at(res, 1));
	if (term_is_atom(term_tuple_at(res, 0), "error") && t)
		snprintf(buf, len, "%s", t);
	else
		term_format(res, buf, len);
}

/* The node names as an Erlang list of binaries: those still in the run, or all. */
static void encode_nodes(ei_x_buff *x, const struct cluster *cl, bool all)
{
	for (size_t i = 0; i < cl->n; i++)
		if (all || !cl->nodes[i].error[0]) {
			ei_x_encode_list_header(x, 1);
			ei_x_encode_binary(x, cl->nodes[i].name, (long)strlen(cl->nodes[i].name));
		}
	ei_x_encode_empty_list(x);
}

int cluster_nodes_decode(struct cluster *cl, const struct term *list, const char *from, char *err,
                         size_t errlen)
{
	if (!list || list->type != TERM_LIST || list->u.seq.n == 0) {
		errtext_set(err, errlen, NULL,
		            "gate_probe:cluster_nodes on %s answered with no node list", from);
		return -1;
	}
	if (list->u.seq.n > CLUSTER_NODES_MAX) {
		errtext_set(err, errlen, NULL,
		            "the cluster of %s has %zu nodes, more than gate observes in one run "
		            "(at most %d); attach to a node connected to fewer of them",
		            from, list->u.seq.n, CLUSTER_NODES_MAX);
		return -1;
	}
	cl->nodes = calloc(list->u.seq.n, sizeof(*cl->nodes));
	if (!cl->nodes) {
		errtext_set(err, errlen, NULL, "out of memory listing the cluster of %s", from);
		return -1;
	}
	for (size_t i = 0; i < list->u.seq.n; i++) {
		const char *name = term_text(&list->u.seq.items[i]);
		if (!name || !name[0] || strlen(name) >= sizeof(cl->nodes[0].name) ||
		    find(cl, name)) {
			errtext_set(err, errlen, NULL,
			            "gate_probe:cluster_nodes on %s: entry %zu is %s", from, i + 1,
			            !name || !name[0] ? "not a node name"
			            : find(cl, name)  ? "a node listed twice"
			                              : "a node name too long");
			free(cl->nodes);
			cl->nodes = NULL;
			cl->n = 0;
			return -1;
		}
		snprintf(cl->nodes[cl->n++].name, sizeof(cl->nodes[0].name), "%s", name);
	}
	return 0;
}

int cluster_discover(struct cluster *cl, struct eic *conn, int timeout_ms, char *err, size_t errlen)
{
	ei_x_buff args;
	struct term *root;
	const struct term *r;
	memset(cl, 0, sizeof(*cl));
	cl->conn = conn;
	cl->timeout_ms = timeout_ms;
	ei_x_new(&args);
	ei_x_encode_empty_list(&args);
	int rc = eic_rpc(conn, "gate_probe", "cluster_nodes", &args, timeout_ms, &root, &r, err,
	                 errlen);
	ei_x_free(&args);
	if (rc != EIC_OK)
		goto out;
	rc = cluster_nodes_decode(cl, r, conn->node, err, errlen);
out:
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}

int cluster_push(struct cluster *cl, char *err, size_t errlen)
{
	if (cl->n < 2)
		return 0;
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 3);
	encode_nodes(&args, cl, true);
	probe_blobs_encode(&args, false); /* the modules snapshots need */
	ei_x_encode_long(&args, cl->timeout_ms);
	ei_x_encode_empty_list(&args);
	struct term *root;
	const struct term *r;
	cl->pushed = true; /* from the first attempt on, the clean-up tries every node */
	int rc = eic_rpc(cl->conn, "gate_probe", "cluster_load", &args, cl->timeout_ms + 5000,
	                 &root, &r, err, errlen);
	ei_x_free(&args);
	if (rc == EIC_OK && node_results(r, "cluster_load", err, errlen) < 0)
		rc = EIC_ERROR;
	for (size_t i = 0; rc == EIC_OK && i < r->u.seq.n; i++) {
		const struct term *t = &r->u.seq.items[i];
		const struct term *res = term_tuple_at(t, 1);
		if (!term_is_atom(res, "ok")) {
			char why[768];
			result_error(res, why, sizeof(why));
			errtext_set(err, errlen, NULL,
			            "cannot load the probe on node %s through %s: %s; every "
			            "node of the cluster must accept code:load_binary",
			            term_text(term_tuple_at(t, 0)), cl->conn->node, why);
			rc = EIC_ERROR;
		}
	}
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}

int cluster_snapshot(struct cluster *cl, const struct probe_snapshot_opts *opts, char *err,
                     size_t errlen)
{
	bool after = opts->mark == PROBE_MARK_AFTER;
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 3);
	encode_nodes(&args, cl, false);
	probe_snapshot_opts_encode(&args, opts);
	ei_x_encode_long(&args, cl->timeout_ms);
	ei_x_encode_empty_list(&args);
	struct term *root;
	const struct term *r;
	int rc = eic_rpc(cl->conn, "gate_probe", "cluster_snapshot", &args, cl->timeout_ms + 5000,
	                 &root, &r, err, errlen);
	ei_x_free(&args);
	if (rc == EIC_OK && node_results(r, "cluster_snapshot", err, errlen) < 0)
		rc = EIC_ERROR;
	for (size_t i = 0; rc == EIC_OK && i < r->u.seq.n; i++) {
		const struct term *t = &r->u.seq.items[i];
		struct cluster_node *nd = find(cl, term_text(term_tuple_at(t, 0)));
		const struct term *res = term_tuple_at(t, 1);
		if (!nd)
			continue;
		struct snapshot *s = after ? &nd->after : &nd->before;
		char why[768];
		if (!term_is_atom(term_tuple_at(res, 0), "ok")) {
			result_error(res, why, sizeof(why));
			snprintf(nd->error, sizeof(nd->error),
			         "node %s failed during the %s-snapshot: %s", nd->name,
			         after ? "after" : "before", why);
		} else if (probe_snapshot_decode(term_tuple_at(res, 1), s, why, sizeof(why)) < 0) {
			snprintf(nd->error, sizeof(nd->error),
			         "node %s sent a malformed snapshot: %s", nd->name, why);
		} else if (after) {
			nd->have_after = true;
		} else {
			nd->have_before = true;
		}
	}
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}

void cluster_unload(struct cluster *cl)
{
	if (!cl->pushed || !cl->conn || !eic_connected(cl->conn))
		return;
	cl->pushed = false;
	ei_x_buff args;
	char ignored[256];
	struct term *root;
	const struct term *r;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 3);
	encode_nodes(&args, cl, true);
	probe_modules_encode(&args, false);
	ei_x_encode_long(&args, 2000);
	ei_x_encode_empty_list(&args);
	eic_rpc(cl->conn, "gate_probe", "cluster_unload", &args, 10000, &root, &r, ignored,
	        sizeof(ignored));
	term_free(root);
	ei_x_free(&args);
}

int cluster_findings_merge(const struct cluster *cl, struct findings *out)
{
	for (size_t i = 0; i < cl->n; i++) {
		const struct cluster_node *nd = &cl->nodes[i];
		char subject[512];
		if (nd->error[0]) {
			if (findings_add(out, "node", nd->name, VERDICT_FAIL, 0, 0, 0, -1,
			                 nd->error) < 0)
				return -1;
			findings_show(out, out->count - 1, UNIT_BYTES, SHOW_NODE_LOST);
		}
		for (size_t k = 0; k < nd->findings.count; k++) {
			const struct finding *f = &nd->findings.items[k];
			snprintf(subject, sizeof(subject), "%s: %s", nd->name,
			         f->subject ? f->subject : "");
			/* whole: its culprits, file and line, and whether it is a warning */
			if (findings_add_copy(out, f, subject) < 0)
				return -1;
		}
	}
	return 0;
}

size_t cluster_lost(const struct cluster *cl)
{
	size_t n = 0;
	for (size_t i = 0; i < cl->n; i++)
		n += cl->nodes[i].error[0] != '\0';
	return n;
}

void cluster_clear(struct cluster *cl)
{
	for (size_t i = 0; i < cl->n; i++) {
		snapshot_clear(&cl->nodes[i].before);
		snapshot_clear(&cl->nodes[i].after);
		findings_clear(&cl->nodes[i].findings);
	}
	free(cl->nodes);
	cl->nodes = NULL;
	cl->n = 0;
}
