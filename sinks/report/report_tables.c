/*
 * report_tables.c - the report's containers: growable arrays of items,
 * open-addressing indexes over them, and the interned strings (comms,
 * binaries, source lines) and symbol identities rows and chains point to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* ---- containers -------------------------------------------------------- */

uint32_t vec_push(struct vec *v)
{
	if (v->nr == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 64;
		void *n;

		if (v->cap >= MAX_ITEMS)
			return NONE;
		n = realloc(v->items, (size_t)cap * v->size);
		if (!n)
			return NONE;
		v->items = n;
		v->cap = cap;
	}
	memset(vec_at(v, v->nr), 0, v->size);
	return v->nr++;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

static int htab_grow(struct htab *h, const struct vec *v, hash_fn hf)
{
	uint32_t cap = h->cap ? h->cap * 2 : 256, i;
	uint32_t *slots;

	if (cap > 2 * MAX_ITEMS)
		return -E2BIG;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < v->nr; i++) {
		uint32_t s = (uint32_t)hf(v, i) & (cap - 1);

		while (slots[s])
			s = (s + 1) & (cap - 1);
		slots[s] = i + 1;
	}
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
	return 0;
}

static uint64_t str_hash_of(const struct vec *v, uint32_t i)
{
	return ((const struct str *)vec_at(v, i))->hash;
}

static uint64_t sym_hash_of(const struct vec *v, uint32_t i)
{
	return ((const struct sym *)vec_at(v, i))->hash;
}

uint64_t row_hash_of(const struct vec *v, uint32_t i)
{
	return ((const struct row *)vec_at(v, i))->hash;
}

uint64_t chain_hash_of(const struct vec *v, uint32_t i)
{
	return ((const struct chain *)vec_at(v, i))->hash;
}

int htab_reserve(struct htab *h, const struct vec *v, hash_fn hf)
{
	if ((uint64_t)(v->nr + 1) * 4 > (uint64_t)h->cap * 3)
		return htab_grow(h, v, hf);
	return 0;
}

uint32_t htab_first(const struct htab *h, uint64_t hash)
{
	return h->cap ? (uint32_t)hash & (h->cap - 1) : 0;
}

uint32_t htab_next(const struct htab *h, uint32_t *slot)
{
	uint32_t idx;

	if (!h->cap || !h->slots[*slot])
		return NONE;
	idx = h->slots[*slot] - 1;
	*slot = (*slot + 1) & (h->cap - 1);
	return idx;
}

void htab_put(struct htab *h, uint64_t hash, uint32_t idx)
{
	uint32_t s = (uint32_t)hash & (h->cap - 1);

	while (h->slots[s])
		s = (s + 1) & (h->cap - 1);
	h->slots[s] = idx + 1;
	h->nr++;
}

/* ---- interning ---------------------------------------------------------- */

uint32_t intern_str(struct report *r, const char *s)
{
	uint64_t hash;
	uint32_t slot, idx;
	struct str *e;

	if (!s)
		return NONE;
	hash = hash_str(s);
	for (slot = htab_first(&r->strs_h, hash);
	     (idx = htab_next(&r->strs_h, &slot)) != NONE;) {
		e = vec_at(&r->strs, idx);
		if (e->hash == hash && strcmp(e->s, s) == 0)
			return idx;
	}
	if (htab_reserve(&r->strs_h, &r->strs, str_hash_of) < 0)
		return NONE;
	idx = vec_push(&r->strs);
	if (idx == NONE)
		return NONE;
	e = vec_at(&r->strs, idx);
	e->s = s;
	e->hash = hash;
	htab_put(&r->strs_h, hash, idx);
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
	k.hash = mix(mix(mix(mix(k.name ? hash_str(k.name) : k.offset, k.dso),
			     k.kernel), k.inlined), k.start);
	for (slot = htab_first(&r->syms_h, k.hash);
	     (idx = htab_next(&r->syms_h, &slot)) != NONE;) {
		e = vec_at(&r->syms, idx);
		if (e->hash == k.hash && sym_eq(e, &k))
			return idx;
	}
	if (htab_reserve(&r->syms_h, &r->syms, sym_hash_of) < 0)
		return NONE;
	idx = vec_push(&r->syms);
	if (idx == NONE)
		return NONE;
	*(struct sym *)vec_at(&r->syms, idx) = k;
	htab_put(&r->syms_h, k.hash, idx);
	return idx;
}
