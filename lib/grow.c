/*
 * grow.c - the one growable array and byte buffer (grow.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

int grow_array(void *arrp, size_t *cap, size_t n, size_t size, size_t first,
	       size_t max)
{
	size_t c = *cap ? *cap : (first ? first : 1);
	void *p;

	if (n <= *cap)
		return 0;
	if (n > max)
		return -E2BIG;
	while (c < n)
		c = c > SIZE_MAX / 2 ? SIZE_MAX : 2 * c;
	if (c > max)
		c = max;
	if (size && c > SIZE_MAX / size)
		return -ENOMEM;
	memcpy(&p, arrp, sizeof(p));
	p = realloc(p, c * size);
	if (!p)
		return -ENOMEM;
	memcpy(arrp, &p, sizeof(p));
	*cap = c;
	return 0;
}

int bytebuf_grow(struct bytebuf *b, size_t n)
{
	size_t max = b->max ? b->max : SIZE_MAX;

	if (n > max - b->len)
		return -E2BIG;
	return grow_array(&b->p, &b->cap, b->len + n, 1, BYTEBUF_FIRST, max);
}
