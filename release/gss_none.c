/* release/gss_none.c: "no GSSAPI" for the release binary (make release only). Debian's static
 * libgit2 carries the HTTP transport's Negotiate (Kerberos) authentication, whose library
 * (libgssapi_krb5) ships no .a file. gate never talks to a git remote (it opens the local
 * repository: baselines, notes, history; the CI templates push with git itself), so these
 * definitions only have to say "unavailable": every call fails with GSS_S_FAILURE, which
 * libgit2 reports as "Negotiate authentication is not available" if it were ever reached.
 * Signatures as RFC 2744 gives them, with the opaque handles as pointers. */
#include <stddef.h>
#include <stdint.h>

typedef uint32_t gss_uint32;

/* GSS_S_FAILURE: a routine error (RFC 2744 3.9.1) */
#define GSS_NONE_FAILURE (13u << 16)

struct gss_none_oid {
	gss_uint32 length;
	void *elements;
};

static struct gss_none_oid hostbased_service = {0, NULL};
struct gss_none_oid *GSS_C_NT_HOSTBASED_SERVICE = &hostbased_service;

static gss_uint32 gss_none(gss_uint32 *minor)
{
	if (minor)
		*minor = 0;
	return GSS_NONE_FAILURE;
}

gss_uint32 gss_indicate_mechs(gss_uint32 *minor, void **mech_set)
{
	if (mech_set)
		*mech_set = NULL;
	return gss_none(minor);
}

gss_uint32 gss_import_name(gss_uint32 *minor, const void *buffer, const void *type, void **name)
{
	(void)buffer;
	(void)type;
	if (name)
		*name = NULL;
	return gss_none(minor);
}

gss_uint32 gss_init_sec_context(gss_uint32 *minor, void *cred, void **ctx, void *target, void *mech,
                                gss_uint32 req_flags, gss_uint32 time_req, void *bindings,
                                void *input, void **actual_mech, void *output,
                                gss_uint32 *ret_flags, gss_uint32 *time_rec)
{
	(void)cred;
	(void)ctx;
	(void)target;
	(void)mech;
	(void)req_flags;
	(void)time_req;
	(void)bindings;
	(void)input;
	(void)actual_mech;
	(void)output;
	(void)ret_flags;
	(void)time_rec;
	return gss_none(minor);
}

gss_uint32 gss_display_status(gss_uint32 *minor, gss_uint32 status, int type, const void *mech,
                              gss_uint32 *message_context, void *text)
{
	(void)status;
	(void)type;
	(void)mech;
	(void)text;
	if (message_context)
		*message_context = 0;
	return gss_none(minor);
}

/* the release routines: nothing was ever allocated, so releasing succeeds */
gss_uint32 gss_release_buffer(gss_uint32 *minor, void *buffer)
{
	(void)buffer;
	if (minor)
		*minor = 0;
	return 0;
}

gss_uint32 gss_release_name(gss_uint32 *minor, void **name)
{
	if (name)
		*name = NULL;
	return gss_release_buffer(minor, NULL);
}

gss_uint32 gss_release_oid_set(gss_uint32 *minor, void **set)
{
	if (set)
		*set = NULL;
	return gss_release_buffer(minor, NULL);
}

gss_uint32 gss_delete_sec_context(gss_uint32 *minor, void **ctx, void *output)
{
	(void)output;
	if (ctx)
		*ctx = NULL;
	return gss_release_buffer(minor, NULL);
}
