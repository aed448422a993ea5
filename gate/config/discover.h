/* gate/config/discover.h: finding the project and its gate.toml, the one way every command
 * does it (gate run, snapshot, baseline, hook, config check). */
#ifndef GATE_CONFIG_DISCOVER_H
#define GATE_CONFIG_DISCOVER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "gate/config/config.h"

/* What the project directory must hold. */
enum discover_need {
	DISCOVER_DIR, /* a directory: gate.toml and the reports (attach mode, baseline) */
	DISCOVER_MIX, /* a Mix project: a readable mix.exs */
	/* a project whose tests gate runs: a Mix project, or a rebar3 project (a readable
	 * rebar.config, no mix.exs) */
	DISCOVER_TESTS,
};

/* Whether the project (a directory discover_project resolved) has a readable rebar.config. */
bool discover_has_rebar3(const char *project);

/* Whether the project's tests are a rebar3 project's: a rebar.config, and no Mix suite (a
 * mix.exs with test/test_helper.exs is a Mix project, whatever else it has; a library that
 * ships a mix.exs for Elixir users but tests with EUnit and Common Test is a rebar3 one). */
bool discover_is_rebar3(const char *project);

/* Resolves dir (NULL: the current directory) to an absolute path in out. On failure returns -1
 * and writes a message naming the directory and the fix (-C DIR, then `alt` when not NULL,
 * e.g. "or a running node with --attach"). */
int discover_project(const char *dir, enum discover_need need, const char *alt, char out[PATH_MAX],
                     char *err, size_t errlen);

/* The configuration file of a project: explicit when given, else PROJECT/gate.toml when it
 * exists, else "" (the defaults; also when project is NULL). Returns 0, or -1 when the path does
 * not fit. */
int discover_config_path(const char *project, const char *explicit_path, char *out, size_t outlen,
                         char *err, size_t errlen);

/* Sets cfg to the defaults and reads the project's configuration over them (see
 * discover_config_path). Returns 0, or -1 with a message (cfg then holds the defaults). */
int discover_config(struct config *cfg, const char *project, const char *explicit_path, char *err,
                    size_t errlen);

#endif
