/* tests/fuzz/fuzz_term.c: the decoder of the probe's replies (gate/node/term.c, external term
 * format) and the two reply decoders on top (gate/probe/probe.c), on hostile lengths and depths.
 * The first byte picks tight or default limits, so that every cap is reached too. */
#include <stdlib.h>
#include <string.h>

#include "gate/node/term.h"
#include "gate/probe/probe.h"
#include "model/tests.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct term_limits tight = {
	        .max_depth = 4, .max_elements = 64, .max_bytes = 256};
	char err[256], text[512];
	if (size < 1)
		return 0;
	const struct term_limits *lim = data[0] & 1 ? &tight : NULL;
	size_t index = 1;
	struct term *t = NULL;
	if (term_decode(&t, data, size, &index, lim, err, sizeof(err)) < 0) {
		if (t)
			fuzz_fail("term_decode failed but handed out a tree");
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			fuzz_fail("term_decode failed without a message");
		return 0;
	}
	if (index > size)
		fuzz_fail("term_decode ended past the input: %zu > %zu", index, size);
	term_format(t, text, sizeof(text));
	if (strlen(text) >= sizeof(text))
		fuzz_fail("term_format overran its buffer");

	struct snapshot s;
	memset(&s, 0, sizeof(s));
	probe_snapshot_decode(t, &s, err, sizeof(err));
	snapshot_clear(&s);
	struct test_run run;
	memset(&run, 0, sizeof(run));
	char *suite_error = NULL;
	probe_tests_decode(t, &run, &suite_error, err, sizeof(err));
	free(suite_error);
	test_run_clear(&run);
	term_free(t);
	return 0;
}
