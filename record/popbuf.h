/*
 * popbuf.h - the array a time-order merge hands its records out in on a
 * pop (merge.c, runmerge.c): grown to what the caller asks for once, then
 * reused by every pop after it.
 */
#ifndef PIPE_POPBUF_H
#define PIPE_POPBUF_H

#include <stddef.h>
#include <stdlib.h>

#include "pipe_plugin.h"

struct popbuf {
	struct pipe_record *recs; /* owned; the last pop's batch borrows it */
	size_t cap;               /* records it holds */
};

/*
 * Make room for max records.  Returns how many the pop may hand out: max,
 * or the room there was when growing failed (0 the first time: the pop
 * then hands out nothing, and its records wait for the next).
 */
static inline size_t popbuf_reserve(struct popbuf *b, size_t max)
{
	struct pipe_record *r;

	if (max <= b->cap)
		return max;
	r = realloc(b->recs, max * sizeof(*r));
	if (!r)
		return b->cap;
	b->recs = r;
	b->cap = max;
	return max;
}

/* Free the array; b is empty and can be used again. */
static inline void popbuf_release(struct popbuf *b)
{
	free(b->recs);
	b->recs = NULL;
	b->cap = 0;
}

#endif
