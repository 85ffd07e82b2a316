/*
 * itab.c - the one hash table (itab.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "itab.h"

/* Whether n items leave a quarter of cap slots empty. */
static bool fits(uint64_t n, uint32_t cap)
{
	return 4 * n <= 3 * (uint64_t)cap;
}

int itab_reserve(struct itab *t, uint32_t first, uint32_t max_cap,
		 itab_hash_fn hash, const void *items)
{
	uint32_t cap = t->cap ? t->cap : first, i, j;
	uint32_t *slots;

	if (!cap)
		cap = 1;
	if (t->cap && fits((uint64_t)t->nr + 1, t->cap))
		return 0;
	while (!fits((uint64_t)t->nr + 1, cap)) {
		if (cap > max_cap / 2)
			return -E2BIG;
		cap *= 2;
	}
	if (cap > max_cap)
		return -E2BIG;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->nr; i++) {
		j = (uint32_t)hash(items, i) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

void itab_put(struct itab *t, uint64_t hash, uint32_t item)
{
	uint32_t j = (uint32_t)hash & (t->cap - 1);

	while (t->slots[j])
		j = (j + 1) & (t->cap - 1);
	t->slots[j] = item + 1;
	t->nr++;
}

void itab_free(struct itab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = 0;
	t->nr = 0;
}
