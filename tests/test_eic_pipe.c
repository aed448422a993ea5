/* tests/test_eic_pipe.c: gate/node/eic_pipe.c, the pipe transport of gate's channel
 * to a node it started, on real pipes: the test writes what a node's bootstrap writes (frames
 * of external terms, cut anywhere) and reads what gate sends. A frame in pieces, a stray frame
 * before the ready one, a late reply to an abandoned call, a raise in the node, a frame over
 * the cap, a silent node and a node gone each get their own answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gate/node/eic.h"

struct rig {
	struct eic c;
	int node_in;  /* the node's end of gate's requests */
	int node_out; /* the node's end of its replies */
};

static void rig_open(struct rig *r)
{
	int req[2], rep[2];
	assert_int_equal(pipe(req), 0);
	assert_int_equal(pipe(rep), 0);
	eic_init(&r->c);
	r->c.transport = EIC_PIPE; /* as eic_open_pipe sets it, for the tests that skip it */
	r->c.fd = rep[0];
	r->c.wfd = req[1];
	snprintf(r->c.node, sizeof(r->c.node), "nonode@nohost");
	r->node_in = req[0];
	r->node_out = rep[1];
}

static void rig_close(struct rig *r)
{
	eic_close(&r->c);
	if (r->node_in >= 0)
		close(r->node_in);
	if (r->node_out >= 0)
		close(r->node_out);
}

/* Writes x as the node would: a 4-byte length, then the term; split at cut bytes (0: whole). */
static void node_send(struct rig *r, ei_x_buff *x, size_t cut)
{
	unsigned char frame[4096];
	uint32_t n = (uint32_t)x->index;
	assert_true(n + 4 <= sizeof(frame));
	frame[0] = (unsigned char)(n >> 24);
	frame[1] = (unsigned char)(n >> 16);
	frame[2] = (unsigned char)(n >> 8);
	frame[3] = (unsigned char)n;
	memcpy(frame + 4, x->buff, n);
	size_t len = n + 4, at = cut && cut < len ? cut : len;
	assert_int_equal(write(r->node_out, frame, at), (ssize_t)at);
	if (at < len)
		assert_int_equal(write(r->node_out, frame + at, len - at), (ssize_t)(len - at));
	ei_x_free(x);
}

static void reply(struct rig *r, long id, const char *atom, bool badrpc)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "gate_reply");
	ei_x_encode_long(&x, id);
	if (badrpc) {
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "badrpc");
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "EXIT");
	}
	ei_x_encode_atom(&x, atom);
	node_send(r, &x, 0);
}

static void test_eic_pipe__ready_in_pieces_after_a_stray_frame(void **state)
{
	(void)state;
	struct rig r;
	char err[256];
	rig_open(&r);
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_atom(&x, "stray");
	node_send(&r, &x, 0);
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 1);
	ei_x_encode_atom(&x, "gate_ready");
	node_send(&r, &x, 2); /* the length itself cut in two */
	int rfd = r.c.fd, wfd = r.c.wfd;
	assert_int_equal(eic_open_pipe(&r.c, rfd, wfd, "nonode@nohost", 2000, err, sizeof(err)),
	                 EIC_OK);
	assert_true(eic_connected(&r.c));
	rig_close(&r);
	assert_false(eic_connected(&r.c));
}

/* The next call frame gate sent, as the node reads it: {call, Id, Mod, Fun, Args} (owned),
 * or NULL. */
static struct term *next_call(struct rig *r)
{
	unsigned char buf[512], hdr[4];
	char err[256];
	if (read(r->node_in, hdr, 4) != 4)
		return NULL;
	uint32_t n =
	        (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (n > sizeof(buf) || read(r->node_in, buf, n) != (ssize_t)n)
		return NULL;
	struct term *call;
	size_t idx = 0;
	if (term_decode(&call, buf, n, &idx, NULL, err, sizeof(err)) < 0 || idx != n)
		return NULL;
	return call;
}

/* The id of the call frame the node reads next, or -1. */
static long next_call_id(struct rig *r)
{
	struct term *call = next_call(r);
	long id = call ? (long)term_tuple_at(call, 1)->u.i : -1;
	term_free(call);
	return id;
}

static void test_eic_pipe__call_sent_late_reply_dropped(void **state)
{
	(void)state;
	struct rig r;
	char err[256];
	struct term *root;
	const struct term *rep;
	rig_open(&r);
	reply(&r, 0, "stale", false); /* the answer to a call gate gave up on */
	reply(&r, 1, "fresh", false);
	ei_x_buff args;
	ei_x_new_with_version(&args);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, "memory");
	ei_x_encode_empty_list(&args);
	assert_int_equal(
	        eic_rpc(&r.c, "erlang", "system_info", &args, 2000, &root, &rep, err, sizeof(err)),
	        EIC_OK);
	assert_true(term_is_atom(rep, "fresh"));
	assert_int_equal(r.c.late, 1); /* the stale one, counted */
	term_free(root);
	/* what the node got: {call, 1, erlang, system_info, [memory]} */
	struct term *call = next_call(&r);
	assert_non_null(call);
	assert_true(term_is_atom(term_tuple_at(call, 0), "call"));
	assert_int_equal(term_tuple_at(call, 1)->u.i, 1);
	assert_true(term_is_atom(term_tuple_at(call, 2), "erlang"));
	assert_true(term_is_atom(term_tuple_at(call, 3), "system_info"));
	const struct term *a = term_tuple_at(call, 4);
	assert_int_equal(a->type, TERM_LIST);
	assert_true(term_is_atom(&a->u.seq.items[0], "memory"));
	term_free(call);
	ei_x_free(&args);
	rig_close(&r);
}

/* A call in two halves: the node answers while gate works; a call sent and never waited for
 * (an error in between) does not lend its reply to the next one. */
static void test_eic_pipe__send_then_wait_and_an_unwaited_call(void **state)
{
	(void)state;
	struct rig r;
	char err[256];
	struct term *root;
	const struct term *rep;
	rig_open(&r);
	ei_x_buff args;
	ei_x_new_with_version(&args);
	ei_x_encode_empty_list(&args);
	assert_int_equal(eic_call_send(&r.c, "gate_probe", "snapshot", &args, err, sizeof(err)),
	                 EIC_OK);
	long id = next_call_id(&r);
	assert_int_equal(id, 1);
	reply(&r, id, "snapped", false); /* answered before gate waits */
	assert_int_equal(
	        eic_call_wait(&r.c, "gate_probe", "snapshot", 2000, &root, &rep, err, sizeof(err)),
	        EIC_OK);
	assert_true(term_is_atom(rep, "snapped"));
	term_free(root);
	/* sent, not waited for: its late reply is dropped, the next call gets its own */
	assert_int_equal(eic_call_send(&r.c, "gate_probe", "snapshot", &args, err, sizeof(err)),
	                 EIC_OK);
	assert_int_equal(next_call_id(&r), 2);
	reply(&r, 2, "late", false);
	reply(&r, 3, "cleaned", false);
	assert_int_equal(
	        eic_rpc(&r.c, "gate_probe", "cleanup", &args, 2000, &root, &rep, err, sizeof(err)),
	        EIC_OK);
	assert_true(term_is_atom(rep, "cleaned"));
	assert_int_equal(r.c.late, 1);
	term_free(root);
	assert_int_equal(next_call_id(&r), 3);
	/* a late reply read while idle is counted too */
	reply(&r, 2, "later", false);
	assert_int_equal(eic_idle(&r.c, 100, err, sizeof(err)), EIC_OK);
	assert_int_equal(r.c.late, 2);
	/* a wait with no call pending times out as eic_rpc does, and says so */
	assert_int_equal(
	        eic_call_wait(&r.c, "gate_probe", "snapshot", 50, &root, &rep, err, sizeof(err)),
	        EIC_TIMEOUT);
	assert_non_null(strstr(err, "did not answer gate_probe:snapshot"));
	ei_x_free(&args);
	rig_close(&r);
}

static void test_eic_pipe__badrpc_timeout_cap_and_eof(void **state)
{
	(void)state;
	struct rig r;
	char err[256];
	struct term *root;
	const struct term *rep;
	rig_open(&r);
	reply(&r, 1, "undef", true);
	assert_int_equal(eic_rpc0(&r.c, "gate_probe", "hello", 2000, &root, &rep, err, sizeof(err)),
	                 EIC_BADRPC);
	assert_non_null(strstr(err, "gate_probe:hello failed in node nonode@nohost"));
	assert_non_null(strstr(err, "undef"));
	term_free(root);
	/* nothing comes: a timeout naming the call */
	assert_int_equal(eic_rpc0(&r.c, "gate_probe", "slow", 50, &root, &rep, err, sizeof(err)),
	                 EIC_TIMEOUT);
	assert_non_null(strstr(err, "did not answer gate_probe:slow within 50 ms"));
	/* a frame larger than gate accepts is refused before it is read */
	r.c.max_reply = 16;
	unsigned char big[4] = {0, 0, 1, 0};
	assert_int_equal(write(r.node_out, big, 4), 4);
	assert_int_equal(eic_rpc0(&r.c, "gate_probe", "big", 2000, &root, &rep, err, sizeof(err)),
	                 EIC_ERROR);
	assert_non_null(strstr(err, "256 bytes, more than the 16 gate accepts"));
	rig_close(&r);
	/* the node gone: end of file */
	rig_open(&r);
	close(r.node_out);
	r.node_out = -1;
	assert_int_equal(eic_idle(&r.c, 2000, err, sizeof(err)), EIC_ERROR);
	assert_non_null(strstr(err, "closed"));
	rig_close(&r);
}

/* Appends bytes to the channel's buffer as the reader does: at most the room there is. */
static size_t feed(struct eic *c, const unsigned char *p, size_t n)
{
	size_t room = c->rcap - c->rlen, k = n < room ? n : room;
	memcpy(c->rbuf + c->rlen, p, k);
	c->rlen += k;
	return k;
}

/* The framing without a pipe (eic_pipe_take): two frames cut at every byte come out whole and
 * in order; a length that promises 100 MB costs what arrived, not 100 MB; a frame of no bytes
 * and one that is not a term are refused. */
static void test_eic_pipe__take_cut_anywhere_lying_length_empty_frame(void **state)
{
	(void)state;
	unsigned char s[64];
	size_t n = 0;
	const char *atoms[] = {"gate_ready", "late"};
	for (int i = 0; i < 2; i++) {
		ei_x_buff x;
		ei_x_new_with_version(&x);
		ei_x_encode_tuple_header(&x, 1);
		ei_x_encode_atom(&x, atoms[i]);
		s[n] = s[n + 1] = 0;
		s[n + 2] = (unsigned char)(x.index >> 8);
		s[n + 3] = (unsigned char)x.index;
		memcpy(s + n + 4, x.buff, (size_t)x.index);
		n += 4 + (size_t)x.index;
		ei_x_free(&x);
	}
	char err[256], text[64];
	struct term *t;
	for (size_t cut = 1; cut <= n; cut++) {
		struct eic c;
		eic_init(&c);
		c.transport = EIC_PIPE;
		size_t fed = 0;
		int got = 0;
		while (got < 2) {
			int rc = eic_pipe_take(&c, "the start", &t, err, sizeof(err));
			if (rc == EIC_PIPE_MORE) {
				assert_true(c.rcap > c.rlen);
				assert_true(fed < n);
				fed += feed(&c, s + fed, cut < n - fed ? cut : n - fed);
				continue;
			}
			assert_int_equal(rc, EIC_OK);
			term_format(t, text, sizeof(text));
			assert_non_null(strstr(text, atoms[got++]));
			term_free(t);
		}
		assert_int_equal(c.rlen, 0);
		eic_close(&c);
	}
	struct eic c;
	eic_init(&c);
	c.transport = EIC_PIPE;
	assert_int_equal(eic_pipe_take(&c, "x", &t, err, sizeof(err)), EIC_PIPE_MORE);
	unsigned char lie[4 + 70000] = {0x06, 0x40, 0, 0, 131}; /* 100 MB promised */
	feed(&c, lie, sizeof(lie));
	for (int i = 0; i < 4; i++)
		assert_int_equal(eic_pipe_take(&c, "x", &t, err, sizeof(err)), EIC_PIPE_MORE);
	assert_true(c.rcap <= 2 * 65536); /* doubled once, as the bytes came */
	assert_int_equal(feed(&c, lie + 65536, sizeof(lie) - 65536), sizeof(lie) - 65536);
	eic_close(&c);
	const unsigned char empty[] = {0, 0, 0, 0}, junk[] = {0, 0, 0, 2, 'h', 'i'};
	for (int i = 0; i < 2; i++) {
		eic_init(&c);
		c.transport = EIC_PIPE;
		snprintf(c.node, sizeof(c.node), "nonode@nohost");
		eic_pipe_take(&c, "x", &t, err, sizeof(err));
		feed(&c, i ? junk : empty, i ? sizeof(junk) : sizeof(empty));
		assert_int_equal(eic_pipe_take(&c, "gate_probe:hello", &t, err, sizeof(err)),
		                 EIC_ERROR);
		assert_null(t);
		assert_non_null(strstr(err, "undecodable reply to gate_probe:hello"));
		eic_close(&c);
	}
}

/* A reply larger than the read buffer's usual size (64 kB) grows it while it is read; once
 * taken, the buffer is back to the usual size, and the next frame reads as before. */
static void test_eic_pipe__buffer_shrinks_after_a_large_reply(void **state)
{
	(void)state;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "gate_reply");
	ei_x_encode_long(&x, 1);
	size_t big = 300000;
	char *blob = malloc(big);
	assert_non_null(blob);
	memset(blob, 'x', big);
	ei_x_encode_binary(&x, blob, (long)big);
	free(blob);
	size_t n = 4 + (size_t)x.index;
	unsigned char *s = malloc(n + 64);
	assert_non_null(s);
	s[0] = (unsigned char)(x.index >> 24);
	s[1] = (unsigned char)(x.index >> 16);
	s[2] = (unsigned char)(x.index >> 8);
	s[3] = (unsigned char)x.index;
	memcpy(s + 4, x.buff, (size_t)x.index);
	ei_x_free(&x);
	/* then a small frame, {gate_ready} */
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 1);
	ei_x_encode_atom(&x, "gate_ready");
	s[n] = s[n + 1] = s[n + 2] = 0;
	s[n + 3] = (unsigned char)x.index;
	memcpy(s + n + 4, x.buff, (size_t)x.index);
	size_t total = n + 4 + (size_t)x.index;
	ei_x_free(&x);

	struct eic c;
	eic_init(&c);
	c.transport = EIC_PIPE;
	char err[256];
	struct term *t;
	size_t fed = 0, most = 0;
	int got = 0;
	while (got < 2) {
		int rc = eic_pipe_take(&c, "gate_probe:snapshot", &t, err, sizeof(err));
		most = c.rcap > most ? c.rcap : most;
		if (rc == EIC_PIPE_MORE) {
			assert_true(fed < total);
			fed += feed(&c, s + fed, total - fed);
			continue;
		}
		assert_int_equal(rc, EIC_OK);
		if (got++ == 0) {
			assert_int_equal(term_tuple_at(t, 2)->u.bin.len, big);
			assert_true(most >= big);        /* it grew to hold the reply */
			assert_int_equal(c.rcap, 65536); /* and is back once it is taken */
		} else {
			assert_true(term_is_atom(term_tuple_at(t, 0), "gate_ready"));
		}
		term_free(t);
	}
	assert_int_equal(c.rlen, 0);
	assert_int_equal(c.rcap, 65536);
	free(s);
	eic_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_eic_pipe__ready_in_pieces_after_a_stray_frame),
	        cmocka_unit_test(test_eic_pipe__call_sent_late_reply_dropped),
	        cmocka_unit_test(test_eic_pipe__send_then_wait_and_an_unwaited_call),
	        cmocka_unit_test(test_eic_pipe__badrpc_timeout_cap_and_eof),
	        cmocka_unit_test(test_eic_pipe__take_cut_anywhere_lying_length_empty_frame),
	        cmocka_unit_test(test_eic_pipe__buffer_shrinks_after_a_large_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
