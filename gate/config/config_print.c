/* gate/config/config_print.c: the effective configuration printed back as TOML that
 * config_load reads the same (config.h). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config/config.h"
#include "gate/config/config_internal.h"
#include "gate/config/units.h"
#include "model/snapshot.h"

static void print_string(FILE *out, const char *key, const char *s)
{
	fprintf(out, "%s = \"", key);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\u%04X", *p);
			else
				fputc(*p, out);
		}
	}
	fputs("\"\n", out);
}

/* The largest unit that keeps the figure whole, but seconds below 10 minutes: "120 s". */
static void print_duration(FILE *out, const char *key, int ms)
{
	if (ms > 0 && ms % UNITS_MS_PER_H == 0)
		fprintf(out, "%s = \"%d h\"\n", key, ms / UNITS_MS_PER_H);
	else if (ms >= 10 * UNITS_MS_PER_MIN && ms % UNITS_MS_PER_MIN == 0)
		fprintf(out, "%s = \"%d min\"\n", key, ms / UNITS_MS_PER_MIN);
	else if (ms > 0 && ms % UNITS_MS_PER_S == 0)
		fprintf(out, "%s = \"%d s\"\n", key, ms / UNITS_MS_PER_S);
	else
		fprintf(out, "%s = \"%d ms\"\n", key, ms);
}

static void print_size(FILE *out, const char *key, int64_t bytes)
{
	static const struct {
		const char *name;
		int64_t factor;
	} units[] = {{"GB", 1000 * 1000 * 1000},
	             {"GiB", (int64_t)1 << 30},
	             {"MB", 1000 * 1000},
	             {"MiB", (int64_t)1 << 20},
	             {"kB", 1000},
	             {"KiB", (int64_t)1 << 10},
	             {NULL, 0}};

	for (size_t i = 0; bytes > 0 && units[i].name; i++) {
		if (bytes % units[i].factor == 0) {
			fprintf(out, "%s = \"%lld %s\"\n", key,
			        (long long)(bytes / units[i].factor), units[i].name);
			return;
		}
	}
	fprintf(out, "%s = \"%lld B\"\n", key, (long long)bytes);
}

/* The shortest figure that reads back as the same double. */
static void print_percent(FILE *out, const char *key, double pct)
{
	char buf[64];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, pct);
		if (strtod(buf, NULL) == pct)
			break;
	}
	/* %g writes 10 as 1e+01: spell it out when up to 17 decimals do (what is read back) */
	if (strchr(buf, 'e') && fabs(pct) < 1e15) {
		char fixed[64];
		for (int dec = 0; dec <= 17; dec++) {
			snprintf(fixed, sizeof(fixed), "%.*f", dec, pct);
			if (strtod(fixed, NULL) == pct) {
				memcpy(buf, fixed, sizeof(buf));
				break;
			}
		}
	}
	if (strchr(buf, 'e') || !isfinite(pct))
		fprintf(out, "%s = %s\n", key, buf); /* a TOML float: "1e+30 %" is not read */
	else
		fprintf(out, "%s = \"%s %%\"\n", key, buf);
}

/* A plain number, shortest form that reads back the same, always as a TOML float. */
static void print_number(FILE *out, const char *key, double x)
{
	char buf[64];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fprintf(out, "%s = %s%s\n", key, buf, strpbrk(buf, ".en") ? "" : ".0");
}

static void print_key(FILE *out, const struct key_spec *spec, const void *base)
{
	const void *field = (const char *)base + spec->off;
	int64_t n;
	double pct;

	switch (spec->kind) {
	case KEY_SIZE: print_size(out, spec->key, *(const int64_t *)field); break;
	case KEY_SIZE_OFF:
		n = *(const int64_t *)field;
		if (n == RULES_OFF)
			fprintf(out, "%s = \"off\"\n", spec->key);
		else
			print_size(out, spec->key, n);
		break;
	case KEY_COUNT:
	case KEY_COUNT_OFF:
		n = *(const int64_t *)field;
		if (n == RULES_OFF)
			fprintf(out, "%s = \"off\"\n", spec->key);
		else
			fprintf(out, "%s = %lld\n", spec->key, (long long)n);
		break;
	case KEY_INT: fprintf(out, "%s = %d\n", spec->key, *(const int *)field); break;
	case KEY_PCT:
	case KEY_PCT_OFF:
	case KEY_SHARE_OFF:
		pct = *(const double *)field;
		if (pct < 0)
			fprintf(out, "%s = \"off\"\n", spec->key);
		else
			print_percent(out, spec->key, pct);
		break;
	case KEY_NUMBER: print_number(out, spec->key, *(const double *)field); break;
	case KEY_BOOL:
		fprintf(out, "%s = %s\n", spec->key, *(const bool *)field ? "true" : "false");
		break;
	case KEY_SEVERITY:
		fprintf(out, "%s = \"%s\"\n", spec->key, *(const bool *)field ? "warn" : "error");
		break;
	case KEY_GLOB:
	case KEY_PATH:
	case KEY_REF:
	case KEY_NOTES_REF:
		print_string(out, spec->key,
		             *(char *const *)field ? *(char *const *)field : spec->null_is);
		break;
	}
}

static void print_sections(const struct config *cfg, FILE *out)
{
	for (const struct section *sec = config_sections; sec->name; sec++) {
		fprintf(out, "\n[%s]\n", sec->name);
		for (const struct key_spec *k = sec->keys; k->key; k++)
			print_key(out, k, cfg);
		if (!sec->extra)
			continue;
		/* [[ets.table]]: the limits an entry sets; one it does not is not applied */
		for (size_t i = 0; i < cfg->rules.ets.ntables; i++) {
			const struct ets_table_limit *t = &cfg->rules.ets.tables[i];
			fputs("\n[[ets.table]]\n", out);
			print_string(out, "name", t->name);
			for (const struct key_spec *k = config_ets_table_keys + 1; k->key; k++) {
				const void *f = (const char *)t + k->off;
				if (k->kind == KEY_PCT_OFF ? *(const double *)f >= 0
				                           : *(const int64_t *)f != RULES_OFF)
					print_key(out, k, t);
			}
		}
	}
}

void config_print(const struct config *cfg, FILE *out)
{
	const struct growth_config *g = &cfg->rules.growth;

	fputs("# gate configuration in effect, from ", out);
	for (const char *s = cfg->source ? cfg->source : "defaults"; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
	fputs("\n\n[node]\n", out);
	print_string(out, "mix_env", cfg->mix_env);
	print_string(out, "erl_flags", cfg->erl_flags);
	print_duration(out, "boot_timeout", cfg->boot_timeout_ms);
	print_duration(out, "rpc_timeout", cfg->rpc_timeout_ms);
	print_duration(out, "test_timeout", cfg->test_timeout_ms);
	print_duration(out, "stop_timeout", cfg->stop_timeout_ms);
	if (cfg->settle_timeout_ms == 0) /* 0: no settling, "off" in gate.toml */
		fputs("settle_timeout = \"off\"\n", out);
	else
		print_duration(out, "settle_timeout", cfg->settle_timeout_ms);
	fputs("\n[output]\n", out);
	print_string(out, "junit", cfg->junit);
	fprintf(out, "\n[growth]\nlive_totals = %s\n", g->live_totals ? "true" : "false");
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		fprintf(out, "\n[growth.%s]\nenabled = %s\n", mem_cat_name((enum mem_cat)c),
		        g->cat[c].enabled ? "true" : "false");
		print_percent(out, "max", g->cat[c].max_pct);
		print_size(out, "floor", g->cat[c].floor_bytes);
	}
	print_sections(cfg, out);
}
