/* tests/test_repeat.c: the pure parts of telling a leak from warm-up: the judged pair of
 * --repeat, the soak rule on samples, gate watch's rolling-average alert, the duration parser
 * and the samples decoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <ei.h>

#include "gate/config/config.h"
#include "gate/config/interval.h"
#include "gate/probe/sample.h"
#include "model/finding.h"
#include "rules/repeat.h"
#include "rules/rules.h"
#include "rules/trend_samples.h"
#include "rules/watch_alert.h"

static void snap(struct snapshot *s, int64_t base)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		s->mem[i] = base;
		s->have[i] = true;
	}
	s->process_count = 100;
	s->atom_count = 20000;
	s->ets_count = 30;
}

static const struct finding *find(const struct findings *f, const char *rule, const char *subject)
{
	for (size_t i = 0; i < f->count; i++)
		if (strcmp(f->items[i].rule, rule) == 0 &&
		    strcmp(f->items[i].subject, subject) == 0)
			return &f->items[i];
	return NULL;
}

/* runs: the ets figure after run 1..n (the other categories stay at 50 MB) */
static void build(struct repeat_data *d, struct snapshot *snaps, const int64_t *ets, size_t n)
{
	struct snapshot start;
	snap(&start, 50000000);
	start.mem[MEM_ETS] = 1000000;
	memset(d, 0, sizeof(*d));
	repeat_point_from(&d->start, &start);
	for (size_t k = 0; k < n; k++) {
		snap(&snaps[k], 50000000);
		snaps[k].mem[MEM_ETS] = ets[k];
		assert_int_equal(repeat_data_add(d, &snaps[k], 10, 0, 1000), 0);
	}
}

static void judge(const int64_t *ets, size_t n, struct findings *out, struct repeat_data *d)
{
	struct snapshot snaps[8], jb, ja;
	struct growth_config cfg;
	growth_config_default(&cfg);
	build(d, snaps, ets, n);
	assert_int_equal(repeat_judged_pair(&jb, &ja, d, &snaps[0], &snaps[n - 1]), 0);
	assert_int_equal(growth_check(out, &jb, &ja, &cfg), 0);
	assert_int_equal(repeat_annotate(out, d), 0);
}

/* a cache filled by run 1 and full after it: passes, although before -> after grew 7 MB */
static void test_plateau_passes(void **state)
{
	(void)state;
	int64_t ets[] = {8000000, 8000016, 7999990};
	struct findings out = {0};
	struct repeat_data d;
	judge(ets, 3, &out, &d);
	const struct finding *f = find(&out, "growth", "ets");
	assert_non_null(f);
	assert_int_equal(f->verdict, VERDICT_PASS);
	assert_int_equal(f->before, 8000000);
	assert_int_equal(f->after, 8000000 - 2 * 26); /* the smallest growth, -26 B, twice */
	assert_non_null(strstr(f->message, "--repeat 3: runs 2..3 grew +16 B, -26 B"));
	assert_int_equal(repeat_continuing(&d, MEM_ETS), -26);
	assert_int_equal(repeat_run_growth(&d, 1, MEM_ETS), 7000000);
	findings_clear(&out);
	repeat_data_clear(&d);
}

/* a leak of 3 MB every run fails, judged on 2 x 3 MB */
static void test_leak_every_run_fails(void **state)
{
	(void)state;
	int64_t ets[] = {8000000, 11000000, 14100000};
	struct findings out = {0};
	struct repeat_data d;
	judge(ets, 3, &out, &d);
	const struct finding *f = find(&out, "growth", "ets");
	assert_int_equal(f->verdict, VERDICT_FAIL);
	assert_int_equal(f->delta, 6000000);
	findings_clear(&out);
	repeat_data_clear(&d);
}

/* one jump in run 2 only (a second cache warming late) is not continuing growth */
static void test_one_off_jump_passes(void **state)
{
	(void)state;
	int64_t ets[] = {8000000, 15000000, 15000100, 15000000};
	struct findings out = {0};
	struct repeat_data d;
	judge(ets, 4, &out, &d);
	assert_int_equal(find(&out, "growth", "ets")->verdict, VERDICT_PASS);
	assert_int_equal(repeat_continuing(&d, MEM_ETS), -100);
	findings_clear(&out);
	repeat_data_clear(&d);
}

static void test_pair_needs_two_runs(void **state)
{
	(void)state;
	int64_t ets[] = {8000000};
	struct snapshot snaps[1], jb, ja;
	struct repeat_data d;
	build(&d, snaps, ets, 1);
	assert_int_equal(repeat_judged_pair(&jb, &ja, &d, &snaps[0], &snaps[0]), -1);
	repeat_data_clear(&d);
	repeat_data_clear(NULL);
}

/* counts extrapolate like the categories, never below zero */
static void test_counts_extrapolate(void **state)
{
	(void)state;
	struct snapshot s[3], jb, ja;
	int64_t ets[] = {1, 1, 1};
	struct repeat_data d;
	memset(&d, 0, sizeof(d));
	for (int k = 0; k < 3; k++) {
		snap(&s[k], 1000);
		s[k].mem[MEM_ETS] = ets[k];
		s[k].process_count = 100 + 50 * k;
		s[k].atom_count = 5 - 5 * k; /* shrinks below zero when extrapolated */
		assert_int_equal(repeat_data_add(&d, &s[k], 1, 0, 1), 0);
	}
	assert_int_equal(repeat_judged_pair(&jb, &ja, &d, &s[0], &s[2]), 0);
	assert_int_equal(ja.process_count, 200);
	assert_int_equal(ja.atom_count, 0);
	repeat_data_clear(&d);
}

static void series(struct sample_series *s, size_t n, int64_t step_ms, int64_t base,
                   int64_t rise_per_sample, int64_t sawtooth)
{
	s->items = calloc(n, sizeof(*s->items));
	s->n = n;
	s->interval_ms = step_ms;
	for (size_t i = 0; i < n; i++) {
		s->items[i].t_ms = (int64_t)i * step_ms;
		for (int c = 0; c < MEM_CAT_COUNT; c++)
			s->items[i].mem[c] =
			        base + (int64_t)i * rise_per_sample + (i % 3 == 0 ? sawtooth : 0);
	}
}

static void test_soak_rise_fails_sawtooth_passes(void **state)
{
	(void)state;
	struct growth_config cfg;
	growth_config_default(&cfg);
	struct sample_series s = {0};
	struct findings out = {0};
	/* 2 minutes, 1 s apart, +100 kB a sample with GC's saw-tooth on top: +12 MB */
	series(&s, 121, 1000, 40000000, 100000, 5000000);
	assert_int_equal(trend_samples_check(&out, &s, &cfg), 0);
	const struct finding *f = find(&out, "soak", "ets");
	assert_non_null(f);
	assert_int_equal(f->verdict, VERDICT_FAIL);
	assert_in_range(f->delta, 11500000, 12500000);
	findings_clear(&out);
	sample_series_clear(&s);
	/* a big saw-tooth with no rise */
	series(&s, 121, 1000, 40000000, 0, 20000000);
	assert_int_equal(trend_samples_check(&out, &s, &cfg), 0);
	assert_int_equal(find(&out, "soak", "ets")->verdict, VERDICT_PASS);
	findings_clear(&out);
	sample_series_clear(&s);
	/* a short run: no finding, only the chart */
	series(&s, 13, 250, 40000000, 1000000, 0);
	assert_int_equal(trend_samples_check(&out, &s, &cfg), 0);
	assert_int_equal(out.count, 0);
	sample_series_clear(&s);
	assert_int_equal(trend_samples_check(&out, NULL, &cfg), 0);
}

static void test_watch_alert(void **state)
{
	(void)state;
	static struct watch_window w;
	int64_t mem[MEM_CAT_COUNT];
	bool have[MEM_CAT_COUNT];
	struct watch_alert al[MEM_CAT_COUNT];
	watch_window_init(&w, 10);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		mem[c] = 10000000;
		have[c] = true;
	}
	have[MEM_ATOM] = false;
	/* no alert until WATCH_MIN_HISTORY samples */
	mem[MEM_ETS] = 50000000;
	assert_int_equal(watch_window_check(&w, mem, have, 20, 1000000, al), 0);
	mem[MEM_ETS] = 10000000;
	for (int i = 0; i < 3; i++)
		watch_window_push(&w, mem, have);
	/* +15 %: under the margin */
	mem[MEM_ETS] = 11500000;
	assert_int_equal(watch_window_check(&w, mem, have, 20, 1000000, al), 0);
	/* +30 % over the floor: one alert, on ets */
	mem[MEM_ETS] = 13000000;
	assert_int_equal(watch_window_check(&w, mem, have, 20, 1000000, al), 1);
	assert_int_equal(al[0].cat, MEM_ETS);
	assert_int_equal(al[0].average, 10000000);
	/* +30 % but under a 5 MB floor */
	assert_int_equal(watch_window_check(&w, mem, have, 20, 5000000, al), 0);
	/* a level that stays becomes the average after a window */
	for (int i = 0; i < 10; i++)
		watch_window_push(&w, mem, have);
	assert_int_equal(watch_window_check(&w, mem, have, 20, 1000000, al), 0);
	watch_window_init(&w, 0);
	assert_int_equal(w.size, 1);
}

static void test_interval_parse(void **state)
{
	(void)state;
	int64_t ms = -1;
	assert_int_equal(interval_parse("250ms", 10, 3600000, &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(interval_parse("5s", 10, 3600000, &ms), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(interval_parse("1.5", 10, 3600000, &ms), 0);
	assert_int_equal(ms, 1500);
	assert_int_equal(interval_parse("2min", 10, 3600000, &ms), 0);
	assert_int_equal(ms, 120000);
	assert_int_equal(interval_parse("24h", 10, 86400000, &ms), 0);
	assert_int_equal(ms, 86400000);
	ms = 7;
	const char *bad[] = {"", "s", "-1s", "5 parsecs", "1e400", "2h", "5ms", "nan", NULL};
	for (size_t i = 0; bad[i]; i++)
		assert_int_equal(interval_parse(bad[i], 10, 3600000, &ms), -1);
	assert_int_equal(ms, 7);
}

/* encodes #{interval_ms => 250, samples => [N tuples]} and decodes it */
static int decode_samples(size_t n, size_t fields, int64_t t_step, struct sample_series *out,
                          char *err, size_t errlen)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 2);
	ei_x_encode_atom(&x, "interval_ms");
	ei_x_encode_long(&x, 250);
	ei_x_encode_atom(&x, "samples");
	if (n)
		ei_x_encode_list_header(&x, (long)n);
	for (size_t i = 0; i < n; i++) {
		ei_x_encode_tuple_header(&x, (long)fields);
		ei_x_encode_long(&x, (long)(i * (size_t)t_step));
		for (size_t k = 1; k < fields; k++)
			ei_x_encode_long(&x, (long)(1000 * k));
	}
	ei_x_encode_empty_list(&x);
	struct term *t = NULL;
	size_t idx = 0;
	char derr[128];
	assert_int_equal(term_decode(&t, (const unsigned char *)x.buff, (size_t)x.index, &idx, NULL,
	                             derr, sizeof(derr)),
	                 0);
	int rc = sample_decode(t, out, err, errlen);
	term_free(t);
	ei_x_free(&x);
	return rc;
}

static void test_sample_decode(void **state)
{
	(void)state;
	struct sample_series s;
	char err[256];
	assert_int_equal(decode_samples(3, 14, 250, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.interval_ms, 250);
	assert_int_equal(s.items[2].t_ms, 500);
	assert_int_equal(s.items[0].mem[MEM_TOTAL], 1000);
	assert_int_equal(s.items[0].mem[MEM_ETS], 9000);
	assert_int_equal(s.items[0].port_count, 13000);
	sample_series_clear(&s);
	assert_int_equal(decode_samples(0, 14, 250, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(decode_samples(2, 13, 250, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "entry 1 is malformed"));
	assert_int_equal(s.items, NULL);
	/* time going backwards */
	assert_int_equal(decode_samples(2, 14, -5, &s, err, sizeof(err)), -1);
	/* more than the cap */
	assert_int_equal(decode_samples(SAMPLE_CAP + 1, 14, 1, &s, err, sizeof(err)), -1);
}

/* [run] repeat in gate.toml; out of range is an error naming the place */
static void test_config_run_repeat(void **state)
{
	(void)state;
	struct config cfg;
	char err[512];
	const char *ok = "[run]\nrepeat = 3\n", *bad = "[run]\nrepeat = 1000\n";
	assert_int_equal(config_default(&cfg), 0);
	assert_int_equal(cfg.repeat, 1);
	assert_int_equal(config_load_text(&cfg, ok, strlen(ok), "t.toml", err, sizeof(err)), 0);
	assert_int_equal(cfg.repeat, 3);
	config_clear(&cfg);
	assert_int_equal(config_default(&cfg), 0);
	assert_int_equal(config_load_text(&cfg, bad, strlen(bad), "t.toml", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "t.toml:2:"));
	assert_non_null(strstr(err, "run.repeat"));
	assert_int_equal(cfg.repeat, 1);
	config_clear(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_plateau_passes),
	        cmocka_unit_test(test_leak_every_run_fails),
	        cmocka_unit_test(test_one_off_jump_passes),
	        cmocka_unit_test(test_pair_needs_two_runs),
	        cmocka_unit_test(test_counts_extrapolate),
	        cmocka_unit_test(test_soak_rise_fails_sawtooth_passes),
	        cmocka_unit_test(test_watch_alert),
	        cmocka_unit_test(test_interval_parse),
	        cmocka_unit_test(test_sample_decode),
	        cmocka_unit_test(test_config_run_repeat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
