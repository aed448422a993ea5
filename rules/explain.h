/* rules/explain.h: what each rule measures, why it usually fails and how teams usually fix it,
 * from BEAM memory practice: the text of `gate explain RULE` and of docs/findings.md, and the
 * hint a failing finding ends with. One entry per rule name a finding carries (f->rule). */
#ifndef GATE_RULES_EXPLAIN_H
#define GATE_RULES_EXPLAIN_H

#include <stddef.h>

struct rule_explain {
	const char *rule;     /* as findings carry it: "ets", "growth", ... */
	const char *title;    /* one line: what fails */
	const char *measures; /* what the rule measures and when it fails */
	const char *causes;   /* the usual causes, one per line, each starting with "- " */
	const char *fixes;    /* the usual fixes, one per line, each starting with "- " */
	const char *config;   /* the keys that set its limits, as gate.toml spells them */
};

/* How a failing finding ends, in every report that shows it: EXPLAIN_HINT "ets: its usual
 * causes and fixes". */
#define EXPLAIN_HINT "gate explain "

/* What every failing finding that names a test module gives to act on it, said after each
 * rule's text and atop docs/findings.md. */
#define EXPLAIN_ACTING                                                                             \
	"A failing finding that names a test module ends with the command that reproduces it: "    \
	"\"reproduce: gate run -- test/x_test.exs --only feed\" (mix gate or rebar3 gate when "    \
	"gate was run by it), the run's own options that change what is measured (-c, "            \
	"--per-test, --instrument, --repeat), the culprit alone (mix test: its test file, :LINE "  \
	"when one test is named; a rebar3 project: --suite S for a Common Test suite, --module M " \
	"for an EUnit module) and the run's other test arguments. gate run --confirm ([run] "      \
	"confirm) runs the culprit alone, --repeat 3, in a fresh node after a failing verdict "    \
	"with one culprit module, and adds \"confirmed alone: FILE grows STRUCTURE by +N in each " \
	"run\", \"confirmed alone, once: ... in its first run only\" (a growth that stops) or "    \
	"\"not reproduced alone: it needs what ran before it (MODULE)\"; the verdict stays the "   \
	"first run's."

/* The entry of rule, or NULL when gate has no such rule. */
const struct rule_explain *rule_explain_find(const char *rule);

/* The entry a failing finding's hint names: its rule's, except that a category's growth
 * names the rule of what grew (ets, binary, process for processes_used, atom for atom_used,
 * modules for code), whose causes and fixes are the ones that apply. NULL: none. */
const struct rule_explain *rule_explain_for(const char *rule, const char *subject);

/* Every entry, in the order the judge runs the rules; *n gets their count. */
const struct rule_explain *rule_explain_all(size_t *n);

#endif
