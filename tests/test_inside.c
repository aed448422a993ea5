/* tests/test_inside.c: inside the processes that grew: decoding the probe's look inside
 * (gate/probe/probe_inside.c), comparing parts before and after and wording them
 * (rules/inside.c), and the drill-down's texts that carry them (rules/drilldown.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ei.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/node/term.h"
#include "gate/probe/probe_inside.h"
#include "model/finding.h"
#include "rules/drilldown.h"
#include "rules/inside.h"

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

static struct inside_part part(enum inside_kind k, const char *where, const char *type,
                               const char *unit, int64_t count, int64_t bytes)
{
	struct inside_part p = {k, dup0(where), dup0(type), dup0(unit), count, bytes};
	return p;
}

/* a proc_inside with n parts now and nb before (owned: proc_inside_clear) */
static void make(struct proc_inside *in, const struct inside_part *now, size_t n,
                 enum inside_before before, const struct inside_part *was, size_t nb)
{
	memset(in, 0, sizeof(*in));
	in->pid = dup0("<0.176.0>");
	in->kind = dup0("gen_server");
	in->inspected = true;
	in->before = before;
	in->parts = calloc(n ? n : 1, sizeof(*in->parts));
	memcpy(in->parts, now, n * sizeof(*now));
	in->nparts = n;
	if (nb) {
		in->parts_before = calloc(nb, sizeof(*was));
		memcpy(in->parts_before, was, nb * sizeof(*was));
		in->nparts_before = nb;
	}
}

/* A struct's MapSet field grew between the two reads; the counter beside it is not named */
static void test_map_field_grew(void **state)
{
	(void)state;
	struct proc_inside in;
	struct inside_part now[] = {
	        part(INSIDE_STATE, "field :keys", "a MapSet", "members", 15012, 2500000),
	        part(INSIDE_STATE, "field :hits", "a number", NULL, 0, 0)};
	struct inside_part was[] = {
	        part(INSIDE_STATE, "field :keys", "a MapSet", "members", 12, 400),
	        part(INSIDE_STATE, "field :hits", "a number", NULL, 0, 0)};
	make(&in, now, 2, INSIDE_BEFORE_READ, was, 2);
	char buf[512];
	inside_describe(buf, sizeof(buf), &in, 2600000);
	assert_string_equal(
	        buf, "its state's field :keys (a MapSet) grew 12 -> 15 012 members, +2.5 MB");

	struct inside_change ch[4];
	size_t n = inside_compare(ch, 4, &in);
	assert_int_equal(n, 2);
	assert_string_equal(ch[0].now->where, "field :keys");
	assert_int_equal(ch[0].dcount, 15000);
	assert_int_equal(ch[0].dbytes, 2500000 - 400);
	assert_int_equal(ch[1].dcount, 0);
	proc_inside_clear(&in);
}

/* Born: from nothing; a whole-state list; the data of a gen_statem */
static void test_born_list_and_data(void **state)
{
	(void)state;
	struct proc_inside in;
	struct inside_part now[] = {
	        part(INSIDE_STATE, NULL, "a list", "elements", 100000, 4000000)};
	make(&in, now, 1, INSIDE_BEFORE_BORN, NULL, 0);
	char buf[512];
	inside_describe(buf, sizeof(buf), &in, 8000000);
	assert_string_equal(buf, "its state (a list) grew 0 -> 100 000 elements, +4.0 MB");
	proc_inside_clear(&in);

	struct inside_part q[] = {
	        part(INSIDE_DATA, "key :pending", "a :queue", "items", 80000, 3200000)};
	struct inside_part q0[] = {part(INSIDE_DATA, "key :pending", "a :queue", "items", 0, 16)};
	make(&in, q, 1, INSIDE_BEFORE_READ, q0, 1);
	inside_describe(buf, sizeof(buf), &in, 6700000);
	assert_string_equal(buf,
	                    "its data's key :pending (a :queue) grew 0 -> 80 000 items, +3.2 MB");
	proc_inside_clear(&in);
}

/* A key shape absent before counts from 0; handlers by module */
static void test_dict_and_handlers(void **state)
{
	(void)state;
	struct proc_inside in;
	struct inside_part now[] = {
	        part(INSIDE_DICT, "{:session, _}", NULL, "keys", 22800, 1100000)};
	struct inside_part was[] = {part(INSIDE_DICT, ":other", NULL, "keys", 1, 24)};
	make(&in, now, 1, INSIDE_BEFORE_READ, was, 1);
	char buf[512];
	inside_describe(buf, sizeof(buf), &in, 3000000);
	assert_string_equal(buf,
	                    "process dictionary +22 800 keys {:session, _} (0 -> 22 800), +1.1 MB");
	proc_inside_clear(&in);

	struct inside_part h[] = {
	        part(INSIDE_HANDLERS, "GateX.Handler", NULL, "handlers", 20000, -1)};
	make(&in, h, 1, INSIDE_BEFORE_READ, NULL, 0);
	inside_describe(buf, sizeof(buf), &in, 3000000);
	assert_string_equal(buf, "20 000 handlers GateX.Handler (0 before)");
	proc_inside_clear(&in);
}

/* Not asked: why, then the mailbox by shape with its count before and after */
static void test_not_inspected_mailbox(void **state)
{
	(void)state;
	struct proc_inside in;
	struct inside_part now[] = {
	        part(INSIDE_MAILBOX, "{:DOWN, ...}", NULL, "messages", 14000, 1000000),
	        part(INSIDE_MAILBOX, ":tick", NULL, "messages", 3, 0)};
	make(&in, now, 2, INSIDE_BEFORE_NOT_READ, NULL, 0);
	in.inspected = false;
	in.why = dup0("not an OTP server (waits in Foo:loop/0)");
	in.mailbox_before = 3;
	char buf[512];
	inside_describe(buf, sizeof(buf), &in, 2000000);
	assert_string_equal(buf,
	                    "not inspected: not an OTP server (waits in Foo:loop/0), mailbox 3 "
	                    "-> 14 003 messages: 14 000 {:DOWN, ...} (1.0 MB), 3 :tick (0 B)");
	proc_inside_clear(&in);
}

/* A state that did not grow: the growth is heap; a part not sized is compared by count; a
 * process not read before says what it holds */
static void test_heap_unsized_and_not_read(void **state)
{
	(void)state;
	struct proc_inside in;
	struct inside_part now[] = {part(INSIDE_STATE, "field :n", "a number", NULL, 0, 16)};
	struct inside_part was[] = {part(INSIDE_STATE, "field :n", "a number", NULL, 0, 16)};
	make(&in, now, 1, INSIDE_BEFORE_READ, was, 1);
	char buf[512];
	inside_describe(buf, sizeof(buf), &in, 3000000);
	assert_string_equal(
	        buf, "its state did not grow (16 B -> 16 B): the +3.0 MB is heap, not state");
	proc_inside_clear(&in);

	struct inside_part big[] = {part(INSIDE_STATE, NULL, "a map", "entries", 500000, -1)};
	struct inside_part big0[] = {part(INSIDE_STATE, NULL, "a map", "entries", 10, -1)};
	make(&in, big, 1, INSIDE_BEFORE_READ, big0, 1);
	inside_describe(buf, sizeof(buf), &in, 300000000);
	assert_string_equal(buf, "its state (a map) grew 10 -> 500 000 entries");
	proc_inside_clear(&in);

	struct inside_part big2[] = {part(INSIDE_STATE, NULL, "a map", "entries", 500000, -1)};
	make(&in, big2, 1, INSIDE_BEFORE_NOT_READ, NULL, 0);
	inside_describe(buf, sizeof(buf), &in, 300000000);
	assert_string_equal(buf,
	                    "its state (a map) holds 500 000 entries (its state was not read at "
	                    "the before-snapshot)");
	proc_inside_clear(&in);
	/* a buffer too short is cut, never overrun */
	struct inside_part n2[] = {part(INSIDE_STATE, "field :n", "a number", NULL, 0, 16)};
	struct inside_part w2[] = {part(INSIDE_STATE, "field :n", "a number", NULL, 0, 16)};
	make(&in, n2, 1, INSIDE_BEFORE_READ, w2, 1);
	char small[20];
	inside_describe(small, sizeof(small), &in, 3000000);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_string_equal(small + sizeof(small) - 4, "...");
	proc_inside_clear(&in);
}

static void test_starter_text(void **state)
{
	(void)state;
	struct starter s = {dup0("test spawns sleepers"),
	                    dup0("test/spawn_test.exs"),
	                    6,
	                    dup0("Elixir.Inside.SpawnTest"),
	                    dup0("Inside.SpawnTest:-test spawns/1-fun-0-/0"),
	                    NULL};
	char buf[400];
	inside_starter_text(buf, sizeof(buf), &s);
	assert_string_equal(buf,
	                    "started by \"test spawns sleepers\" (test/spawn_test.exs:6, in "
	                    "Inside.SpawnTest), with Inside.SpawnTest:-test spawns/1-fun-0-/0");
	starter_clear(&s);
	struct starter sup = {NULL, NULL, 0, NULL, dup0("Pool.Worker:init/1"), dup0("Pool.Sup")};
	inside_starter_text(buf, sizeof(buf), &sup);
	assert_string_equal(buf, "started with Pool.Worker:init/1, via Pool.Sup");
	starter_clear(&sup);
	struct starter none = {0};
	inside_starter_text(buf, sizeof(buf), &none);
	assert_string_equal(buf, "");
}

/* ---- decoding ---- */

static void bin(ei_x_buff *x, const char *s)
{
	ei_x_encode_binary(x, s, (long)strlen(s));
}

static void encode_part(ei_x_buff *x, const char *kind, const char *where, long count, long bytes)
{
	ei_x_encode_tuple_header(x, 6);
	ei_x_encode_atom(x, kind);
	bin(x, where);
	bin(x, "a MapSet");
	bin(x, "members");
	ei_x_encode_long(x, count);
	ei_x_encode_long(x, bytes);
}

/* [#{pid, kind, inspected, why, parts, parts_before, started, mailbox_before}] */
static int decode(struct snapshot *s, const char *kind, long bytes, const char *before_atom)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_list_header(&x, 1);
	ei_x_encode_map_header(&x, 8);
	ei_x_encode_atom(&x, "pid");
	bin(&x, "<0.1.0>");
	ei_x_encode_atom(&x, "kind");
	bin(&x, "gen_server");
	ei_x_encode_atom(&x, "inspected");
	ei_x_encode_atom(&x, "true");
	ei_x_encode_atom(&x, "why");
	bin(&x, "");
	ei_x_encode_atom(&x, "mailbox_before");
	ei_x_encode_long(&x, 0);
	ei_x_encode_atom(&x, "parts");
	ei_x_encode_list_header(&x, 1);
	encode_part(&x, kind, "field :keys", 15012, bytes);
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "parts_before");
	if (before_atom) {
		ei_x_encode_atom(&x, before_atom);
	} else {
		ei_x_encode_list_header(&x, 1);
		encode_part(&x, kind, "field :keys", 12, 400);
		ei_x_encode_empty_list(&x);
	}
	ei_x_encode_atom(&x, "started");
	ei_x_encode_map_header(&x, 2);
	ei_x_encode_atom(&x, "test");
	bin(&x, "test grows");
	ei_x_encode_atom(&x, "line");
	ei_x_encode_long(&x, 12);
	ei_x_encode_empty_list(&x);
	struct term *t = NULL;
	size_t idx = 0;
	char err[256];
	int rc = term_decode(&t, (const unsigned char *)x.buff, (size_t)x.index, &idx,
	                     &term_limits_default, err, sizeof(err));
	assert_int_equal(rc, 0);
	memset(s, 0, sizeof(*s));
	rc = probe_inside_decode(t, s, err, sizeof(err));
	term_free(t);
	ei_x_free(&x);
	return rc;
}

static void test_decode(void **state)
{
	(void)state;
	struct snapshot s;
	assert_int_equal(decode(&s, "state", 2500000, NULL), 0);
	assert_int_equal(s.ninside, 1);
	const struct proc_inside *in = inside_find(&s, "<0.1.0>");
	assert_non_null(in);
	assert_null(inside_find(&s, "<0.2.0>"));
	assert_true(in->inspected);
	assert_null(in->why);
	assert_int_equal(in->before, INSIDE_BEFORE_READ);
	assert_int_equal(in->nparts_before, 1);
	assert_int_equal(in->parts[0].kind, INSIDE_STATE);
	assert_int_equal(in->parts[0].count, 15012);
	assert_string_equal(in->started.test, "test grows");
	assert_int_equal(in->started.line, 12);
	assert_null(in->started.file);
	snapshot_clear(&s);

	/* not sized (-1) is allowed; born and none */
	assert_int_equal(decode(&s, "data", -1, "born"), 0);
	assert_int_equal(s.inside[0].parts[0].bytes, -1);
	assert_int_equal(s.inside[0].before, INSIDE_BEFORE_BORN);
	snapshot_clear(&s);
	assert_int_equal(decode(&s, "dict", 10, "none"), 0);
	assert_int_equal(s.inside[0].before, INSIDE_BEFORE_NOT_READ);
	snapshot_clear(&s);

	/* refused: an unknown kind, a figure below -1 */
	assert_int_equal(decode(&s, "heap", 10, "none"), -1);
	snapshot_clear(&s);
	assert_int_equal(decode(&s, "state", -2, "none"), -1);
	snapshot_clear(&s);
}

/* The drill-down's process text carries who started it and what grew inside */
static void test_drilldown_text(void **state)
{
	(void)state;
	struct snapshot b, a;
	memset(&b, 0, sizeof(b));
	memset(&a, 0, sizeof(a));
	a.have_growth = true;
	a.grew_procs = calloc(1, sizeof(*a.grew_procs));
	a.ngrew_procs = 1;
	a.grew_procs[0].pid = dup0("<0.1.0>");
	a.grew_procs[0].initial_call = dup0("Foo:init/1");
	a.grew_procs[0].memory = 5000000;
	a.grew_procs[0].born = true;
	struct inside_part now[] = {
	        part(INSIDE_STATE, NULL, "a list", "elements", 100000, 4000000)};
	a.inside = calloc(1, sizeof(*a.inside));
	a.ninside = 1;
	make(&a.inside[0], now, 1, INSIDE_BEFORE_BORN, NULL, 0);
	free(a.inside[0].pid);
	a.inside[0].pid = dup0("<0.1.0>");
	a.inside[0].started.test = dup0("test grows");
	a.inside[0].started.file = dup0("test/a_test.exs");
	a.inside[0].started.line = 3;
	a.inside[0].started.code = dup0("Foo:init/1");
	struct drill_item items[8];
	size_t n = drilldown_list(items, 8, &b, &a);
	assert_int_equal(n, 1);
	assert_string_equal(
	        items[0].text,
	        "process <0.1.0> (Foo:init/1) memory +5.0 MB, born during the run, "
	        "started by \"test grows\" (test/a_test.exs:3): its state (a list) grew 0 "
	        "-> 100 000 elements, +4.0 MB");

	/* one born process holding most of the born processes' memory: it is the finding's
	 * headline, with its starter; the group would name the same bytes a second time */
	a.born_count = 2;
	a.born_memory = 5100000;
	a.born = calloc(1, sizeof(*a.born));
	a.nborn = 1;
	a.born[0].key = dup0("Foo:init/1");
	a.born[0].count = 1;
	a.born[0].memory = 5000000;
	a.born[0].example_pid = dup0("<0.1.0>");
	a.born[0].started.test = dup0("test grows");
	a.born[0].started.file = dup0("test/a_test.exs");
	a.born[0].started.line = 3;
	a.born[0].started.code = dup0("Foo:init/1");
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "growth", "processes_used", VERDICT_FAIL, 1000000,
	                              6100000, 1000000, 10.0, "processes_used grew"),
	                 0);
	f.items[0].delta = 5100000;
	assert_int_equal(drilldown_annotate(&f, &b, &a), 0);
	assert_string_equal(
	        f.items[0].message,
	        "process <0.1.0> (Foo:init/1) memory +5.0 MB, born during the run, "
	        "started by \"test grows\" (test/a_test.exs:3): its state (a list) grew "
	        "0 -> 100 000 elements, +4.0 MB; processes_used grew");
	findings_clear(&f);

	/* the born group started by the same test, its memory spread over its processes, named
	 * in the same finding as one of them: the starter is said once */
	a.born_count = 4;
	a.born_memory = 12000000;
	a.born[0].count = 4;
	a.born[0].memory = 12000000;
	assert_int_equal(findings_add(&f, "growth", "processes_used", VERDICT_FAIL, 1000000,
	                              13000000, 1000000, 10.0, "processes_used grew"),
	                 0);
	f.items[0].delta = 12000000;
	assert_int_equal(drilldown_annotate(&f, &b, &a), 0);
	assert_string_equal(f.items[0].message,
	                    "4 processes born during the run still alive (12.0 MB): started by "
	                    "\"test grows\" (test/a_test.exs:3), with Foo:init/1, waiting in "
	                    "Foo:init/1 x 4 (e.g. <0.1.0>), process <0.1.0> (Foo:init/1) memory "
	                    "+5.0 MB, born during the run, started by the same test: its state (a "
	                    "list) grew 0 -> 100 000 elements, +4.0 MB; processes_used grew");
	findings_clear(&f);
	snapshot_clear(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_map_field_grew),
	        cmocka_unit_test(test_born_list_and_data),
	        cmocka_unit_test(test_dict_and_handlers),
	        cmocka_unit_test(test_not_inspected_mailbox),
	        cmocka_unit_test(test_heap_unsized_and_not_read),
	        cmocka_unit_test(test_starter_text),
	        cmocka_unit_test(test_decode),
	        cmocka_unit_test(test_drilldown_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
