/* gate/config/config_schema.c: the tables of gate.toml key by key, each key with what it does:
 * one list drives loading, messages, printing and the reference (config_internal.h). [growth]
 * and [growth.<category>] are read by config.c's own code; their keys are listed here for
 * the messages and the reference. The words come from gate.toml's comments and README.md:
 * a key added without its doc fails tests/test_config_reference.c. */
#include <stddef.h>
#include <string.h>

#include "gate/config/config.h"
#include "gate/config/config_internal.h"
#include "gate/config/units.h"
#include "model/snapshot.h"

/* The largest count gate.toml takes, as for sizes. */
#define COUNT_MAX (UNITS_SIZE_LIMIT - 1)

#define IN_CONFIG(field) offsetof(struct config, field)
#define IN_CFG(field) offsetof(struct config, rules.field)
#define IN_TABLE(field) offsetof(struct ets_table_limit, field)
#define IN_LIMIT(field) offsetof(struct growth_limit, field)
#define END                                                                                        \
	{                                                                                          \
		NULL, 0, 0, 0, 0, NULL, NULL, NULL                                                 \
	}

/* ---- the tables with code of their own in config.c, and [node], [output] ---- */

static const struct key_spec node_keys[] = {
        {"mix_env", KEY_STRING, IN_CONFIG(mix_env), 0, 0, "\"test\"", NULL,
         "MIX_ENV of the node gate starts for the project."},
        {"erl_flags", KEY_FLAGS, IN_CONFIG(erl_flags), 0, 0, "\"+S 4\"", NULL,
         "Extra flags for the node's erl, split on blanks, e.g. \"+P 2000000\" when a test "
         "spawns over 262k processes."},
        {"boot_timeout", KEY_DURATION, IN_CONFIG(boot_timeout_ms), 0, 0, "\"5 min\"", NULL,
         "Until the node is up and answers, compiling the project in MIX_ENV included; "
         "--boot-timeout overrides it."},
        {"rpc_timeout", KEY_DURATION, IN_CONFIG(rpc_timeout_ms), 0, 0, "\"2 min\"", NULL,
         "One probe call other than the suite (loading the probe, a GC and snapshot)."},
        {"test_timeout", KEY_DURATION, IN_CONFIG(test_timeout_ms), 0, 0, "\"1 h\"", NULL,
         "The whole `mix test` run; a test that blocks forever ends here with exit 2. "
         "--test-timeout overrides it."},
        {"stop_timeout", KEY_DURATION, IN_CONFIG(stop_timeout_ms), 0, 0, "\"30 s\"", NULL,
         "A graceful stop (init:stop, then SIGTERM) before gate kills the node's process "
         "group."},
        {"settle_timeout", KEY_DURATION_OFF, IN_CONFIG(settle_timeout_ms), 0, 0, "\"off\"", NULL,
         "Each snapshot sets the open sockets' input buffers aside and waits at most this long "
         "for port-driver binaries no socket explains; \"off\": neither, the figures as "
         "measured."},
        END,
};
const struct section config_node_section = {
        "node", node_keys, NULL,
        "How gate starts and stops the project's node (gate run, gate snapshot)."};

static const struct key_spec output_keys[] = {
        {"junit", KEY_STRING, IN_CONFIG(junit), 0, 0, "\"_build/gate/junit.xml\"", NULL,
         "The JUnit report; a relative path is relative to the project. --junit overrides it."},
        END,
};
const struct section config_output_section = {"output", output_keys, NULL,
                                              "Where gate run writes its JUnit report."};

static const struct key_spec growth_keys[] = {
        {"max", KEY_PCT, KEY_NO_FIELD, 0, 0, "\"10 %\"", NULL,
         "The max of every category that sets none of its own in [growth.CATEGORY]; setting it "
         "here also replaces code's wider default."},
        {"floor", KEY_SIZE, KEY_NO_FIELD, 0, 0, "\"1 MB\"", NULL,
         "The floor of every category that sets none of its own; setting it here also replaces "
         "code's wider default."},
        {"live_totals", KEY_BOOL, IN_CFG(growth.live_totals), 0, 0, "false", NULL,
         "The memory model: code judged with its literals, system on the rest of system, total "
         "as context; false: total and system are judged raw, as erlang:memory reports them, "
         "and nothing as context."},
        END,
};
const struct section config_growth_section = {
        "growth", growth_keys, NULL,
        "The growth rule: every erlang:memory category after the run against before it (both "
        "after a forced GC); a category fails when its judged growth is above max percent of "
        "its before-figure AND above floor bytes, so that tiny categories cannot alarm."};

static const struct key_spec category_keys[] = {
        {"enabled", KEY_BOOL, IN_LIMIT(enabled), 0, 0, "false", NULL,
         "Whether the category is judged at all."},
        {"max", KEY_PCT, IN_LIMIT(max_pct), 0, 0, "\"25 %\"", NULL,
         "The category fails when its judged growth is above this percent of its "
         "before-figure AND above floor."},
        {"floor", KEY_SIZE, IN_LIMIT(floor_bytes), 0, 0, "\"4 MB\"", NULL,
         "Growth of at most this many bytes never fails."},
        END,
};
const struct section config_category_section = {
        "growth.CATEGORY", category_keys, NULL,
        "One table per erlang:memory category, e.g. [growth.ets]: its own limits in place of "
        "[growth]'s; the categories and their defaults are below."};

const char *const config_category_docs[MEM_CAT_COUNT] = {
        [MEM_TOTAL] = "Context: its growth less code and literals, the free heap space the "
                      "allocators keep and every failing leaf; fails only for growth spread "
                      "over leaves that none of them judges a failure.",
        [MEM_PROCESSES] = "The process heaps as allocated: a busy suite leaves carriers there, "
                          "so processes_used is judged instead.",
        [MEM_PROCESSES_USED] = "The live process heaps.",
        [MEM_SYSTEM] = "The rest of system: less code and literals, ets, binary and atom, "
                       "which have rows of their own (raw with live_totals = false).",
        [MEM_ATOM] = "The atom table as allocated: it grows in chunks, so atom_used is judged "
                     "instead.",
        [MEM_ATOM_USED] = "The atoms in use, as erlang:memory reports them.",
        [MEM_BINARY] = "Refc binaries, as erlang:memory reports them.",
        [MEM_CODE] = "Code and its literals (less persistent_term's values), net of what "
                     "loading the suite's own modules explains: loading test modules is "
                     "expected, hence the wider limit.",
        [MEM_ETS] = "ETS tables, as erlang:memory reports them.",
};

/* ---- the tables below [growth] ---- */

static const struct key_spec ets_keys[] = {
        {"max_total", KEY_SIZE_OFF, IN_CFG(ets.max_total), 0, 0, "\"64 MB\"", NULL,
         "erlang:memory(ets) after the run, all tables together; off by default: [growth.ets] "
         "judges its growth and the checks below name the table."},
        {"max_left_alive", KEY_COUNT_OFF, IN_CFG(ets.max_left_alive), 0, COUNT_MAX, "0", NULL,
         "How many tables created during the run and still alive after it may hold at least "
         "left_alive_floor each; the tables one process owns count as one, judged on their "
         "total."},
        {"left_alive_floor", KEY_SIZE, IN_CFG(ets.left_alive_floor), 0, 0, "\"1 MB\"", NULL,
         "Tables left alive below this (caches and registries created on first use) never "
         "count."},
        END,
};
const struct key_spec config_ets_table_keys[] = {
        {"name", KEY_GLOB, IN_TABLE(name), 0, 0, "\"corpus_*\"", NULL,
         "A glob (fnmatch: `*`, `?`, `[a-z]`) on the table's name (unnamed tables have a name "
         "too); "
         "two entries may not have the same name."},
        {"max_bytes", KEY_SIZE_OFF, IN_TABLE(max_bytes), 0, 0, "\"2 MB\"", NULL,
         "The table's memory after the run."},
        {"max_size", KEY_COUNT_OFF, IN_TABLE(max_size), 0, COUNT_MAX, "100000", NULL,
         "The table's rows after the run."},
        {"max_growth", KEY_PCT_OFF, IN_TABLE(max_growth_pct), 0, 0, "\"50 %\"", NULL,
         "Percent over the same table in the before-snapshot; a table created during the run "
         "grows from nothing and always exceeds it: give it max_bytes instead."},
        END,
};
const struct section config_ets_table_section = {
        "ets.table", config_ets_table_keys, NULL,
        "Limits for ETS tables by name, one [[ets.table]] entry each, none by default: every "
        "entry whose glob matches applies, and an entry sets at least one limit."};

static const struct key_spec binary_keys[] = {
        {"max_refs_per_process", KEY_COUNT_OFF, IN_CFG(binary.max_refs_per_process), 0, COUNT_MAX,
         "50000", NULL, "Refc binaries one process may still reference after GC."},
        {"max_bytes_per_process", KEY_SIZE_OFF, IN_CFG(binary.max_bytes_per_process), 0, 0,
         "\"10 MB\"", NULL, "Bytes of refc binaries one process may still reference after GC."},
        END,
};
static const struct key_spec process_keys[] = {
        {"max_born", KEY_COUNT_OFF, IN_CFG(process.max_born), 0, COUNT_MAX, "100", NULL,
         "Processes born during the run and still alive after it (workers nobody stops); the "
         "failure names the largest groups."},
        {"max_mailbox", KEY_COUNT_OFF, IN_CFG(process.max_mailbox), 0, COUNT_MAX, "10000", NULL,
         "Messages waiting in one process's mailbox after the run (a consumer that falls "
         "behind or never reads)."},
        {"max_memory", KEY_SIZE_OFF, IN_CFG(process.max_memory), 0, 0, "\"100 MB\"", NULL,
         "The memory of one process after GC (heap, stack, mailbox)."},
        /* the fine level: the largest heap any process reaches (rules/fine.h) */
        {"max_heap", KEY_SIZE_OFF, IN_CFG(fine.max_heap), 0, 0, "\"200 MB\"", NULL,
         "The largest heap any process reached during the run (the node's system monitor); "
         "off: heaps from 64 MB on are reported as context."},
        END,
};
static const struct key_spec atom_keys[] = {
        {"max_growth", KEY_COUNT_OFF, IN_CFG(atom.max_growth), 0, COUNT_MAX, "10000", NULL,
         "Atoms the run may add, on top of per_test for every test of the run."},
        {"per_test", KEY_COUNT, IN_CFG(atom.per_test), 0, COUNT_MAX, "5", NULL,
         "Atoms each test of the run may add (its name is one)."},
        {"max_usage", KEY_SHARE_OFF, IN_CFG(atom.max_usage_pct), 0, 0, "\"80 %\"", NULL,
         "atom_count of atom_limit after the run (the node crashes when the table is full)."},
        END,
};
static const struct key_spec modules_keys[] = {
        {"max_created", KEY_COUNT_OFF, IN_CFG(modules.max_created), 0, COUNT_MAX, "200", NULL,
         "Modules created during the run (Module.create, Code.compile_string) and still loaded "
         "at its end; off: the code row judges them with the rest."},
        {"floor", KEY_SIZE, IN_CFG(modules.floor_bytes), 0, 0, "\"1 MB\"", NULL,
         "Those modules fail only when their code and literals are above this."},
        END,
};
static const struct key_spec allocator_keys[] = {
        {"max_fragmentation", KEY_SHARE_OFF, IN_CFG(allocator.max_fragmentation_pct), 0, 0,
         "\"75 %\"", NULL,
         "1 - blocks/carriers of an allocator type, above which it fails when it also wastes "
         "more than waste_floor."},
        {"waste_floor", KEY_SIZE, IN_CFG(allocator.waste_floor), 0, 0, "\"64 MB\"", NULL,
         "Carriers less blocks a type must waste to fail."},
        END,
};
static const struct key_spec baseline_keys[] = {
        {"path", KEY_PATH, IN_CFG(baseline.path), 0, 0, "\".gate/baseline.json\"",
         BASELINE_DEFAULT_PATH,
         "The baseline file, relative to the project's directory (gate run -C DIR)."},
        {"ref", KEY_REF, IN_CFG(baseline.ref), 0, 0, "\"origin/main\"", BASELINE_DEFAULT_REF,
         "Where the baseline is read from: a ref or a shorthand, HEAD when it does not exist; "
         "\"worktree\" reads the file in the working tree. --baseline-ref overrides it."},
        {"notes_ref", KEY_NOTES_REF, IN_CFG(baseline.notes_ref), 0, 0, "\"refs/notes/gate\"",
         BASELINE_DEFAULT_NOTES_REF, "The notes ref that holds the history of runs."},
        {"require", KEY_BOOL, IN_CFG(baseline.require), 0, 0, "true", NULL,
         "A missing baseline fails the gate instead of skipping the baseline rule (as "
         "--require-baseline)."},
        {"skip_ci", KEY_BOOL, IN_CFG(baseline.skip_ci), 0, 0, "true", NULL,
         "Add \"[skip ci]\" to the message of the commit that updates the baseline, so that CI "
         "does not run again for it."},
        {"max", KEY_PCT, IN_CFG(baseline.max_pct), 0, 0, "\"20 %\"", NULL,
         "A figure fails when it is more than this above its baseline AND more than floor."},
        {"floor", KEY_SIZE, IN_CFG(baseline.floor_bytes), 0, 0, "\"1 MB\"", NULL,
         "Growth over the baseline of at most this many bytes never fails."},
        {"trend_window", KEY_INT, IN_CFG(baseline.trend_window), 2, 10000, "10", NULL,
         "The trend rule: the mean and standard deviation of the last this many history "
         "entries."},
        {"trend_sigma", KEY_NUMBER, IN_CFG(baseline.trend_sigma), 0, 0, "3.0", NULL,
         "A figure fails above mean + max(trend_sigma x deviation, trend_min of the mean)."},
        {"trend_min", KEY_PCT, IN_CFG(baseline.trend_min_pct), 0, 0, "\"10 %\"", NULL,
         "The least margin over the mean, in percent of the mean."},
        END,
};
static const struct key_spec attribution_keys[] = {
        {"per_test", KEY_BOOL, IN_CFG(attribution.per_test), 0, 0, "true", NULL,
         "The growth of every test, not only of every test module, as gate run --per-test: "
         "slower; the JUnit testcases then carry their figures."},
        END,
};
static const struct key_spec ports_keys[] = {
        {"max_opened", KEY_COUNT_OFF, IN_CFG(ports.max_opened), 0, COUNT_MAX, "50", NULL,
         "Ports (sockets, spawned OS programs, drivers) opened during the run and still open "
         "after it."},
        END,
};
static const struct key_spec pterm_keys[] = {
        {"max_entries", KEY_COUNT_OFF, IN_CFG(pterm.max_entries), 0, COUNT_MAX, "1000", NULL,
         "How many entries the run may add (an entry never erased stays in the node)."},
        {"max_bytes", KEY_SIZE_OFF, IN_CFG(pterm.max_bytes), 0, 0, "\"1 MB\"", NULL,
         "How much persistent_term's memory may grow."},
        END,
};
/* [run]: how gate run runs the suite; --repeat overrides repeat */
static const struct key_spec run_keys[] = {
        {"repeat", KEY_INT, IN_CONFIG(repeat), 1, REPEAT_MAX, "3", NULL,
         "Runs of the suite in the same node: run 1 is the warm-up, and the rules judge the "
         "smallest growth of runs 2..N, counted N-1 times; gate run --repeat overrides it."},
        {"runner", KEY_STRING, IN_CONFIG(runner), 0, 0, "\"eunit\"", NULL,
         "Which tests run: \"auto\" (a Mix project: mix test; a rebar3 project: EUnit, then "
         "Common Test when it has suites, as rebar3 do eunit, ct), \"mix\", \"eunit\", "
         "\"ct\" or \"eunit,ct\"; gate run --runner overrides it."},
        {"confirm", KEY_BOOL, IN_CONFIG(confirm), 0, 0, "true", NULL,
         "After a failing memory verdict whose findings name one culprit test module, run "
         "it alone (its test file; in a rebar3 project its suite or EUnit module) in a fresh "
         "node, --repeat 3, and say in the finding whether it grows the same structure alone; "
         "gate run --confirm sets it. The verdict stays the first run's."},
        {"confirm_timeout", KEY_DURATION, IN_CONFIG(confirm_timeout_ms), 0, 0, "\"10 min\"", NULL,
         "The limit of that confirming run, its node's boot included; past it, it is "
         "stopped and the finding says so."},
        END,
};

/* [structure]: each structure judged against its own before-figure */
static const struct key_spec structure_keys[] = {
        {"process_floor", KEY_SIZE_OFF, IN_CFG(structure.process_floor), 0, 0, "\"1 MB\"", NULL,
         "A process (its memory after GC plus the refc binaries it holds) fails when it grew by "
         "more than this AND by more than max_growth."},
        {"table_floor", KEY_SIZE_OFF, IN_CFG(structure.table_floor), 0, 0, "\"4 MB\"", NULL,
         "The same for an ETS table's bytes."},
        {"group_floor", KEY_SIZE_OFF, IN_CFG(structure.group_floor), 0, 0, "\"4 MB\"", NULL,
         "The same for a group of processes born during the run and still alive (by initial "
         "call or registered name)."},
        {"max_growth", KEY_PCT_OFF, IN_CFG(structure.max_growth_pct), 0, 0, "\"100 %\"", NULL,
         "The growth must also exceed this of the structure's own before-figure (one born "
         "during the run starts from 0); off: the floor alone."},
        {"repeat_bytes", KEY_SIZE_OFF, IN_CFG(structure.repeat_bytes), 0, 0, "\"4 kB\"", NULL,
         "With gate run --repeat N (N >= 3): a table or process that grew by at least this in "
         "every run after the warm-up, by similar amounts, is a leak whatever its size."},
        {"repeat_rows", KEY_COUNT_OFF, IN_CFG(structure.repeat_rows), 0, COUNT_MAX, "10", NULL,
         "The same in rows of a table."},
        {"repeat_count", KEY_COUNT_OFF, IN_CFG(structure.repeat_count), 0, COUNT_MAX, "1", NULL,
         "The same in processes of a group or persistent_term keys of a shape."},
        {"repeat_spread", KEY_NUMBER, IN_CFG(structure.repeat_spread), 1, 1000, "4", NULL,
         "Similar amounts: the largest growth of runs 2..N at most this many times the "
         "smallest."},
        END,
};

/* [severity] RULE = "error" | "warn"; [attention] the reviewer's budget */
#define IN_SEV(r) offsetof(struct config, rules.severity.warn[r])
static const struct key_spec severity_keys[] = {
        {"growth", KEY_SEVERITY, IN_SEV(SEVERITY_GROWTH), 0, 0, "\"warn\"", NULL,
         "The growth rule ([growth])."},
        {"ets", KEY_SEVERITY, IN_SEV(SEVERITY_ETS), 0, 0, "\"warn\"", NULL,
         "The ETS rule ([ets], [[ets.table]])."},
        {"binary", KEY_SEVERITY, IN_SEV(SEVERITY_BINARY), 0, 0, "\"warn\"", NULL,
         "The binary rule ([binary])."},
        {"process", KEY_SEVERITY, IN_SEV(SEVERITY_PROCESS), 0, 0, "\"warn\"", NULL,
         "The process rule ([process])."},
        {"atom", KEY_SEVERITY, IN_SEV(SEVERITY_ATOM), 0, 0, "\"warn\"", NULL,
         "The atom rule ([atom])."},
        {"allocator", KEY_SEVERITY, IN_SEV(SEVERITY_ALLOCATOR), 0, 0, "\"warn\"", NULL,
         "The allocator rule ([allocator])."},
        {"ports", KEY_SEVERITY, IN_SEV(SEVERITY_PORTS), 0, 0, "\"warn\"", NULL,
         "The ports rule ([ports])."},
        {"persistent_term", KEY_SEVERITY, IN_SEV(SEVERITY_PTERM), 0, 0, "\"warn\"", NULL,
         "The persistent_term rule ([persistent_term])."},
        {"baseline", KEY_SEVERITY, IN_SEV(SEVERITY_BASELINE), 0, 0, "\"warn\"", NULL,
         "The comparison with the baseline ([baseline] max, floor)."},
        {"trend", KEY_SEVERITY, IN_SEV(SEVERITY_TREND), 0, 0, "\"warn\"", NULL,
         "The trend of the history ([baseline] trend_window, trend_sigma, trend_min)."},
        {"tag", KEY_SEVERITY, IN_SEV(SEVERITY_TAG), 0, 0, "\"warn\"", NULL,
         "The limits written in the tests (`@tag gate: [max_growth: \"1 MB\"]`)."},
        {"modules", KEY_SEVERITY, IN_SEV(SEVERITY_MODULES), 0, 0, "\"warn\"", NULL,
         "The modules rule ([modules])."},
        END,
};
/* the fine level (rules/fine.h) */
static const struct key_spec rss_keys[] = {
        {"max_unaccounted", KEY_SIZE_OFF, IN_CFG(fine.rss_max_unaccounted), 0, 0, "\"32 MB\"", NULL,
         "RSS growth beyond what the BEAM's allocators hold from the OS (a NIF's malloc, a "
         "driver's); off: reported, not judged; a project with NIFs sets a limit."},
        END,
};
static const struct key_spec peak_keys[] = {
        {"max", KEY_SIZE_OFF, IN_CFG(fine.peak_max), 0, 0, "\"2 GB\"", NULL,
         "The node's peak RSS during the run must stay under this; off: reported, not judged "
         "(a peak depends on the machine and the suite's concurrency)."},
        END,
};
static const struct key_spec attention_keys[] = {
        {"annotations", KEY_INT, IN_CONFIG(annotations), 1, 50, "8", NULL,
         "GitHub annotations gate writes at most: failed tests first, then failing memory "
         "findings, then warnings; the last says what was left out."},
        END,
};

const struct section config_sections[] = {
        {"ets", ets_keys, "table",
         "The ETS rule: tables by name ([[ets.table]]) and tables the run left behind."},
        {"binary", binary_keys, NULL,
         "The binary rule: refc binaries one process still references after GC (a process "
         "that keeps a small slice of a large binary pins all of it)."},
        {"process", process_keys, NULL,
         "The process rule: processes left alive, flooded mailboxes, large processes and "
         "heaps."},
        {"atom", atom_keys, NULL,
         "The atom rule: atoms are never collected and the atom table has a fixed size, so "
         "every atom a run adds stays."},
        {"modules", modules_keys, NULL,
         "The modules rule: code is never collected; modules created during the run and still "
         "loaded at its end are judged here."},
        {"allocator", allocator_keys, NULL,
         "The allocator rule, per allocator type summed over instances: memory taken from the "
         "OS (carriers) and not in use (blocks)."},
        {"baseline", baseline_keys, NULL,
         "Baselines: the main branch's after-snapshot figures committed to the repository, and "
         "a history of runs in git notes for the trend."},
        {"attribution", attribution_keys, NULL,
         "Which test modules and tests grew the memory, named in a failing rule's message, the "
         "console and the JUnit report."},
        {"ports", ports_keys, NULL,
         "The ports rule: a port left open holds a file descriptor, and for a program an OS "
         "process, until its owner exits."},
        {"persistent_term", pterm_keys, NULL,
         "The persistent_term rule: entries are never collected, and every put or erase of an "
         "existing key makes the node scan every process."},
        {"run", run_keys, NULL, "How gate run runs the suite: leak or warm-up?"},
        {"severity", severity_keys, NULL,
         "Each rule \"error\" (fails the gate) or \"warn\" (reported everywhere, never failing "
         "the gate); gate run --warn-only makes every memory finding a warning at once."},
        {"attention", attention_keys, NULL,
         "A reviewer's attention: GitHub shows 10 error annotations per step."},
        {"rss", rss_keys, NULL,
         "Memory outside the BEAM's allocators: the node's OS RSS against what the BEAM holds "
         "from the OS."},
        {"peak", peak_keys, NULL,
         "The run's peak: the node's OS high-water mark (VmHWM), placed in the test module it "
         "happened in; always reported."},
        {"structure", structure_keys, NULL,
         "Each structure (a process, an ETS table, a group of processes born during the run) "
         "judged against its own before-figure, whatever its category did in total."},
        {NULL, NULL, NULL, NULL},
};

const struct key_spec *config_spec_find(const struct key_spec *keys, const char *key)
{
	for (; keys->key; keys++)
		if (strcmp(keys->key, key) == 0)
			return keys;
	return NULL;
}

/* The valid keys of a section, NULL-terminated, for suggestions and lists. */
void config_spec_names(const struct key_spec *keys, const char *extra, const char **out, size_t n)
{
	size_t i = 0;

	for (; keys->key && i + 2 < n; keys++)
		out[i++] = keys->key;
	if (extra)
		out[i++] = extra;
	out[i] = NULL;
}
