/* tests/fuzz/fuzz_junit.c: the JUnit writer (ci/report/junit.c) fed hostile strings. Oracle: the
 * report is written and is well-formed XML that libxml2 reads back, every time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "tests/fuzz/fuzz.h"

static char path[64];

static void cleanup(void)
{
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) { /* a private tmpfs directory: the writer fsyncs */
		snprintf(path, sizeof(path), "/dev/shm/gate-fuzz-junit.XXXXXX");
		if (!mkdtemp(path))
			fuzz_fail("mkdtemp");
		strcat(path, "/junit.xml");
		atexit(cleanup);
	}
	struct fuzz_model m;
	char err[1024];
	fuzz_model_make(&m, data, size);
	struct report_data d = m.meta;
	d.findings = &m.findings;
	d.tests = &m.run;
	if (junit_write(path, &d, err, sizeof(err)) < 0)
		fuzz_fail("junit_write: %s", err);
	xmlDocPtr doc = xmlReadFile(path, NULL,
	                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
	                                    XML_PARSE_HUGE);
	if (!doc)
		fuzz_fail("the report is not well-formed XML (kept at %s)", path);
	xmlFreeDoc(doc);
	fuzz_model_clear(&m);
	return 0;
}
