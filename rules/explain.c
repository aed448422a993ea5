/* rules/explain.c: each rule's explanation (explain.h). The causes and fixes are the ones
 * BEAM teams meet most; a finding's own text says which structure and which test. */
#include "rules/explain.h"

#include <string.h>

static const struct rule_explain entries[] = {
        {"growth", "a memory category grew more than its limit over the suite",
         "The node's erlang:memory categories (total, processes_used, binary, ets, code, "
         "system, atom_used) are read after a full GC before and after the suite. What a suite "
         "legitimately adds (the code it loaded, the atoms of its test names, free heap the "
         "allocators keep) is subtracted and said; the rest is judged against a limit: a "
         "percentage of the category's size before the suite, above a floor in bytes. The "
         "finding names the structure that grew (a table, a process, a port) and the test "
         "module that grew it.",
         "- a cache, registry or ETS table that only gains entries (no TTL, no size bound)\n"
         "- processes started by tests and never stopped (their heaps stay)\n"
         "- large binaries kept alive by a small slice of them, or by a process that never "
         "collects\n"
         "- a process whose state accumulates per request or per test (a list, a map, a "
         "queue)",
         "- bound the structure: expire entries (a TTL sweep, :ets.select_delete), cap its "
         "size, or drop the cache in test env\n"
         "- stop what a test starts: start_supervised!/1 instead of start_link/1, on_exit/1 "
         "for global state\n"
         "- copy what you keep out of a large binary (:binary.copy/1), hibernate idle "
         "processes holding binaries\n"
         "- if the growth is expected (a warm-up, a deliberately large fixture), raise that "
         "category's limit for the project in gate.toml, or for one test with "
         "@tag gate: [max_growth: \"5 MB\"]",
         "[growth] max, floor; [growth.CATEGORY] max, floor (e.g. [growth.ets])"},
        {"ets", "an ETS table grew past its limit, or tables were left alive",
         "Every ETS table is read before and after the suite: its rows, its bytes and its "
         "owner. A table fails when it grows past its own limit ([[ets.table]], by name), when "
         "all tables together exceed [ets] max_total, or when tables created during the run "
         "are still alive at its end above a floor (their owner never died).",
         "- a table used as a cache with no eviction: every test adds keys that are never "
         "deleted\n"
         "- a table created per test (or per request) by a long-lived process that owns it, "
         "so it is never freed\n"
         "- counters or dedup tables keyed by something unbounded (ids, timestamps, "
         "requests)",
         "- delete what you insert: a TTL sweep (:ets.select_delete/2 on a timestamp), a "
         "bounded size (evict the oldest), or a fresh table per test owned by the test "
         "process\n"
         "- let the table die with its owner: create it in a process the test supervises "
         "(start_supervised!/1), not in a global one\n"
         "- reset global tables between tests (:ets.delete_all_objects/1 in setup or "
         "on_exit/1)",
         "[ets] max_total, max_left_alive, left_alive_floor; [[ets.table]] name, max_bytes, "
         "max_size, max_growth"},
        {"binary", "a process holds too many or too large reference-counted binaries",
         "Binaries over 64 bytes live off-heap and are reference-counted: they are freed "
         "only when every process holding a reference has garbage-collected it. The rule "
         "reads, per process, how many such binaries it references and their bytes after "
         "the suite, and fails when one process holds more than the limits.",
         "- a process keeps a small part (a sub-binary, a match) of a large binary, which "
         "pins the whole large binary\n"
         "- a long-lived process (a router, a logger handler, a GenServer) touches many "
         "binaries but allocates little itself, so it rarely collects and never lets go\n"
         "- a cache or state that keeps whole request bodies or file contents",
         "- copy the part you keep: :binary.copy/1 turns a slice into a binary of its own\n"
         "- hibernate idle processes (:hibernate in a GenServer reply, or Process.hibernate/3) "
         "or call :erlang.garbage_collect/1 after handling large payloads\n"
         "- do not keep whole payloads in state: keep what you need, decoded",
         "[binary] max_refs_per_process, max_bytes_per_process"},
        {"process", "processes were left alive, a mailbox grew, or a process grew too large",
         "Processes born during the suite and still alive at its end are counted and grouped "
         "by what started them (initial call, supervisor, the test that spawned them; a spawned "
         "fun by the function that defines it, with its file and line, when the process still "
         "shows the fun's frame); the "
         "rule fails above [process] max_born. It also fails on a process whose message "
         "queue is longer than max_mailbox, or whose memory is above max_memory.",
         "- processes spawned by tests (spawn, Task.start, Agent.start, GenServer.start) with "
         "no link to the test and no one to stop them\n"
         "- a dynamic supervisor or registry that gains a child per test and never loses it\n"
         "- a mailbox that falls behind: a producer faster than its consumer, or messages "
         "nobody matches (a receive that ignores them)\n"
         "- a process whose state grows (see the finding's inside-the-process part)",
         "- start_supervised!/1 in tests: ExUnit stops the process when the test ends\n"
         "- link what you spawn (Task.async/await, spawn_link) or stop it in on_exit/1\n"
         "- for mailboxes: backpressure (GenServer.call instead of cast, GenStage, bounded "
         "queues), and a catch-all clause that drops or logs unexpected messages\n"
         "- bound the state: prune old entries, move large data to ETS with eviction",
         "[process] max_born, max_mailbox, max_memory"},
        {"atom", "the atom table grew more than the limit",
         "Atoms are never garbage-collected: the table only grows, up to a fixed limit at "
         "which the node crashes. The rule counts the atoms created during the suite, allows "
         "a few per test (their names become atoms), and fails above [atom] max_growth or "
         "when the table is fuller than max_usage of its limit.",
         "- String.to_atom/1 or :erlang.binary_to_atom/2 on input (request parameters, JSON "
         "keys, file names, user data)\n"
         "- Jason.decode!(..., keys: :atoms) on data that is not a fixed schema\n"
         "- generated names: a registered name or a module per request",
         "- String.to_existing_atom/1 (fails on unknown input) or keep the keys as strings\n"
         "- keys: :atoms! only for known schemas, else keys as strings\n"
         "- register processes through Registry with string or tuple keys, not new atoms",
         "[atom] max_growth, per_test, max_usage"},
        {"modules", "modules created during the run were never purged",
         "Code loaded from .beam files (the project, its dependencies) and the suite's own "
         "modules (compiled from its files: test modules, modules defined inside test bodies, "
         "sources under test_paths, and what libraries generate for them as they compile) "
         "are what a suite does, and are said as context, with the refc binaries their "
         "literals hold. Modules created during the run by the application's code from no "
         "object file (Module.create/3, Code.compile_string/2, :code.load_binary/3 of "
         "generated code) are counted by shape (Tpl.* x 1 500) with their code and literals, "
         "and fail above [modules] max_created and the floor.",
         "- a library that compiles a module per template, query or schema at run time and "
         "keeps it\n"
         "- tests that define modules dynamically in a loop",
         "- compile once and reuse (a module per kind, not per input), or keep the generated "
         "data in ETS or :persistent_term instead of code\n"
         "- purge what you create when done: :code.purge/1 and :code.delete/1",
         "[modules] max_created, floor"},
        {"allocator", "an allocator is fragmented: memory held but not used",
         "The BEAM's allocators hold memory in carriers; a carrier is returned to the OS only "
         "when it is empty. The rule reads each allocator's carriers against its blocks after "
         "the suite and fails when one wastes more than max_fragmentation of what it holds, "
         "above waste_floor.",
         "- many short-lived large allocations mixed with a few long-lived ones, which keep "
         "mostly empty carriers alive\n"
         "- a burst of memory (a big import, a large batch) whose survivors stay scattered",
         "- process large work in bounded batches (Stream.chunk_every/2) so that the peak, "
         "and the carriers it leaves, stay small\n"
         "- keep long-lived data in few places created early (ETS, :persistent_term)\n"
         "- tune the allocator only when measured: +MBas aobf, +MBlmbcs (erl flags)",
         "[allocator] max_fragmentation, waste_floor"},
        {"ports", "ports (sockets, files, external programs) were left open",
         "Ports opened during the suite and still open at its end are counted and named by "
         "kind and owner; the rule fails above [ports] max_opened.",
         "- files opened with File.open/2 and never closed\n"
         "- sockets or HTTP connections opened by tests and never closed, or a connection "
         "pool that grows per test\n"
         "- external programs started with Port.open/2 or System.cmd-like wrappers and left "
         "running",
         "- File.open/3 with a function, or File.close/1 in an after block\n"
         "- close connections in on_exit/1, or own them in a process the test supervises\n"
         "- give pools a fixed size in test configuration",
         "[ports] max_opened"},
        {"persistent_term", "persistent_term gained too many keys or bytes",
         ":persistent_term is for data written once and read often: every update or erase "
         "makes the node scan every process (a global GC). The rule counts the keys and bytes "
         "added during the suite and fails above its limits.",
         "- :persistent_term.put/2 used as a cache or a per-request store\n"
         "- a key per test, per tenant or per request",
         "- keep :persistent_term for configuration set at start; use ETS for anything that "
         "changes or grows\n"
         "- one key holding a map, written once, instead of many keys",
         "[persistent_term] max_entries, max_bytes"},
        {"structure", "one process, table or group grew against its own past",
         "Each structure (a process, an ETS table, a group of processes started the same way) "
         "is judged against its own figure before the suite, not against the whole node: it "
         "fails when it grew more than [structure] max_growth above its floor. With --repeat, "
         "a structure that grows in every run by about the same amount fails as growth that "
         "continues.",
         "- a GenServer whose state gains an entry per call and never loses it\n"
         "- a table that grows a little in each test\n"
         "- a pool or supervisor whose children accumulate",
         "- bound or prune the structure's contents (the finding says which field or table "
         "grew, and by how many members)\n"
         "- reset the structure between tests when it is test-only state",
         "[structure] process_floor, table_floor, group_floor, max_growth, repeat_bytes, "
         "repeat_rows, repeat_count, repeat_spread"},
        {"baseline", "the run grew more than the baseline of the main branch allows",
         "A baseline is the figures of a passing run on the main branch, kept in the "
         "repository (or in git notes). A run is compared with it: a category more than "
         "[baseline] max above the baseline's figure, above the floor, fails. This catches "
         "growth that creeps in over many merges, each under the per-run limits.",
         "- a change made the suite hold more memory than main does (a new cache, a larger "
         "fixture, a dependency upgrade)\n"
         "- the baseline is old: the suite grew legitimately since",
         "- find the change with the finding's category and culprit, as for growth\n"
         "- if the growth is intended, take a new baseline on main (gate baseline, or gate "
         "run --update-baseline on the main branch)",
         "[baseline] max, floor, ref, require, path"},
        {"trend", "the baseline history shows a category rising",
         "The baselines of the last runs on main form a history; a category fails when this "
         "run's figure is above the mean of the last trend_window entries by more than "
         "trend_sigma standard deviations, or trend_min of the mean if that is larger: slow "
         "creep no single merge shows.",
         "- many small additions, each within the limits, that add up\n"
         "- a change in the environment (Elixir, OTP or a dependency version)",
         "- read the history (gate baseline history) to find where the rise began\n"
         "- treat it as growth: find the structure that grew across those commits",
         "[baseline] trend_window, trend_sigma, trend_min"},
        {"rss", "the OS memory (RSS) grew more than the BEAM's allocators explain",
         "RSS is compared with what the BEAM's allocators hold; growth of RSS that no "
         "allocator accounts for, above [rss] max_unaccounted, points outside the BEAM's "
         "own memory: a NIF, a port program's shared memory, or memory mapped by a library.",
         "- a NIF (a native library) that allocates with malloc and never frees\n"
         "- memory-mapped files kept open",
         "- check the NIF's resources are released (their destructors run when the Erlang "
         "term is collected)\n"
         "- close or unmap files when done",
         "[rss] max_unaccounted"},
        {"peak", "the run's memory peak was above the limit",
         "A peak is memory used for a moment and released: it does not leak, but it sizes "
         "the machine the application needs. The rule reads the peak RSS and the "
         "allocators' peak during the run, names the test module it fell in, and fails above "
         "[peak] max (or a test's own @tag gate: [max_peak: ...]).",
         "- loading a whole file, result set or response into memory at once\n"
         "- Enum over a large collection building intermediate lists\n"
         "- many concurrent tasks each holding a large working set",
         "- stream: Stream, File.stream!/3, Repo.stream/2, chunked HTTP bodies\n"
         "- bounded batches (Stream.chunk_every/2, Task.async_stream/3 with max_concurrency)\n"
         "- if the peak is expected, raise [peak] max or tag the test with its own max_peak",
         "[peak] max; @tag gate: [max_peak: \"100 MB\"]"},
        {"heap", "a process's heap grew past the limit",
         "The largest heap any process reaches during the run is read; a process whose heap "
         "exceeds [process] max_heap fails. A large heap is copied at every GC, so it is "
         "slow as well as large.",
         "- a process that builds a large term in its state or on its stack (a big list, "
         "a deep accumulation)\n"
         "- a GenServer used as a data store",
         "- keep large data in ETS (off the process heap) or stream it\n"
         "- split the work over processes, each with a small heap",
         "[process] max_heap"},
        {"tag", "a test grew more than the limit its own tag gives",
         "A test or module can carry its own limits as an ExUnit tag (@tag gate: "
         "[max_growth: \"1 MB\", max_processes: 0, max_ets_tables: 0]). Tagged tests are "
         "measured on their own, at their start and finish, and each is a testcase of its own "
         "at its file and line.",
         "- the test leaves behind what the tag says it must not: processes, tables or "
         "memory\n"
         "- the limit is tighter than what the test legitimately keeps",
         "- stop what the test starts (start_supervised!/1, on_exit/1)\n"
         "- loosen the tag if the growth is expected, or set severity: :warn while you "
         "investigate",
         "@tag gate: [max_growth, max_processes, max_ets_tables, max_peak, severity]"},
        {"soak", "memory rose steadily while a workload ran",
         "With --sample, light snapshots are taken at an interval during the run; a workload "
         "of at least a minute and 20 samples is judged by the slope of each category (the "
         "median slope over all pairs of samples, so the GC's saw-tooth does not move it). "
         "It fails when the rise is above the category's growth limits and the last "
         "quarter's median is above the first quarter's by more than the floor.",
         "- a leak that only shows under sustained load: caches, mailboxes, or sessions "
         "that accumulate per request",
         "- find the structure with gate watch (its drill-down) or a snapshot during the "
         "load, then bound it as for growth",
         "[growth] and [growth.CATEGORY] limits"},
        {"node", "a node of the cluster failed or left the run",
         "With --cluster, every node is snapshotted and judged; a node that goes down or "
         "stops answering during the run is an error testcase of its own.",
         "- the node crashed (out of memory, a supervisor gave up) or was stopped\n"
         "- the network between the nodes broke",
         "- read the node's own log for why it stopped\n"
         "- run the suite against that node alone to see its memory",
         "none: a lost node always fails"},
};

const struct rule_explain *rule_explain_find(const char *rule)
{
	for (size_t i = 0; rule && i < sizeof(entries) / sizeof(entries[0]); i++)
		if (strcmp(entries[i].rule, rule) == 0)
			return &entries[i];
	return NULL;
}

const struct rule_explain *rule_explain_for(const char *rule, const char *subject)
{
	static const char *const by_category[][2] = {
	        {"ets", "ets"},           {"binary", "binary"},  {"processes_used", "process"},
	        {"processes", "process"}, {"atom_used", "atom"}, {"code", "modules"},
	};
	if (rule && subject && strcmp(rule, "growth") == 0)
		for (size_t i = 0; i < sizeof(by_category) / sizeof(by_category[0]); i++)
			if (strcmp(subject, by_category[i][0]) == 0)
				return rule_explain_find(by_category[i][1]);
	return rule_explain_find(rule);
}

const struct rule_explain *rule_explain_all(size_t *n)
{
	*n = sizeof(entries) / sizeof(entries[0]);
	return entries;
}
