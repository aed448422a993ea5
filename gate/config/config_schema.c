/* gate/config/config_schema.c: the tables of gate.toml below [growth], key by key: one list
 * drives loading, messages and printing (config_internal.h). */
#include <stddef.h>
#include <string.h>

#include "gate/config/config.h"
#include "gate/config/config_internal.h"
#include "gate/config/units.h"

/* The largest count gate.toml takes, as for sizes. */
#define COUNT_MAX (UNITS_SIZE_LIMIT - 1)

#define IN_CFG(field) offsetof(struct config, rules.field)
#define IN_TABLE(field) offsetof(struct ets_table_limit, field)

static const struct key_spec ets_keys[] = {
        {"max_total", KEY_SIZE_OFF, IN_CFG(ets.max_total), 0, 0, "\"64 MB\"", NULL},
        {"max_left_alive", KEY_COUNT_OFF, IN_CFG(ets.max_left_alive), 0, COUNT_MAX, "0", NULL},
        {"left_alive_floor", KEY_SIZE, IN_CFG(ets.left_alive_floor), 0, 0, "\"1 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
const struct key_spec config_ets_table_keys[] = {
        {"name", KEY_GLOB, IN_TABLE(name), 0, 0, "\"corpus_*\"", NULL},
        {"max_bytes", KEY_SIZE_OFF, IN_TABLE(max_bytes), 0, 0, "\"2 MB\"", NULL},
        {"max_size", KEY_COUNT_OFF, IN_TABLE(max_size), 0, COUNT_MAX, "100000", NULL},
        {"max_growth", KEY_PCT_OFF, IN_TABLE(max_growth_pct), 0, 0, "\"50 %\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec binary_keys[] = {
        {"max_refs_per_process", KEY_COUNT_OFF, IN_CFG(binary.max_refs_per_process), 0, COUNT_MAX,
         "50000", NULL},
        {"max_bytes_per_process", KEY_SIZE_OFF, IN_CFG(binary.max_bytes_per_process), 0, 0,
         "\"10 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec process_keys[] = {
        {"max_born", KEY_COUNT_OFF, IN_CFG(process.max_born), 0, COUNT_MAX, "100", NULL},
        {"max_mailbox", KEY_COUNT_OFF, IN_CFG(process.max_mailbox), 0, COUNT_MAX, "10000", NULL},
        {"max_memory", KEY_SIZE_OFF, IN_CFG(process.max_memory), 0, 0, "\"100 MB\"", NULL},
        /* the fine level: the largest heap any process reaches (rules/fine.h) */
        {"max_heap", KEY_SIZE_OFF, IN_CFG(fine.max_heap), 0, 0, "\"200 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec atom_keys[] = {
        {"max_growth", KEY_COUNT_OFF, IN_CFG(atom.max_growth), 0, COUNT_MAX, "10000", NULL},
        {"per_test", KEY_COUNT, IN_CFG(atom.per_test), 0, COUNT_MAX, "5", NULL},
        {"max_usage", KEY_SHARE_OFF, IN_CFG(atom.max_usage_pct), 0, 0, "\"80 %\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec modules_keys[] = {
        {"max_created", KEY_COUNT_OFF, IN_CFG(modules.max_created), 0, COUNT_MAX, "200", NULL},
        {"floor", KEY_SIZE, IN_CFG(modules.floor_bytes), 0, 0, "\"1 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec allocator_keys[] = {
        {"max_fragmentation", KEY_SHARE_OFF, IN_CFG(allocator.max_fragmentation_pct), 0, 0,
         "\"75 %\"", NULL},
        {"waste_floor", KEY_SIZE, IN_CFG(allocator.waste_floor), 0, 0, "\"64 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec baseline_keys[] = {
        {"path", KEY_PATH, IN_CFG(baseline.path), 0, 0, "\".gate/baseline.json\"",
         BASELINE_DEFAULT_PATH},
        {"ref", KEY_REF, IN_CFG(baseline.ref), 0, 0, "\"origin/main\"", BASELINE_DEFAULT_REF},
        {"notes_ref", KEY_NOTES_REF, IN_CFG(baseline.notes_ref), 0, 0, "\"refs/notes/gate\"",
         BASELINE_DEFAULT_NOTES_REF},
        {"require", KEY_BOOL, IN_CFG(baseline.require), 0, 0, "false", NULL},
        {"skip_ci", KEY_BOOL, IN_CFG(baseline.skip_ci), 0, 0, "false", NULL},
        {"max", KEY_PCT, IN_CFG(baseline.max_pct), 0, 0, "\"20 %\"", NULL},
        {"floor", KEY_SIZE, IN_CFG(baseline.floor_bytes), 0, 0, "\"1 MB\"", NULL},
        {"trend_window", KEY_INT, IN_CFG(baseline.trend_window), 2, 10000, "10", NULL},
        {"trend_sigma", KEY_NUMBER, IN_CFG(baseline.trend_sigma), 0, 0, "3.0", NULL},
        {"trend_min", KEY_PCT, IN_CFG(baseline.trend_min_pct), 0, 0, "\"10 %\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec attribution_keys[] = {
        {"per_test", KEY_BOOL, IN_CFG(attribution.per_test), 0, 0, "false", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec ports_keys[] = {
        {"max_opened", KEY_COUNT_OFF, IN_CFG(ports.max_opened), 0, COUNT_MAX, "50", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec pterm_keys[] = {
        {"max_entries", KEY_COUNT_OFF, IN_CFG(pterm.max_entries), 0, COUNT_MAX, "1000", NULL},
        {"max_bytes", KEY_SIZE_OFF, IN_CFG(pterm.max_bytes), 0, 0, "\"1 MB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
/* [run]: how gate run runs the suite; --repeat overrides repeat */
static const struct key_spec run_keys[] = {
        {"repeat", KEY_INT, offsetof(struct config, repeat), 1, REPEAT_MAX, "3", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};

/* [structure]: each structure judged against its own before-figure */
static const struct key_spec structure_keys[] = {
        {"process_floor", KEY_SIZE_OFF, IN_CFG(structure.process_floor), 0, 0, "\"1 MB\"", NULL},
        {"table_floor", KEY_SIZE_OFF, IN_CFG(structure.table_floor), 0, 0, "\"4 MB\"", NULL},
        {"group_floor", KEY_SIZE_OFF, IN_CFG(structure.group_floor), 0, 0, "\"4 MB\"", NULL},
        {"max_growth", KEY_PCT_OFF, IN_CFG(structure.max_growth_pct), 0, 0, "\"100 %\"", NULL},
        {"repeat_bytes", KEY_SIZE_OFF, IN_CFG(structure.repeat_bytes), 0, 0, "\"4 kB\"", NULL},
        {"repeat_rows", KEY_COUNT_OFF, IN_CFG(structure.repeat_rows), 0, COUNT_MAX, "10", NULL},
        {"repeat_count", KEY_COUNT_OFF, IN_CFG(structure.repeat_count), 0, COUNT_MAX, "1", NULL},
        {"repeat_spread", KEY_NUMBER, IN_CFG(structure.repeat_spread), 1, 1000, "4", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};

/* [severity] RULE = "error" | "warn"; [attention] the reviewer's budget */
#define IN_SEV(r) offsetof(struct config, rules.severity.warn[r])
static const struct key_spec severity_keys[] = {
        {"growth", KEY_SEVERITY, IN_SEV(SEVERITY_GROWTH), 0, 0, "\"warn\"", NULL},
        {"ets", KEY_SEVERITY, IN_SEV(SEVERITY_ETS), 0, 0, "\"warn\"", NULL},
        {"binary", KEY_SEVERITY, IN_SEV(SEVERITY_BINARY), 0, 0, "\"warn\"", NULL},
        {"process", KEY_SEVERITY, IN_SEV(SEVERITY_PROCESS), 0, 0, "\"warn\"", NULL},
        {"atom", KEY_SEVERITY, IN_SEV(SEVERITY_ATOM), 0, 0, "\"warn\"", NULL},
        {"allocator", KEY_SEVERITY, IN_SEV(SEVERITY_ALLOCATOR), 0, 0, "\"warn\"", NULL},
        {"ports", KEY_SEVERITY, IN_SEV(SEVERITY_PORTS), 0, 0, "\"warn\"", NULL},
        {"persistent_term", KEY_SEVERITY, IN_SEV(SEVERITY_PTERM), 0, 0, "\"warn\"", NULL},
        {"baseline", KEY_SEVERITY, IN_SEV(SEVERITY_BASELINE), 0, 0, "\"warn\"", NULL},
        {"trend", KEY_SEVERITY, IN_SEV(SEVERITY_TREND), 0, 0, "\"warn\"", NULL},
        {"tag", KEY_SEVERITY, IN_SEV(SEVERITY_TAG), 0, 0, "\"warn\"", NULL},
        {"modules", KEY_SEVERITY, IN_SEV(SEVERITY_MODULES), 0, 0, "\"warn\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
/* the fine level (rules/fine.h) */
static const struct key_spec rss_keys[] = {
        {"max_unaccounted", KEY_SIZE_OFF, IN_CFG(fine.rss_max_unaccounted), 0, 0, "\"off\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec peak_keys[] = {
        {"max", KEY_SIZE_OFF, IN_CFG(fine.peak_max), 0, 0, "\"2 GB\"", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};
static const struct key_spec attention_keys[] = {
        {"annotations", KEY_INT, offsetof(struct config, annotations), 1, 50, "8", NULL},
        {NULL, 0, 0, 0, 0, NULL, NULL},
};

const struct section config_sections[] = {
        {"ets", ets_keys, "table"},
        {"binary", binary_keys, NULL},
        {"process", process_keys, NULL},
        {"atom", atom_keys, NULL},
        {"modules", modules_keys, NULL},
        {"allocator", allocator_keys, NULL},
        {"baseline", baseline_keys, NULL},
        {"attribution", attribution_keys, NULL},
        {"ports", ports_keys, NULL},
        {"persistent_term", pterm_keys, NULL},
        {"run", run_keys, NULL},
        {"severity", severity_keys, NULL},
        {"attention", attention_keys, NULL},
        {"rss", rss_keys, NULL},             /* the fine level: RSS */
        {"peak", peak_keys, NULL},           /* the fine level: the peak */
        {"structure", structure_keys, NULL}, /* each structure against its own past */
        {NULL, NULL, NULL},
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
