/*
 * frames.h - the one walker of a sample's callchain: its frames leaf
 * first, without the context markers, each with the cpumode of its
 * context and whether it is a return address.
 */
#ifndef PIPE_FRAMES_H
#define PIPE_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "pipe_plugin.h"

/* A walk over one sample's callchain; the caller's, see frames_init. */
struct frames {
	const struct pipe_sample *s; /* borrowed for the walk */
	uint64_t next;               /* callchain entry read next */
	uint16_t misc;               /* cpumode of the context walked */
	bool in_context;             /* a frame of it was given already */
};

/* One frame of the callchain. */
struct frame {
	uint64_t addr;  /* as recorded */
	uint16_t misc;  /* the sample's misc in its own context, else
			   PERF_RECORD_MISC_KERNEL, _USER or
			   _CPUMODE_UNKNOWN after a context marker */
	bool ret;       /* a return address: it points after the call,
			   look at addr - 1 (the first frame of a context
			   is where it was interrupted) */
};

/* Start a walk over s's callchain; s is borrowed until the walk ends. */
void frames_init(struct frames *w, const struct pipe_sample *s);

/* The next frame into *f: true, or false at the end of the callchain
 * (at once for a sample without one: its frame is its ip). */
bool frames_next(struct frames *w, struct frame *f);

#endif
