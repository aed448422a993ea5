/* ci/report/snapshot_text.c: one snapshot as readable tables. */
#include "ci/report/snapshot_text.h"
#include "model/figures.h"
#include "model/snapshot.h"

#include <stdlib.h>
#include <string.h>

static int by_memory(const void *a, const void *b)
{
	const struct proc_info *x = a, *y = b;
	return (y->memory > x->memory) - (y->memory < x->memory);
}

/* Text from the node, cut to width and with control characters made harmless. */
static const char *cell(const char *s, char *buf, size_t width)
{
	size_t i = 0;
	if (!s)
		s = "-";
	for (; s[i] && i < width; i++)
		buf[i] = (unsigned char)s[i] < 32 || s[i] == 127 ? '?' : s[i];
	buf[i] = '\0';
	if (s[i] && width > 3)
		memcpy(buf + width - 3, "...", 4);
	return buf;
}

void snapshot_text_print(FILE *out, const struct snapshot *s, size_t rows)
{
	char b1[32], b2[32], c1[64], c2[64], c3[64];

	fprintf(out, "Snapshot of %s (OTP %s, %lld schedulers, GC %.0f ms)\n\n", s->node,
	        s->otp_release, (long long)s->schedulers, (double)s->gc_us / 1000.0);
	fprintf(out, "%-16s %12s\n", "category", "bytes");
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		if (!s->have[i])
			continue;
		model_bytes_format(b1, sizeof(b1), s->mem[i]);
		fprintf(out, "%-16s %12s\n", mem_cat_name((enum mem_cat)i), b1);
	}
	fprintf(out,
	        "\nprocesses %lld / %lld   atoms %lld / %lld   ETS tables %lld / %lld   "
	        "ports %lld / %lld\n",
	        (long long)s->process_count, (long long)s->process_limit, (long long)s->atom_count,
	        (long long)s->atom_limit, (long long)s->ets_count, (long long)s->ets_limit,
	        (long long)s->port_count, (long long)s->port_limit);

	if (s->nprocs) {
		struct proc_info *p = malloc(s->nprocs * sizeof(*p));
		if (p) {
			memcpy(p, s->procs, s->nprocs * sizeof(*p));
			qsort(p, s->nprocs, sizeof(*p), by_memory);
			fprintf(out, "\nTop processes by memory\n%-14s %-24s %-28s %9s %7s %9s\n",
			        "pid", "name or initial call", "current function", "memory",
			        "mailbox", "binaries");
			for (size_t i = 0; i < s->nprocs && i < rows; i++) {
				model_bytes_format(b1, sizeof(b1), p[i].memory);
				model_bytes_format(b2, sizeof(b2), p[i].bin_bytes);
				fprintf(out, "%-14s %-24s %-28s %9s %7lld %9s\n",
				        cell(p[i].pid, c1, 14),
				        cell(p[i].name ? p[i].name : p[i].initial_call, c2, 24),
				        cell(p[i].current_function, c3, 28), b1,
				        (long long)p[i].message_queue_len, b2);
			}
			free(p);
		}
	}
	if (s->nets) {
		fprintf(out, "\nLargest ETS tables\n%-28s %-12s %-10s %10s %10s  %s\n", "name",
		        "type", "access", "rows", "memory", "owner");
		for (size_t i = 0; i < s->nets && i < rows; i++) {
			const struct ets_info *e = &s->ets[i];
			model_bytes_format(b1, sizeof(b1), e->memory);
			fprintf(out, "%-28s %-12s %-10s %10lld %10s  %s\n", cell(e->name, c1, 28),
			        cell(e->type, c2, 12), cell(e->protection, c3, 10),
			        (long long)e->size, b1,
			        e->owner_name  ? e->owner_name
			        : e->owner_pid ? e->owner_pid
			                       : "-");
		}
	}
	if (s->nallocs) {
		fprintf(out, "\nAllocators\n%-16s %12s %12s %14s\n", "type", "carriers", "blocks",
		        "fragmentation");
		for (size_t i = 0; i < s->nallocs; i++) {
			const struct alloc_info *a = &s->allocs[i];
			model_bytes_format(b1, sizeof(b1), a->carriers_size);
			model_bytes_format(b2, sizeof(b2), a->blocks_size);
			fprintf(out, "%-16s %12s %12s %12.1f %%\n", cell(a->type, c1, 16), b1, b2,
			        100.0 * a->fragmentation);
		}
	}
}
