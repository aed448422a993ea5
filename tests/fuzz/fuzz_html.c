/* tests/fuzz/fuzz_html.c: the HTML report (ci/report/html.c) fed hostile strings. Oracle: the page
 * is well-formed XML that libxml2 reads back (so no name broke out of its element or
 * attribute), valid UTF-8, and holds no <script> and no </style> but gate's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "ci/report/html.h"
#include "tests/fuzz/fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_model m;
	char *buf = NULL;
	size_t len = 0, at = 0;
	fuzz_model_make(&m, data, size);
	struct report_data d = fuzz_report_data(&m, data, size);
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		fuzz_fail("open_memstream");
	if (html_report_write(f, &d) < 0)
		fuzz_fail("html_report_write failed");
	fclose(f);
	if (fuzz_utf8_scan((const unsigned char *)buf, len, &at, 0) < 0)
		fuzz_fail("invalid UTF-8 at byte %zu of the page", at);
	if (fuzz_find_ci(buf, len, "<script"))
		fuzz_fail("the page has a <script");
	const char *style_end = fuzz_find_ci(buf, len, "</style");
	if (style_end &&
	    fuzz_find_ci(style_end + 1, len - (size_t)(style_end + 1 - buf), "</style"))
		fuzz_fail("the page has a second </style");
	/* the page is XHTML-compatible: the XML parser must read it whole */
	xmlDocPtr doc = xmlReadMemory(buf, (int)len, "report.html", "UTF-8",
	                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
	                                      XML_PARSE_HUGE);
	if (!doc)
		fuzz_fail("the page is not well-formed:\n%.4000s", buf);
	xmlFreeDoc(doc);
	free(buf);
	fuzz_model_clear(&m);
	return 0;
}
