/*
 * runmerge.h - the time-order merge of runs of records read in place.
 *
 * A run is an array of record views in time order (ties in arrival
 * order), all of one stream, borrowed from its owner: the container
 * reader's decoded blocks.  runmerge_pop releases, in time order across
 * runs, every record older than a horizon, with the order merge.h gives:
 * ties go to the sideband first, then by stream, then to the run added
 * first.  No record byte is copied: the views point into the owner's
 * buffers, which the caller keeps until runmerge_spent gives them back.
 */
#ifndef PIPE_RUNMERGE_H
#define PIPE_RUNMERGE_H

#include <stddef.h>
#include <stdint.h>

#include "pipe_plugin.h"

struct runmerge;

int runmerge_new(struct runmerge **out);
void runmerge_free(struct runmerge *m); /* NULL is a no-op */
/*
 * Add a run: nr records of stream `stream` in time order, `bytes` of
 * record data.  recs and what it points at stay the caller's and must
 * live until runmerge_spent returns `owner`.  nr may be 0 (the run is
 * spent at once).  -ENOMEM.
 */
int runmerge_add(struct runmerge *m, const struct pipe_record *recs,
		 size_t nr, uint32_t stream, size_t bytes, void *owner);
/*
 * Release up to `max` records with time < horizon (UINT64_MAX: all) into
 * *out, in time order.  The views (out->recs and the records) live until
 * the next runmerge_pop or runmerge_spent.  out->nr is 0 when nothing is
 * ready.
 */
void runmerge_pop(struct runmerge *m, uint64_t horizon, size_t max,
		  struct pipe_batch *out);
/*
 * The owner of a run all of whose records were popped, or NULL: call it
 * only when the views of earlier pops are no longer used, until it
 * returns NULL.  The caller may free or reuse what the run borrowed.
 */
void *runmerge_spent(struct runmerge *m);
/* Record bytes held (the sum of the runs' `bytes` not yet spent). */
size_t runmerge_bytes(const struct runmerge *m);
/* Records not yet popped. */
size_t runmerge_count(const struct runmerge *m);

#endif
