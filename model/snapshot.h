/* model/snapshot.h: a snapshot of a node: erlang:memory's categories, its processes,
 * ETS tables, allocators, code and the fine level, and what grew between two */
#ifndef GATE_MODEL_SNAPSHOT_H
#define GATE_MODEL_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ownership: every char * in these structs is owned by the struct that holds it and freed by
 * the matching *_free / *_clear function. *_free(NULL) and *_clear on a zeroed struct are
 * no-ops. Nothing here does I/O. */

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

/* Modules of one origin loaded during the run and still loaded: how many, their code bytes
 * (erlang:system_info(loaded)), and the refc binaries their literals hold (binaries longer
 * than 64 bytes: they count in erlang:memory(binary), held by no process, table or term; read
 * from each module's object code, gate_probe_code.erl). */
struct code_class {
	int64_t count;
	int64_t bytes;
	int64_t lit_bytes;
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
	/* the literals' refc bytes were read (a probe that reads them), and how many of those
	 * modules' object code could not be (compiled in memory while nothing watched) */
	bool have_code_lits;
	int64_t code_lits_unread;
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

#endif
