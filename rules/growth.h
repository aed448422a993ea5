/* rules/growth.h: the growth rule: erlang:memory categories before vs after the suite.
 *
 * The memory model (gate.toml and docs/how-it-works.md say why, with the figures measured):
 *   leaves  processes_used, ets, binary, atom_used, code (with its literals: the constants of
 *           loaded modules live in the literal area, allocator literal_alloc, which
 *           erlang:memory(code) leaves out; persistent_term's values live there too and are
 *           not code) and system, judged on the rest of system: what no other row judges
 *           (system less code and literals, ets, binary and atom).
 *   context total: its growth less what is explained (code and literals: modules the suite
 *           loads; the free space the process heap allocators keep; growth in a leaf or a
 *           structure that fails on its own) fails only when the rest is over total's limit,
 *           i.e. for growth spread over leaves that none of them judges a failure.
 * A leaf whose growth is in a structure a specific rule fails (an ETS table over its cap, a
 * process holding binaries, processes left alive, atoms) is judged net of that structure's
 * growth too: one leak, one failing finding (growth_consolidate).
 * With live_totals false, total and system are judged raw, as erlang:memory reports them. */
#ifndef GATE_RULES_GROWTH_H
#define GATE_RULES_GROWTH_H

#include "model/finding.h"

struct growth_limit {
	bool enabled;
	double max_pct;      /* allowed growth in percent of the before figure */
	int64_t floor_bytes; /* growth of at most this many bytes never fails */
};

struct growth_config {
	struct growth_limit cat[MEM_CAT_COUNT];
	/* The model above: code judged with its literals, system on the rest of system, total
	 * as context net of what the leaves and code loading explain. false: total and system
	 * judged on the raw erlang:memory figures. */
	bool live_totals;
};

/* What one atom costs the VM in the rest of system beyond the text erlang:memory(atom)
 * counts (its entry in the atom table, index and hash slots, in ll_alloc): 65 B measured on
 * OTP 25, 64-bit (60 248 atoms: ll_alloc +5.7 MB, atom +1.8 MB); with room for the tables'
 * doubling. Only used to explain the growth of a failing atom rule. */
#define GROWTH_ATOM_ENTRY_BYTES 96

/* Fills cfg with gate's documented defaults (see gate.toml). */
void growth_config_default(struct growth_config *cfg);

/* The code row's growth (code and literals) split by where the modules loaded during the run
 * came from (after->code_*): suite, what loading the suite's own modules explains (its test
 * modules, and every module loaded from an object file: the project's, its dependencies',
 * OTP's); created, the modules created during the run (judged by the modules rule). Code
 * bytes are shared out by the modules' own code sizes, literals in the same proportion (the
 * node does not say which module's literals are which). Both 0 when after has no origins or
 * no module was loaded. */
struct code_split {
	int64_t suite;
	int64_t created;
};
void growth_code_split(const struct snapshot *before, const struct snapshot *after,
                       struct code_split *out);

/* The literal area's bytes in use (allocator literal_alloc's blocks) less persistent_term's
 * values, i.e. the literals of loaded code; -1 when the snapshot has no allocator data. */
int64_t growth_code_literals(const struct snapshot *s);

/* Appends one finding per enabled category to out (in erlang:memory's order): VERDICT_FAIL
 * when the judged growth (finding.delta, see the model above) is above both the floor and
 * max_pct of the before figure, VERDICT_SKIP when either snapshot lacks the category. A
 * finding that judged less than its raw growth says in finding.explained what it subtracted
 * and why. Returns 0, or -1 on allocation failure (out keeps what was added). */
int growth_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                 const struct growth_config *cfg);

/* After every rule ran: judges the growth findings in out (from index start on) again, net
 * of the growth of structures other rules fail (ets tables, binary holders, processes born
 * or over a limit, atoms), and total net of every failing leaf: a leaf or total whose growth
 * those explain passes, as context, saying so in its message. Does nothing with live_totals
 * false. Returns 0, or -1 on allocation failure. */
int growth_consolidate(struct findings *out, size_t start, const struct snapshot *before,
                       const struct snapshot *after, const struct growth_config *cfg);

#endif
