/*
 * strtab.c - the one string table (strtab.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "strtab.h"

#define STRTAB_FIRST 256 /* the index's first room */

static bool str_is(const void *items, uint32_t item, const void *key)
{
	return strcmp(((char *const *)items)[item], key) == 0;
}

static uint64_t str_rehash(const void *items, uint32_t item)
{
	return itab_hash_str(((char *const *)items)[item]);
}

int64_t strtab_find(const struct strtab *t, const char *s)
{
	uint32_t i = itab_find(&t->tab, itab_hash_str(s), str_is, t->strs, s);

	return i == ITAB_NONE ? -1 : (int64_t)i;
}

int64_t strtab_add(struct strtab *t, const char *s)
{
	uint32_t max = t->max ? t->max : UINT32_MAX / 2;
	uint64_t h = itab_hash_str(s);
	uint32_t i = itab_find(&t->tab, h, str_is, t->strs, s);
	char *copy;
	int ret;

	if (i != ITAB_NONE)
		return i;
	if (t->nr >= max)
		return -E2BIG;
	ret = itab_reserve(&t->tab, STRTAB_FIRST, UINT32_MAX / 2 + 1,
			   str_rehash, t->strs);
	if (ret == 0)
		ret = grow_array(&t->strs, &t->cap, (size_t)t->nr + 1,
				 sizeof(*t->strs), 64, max);
	if (ret < 0)
		return ret;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	t->strs[t->nr] = copy;
	itab_put(&t->tab, h, t->nr);
	return t->nr++;
}

int64_t strtab_add_item(struct strtab *t, const char *s, void *itemsp,
			size_t *cap, size_t size)
{
	int64_t i = strtab_find(t, s);
	char *items;
	int ret;

	if (i >= 0)
		return i;
	ret = grow_array(itemsp, cap, (size_t)t->nr + 1, size, 64, SIZE_MAX);
	if (ret < 0)
		return ret;
	i = strtab_add(t, s);
	if (i < 0)
		return i;
	memcpy(&items, itemsp, sizeof(items));
	memset(items + (size_t)i * size, 0, size);
	return i;
}

void strtab_release(struct strtab *t)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		free(t->strs[i]);
	free(t->strs);
	itab_free(&t->tab);
	t->strs = NULL;
	t->cap = 0;
	t->nr = 0;
}
