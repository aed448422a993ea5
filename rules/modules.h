/* rules/modules.h: the modules rule: code is never collected, so modules created during the
 * run (no object file, not compiled from the suite's test files: Module.create,
 * Code.compile_string, code:load_binary of generated code) and still loaded at its end are
 * judged on their own. Loading the suite's test modules and the project's, its
 * dependencies' and OTP's modules from their object files is what a suite does: the code row
 * takes that as context (growth_code_split). */
#ifndef GATE_RULES_MODULES_H
#define GATE_RULES_MODULES_H

#include "model/finding.h"

struct modules_config {
	int64_t max_created; /* modules created and still loaded; default 200; RULES_OFF: off */
	int64_t floor_bytes; /* their code and literals of at most this never fail; 1 MB */
};

/* Fills cfg with the documented defaults (see gate.toml). */
void modules_config_default(struct modules_config *cfg);

/* Appends, under rule "modules", subject "created": FAIL when more than max_created modules
 * were created during the run and are still loaded and their code and literals
 * (growth_code_split's created share) are above floor_bytes; the message names them by shape
 * ("CodeLeak.Tpl.* x 1 500"). A failing finding is their structure (rules/consolidate.h): it
 * explains their code and literals, and the refc binaries no process or table holds (the
 * binaries of their literals are counted in binary and held by no process), so the code and
 * binary rows pass as context. SKIP when after has no module origins (an older probe, a
 * snapshot without a before set). Returns 0, or -1 on allocation failure. */
int modules_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                  const struct modules_config *cfg);

#endif
