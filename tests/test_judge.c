/* tests/test_judge.c: the one judge (judge/judge.h): its steps in their order, a step whose
 * input is absent not run (no baseline, no suite here, a merged run's findings), and where a
 * judging stops when asked. */
#include "tests/judge_fixture.h"
#include "tests/rules_fixture.h"

#include "model/finding.h"
#include "rules/tags.h"

/* A judging's fixture: a table that grew past its cap, in two deep snapshots. */
struct jfx {
	struct rules_config c;
	struct snapshot b, a;
	struct findings f;
	char err[256];
};

static void leak(struct jfx *x)
{
	memset(x, 0, sizeof(*x));
	rules_config_default(&x->c);
	struct ets_table_limit *t = ets_config_table_add(&x->c.ets, "corpus_*");
	assert_non_null(t);
	t->max_bytes = 2000000;
	deep(&x->b);
	deep(&x->a);
	add_ets(&x->a, "corpus_cache", NULL, "<0.200.0>", "Elixir.LeakEts.Corpus", 7800000, 60000,
	        true);
	x->a.mem[MEM_ETS] += 7800000;
	x->a.mem[MEM_SYSTEM] += 7800000;
	x->a.mem[MEM_TOTAL] += 7800000;
}

/* one node's run on x's snapshots */
static struct judge_input node_input(const struct jfx *x)
{
	return (struct judge_input){.before = &x->b,
	                            .after = &x->a,
	                            .run_before = &x->b,
	                            .run_after = &x->a,
	                            .cfg = &x->c};
}

static void jfx_clear(struct jfx *x)
{
	findings_clear(&x->f);
	snapshot_clear(&x->b);
	snapshot_clear(&x->a);
	rules_config_clear(&x->c);
}

/* the first finding of rule, or NULL */
static const struct finding *first_of(const struct findings *f, const char *rule)
{
	for (size_t i = 0; i < f->count; i++)
		if (strcmp(f->items[i].rule, rule) == 0)
			return &f->items[i];
	return NULL;
}

static size_t index_of(const char *const *names, const char *name)
{
	for (size_t i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	fail_msg("no step named %s", name);
	return 0;
}

/* the rules first, then one finding per leak, what grew, the baseline and the fine level,
 * then the culprits and what the tests and [severity] say */
static void test_judge__order(void **state)
{
	(void)state;
	const char *const *n = judge_step_names();
	assert_string_equal(n[0], "growth");
	assert_true(index_of(n, "structure") < index_of(n, "one leak, one finding"));
	assert_true(index_of(n, "one leak, one finding") < index_of(n, "what grew"));
	assert_true(index_of(n, "what grew") < index_of(n, "baseline"));
	assert_true(index_of(n, "baseline") < index_of(n, "consolidate"));
	assert_true(index_of(n, "peak") < index_of(n, "consolidate"));
	assert_true(index_of(n, "consolidate") < index_of(n, "culprits"));
	assert_true(index_of(n, "culprits") < index_of(n, "tests' limits"));
	assert_true(index_of(n, "tests' limits") < index_of(n, "severity"));
}

/* without a baseline (a cluster, a project outside git) there is no baseline finding; with
 * one to look for and none found, a finding says where it looked */
static void test_judge__baseline_only_when_given(void **state)
{
	(void)state;
	struct jfx x;
	leak(&x);
	struct findings some = {0};
	struct judge_input in = node_input(&x);
	assert_int_equal(judge_run(&in, &x.f, x.err, sizeof(x.err)), 0);
	assert_int_equal(count(&x.f, "baseline", -1), 0);
	struct judge_baseline bl = {.where = "HEAD:.gate/baseline.json"};
	in.baseline = &bl;
	assert_int_equal(judge_run(&in, &some, x.err, sizeof(x.err)), 0);
	const struct finding *f = first_of(&some, "baseline");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "HEAD:.gate/baseline.json"));
	/* the same leak fails once either way */
	assert_int_equal(findings_failed(&x.f), findings_failed(&some));
	assert_int_equal(findings_failed(&x.f), 1);
	findings_clear(&some);
	jfx_clear(&x);
}

/* a merged run's findings were made by its partitions: only --warn-only applies again */
static void test_judge__merged_only_severity(void **state)
{
	(void)state;
	struct jfx x;
	leak(&x);
	assert_int_equal(judge_rules(&x.f, &x.b, &x.a, NULL, &x.c), 0);
	size_t n = x.f.count, failed = findings_failed(&x.f);
	assert_true(failed >= 1);
	struct judge_input in = {.cfg = &x.c, .merged = true};
	assert_int_equal(judge_run(&in, &x.f, x.err, sizeof(x.err)), 0);
	assert_int_equal(x.f.count, n); /* no rule ran again */
	assert_int_equal(findings_failed(&x.f), failed);
	in.warn_only = true;
	assert_int_equal(judge_run(&in, &x.f, x.err, sizeof(x.err)), 0);
	assert_int_equal(x.f.count, n);
	assert_int_equal(findings_failed(&x.f), 0); /* a warning now */
	jfx_clear(&x);
}

/* --warn-only on a node's run: the judge's severity step makes the failure a warning */
static void test_judge__warn_only(void **state)
{
	(void)state;
	struct jfx x;
	leak(&x);
	struct judge_input in = node_input(&x);
	in.warn_only = true;
	assert_int_equal(judge_run(&in, &x.f, x.err, sizeof(x.err)), 0);
	assert_int_equal(findings_failed(&x.f), 0);
	const struct finding *t = first_of(&x.f, "ets");
	assert_non_null(t);
	assert_true(t->warned);
	jfx_clear(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_judge__order),
	        cmocka_unit_test(test_judge__baseline_only_when_given),
	        cmocka_unit_test(test_judge__merged_only_severity),
	        cmocka_unit_test(test_judge__warn_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
