/*
 * heap.h - the one binary min-heap: an array of pointers kept so that
 * items[0] comes out first by the caller's `before`.  The functions are
 * inline so that each user's `before` and `moved` are called directly:
 * the merges sift once per record.
 */
#ifndef PIPE_HEAP_H
#define PIPE_HEAP_H

#include <stdbool.h>
#include <stdint.h>

/* What orders a heap's items; give it as a static const object. */
struct heap_ops {
	bool (*before)(const void *a, const void *b); /* a comes out first */
	void (*moved)(void *item, uint32_t pos);      /* told each index an
							 item takes, or NULL */
};

static inline void heap_place(void **items, uint32_t i, void *item,
			      const struct heap_ops *ops)
{
	items[i] = item;
	if (ops->moved)
		ops->moved(item, i);
}

/* Move items[i] up to its place: it was added at the end, or now comes
 * out sooner. */
static inline void heap_up(void **items, uint32_t i,
			   const struct heap_ops *ops)
{
	void *item = items[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!ops->before(item, items[parent]))
			break;
		heap_place(items, i, items[parent], ops);
		i = parent;
	}
	heap_place(items, i, item, ops);
}

/* Move items[i] of the len items down to its place: it replaced the
 * top, or now comes out later. */
static inline void heap_down(void **items, uint32_t len, uint32_t i,
			     const struct heap_ops *ops)
{
	void *item = items[i];

	for (;;) {
		uint32_t l = 2 * i + 1, best = l;

		if (l >= len)
			break;
		if (l + 1 < len && ops->before(items[l + 1], items[l]))
			best = l + 1;
		if (!ops->before(items[best], item))
			break;
		heap_place(items, i, items[best], ops);
		i = best;
	}
	heap_place(items, i, item, ops);
}

/* Add item to the *len items; the array has room for it (the caller's). */
static inline void heap_push(void **items, uint32_t *len, void *item,
			     const struct heap_ops *ops)
{
	items[*len] = item;
	heap_up(items, (*len)++, ops);
}

/* Remove the top, items[0], from the *len items (*len > 0). */
static inline void heap_pop(void **items, uint32_t *len,
			    const struct heap_ops *ops)
{
	if (--*len) {
		items[0] = items[*len];
		heap_down(items, *len, 0, ops);
	}
}

#endif
