/* ci/report/xml_lib.c: libxml2 opened on first use (xml_lib.h). */
#include "ci/report/xml_lib.h"

#include "base/lazylib.h"

#ifndef GATE_DIRECT_LIBS

struct xml2_api xml2_api;

#define XML2_NAME(f) #f,
static const char *const xml2_names[] = {XML2_FUNCS(XML2_NAME)};
#define XML2_COUNT (sizeof(xml2_names) / sizeof(xml2_names[0]))
_Static_assert(sizeof(struct xml2_api) == XML2_COUNT * sizeof(void *),
               "one table slot per function of XML2_FUNCS");

/* the soname of the libxml2 whose headers gate is compiled with: libxml2.so.2 from 2.0 to
 * 2.13, libxml2.so.16 from 2.14 */
#if LIBXML_VERSION >= 21400
#define XML2_SONAME "libxml2.so.16"
#else
#define XML2_SONAME "libxml2.so.2"
#endif
static struct lazylib xml2_lazy = LAZYLIB_INIT(
        XML2_SONAME, "libxml2 (Debian: apt-get install libxml2; Alpine: apk add libxml2)",
        xml2_names, &xml2_api, XML2_COUNT);

int xml2_lib_load(char *err, size_t errlen)
{
	return lazylib_open(&xml2_lazy, err, errlen);
}

void xml2_lib_warm(void)
{
	static struct lazylib *const libs[] = {&xml2_lazy};
	lazylib_warm(libs, 1);
}

const char *xml2_lib_version(void)
{
	/* a variable in every libxml2 (a macro over an accessor in some headers) */
	const char *const *v = lazylib_symbol(&xml2_lazy, "xmlParserVersion");
	return v && *v ? *v : "";
}

#else

int xml2_lib_load(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return 0;
}

void xml2_lib_warm(void)
{
}

const char *xml2_lib_version(void)
{
	return xmlParserVersion;
}

#endif
