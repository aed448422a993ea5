/* tests/test_probe_fine.c: decoding the fine level a snapshot carries
 * (gate/probe/probe_fine.c): what gate_probe_alloc.erl sends, an older probe's snapshot
 * without it, a node without /proc, and malformed replies refused with a clear error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ei.h>
#include <stdlib.h>
#include <string.h>

#include "gate/node/term.h"
#include "gate/probe/probe_fine.h"
#include "model/snapshot.h"

static struct term *decode_ok(ei_x_buff *x)
{
	struct term *t = NULL;
	size_t at = 0;
	char err[256];
	assert_int_equal(term_decode(&t, (const unsigned char *)x->buff, (size_t)x->index, &at,
	                             &term_limits_default, err, sizeof(err)),
	                 0);
	return t;
}

static void bin(ei_x_buff *x, const char *s)
{
	ei_x_encode_binary(x, s, (long)strlen(s));
}

/* The after-snapshot's fine map: RSS, carriers, one origin, the tracker's report. */
static void encode_fine(ei_x_buff *x, bool bad_hist)
{
	ei_x_new_with_version(x);
	ei_x_encode_map_header(x, 9);
	ei_x_encode_atom(x, "cost_origins_us");
	ei_x_encode_long(x, 1800);
	ei_x_encode_atom(x, "rss");
	ei_x_encode_long(x, 122000000);
	ei_x_encode_atom(x, "hwm");
	ei_x_encode_long(x, 130000000);
	ei_x_encode_atom(x, "allocated");
	ei_x_encode_long(x, 30000000);
	ei_x_encode_atom(x, "mapped");
	ei_x_encode_long(x, 41000000);
	ei_x_encode_atom(x, "cached_segments");
	ei_x_encode_long(x, 3);
	ei_x_encode_atom(x, "hist_start");
	ei_x_encode_long(x, 128);
	ei_x_encode_atom(x, "origins");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_tuple_header(x, 3);
	bin(x, "Elixir.FineNif.Native");
	bin(x, "nif_internal");
	if (bad_hist) {
		ei_x_encode_long(x, 7); /* not a tuple of counts */
	} else {
		ei_x_encode_tuple_header(x, 18);
		for (int i = 0; i < 18; i++)
			ei_x_encode_long(x, i == 3 ? 30000 : 0);
	}
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "peak");
	ei_x_encode_map_header(x, 12);
	/* the allocated peak's bound (max-ever carriers) at the after- and before-mark, and
	 * what the edges' readings cost */
	ei_x_encode_atom(x, "allocated_max");
	ei_x_encode_long(x, 640000000);
	ei_x_encode_atom(x, "allocated_max_before");
	ei_x_encode_long(x, 46000000);
	ei_x_encode_atom(x, "edge_us");
	ei_x_encode_long(x, 7000);
	ei_x_encode_atom(x, "edges");
	ei_x_encode_long(x, 12);
	ei_x_encode_atom(x, "hwm");
	ei_x_encode_long(x, 801000000);
	ei_x_encode_atom(x, "hwm_reset");
	ei_x_encode_atom(x, "true");
	ei_x_encode_atom(x, "rss_before");
	ei_x_encode_long(x, 62000000);
	ei_x_encode_atom(x, "allocated_before");
	ei_x_encode_long(x, 29000000);
	ei_x_encode_atom(x, "monitor");
	bin(x, "gate");
	ei_x_encode_atom(x, "windows");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_map_header(x, 4);
	ei_x_encode_atom(x, "peak");
	ei_x_encode_long(x, 801000000);
	ei_x_encode_atom(x, "start_rss");
	ei_x_encode_long(x, 64000000);
	ei_x_encode_atom(x, "modules");
	ei_x_encode_list_header(x, 1);
	bin(x, "Elixir.FineNif.PeakTest");
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "tests");
	ei_x_encode_empty_list(x);
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "heaps");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_map_header(x, 4);
	ei_x_encode_atom(x, "pid");
	bin(x, "<0.200.0>");
	ei_x_encode_atom(x, "label");
	bin(x, "Elixir.FineNif.Batcher");
	ei_x_encode_atom(x, "bytes");
	ei_x_encode_long(x, 126800000);
	ei_x_encode_atom(x, "tests");
	ei_x_encode_list_header(x, 1);
	bin(x, "Elixir.FineNif.PeakTest\ttest sums a batch");
	ei_x_encode_empty_list(x);
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "rss_grew");
	ei_x_encode_empty_list(x);
}

static void test_fine_decode(void **state)
{
	(void)state;
	ei_x_buff x;
	encode_fine(&x, false);
	struct term *t = decode_ok(&x);
	struct fine_level f;
	char err[256];
	assert_int_equal(probe_fine_decode(t, &f, err, sizeof(err)), 0);
	assert_true(f.have && f.have_rss && f.have_mapped && f.have_origins && f.have_peak);
	assert_true(f.hwm_reset);
	assert_int_equal(f.rss, 122000000);
	assert_int_equal(f.mapped, 41000000);
	assert_int_equal(f.norigins, 1);
	assert_string_equal(f.origins[0].origin, "Elixir.FineNif.Native");
	assert_int_equal(f.origins[0].nhist, 18);
	assert_int_equal(f.origins[0].hist[3], 30000);
	assert_int_equal(f.peak, 801000000);
	assert_int_equal(f.rss_before, 62000000);
	assert_int_equal(f.nwindows, 1);
	assert_string_equal(f.windows[0].modules, "Elixir.FineNif.PeakTest");
	assert_string_equal(f.windows[0].tests, "");
	assert_int_equal(f.nheaps, 1);
	assert_string_equal(f.heaps[0].label, "Elixir.FineNif.Batcher");
	assert_string_equal(f.heaps[0].tests, "Elixir.FineNif.PeakTest\ttest sums a batch");
	assert_string_equal(f.monitor, "gate");
	assert_true(f.have_allocated_max);
	assert_int_equal(f.allocated_max, 640000000);
	assert_int_equal(f.allocated_max_before, 46000000);
	assert_int_equal(f.edge_us, 7000);
	assert_int_equal(f.edges, 12);
	assert_int_equal(f.cost_origins_us, 1800);
	fine_level_clear(&f);
	assert_false(f.have);
	term_free(t);
	ei_x_free(&x);

	/* absent (an older probe, a light snapshot): zeroed, no error */
	assert_int_equal(probe_fine_decode(NULL, &f, err, sizeof(err)), 0);
	assert_false(f.have);
}

static void test_fine_malformed(void **state)
{
	(void)state;
	ei_x_buff x;
	encode_fine(&x, true);
	struct term *t = decode_ok(&x);
	struct fine_level f;
	char err[256];
	assert_int_equal(probe_fine_decode(t, &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "the fine level (RSS, carriers, origins, peak) is malformed"));
	assert_false(f.have); /* cleared */
	term_free(t);
	ei_x_free(&x);

	/* a negative figure */
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_atom(&x, "rss");
	ei_x_encode_long(&x, -5);
	t = decode_ok(&x);
	assert_int_equal(probe_fine_decode(t, &f, err, sizeof(err)), -1);
	term_free(t);
	ei_x_free(&x);
}

/* A node without /proc: the reason, no figures. */
static void test_fine_no_proc(void **state)
{
	(void)state;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 3);
	ei_x_encode_atom(&x, "no_rss");
	bin(&x, "cannot read /proc/self/status in the node (enoent)");
	ei_x_encode_atom(&x, "allocated");
	ei_x_encode_long(&x, 30000000);
	ei_x_encode_atom(&x, "no_origins");
	bin(&x, "the instrument module is not in the node's code path");
	struct term *t = decode_ok(&x);
	struct fine_level f;
	char err[256];
	assert_int_equal(probe_fine_decode(t, &f, err, sizeof(err)), 0);
	assert_true(f.have);
	assert_false(f.have_rss);
	assert_false(f.have_origins);
	assert_non_null(strstr(f.no_rss, "/proc/self/status"));
	assert_non_null(strstr(f.no_origins, "instrument"));
	fine_level_clear(&f);
	term_free(t);
	ei_x_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_fine_decode),
	        cmocka_unit_test(test_fine_malformed),
	        cmocka_unit_test(test_fine_no_proc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
