/*
 * addrcache.c - the cache of answers per address: its slots, allocated
 * and forgotten (addrcache.h has the lookups).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrcache.h"

int addrcache_init(struct addrcache *c, unsigned bits, size_t value_size)
{
	*c = (struct addrcache){ .gen = 1 };
	if (bits < 1 || bits > ADDRCACHE_BITS_MAX ||
	    value_size > ADDRCACHE_VALUE_MAX)
		return -EINVAL;
	c->stride = sizeof(struct addrcache_key) + (value_size + 7) / 8 * 8;
	c->slots = calloc((size_t)1 << bits, c->stride);
	if (!c->slots)
		return -ENOMEM;
	c->shift = 64 - bits;
	return 0;
}

void addrcache_free(struct addrcache *c)
{
	free(c->slots);
	*c = (struct addrcache){ .gen = 1 };
}

void addrcache_forget(struct addrcache *c)
{
	if (++c->gen)
		return;
	/* the generation wrapped: slots of the old generation 1 must not
	 * be taken for new ones */
	if (c->slots)
		memset(c->slots, 0, ((size_t)1 << (64 - c->shift)) * c->stride);
	c->gen = 1;
}
