/*
 * report_tables.c - the report's containers: growable arrays of items
 * (lib/grow.h) indexed by lib/itab.h, and the interned strings (comms,
 * binaries, source lines) and symbol identities rows and chains point to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "report.h"

/* ---- containers -------------------------------------------------------- */

uint32_t vec_push(struct vec *v)
{
	if (v->nr == v->cap &&
	    grow_array(&v->items, &v->cap, (size_t)v->nr + 1, v->size, 64,
		       MAX_ITEMS) < 0)
		return NONE;
	memset(vec_at(v, v->nr), 0, v->size);
	return v->nr++;
}

/* An item that found no room: noted for add_sample, which fails the
 * sample rather than leave its frames out unsaid. */
static uint32_t short_of_room(struct report *r)
{
	r->short_of_room = true;
	return NONE;
}

uint32_t vec_push_indexed(struct report *r, struct vec *v, struct itab *t,
			  uint64_t hash, itab_hash_fn hash_of)
{
	uint32_t idx;

	if (itab_reserve(t, TAB_FIRST, TAB_MAX, hash_of, v) < 0)
		return short_of_room(r);
	idx = vec_push(v);
	if (idx == NONE)
		return short_of_room(r);
	itab_put(t, hash, idx);
	return idx;
}

static uint64_t str_hash_of(const void *items, uint32_t item)
{
	return ((const struct str *)vec_at(items, item))->hash;
}

static uint64_t sym_hash_of(const void *items, uint32_t item)
{
	return ((const struct sym *)vec_at(items, item))->hash;
}

uint64_t row_hash_of(const void *items, uint32_t item)
{
	return ((const struct row *)vec_at(items, item))->hash;
}

uint64_t chain_hash_of(const void *items, uint32_t item)
{
	return ((const struct chain *)vec_at(items, item))->hash;
}

/* ---- interning ---------------------------------------------------------- */

uint32_t intern_str(struct report *r, const char *s)
{
	uint64_t hash;
	uint32_t slot, idx;
	struct str *e;

	if (!s)
		return NONE;
	hash = itab_hash_str(s);
	for (slot = itab_first(&r->strs_h, hash);
	     (idx = itab_next(&r->strs_h, &slot)) != NONE;) {
		e = vec_at(&r->strs, idx);
		if (e->hash == hash && strcmp(e->s, s) == 0)
			return idx;
	}
	idx = vec_push_indexed(r, &r->strs, &r->strs_h, hash, str_hash_of);
	if (idx == NONE)
		return NONE;
	e = vec_at(&r->strs, idx);
	e->s = s;
	e->hash = hash;
	return idx;
}

const char *str_of(const struct report *r, uint32_t idx)
{
	if (idx == NONE)
		return NULL;
	return ((const struct str *)vec_at(&r->strs, idx))->s;
}

static bool sym_eq(const struct sym *a, const struct sym *b)
{
	if (a->dso != b->dso || a->kernel != b->kernel ||
	    a->inlined != b->inlined)
		return false;
	if (!a->name || !b->name)
		return !a->name && !b->name && a->offset == b->offset;
	return a->start == b->start && strcmp(a->name, b->name) == 0;
}

uint32_t intern_sym(struct report *r, const struct pipe_symbol *ps,
		    bool kernel, bool inlined)
{
	struct sym k = { 0 }, *e;
	uint32_t slot, idx;

	k.name = ps->name;
	k.dso = intern_str(r, ps->dso);
	k.kernel = kernel;
	k.inlined = inlined;
	k.offset = ps->name ? 0 : ps->offset;
	/* static functions of one name in two files are two rows, as in
	 * perf; an inlined function is one row wherever it was inlined */
	k.start = ps->name && !inlined ? ps->sym_start : 0;
	k.hash = itab_mix(k.name ? itab_hash_str(k.name) : k.offset, k.dso);
	k.hash = itab_mix(itab_mix(itab_mix(k.hash, k.kernel), k.inlined),
			  k.start);
	for (slot = itab_first(&r->syms_h, k.hash);
	     (idx = itab_next(&r->syms_h, &slot)) != NONE;) {
		e = vec_at(&r->syms, idx);
		if (e->hash == k.hash && sym_eq(e, &k))
			return idx;
	}
	idx = vec_push_indexed(r, &r->syms, &r->syms_h, k.hash, sym_hash_of);
	if (idx != NONE)
		*(struct sym *)vec_at(&r->syms, idx) = k;
	return idx;
}
