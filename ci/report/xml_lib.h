/* ci/report/xml_lib.h: libxml2 for gate's own code, opened on first use (base/lazylib.h).
 *
 * Include this instead of linking libxml2, with no libxml2 header after it (it includes those
 * gate uses). Every libxml2 function gate calls (with the accessors behind its
 * xmlStructuredError and xmlStructuredErrorContext macros) is listed in XML2_FUNCS and,
 * below the table, named by a macro that calls it through the table. xml2_lib_load() opens the
 * library before the first call (junit_write, gate --version); a function missing from the list is
 * a link error of build/gate, never a run-time one. With GATE_DIRECT_LIBS (make release) the names
 * are libxml2's own and xml2_lib_load() does nothing. */
#ifndef GATE_CI_REPORT_XML_LIB_H
#define GATE_CI_REPORT_XML_LIB_H

#include <stddef.h>

#include <libxml/globals.h>
#include <libxml/parser.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlwriter.h>

/* Opens libxml2 (once). Returns 0, or -1 with err naming the library, why, and the package. */
int xml2_lib_load(char *err, size_t errlen);

/* Starts opening libxml2 in a thread of its own (lazylib_warm): for a process about to wait. */
void xml2_lib_warm(void);

/* The version of the libxml2 gate runs with ("20914" for 2.9.14: its xmlParserVersion), once
 * xml2_lib_load() succeeded; "" otherwise. */
const char *xml2_lib_version(void);

#ifndef GATE_DIRECT_LIBS

#define XML2_FUNCS(X)                                                                              \
	X(xmlFreeTextWriter)                                                                       \
	X(xmlNewTextWriter)                                                                        \
	X(xmlOutputBufferClose)                                                                    \
	X(xmlOutputBufferCreateIO)                                                                 \
	X(xmlSetStructuredErrorFunc)                                                               \
	X(xmlTextWriterEndDocument)                                                                \
	X(xmlTextWriterEndElement)                                                                 \
	X(xmlTextWriterFlush)                                                                      \
	X(xmlTextWriterSetIndent)                                                                  \
	X(xmlTextWriterSetIndentString)                                                            \
	X(xmlTextWriterStartDocument)                                                              \
	X(xmlTextWriterStartElement)                                                               \
	X(xmlTextWriterWriteAttribute)                                                             \
	X(xmlTextWriterWriteString)                                                                \
	X(__xmlStructuredError)                                                                    \
	X(__xmlStructuredErrorContext)

struct xml2_api {
#define XML2_MEMBER(f) __typeof__(f) *fn_##f;
	XML2_FUNCS(XML2_MEMBER)
#undef XML2_MEMBER
};

extern struct xml2_api xml2_api;

#define xmlFreeTextWriter (xml2_api.fn_xmlFreeTextWriter)
#define xmlNewTextWriter (xml2_api.fn_xmlNewTextWriter)
#define xmlOutputBufferClose (xml2_api.fn_xmlOutputBufferClose)
#define xmlOutputBufferCreateIO (xml2_api.fn_xmlOutputBufferCreateIO)
#define xmlSetStructuredErrorFunc (xml2_api.fn_xmlSetStructuredErrorFunc)
#define xmlTextWriterEndDocument (xml2_api.fn_xmlTextWriterEndDocument)
#define xmlTextWriterEndElement (xml2_api.fn_xmlTextWriterEndElement)
#define xmlTextWriterFlush (xml2_api.fn_xmlTextWriterFlush)
#define xmlTextWriterSetIndent (xml2_api.fn_xmlTextWriterSetIndent)
#define xmlTextWriterSetIndentString (xml2_api.fn_xmlTextWriterSetIndentString)
#define xmlTextWriterStartDocument (xml2_api.fn_xmlTextWriterStartDocument)
#define xmlTextWriterStartElement (xml2_api.fn_xmlTextWriterStartElement)
#define xmlTextWriterWriteAttribute (xml2_api.fn_xmlTextWriterWriteAttribute)
#define xmlTextWriterWriteString (xml2_api.fn_xmlTextWriterWriteString)
#define __xmlStructuredError (xml2_api.fn___xmlStructuredError)
#define __xmlStructuredErrorContext (xml2_api.fn___xmlStructuredErrorContext)

#endif /* GATE_DIRECT_LIBS */

#endif
