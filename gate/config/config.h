/* gate/config/config.h: gate's effective configuration, read from gate.toml over the defaults. */
#ifndef GATE_CONFIG_H
#define GATE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rules/repeat.h"
#include "rules/rules.h"

struct config {
	/* [node] */
	char *mix_env;       /* MIX_ENV of the node gate starts; default "test" */
	char *erl_flags;     /* extra flags for the node's erl, split on blanks; default "" */
	int boot_timeout_ms; /* node up and answering; default 120 s */
	int rpc_timeout_ms;  /* one probe call other than the suite; default 60 s */
	int test_timeout_ms; /* the whole mix test run; default 30 min */
	int stop_timeout_ms; /* graceful stop before SIGKILL; default 10 s */
	/* the longest wait for the ports' input buffers before a snapshot; 3 s, 0 off */
	int settle_timeout_ms;
	/* [output] */
	char *junit; /* path relative to the project; default "_build/gate/junit.xml" */
	/* [growth], [growth.<category>], [ets], [[ets.table]], [binary], [process], [atom],
	 * [allocator], [baseline] */
	struct rules_config rules;
	int annotations; /* [attention] annotations: GitHub annotations at most; 8 */
	/* [run] */
	int repeat;   /* runs of the suite in one node (gate run --repeat); default 1 */
	char *runner; /* which tests run (gate/run/runner.h); default "auto" */
	bool confirm; /* after a failing memory verdict, the culprit's file alone (--confirm) */
	int confirm_timeout_ms; /* that run's own limit; default 10 min */
	/* where the values came from, for messages; "defaults" when no file was read */
	char *source;
};

/* Sets every field to its documented default. Returns 0, or -1 on allocation failure. */
int config_default(struct config *cfg);

/* Reads the TOML file at path over the defaults. On failure returns -1 and writes to err a
 * message naming path:line:col, the key and a fix; cfg then holds the defaults only. */
int config_load(struct config *cfg, const char *path, char *err, size_t errlen);

/* Same, from text in memory; name is used in messages in place of the path. */
int config_load_text(struct config *cfg, const char *text, size_t len, const char *name, char *err,
                     size_t errlen);

/* Prints the effective configuration as valid TOML that config_load accepts. */
void config_print(const struct config *cfg, FILE *out);

void config_clear(struct config *cfg);

/* ---- the reference (config_reference.c) and the starting file (config_template.c) ---- */

/* One key of gate.toml as the reference documents it; the strings are static. */
struct config_key_doc {
	const char *table;   /* "node", "growth", "growth.CATEGORY", "ets.table" ([[ets.table]]) */
	const char *key;     /* "mix_env" */
	const char *example; /* a value as written in gate.toml: "\"test\"" */
	const char *doc;     /* what the key does; NULL or "" when the schema lacks it (a bug) */
};

/* The i-th key of gate.toml (0, 1, ...), table by table in the reference's order, into *out;
 * false past the last. */
bool config_key_doc_at(size_t i, struct config_key_doc *out);

/* Prints the reference of every table and key of gate.toml as Markdown: each key's type,
 * default (from config_default), example and what it does; docs/configuration.md is this
 * output. Returns 0, or -1 when out of memory (the output is then incomplete). */
int config_reference(FILE *out);

/* The short commented gate.toml that `gate config init` writes: the limits teams change
 * most, every value at its default (it loads to config_default's configuration). */
extern const char config_template[];

/* Writes config_template to path, never over anything: a file, a directory or a symlink
 * there is refused. Atomic: the text appears whole under path or not at all, through a
 * temp file beside it (missing parent directories are created). Returns 0, or -1 with err
 * naming path, what failed and what to do. */
int config_template_write(const char *path, char *err, size_t errlen);

#endif
