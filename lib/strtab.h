/*
 * strtab.h - the one string table: every distinct string copied once and
 * numbered in the order first seen (0, 1, ...), found again through
 * lib/itab.h.  For names kept for a whole run: command names, mapped
 * files, a profile's strings.
 */
#ifndef PIPE_STRTAB_H
#define PIPE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "itab.h"

/* { 0 } is empty; set max before the first add. */
struct strtab {
	char **strs;     /* owned: the copies, strs[number], nr of them */
	size_t cap;      /* room in strs */
	uint32_t nr;     /* strings held */
	uint32_t max;    /* nr never passes it; 0: UINT32_MAX / 2 */
	struct itab tab; /* strs by content */
};

/* The number of string s, or -1 when t does not hold it. */
int64_t strtab_find(const struct strtab *t, const char *s);

/*
 * The number of string s, added (copied) when new: its copy is
 * t->strs[number], owned by t, at the same address until
 * strtab_release.  -E2BIG when t already holds max strings, -ENOMEM.
 */
int64_t strtab_add(struct strtab *t, const char *s);

/*
 * strtab_add for a table with an array of the caller's beside it, one
 * item per string: *itemsp (of *cap items of `size` bytes) grows to hold
 * the new string's item, which starts zeroed.  Same returns.
 */
int64_t strtab_add_item(struct strtab *t, const char *s, void *itemsp,
			size_t *cap, size_t size);

/* Free the copies and the index; t is empty again (max kept). */
void strtab_release(struct strtab *t);

#endif
