/* tests/test_term.c: the bounded external-term decoder and the probe reply decoders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ei.h>
#include <stdlib.h>
#include <string.h>

#include "gate/node/term.h"
#include "gate/probe/faithful.h"
#include "gate/probe/probe.h"
#include "model/tests.h"
#include "rules/attribution.h"

static struct term *decode_ok(const ei_x_buff *x)
{
	struct term *t = NULL;
	size_t idx = 0;
	char err[256] = "";
	int rc = term_decode(&t, (const unsigned char *)x->buff, (size_t)x->index, &idx, NULL, err,
	                     sizeof(err));
	if (rc != 0)
		fail_msg("decode failed: %s", err);
	assert_int_equal(idx, (size_t)x->index);
	return t;
}

/* One test record as the formatter sends it with --per-test: {Module, Name, File, Line, TimeUs,
 * State, Message, {Async, MemoryDelta, Processes, Ets}, #{app, reason}}; and one module event
 * with figures: {Kind, Module, Async, Us, Memory, Processes, Ets}. */
static const char *const mem_keys[] = {"total",     "processes", "processes_used", "system", "atom",
                                       "atom_used", "binary",    "code",           "ets"};

static void encode_mem9(ei_x_buff *x)
{
	ei_x_encode_map_header(x, 9);
	for (size_t k = 0; k < 9; k++) {
		ei_x_encode_atom(x, mem_keys[k]);
		ei_x_encode_longlong(x, 123456789);
	}
}

static void encode_record(ei_x_buff *x)
{
	ei_x_encode_tuple_header(x, 9);
	ei_x_encode_binary(x, "Elixir.Scale.M1Test", 19);
	ei_x_encode_binary(x, "test t 1", 8);
	ei_x_encode_binary(x, "/p/test/m1_test.exs", 19);
	ei_x_encode_long(x, 3);
	ei_x_encode_long(x, 12);
	ei_x_encode_atom(x, "failed");
	ei_x_encode_binary(x, "boom", 4);
	ei_x_encode_tuple_header(x, 4);
	ei_x_encode_atom(x, "true");
	encode_mem9(x);
	ei_x_encode_long(x, 1);
	ei_x_encode_long(x, 0);
	ei_x_encode_map_header(x, 2);
	ei_x_encode_atom(x, "app");
	ei_x_encode_binary(x, "scale", 5);
	ei_x_encode_atom(x, "reason");
	ei_x_encode_binary(x, "boom", 4);
}

static void encode_event7(ei_x_buff *x)
{
	ei_x_encode_tuple_header(x, 7);
	ei_x_encode_atom(x, "start");
	ei_x_encode_binary(x, "Elixir.Scale.M1Test", 19);
	ei_x_encode_atom(x, "true");
	ei_x_encode_longlong(x, 1000);
	encode_mem9(x);
	ei_x_encode_long(x, 60);
	ei_x_encode_long(x, 30);
}

/* The fewest terms the decoder needs for what encode(x) wrote: the smallest max_elements that
 * decodes it. */
static size_t terms_of(void (*encode)(ei_x_buff *))
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	encode(&x);
	for (size_t n = 1; n < 1000; n++) {
		struct term_limits lim = {
		        .max_depth = 32, .max_elements = n, .max_bytes = 1u << 20};
		struct term *t = NULL;
		size_t idx = 0;
		char err[256];
		if (term_decode(&t, (const unsigned char *)x.buff, (size_t)x.index, &idx, &lim, err,
		                sizeof(err)) == 0) {
			term_free(t);
			ei_x_free(&x);
			return n;
		}
	}
	ei_x_free(&x);
	fail_msg("no record decodes in 1000 terms");
	return 0;
}

/* The suite's reply at gate's test cap, every test with --per-test's delta and as many module
 * events as the formatter keeps, fits the suite's limits (the default 4 M terms held 116 000
 * such tests). */
static void test_suite_limits_hold_the_cap(void **state)
{
	(void)state;
	size_t record = terms_of(encode_record), event = terms_of(encode_event7);
	size_t cap = (size_t)faithful_test_cap(), events = 200000; /* the formatter's MAX_EVENTS */
	assert_in_range(record, 30, 48);
	assert_true(term_limits_default.max_elements < record * cap);
	assert_true(probe_tests_limits()->max_elements >= record * cap + event * events + 1000);
}

static void test_scalars(void **state)
{
	(void)state;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 7);
	ei_x_encode_long(&x, 7);
	ei_x_encode_long(&x, -123456);
	ei_x_encode_longlong(&x, 9000000000000LL);
	ei_x_encode_longlong(&x, INT64_MIN);
	ei_x_encode_double(&x, 2.5);
	ei_x_encode_atom(&x, "hello");
	ei_x_encode_binary(&x, "bin\0ary", 7);
	struct term *t = decode_ok(&x);
	int64_t v;
	assert_int_equal(t->type, TERM_TUPLE);
	assert_int_equal(t->u.seq.n, 7);
	assert_int_equal(term_int(term_tuple_at(t, 0), &v), 0);
	assert_int_equal(v, 7);
	term_int(term_tuple_at(t, 1), &v);
	assert_int_equal(v, -123456);
	term_int(term_tuple_at(t, 2), &v);
	assert_true(v == 9000000000000LL);
	term_int(term_tuple_at(t, 3), &v);
	assert_true(v == INT64_MIN);
	assert_int_equal(term_tuple_at(t, 4)->type, TERM_FLOAT);
	assert_true(term_tuple_at(t, 4)->u.f == 2.5);
	assert_true(term_is_atom(term_tuple_at(t, 5), "hello"));
	assert_int_equal(term_tuple_at(t, 6)->u.bin.len, 7);
	assert_memory_equal(term_tuple_at(t, 6)->u.bin.data, "bin\0ary", 7);
	assert_null(term_tuple_at(t, 7));
	term_free(t);
	ei_x_free(&x);
}

static void test_containers(void **state)
{
	(void)state;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 2);
	ei_x_encode_atom(&x, "list");
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_string(&x, "abc"); /* STRING_EXT */
	ei_x_encode_empty_list(&x);
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "n");
	ei_x_encode_long(&x, 3);
	struct term *t = decode_ok(&x);
	assert_int_equal(t->type, TERM_MAP);
	const struct term *l = term_map_get(t, "list");
	assert_non_null(l);
	assert_int_equal(l->type, TERM_LIST);
	assert_int_equal(l->u.seq.n, 2);
	assert_string_equal(term_text(&l->u.seq.items[0]), "abc");
	assert_int_equal(l->u.seq.items[1].type, TERM_LIST);
	assert_null(term_map_get(t, "missing"));
	char buf[64];
	term_format(t, buf, sizeof(buf));
	assert_string_equal(buf, "#{list=>[<<\"abc\">>,[]],n=>3}");
	term_free(t);
	ei_x_free(&x);
}

static void test_opaque_pid(void **state)
{
	(void)state;
	ei_x_buff x;
	erlang_pid pid = {.node = "n@127.0.0.1", .num = 1, .serial = 2, .creation = 3};
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_pid(&x, &pid);
	ei_x_encode_atom(&x, "after");
	struct term *t = decode_ok(&x);
	assert_int_equal(term_tuple_at(t, 0)->type, TERM_OPAQUE);
	assert_true(term_is_atom(term_tuple_at(t, 1), "after"));
	term_free(t);
	ei_x_free(&x);
}

/* Every prefix of a valid term is rejected cleanly (ASan checks for reads past the end). */
static void test_every_truncation_rejected(void **state)
{
	(void)state;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_atom(&x, "tests");
	ei_x_encode_list_header(&x, 1);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_binary(&x, "Elixir.FooTest", 14);
	ei_x_encode_longlong(&x, 1LL << 40);
	ei_x_encode_double(&x, 1.5);
	ei_x_encode_empty_list(&x);
	for (int len = 0; len < x.index; len++) {
		unsigned char *copy = malloc((size_t)len + 1);
		memcpy(copy, x.buff, (size_t)len);
		struct term *t = (struct term *)1;
		size_t idx = 0;
		char err[256];
		assert_int_equal(term_decode(&t, copy, (size_t)len, &idx, NULL, err, sizeof(err)),
		                 -1);
		assert_null(t);
		assert_non_null(strstr(err, "byte"));
		free(copy);
	}
	ei_x_free(&x);
}

static void test_hostile_lengths(void **state)
{
	(void)state;
	/* a list claiming 2^32-1 elements in 6 bytes */
	const unsigned char big_list[] = {131, 108, 0xff, 0xff, 0xff, 0xff};
	/* a binary claiming 4 GB */
	const unsigned char big_bin[] = {131, 109, 0xff, 0xff, 0xff, 0xff, 'a'};
	/* a map claiming 2^31 pairs */
	const unsigned char big_map[] = {131, 116, 0x80, 0, 0, 0};
	/* an unknown tag */
	const unsigned char bad_tag[] = {131, 200};
	/* an improper list [1 | 2] */
	const unsigned char improper[] = {131, 108, 0, 0, 0, 1, 97, 1, 97, 2};
	const struct {
		const unsigned char *buf;
		size_t len;
		const char *why;
	} cases[] = {
	        {big_list, sizeof(big_list), "exceeds"},
	        {big_bin, sizeof(big_bin), "truncated"},
	        {big_map, sizeof(big_map), "exceeds"},
	        {bad_tag, sizeof(bad_tag), "unsupported term tag 200"},
	        {improper, sizeof(improper), "improper list"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct term *t;
		size_t idx = 0;
		char err[256];
		assert_int_equal(
		        term_decode(&t, cases[i].buf, cases[i].len, &idx, NULL, err, sizeof(err)),
		        -1);
		if (!strstr(err, cases[i].why))
			fail_msg("case %zu: %s lacks %s", i, err, cases[i].why);
	}
}

static void test_limits(void **state)
{
	(void)state;
	/* 100 nested one-element tuples */
	unsigned char deep[2 + 2 * 100 + 2];
	size_t n = 0;
	deep[n++] = 131;
	for (int i = 0; i < 100; i++) {
		deep[n++] = 104;
		deep[n++] = 1;
	}
	deep[n++] = 97;
	deep[n++] = 1;
	struct term *t;
	size_t idx = 0;
	char err[256];
	assert_int_equal(term_decode(&t, deep, n, &idx, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "nested deeper than 32"));

	struct term_limits tight = {.max_depth = 8, .max_elements = 3, .max_bytes = 4};
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_list_header(&x, 4);
	for (int i = 0; i < 4; i++)
		ei_x_encode_long(&x, i);
	ei_x_encode_empty_list(&x);
	idx = 0;
	assert_int_equal(term_decode(&t, (unsigned char *)x.buff, (size_t)x.index, &idx, &tight,
	                             err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "more than 3 terms"));
	ei_x_free(&x);

	ei_x_new_with_version(&x);
	ei_x_encode_binary(&x, "12345", 5);
	idx = 0;
	assert_int_equal(term_decode(&t, (unsigned char *)x.buff, (size_t)x.index, &idx, &tight,
	                             err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "more than 4 bytes of text"));
	ei_x_free(&x);
}

static void encode_memory(ei_x_buff *x, int64_t total)
{
	ei_x_encode_atom(x, "memory");
	ei_x_encode_map_header(x, 3);
	ei_x_encode_atom(x, "total");
	ei_x_encode_longlong(x, total);
	ei_x_encode_atom(x, "binary");
	ei_x_encode_long(x, 4096);
	ei_x_encode_atom(x, "a_future_category");
	ei_x_encode_long(x, 1);
}

static void encode_snapshot(ei_x_buff *x, bool with_atoms)
{
	ei_x_new_with_version(x);
	ei_x_encode_map_header(x, with_atoms ? 8 : 7);
	encode_memory(x, 30000000);
	const char *keys[] = {"process_count", "ets_count", "port_count", "gc_us", "taken_at_ms"};
	for (int i = 0; i < 5; i++) {
		ei_x_encode_atom(x, keys[i]);
		ei_x_encode_long(x, 10 + i);
	}
	ei_x_encode_atom(x, "otp_release");
	ei_x_encode_binary(x, "25", 2);
	if (with_atoms) {
		ei_x_encode_atom(x, "atom_count");
		ei_x_encode_long(x, 15000);
	}
}

static void test_snapshot_decode(void **state)
{
	(void)state;
	ei_x_buff x;
	encode_snapshot(&x, true);
	struct term *t = decode_ok(&x);
	struct snapshot s;
	char err[256];
	assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), 0);
	assert_true(s.have[MEM_TOTAL] && s.have[MEM_BINARY]);
	assert_false(s.have[MEM_CODE]);
	assert_int_equal(s.mem[MEM_TOTAL], 30000000);
	assert_int_equal(s.mem[MEM_BINARY], 4096);
	assert_int_equal(s.atom_count, 15000);
	assert_int_equal(s.process_count, 10);
	assert_string_equal(s.otp_release, "25");
	term_free(t);
	ei_x_free(&x);

	encode_snapshot(&x, false);
	t = decode_ok(&x);
	assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "atom_count"));
	term_free(t);
	ei_x_free(&x);
}

/* what the settling before the snapshot saw (optional fields); settle_us negative:
 * refused, naming the field */
static void test_snapshot_decode_settle(void **state)
{
	(void)state;
	ei_x_buff x;
	char err[256];
	struct snapshot s;
	const char *keys[] = {"process_count", "ets_count", "port_count", "gc_us", "taken_at_ms"};
	const char *settle[] = {"settle_us", "settle_port_buffers", "settle_port_buffers_left",
	                        "settle_binary_before", "settle_binary_after"};
	const long values[] = {1980000, 10485760, 0, 39500000, 106400};
	for (int bad = 0; bad < 2; bad++) {
		ei_x_new_with_version(&x);
		ei_x_encode_map_header(&x, 8 + 5);
		encode_memory(&x, 30000000);
		for (int i = 0; i < 5; i++) {
			ei_x_encode_atom(&x, keys[i]);
			ei_x_encode_long(&x, 10 + i);
		}
		ei_x_encode_atom(&x, "otp_release");
		ei_x_encode_binary(&x, "25", 2);
		ei_x_encode_atom(&x, "atom_count");
		ei_x_encode_long(&x, 15000);
		for (int i = 0; i < 5; i++) {
			ei_x_encode_atom(&x, settle[i]);
			ei_x_encode_long(&x, bad && i == 0 ? -1 : values[i]);
		}
		struct term *t = decode_ok(&x);
		if (!bad) {
			assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), 0);
			assert_true(s.have_settle);
			assert_int_equal(s.settle_us, 1980000);
			assert_int_equal(s.settle_port_buffers, 10485760);
			assert_int_equal(s.settle_binary_before, 39500000);
			assert_int_equal(s.settle_binary_after, 106400);
			snapshot_clear(&s);
		} else {
			assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), -1);
			assert_non_null(strstr(err, "settle_us"));
		}
		term_free(t);
		ei_x_free(&x);
	}
	/* without them (no settling): have_settle false */
	encode_snapshot(&x, true);
	struct term *t = decode_ok(&x);
	assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), 0);
	assert_false(s.have_settle);
	snapshot_clear(&s);
	term_free(t);
	ei_x_free(&x);
}

/* the sockets' input buffers the snapshot set aside (optional fields): the bytes,
 * the sockets, whether exact, binary as measured; a negative count is refused, naming it */
static void test_snapshot_decode_set_aside(void **state)
{
	(void)state;
	const char *keys[] = {"process_count", "ets_count", "port_count", "gc_us", "taken_at_ms"};
	const char *aside[] = {"set_aside_bytes", "set_aside_sockets", "set_aside_binary_raw"};
	const long values[] = {39398880, 10, 39493512};
	for (int bad = 0; bad < 2; bad++) {
		ei_x_buff x;
		char err[256];
		struct snapshot s;
		ei_x_new_with_version(&x);
		ei_x_encode_map_header(&x, 8 + 4);
		encode_memory(&x, 30000000);
		for (int i = 0; i < 5; i++) {
			ei_x_encode_atom(&x, keys[i]);
			ei_x_encode_long(&x, 10 + i);
		}
		ei_x_encode_atom(&x, "otp_release");
		ei_x_encode_binary(&x, "25", 2);
		ei_x_encode_atom(&x, "atom_count");
		ei_x_encode_long(&x, 15000);
		for (int i = 0; i < 3; i++) {
			ei_x_encode_atom(&x, aside[i]);
			ei_x_encode_long(&x, bad && i == 1 ? -1 : values[i]);
		}
		ei_x_encode_atom(&x, "set_aside_exact");
		ei_x_encode_atom(&x, bad ? "false" : "true");
		struct term *t = decode_ok(&x);
		if (!bad) {
			assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), 0);
			assert_true(s.have_set_aside);
			assert_false(s.have_settle); /* no wait: the settle line stays silent */
			assert_true(s.set_aside_exact);
			assert_int_equal(s.set_aside_bytes, 39398880);
			assert_int_equal(s.set_aside_sockets, 10);
			assert_int_equal(s.set_aside_binary_raw, 39493512);
			snapshot_clear(&s);
		} else {
			assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), -1);
			assert_non_null(strstr(err, "set_aside_sockets"));
		}
		term_free(t);
		ei_x_free(&x);
	}
}

/* a procs row as gate_probe ships it: {Pid, Name, Init, Cur, M, H, TH, Q, R1, S1, R0, S0,
 * Born}; before_gc NULL: the atom undefined for R0 and S0 (bin_leak off); bad_mem:
 * undefined in the memory figure, which is always measured */
static void encode_proc_row(ei_x_buff *x, const char *pid, bool before_gc, bool bad_mem)
{
	ei_x_encode_tuple_header(x, 13);
	ei_x_encode_binary(x, pid, (long)strlen(pid));
	ei_x_encode_binary(x, "", 0);
	ei_x_encode_binary(x, "erlang:apply/2", 14);
	ei_x_encode_binary(x, "m:f/0", 5);
	if (bad_mem)
		ei_x_encode_atom(x, "undefined");
	else
		ei_x_encode_long(x, 2000);
	const long rest[] = {300, 400, 0, 1, 100};
	for (int i = 0; i < 5; i++)
		ei_x_encode_long(x, rest[i]);
	if (before_gc) {
		ei_x_encode_long(x, 2);
		ei_x_encode_long(x, 1100);
	} else {
		ei_x_encode_atom(x, "undefined");
		ei_x_encode_atom(x, "undefined");
	}
	ei_x_encode_atom(x, "false");
}

static void encode_snapshot_procs(ei_x_buff *x, bool bad_mem)
{
	ei_x_new_with_version(x);
	ei_x_encode_map_header(x, 9);
	encode_memory(x, 30000000);
	const char *keys[] = {"process_count", "ets_count", "port_count", "gc_us", "taken_at_ms"};
	for (int i = 0; i < 5; i++) {
		ei_x_encode_atom(x, keys[i]);
		ei_x_encode_long(x, 10 + i);
	}
	ei_x_encode_atom(x, "otp_release");
	ei_x_encode_binary(x, "25", 2);
	ei_x_encode_atom(x, "atom_count");
	ei_x_encode_long(x, 15000);
	ei_x_encode_atom(x, "procs");
	ei_x_encode_list_header(x, 2);
	encode_proc_row(x, "<0.1.0>", true, false);
	encode_proc_row(x, "<0.2.0>", false, bad_mem);
	ei_x_encode_empty_list(x);
}

/* Without bin_leak the before-GC figures are not measured: -1, which nothing mistakes for
 * "the GC freed nothing"; every other figure stays required. */
static void test_snapshot_decode_before_gc(void **state)
{
	(void)state;
	ei_x_buff x;
	char err[256];
	struct snapshot s;
	encode_snapshot_procs(&x, false);
	struct term *t = decode_ok(&x);
	assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), 0);
	assert_int_equal(s.nprocs, 2);
	assert_int_equal(s.procs[0].bin_refs_before_gc, 2);
	assert_int_equal(s.procs[0].bin_bytes_before_gc, 1100);
	assert_int_equal(s.procs[1].bin_refs_before_gc, -1);
	assert_int_equal(s.procs[1].bin_bytes_before_gc, -1);
	assert_int_equal(s.procs[1].bin_bytes, 100);
	snapshot_clear(&s);
	term_free(t);
	ei_x_free(&x);

	encode_snapshot_procs(&x, true);
	t = decode_ok(&x);
	assert_int_equal(probe_snapshot_decode(t, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "procs entry 2"));
	snapshot_clear(&s);
	term_free(t);
	ei_x_free(&x);
}

static void encode_test(ei_x_buff *x, const char *name, const char *state, const char *msg)
{
	ei_x_encode_tuple_header(x, 7);
	ei_x_encode_binary(x, "Elixir.FooTest", 14);
	ei_x_encode_binary(x, name, (long)strlen(name));
	ei_x_encode_binary(x, "test/foo_test.exs", 17);
	ei_x_encode_long(x, 12);
	ei_x_encode_long(x, 1500);
	ei_x_encode_atom(x, state);
	ei_x_encode_binary(x, msg, (long)strlen(msg));
}

static void test_tests_decode(void **state)
{
	(void)state;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "ok");
	ei_x_encode_map_header(&x, 3);
	ei_x_encode_atom(&x, "tests");
	ei_x_encode_list_header(&x, 3);
	encode_test(&x, "test a", "passed", "");
	encode_test(&x, "test b", "failed", "Assertion with == failed");
	encode_test(&x, "test c", "excluded", "due to slow filter");
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "run_us");
	ei_x_encode_long(&x, 42000);
	ei_x_encode_atom(&x, "error");
	ei_x_encode_binary(&x, "", 0);
	struct term *t = decode_ok(&x);
	struct test_run run = {0};
	char *suite_err = (char *)1;
	char err[256];
	assert_int_equal(probe_tests_decode(t, &run, &suite_err, err, sizeof(err)), 0);
	assert_null(suite_err);
	assert_true(run.finished);
	assert_int_equal(run.count, 3);
	assert_int_equal(run.run_us, 42000);
	assert_int_equal(run.load_us, -1);
	assert_string_equal(run.tests[1].name, "test b");
	assert_int_equal(run.tests[1].state, TEST_FAILED);
	assert_string_equal(run.tests[1].message, "Assertion with == failed");
	assert_int_equal(run.tests[1].line, 12);
	assert_int_equal(run.tests[2].state, TEST_EXCLUDED);
	struct test_counts c = test_run_count(&run);
	assert_int_equal(c.passed, 1);
	assert_int_equal(c.failed, 1);
	assert_int_equal(c.skipped, 1);
	test_run_clear(&run);
	term_free(t);
	ei_x_free(&x);
}

static void test_tests_decode_errors(void **state)
{
	(void)state;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "error");
	ei_x_encode_binary(&x, "** (Mix) could not compile", 26);
	struct term *t = decode_ok(&x);
	struct test_run run = {0};
	char *suite_err;
	char err[256];
	assert_int_equal(probe_tests_decode(t, &run, &suite_err, err, sizeof(err)), -1);
	assert_string_equal(err, "** (Mix) could not compile");
	term_free(t);
	ei_x_free(&x);

	/* a record with a state the decoder does not know */
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "ok");
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_atom(&x, "tests");
	ei_x_encode_list_header(&x, 1);
	encode_test(&x, "test z", "exploded", "");
	ei_x_encode_empty_list(&x);
	t = decode_ok(&x);
	assert_int_equal(probe_tests_decode(t, &run, &suite_err, err, sizeof(err)), -1);
	assert_string_equal(err, "test record 1 is malformed");
	test_run_clear(&run);
	term_free(t);
	ei_x_free(&x);
}

/* A packed chunk as the formatter sends it: term_to_binary of a list of records. */
static void encode_packed(ei_x_buff *x, const char *const *names, size_t n)
{
	ei_x_buff p;
	ei_x_new_with_version(&p);
	ei_x_encode_list_header(&p, (long)n);
	for (size_t i = 0; i < n; i++)
		encode_test(&p, names[i], i % 2 ? "failed" : "passed", i % 2 ? "boom" : "");
	ei_x_encode_empty_list(&p);
	ei_x_encode_binary(x, p.buff, p.index);
	ei_x_free(&p);
}

/* {ok, #{tests => [one], tests_packed => Chunks}} with Chunks written by more(x). */
static struct term *packed_reply(ei_x_buff *x, void (*more)(ei_x_buff *x))
{
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "ok");
	ei_x_encode_map_header(x, 2);
	ei_x_encode_atom(x, "tests");
	ei_x_encode_list_header(x, 1);
	encode_test(x, "test first", "passed", "");
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "tests_packed");
	more(x);
	return decode_ok(x);
}

static void two_chunks(ei_x_buff *x)
{
	static const char *const a[] = {"test p1", "test p2"}, *const b[] = {"test p3"};
	ei_x_encode_list_header(x, 2);
	encode_packed(x, a, 2);
	encode_packed(x, b, 1);
	ei_x_encode_empty_list(x);
}

static void chunk_not_binary(ei_x_buff *x)
{
	ei_x_encode_list_header(x, 1);
	ei_x_encode_atom(x, "nope");
	ei_x_encode_empty_list(x);
}

/* tests_packed => [Chunk]: the bytes of p (from its offset `from`, less `cut` at the end) as
 * the one chunk; p is freed. */
static void one_chunk(ei_x_buff *x, ei_x_buff *p, int from, int cut)
{
	ei_x_encode_list_header(x, 1);
	ei_x_encode_binary(x, p->buff + from, p->index - from - cut);
	ei_x_encode_empty_list(x);
	ei_x_free(p);
}

static void chunk_cut_short(ei_x_buff *x)
{
	static const char *const a[] = {"test p1"};
	ei_x_buff p;
	ei_x_new(&p);
	encode_packed(&p, a, 1); /* BINARY_EXT's tag and length, then the chunk, 3 bytes short */
	one_chunk(x, &p, 5, 3);
}

static void chunk_trailing_bytes(ei_x_buff *x)
{
	ei_x_buff p;
	ei_x_new_with_version(&p);
	ei_x_encode_empty_list(&p);
	ei_x_encode_atom(&p, "extra");
	one_chunk(x, &p, 0, 0);
}

static void chunk_not_list(ei_x_buff *x)
{
	ei_x_buff p;
	ei_x_new_with_version(&p);
	ei_x_encode_atom(&p, "tests");
	one_chunk(x, &p, 0, 0);
}

static void chunk_bad_record(ei_x_buff *x)
{
	ei_x_buff p;
	ei_x_new_with_version(&p);
	ei_x_encode_list_header(&p, 2);
	encode_test(&p, "test ok", "passed", "");
	encode_test(&p, "test z", "exploded", "");
	ei_x_encode_empty_list(&p);
	one_chunk(x, &p, 0, 0);
}

/* The records the formatter sends packed follow the unpacked ones, in order; each way a
 * packed chunk can be wrong is an error that names it, and leaks nothing (valgrind). */
static void test_tests_decode_packed(void **state)
{
	(void)state;
	ei_x_buff x;
	struct test_run run = {0};
	char *suite_err = NULL;
	char err[256];
	struct term *t = packed_reply(&x, two_chunks);
	assert_int_equal(probe_tests_decode(t, &run, &suite_err, err, sizeof(err)), 0);
	assert_int_equal(run.count, 4);
	assert_string_equal(run.tests[0].name, "test first");
	assert_string_equal(run.tests[1].name, "test p1");
	assert_string_equal(run.tests[2].name, "test p2");
	assert_int_equal(run.tests[2].state, TEST_FAILED);
	assert_string_equal(run.tests[2].message, "boom");
	assert_string_equal(run.tests[3].name, "test p3");
	assert_string_equal(run.tests[3].file, "test/foo_test.exs");
	test_run_clear(&run);
	term_free(t);
	ei_x_free(&x);

	static const struct {
		void (*more)(ei_x_buff *x);
		const char *says;
	} bad[] = {
	        {chunk_not_binary, "packed records 1 are malformed: not a binary"},
	        {chunk_cut_short, "packed records 1 are malformed: "},
	        {chunk_trailing_bytes, "packed records 1 are malformed: bytes after the term"},
	        {chunk_not_list, "packed records 1 are malformed: not a list"},
	        {chunk_bad_record, "test record 3 is malformed"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&run, 0, sizeof(run));
		t = packed_reply(&x, bad[i].more);
		assert_int_equal(probe_tests_decode(t, &run, &suite_err, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].says))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].says);
		test_run_clear(&run);
		term_free(t);
		ei_x_free(&x);
	}
}

static void encode_mem(ei_x_buff *x, long total, long binary, long ets)
{
	ei_x_encode_map_header(x, 4);
	ei_x_encode_atom(x, "total");
	ei_x_encode_long(x, total);
	ei_x_encode_atom(x, "binary");
	ei_x_encode_long(x, binary);
	ei_x_encode_atom(x, "ets");
	ei_x_encode_long(x, ets);
	ei_x_encode_atom(x, "newer_otp_category"); /* skipped */
	ei_x_encode_long(x, 1);
}

static void encode_event(ei_x_buff *x, const char *kind, const char *mod, bool async, long us,
                         long total, long binary, long procs)
{
	ei_x_encode_tuple_header(x, 7);
	ei_x_encode_atom(x, kind);
	ei_x_encode_binary(x, mod, (long)strlen(mod));
	ei_x_encode_atom(x, async ? "true" : "false");
	ei_x_encode_long(x, us);
	encode_mem(x, total, binary, 0);
	ei_x_encode_long(x, procs);
	ei_x_encode_long(x, 10);
}

/* Module events become module_growth (sync alone, async overlapping: split), and an
 * 8th element of a test record is its measured delta. */
static void test_tests_decode_attribution(void **state)
{
	(void)state;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "ok");
	ei_x_encode_map_header(&x, 3);
	ei_x_encode_atom(&x, "tests");
	ei_x_encode_list_header(&x, 2);
	encode_test(&x, "test a", "passed", "");
	/* the same record with a delta: {Async, MemMap, ProcDelta, EtsDelta} */
	ei_x_encode_tuple_header(&x, 8);
	ei_x_encode_binary(&x, "Elixir.FooTest", 14);
	ei_x_encode_binary(&x, "test b", 6);
	ei_x_encode_binary(&x, "test/foo_test.exs", 17);
	ei_x_encode_long(&x, 3);
	ei_x_encode_long(&x, 100);
	ei_x_encode_atom(&x, "passed");
	ei_x_encode_binary(&x, "", 0);
	ei_x_encode_tuple_header(&x, 4);
	ei_x_encode_atom(&x, "false");
	encode_mem(&x, 5000, 4000, 7);
	ei_x_encode_long(&x, 3);
	ei_x_encode_long(&x, 1);
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "attribution");
	ei_x_encode_atom(&x, "test");
	ei_x_encode_atom(&x, "module_events");
	ei_x_encode_list_header(&x, 7);
	/* A and B async together (A's +2000 shared, B's +1000 alone), then S sync +9000 */
	encode_event(&x, "start", "Elixir.A", true, 0, 1000, 0, 50);
	encode_event(&x, "start", "Elixir.B", true, 10, 1000, 0, 50);
	encode_event(&x, "finish", "Elixir.A", true, 20, 3000, 0, 52);
	encode_event(&x, "finish", "Elixir.B", true, 30, 4000, 0, 52);
	/* an async test's edge: its time only (none for the figures) */
	ei_x_encode_tuple_header(&x, 7);
	ei_x_encode_atom(&x, "test_start");
	ei_x_encode_binary(&x, "Elixir.B", 8);
	ei_x_encode_atom(&x, "true");
	ei_x_encode_long(&x, 35);
	ei_x_encode_atom(&x, "none");
	ei_x_encode_long(&x, 0);
	ei_x_encode_long(&x, 0);
	encode_event(&x, "start", "Elixir.S", false, 40, 4100, 0, 52);
	encode_event(&x, "finish", "Elixir.S", false, 90, 13100, 9000, 252);
	ei_x_encode_empty_list(&x);
	struct term *t = decode_ok(&x);
	struct test_run run = {0};
	char *suite_err = NULL;
	char err[256];
	assert_int_equal(probe_tests_decode(t, &run, &suite_err, err, sizeof(err)), 0);
	assert_int_equal(run.attribution, ATTRIBUTION_TEST);
	assert_false(run.tests[0].measured);
	assert_true(run.tests[1].measured);
	assert_int_equal(run.tests[1].delta.mem[MEM_TOTAL], 5000);
	assert_int_equal(run.tests[1].delta.mem[MEM_ETS], 7);
	assert_int_equal(run.tests[1].delta.processes, 3);
	assert_int_equal(run.nmodules, 3);
	assert_string_equal(run.modules[0].module, "Elixir.A");
	assert_true(run.modules[0].async);
	assert_int_equal(run.modules[0].overlapped, 1);
	assert_int_equal(run.modules[0].delta.mem[MEM_TOTAL], 1000); /* half of 2000 */
	assert_int_equal(run.modules[1].delta.mem[MEM_TOTAL], 2000); /* half + 1000 alone */
	assert_int_equal(run.modules[2].delta.mem[MEM_TOTAL], 9000);
	assert_int_equal(run.modules[2].delta.mem[MEM_BINARY], 9000);
	assert_int_equal(run.modules[2].delta.processes, 200);
	assert_int_equal(run.modules[2].overlapped, 0);
	assert_int_equal(run.modules[2].time_us, 50);
	size_t top[5];
	assert_int_equal(attribution_rank(&run, MEM_TOTAL, false, top, 5), 3);
	assert_int_equal(top[0], 2);
	assert_int_equal(top[1], 1);
	test_run_clear(&run);
	term_free(t);
	ei_x_free(&x);

	/* a malformed event is an error that names it */
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 2);
	ei_x_encode_atom(&x, "tests");
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "module_events");
	ei_x_encode_list_header(&x, 1);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "start");
	ei_x_encode_atom(&x, "x");
	ei_x_encode_empty_list(&x);
	struct term *body = decode_ok(&x);
	ei_x_buff y;
	ei_x_new_with_version(&y);
	ei_x_encode_tuple_header(&y, 2);
	ei_x_encode_atom(&y, "ok");
	ei_x_append_buf(&y, x.buff + 1, x.index - 1);
	t = decode_ok(&y);
	assert_int_equal(probe_tests_decode(t, &run, &suite_err, err, sizeof(err)), -1);
	assert_string_equal(err, "module event 1 is malformed");
	test_run_clear(&run);
	term_free(t);
	term_free(body);
	ei_x_free(&x);
	ei_x_free(&y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_scalars),
	        cmocka_unit_test(test_containers),
	        cmocka_unit_test(test_opaque_pid),
	        cmocka_unit_test(test_every_truncation_rejected),
	        cmocka_unit_test(test_hostile_lengths),
	        cmocka_unit_test(test_limits),
	        cmocka_unit_test(test_snapshot_decode),
	        cmocka_unit_test(test_snapshot_decode_settle),
	        cmocka_unit_test(test_snapshot_decode_set_aside),
	        cmocka_unit_test(test_snapshot_decode_before_gc),
	        cmocka_unit_test(test_tests_decode),
	        cmocka_unit_test(test_tests_decode_errors),
	        cmocka_unit_test(test_tests_decode_packed),
	        cmocka_unit_test(test_tests_decode_attribution),
	        cmocka_unit_test(test_suite_limits_hold_the_cap),
	};
	return cmocka_run_group_tests_name("term", tests, NULL, NULL);
}
