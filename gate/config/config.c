/* gate/config/config.c: gate.toml read over the defaults and checked key by key: the defaults,
 * the file, the tables with code of their own ([growth], [[ets.table]]) and the root; the other
 * tables follow config_schema.c's lists (see config_internal.h).
 *
 * config_default treats cfg as raw memory. config_load and config_load_text need cfg to hold
 * a config (from config_default, an earlier load, or all zero) and replace it, freeing what
 * it held; the file is always read over the defaults, not over what cfg held.
 */
#include "gate/config/config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/errtext.h"
#include "base/readfile.h"
#include "gate/config/config_internal.h"
#include "gate/config/toml.h"
#include "gate/config/units.h"
#include "model/snapshot.h"

/* ---- defaults and clearing ---- */

int config_default(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->boot_timeout_ms = 120 * UNITS_MS_PER_S;
	cfg->rpc_timeout_ms = 60 * UNITS_MS_PER_S;
	cfg->test_timeout_ms = 30 * UNITS_MS_PER_MIN;
	cfg->stop_timeout_ms = 10 * UNITS_MS_PER_S;
	cfg->settle_timeout_ms = 3 * UNITS_MS_PER_S; /* gate.toml says why */
	rules_config_default(&cfg->rules);
	cfg->annotations = 8; /* well under GitHub's 10 per step */
	cfg->repeat = 1;      /* [run] repeat: the suite once */
	cfg->confirm_timeout_ms = 10 * 60 * 1000;
	cfg->mix_env = strdup("test");
	cfg->erl_flags = strdup("");
	cfg->junit = strdup("_build/gate/junit.xml");
	cfg->runner = strdup("auto");
	cfg->source = strdup("defaults");
	if (!cfg->mix_env || !cfg->erl_flags || !cfg->junit || !cfg->runner || !cfg->source) {
		config_clear(cfg);
		return -1;
	}
	return 0;
}

void config_clear(struct config *cfg)
{
	if (!cfg)
		return;
	free(cfg->mix_env);
	free(cfg->erl_flags);
	free(cfg->junit);
	free(cfg->runner);
	free(cfg->source);
	rules_config_clear(&cfg->rules);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- tables ---- */

/* A table under [growth] is taken for a misspelt category, anything else for a key. */
static int unknown_growth_key(struct loader *ld, struct toml_pos pos, const char *path,
                              const char *key, bool is_table)
{
	const char *names[8 + MEM_CAT_COUNT + 1];
	const char *const *cats;
	char list[256];
	const char *s;
	size_t n = 0;

	config_spec_names(config_growth_section.keys, NULL, names, 8);
	while (names[n])
		n++;
	cats = names + n;
	for (int c = 0; c < MEM_CAT_COUNT; c++)
		names[n++] = mem_cat_name((enum mem_cat)c);
	names[n] = NULL;
	if (!is_table)
		return config_unknown_key(ld, pos, path, key, names, "[growth]");
	config_join_keys(list, sizeof(list), cats);
	if ((s = config_suggest(key, cats)))
		return config_fail(ld, pos, path, "unknown category; did you mean \"%s\"?", s);
	return config_fail(ld, pos, path, "unknown category; use one of %s", list);
}

/* What a [growth.<category>] table sets; unset fields take [growth]'s or the default. */
struct cat_set {
	bool max, floor;
};

static int load_category(struct loader *ld, const struct toml_value *t, const char *prefix,
                         struct growth_limit *lim, struct cat_set *set)
{
	for (size_t i = 0; i < toml_table_len(t); i++) {
		const char *key = toml_table_key(t, i);
		const struct toml_value *v = toml_table_value(t, i);
		char path[256];
		int rc;

		config_key_path(path, sizeof(path), prefix, key);
		if (strcmp(key, "enabled") == 0) {
			rc = config_get_bool(ld, v, path, &lim->enabled);
		} else if (strcmp(key, "max") == 0) {
			rc = config_get_percent(ld, v, path, &lim->max_pct);
			set->max = true;
		} else if (strcmp(key, "floor") == 0) {
			rc = config_get_size(ld, v, path, &lim->floor_bytes);
			set->floor = true;
		} else {
			const char *names[8];
			char table[320];
			config_spec_names(config_category_section.keys, NULL, names, 8);
			snprintf(table, sizeof(table), "[%s]", prefix);
			rc = config_unknown_key(ld, toml_table_key_pos(t, i), path, key, names,
			                        table);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int load_growth(struct loader *ld, const struct toml_value *t, struct growth_config *g)
{
	struct cat_set set[MEM_CAT_COUNT] = {{false, false}};
	bool have_max = false, have_floor = false;
	double max_pct = 0;
	int64_t floor_bytes = 0;

	for (size_t i = 0; i < toml_table_len(t); i++) {
		const char *key = toml_table_key(t, i);
		const struct toml_value *v = toml_table_value(t, i);
		char path[256];
		int cat, rc;

		config_key_path(path, sizeof(path), "growth", key);
		if (strcmp(key, "max") == 0) {
			rc = config_get_percent(ld, v, path, &max_pct);
			have_max = true;
		} else if (strcmp(key, "floor") == 0) {
			rc = config_get_size(ld, v, path, &floor_bytes);
			have_floor = true;
		} else if (strcmp(key, "live_totals") == 0) {
			rc = config_get_bool(ld, v, path, &g->live_totals);
		} else if ((cat = mem_cat_from_name(key)) >= 0) {
			char fix[320];
			snprintf(fix, sizeof(fix),
			         "write [%s] with enabled, max and floor below it", path);
			rc = config_get_table(ld, v, path, fix);
			if (rc == 0)
				rc = load_category(ld, v, path, &g->cat[cat], &set[cat]);
		} else {
			rc = unknown_growth_key(ld, toml_table_key_pos(t, i), path, key,
			                        toml_type(v) == TOML_TABLE);
		}
		if (rc < 0)
			return -1;
	}
	/* [growth] max and floor stand in for every category that does not set its own,
	 * wherever they are written in the file */
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		if (have_max && !set[c].max)
			g->cat[c].max_pct = max_pct;
		if (have_floor && !set[c].floor)
			g->cat[c].floor_bytes = floor_bytes;
	}
	return 0;
}

/* Whether an [[ets.table]] entry sets a limit. */
static bool table_has_limit(const struct ets_table_limit *t)
{
	return t->max_bytes != RULES_OFF || t->max_size != RULES_OFF || t->max_growth_pct >= 0;
}

static int load_ets_table(struct loader *ld, const struct toml_value *e, const char *epath,
                          struct ets_config *ets)
{
	struct ets_table_limit t = {NULL, RULES_OFF, RULES_OFF, -1};
	const char *names[8];
	int rc = -1;

	config_spec_names(config_ets_table_keys, NULL, names, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < toml_table_len(e); i++) {
		const char *key = toml_table_key(e, i);
		const struct key_spec *spec = config_spec_find(config_ets_table_keys, key);
		char path[320];

		config_key_path(path, sizeof(path), epath, key);
		if (!spec) {
			config_unknown_key(ld, toml_table_key_pos(e, i), path, key, names,
			                   "[[ets.table]]");
			goto out;
		}
		if (config_load_key(ld, spec, toml_table_value(e, i), path, &t) < 0)
			goto out;
	}
	if (!t.name) {
		config_fail(ld, toml_pos(e), epath,
		            "has no name; add name = \"corpus_*\" (a glob on the ETS table name)");
		goto out;
	}
	if (!table_has_limit(&t)) {
		config_fail(ld, toml_pos(e), epath,
		            "sets no limit; add max_bytes, max_size or max_growth");
		goto out;
	}
	for (size_t k = 0; k < ets->ntables; k++) {
		if (strcmp(ets->tables[k].name, t.name) == 0) {
			char path[320];
			config_key_path(path, sizeof(path), epath, "name");
			config_fail(ld, toml_pos(toml_get(e, "name")), path,
			            "\"%s\" is already limited by ets.table[%zu]; merge the two "
			            "entries",
			            t.name, k);
			goto out;
		}
	}
	struct ets_table_limit *added = ets_config_table_add(ets, t.name);
	if (!added) {
		config_fail(ld, toml_pos(e), epath, "out of memory");
		goto out;
	}
	added->max_bytes = t.max_bytes;
	added->max_size = t.max_size;
	added->max_growth_pct = t.max_growth_pct;
	rc = 0;
out:
	free(t.name);
	return rc;
}

static int load_ets_tables(struct loader *ld, const struct toml_value *v, const char *path,
                           struct ets_config *ets)
{
	static const char fix[] = "write [[ets.table]] (two brackets) above each table's name and "
	                          "limits";

	if (toml_type(v) != TOML_ARRAY)
		return config_type_fail(ld, v, path, "an array of tables", fix);
	for (size_t i = 0; i < toml_array_len(v); i++) {
		const struct toml_value *e = toml_array_at(v, i);
		char epath[300];

		snprintf(epath, sizeof(epath), "%s[%zu]", path, i);
		if (toml_type(e) != TOML_TABLE)
			return config_type_fail(ld, e, epath, "a table", fix);
		if (load_ets_table(ld, e, epath, ets) < 0)
			return -1;
	}
	return 0;
}

static int load_section(struct loader *ld, const struct toml_value *t, const struct section *sec,
                        struct config *cfg)
{
	const char *names[16];

	config_spec_names(sec->keys, sec->extra, names, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < toml_table_len(t); i++) {
		const char *key = toml_table_key(t, i);
		const struct toml_value *v = toml_table_value(t, i);
		const struct key_spec *spec = config_spec_find(sec->keys, key);
		char path[256], table[64];
		int rc;

		config_key_path(path, sizeof(path), sec->name, key);
		if (spec) {
			rc = config_load_key(ld, spec, v, path, cfg);
		} else if (sec->extra && strcmp(key, sec->extra) == 0) {
			rc = load_ets_tables(ld, v, path, &cfg->rules.ets);
		} else {
			snprintf(table, sizeof(table), "[%s]", sec->name);
			rc = config_unknown_key(ld, toml_table_key_pos(t, i), path, key, names,
			                        table);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The tables config_schema.c lists, [node] and [output] first; NULL for another name. */
static const struct section *section_find(const char *name)
{
	if (strcmp(name, config_node_section.name) == 0)
		return &config_node_section;
	if (strcmp(name, config_output_section.name) == 0)
		return &config_output_section;
	for (const struct section *s = config_sections; s->name; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* Every table of the root, for "did you mean" (names, NULL-terminated) and the list that
 * follows an unknown key ("[node], [output], ... and [structure]"). */
#define ROOT_TABLES_MAX 32
static void root_tables(const char **names, char *list, size_t n)
{
	size_t k = 0, len = 0;

	names[k++] = config_node_section.name;
	names[k++] = config_output_section.name;
	names[k++] = config_growth_section.name;
	for (const struct section *s = config_sections; s->name && k + 1 < ROOT_TABLES_MAX; s++)
		names[k++] = s->name;
	names[k] = NULL;
	list[0] = '\0';
	for (size_t i = 0; i < k && len < n; i++)
		len += (size_t)snprintf(list + len, n - len, "%s[%s]",
		                        i == 0       ? ""
		                        : i + 1 == k ? " and "
		                                     : ", ",
		                        names[i]);
}

static int load_root(struct loader *ld, const struct toml_value *root, struct config *cfg)
{
	const char *tables[ROOT_TABLES_MAX + 1];
	char list[512];

	root_tables(tables, list, sizeof(list));
	for (size_t i = 0; i < toml_table_len(root); i++) {
		const char *key = toml_table_key(root, i);
		const struct toml_value *v = toml_table_value(root, i);
		const struct section *sec;
		const char *s;
		char path[256], fix[320];
		int rc;

		config_key_path(path, sizeof(path), "", key);
		snprintf(fix, sizeof(fix), "write [%s] with its keys below it", path);
		if (strcmp(key, "growth") == 0)
			rc = config_get_table(ld, v, path, fix) < 0
			             ? -1
			             : load_growth(ld, v, &cfg->rules.growth);
		else if ((sec = section_find(key)))
			rc = config_get_table(ld, v, path, fix) < 0 ? -1
			                                            : load_section(ld, v, sec, cfg);
		else if ((s = config_suggest(key, tables)))
			rc = config_fail(ld, toml_table_key_pos(root, i), path,
			                 "unknown key; did you mean \"%s\"?", s);
		else
			rc = config_fail(ld, toml_table_key_pos(root, i), path,
			                 "unknown key; the configuration has only the tables %s",
			                 list);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- loading ---- */

/* Replaces cfg with the defaults after a failed load. */
static int load_failed(struct config *cfg, char *err, size_t errlen)
{
	config_clear(cfg);
	if (config_default(cfg) < 0 && err && errlen && !err[0])
		errtext_set(err, errlen, NULL, "out of memory");
	return -1;
}

int config_load_text(struct config *cfg, const char *text, size_t len, const char *name, char *err,
                     size_t errlen)
{
	struct loader ld = {name, err, errlen};
	struct toml_value *root = NULL;
	struct config tmp;
	char terr[512];
	char *source;

	if (err && errlen)
		err[0] = '\0';
	if (config_default(&tmp) < 0) {
		errtext_set(err, errlen, NULL, "%s: out of memory", name);
		config_clear(cfg);
		return -1;
	}
	if (toml_parse(&root, text, len, terr, sizeof(terr)) < 0) {
		errtext_set(err, errlen, NULL, "%s:%s", name, terr);
		goto config_fail;
	}
	if (load_root(&ld, root, &tmp) < 0)
		goto config_fail;
	if (!(source = strdup(name))) {
		errtext_set(err, errlen, NULL, "%s: out of memory", name);
		goto config_fail;
	}
	free(tmp.source);
	tmp.source = source;
	toml_free(root);
	config_clear(cfg);
	*cfg = tmp;
	return 0;
config_fail:
	toml_free(root);
	config_clear(&tmp);
	return load_failed(cfg, err, errlen);
}

/* Reads all of path, at most TOML_MAX_INPUT bytes, with readfile's message made specific. */
static int read_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	size_t n;

	if (readfile_bounded(path, TOML_MAX_INPUT, READFILE_STREAM, out, len, err, errlen) ==
	    READFILE_OK)
		return 0;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && err && (n = strlen(err)) < errlen)
		errtext_set(err + n, errlen - n, NULL, "; give the path of a TOML file");
	else if (stat(path, &st) == 0 && (unsigned long long)st.st_size > TOML_MAX_INPUT)
		errtext_set(err, errlen, path,
		            "larger than 1 MiB, the most gate reads for a configuration; is it the "
		            "right file?");
	return -1;
}

int config_load(struct config *cfg, const char *path, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (read_file(path, &text, &len, err, errlen) < 0)
		return load_failed(cfg, err, errlen);
	rc = config_load_text(cfg, text, len, path, err, errlen);
	free(text);
	return rc;
}
