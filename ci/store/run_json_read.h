/* ci/store/run_json_read.h: reads a run result back (`gate run --json`, ci/store/run_json.h) for
 * `gate merge`: the partition, the commit, the configuration digest, gate's version, every
 * test, every finding, the erlang:memory figures before and after, and the baseline
 * payload. Strict: a file that is not a gate run result, or one of a newer format, or one of
 * gate.run/1 (which lacks the partition and the tests), is refused with a message that names
 * the file and the fix.
 *
 * Ownership: a struct run_result is filled zeroed-in and cleared by run_result_clear; every
 * string in it is its own. Nothing here keeps a pointer to its arguments.
 */
#ifndef GATE_CI_STORE_RUN_JSON_READ_H
#define GATE_CI_STORE_RUN_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/baseline.h"
#include "rules/repeat.h"
#include "rules/trend_samples.h"

/* A run result holds snapshots too: a wider cap than a baseline (as `baseline update --from`). */
#define RUN_RESULT_MAX (64 * 1024 * 1024)

struct run_result {
	char *name;            /* the file it was read from, for messages */
	int version;           /* N of its "format": "gate.run/N" */
	char *gate_version;    /* the gate that wrote it */
	char *project;         /* as that gate saw it (a path of the job's machine) */
	char *commit;          /* HEAD measured; NULL outside git */
	char *config_digest;   /* run_json_digest of the effective gate.toml */
	char *repo_root;       /* the job's repository root; NULL outside git */
	int partition;         /* k of N; 0 when the run was not a partition */
	int partitions;        /* N */
	bool passed;           /* the verdict that run gave */
	int64_t started;       /* Unix time */
	struct test_run tests; /* every test; tests.partition is the result's partition */
	struct findings findings;
	struct snapshot before, after; /* the erlang:memory figures and the node name only */
	struct baseline baseline;      /* the run's figures as a baseline (when have_baseline) */
	bool have_baseline;
	bool merged_output; /* written by gate merge --json ("merged": [...]): no partition's */
	/* --repeat's runs ("iterations", run 0 the before-snapshot) and --sample's series
	 * ("samples"), when the run had them */
	struct repeat_data iterations;
	bool have_iterations;
	struct sample_series samples;
	bool have_samples;
};

/* Parses text (len bytes) read from name. Returns 0, or -1 with err "NAME: what is wrong;
 * the fix" (out is then cleared). */
int run_result_parse(struct run_result *out, const char *text, size_t len, const char *name,
                     char *err, size_t errlen);

/* Reads and parses the file at path (a regular file of at most RUN_RESULT_MAX bytes). */
int run_result_read(struct run_result *out, const char *path, char *err, size_t errlen);

/* Frees everything and zeroes r; a zeroed r is a no-op. */
void run_result_clear(struct run_result *r);

#endif
