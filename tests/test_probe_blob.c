/* tests/test_probe_blob.c: the probe's embedded modules: their load order, which a session
 * loads, and the lists cluster mode sends (all derived from the sources' -gate_load); and
 * the list of Elixir's and OTP's modules a node gate starts loads from its first moment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gate/node/term.h"
#include "gate/probe/boot_modules.h"
#include "gate/probe/probe.h"
#include "gate/probe/probe_blob.h"

static const struct probe_blob *find(const char *module)
{
	for (const struct probe_blob *b = probe_blobs; b->module; b++)
		if (strcmp(b->module, module) == 0)
			return b;
	return NULL;
}

/* gate_probe comes first: its on_load starts the watchdog that removes what follows */
static void gate_probe_loads_first(void **state)
{
	(void)state;
	assert_non_null(probe_blobs[0].module);
	assert_string_equal(probe_blobs[0].module, "gate_probe");
	assert_false(probe_blobs[0].tests_only);
}

/* the snapshot modules load in every session, the test run's only where tests run; every
 * name keeps gate's prefix (no clash with a project's modules) */
static void sessions_load_what_they_need(void **state)
{
	(void)state;
	const char *always[] = {"gate_probe", "gate_probe_snapshot", "gate_probe_grew"};
	const char *tests[] = {"gate_probe_run", "gate_probe_events", "Elixir.Gate.Formatter"};
	for (size_t i = 0; i < 3; i++) {
		const struct probe_blob *a = find(always[i]), *t = find(tests[i]);
		assert_non_null(a);
		assert_non_null(t);
		assert_true(probe_blob_wanted(a, false) && probe_blob_wanted(a, true));
		assert_true(!probe_blob_wanted(t, false) && probe_blob_wanted(t, true));
	}
	for (const struct probe_blob *b = probe_blobs; b->module; b++) {
		assert_true(b->size > 0);
		assert_true(strncmp(b->module, "gate_probe", 10) == 0 ||
		            strcmp(b->module, "Elixir.Gate.Formatter") == 0);
	}
}

static struct term *encoded(void (*encode)(ei_x_buff *, bool), bool for_tests, ei_x_buff *x)
{
	struct term *t;
	char err[256];
	size_t idx = 0;
	ei_x_new_with_version(x);
	encode(x, for_tests);
	assert_int_equal(term_decode(&t, (const unsigned char *)x->buff, (size_t)x->index, &idx,
	                             NULL, err, sizeof(err)),
	                 0);
	return t;
}

/* cluster mode pushes [{Module, "gate:Module.beam", Beam}] and removes the same modules */
static void cluster_lists_are_the_snapshot_modules(void **state)
{
	(void)state;
	size_t want = 0;
	for (const struct probe_blob *b = probe_blobs; b->module; b++)
		want += probe_blob_wanted(b, false);
	ei_x_buff x, y;
	struct term *blobs = encoded(probe_blobs_encode, false, &x);
	struct term *mods = encoded(probe_modules_encode, false, &y);
	assert_int_equal(blobs->type, TERM_LIST);
	assert_int_equal(blobs->u.seq.n, want);
	assert_int_equal(mods->u.seq.n, want);
	for (size_t i = 0; i < want; i++) {
		const struct term *b = &blobs->u.seq.items[i];
		const char *name = term_text(term_tuple_at(b, 0));
		char file[128];
		snprintf(file, sizeof(file), "gate:%s.beam", name);
		assert_string_equal(term_text(&mods->u.seq.items[i]), name);
		assert_string_equal(term_text(term_tuple_at(b, 1)), file);
		assert_int_equal(term_tuple_at(b, 2)->u.bin.len, find(name)->size);
	}
	assert_string_equal(term_text(&mods->u.seq.items[0]), "gate_probe");
	term_free(blobs);
	term_free(mods);
	ei_x_free(&x);
	ei_x_free(&y);
}

/* gate/probe/boot_modules.c: every name once, each one an atom the node can make (at most
 * 255 characters), none of the probe's own (gate loads those, never from the node's disk),
 * and none of the project it was generated from (tests/fixtures/clean: Clean.*, its
 * MixProject): the list holds only what every mix test loads. */
static void boot_modules_are_elixirs_and_otps(void **state)
{
	(void)state;
	assert_true(probe_boot_nmodules > 100);
	assert_true(PROBE_BOOT_BATCH > 0);
	for (size_t i = 0; i < probe_boot_nmodules; i++) {
		const char *m = probe_boot_modules[i];
		assert_true(m[0] != '\0' && strlen(m) <= 255);
		assert_null(find(m));
		assert_true(strncmp(m, "gate_", 5) != 0);
		assert_true(strncmp(m, "Elixir.Clean", 12) != 0);
		assert_null(strstr(m, "MixProject"));
		for (size_t j = 0; j < i; j++)
			assert_true(strcmp(m, probe_boot_modules[j]) != 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(gate_probe_loads_first),
	        cmocka_unit_test(sessions_load_what_they_need),
	        cmocka_unit_test(cluster_lists_are_the_snapshot_modules),
	        cmocka_unit_test(boot_modules_are_elixirs_and_otps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
