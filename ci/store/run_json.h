/* ci/store/run_json.h: `gate run --json FILE`: the run result as JSON. Its "baseline" object is
 * what `gate baseline update --from FILE` reads back; `gate merge` reads the whole of it
 * (ci/store/run_json_read.h).
 *
 * "format": "gate.run/2" added, without changing a key of gate.run/1: "partition"
 * {"k", "n"} (MIX_TEST_PARTITION of `mix test --partitions N`; null when not partitioned),
 * "config_digest" (of the effective gate.toml), "tests" grew "cases" (every test: module,
 * name, file, line, time_us, state, message, reason, app), "finished", "suite_ran",
 * "mix_reported", "mix_status", "mix_reason", "mix_explained", "seed", "modules" (each test
 * module's attributed growth: module, async, finished, overlapped, time_us, delta by category
 * with processes and ets_tables), "attribution" (off, module, test) and "attribution_sync"; each
 * finding grew "detail", "explained", "warned", "culprit", "culprit_test", "file", "line", "unit"
 * and "show"; "repo_root" (test files are under it); a merged result (`gate merge --json`) has
 * "merged": [k, ...], "partition": null and "baseline": null, and "partitions": [{"k",
 * "iterations", "samples"}] (each partition's --repeat runs and --sample series, null when it
 * had none); each test case grew "measured", "async" and "delta" (--per-test: its own growth
 * by category with "process_count" and "ets_tables"; null when not measured), and a module's
 * "delta" names its count of processes "process_count" ("processes" is erlang:memory's); a
 * cluster run (`gate run --cluster --json`) has "nodes": [{"node", "error", "verdict",
 * "findings", "before", "after"}], every node of the cluster, the attached one first, with
 * "findings" every node's (subjects "NODE: ..."), "before", "after" and "baseline" null. */
#ifndef GATE_CI_STORE_RUN_JSON_H
#define GATE_CI_STORE_RUN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ci/store/baseline_file.h"
#include "model/finding.h"
#include "model/tests.h"
#include "rules/repeat.h"
#include "rules/trend_samples.h"

/* gate merge --json: one partition's --repeat runs and --sample series (NULL: none). */
struct run_json_part {
	int k;
	const struct repeat_data *iterations;
	const struct sample_series *samples;
};

/* gate run --cluster --json: one node, its findings and snapshots (NULL: it has none). */
struct run_json_node {
	const char *name;
	const char *error; /* the node failed or left the run; NULL when it did not */
	const struct findings *findings;
	const struct snapshot *before, *after;
};

/* Everything is borrowed; NULL leaves the key out (commit: null). */
struct run_json {
	const char *gate_version;
	const char *project;
	const char *commit;              /* HEAD's commit id, NULL outside git */
	bool passed;                     /* the verdict of the run */
	int64_t started;                 /* Unix time */
	const struct baseline *baseline; /* this run's figures */
	const struct test_run *tests;
	const struct findings *findings;
	const struct snapshot *before, *after;
	const struct repeat_data *iterations; /* --repeat, when it was judged */
	const struct sample_series *samples;  /* --sample */
	/* what `gate merge` needs to check and join the partitions' results */
	int partition, partitions; /* k of N (mix test --partitions N); 0: not partitioned */
	const char *config_digest; /* run_json_digest of the effective configuration */
	const char *repo_root;     /* the git repository's root: `gate merge` makes test files
	                              relative to it; NULL outside git */
	const int *merged;         /* `gate merge --json`: the partitions it joined (baseline is
	                              then NULL: each partition's is its own) */
	size_t nmerged;
	const struct run_json_part *parts; /* and each one's runs and samples; NULL: none */
	size_t nparts;
	const struct run_json_node *nodes; /* a cluster's nodes; NULL: one node */
	size_t nnodes;
};

/* The format run_json_write writes, and the newest one `gate merge` reads. */
#define RUN_JSON_FORMAT "gate.run/2"
#define RUN_JSON_VERSION 2

/* A digest of text (FNV-1a, 64 bits) as 16 hex digits, to tell two configurations apart. */
void run_json_digest(char out[17], const char *text, size_t len);

/* Writes the run result to path, atomically (a reader sees the old file or the new one).
 * Returns 0, or -1 with err naming path. */
int run_json_write(const char *path, const struct run_json *d, char *err, size_t errlen);

#endif
