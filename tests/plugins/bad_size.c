/*
 * bad_size.c - a broken plugin for the loader tests: a sink whose
 * descriptor claims to be 16 bytes, smaller than ABI 1.0 allows.
 */
#include "pipe_plugin.h"

static int size_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	(void)host;
	(void)ctx;
	*state = NULL;
	return 0;
}

static void size_close(void *state)
{
	(void)state;
}

static int size_consume(void *state, const struct pipe_batch *batch)
{
	(void)state;
	(void)batch;
	return 0;
}

PIPE_EXPORT const struct pipe_plugin pipe_plugin = {
	.abi = PIPE_ABI,
	.size = 16,
	.kind = PIPE_KIND_SINK,
	.name = "bad_size",
	.summary = "a truncated descriptor",
	.version = "0",
	.open = size_open,
	.close = size_close,
	.consume = size_consume,
};
