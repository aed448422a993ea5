/* gate/run/run_opts.h: what the command line asks of `gate run` (gate/cmd/cli.c fills it; the
 * pipeline, gate/run/run.c and its modes, reads it). */
#ifndef GATE_RUN_OPTS_H
#define GATE_RUN_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct run_opts {
	const char *project_dir; /* -C; "." when NULL */
	const char *config_path; /* -c; NULL: PROJECT/gate.toml when it exists, else defaults */
	const char
	        *junit_path; /* --junit, relative to the cwd; NULL: output.junit in the project */
	char *const *test_args; /* after --, passed to mix test */
	size_t ntest_args;
	int boot_timeout_ms; /* > 0 overrides node.boot_timeout */
	int test_timeout_ms; /* > 0 overrides node.test_timeout */
	const char *elixir;  /* elixir executable; NULL: from PATH */
	const char *runner;  /* --runner: which tests run (gate/run/runner.h); NULL: [run] runner */
	const char *erl;     /* --erl: a rebar3 project's node's erl executable; NULL: from PATH */
	bool quiet;          /* no progress lines */
	bool via_plugin;     /* started by `mix gate` or `rebar3 gate`: a reproduce line says so */
	/* baselines */
	const char *baseline_ref; /* --baseline-ref; NULL: [baseline] ref, falling back to HEAD;
	                             "worktree": the working-tree file */
	bool require_baseline;    /* --require-baseline: a missing baseline fails */
	const char *json_path;    /* --json: the run result, with a "baseline" object */
	bool update_baseline;     /* --update-baseline: after a passing run, write the baseline */
	bool commit;              /* --commit: ... and commit it (libgit2) with a git note */
	const char *message;      /* --message: the commit message */
	bool force;               /* --force: update even from a failing run */
	/* attach mode, external workloads, clusters */
	const char *attach; /* --attach NODE: a running node instead of one gate starts */
	const char
	        *cookie_file; /* --cookie-file: its cookie (else $GATE_COOKIE, ~/.erlang.cookie) */
	const char *exec;     /* --exec CMD: run this command instead of mix test */
	bool cluster;         /* --cluster: the attached node and all its nodes() */
	/* CI integrations */
	const char *summary_path; /* --summary: Markdown step summary; NULL: $GITHUB_STEP_SUMMARY */
	const char *html_path;    /* --html: the self-contained HTML report */
	/* attribution */
	bool per_test; /* --per-test: GC'd snapshots around every test */
	/* --instrument: the node boots with +Muatags true (every allocator tags its
	 * blocks with their origin); not with --attach */
	bool instrument;
	/* warnings and the review comment */
	bool warn_only;           /* --warn-only: every memory finding a warning, never failing */
	const char *comment_flag; /* --comment-flag FILE: "true"/"false", post a review comment */
	bool no_attribution;      /* --no-attribution (hidden, for the bench): no module events */
	bool allow_outside;       /* --allow-outside: write outputs through symlinks that lead out
	                             of the project (base/outpath.h) */
	/* warm-up or leak */
	int repeat;        /* --repeat N: the suite N times in one node; 0: [run] repeat */
	bool confirm;      /* --confirm: a failing culprit's test file run alone ([run] confirm) */
	int64_t sample_ms; /* --sample INTERVAL: light snapshots during the run; 0: none */
	/* distribution for a workload */
	const char *distributed; /* --distributed NAME: start mode, the node distributed as
	                            NAME@127.0.0.1 (for a workload); NULL: not distributed */
};

#endif
