/* gate/probe/otp.c: the node's Erlang/OTP release against what gate supports and was built with. */
#include "gate/probe/otp.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"
#include "gate/probe/probe_blob.h"

/* "25" -> 25; "R16B03" -> 16 (releases before OTP 17 were named so); anything else 0 */
static int release_number(const char *r)
{
	bool old = r && r[0] == 'R';
	if (old)
		r++;
	if (!r || r[0] < '1' || r[0] > '9')
		return 0;
	char *end;
	long v = strtol(r, &end, 10);
	return ((*end == '\0' || old) && v > 0 && v < 1000) ? (int)v : 0;
}

int otp_release_check(const char *node, const char *node_release, char *err, size_t errlen)
{
	int v = release_number(node_release);
	if (v == 0 || v >= OTP_MIN_RELEASE)
		return 0;
	errtext_set(err, errlen, NULL,
	            "node %s runs Erlang/OTP %s, older than gate supports (OTP %d and "
	            "later; tested on OTP 25 and 27): run the project on a newer OTP (setup-beam's "
	            "otp-version, the CI image's tag, or the erl on PATH)",
	            node, node_release, OTP_MIN_RELEASE);
	return -1;
}

int otp_node_check(struct eic *c, int timeout_ms, char *release, size_t rlen, char *err,
                   size_t errlen)
{
	ei_x_buff args;
	struct term *root;
	const struct term *reply;
	release[0] = '\0';
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, "otp_release");
	ei_x_encode_empty_list(&args);
	int rc = eic_rpc(c, "erlang", "system_info", &args, timeout_ms, &root, &reply, err, errlen);
	ei_x_free(&args);
	if (rc == EIC_OK) {
		const char *t = term_text(reply);
		snprintf(release, rlen, "%s", t ? t : "");
		if (otp_release_check(c->node, release, err, errlen) < 0)
			rc = EIC_ERROR;
	}
	term_free(root);
	return rc;
}

void otp_explain_probe_load(const char *node, const char *node_release, char *err, size_t errlen)
{
	int v = release_number(node_release), built = release_number(probe_otp_release);
	if (v == 0 || built == 0 || v >= built)
		return;
	char was[1024];
	snprintf(was, sizeof(was), "%s", err);
	snprintf(
	        err, errlen,
	        "node %s runs Erlang/OTP %s, but this gate's probe was compiled by "
	        "OTP %s's erlc and OTP %s cannot load it (%s): build gate with the OTP the project "
	        "runs on (the erl on PATH when running make), or the oldest OTP you run it with",
	        node, node_release, probe_otp_release, node_release, was);
}
