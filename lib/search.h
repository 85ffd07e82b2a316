/*
 * search.h - the one binary search over a sorted array (inline: the
 * symbolizer runs it per frame).  The array is any struct with a uint64_t
 * key at a fixed offset, sorted by that key.
 */
#ifndef PIPE_SEARCH_H
#define PIPE_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Which element search_u64 looks for. */
enum search_bound {
	SEARCH_FIRST_NOT_BELOW, /* the first whose key is >= key */
	SEARCH_FIRST_ABOVE,     /* the first whose key is > key */
};

/*
 * The index of the first of the n elements, `stride` bytes apart from
 * base and sorted by the uint64_t at byte `off` of each, that `bound`
 * names; n when there is none.  A sizeof and an offsetof make stride and
 * off: search_u64(v, nr, sizeof(*v), offsetof(struct x, key), ...).
 */
static inline size_t search_u64(const void *base, size_t n, size_t stride,
				size_t off, uint64_t key,
				enum search_bound bound)
{
	const unsigned char *p = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, p + mid * stride + off, sizeof(k));
		if (k < key || (bound == SEARCH_FIRST_ABOVE && k == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
