/* tests/test_probe_names.c: the probe's modules under a slot's names: the embedded
 * beams' atom tables rewritten, the other chunks untouched, both atom table layouts (OTP 25's
 * one-byte lengths, OTP 26's compact ones), and input that is no BEAM file refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gate/probe/probe_blob.h"
#include "gate/probe/probe_names.h"

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The data of chunk id in beam, or NULL; its size in *size. */
static const unsigned char *chunk(const unsigned char *beam, size_t len, const char *id,
                                  uint32_t *size)
{
	for (size_t at = 12; at + 8 <= len;) {
		uint32_t n = get32(beam + at + 4);
		if (memcmp(beam + at, id, 4) == 0) {
			*size = n;
			return beam + at + 8;
		}
		at += 8 + ((n + 3) & ~(size_t)3);
	}
	return NULL;
}

/* The i-th atom (0-based) of an OTP 25 atom table, into out. */
static void atom_at(const unsigned char *atoms, uint32_t i, char *out, size_t len)
{
	const unsigned char *p = atoms + 4;
	for (uint32_t k = 0; k < i; k++)
		p += 1 + p[0];
	snprintf(out, len, "%.*s", p[0], (const char *)p + 1);
}

static const struct probe_blob *blob(const char *module)
{
	for (const struct probe_blob *b = probe_blobs; b->module; b++)
		if (strcmp(b->module, module) == 0)
			return b;
	return NULL;
}

static size_t modules(const char **out)
{
	size_t n = 0;
	for (const struct probe_blob *b = probe_blobs; b->module; b++)
		out[n++] = b->module;
	return n;
}

static void names_of_a_slot(void **state)
{
	(void)state;
	char n[64];
	probe_name("gate_probe", 0, n, sizeof(n));
	assert_string_equal(n, "gate_probe");
	probe_name("gate_probe_snapshot", 3, n, sizeof(n));
	assert_string_equal(n, "gate_probe_snapshot__3");
	/* Mix finds the formatter by its name: never renamed */
	probe_name("Elixir.Gate.Formatter", 3, n, sizeof(n));
	assert_string_equal(n, "Elixir.Gate.Formatter");
	assert_false(probe_name_renamed("Elixir.Gate.Formatter"));
}

/* Every atom naming a probe module gets the slot's name, every other atom and every other
 * chunk stay as compiled, and the sizes of the container add up. */
static void embedded_beam_renamed(void **state)
{
	(void)state;
	const char *mods[32];
	size_t nmod = modules(mods);
	const struct probe_blob *b = blob("gate_probe");
	assert_non_null(b);
	size_t len = 0;
	unsigned char *r = probe_beam_rename(b->beam, b->size, mods, nmod, 5, &len);
	assert_non_null(r);
	assert_memory_equal(r, "FOR1", 4);
	assert_int_equal(get32(r + 4), len - 8);
	uint32_t osize, nsize;
	const unsigned char *oat = chunk(b->beam, b->size, "AtU8", &osize);
	const unsigned char *nat = chunk(r, len, "AtU8", &nsize);
	assert_non_null(oat);
	assert_non_null(nat);
	assert_int_equal(get32(oat), get32(nat)); /* as many atoms */
	char was[300], now[300];
	atom_at(nat, 0, now, sizeof(now));
	assert_string_equal(now, "gate_probe__5"); /* the module's own name */
	int renamed = 0;
	for (uint32_t i = 0; i < get32(oat); i++) {
		atom_at(oat, i, was, sizeof(was));
		atom_at(nat, i, now, sizeof(now));
		bool mod = false;
		for (size_t m = 0; m < nmod; m++)
			mod |= strcmp(was, mods[m]) == 0 && probe_name_renamed(mods[m]);
		if (mod) {
			char want[300];
			snprintf(want, sizeof(want), "%s__5", was);
			assert_string_equal(now, want);
			renamed++;
		} else {
			assert_string_equal(now, was);
		}
	}
	/* gate_probe itself and the modules it calls (gate_probe_snapshot, ...) */
	assert_true(renamed >= 2);
	uint32_t oc, nc;
	const unsigned char *ocode = chunk(b->beam, b->size, "Code", &oc);
	const unsigned char *ncode = chunk(r, len, "Code", &nc);
	assert_non_null(ncode);
	assert_int_equal(oc, nc);
	assert_memory_equal(ocode, ncode, oc);
	free(r);
}

/* OTP 26 and newer write a negative atom count and compact lengths: a name of 16 characters
 * or more takes two bytes. */
static void compact_atom_table(void **state)
{
	(void)state;
	/* atoms: gate_probe (10: one byte 0xA0), x (0x10) */
	unsigned char atoms[] = {0xFF, 0xFF, 0xFF, 0xFE, 0xA0, 'g', 'a',  't', 'e',
	                         '_',  'p',  'r',  'o',  'b',  'e', 0x10, 'x'};
	size_t asz = sizeof(atoms), csz = 8 + ((asz + 3) & ~(size_t)3);
	size_t len = 12 + csz;
	unsigned char *beam = calloc(1, len);
	memcpy(beam, "FOR1", 4);
	beam[4] = (unsigned char)((len - 8) >> 24);
	beam[5] = (unsigned char)((len - 8) >> 16);
	beam[6] = (unsigned char)((len - 8) >> 8);
	beam[7] = (unsigned char)(len - 8);
	memcpy(beam + 8, "BEAM", 4);
	memcpy(beam + 12, "AtU8", 4);
	beam[19] = (unsigned char)asz;
	memcpy(beam + 20, atoms, asz);
	const char *mods[] = {"gate_probe"};
	size_t outlen;
	unsigned char *r = probe_beam_rename(beam, len, mods, 1, 12, &outlen);
	assert_non_null(r);
	uint32_t n;
	const unsigned char *a = chunk(r, outlen, "AtU8", &n);
	assert_non_null(a);
	/* gate_probe__12: 14 characters, still one byte (0xE0); then x */
	assert_int_equal(n, 4 + 1 + 14 + 2);
	assert_int_equal(a[4], 0xE0);
	assert_memory_equal(a + 5, "gate_probe__12", 14);
	assert_int_equal(a[19], 0x10);
	free(r);
	/* a name of 16 characters or more: two bytes, 0x08 | high bits, then the low byte */
	const char *longer[] = {"gate_probe"};
	r = probe_beam_rename(beam, len, longer, 1, 123456, &outlen);
	assert_non_null(r);
	a = chunk(r, outlen, "AtU8", &n);
	assert_int_equal(a[4], 0x08);
	assert_int_equal(a[5], 18); /* gate_probe__123456 */
	assert_memory_equal(a + 6, "gate_probe__123456", 18);
	free(r);
	free(beam);
}

static void not_a_beam_is_refused(void **state)
{
	(void)state;
	const char *mods[] = {"gate_probe"};
	size_t len;
	const unsigned char junk[] = "FOR1\0\0\0\4BEAMxxxxxxxx";
	assert_null(probe_beam_rename(junk, sizeof(junk) - 1, mods, 1, 1, &len));
	assert_null(probe_beam_rename((const unsigned char *)"", 0, mods, 1, 1, &len));
	/* a real beam cut short */
	const struct probe_blob *b = blob("gate_probe");
	assert_null(probe_beam_rename(b->beam, b->size / 2, mods, 1, 1, &len));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(names_of_a_slot),
	        cmocka_unit_test(embedded_beam_renamed),
	        cmocka_unit_test(compact_atom_table),
	        cmocka_unit_test(not_a_beam_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
