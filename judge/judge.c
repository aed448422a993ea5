/* judge/judge.c: the steps that make a run's findings, in their order (judge/judge.h). */
#include "judge/judge.h"

#include <stdio.h>
#include <string.h>

#include "base/errtext.h"
#include "model/finding.h"
#include "rules/alloc.h"
#include "rules/atom.h"
#include "rules/attribution.h"
#include "rules/binary.h"
#include "rules/consolidate.h"
#include "rules/drilldown.h"
#include "rules/ets.h"
#include "rules/growth.h"
#include "rules/modules.h"
#include "rules/origins.h"
#include "rules/peak.h"
#include "rules/ports.h"
#include "rules/process.h"
#include "rules/reproduce.h"
#include "rules/pterm.h"
#include "rules/rss.h"
#include "rules/structure.h"
#include "rules/tags.h"

/* One judging: the input, the list the steps append to, where the steps began. */
struct judging {
	const struct judge_input *in;
	struct findings *out;
	size_t start;
	char *err;
	size_t errlen;
};

/* What a step needs to run; a judging without it skips the step. */
enum {
	NEED_SNAPSHOTS = 1 << 0, /* before and after: not a merged run */
	NEED_RUNS = 1 << 1,      /* --repeat's deep snapshots after every run */
	NEED_REPEAT = 1 << 2,    /* --repeat's figures */
	NEED_SAMPLES = 1 << 3,   /* --sample's series */
	NEED_BASELINE = 1 << 4,  /* a baseline to compare with */
	NEED_SUITE = 1 << 5,     /* the suite ran here */
	MERGED_TOO = 1 << 6,     /* also runs on a merged run's findings */
};

/* A step returns 0, or -1: out of memory (the judge says so with the step's words), or -2
 * when it filled err itself. */
struct judge_step {
	const char *name;
	int (*run)(struct judging *j);
	unsigned needs;
	const char *oom; /* "out of memory <oom>" */
};

/* ---- the rules: each appends its findings for the window judged ---- */

#define RULE_STEP(fn, field)                                                                       \
	static int step_##fn(struct judging *j)                                                    \
	{                                                                                          \
		return fn(j->out, j->in->before, j->in->after, &j->in->cfg->field);                \
	}
RULE_STEP(growth_check, growth)
RULE_STEP(ets_check, ets)
RULE_STEP(binary_check, binary)
RULE_STEP(process_check, process)
RULE_STEP(modules_check, modules)
RULE_STEP(alloc_check, allocator)
RULE_STEP(ports_check, ports)
RULE_STEP(pterm_check, pterm)
/* after the rules whose structures it must not fail twice */
RULE_STEP(structure_check, structure)
/* the fine level: allocation origins named in the findings they explain, RSS outside the
 * BEAM over the window (under --repeat, runs 2..N: a first run maps what later runs reuse) */
RULE_STEP(origins_check, fine)
RULE_STEP(rss_check, fine)

/* the atom rule allows each test name its atom: it needs the suite's results */
static int step_atom(struct judging *j)
{
	return atom_check(j->out, j->in->before, j->in->after, j->in->tests, &j->in->cfg->atom);
}

/* one leak, one finding: a leaf whose growth a failing structure explains, and total when
 * failing leaves explain it, pass as context; then the most specific first */
static int step_one_leak(struct judging *j)
{
	const struct snapshot *b = j->in->before, *a = j->in->after;
	if (growth_consolidate(j->out, j->start, b, a, &j->in->cfg->growth) < 0)
		return -1;
	/* with live totals the consolidation judged the atom rows and entries already */
	if (!j->in->cfg->growth.live_totals && atom_rows_context(j->out, j->start, b, a) < 0)
		return -1;
	return consolidate_order(j->out, j->start);
}

/* what grew, named first in every category still failing */
static int step_what_grew(struct judging *j)
{
	return drilldown_annotate(j->out, j->in->before, j->in->after);
}

/* the structures that grew in every run; they name their structure, so the consolidation
 * below gives one leak one finding with them too (the growth consolidation is not run again:
 * a row that adopted a structure would then be judged net of itself); what grew is named
 * again for them */
static int step_every_run(struct judging *j)
{
	if (j->in->nruns > 0 &&
	    repeat_structures_check(j->out, j->in->runs, j->in->nruns, &j->in->cfg->structure) < 0)
		return -1;
	return drilldown_annotate(j->out, j->in->before, j->in->after);
}

/* each failing finding says how its figure moved run after run */
static int step_runs(struct judging *j)
{
	return repeat_annotate(j->out, j->in->repeat);
}

/* a steady rise across the samples */
static int step_samples(struct judging *j)
{
	return trend_samples_check(j->out, j->in->samples, &j->in->cfg->growth);
}

/* the after-snapshot against the stored baseline, and against the trend of earlier runs */
static int step_baseline(struct judging *j)
{
	const struct judge_baseline *bl = j->in->baseline;
	const struct baseline_config *cfg = &j->in->cfg->baseline;
	if (baseline_check(j->out, j->in->after, bl->base, cfg, bl->where) < 0)
		return -1;
	if (bl->nhistory > 0 && cfg->trend_window > 0 &&
	    trend_check(j->out, j->in->after, bl->history, bl->nhistory, cfg) < 0)
		return -1;
	return 0;
}

/* the run's peak, over the whole run (warm-up included) */
static int step_peak(struct judging *j)
{
	return peak_check(j->out, j->in->run_before, j->in->run_after, &j->in->cfg->fine);
}

/* the tests' max_peak tags (a tag that does not parse: the tests' limits step says so with
 * the test's file and line) */
static int step_peak_tags(struct judging *j)
{
	char terr[512];
	return peak_tags_check(j->out, j->in->run_after, j->in->tests, terr, sizeof(terr)) == -1
	               ? -1
	               : 0;
}

/* one cause, one failing finding, across every family (the baseline's and the trend's rows
 * included), before the culprits are named; again once the tags ran */
static int step_consolidate(struct judging *j)
{
	return consolidate_findings(j->out, 0);
}

/* the culprits go into the failing findings' messages, so before any report */
static int step_culprits(struct judging *j)
{
	return attribution_annotate(j->out, j->in->before, j->in->after,
	                            j->in->tests_here ? j->in->tests : NULL);
}

/* the tests' own limits (a tag that does not parse ends the run, naming the test) */
static int step_tests_limits(struct judging *j)
{
	int rc = tags_check(j->out, j->in->tests, &j->in->cfg->severity, j->err, j->errlen);
	return rc == -2 ? -2 : rc < 0 ? -1 : 0;
}

/* warnings never fail; --warn-only makes every memory finding one (a merged run's findings
 * had their severity in their partition: only --warn-only is applied again) */
static int step_severity(struct judging *j)
{
	if (j->in->merged && !j->in->warn_only)
		return 0;
	return severity_apply(j->out, &j->in->cfg->severity, j->in->warn_only);
}

/* each finding with a culprit points at its test's file and line */
static int step_locate(struct judging *j)
{
	return j->in->tests ? tags_locate(j->out, j->in->tests) : 0;
}

/* each failing finding with a culprit ends with the command that reproduces it */
static int step_reproduce(struct judging *j)
{
	return j->in->reproduce ? reproduce_annotate(j->out, j->in->reproduce) : 0;
}

static const char RULES_OOM[] = "applying the rules";
static const char TAGS_OOM[] = "applying the tests' gate tags";

static const struct judge_step steps[] = {
        {"growth", step_growth_check, NEED_SNAPSHOTS, RULES_OOM},
        {"ets", step_ets_check, NEED_SNAPSHOTS, RULES_OOM},
        {"binary", step_binary_check, NEED_SNAPSHOTS, RULES_OOM},
        {"process", step_process_check, NEED_SNAPSHOTS, RULES_OOM},
        {"atom", step_atom, NEED_SNAPSHOTS, RULES_OOM},
        {"modules", step_modules_check, NEED_SNAPSHOTS, RULES_OOM},
        {"allocator", step_alloc_check, NEED_SNAPSHOTS, RULES_OOM},
        {"ports", step_ports_check, NEED_SNAPSHOTS, RULES_OOM},
        {"persistent_term", step_pterm_check, NEED_SNAPSHOTS, RULES_OOM},
        {"structure", step_structure_check, NEED_SNAPSHOTS, RULES_OOM},
        {"one leak, one finding", step_one_leak, NEED_SNAPSHOTS, RULES_OOM},
        {"what grew", step_what_grew, NEED_SNAPSHOTS, RULES_OOM},
        {"grew in every run", step_every_run, NEED_SNAPSHOTS | NEED_RUNS, RULES_OOM},
        {"the runs", step_runs, NEED_SNAPSHOTS | NEED_REPEAT, RULES_OOM},
        {"samples", step_samples, NEED_SNAPSHOTS | NEED_SAMPLES, RULES_OOM},
        {"baseline", step_baseline, NEED_SNAPSHOTS | NEED_BASELINE, RULES_OOM},
        {"origins", step_origins_check, NEED_SNAPSHOTS, RULES_OOM},
        {"rss", step_rss_check, NEED_SNAPSHOTS, RULES_OOM},
        {"peak", step_peak, NEED_SNAPSHOTS, RULES_OOM},
        {"peak tags", step_peak_tags, NEED_SNAPSHOTS | NEED_SUITE, RULES_OOM},
        {"consolidate", step_consolidate, NEED_SNAPSHOTS, "consolidating the findings"},
        {"culprits", step_culprits, NEED_SNAPSHOTS, "naming the culprits"},
        {"tests' limits", step_tests_limits, NEED_SNAPSHOTS | NEED_SUITE, TAGS_OOM},
        {"consolidate again", step_consolidate, NEED_SNAPSHOTS, TAGS_OOM},
        {"severity", step_severity, NEED_SNAPSHOTS | MERGED_TOO, TAGS_OOM},
        {"file and line", step_locate, NEED_SNAPSHOTS, TAGS_OOM},
        {"reproduce", step_reproduce, NEED_SNAPSHOTS | NEED_SUITE, TAGS_OOM},
};
#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

static unsigned judge_has(const struct judge_input *in)
{
	unsigned has = 0;
	if (in->before && in->after && !in->merged)
		has |= NEED_SNAPSHOTS;
	if (in->runs)
		has |= NEED_RUNS;
	if (in->repeat)
		has |= NEED_REPEAT;
	if (in->samples)
		has |= NEED_SAMPLES;
	if (in->baseline)
		has |= NEED_BASELINE;
	if (in->tests_here && in->tests)
		has |= NEED_SUITE;
	return has;
}

int judge_run(const struct judge_input *in, struct findings *out, char *err, size_t errlen)
{
	struct judging j = {
	        .in = in, .out = out, .start = out->count, .err = err, .errlen = errlen};
	unsigned has = judge_has(in);
	for (size_t i = 0; i < NSTEPS; i++) {
		const struct judge_step *s = &steps[i];
		unsigned needs = s->needs & ~MERGED_TOO;
		bool runs = in->merged ? (s->needs & MERGED_TOO) != 0 : (needs & has) == needs;
		if (runs) {
			int rc = s->run(&j);
			if (rc == -2)
				return -1;
			if (rc < 0) {
				errtext_set(err, errlen, NULL, "out of memory %s", s->oom);
				return -1;
			}
		}
		if (in->last_step && strcmp(in->last_step, s->name) == 0)
			break;
	}
	return 0;
}

const char *const *judge_step_names(void)
{
	static const char *names[NSTEPS + 1];
	for (size_t i = 0; i < NSTEPS; i++)
		names[i] = steps[i].name;
	names[NSTEPS] = NULL;
	return names;
}
