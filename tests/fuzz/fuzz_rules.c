/* tests/fuzz/fuzz_rules.c: every rule (rules/) on two snapshots and a test run built from the
 * input, figures as hostile as a node may send (INT64 limits, negatives), with the default
 * configuration; then the summary and the JUnit-free paths that format the findings.
 * Oracle: the sanitizers (signed overflow is UB), and every finding has a rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/report/summary.h"
#include "gate/config/config.h"
#include "judge/judge.h"
#include "model/finding.h"
#include "rules/rules.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg;
	static int ready;
	if (!ready) {
		if (config_default(&cfg) < 0)
			fuzz_fail("out of memory");
		ready = 1;
	}
	struct fuzz_model before, after;
	size_t half = size / 2;
	fuzz_model_make(&before, data, half);
	fuzz_model_make(&after, data + half, size - half);
	struct findings f = {0};
	char err[512];
	struct judge_input in = {.before = &before.snap,
	                         .after = &after.snap,
	                         .run_before = &before.snap,
	                         .run_after = &after.snap,
	                         .cfg = &cfg.rules,
	                         .tests = &after.run,
	                         .tests_here = true};
	if (judge_run(&in, &f, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < f.count; i++)
			if (!f.items[i].rule)
				fuzz_fail("a finding without a rule");
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		if (!out)
			fuzz_fail("open_memstream");
		summary_print(out, &(struct report_data){.findings = &f, .tests = &after.run},
		              false);
		fclose(out);
		free(buf);
	}
	findings_clear(&f);
	fuzz_model_clear(&before);
	fuzz_model_clear(&after);
	return 0;
}
