/* gate/config/toml_tree.c: the tree toml_parse builds (toml.h): its one allocation path (the
 * realloc hook tests use to fail allocations), tables and arrays as they grow, toml_free and
 * the getters. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config/toml.h"
#include "gate/config/toml_internal.h"

/* ---- the one allocation path ---- */

static void *(*toml_realloc_fn)(void *ptr, size_t size);

void toml_set_realloc(void *(*fn)(void *ptr, size_t size))
{
	toml_realloc_fn = fn;
}

/* realloc, or free when size is 0. Returns NULL on failure (ptr is then untouched). */
void *toml_mem(void *ptr, size_t size)
{
	if (toml_realloc_fn)
		return toml_realloc_fn(ptr, size);
	if (size == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, size);
}

void toml_mem_free(void *ptr)
{
	if (ptr)
		toml_mem(ptr, 0);
}

/* Appends n bytes, keeping the text NUL-terminated. */
int toml_buf_add(struct parser *ps, struct buf *b, const char *s, size_t n)
{
	if (b->cap - b->len < n + 1) {
		size_t cap = b->cap ? b->cap : 16;
		while (cap - b->len < n + 1)
			cap *= 2; /* cannot overflow: everything comes from at most 1 MiB of input
			           */
		char *p = toml_mem(b->p, cap);
		if (!p)
			return toml_oom(ps);
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

struct toml_value *toml_value_new(struct parser *ps, enum toml_type type, struct toml_pos pos)
{
	struct toml_value *v = toml_mem(NULL, sizeof(*v));

	if (!v) {
		toml_oom(ps);
		return NULL;
	}
	memset(v, 0, sizeof(*v));
	v->type = type;
	v->pos = pos;
	return v;
}

void toml_free(struct toml_value *v)
{
	if (!v)
		return;
	switch (v->type) {
	case TOML_STRING: toml_mem_free(v->u.str.ptr); break;
	case TOML_ARRAY:
		for (size_t i = 0; i < v->u.arr.len; i++)
			toml_free(v->u.arr.items[i]);
		toml_mem_free(v->u.arr.items);
		break;
	case TOML_TABLE:
		for (size_t i = 0; i < v->u.tab.len; i++) {
			toml_mem_free(v->u.tab.items[i].key);
			toml_free(v->u.tab.items[i].value);
		}
		toml_mem_free(v->u.tab.items);
		break;
	default: break;
	}
	toml_mem_free(v);
}

struct entry *toml_table_find(const struct toml_value *t, const char *key, size_t len)
{
	for (size_t i = 0; i < t->u.tab.len; i++) {
		struct entry *e = &t->u.tab.items[i];
		if (e->keylen == len && memcmp(e->key, key, len) == 0)
			return e;
	}
	return NULL;
}

/* Adds k = v to table t, taking k's text and v (v is freed on failure). */
int toml_table_put(struct parser *ps, struct toml_value *t, struct key *k, struct toml_value *v)
{
	if (t->u.tab.len == TOML_MAX_KEYS) {
		toml_free(v);
		return toml_fail_at(ps, k->pos,
		                    "a table has more than %d keys, more than this reader accepts",
		                    TOML_MAX_KEYS);
	}
	if (t->u.tab.len == t->u.tab.cap) {
		size_t cap = t->u.tab.cap ? t->u.tab.cap * 2 : 8;
		struct entry *items = toml_mem(t->u.tab.items, cap * sizeof(*items));
		if (!items) {
			toml_free(v);
			return toml_oom(ps);
		}
		t->u.tab.items = items;
		t->u.tab.cap = cap;
	}
	t->u.tab.items[t->u.tab.len++] = (struct entry){k->s, k->len, k->pos, v};
	k->moved = true;
	return 0;
}

/* Appends v to array a, taking v (freed on failure). */
int toml_array_put(struct parser *ps, struct toml_value *a, struct toml_value *v)
{
	if (a->u.arr.len == a->u.arr.cap) {
		size_t cap = a->u.arr.cap ? a->u.arr.cap * 2 : 8;
		struct toml_value **items = toml_mem(a->u.arr.items, cap * sizeof(*items));
		if (!items) {
			toml_free(v);
			return toml_oom(ps);
		}
		a->u.arr.items = items;
		a->u.arr.cap = cap;
	}
	a->u.arr.items[a->u.arr.len++] = v;
	return 0;
}

const char *toml_type_name(enum toml_type type)
{
	switch (type) {
	case TOML_STRING: return "string";
	case TOML_INTEGER: return "integer";
	case TOML_FLOAT: return "float";
	case TOML_BOOLEAN: return "boolean";
	case TOML_ARRAY: return "array";
	case TOML_TABLE: return "table";
	}
	return "unknown";
}

enum toml_type toml_type(const struct toml_value *v)
{
	return v->type;
}

struct toml_pos toml_pos(const struct toml_value *v)
{
	return v ? v->pos : (struct toml_pos){0, 0};
}

const char *toml_string(const struct toml_value *v, size_t *len)
{
	if (!v || v->type != TOML_STRING)
		return NULL;
	if (len)
		*len = v->u.str.len;
	return v->u.str.ptr;
}

int64_t toml_integer(const struct toml_value *v)
{
	return v && v->type == TOML_INTEGER ? v->u.integer : 0;
}

double toml_float(const struct toml_value *v)
{
	return v && v->type == TOML_FLOAT ? v->u.flt : 0.0;
}

bool toml_boolean(const struct toml_value *v)
{
	return v && v->type == TOML_BOOLEAN && v->u.boolean;
}

const struct toml_value *toml_get(const struct toml_value *table, const char *key)
{
	const struct entry *e;

	if (!table || table->type != TOML_TABLE || !key)
		return NULL;
	e = toml_table_find(table, key, strlen(key));
	return e ? e->value : NULL;
}

size_t toml_table_len(const struct toml_value *table)
{
	return table && table->type == TOML_TABLE ? table->u.tab.len : 0;
}

const char *toml_table_key(const struct toml_value *table, size_t i)
{
	return i < toml_table_len(table) ? table->u.tab.items[i].key : NULL;
}

const struct toml_value *toml_table_value(const struct toml_value *table, size_t i)
{
	return i < toml_table_len(table) ? table->u.tab.items[i].value : NULL;
}

struct toml_pos toml_table_key_pos(const struct toml_value *table, size_t i)
{
	return i < toml_table_len(table) ? table->u.tab.items[i].pos : (struct toml_pos){0, 0};
}

size_t toml_array_len(const struct toml_value *array)
{
	return array && array->type == TOML_ARRAY ? array->u.arr.len : 0;
}

const struct toml_value *toml_array_at(const struct toml_value *array, size_t i)
{
	return i < toml_array_len(array) ? array->u.arr.items[i] : NULL;
}
