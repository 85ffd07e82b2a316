/*
 * stub.h - the operations that do nothing, for the test plugins whose
 * point is elsewhere (a bad descriptor, a missing symbol, a host check):
 * an open that keeps no state, a close with nothing to free, a consume
 * that takes every batch.  Uses only the public header, like the plugins
 * that include it; each plugin gets its own copy.
 */
#ifndef PIPE_TEST_STUB_H
#define PIPE_TEST_STUB_H

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

#endif
