/*
 * itab.h - the one hash table: an open-addressing index over the
 * caller's own array of items.  A slot holds an item's index + 1 (0:
 * empty); the items, their hashes and how two compare stay the caller's,
 * so one table serves strings, mappings, locations and samples alike.
 * Probing is inline: lookups run once per sample.
 */
#ifndef PIPE_ITAB_H
#define PIPE_ITAB_H

#include <stdbool.h>
#include <stdint.h>

#define ITAB_NONE UINT32_MAX /* no item */

struct itab {
	uint32_t *slots; /* owned, cap slots */
	uint32_t cap;    /* a power of two; 0 until the first itab_reserve */
	uint32_t nr;     /* items indexed: the caller's items 0 .. nr-1 */
};

/* The hash of the caller's item `item` (as it was put), for rehashing. */
typedef uint64_t (*itab_hash_fn)(const void *items, uint32_t item);
/* Whether the caller's item `item` has the key being looked up. */
typedef bool (*itab_eq_fn)(const void *items, uint32_t item, const void *key);

/*
 * Make room to put one more item (the table stays at most 3/4 full): the
 * slots double, from `first` (a power of two), and every item 0 .. nr-1
 * is placed again by hash(items, i).  0, or -E2BIG past max_cap slots,
 * or -ENOMEM (t unchanged either way).
 */
int itab_reserve(struct itab *t, uint32_t first, uint32_t max_cap,
		 itab_hash_fn hash, const void *items);
/* Index item `item` under hash, after an itab_reserve. */
void itab_put(struct itab *t, uint64_t hash, uint32_t item);
/* Free the slots; t is empty again. */
void itab_free(struct itab *t);

/*
 * Probing, for a caller that compares in place:
 *   for (slot = itab_first(t, hash);
 *        (item = itab_next(t, &slot)) != ITAB_NONE;)
 *           if (same(item)) ...
 * visits every item put under a hash that shares its first slot.
 */
static inline uint32_t itab_first(const struct itab *t, uint64_t hash)
{
	return t->cap ? (uint32_t)hash & (t->cap - 1) : 0;
}

static inline uint32_t itab_next(const struct itab *t, uint32_t *slot)
{
	uint32_t item;

	if (!t->cap || !t->slots[*slot])
		return ITAB_NONE;
	item = t->slots[*slot] - 1;
	*slot = (*slot + 1) & (t->cap - 1);
	return item;
}

/* The item put under hash for which eq(items, item, key), or ITAB_NONE. */
static inline uint32_t itab_find(const struct itab *t, uint64_t hash,
				 itab_eq_fn eq, const void *items,
				 const void *key)
{
	uint32_t slot = itab_first(t, hash), item;

	while ((item = itab_next(t, &slot)) != ITAB_NONE)
		if (eq(items, item, key))
			return item;
	return ITAB_NONE;
}

/* Hashes for keys: a NUL-ended string (FNV-1a), and one more value
 * folded into a hash (the high half folded into the low one last, as
 * tables and caches index by the low bits). */
static inline uint64_t itab_hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
	return h;
}

static inline uint64_t itab_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

#endif
