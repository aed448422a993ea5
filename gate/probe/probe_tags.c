/* gate/probe/probe_tags.c: a test's `gate` tag and what grew in its window, from the probe. */
#include "gate/probe/probe_tags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "model/tests.h"
#include "rules/culprits.h"

/* Tag entries and their text are capped: they come from the suite. */
#define TAG_MAX_ENTRIES 16
#define TAG_MAX_TEXT 256

/* "key=value\n..." of [{Key, Value}], or "!text" of {invalid, Text}. */
static char *tag_text(const struct term *spec)
{
	char buf[TAG_MAX_ENTRIES * (2 * TAG_MAX_TEXT + 2) + 2];
	size_t o = 0;
	if (term_is_atom(spec, "false"))
		return strdup("false");
	if (spec->type == TERM_TUPLE && spec->u.seq.n == 2 &&
	    term_is_atom(term_tuple_at(spec, 0), "invalid")) {
		const char *t = term_text(term_tuple_at(spec, 1));
		snprintf(buf, sizeof(buf), "!%.*s", TAG_MAX_TEXT, t ? t : "?");
		return strdup(buf);
	}
	if (spec->type != TERM_LIST)
		return NULL;
	if (spec->u.seq.n == 0)
		return strdup("");
	for (size_t i = 0; i < spec->u.seq.n && i < TAG_MAX_ENTRIES; i++) {
		const struct term *kv = &spec->u.seq.items[i];
		const char *k = term_text(term_tuple_at(kv, 0)),
		           *v = term_text(term_tuple_at(kv, 1));
		if (kv->type != TERM_TUPLE || kv->u.seq.n != 2 || !k || !v)
			return NULL;
		/* a newline or '=' in a key would read as another entry: the key is refused */
		if (strpbrk(k, "=\n") || strchr(v, '\n'))
			snprintf(buf, sizeof(buf), "!%.*s", TAG_MAX_TEXT, k);
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%.*s=%.*s\n", TAG_MAX_TEXT, k,
		                      TAG_MAX_TEXT, v);
		if (buf[0] == '!')
			return strdup(buf);
	}
	return strdup(buf);
}

/* "ETS table demo_sessions (owner Demo.Sessions) +20 000 rows, +4.1 MB; process <0.1.0>
 * (Foo.Server) +2.0 MB" */
static char *grew_text(const struct term *grew)
{
	char buf[1024];
	size_t o = 0;
	buf[0] = '\0';
	if (!grew || grew->type != TERM_LIST)
		return NULL;
	for (size_t i = 0; i < grew->u.seq.n && i < 2 && o < sizeof(buf); i++) {
		const struct term *g = &grew->u.seq.items[i];
		char b[32], r[32];
		int64_t rows, bytes;
		if (g->type != TERM_TUPLE)
			continue;
		if (term_is_atom(term_tuple_at(g, 0), "ets") && g->u.seq.n == 5 &&
		    term_int(term_tuple_at(g, 3), &rows) == 0 &&
		    term_int(term_tuple_at(g, 4), &bytes) == 0) {
			const char *name = term_text(term_tuple_at(g, 1));
			const char *owner = term_text(term_tuple_at(g, 2));
			model_bytes_format(b, sizeof(b), bytes);
			rules_count_format(r, sizeof(r), rows);
			o += (size_t)snprintf(buf + o, sizeof(buf) - o,
			                      "%sETS table %.200s%s%.200s%s %s%s rows, +%s",
			                      o ? "; " : "", name ? name : "?",
			                      owner && *owner ? " (owner " : "", owner ? owner : "",
			                      owner && *owner ? ")" : "", rows >= 0 ? "+" : "", r,
			                      b);
		} else if (term_is_atom(term_tuple_at(g, 0), "process") && g->u.seq.n == 4 &&
		           term_int(term_tuple_at(g, 3), &bytes) == 0) {
			const char *pid = term_text(term_tuple_at(g, 1));
			const char *label = term_text(term_tuple_at(g, 2));
			model_bytes_format(b, sizeof(b), bytes);
			o += (size_t)snprintf(buf + o, sizeof(buf) - o,
			                      "%sprocess %.40s%s%.200s%s +%s", o ? "; " : "",
			                      pid ? pid : "?", label && *label ? " (" : "",
			                      label ? label : "", label && *label ? ")" : "", b);
		}
	}
	return buf[0] ? strdup(buf) : NULL;
}

int probe_tags_decode(const struct term *extra, struct test_result *r)
{
	const struct term *spec, *grew;
	if (!extra || extra->type != TERM_MAP)
		return 0;
	if ((spec = term_map_get(extra, "gate")) && !(r->gate_tag = tag_text(spec)))
		return -1;
	if ((grew = term_map_get(extra, "gate_grew")))
		r->gate_grew = grew_text(grew);
	return 0;
}
