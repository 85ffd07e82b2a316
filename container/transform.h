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
/* Decode into raw, which holds exactly raw_len bytes; untrusted input:
 * any inconsistency is -EINVAL with a message. */
int transform_decode(struct transform *t, const void *enc, size_t len,
		     void *raw, size_t raw_len, struct pipe_err *err);

#endif
