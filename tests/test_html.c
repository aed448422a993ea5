/* tests/test_html.c: the HTML report: well-formed as strict XML with hostile text from the
 * suite, no script, no external reference, the trend chart's points, the top tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "ci/report/html.h"
#include "model/finding.h"
#include "tests/report_fixture.h"

static char *render(const struct report_data *d, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	assert_non_null(f);
	assert_int_equal(html_report_write(f, d), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static xmlDocPtr parse_strict(const char *text, size_t len)
{
	xmlDocPtr doc = xmlReadMemory(text, (int)len, "report.html", "UTF-8",
	                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc) {
		const xmlError *e = xmlGetLastError();
		fail_msg("the report is not well-formed XML: line %d: %s", e ? e->line : 0,
		         e && e->message ? e->message : "?");
	}
	return doc;
}

static long count(xmlDocPtr doc, const char *xpath)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	assert_non_null(ctx);
	xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
	xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST xpath, ctx);
	assert_non_null(o);
	long n = o->nodesetval ? o->nodesetval->nodeNr : 0;
	xmlXPathFreeObject(o);
	xmlXPathFreeContext(ctx);
	return n;
}

static void test_html__hostile_well_formed(void **state)
{
	(void)state;
	struct rfx x;
	size_t len;
	rfx_build(&x, true);
	char *t = render(&x.d, &len);
	xmlDocPtr doc = parse_strict(t, len);
	assert_int_equal(count(doc, "//script"), 0);
	assert_int_equal(count(doc, "//b"), 0); /* the module's <b> stayed text */
	assert_int_equal(count(doc, "//*[@src or @href]"), 0);
	/* the hostile name is there as text, in the rules table and the failed tests */
	assert_true(count(doc, "//td[contains(., '<script>alert(1)</script> ]]> | pipe')]") >= 2);
	assert_int_equal(count(doc, "//tr[contains(@class,'failed-test')]"), 2);
	assert_null(strstr(t, "\033"));
	assert_null(strstr(t, "\r"));
	xmlFreeDoc(doc);
	free(t);
	rfx_clear(&x);
}

/* Found by fuzz_html: with every rule passing, the folded checks were <details open>, an
 * attribute without a value, so the page stopped being well-formed XML. */
static void test_html__all_passing_well_formed(void **state)
{
	(void)state;
	struct findings f = {0};
	struct report_data d = {.project = "p"};
	size_t len;
	assert_int_equal(findings_add(&f, "growth", "total", VERDICT_PASS, 1, 2, 0, 10, "ok"), 0);
	d.findings = &f;
	char *t = render(&d, &len);
	xmlDocPtr doc = parse_strict(t, len);
	assert_int_equal(count(doc, "//details[@open]"), 1);
	xmlFreeDoc(doc);
	free(t);
	findings_clear(&f);
}

static void test_html__content(void **state)
{
	(void)state;
	struct rfx x;
	size_t len;
	rfx_build(&x, false);
	char *t = render(&x.d, &len);
	xmlDocPtr doc = parse_strict(t, len);
	/* one point per noted run, and this run beside them */
	assert_int_equal(count(doc, "//s:svg[@id='trend-chart']/s:circle[@class='point']"), 3);
	assert_int_equal(count(doc, "//s:svg[@id='trend-chart']/s:path[@class='current']"), 1);
	/* a bar pair per category */
	assert_int_equal(count(doc, "//s:g[@class='category']"), MEM_CAT_COUNT);
	assert_int_equal(count(doc, "//s:rect[@class='bar-after fail']"), 2); /* binary, ets */
	assert_int_equal(count(doc, "//tr[@class='process']"), 2);
	assert_int_equal(count(doc, "//tr[@class='ets']"), 2);
	assert_int_equal(count(doc, "//h1[@id='verdict' and .='gate: FAILED']"), 1);
	/* failures in the rule table, passing and skipped checks folded under <details> */
	assert_int_equal(count(doc, "//section[@id='rules']/table//tr[contains(@class,'FAIL')]"),
	                 3);
	assert_int_equal(count(doc, "//section[@id='rules']/details//tbody/tr"),
	                 (long)x.findings.count - 3);
	/* failures first in the rule table */
	assert_int_equal(count(doc, "//section[@id='rules']//tbody/tr[1][contains(@class,'FAIL')]"),
	                 1);
	assert_non_null(strstr(t, "Content-Security-Policy"));
	/* the culprit lists and top growing modules */
	/* each culprit list once; a later finding says how many of its lists are shown above */
	assert_int_equal(
	        count(doc, "//pre[@class='detail' and contains(., '1. Demo.CacheTest (sync)')]"),
	        1);
	assert_int_equal(count(doc, "//p[@class='detail' and starts-with(., 'and ') and "
	                            "contains(., 'shown above')]"),
	                 1);
	/* the headline under the verdict: what grew and the failed tests, before the charts */
	assert_int_equal(count(doc, "//section[@id='headline']/ol/li[@class='fail']"), 3);
	assert_int_equal(count(doc, "//section[@id='headline']/ul[@class='failed-tests']/li"),
	                 count(doc, "//tr[contains(@class,'failed-test')]"));
	assert_int_equal(
	        count(doc,
	              "//section[@id='headline'][following-sibling::section[@id='categories']]"),
	        1);
	assert_int_equal(count(doc, "//section[@id='top-growing']//tr[@class='growing']"), 2);
	assert_int_equal(count(doc, "//tr[@class='growing'][1]/td[2][.='Demo.CacheTest']"), 1);
	assert_non_null(strstr(t, "LeakEts.Corpus:init/1 <em>(born during the run)</em>"));
	xmlFreeDoc(doc);
	free(t);

	/* no history: no points, a note how to get them */
	x.d.nhistory = 0;
	t = render(&x.d, &len);
	doc = parse_strict(t, len);
	assert_int_equal(count(doc, "//s:circle[@class='point']"), 0);
	assert_int_equal(count(doc, "//p[@id='trend-empty']"), 1);
	xmlFreeDoc(doc);
	free(t);

	/* one noted run, equal to this run: no division by zero, one point */
	x.d.nhistory = 1;
	x.hist[0].mem[MEM_TOTAL] = x.after.mem[MEM_TOTAL];
	t = render(&x.d, &len);
	doc = parse_strict(t, len);
	assert_int_equal(count(doc, "//s:circle[@class='point']"), 1);
	assert_null(strstr(t, "nan"));
	assert_null(strstr(t, "inf"));
	xmlFreeDoc(doc);
	free(t);
	rfx_clear(&x);
}

/* What grew, in a table at the top, before the category bars; hostile names stay
 * text. */
static void test_html__what_grew(void **state)
{
	(void)state;
	struct rfx x;
	size_t len;
	rfx_build(&x, false);
	x.after.grew_ets = calloc(1, sizeof(*x.after.grew_ets));
	assert_non_null(x.after.grew_ets);
	x.after.ngrew_ets = 1;
	x.after.have_growth = true;
	struct ets_growth *e = &x.after.grew_ets[0];
	e->name = strdup("corpus_<b>cache</b>");
	e->id = strdup("#Ref<0.1.2.3>");
	e->owner_pid = strdup("<0.200.0>");
	e->owner_name = strdup("Corpus.Cache");
	e->rows = 60000;
	e->bytes_before = 2440;
	e->bytes = 7102440;
	char *t = render(&x.d, &len);
	xmlDocPtr doc = parse_strict(t, len);
	assert_int_equal(count(doc, "//section[@id='what-grew']//tr[@class='grew']"), 1);
	assert_int_equal(count(doc, "//b"), 0);
	assert_int_equal(count(doc, "//section[@id='what-grew']//td[.='ETS table corpus_<b>cache"
	                            "</b> (owner Corpus.Cache) +60 000 rows, +7.1 MB']"),
	                 1);
	assert_int_equal(count(doc, "//section[@id='what-grew']/following::s:g[@class='category']"),
	                 MEM_CAT_COUNT);
	xmlFreeDoc(doc);
	free(t);

	/* nothing grew: no table */
	x.d.after = NULL;
	t = render(&x.d, &len);
	doc = parse_strict(t, len);
	assert_int_equal(count(doc, "//section[@id='what-grew']"), 0);
	xmlFreeDoc(doc);
	free(t);
	rfx_clear(&x);
}

static void test_html__error_only(void **state)
{
	(void)state;
	struct report_data d = {.error = "node <x> died & \"was\" gone"};
	size_t len;
	char *t = render(&d, &len);
	xmlDocPtr doc = parse_strict(t, len);
	assert_int_equal(count(doc, "//h1[.='gate: ERROR']"), 1);
	assert_int_equal(count(doc, "//section[@id='error']/pre[.='node <x> died & \"was\" gone']"),
	                 1);
	xmlFreeDoc(doc);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_html__hostile_well_formed),
	        cmocka_unit_test(test_html__all_passing_well_formed),
	        cmocka_unit_test(test_html__content),
	        cmocka_unit_test(test_html__what_grew),
	        cmocka_unit_test(test_html__error_only),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	xmlCleanupParser();
	return rc;
}
