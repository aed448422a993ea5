/* gate/probe/probe_tags.h: decodes a test record's `gate` tag and what grew in a tagged test's
 * window (the probe's "Tags" section) into the model (rules/tags.h judges them). */
#ifndef GATE_PROBE_TAGS_H
#define GATE_PROBE_TAGS_H

#include "gate/node/term.h"
#include "model/tests.h"

/* extra: the test record's map. Sets r->gate_tag and r->gate_grew (NULL when absent).
 * Returns 0, or -1 when malformed or out of memory. */
int probe_tags_decode(const struct term *extra, struct test_result *r);

#endif
