/* rules/binary.c: the binary rule: refc binaries held per process after GC. */
#include "rules/binary.h"

#include <stdio.h>

#include "model/finding.h"
#include "rules/consolidate.h"

#define RULE "binary"
#define FAMILY "process"

/* A clean suite's processes hold a few kB of binaries after GC; a leak pins megabytes
 * (300 sub-binaries of 64 kB parents pinned 19 MB in our fixture). gate.toml says why. */
void binary_config_default(struct binary_config *cfg)
{
	cfg->max_refs_per_process = 50000;
	cfg->max_bytes_per_process = 10000000;
}

static bool over(const struct binary_config *cfg, const struct proc_info *p)
{
	return (cfg->max_refs_per_process != RULES_OFF &&
	        p->bin_refs > cfg->max_refs_per_process) ||
	       (cfg->max_bytes_per_process != RULES_OFF &&
	        p->bin_bytes > cfg->max_bytes_per_process);
}

/* "20 000 refs and 10.0 MB", or one of them */
static void limits_describe(char *buf, size_t len, const struct binary_config *cfg)
{
	char r[32], b[32];

	rules_count_format(r, sizeof(r), cfg->max_refs_per_process);
	model_bytes_format(b, sizeof(b), cfg->max_bytes_per_process);
	if (cfg->max_refs_per_process == RULES_OFF)
		snprintf(buf, len, "%s", b);
	else if (cfg->max_bytes_per_process == RULES_OFF)
		snprintf(buf, len, "%s refs", r);
	else
		snprintf(buf, len, "%s refs and %s", r, b);
}

int binary_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                 const struct binary_config *cfg)
{
	struct culprits bad = {0};
	const struct proc_info *top = NULL;
	char msg[1024], lims[96], label[256], refs[32], bytes[32];
	int64_t floor = cfg->max_bytes_per_process == RULES_OFF ? 0 : cfg->max_bytes_per_process;
	int rc = 0;

	if (cfg->max_refs_per_process == RULES_OFF && cfg->max_bytes_per_process == RULES_OFF)
		return 0;
	limits_describe(lims, sizeof(lims), cfg);
	if (after->nprocs == 0)
		return findings_add(out, RULE, FAMILY, VERDICT_SKIP, 0, 0, floor, -1,
		                    "binaries per process: the after-snapshot has no per-process "
		                    "data (a light snapshot)");
	for (size_t i = 0; i < after->nprocs; i++) {
		const struct proc_info *p = &after->procs[i];
		if (!top || p->bin_bytes > top->bin_bytes)
			top = p;
		if (over(cfg, p) && culprits_add(&bad, i, p->bin_bytes) < 0)
			goto oom;
	}
	if (bad.count == 0) {
		rules_proc_label(label, sizeof(label), top);
		rules_count_format(refs, sizeof(refs), top->bin_refs);
		model_bytes_format(bytes, sizeof(bytes), top->bin_bytes);
		snprintf(msg, sizeof(msg),
		         "no process holds more than %s of refc binaries after GC (most: %s with "
		         "%s refs, %s)",
		         lims, label, refs, bytes);
		rc = findings_add(out, RULE, FAMILY, VERDICT_PASS, 0, top->bin_bytes, floor, -1,
		                  msg);
		goto out;
	}
	culprits_sort(&bad);
	for (size_t k = 0; k < bad.count && k < RULES_MAX_CULPRITS; k++) {
		const struct proc_info *p = &after->procs[bad.items[k].index];
		const struct proc_info *was = rules_proc_find(before, p->pid);
		size_t o;
		rules_proc_label(label, sizeof(label), p);
		rules_count_format(refs, sizeof(refs), p->bin_refs);
		model_bytes_format(bytes, sizeof(bytes), p->bin_bytes);
		o = (size_t)snprintf(msg, sizeof(msg),
		                     "process %s holds %s refc binaries of %s after GC", label,
		                     refs, bytes);
		if (p->bin_bytes_before_gc > p->bin_bytes && o < sizeof(msg)) {
			char freed[32], frefs[32];
			model_bytes_format(freed, sizeof(freed),
			                   p->bin_bytes_before_gc - p->bin_bytes);
			rules_count_format(frefs, sizeof(frefs),
			                   p->bin_refs_before_gc - p->bin_refs);
			o += (size_t)snprintf(msg + o, sizeof(msg) - o, " (GC freed %s in %s refs)",
			                      freed, frefs);
		}
		if (o < sizeof(msg))
			snprintf(msg + o, sizeof(msg) - o, ", limit %s", lims);
		char subject[300];
		snprintf(subject, sizeof(subject), FAMILY " %s", rules_proc_subject(p));
		if (findings_add(out, RULE, subject, VERDICT_FAIL, was ? was->bin_bytes : 0,
		                 p->bin_bytes, floor, -1, msg) < 0 ||
		    rules_proc_structure(&out->items[out->count - 1], p, MEM_BINARY,
		                         p->bin_bytes - (was ? was->bin_bytes : 0)) < 0)
			goto oom;
	}
	if (culprits_add_more(out, RULE, FAMILY, &bad, "processes over the binary limits") < 0)
		goto oom;
	goto out;
oom:
	rc = -1;
out:
	culprits_clear(&bad);
	return rc;
}
