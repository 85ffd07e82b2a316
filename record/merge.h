/*
 * merge.h - the time-order merge of per-stream record queues.
 *
 * Records are copied in per stream (each stream's records must come in
 * time order); merge_pop releases, in time order across streams, every
 * record older than a horizon.  Live sources give the horizon in rounds
 * (docs/format.md), the container reader from its block horizons.
 */
#ifndef PIPE_MERGE_H
#define PIPE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "pipe_plugin.h"

struct merge;

int merge_new(struct merge **out);
void merge_free(struct merge *m); /* NULL is a no-op */
/*
 * Copy records in (the one copy out of a ring).  A record older than the
 * newest of its stream (counted in merge_reordered) is kept apart and
 * still released in its time's place.  Records already popped stay valid
 * until this call returns.  -ENOMEM.
 */
int merge_push(struct merge *m, const struct pipe_record *recs, size_t nr);
/*
 * Release up to `max` records with time < horizon (UINT64_MAX: all) into
 * *out, in time order; ties go to the sideband first, then by stream.
 * The views live until the next merge_push or merge_pop.  out->nr is 0
 * when nothing is ready.
 */
void merge_pop(struct merge *m, uint64_t horizon, size_t max,
	       struct pipe_batch *out);
/* Bytes held, for callers that bound memory. */
size_t merge_bytes(const struct merge *m);
/* Records held. */
size_t merge_count(const struct merge *m);
/* Oldest held time, UINT64_MAX when empty. */
uint64_t merge_oldest(const struct merge *m);
/* Records that came older than the newest of their stream. */
uint64_t merge_reordered(const struct merge *m);

#endif
