/* tests/fuzz/fuzz_eic_pipe.c: the framing of gate's pipe to a node it started
 * (gate/node/eic_pipe.c): a stream of 4-byte big-endian lengths and external terms, fed to
 * eic_pipe_take in pieces cut anywhere (as read() hands them over), under a tight, an empty or
 * the default reply cap; then the same stream through a real pipe to eic_open_pipe and one call.
 * Oracle: eic_pipe_take hands out exactly the frames a plain reading of the stream finds, in
 * order, each the same term, and refuses where that reading finds a frame over the cap or a term
 * that does not decode; its buffer always has room when it asks for more.
 * The first byte picks the cap and whether the real pipe runs, the second seeds the cuts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/node/eic.h"
#include "tests/fuzz/fuzz.h"

/* What a plain reading of the stream says about the frame at *at: 1 a term (its text in
 * want), 0 the stream ends before the frame is whole, -1 a refusal (over the cap, undecodable). */
static int reference_next(const uint8_t *s, size_t n, size_t *at, size_t max, char *want,
                          size_t wantlen)
{
	if (n - *at < 4)
		return 0;
	const uint8_t *p = s + *at;
	size_t len = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
	if (len > max)
		return -1;
	if (n - *at - 4 < len)
		return 0;
	struct term *t = NULL;
	size_t idx = 0;
	char err[256];
	int rc = term_decode(&t, p + 4, len, &idx, NULL, err, sizeof(err));
	*at += 4 + len;
	if (rc < 0)
		return -1;
	term_format(t, want, wantlen);
	term_free(t);
	return 1;
}

static void take_all(const uint8_t *s, size_t n, size_t max, uint32_t seed)
{
	struct eic c;
	eic_init(&c);
	c.transport = EIC_PIPE;
	c.max_reply = max;
	snprintf(c.node, sizeof(c.node), "fuzz@nohost");
	size_t fed = 0, at = 0;
	char err[512], want[512], got[512];
	for (;;) {
		struct term *t = NULL;
		err[0] = '\0';
		int rc = eic_pipe_take(&c, "fuzz:call", &t, err, sizeof(err));
		if (rc == EIC_PIPE_MORE) {
			if (t || c.rcap <= c.rlen)
				fuzz_fail("more asked with a term handed out or no room");
			if (fed == n) {
				if (reference_next(s, n, &at, max, want, sizeof(want)) != 0)
					fuzz_fail("the stream holds a frame the framing did not "
					          "take");
				break;
			}
			seed = seed * 1103515245u + 12345u;
			size_t cut = 1 + (seed >> 16) % (seed & 0x100 ? 4096 : 7);
			if (cut > n - fed)
				cut = n - fed;
			if (cut > c.rcap - c.rlen)
				cut = c.rcap - c.rlen;
			memcpy(c.rbuf + c.rlen, s + fed, cut);
			c.rlen += cut;
			fed += cut;
			continue;
		}
		int expect = reference_next(s, n, &at, max, want, sizeof(want));
		if (rc == EIC_OK) {
			if (expect != 1 || !t)
				fuzz_fail("a frame taken where the stream has %s",
				          expect ? "a refusal" : "no whole frame");
			term_format(t, got, sizeof(got));
			if (strcmp(got, want) != 0)
				fuzz_fail("frame taken as %s, the stream has %s", got, want);
			term_free(t);
			continue;
		}
		if (rc != EIC_ERROR || t || expect != -1 || !err[0])
			fuzz_fail("refused (%d: %s) where the stream has %s", rc, err,
			          expect == 1 ? "a frame" : "no whole frame");
		break;
	}
	eic_close(&c);
}

/* The stream through a real pipe: the ready wait, then one call (the reply may be anywhere in
 * it, or not be there); the sanitizers are the oracle. */
static void through_pipe(const uint8_t *s, size_t n)
{
	int rep[2], req[2];
	if (pipe(rep) < 0 || pipe(req) < 0)
		fuzz_fail("pipe");
	if (n > 60000 || write(rep[1], s, n) != (ssize_t)n)
		fuzz_fail("the stream does not fit the pipe");
	close(rep[1]); /* the node gone after it: every wait ends */
	struct eic c;
	eic_init(&c);
	char err[512];
	if (eic_open_pipe(&c, rep[0], req[1], "fuzz@nohost", 2000, err, sizeof(err)) == EIC_OK) {
		struct term *root = NULL;
		const struct term *reply = NULL;
		eic_rpc0(&c, "m", "f", 2000, &root, &reply, err, sizeof(err));
		term_free(root);
	}
	eic_close(&c);
	close(req[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = {256u << 20, 16, 4096, 0};
	if (size < 2)
		return 0;
	take_all(data + 2, size - 2, caps[data[0] & 3], data[1]);
	if (data[0] & 4)
		through_pipe(data + 2, size - 2);
	return 0;
}
