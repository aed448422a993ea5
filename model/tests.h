/* model/tests.h: a suite's results: each test, the test modules' edges and what grew
 * in them, how the figures were taken */
#ifndef GATE_MODEL_TESTS_H
#define GATE_MODEL_TESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/snapshot.h"

/* Ownership: every char * in these structs is owned by the struct that holds it and freed by
 * the matching *_free / *_clear function. *_free(NULL) and *_clear on a zeroed struct are
 * no-ops. Nothing here does I/O. */

enum test_state {
	TEST_PASSED,
	TEST_FAILED,
	TEST_SKIPPED,  /* @tag :skip */
	TEST_EXCLUDED, /* filtered out by --exclude / --only */
	TEST_INVALID   /* setup_all failed: the test never ran */
};

const char *test_state_name(enum test_state state);

/* Growth between two light snapshots: per category, and of the process and ETS table counts. */
struct mem_delta {
	int64_t mem[MEM_CAT_COUNT]; /* bytes; 0 for a category the node did not report */
	int64_t processes;
	int64_t ets_tables;
};

struct test_result {
	char *module; /* "Elixir.Foo.BarTest" as ExUnit names it, shown as Foo.BarTest */
	char *name;   /* "test adds numbers" */
	char *file;   /* may be NULL */
	int line;     /* 0 when unknown */
	int64_t time_us;
	enum test_state state;
	char *message; /* failure or skip reason; may be NULL */
	/* --per-test: light readings (no GC) before the test and at its finish, taken in the test
	 * module's process (see attribution_sync); async tests overlap others, so their figures
	 * are shared. Not measured: a test that shared its reading with the tests before it
	 * (the readings keep to a budget of the run's time, gate_probe_events), a skipped one */
	bool measured;
	bool async;
	struct mem_delta delta;
	char *app; /* the umbrella app (Mix project) whose suite ran it; NULL or "" when unknown */
	char *reason; /* the failure's reason, as junit_formatter's message=: the assertion's
	                 message or the exception's banner; NULL when none */
	/* the test's `gate` tag (@tag / @moduletag gate: ..., rules/tags.h): NULL untagged, "false"
	 * exempt, else "key=value" lines as the test wrote them ("!text": not a keyword list);
	 * grew: what grew most in a tagged test's window, NULL when none */
	char *gate_tag;
	char *gate_grew;
	/* the partition (MIX_TEST_PARTITION) whose run it was in, once `gate merge` joined the
	 * partitions' results; 0 in a run of its own */
	int partition;
};

/* Where a light snapshot was taken: a test module's start or finish, or (for async modules,
 * which run side by side) one of its tests' start or finish. */
enum module_edge { EDGE_MODULE_START, EDGE_MODULE_FINISH, EDGE_TEST_START, EDGE_TEST_FINISH };

/* One light snapshot (no GC) taken in the test module's process at one of its edges; an
 * async test's edge carries only its time (has_mem false). */
struct module_event {
	enum module_edge edge;
	bool has_mem;
	const char *module; /* borrowed from the decoded reply */
	bool async;
	int64_t at_us; /* node's monotonic clock */
	int64_t mem[MEM_CAT_COUNT];
	int64_t processes;
	int64_t ets_tables;
};

/* The growth attributed to one test module (rules/attribution.c): a sync module ran alone,
 * so its growth is its own; async modules overlap, so the growth of each stretch of time is
 * split evenly between the modules running in it, and overlapped says with how many others
 * it shared time. */
struct module_growth {
	char *module;
	bool async;
	bool finished;     /* a module_finished event was seen */
	size_t overlapped; /* other modules that ran at some time while this one did */
	int64_t time_us;
	struct mem_delta delta;
};

enum attribution_mode { ATTRIBUTION_OFF, ATTRIBUTION_MODULE, ATTRIBUTION_TEST };

/* One structure that grew between a test module's edges, read in the node at both edges
 * (gate_probe_events:edge_structs/0): key as findings name structures ("atoms", "ports",
 * "ets:NAME", "ets_owner:PID", "proc:PID"), value its growth (a count for atoms and ports,
 * bytes otherwise). */
struct struct_share {
	char *key;
	int64_t value;
};

/* What grew of each structure between one test module's edges; the largest only (the probe
 * ships what grew by 32 kB or more, atoms and ports whatever their count). */
struct module_structs {
	char *module; /* "Elixir.Foo.BarTest" */
	struct struct_share *items;
	size_t nitems;
};

struct test_run {
	struct test_result *tests;
	size_t count;
	size_t cap;
	bool finished;   /* ExUnit reported suite_finished */
	int64_t run_us;  /* ExUnit's own figures from suite_finished */
	int64_t load_us; /* -1 when ExUnit did not report it */
	int64_t wall_us; /* measured by the probe around Mix.Task.rerun */
	int64_t seed;
	/* attribution: which test modules grew the memory (rules/attribution.h) */
	enum attribution_mode attribution; /* what the formatter measured */
	/* the figures were taken at the exact edges of modules and tests (gate's hook in
	 * ExUnit.EventManager); false: as ExUnit's asynchronous events reached the formatter,
	 * a little after the edges, so a neighbour's growth may be counted */
	bool attribution_sync;
	char *attribution_error; /* why the hook could not be installed; NULL when it was */
	struct module_growth *modules;
	size_t nmodules;
	int64_t module_events_dropped;
	/* what `mix test` itself would have said */
	bool mix_reported;     /* the probe reported the fields below */
	int mix_status;        /* the exit status bare `mix test` would give (0: green) */
	char *mix_reason;      /* why it is non-zero, in Mix's words; NULL when 0 */
	bool mix_explained;    /* the failed tests are the whole reason (no separate report case) */
	bool suite_ran;        /* ExUnit reported at least one suite_finished */
	int64_t tests_dropped; /* tests past the formatter's cap, not recorded */
	int64_t test_cap;      /* that cap */
	int partition;         /* MIX_TEST_PARTITION of a --partitions run; 0: not partitioned */
	/* the structures read at every test module's edges; have_structs: the probe read them
	 * (an older probe, or attribution off or late, did not) */
	bool have_structs;
	struct module_structs *structs;
	size_t nstructs;
	/* how many runs the rules judged the growth of (--repeat N: runs 2..N); these results
	 * and structures are the last run's; 0 or 1: one run */
	int judged_runs;
};

/* Appends a zeroed result and returns it (NULL on allocation failure). */
struct test_result *test_run_add(struct test_run *run);
void test_run_clear(struct test_run *run);

struct test_counts {
	size_t total, passed, failed, skipped, invalid;
};
/* skipped counts both skipped and excluded tests. */
struct test_counts test_run_count(const struct test_run *run);

/* Whether the tests alone make the gate fail: a failed or invalid test, or bare `mix test`
 * would exit non-zero for a reason of its own. Part of the verdict (below). */
bool test_run_red(const struct test_run *run);

#endif
