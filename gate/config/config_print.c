/* gate/config/config_print.c: the effective configuration printed back as TOML that
 * config_load reads the same (config.h), and one value as TOML for the reference. */
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

static void print_string(FILE *out, const char *s)
{
	fputc('"', out);
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
	fputc('"', out);
}

/* The largest unit that keeps the figure whole, but seconds below 10 minutes: "120 s". */
static void print_duration(FILE *out, int ms)
{
	if (ms > 0 && ms % UNITS_MS_PER_H == 0)
		fprintf(out, "\"%d h\"", ms / UNITS_MS_PER_H);
	else if (ms >= 10 * UNITS_MS_PER_MIN && ms % UNITS_MS_PER_MIN == 0)
		fprintf(out, "\"%d min\"", ms / UNITS_MS_PER_MIN);
	else if (ms > 0 && ms % UNITS_MS_PER_S == 0)
		fprintf(out, "\"%d s\"", ms / UNITS_MS_PER_S);
	else
		fprintf(out, "\"%d ms\"", ms);
}

static void print_size(FILE *out, int64_t bytes)
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
			fprintf(out, "\"%lld %s\"", (long long)(bytes / units[i].factor),
			        units[i].name);
			return;
		}
	}
	fprintf(out, "\"%lld B\"", (long long)bytes);
}

/* The shortest figure that reads back as the same double. */
static void print_percent(FILE *out, double pct)
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
		fputs(buf, out); /* a TOML float: "1e+30 %" is not read */
	else
		fprintf(out, "\"%s %%\"", buf);
}

/* A plain number, shortest form that reads back the same, always as a TOML float. */
static void print_number(FILE *out, double x)
{
	char buf[64];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fprintf(out, "%s%s", buf, strpbrk(buf, ".en") ? "" : ".0");
}

void config_print_value(FILE *out, const struct key_spec *spec, const void *base)
{
	const void *field = (const char *)base + spec->off;
	const char *str;
	int64_t n;
	double pct;

	switch (spec->kind) {
	case KEY_SIZE: print_size(out, *(const int64_t *)field); break;
	case KEY_SIZE_OFF:
		n = *(const int64_t *)field;
		if (n == RULES_OFF)
			fputs("\"off\"", out);
		else
			print_size(out, n);
		break;
	case KEY_COUNT:
	case KEY_COUNT_OFF:
		n = *(const int64_t *)field;
		if (n == RULES_OFF)
			fputs("\"off\"", out);
		else
			fprintf(out, "%lld", (long long)n);
		break;
	case KEY_INT: fprintf(out, "%d", *(const int *)field); break;
	case KEY_PCT:
	case KEY_PCT_OFF:
	case KEY_SHARE_OFF:
		pct = *(const double *)field;
		if (pct < 0)
			fputs("\"off\"", out);
		else
			print_percent(out, pct);
		break;
	case KEY_NUMBER: print_number(out, *(const double *)field); break;
	case KEY_BOOL: fputs(*(const bool *)field ? "true" : "false", out); break;
	case KEY_SEVERITY: fputs(*(const bool *)field ? "\"warn\"" : "\"error\"", out); break;
	case KEY_GLOB:
	case KEY_PATH:
	case KEY_REF:
	case KEY_NOTES_REF:
	case KEY_STRING:
	case KEY_FLAGS:
		str = *(char *const *)field;
		print_string(out, str ? str : spec->null_is);
		break;
	case KEY_DURATION: print_duration(out, *(const int *)field); break;
	case KEY_DURATION_OFF: /* 0: no settling, "off" in gate.toml */
		if (*(const int *)field == 0)
			fputs("\"off\"", out);
		else
			print_duration(out, *(const int *)field);
		break;
	}
}

static void print_key(FILE *out, const struct key_spec *spec, const void *base)
{
	fprintf(out, "%s = ", spec->key);
	config_print_value(out, spec, base);
	fputc('\n', out);
}

/* "[name]" and every key of sec, from the struct at base. */
static void print_section(FILE *out, const struct section *sec, const void *base)
{
	fprintf(out, "\n[%s]\n", sec->name);
	for (const struct key_spec *k = sec->keys; k->key; k++)
		print_key(out, k, base);
}

static void print_sections(const struct config *cfg, FILE *out)
{
	for (const struct section *sec = config_sections; sec->name; sec++) {
		print_section(out, sec, cfg);
		if (!sec->extra)
			continue;
		/* [[ets.table]]: the limits an entry sets; one it does not is not applied */
		for (size_t i = 0; i < cfg->rules.ets.ntables; i++) {
			const struct ets_table_limit *t = &cfg->rules.ets.tables[i];
			fputs("\n[[ets.table]]\n", out);
			print_key(out, &config_ets_table_keys[0], t);
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
	fputc('\n', out);
	print_section(out, &config_node_section, cfg);
	print_section(out, &config_output_section, cfg);
	/* [growth]'s max and floor live in the categories: only live_totals has a field */
	fputs("\n[growth]\n", out);
	for (const struct key_spec *k = config_growth_section.keys; k->key; k++)
		if (k->off != KEY_NO_FIELD)
			print_key(out, k, cfg);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		char name[64];
		snprintf(name, sizeof(name), "growth.%s", mem_cat_name((enum mem_cat)c));
		struct section cat = config_category_section;
		cat.name = name;
		print_section(out, &cat, &g->cat[c]);
	}
	print_sections(cfg, out);
}
