/*
 * transform.h - the lossless record-aware transform applied to a block's
 * raw records before the codec (docs/codecs.md): sample records split into
 * columns (time deltas restarting per block, varint scalars, ip dropped
 * when it equals the first callchain entry after the context marker,
 * callchains as 64-bit values); other records pass through.
 */
#ifndef PIPE_TRANSFORM_H
#define PIPE_TRANSFORM_H

#include <stddef.h>
#include <stdint.h>

struct meta;
struct pipe_err;
struct tenc;
struct transform;

/* Transform ids stored in block headers. */
enum transform_id {
	TRANSFORM_NONE = 0,
	TRANSFORM_COLUMNS = 1,
};

/* One per thread; `meta` is borrowed and must outlive it. */
int transform_new(struct transform **out, const struct meta *meta,
		  struct pipe_err *err);
void transform_free(struct transform *t);
/*
 * Encode len bytes of whole records.  *out points into t's own buffer,
 * valid until the next call.  -EINVAL: this block cannot be transformed
 * (the writer stores it untransformed).
 */
int transform_encode(struct transform *t, const void *raw, size_t len,
		     const void **out, size_t *out_len);
/*
 * A block encoded record by record, as records come (the writer keeps
 * one per stream, so records go from a ring straight into columns):
 * tenc_add each whole record, then tenc_finish.  `meta` is borrowed and
 * must outlive it; `hint` is the bytes of records a block will probably
 * hold (the room made at once).  -ENOMEM.
 */
int tenc_new(struct tenc **out, const struct meta *meta, size_t hint);
void tenc_free(struct tenc *e);
/* Start a new block (tenc_new starts one). */
void tenc_reset(struct tenc *e);
/* Add one whole record of `size` bytes (its header's size), copied:
 * rec may be reused once this returns.  -EINVAL when it is shorter than
 * a header or the block would pass the format's limit; -ENOMEM. */
int tenc_add(struct tenc *e, const void *rec, size_t size);
/* Records and bytes added since the block started. */
uint64_t tenc_records(const struct tenc *e);
size_t tenc_raw_len(const struct tenc *e);
/* The records copied whole, in order (every record but the split
 * samples; all of them when tenc_finish says -EINVAL); borrowed from e
 * until the next add or reset. */
void tenc_other(const struct tenc *e, const void **out, size_t *len);
/* The encoded block: *out points into e, valid until the next add or
 * reset; the same bytes transform_encode makes of the same records.
 * -EINVAL: no sample was split, the block is better stored as it is
 * (tenc_other holds it whole); -E2BIG: it would pass the format's limit;
 * -ENOMEM. */
int tenc_finish(struct tenc *e, const void **out, size_t *out_len);
/* Decode into raw, which holds exactly raw_len bytes; untrusted input:
 * any inconsistency is -EINVAL with a message. */
int transform_decode(struct transform *t, const void *enc, size_t len,
		     void *raw, size_t raw_len, struct pipe_err *err);

#endif
