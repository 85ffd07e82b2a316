/*
 * stub.h - the operations that do nothing, for the test plugins whose
 * point is elsewhere (a bad descriptor, a missing symbol, a host check):
 * an open that keeps no state, a close with nothing to free, a consume
 * that takes every batch, a codec that stores blocks as they are.  Uses
 * only the public header, like the plugins that include it; each plugin
 * gets its own copy.
 */
#ifndef PIPE_TEST_STUB_H
#define PIPE_TEST_STUB_H

#include <errno.h>
#include <string.h>

#include "pipe_plugin.h"

static inline int stub_open(const struct pipe_host *host,
			    struct pipe_ctx *ctx, void **state)
{
	(void)host;
	(void)ctx;
	*state = NULL;
	return 0;
}

static inline void stub_close(void *state)
{
	(void)state;
}

static inline int stub_consume(void *state, const struct pipe_batch *batch)
{
	(void)state;
	(void)batch;
	return 0;
}

/* A stored block is as long as its raw bytes. */
static inline size_t stub_bound(void *state, size_t raw_len)
{
	(void)state;
	return raw_len;
}

/* Store the block as it is; -ENOSPC when it does not fit in cap. */
static inline int stub_compress(void *state, uint32_t dict_id,
				const void *src, size_t len, void *dst,
				size_t cap, size_t *out_len)
{
	(void)state;
	(void)dict_id;
	if (len > cap)
		return -ENOSPC;
	if (len)
		memcpy(dst, src, len);
	*out_len = len;
	return 0;
}

/* A stored block back; -EINVAL when its length is not the raw length. */
static inline int stub_decompress(void *state, uint32_t dict_id,
				  const void *src, size_t len, void *dst,
				  size_t raw_len)
{
	(void)state;
	(void)dict_id;
	if (len != raw_len)
		return -EINVAL;
	if (len)
		memcpy(dst, src, len);
	return 0;
}

#endif
