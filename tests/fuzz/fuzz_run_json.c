/* tests/fuzz/fuzz_run_json.c: the run result reader (ci/store/run_json_read.c), what `gate merge`
 * reads from files other CI jobs uploaded, then the merge on top (ci/store/run_merge.c) with the
 * result as the only partition present. Oracle: a refusal names the file and leaves the result
 * zeroed; an accepted result holds what the merge relies on (the format, the gate, the digest, a
 * partition k of n, every test's module and name, every finding's verdict). fuzz-max-len: 131072
 * (the seeds are real results of 75 kB; a smaller cap cuts them) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/store/run_json.h"
#include "ci/store/run_json_read.h"
#include "ci/store/run_merge.h"
#include "model/finding.h"
#include "tests/fuzz/fuzz.h"

#define NAME "fuzz.json"

static void check_refused(const struct run_result *r, const char *err)
{
	static const struct run_result zero;
	if (memcmp(r, &zero, sizeof(zero)) != 0)
		fuzz_fail("a refused result is not cleared");
	if (!memchr(err, '\0', 1024) || strncmp(err, NAME, strlen(NAME)) != 0)
		fuzz_fail("the refusal does not name the file: %s", err);
}

static void check_accepted(const struct run_result *r)
{
	if (r->version != RUN_JSON_VERSION || !r->name || !r->gate_version || !r->config_digest)
		fuzz_fail("an accepted result lacks its format, name, gate or digest");
	if (r->partition && (r->partition < 1 || r->partition > r->partitions))
		fuzz_fail("an accepted result is partition %d of %d", r->partition, r->partitions);
	for (size_t i = 0; i < r->tests.count; i++)
		if (!r->tests.tests[i].module || !r->tests.tests[i].name ||
		    r->tests.tests[i].partition != r->partition)
			fuzz_fail("test %zu lacks its module, name or partition", i);
	for (size_t i = 0; i < r->findings.count; i++)
		if ((unsigned)r->findings.items[i].verdict > VERDICT_SKIP)
			fuzz_fail("finding %zu has verdict %d", i,
			          (int)r->findings.items[i].verdict);
}

/* The merge of the result alone, every other partition allowed to be missing. */
static void merge_alone(struct run_result *r)
{
	static bool allow[RUN_MERGE_MAX + 1];
	static FILE *devnull;
	char err[1024];
	for (size_t k = 0; k <= RUN_MERGE_MAX; k++)
		allow[k] = k >= 1 && k <= (size_t)r->partitions && k != (size_t)r->partition;
	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		fuzz_fail("cannot open /dev/null");
	if (run_merge_check(r, 1, allow, RUN_MERGE_MAX + 1, err, sizeof(err)) < 0) {
		if (r->partition && r->partitions <= RUN_MERGE_MAX)
			fuzz_fail("a partition alone, the others allowed missing, refused: %s",
			          err);
		return;
	}
	run_merge_sort(r, 1);
	run_merge_judged_figures(r, 1);
	struct run_merged m;
	memset(&m, 0, sizeof(m));
	if (run_merge_build(&m, r, 1) < 0)
		fuzz_fail("run_merge_build failed on an accepted result");
	run_merge_growth_print(devnull, r, 1, true);
	struct baseline whole;
	memset(&whole, 0, sizeof(whole));
	if (run_merge_baseline_whole(&whole, r, 1) == 0)
		baseline_clear(&whole);
	run_merged_clear(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024];
	struct run_result r;
	memset(err, 0, sizeof(err));
	if (run_result_parse(&r, (const char *)data, size, NAME, err, sizeof(err)) < 0) {
		check_refused(&r, err);
		return 0;
	}
	check_accepted(&r);
	merge_alone(&r);
	run_result_clear(&r);
	return 0;
}
