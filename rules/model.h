/* rules/model.h: the data every floor shares: snapshots, test results and findings.
 *
 * Ownership: every char * in these structs is owned by the struct that holds it and
 * freed by the matching *_free / *_clear function. *_free(NULL) and *_clear on a zeroed
 * struct are no-ops. Nothing here does I/O.
 */
#ifndef GATE_RULES_MODEL_H
#define GATE_RULES_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* erlang:memory/0 categories, in the order erlang:memory/0 reports them on OTP 25. */
enum mem_cat {
	MEM_TOTAL,
	MEM_PROCESSES,
	MEM_PROCESSES_USED,
	MEM_SYSTEM,
	MEM_ATOM,
	MEM_ATOM_USED,
	MEM_BINARY,
	MEM_CODE,
	MEM_ETS,
	MEM_CAT_COUNT
};

/* "total", "processes", ...; NULL for an out-of-range value. */
const char *mem_cat_name(enum mem_cat cat);
/* The category named name, or -1 when there is none. */
int mem_cat_from_name(const char *name);

/* Every figure of a snapshot (bytes, counts, microseconds, milliseconds since the epoch)
 * lies in [0, MODEL_FIGURE_MAX]: the decoder of the node's replies refuses others, so that
 * the rules can add and subtract figures without overflow. (A baseline's figures are
 * non-negative int64: after - baseline cannot overflow either.)
 * 2^50 bytes is 1 PiB: far beyond any node. */
#define MODEL_FIGURE_MAX ((int64_t)1 << 50)

/* One process, as the probe saw it in its single pass (GC between the two binary reads). */
struct proc_info {
	char *pid;               /* "<0.123.0>" */
	char *name;              /* registered name, NULL when none */
	char *initial_call;      /* "Elixir.Foo.Server:init/1", proc_lib's translated call */
	char *current_function;  /* "gen_server:loop/7" */
	int64_t memory;          /* bytes, after GC */
	int64_t heap_size;       /* bytes */
	int64_t total_heap_size; /* bytes */
	int64_t message_queue_len;
	int64_t bin_refs;           /* refc binaries referenced after GC */
	int64_t bin_bytes;          /* their bytes */
	int64_t bin_refs_before_gc; /* recon's bin_leak: refs before - refs after = what GC freed */
	int64_t bin_bytes_before_gc;
	bool born; /* alive now, not alive at the before-snapshot */
};

/* Who started a process born during the run (for a group, its example's): each text NULL
 * when unknown. */
struct starter {
	char *test;   /* the test that was running, by spawn ancestry: "test spawns sleepers" */
	char *file;   /* its file, relative to the project: "test/spawn_test.exs" */
	int64_t line; /* its line, 0 when unknown */
	char *module; /* the test module, by spawn ancestry */
	char *code;   /* what it was started with: a proc_lib initial call, or the spawned fun
	               * when its stack still shows it ("Foo.-loop/1-fun-0-/0 (lib/foo.ex:12)") */
	char *by;     /* the process that started it: its supervisor's name, "<0.1.0> Foo:init/1" */
};

/* Processes born during the run and still alive, grouped by initial call or registered name
 * and by the test that started them. */
struct proc_group {
	char *key; /* "Elixir.Foo.Worker:init/1" or a registered name */
	int64_t count;
	int64_t memory; /* bytes, summed */
	char *example_pid;
	struct starter started; /* the example's */
};

struct ets_info {
	char *name;       /* table name as written in Elixir/Erlang: "corpus_cache" */
	char *id;         /* "#Ref<...>" or the name for named tables */
	bool named;       /* named_table */
	char *type;       /* set, ordered_set, bag, duplicate_bag */
	char *protection; /* public, protected, private */
	int64_t size;     /* rows */
	int64_t memory;   /* bytes (words x word size) */
	char *owner_pid;
	char *owner_name; /* registered name of the owner, NULL when none */
	bool created;     /* created since the before-snapshot */
};

/* What a test module left behind, by spawn ancestry (after-snapshot only): the processes born
 * during the run and still alive that descend from the module's own process or its tests,
 * and the ETS tables created during the run that they own. */
struct module_owner {
	char *module; /* "Elixir.Foo.BarTest" */
	int64_t processes;
	int64_t memory;    /* bytes of those processes */
	int64_t bin_bytes; /* refc binary bytes they hold after GC */
	int64_t tables;
	int64_t table_bytes;
};

/* One allocator type (binary_alloc, ets_alloc, eheap_alloc, ...), summed over instances,
 * mbcs + sbcs (+ mbcs_pool). */
struct alloc_info {
	char *type;
	int64_t carriers_size; /* bytes allocated from the OS */
	int64_t blocks_size;   /* bytes in use */
	double fragmentation;  /* 1 - blocks/carriers, 0 when carriers_size is 0 */
};

/* What grew since the before-snapshot, computed in the node by the after-snapshot from the
 * keeper's before set. Figures before and after, never deltas, so that every
 * figure stays in [0, MODEL_FIGURE_MAX]. */

/* A process among the top growers of memory, mailbox or refc binary bytes. */
struct proc_growth {
	char *pid;
	char *name;         /* registered name, NULL when none */
	char *initial_call; /* proc_lib's translated call */
	char *current_function;
	char *ancestor;                  /* nearest named ancestor or supervisor, NULL when none */
	char *module;                    /* test module by spawn ancestry, NULL when none */
	int64_t memory_before, memory;   /* bytes, after GC; 0 before for a born process */
	int64_t mailbox_before, mailbox; /* messages */
	int64_t bin_before, bin;         /* refc binary bytes after GC */
	bool born;
	/* what it holds now when one of them is in the thousands (0: fewer, or an older probe): its
	 * monitors, the monitors on it, its links */
	int64_t monitors, monitored_by, links;
};

/* Inside a process that grew (rules/inside.h words it): one part of it, at the after- or the
 * before-snapshot. */
enum inside_kind {
	INSIDE_STATE,    /* a server's state (gen_server, Agent), or one of its fields */
	INSIDE_DATA,     /* a gen_statem's data, or one of its fields */
	INSIDE_DICT,     /* process dictionary keys of one shape */
	INSIDE_MAILBOX,  /* mailbox messages of one shape */
	INSIDE_HANDLERS, /* a gen_event manager's handlers of one module */
	INSIDE_KIND_COUNT
};

struct inside_part {
	enum inside_kind kind;
	char *where;   /* "field :keys", "key :sessions", "field items of #state{}", "element 2";
	                * NULL: the whole state; dictionary, mailbox, handlers: the shape
	                * ("{:session, _}", "{:DOWN, ...}", "GateX.Handler") */
	char *type;    /* "a MapSet", "a list", "a :queue"; NULL for shapes */
	char *unit;    /* what count counts: "members", "elements", "keys"; NULL: not counted */
	int64_t count; /* members, elements, keys, messages, handlers */
	int64_t bytes; /* its flat size; -1: not sized (a state too large to walk) */
};

/* What the parts before are: read at the before-snapshot, none (born during the run: every
 * part grew from nothing), or not read (the process was not among those summarised). */
enum inside_before { INSIDE_BEFORE_NOT_READ, INSIDE_BEFORE_BORN, INSIDE_BEFORE_READ };

/* One process the after-snapshot looked inside (a grower of struct proc_growth, by pid). */
struct proc_inside {
	char *pid;
	char *kind;     /* "gen_server", "gen_statem", "gen_event", "process", ... */
	bool inspected; /* its state was read; else why says why not */
	char *why;      /* NULL when inspected */
	struct inside_part *parts;
	size_t nparts;
	enum inside_before before;
	struct inside_part *parts_before; /* when before is INSIDE_BEFORE_READ */
	size_t nparts_before;
	struct starter started; /* born during the run: who started it */
	int64_t mailbox_before; /* messages in its mailbox at the before-snapshot */
};

/* Free what a starter or a proc_inside holds and zero it; NULL is a no-op. */
void starter_clear(struct starter *s);
void proc_inside_clear(struct proc_inside *in);

/* An ETS table among the top growers in bytes or rows, created before the run or during it. */
struct ets_growth {
	char *name;
	char *id;
	char *owner_pid;
	char *owner_name; /* registered name of the owner, NULL when none */
	char *owner_call; /* the owner's initial call */
	char *module;     /* test module of the owner by spawn ancestry, NULL when none */
	int64_t rows_before, rows;
	int64_t bytes_before, bytes;
	bool created;      /* did not exist at the before-snapshot (before figures are 0) */
	int64_t bin_bytes; /* refc binaries its rows hold now (bytes, estimated from a sample) */
};

/* Things created during the run, grouped by shape: atoms ("plant_user_#") or
 * persistent_term keys ("{MyApp.Cache, _}"). */
struct key_group {
	char *key;
	int64_t count;
	int64_t bytes; /* heap bytes of the values (persistent_term); 0 for atoms */
	char *example;
	/* refc binaries the values reference (persistent_term; measured in the node, every value up
	 * to the probe's bound); 0 for atoms or an older probe */
	int64_t bin_bytes;
};

/* Modules of one origin loaded during the run and still loaded: how many, and their code bytes
 * (erlang:system_info(loaded)). */
struct code_class {
	int64_t count;
	int64_t bytes;
};

/* Ports opened during the run and still open, by name and owner. */
struct port_group {
	char *name;       /* "cat", "tcp_inet", an executable's path */
	char *owner_pid;  /* an example owner */
	char *owner_name; /* registered name of the owner, NULL when none */
	char *owner_call; /* the owner's initial call */
	char *module;     /* test module of the owner by spawn ancestry, NULL when none */
	int64_t count;
	int64_t os_pid; /* an example's OS process, 0 when none */
};

/* ---- the fine level (gate_probe_alloc.erl; rules/origins.h, rules/rss.h, rules/peak.h) ---- */

/* Size buckets of instrument:allocations() shipped at most (OTP's default is 18). */
#define FINE_HIST_MAX 32

/* Blocks of one {origin, type} (driver_alloc and binary_alloc tag their blocks with the NIF
 * module, driver or "system" that allocated them; every allocator with +Muatags true), counted
 * in doubling size buckets: bucket 0 is [0, hist_start), bucket i [hist_start << (i-1),
 * hist_start << i), the last one open. */
struct alloc_origin {
	char *origin; /* "Elixir.MyApp.Native", "tcp_inet", "system" */
	char *type;   /* "nif_internal", "binary", "drv_binary", ... */
	int64_t hist[FINE_HIST_MAX];
	size_t nhist;
};

/* A stretch of the run between two ExUnit edges where a high-water mark was read: its peak
 * RSS and what ran in it. */
struct peak_window {
	int64_t peak;      /* VmHWM read at its end (reset at its start), bytes */
	int64_t start_rss; /* VmRSS at its start */
	char *modules;     /* test modules that ran in it, "\n"-separated; "" when none */
	char *tests;       /* tests that ran in it, "Module\tname" lines; "" when not read */
};

/* A process whose heap passed the watched size during the run (erlang:system_monitor
 * large_heap, after a GC). */
struct heap_seen {
	char *pid;
	char *label;   /* registered name or initial call; "" when the process had left */
	char *tests;   /* tests running then, "Module\tname" lines; "" when none */
	int64_t bytes; /* heap + old heap blocks, the largest seen */
};

/* A test module (or test, with --per-test) whose RSS grew between its start and finish. */
struct rss_grower {
	char *what;    /* "Elixir.Foo.BarTest", or "Elixir.Foo.BarTest\ttest name" */
	int64_t bytes; /* RSS growth */
};

/* A test whose start and finish were read (--per-test, or tagged max_peak): its peak RSS and
 * its RSS at the start. clean: no other edge was read in between (an async test's window is
 * shared with its neighbours). */
struct test_peak {
	char *what; /* "Elixir.Foo.BarTest\ttest name" */
	int64_t peak, start_rss;
	bool clean;
};

struct fine_level {
	bool have; /* the probe sent the fine level (deep snapshots of a probe that has it) */
	/* the OS's view of the node: /proc/self/status read in the node */
	bool have_rss;
	char *no_rss; /* why not, when !have_rss */
	int64_t rss, hwm;
	/* the BEAM's: carriers of every alloc_util allocator (recon_alloc:memory(allocated)) */
	int64_t allocated;
	/* what it holds from the OS: every segment its mmappers mapped (mseg's cache of freed
	 * carriers included) plus the carriers it took with malloc; RSS beyond it is memory
	 * outside the BEAM's allocators; 0 with !have_mapped (an older probe) */
	bool have_mapped;
	int64_t mapped;
	int64_t cached_segments; /* mseg's cache: freed carriers still mapped (a count) */
	/* instrument:allocations() */
	bool have_origins;
	char *no_origins;
	int64_t hist_start;
	struct alloc_origin *origins;
	size_t norigins;
	/* the after-snapshot only: the run's peak, from the tracker started at the before-mark */
	bool have_peak;
	bool hwm_reset;  /* VmHWM was reset at the before-mark: peak is the run's */
	int64_t peak;    /* VmHWM at the end */
	char *peak_note; /* why the peak is not the run's or not known; NULL when it is */
	int64_t rss_before, allocated_before;
	/* the allocated peak's bound: the sum over allocator instances of each one's highest
	 * carriers size since the node started ("max ever", which erlang:memory() does not reset),
	 * read at the after-mark before gate's GC pass, and the same sum at the before-mark; the
	 * run raised it when the first passes the second */
	bool have_allocated_max;
	int64_t allocated_max, allocated_max_before;
	/* what the fine level cost in the node (microseconds, 0 from an older probe): this
	 * snapshot's /proc read, allocator figures and instrument:allocations(); the after-one's
	 * tracker: its readings at the edges (how many) */
	int64_t cost_proc_us, cost_allocators_us, cost_origins_us;
	int64_t edge_us, edges;
	char *monitor;               /* "gate", or what happened to the node's one system monitor */
	int64_t heap_watch;          /* heaps were reported from this many bytes */
	struct peak_window *windows; /* the largest rise above their start first */
	size_t nwindows;
	struct heap_seen *heaps; /* largest first */
	size_t nheaps;
	struct rss_grower *rss_grew; /* largest first */
	size_t nrss_grew;
	struct test_peak *test_peaks;
	size_t ntest_peaks;
};

/* Frees what f owns and zeroes it; a zeroed f is a no-op. */
void fine_level_clear(struct fine_level *f);

/* ETS tables created during the run and still alive, grouped by name and owner (groups of two or
 * more; the owner and module are an example's). */
struct ets_group {
	char *name;
	char *owner_pid;
	char *owner_name; /* registered name of the owner, NULL when none */
	char *owner_call; /* the owner's initial call */
	char *module;     /* test module of the owner by spawn ancestry, NULL when none */
	int64_t count;
	int64_t bytes;
};

/* One snapshot of a node, taken by the probe. The deep parts (procs, ets, allocs, born) may
 * be empty: a light snapshot has only the figures. */
struct snapshot {
	int64_t mem[MEM_CAT_COUNT]; /* bytes */
	bool have[MEM_CAT_COUNT];   /* the node reported this category */
	int64_t process_count;
	int64_t process_limit;
	int64_t atom_count;
	int64_t atom_limit;
	int64_t ets_count;
	int64_t ets_limit;
	int64_t port_count;
	int64_t port_limit;
	int64_t word_size;
	int64_t schedulers;
	int64_t gc_us;       /* how long the forced GC before it took; 0 when none */
	int64_t taken_at_ms; /* node's os:system_time(millisecond) */
	char otp_release[16];
	char node[128];
	/* persistent_term's values (persistent_term:info() memory): they live in the literal
	 * area (allocator literal_alloc) beside the constants of loaded modules; deep snapshots */
	bool have_persistent_term;
	int64_t persistent_term_memory;

	/* the union of the top-N lists (by memory, mailbox, binary bytes, binary freed by GC) */
	struct proc_info *procs;
	size_t nprocs;
	/* processes alive now that were not at the before-snapshot (after-snapshot only) */
	int64_t born_count;
	int64_t born_memory;
	struct proc_group *born;
	size_t nborn;
	/* every ETS table (up to the probe's cap, largest first; ets_count has them all) */
	struct ets_info *ets;
	size_t nets;
	struct alloc_info *allocs;
	size_t nallocs;
	/* per test module, what it left behind (after-snapshot, when attribution ran) */
	struct module_owner *owners;
	size_t nowners;

	/* persistent_term:info() (deep snapshots) */
	bool have_pterm;
	int64_t pterm_count;
	int64_t pterm_memory; /* bytes */
	/* what grew since the before-snapshot (after-snapshot; have_growth says it was computed) */
	bool have_growth;
	struct proc_growth *grew_procs;
	size_t ngrew_procs;
	struct proc_inside *inside; /* inside the growers that grew most (rules/inside.h) */
	size_t ninside;
	struct ets_growth *grew_ets;
	size_t ngrew_ets;
	struct key_group *pterm_new; /* persistent_term keys created, by shape, most first */
	size_t npterm_new;
	struct key_group *atoms_new; /* atoms created, by shape, most first */
	size_t natoms_new;
	/* modules loaded during the run and still loaded, by where they came from: object files
	 * (the project's, its dependencies', OTP's), the suite's test modules (compiled from its
	 * .exs files), and the rest, created during the run (Module.create, Code.compile_string,
	 * code:load_binary), those by shape, most first; have_code_new: the probe reported them */
	bool have_code_new;
	struct code_class code_disk, code_test, code_created;
	struct key_group *code_groups;
	size_t ncode_groups;
	int64_t ports_opened;     /* ports opened during the run and still open */
	struct port_group *ports; /* those, by name and owner, most first */
	size_t nports;
	/* RSS, carriers, allocation origins, the run's peak */
	struct fine_level fine;
	/* tables created during the run and still alive, by name and owner, most bytes first */
	struct ets_group *ets_groups;
	size_t nets_groups;
	/* the settling before the snapshot (gate_probe_snapshot's settle_ports): the binaries port
	 * drivers kept as input buffers (a lower bound) when it started and when it ended, how long
	 * it waited, and erlang:memory(binary) around the wait (0 when it did not wait) */
	bool have_settle;
	int64_t settle_us;
	int64_t settle_port_buffers, settle_port_buffers_left;
	int64_t settle_binary_before, settle_binary_after;
	/* the sockets' input buffers set aside instead of waited for (the snapshot's binary, system
	 * and total are judged without them): their bytes, how many sockets, whether the sizes are
	 * exact (else a lower bound), and binary as measured */
	int64_t settle_floor; /* what the wait waited for: at most this much left */
	bool have_set_aside;
	bool set_aside_exact;
	int64_t set_aside_bytes, set_aside_sockets, set_aside_binary_raw;
};

/* Frees the deep parts and zeroes the whole struct. */
void snapshot_clear(struct snapshot *s);

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

enum verdict { VERDICT_PASS, VERDICT_FAIL, VERDICT_SKIP };

const char *verdict_name(enum verdict v);

/* How the writers show a finding's figures, said by the rule that makes it (findings_show),
 * so that no writer matches a rule's name: a new rule needs no writer edit. */
enum finding_unit {
	UNIT_BYTES, /* before, after, delta and floor are bytes (the default) */
	UNIT_COUNT  /* they are counts (the ports rule); the other rules give bytes even when
	             * they judge a count (atoms, born processes), which their messages say */
};
enum finding_show {
	/* a row of the erlang:memory table (before, after, grew, judged, %, limit): its subject
	 * names a category; the reports chart it */
	SHOW_CATEGORY = 1u << 0,
	/* failing, it spells its figures out (before, after, delta, limit); without it, its
	 * message says it all */
	SHOW_FIGURES = 1u << 1,
	/* passing, it is a row no one asked about (a table no limit named): the JUnit leaves it
	 * out */
	SHOW_QUIET_PASS = 1u << 2,
	/* judged against the project's own history: failing or warned, it calls for a review
	 * comment */
	SHOW_REGRESSION = 1u << 3,
	/* failing, it is a cluster node that failed or left the run, not a memory rule: the
	 * verdict counts it as a node lost */
	SHOW_NODE_LOST = 1u << 4,
	/* the findings of its rule shown so are one comparison: one JUnit testcase, failing when
	 * one of them fails, its failure listing the rows that failed */
	SHOW_ONE_CASE = 1u << 5,
};

/* One rule applied to one subject (e.g. rule "growth", subject "binary"). */
struct finding {
	char *rule;    /* "growth" */
	char *subject; /* "binary" */
	enum verdict verdict;
	int64_t before;
	int64_t after;
	int64_t delta;  /* the growth the rule judged: after - before unless the rule says */
	int64_t floor;  /* growth below this many bytes never fails */
	double max_pct; /* allowed growth in percent; < 0 when the rule has none */
	char *message;  /* one line: what was measured against what */
	char *detail;   /* more lines for people, e.g. the likely culprits; may be NULL */
	/* what the rule subtracted from after - before to get delta, and why, for people:
	 * "code and literals +3.7 MB (modules the suite loaded), free heap +0.1 MB (...)";
	 * NULL when it judged the raw growth */
	char *explained;
	/* its severity, and where it points a reviewer (rules/tags.h) */
	bool warned;        /* it failed, but its severity is warn: a pass that says so */
	char *culprit;      /* the culprit test module ("Elixir.Foo.BarTest"); NULL when none */
	char *culprit_test; /* and its test, when one test stands out or a tag judged it */
	char *file;         /* where a reviewer looks: the culprit's test file; NULL when none */
	int line;           /* and line, 0 when unknown */
	/* how its figures are shown (findings_show); findings_add sets bytes and no flags */
	enum finding_unit unit;
	unsigned show; /* enum finding_show flags */
	/* one cause, one failing finding, across every rule family
	 * (rules/consolidate.h). The contract for a rule (growth, ets, binary, process, atom,
	 * persistent_term, ports, a structure rule of rules/structure.c, ...): a finding that
	 * names ONE structure fills, when it fails, structure_key (how two findings tell they
	 * name the same thing: "ets:NAME", "proc:<0.1.0>", "atoms", "persistent_term",
	 * "ports", "born", "ets_owner:PID": the tables created during the run that PID owns),
	 * structure (the same for people: "ETS table sessions") and explains (the structure's
	 * growth in bytes in every erlang:memory category it counts in, parents included: an ETS
	 * table's bytes in ets, system and total, the refc binaries its rows hold in binary, system
	 * and total). Nothing else: consolidation then keeps one failing finding per structure and
	 * turns every other finding whose growth those structures explain (the growth, baseline and
	 * trend rows of a category, the tags' limits) into context, saying so in explained_by. */
	char *structure_key;             /* NULL: the finding names no structure */
	char *structure;                 /* for people; NULL when structure_key is */
	int64_t explains[MEM_CAT_COUNT]; /* bytes; 0 where it counts in none */
	/* a finding that judges the summed growth of several categories (the tags' max_growth),
	 * as bits 1u << enum mem_cat; 0: its subject's category when it is one, else none */
	unsigned judges;
	/* set by consolidation on a finding it turned into context: what explains it,
	 * "ETS table sessions (+6.7 MB)"; every writer shows it with the message */
	char *explained_by;
};

struct findings {
	struct finding *items;
	size_t count;
	size_t cap;
};

/* Appends a finding, copying the strings. Returns 0, or -1 on allocation failure. */
int findings_add(struct findings *list, const char *rule, const char *subject, enum verdict verdict,
                 int64_t before, int64_t after, int64_t floor, double max_pct, const char *message);
/* Appends a copy of f, every field, under subject (f's own when NULL). Returns 0, or -1 on
 * allocation failure (nothing appended). */
int findings_add_copy(struct findings *list, const struct finding *f, const char *subject);
/* after - before, saturated at the int64 limits (figures come from outside). */
int64_t finding_raw_delta(const struct finding *f);
/* The rule judged another delta than after - before (e.g. net of code growth). */
bool finding_adjusted(const struct finding *f);
/* Says how the findings from list->items[first] on show their figures: the unit, and show
 * flags added to theirs. A rule calls it on the findings it appended. */
void findings_show(struct findings *list, size_t first, enum finding_unit unit, unsigned show);
/* The rule's name for people: "rule" when it has none. Borrowed. */
const char *finding_rule_name(const struct finding *f);
/* Whether a and b come from the same rule. */
bool finding_same_rule(const struct finding *a, const struct finding *b);
/* One figure of f (its before, after, delta or floor) in f's unit: "13.7 MB", "20 000". */
void finding_figure_format(char *buf, size_t len, const struct finding *f, int64_t v);
void findings_clear(struct findings *list);
size_t findings_failed(const struct findings *list);

/* ---- the gate's verdict: one decision, used by the exit code, the console summary and every
 * report (README "Exit codes") ---- */

enum gate_verdict {
	GATE_PASSED, /* every memory rule and every test passed: exit 0 */
	GATE_FAILED, /* a memory rule or a test failed, a node was lost, the suite did not finish,
	                or bare `mix test` would exit non-zero: exit 1 */
	GATE_ERROR   /* gate could not run: exit 2 */
};

/* What the verdict is made of, counted, so that the verdict line can say why. */
struct verdict_tally {
	bool error;        /* gate could not run (nothing else counts then) */
	size_t rules;      /* failing memory findings; a warning (severity warn) is none */
	size_t tests;      /* failed or invalid tests */
	size_t nodes_lost; /* cluster nodes that failed or left the run */
	bool unfinished;   /* ExUnit never reported the end of the suite */
	bool mix_red;      /* bare `mix test` would exit non-zero (mix_status) */
	int mix_status;    /* that status when the failed tests are not the whole reason; else 0 */
};

/* The tally of one run: findings and tests may be NULL (none were judged or none ran). A
 * failing finding shown SHOW_NODE_LOST counts in nodes_lost, every other failing one in
 * rules. A cluster's console summary adds its other nodes' failing findings to rules and its
 * lost nodes to nodes_lost. */
struct verdict_tally model_verdict_tally(const struct findings *findings,
                                         const struct test_run *tests);
/* ERROR when t->error; FAILED when anything in t counts against the run; else PASSED. */
enum gate_verdict model_verdict(const struct verdict_tally *t);
const char *model_verdict_name(enum gate_verdict v); /* "PASSED", "FAILED", "ERROR" */
/* Why, for a verdict line: "1 memory rule, 2 tests, 1 node lost, the test suite did not finish,
 * mix test exit status 3"; "gate could not run"; "" when it passed. Truncated to len. */
void model_verdict_why(char *buf, size_t len, const struct verdict_tally *t);

/* Formats a count for people, in groups of three digits: "20 000", "-1 234". */
void model_count_format(char *buf, size_t len, int64_t n);
/* Formats a byte count for people: "812 B", "13.7 MB", "-1.2 MB" (SI units). */
void model_bytes_format(char *buf, size_t len, int64_t bytes);

#endif
