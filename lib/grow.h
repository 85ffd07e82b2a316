/*
 * grow.h - the one growable array: room doubled until it fits, with a
 * maximum, for every buffer of the command and the plugins that grows as
 * it fills; and the one growable byte buffer that bytes are appended to.
 */
#ifndef PIPE_GROW_H
#define PIPE_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Make the array *arrp (a pointer to any element pointer, NULL when
 * empty) of *cap elements of `size` bytes hold at least n: its room
 * doubles from *cap (from `first` when 0) until it does, and stops at
 * max.  Returns 0 (room was there already, or *arrp and *cap are the
 * grown array); -E2BIG when n > max; -ENOMEM when memory is short
 * (*arrp and *cap unchanged: the caller still owns and frees *arrp).
 */
int grow_array(void *arrp, size_t *cap, size_t n, size_t size, size_t first,
	       size_t max);

#define BYTEBUF_FIRST 4096 /* a byte buffer's first room */

/* Bytes appended as they come: { 0 } is empty, with no maximum. */
struct bytebuf {
	uint8_t *p; /* owned: the caller frees it */
	size_t len; /* bytes used */
	size_t cap; /* bytes allocated */
	size_t max; /* len never passes it (set before the first append);
		       0: no maximum */
};

/* The slow path of bytebuf_reserve: grow_array for b. */
int bytebuf_grow(struct bytebuf *b, size_t n);

/* Room for n more bytes after len: 0, -E2BIG past b->max, -ENOMEM (b
 * unchanged). */
static inline int bytebuf_reserve(struct bytebuf *b, size_t n)
{
	return n <= b->cap - b->len ? 0 : bytebuf_grow(b, n);
}

/* Append n bytes from src (NULL when n is 0): bytebuf_reserve's returns. */
static inline int bytebuf_put(struct bytebuf *b, const void *src, size_t n)
{
	int ret = bytebuf_reserve(b, n);

	if (ret < 0)
		return ret;
	if (n)
		memcpy(b->p + b->len, src, n);
	b->len += n;
	return 0;
}

#endif
