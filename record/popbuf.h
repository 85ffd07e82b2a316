/*
 * popbuf.h - the array a time-order merge hands its records out in on a
 * pop (merge.c, runmerge.c): grown (doubling, grow.h) to what the caller
 * asks for, then reused by every pop after it.
 */
#ifndef PIPE_POPBUF_H
#define PIPE_POPBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"
#include "pipe_plugin.h"

#define POPBUF_FIRST 256 /* records: the first room */
#define POPBUF_MAX (SIZE_MAX / sizeof(struct pipe_record))

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
	if (max <= b->cap)
		return max;
	if (grow_array(&b->recs, &b->cap, max, sizeof(*b->recs),
		       POPBUF_FIRST, POPBUF_MAX) < 0)
		return b->cap;
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
