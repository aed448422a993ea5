/* tests/test_hardening.c: regressions for what the fuzz targets (tests/fuzz) found, one test
 * per bug, on the smallest input that showed it; and the output-path policy (ci/outpath). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ei.h>
#include <libxml/parser.h>

#include "base/outpath.h"
#include "ci/report/junit.h"
#include "ci/report/summary.h"
#include "ci/store/snapshot_json.h"
#include "gate/node/term.h"
#include "gate/probe/probe.h"
#include "model/finding.h"
#include "tests/helpers.h"

/* ---- the term decoder (fuzz_term) ---- */

/* A pid whose node is a pid whose node is ...: each level was decoded at depth 1, so the
 * nesting was bounded only by the input's length (a stack overflow on a long reply). */
static void test_hardening__pid_node_nesting_is_capped(void **state)
{
	(void)state;
	enum { LEVELS = 100000 };
	unsigned char *buf = malloc(LEVELS + 1);
	assert_non_null(buf);
	buf[0] = 131;
	memset(buf + 1, 88 /* NEW_PID_EXT */, LEVELS);
	struct term *t = NULL;
	size_t idx = 0;
	char err[256] = "";
	assert_int_equal(term_decode(&t, buf, LEVELS + 1, &idx, NULL, err, sizeof(err)), -1);
	assert_null(t);
	assert_non_null(strstr(err, "nested deeper than 32"));
	free(buf);
}

/* A pid whose "node" is a list of binaries: refused, and the list freed whole (it was freed
 * as if it were an atom's text: its binaries leaked; ASan's leak check sees it). */
static void test_hardening__pid_with_list_node_is_freed(void **state)
{
	(void)state;
	static const unsigned char buf[] = {
	        131, 88, 108, 0, 0, 0, 1, 109, 0, 0, 0, 2, 'h', 'i',
	        106, 0,  0,   0, 1, 0, 0, 0,   2, 0, 0, 0, 3,
	};
	struct term *t = NULL;
	size_t idx = 0;
	char err[256] = "";
	assert_int_equal(term_decode(&t, buf, sizeof(buf), &idx, NULL, err, sizeof(err)), -1);
	assert_null(t);
	assert_non_null(strstr(err, "atom expected"));
}

/* ATOM_EXT is Latin-1: 'café' arrives as 63 61 66 E9, which is not UTF-8; every writer
 * (JSON above all) needs UTF-8. */
static void test_hardening__latin1_atom_becomes_utf8(void **state)
{
	(void)state;
	static const unsigned char atom_ext[] = {131, 100, 0, 4, 'c', 'a', 'f', 0xE9};
	static const unsigned char small_atom_ext[] = {131, 115, 2, 0xFF, 'x'};
	struct term *t = NULL;
	size_t idx = 0;
	char err[256] = "";
	assert_int_equal(term_decode(&t, atom_ext, sizeof(atom_ext), &idx, NULL, err, sizeof(err)),
	                 0);
	assert_string_equal(term_text(t), "caf\xC3\xA9");
	assert_int_equal(t->u.bin.len, 5);
	term_free(t);
	idx = 0;
	assert_int_equal(term_decode(&t, small_atom_ext, sizeof(small_atom_ext), &idx, NULL, err,
	                             sizeof(err)),
	                 0);
	assert_string_equal(term_text(t), "\xC3\xBFx");
	term_free(t);
}

/* ---- the model and writers (fuzz_junit, fuzz_summary, fuzz_snapshot) ---- */

/* after - before overflowed (UB) on figures from a hostile node or file. */
static void test_hardening__delta_saturates(void **state)
{
	(void)state;
	struct findings f = {0};
	assert_int_equal(
	        findings_add(&f, "growth", "total", VERDICT_FAIL, INT64_MIN, INT64_MAX, 0, 10, "m"),
	        0);
	assert_int_equal(
	        findings_add(&f, "growth", "total", VERDICT_FAIL, INT64_MAX, INT64_MIN, 0, 10, "m"),
	        0);
	assert_int_equal(f.items[0].delta, INT64_MAX);
	assert_int_equal(f.items[1].delta, INT64_MIN);
	assert_false(finding_adjusted(&f.items[0]));
	assert_false(finding_adjusted(&f.items[1]));
	f.items[1].delta = 0;
	assert_true(finding_adjusted(&f.items[1]));
	findings_clear(&f);
}

/* A failed finding without a message printed "RULE SUBJECT failed" raw: a subject from the
 * node (a table's name) could carry escapes to the terminal. */
static void test_hardening__summary_subject_without_message(void **state)
{
	(void)state;
	struct findings f = {0};
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(findings_add(&f, "ets", "t\x1b]0;owned\x07\x1b[2J\xf4\x90\x80\x80",
	                              VERDICT_FAIL, 1, 2, 0, -1, NULL),
	                 0);
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	summary_print(out, &(struct report_data){.findings = &f}, false);
	fclose(out);
	assert_non_null(strstr(text, "ets t"));
	assert_null(strchr(text, 0x1b));
	assert_null(strchr(text, 0x07));
	assert_null(strstr(text, "\xf4\x90"));
	free(text);
	findings_clear(&f);
}

/* The failure body of a rule other than growth was written without xml_safe: an escape in
 * a table's name made the whole report unreadable XML. */
static void test_hardening__junit_rule_body_is_safe(void **state)
{
	(void)state;
	char dir[] = "/tmp/gate_test_hardening.XXXXXX", path[96], err[512] = "";
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "ets", "tab", VERDICT_FAIL, 1, 2, 0, -1,
	                              "ETS table \x1b[2J\x01t\xff grew ]]> </script>"),
	                 0);
	assert_int_equal(junit_write(path, &(struct report_data){.findings = &f}, err, sizeof(err)),
	                 0);
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
	if (!doc)
		fail_msg("%s is not well-formed XML", path);
	xmlFreeDoc(doc);
	findings_clear(&f);
	rm_rf(dir);
}

/* A table name that is not UTF-8 made snapshot_json return NULL: `gate snapshot --json`
 * said "out of memory" and wrote nothing. */
static void test_hardening__snapshot_json_bad_utf8_name(void **state)
{
	(void)state;
	struct snapshot s;
	memset(&s, 0, sizeof(s));
	struct ets_info e = {.name = "caf\xE9",
	                     .id = "x\xC0\xAF",
	                     .type = "set",
	                     .protection = "public",
	                     .owner_pid = "<0.1.0>"};
	s.ets = &e;
	s.nets = 1;
	snprintf(s.node, sizeof(s.node), "n\xFF@127.0.0.1");
	json_t *j = snapshot_json(&s);
	assert_non_null(j);
	json_t *ets0 = json_array_get(json_object_get(j, "ets"), 0);
	assert_string_equal(json_string_value(json_object_get(ets0, "name")), "caf\xEF\xBF\xBD");
	assert_string_equal(json_string_value(json_object_get(ets0, "id")),
	                    "x\xEF\xBF\xBD\xEF\xBF\xBD");
	assert_string_equal(json_string_value(json_object_get(j, "node")),
	                    "n\xEF\xBF\xBD@127.0.0.1");
	json_decref(j);
}

/* ---- figures from outside stay in [0, MODEL_FIGURE_MAX] (fuzz_rules) ---- */

/* A snapshot reply whose total is v and whose one process has memory pmem. */
static int decode_with(int64_t v, int64_t pmem, char *err, size_t errlen)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 8);
	ei_x_encode_atom(&x, "memory");
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_atom(&x, "total");
	ei_x_encode_longlong(&x, v);
	static const char *const keys[] = {"process_count", "atom_count", "ets_count",
	                                   "port_count",    "gc_us",      "taken_at_ms"};
	for (size_t i = 0; i < 6; i++) {
		ei_x_encode_atom(&x, keys[i]);
		ei_x_encode_long(&x, 1);
	}
	ei_x_encode_atom(&x, "procs");
	ei_x_encode_list_header(&x, 1);
	ei_x_encode_tuple_header(&x, 13);
	ei_x_encode_binary(&x, "<0.1.0>", 7);
	ei_x_encode_atom(&x, "nil");
	ei_x_encode_binary(&x, "m:f/0", 5);
	ei_x_encode_binary(&x, "m:f/0", 5);
	ei_x_encode_longlong(&x, pmem);
	for (int i = 0; i < 7; i++)
		ei_x_encode_long(&x, 0);
	ei_x_encode_atom(&x, "false");
	ei_x_encode_empty_list(&x);
	struct term *t = NULL;
	size_t idx = 0;
	assert_int_equal(term_decode(&t, (const unsigned char *)x.buff, (size_t)x.index, &idx, NULL,
	                             err, errlen),
	                 0);
	struct snapshot s;
	int rc = probe_snapshot_decode(t, &s, err, errlen);
	if (rc == 0)
		snapshot_clear(&s);
	term_free(t);
	ei_x_free(&x);
	return rc;
}

/* A node could send INT64_MIN or INT64_MAX as a figure, and every rule's after - before
 * overflowed (UB; found by fuzz_rules in rules/binary.c). */
static void test_hardening__figures_in_range(void **state)
{
	(void)state;
	char err[512] = "";
	assert_int_equal(decode_with(MODEL_FIGURE_MAX, MODEL_FIGURE_MAX, err, sizeof(err)), 0);
	assert_int_equal(decode_with(MODEL_FIGURE_MAX + 1, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "memory category total"));
	assert_int_equal(decode_with(5, INT64_MIN, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "procs entry 1 is malformed"));
	assert_int_equal(decode_with(5, INT64_MAX, err, sizeof(err)), -1);
}

/* ---- ci/outpath: no writes out of the project through a symlink ---- */

static void test_hardening__outpath_policy(void **state)
{
	(void)state;
	char root[] = "/tmp/gate_test_outpath.XXXXXX", proj[128], out[128], p[256], l[256];
	char err[1024];
	assert_non_null(mkdtemp(root));
	snprintf(proj, sizeof(proj), "%s/proj", root);
	snprintf(out, sizeof(out), "%s/outside", root);
	assert_int_equal(mkdir(proj, 0755), 0);
	assert_int_equal(mkdir(out, 0755), 0);

	/* plain paths inside, existing or not, with . and .. that stay inside */
	snprintf(p, sizeof(p), "%s/_build/gate/junit.xml", proj);
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/a/../b/./c.xml", proj);
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), 0);
	/* spelled outside: asked for */
	snprintf(p, sizeof(p), "%s/x.xml", out);
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/../outside/x.xml", proj);
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), 0);
	/* a directory link out of the project, with missing directories below it */
	snprintf(l, sizeof(l), "%s/_build", proj);
	assert_int_equal(symlink(out, l), 0);
	snprintf(p, sizeof(p), "%s/_build/gate/junit.xml", proj);
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "the report"));
	assert_non_null(strstr(err, "leads outside the project"));
	assert_non_null(strstr(err, "--allow-outside"));
	assert_non_null(strstr(err, out));
	unlink(l);
	/* a link inside the project to another place inside it */
	snprintf(l, sizeof(l), "%s/real", proj);
	assert_int_equal(mkdir(l, 0755), 0);
	snprintf(p, sizeof(p), "%s/alias", proj);
	assert_int_equal(symlink("real", p), 0);
	snprintf(p, sizeof(p), "%s/alias/r.xml", proj);
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), 0);
	/* the file itself a dangling link out of the project, absolute and relative */
	snprintf(l, sizeof(l), "%s/victim", out);
	snprintf(p, sizeof(p), "%s/real/r.xml", proj);
	assert_int_equal(symlink(l, p), 0);
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), -1);
	unlink(p);
	assert_int_equal(symlink("../../outside/victim", p), 0);
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), -1);
	unlink(p);
	assert_int_equal(symlink("../other.xml", p), 0); /* stays inside */
	assert_int_equal(outpath_check(proj, p, "the report", err, sizeof(err)), 0);
	rm_rf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_hardening__pid_node_nesting_is_capped),
	        cmocka_unit_test(test_hardening__pid_with_list_node_is_freed),
	        cmocka_unit_test(test_hardening__latin1_atom_becomes_utf8),
	        cmocka_unit_test(test_hardening__delta_saturates),
	        cmocka_unit_test(test_hardening__summary_subject_without_message),
	        cmocka_unit_test(test_hardening__junit_rule_body_is_safe),
	        cmocka_unit_test(test_hardening__snapshot_json_bad_utf8_name),
	        cmocka_unit_test(test_hardening__figures_in_range),
	        cmocka_unit_test(test_hardening__outpath_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
