/*
 * grow.h - the one growable array: room doubled until it fits, with a
 * maximum, for every buffer of the command and the plugins that grows as
 * it fills.
 */
#ifndef PIPE_GROW_H
#define PIPE_GROW_H

#include <stddef.h>

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

#endif
