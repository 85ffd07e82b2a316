/*
 * fuzz_events.h - the metadata of the harnesses that decode samples: one
 * event of the attr the input chose and, when the input asks, a second
 * one with PERF_SAMPLE_IDENTIFIER added, whose records are told apart by
 * it, as in a recording of two events.
 */
#ifndef PIPE_FUZZ_EVENTS_H
#define PIPE_FUZZ_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "meta.h"

/* New metadata of event a with id ids[0] and, when `two`, a second event
 * with id ids[1] (a->sample_type gains IDENTIFIER then); NULL when the
 * attr is refused.  The caller frees it with meta_free. */
static inline struct meta *fuzz_events(struct perf_event_attr *a,
				       const uint64_t ids[2], bool two)
{
	struct meta *m = meta_new();
	struct pipe_err err;

	if (!m || meta_add_event(m, a, "one", ids, 1, &err) < 0)
		goto fail;
	if (two) {
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
		if (meta_add_event(m, a, "two", ids + 1, 1, &err) < 0)
			goto fail;
	}
	return m;
fail:
	meta_free(m);
	return NULL;
}

#endif
