/* gate/probe/probe_names.c: the probe's modules under a slot's names: a compiled module's atom
 * table rewritten (see probe_names.h for why). */
#include "gate/probe/probe_names.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool probe_name_renamed(const char *module)
{
	return strncmp(module, "gate_probe", 10) == 0;
}

void probe_name(const char *module, unsigned slot, char *out, size_t len)
{
	if (slot == 0 || !probe_name_renamed(module))
		snprintf(out, len, "%s", module);
	else
		snprintf(out, len, "%s__%u", module, slot);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* An atom's length in the table. OTP 25 and older write one byte; OTP 26 and newer mark
 * the table with a negative count and write each length in the compact term encoding (tag
 * u = 0): one byte below 16, two below 2048 (atoms are at most 255 characters). */
static int len_get(const unsigned char *p, size_t avail, bool compact, size_t *len, size_t *used)
{
	if (avail < 1)
		return -1;
	if (!compact) {
		*len = p[0];
		*used = 1;
		return 0;
	}
	if ((p[0] & 0x07) != 0)
		return -1; /* not tag u */
	if (!(p[0] & 0x08)) {
		*len = p[0] >> 4;
		*used = 1;
		return 0;
	}
	if ((p[0] & 0x10) || avail < 2)
		return -1;
	*len = ((size_t)(p[0] & 0xE0) << 3) | p[1];
	*used = 2;
	return 0;
}

static size_t len_put(unsigned char *p, size_t len, bool compact)
{
	if (!compact) {
		p[0] = (unsigned char)len;
		return 1;
	}
	if (len < 16) {
		p[0] = (unsigned char)(len << 4);
		return 1;
	}
	p[0] = (unsigned char)(((len >> 3) & 0xE0) | 0x08);
	p[1] = (unsigned char)(len & 0xFF);
	return 2;
}

/* The renamed atom table (the chunk's data) of slot, or NULL. */
static unsigned char *atoms_rename(const unsigned char *data, size_t size,
                                   const char *const *modules, size_t nmod, unsigned slot,
                                   size_t *outsize)
{
	if (size < 4)
		return NULL;
	int32_t count = (int32_t)get32(data);
	bool compact = count < 0;
	uint32_t n = compact ? (uint32_t) - (int64_t)count : (uint32_t)count;
	/* each atom grows by at most "__" and 10 digits, and its length by one byte */
	unsigned char *out = malloc(size + (size_t)n * 13 + 4);
	if (!out)
		return NULL;
	memcpy(out, data, 4);
	size_t in = 4, o = 4;
	for (uint32_t i = 0; i < n; i++) {
		size_t len, used;
		if (len_get(data + in, size - in, compact, &len, &used) < 0 ||
		    len > size - in - used)
			goto bad;
		const char *atom = (const char *)data + in + used;
		char renamed[300];
		size_t rlen = len;
		const char *src = atom;
		for (size_t m = 0; m < nmod; m++) {
			if (strlen(modules[m]) != len || memcmp(modules[m], atom, len) != 0 ||
			    !probe_name_renamed(modules[m]))
				continue;
			probe_name(modules[m], slot, renamed, sizeof(renamed));
			src = renamed;
			rlen = strlen(renamed);
			break;
		}
		if (rlen > 255)
			goto bad;
		o += len_put(out + o, rlen, compact);
		memcpy(out + o, src, rlen);
		o += rlen;
		in += used + len;
	}
	if (in != size)
		goto bad; /* bytes after the atoms: not a table this code knows */
	*outsize = o;
	return out;
bad:
	free(out);
	return NULL;
}

unsigned char *probe_beam_rename(const unsigned char *beam, size_t len, const char *const *modules,
                                 size_t nmod, unsigned slot, size_t *outlen)
{
	/* "FOR1" <size of the rest> "BEAM", then chunks: <id> <size> <data> padded to 4 bytes */
	if (len < 12 || memcmp(beam, "FOR1", 4) != 0 || memcmp(beam + 8, "BEAM", 4) != 0 ||
	    get32(beam + 4) != len - 8)
		return NULL;
	size_t at = 12;
	while (at + 8 <= len) {
		uint32_t size = get32(beam + at + 4);
		if (size > len - at - 8)
			return NULL;
		if (memcmp(beam + at, "AtU8", 4) != 0) {
			at += 8 + ((size + 3) & ~(size_t)3);
			continue;
		}
		size_t nsize;
		unsigned char *atoms =
		        atoms_rename(beam + at + 8, size, modules, nmod, slot, &nsize);
		if (!atoms)
			return NULL;
		size_t old_span = 8 + ((size + 3) & ~(size_t)3);
		size_t new_span = 8 + ((nsize + 3) & ~(size_t)3);
		size_t rest = at + old_span <= len ? len - at - old_span : 0;
		size_t total = at + new_span + rest;
		unsigned char *out = calloc(1, total);
		if (!out) {
			free(atoms);
			return NULL;
		}
		memcpy(out, beam, at);
		memcpy(out + at, "AtU8", 4);
		put32(out + at + 4, (uint32_t)nsize);
		memcpy(out + at + 8, atoms, nsize);
		memcpy(out + at + new_span, beam + at + old_span, rest);
		put32(out + 4, (uint32_t)(total - 8));
		free(atoms);
		*outlen = total;
		return out;
	}
	return NULL; /* no AtU8 chunk (an older "Atom" table): the names as compiled */
}
