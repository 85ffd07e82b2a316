/*
 * bad_abi_minor.c - a broken plugin for the loader tests: an otherwise
 * valid sink that needs ABI 1.7, newer than this pipe speaks.
 */
#include "pipe_plugin.h"

static int minor_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	(void)host;
	(void)ctx;
	*state = NULL;
	return 0;
}

static void minor_close(void *state)
{
	(void)state;
}

static int minor_consume(void *state, const struct pipe_batch *batch)
{
	(void)state;
	(void)batch;
	return 0;
}

PIPE_EXPORT const struct pipe_plugin pipe_plugin = {
	.abi = (PIPE_ABI_MAJOR << 16) | 7,
	.size = sizeof(struct pipe_plugin),
	.kind = PIPE_KIND_SINK,
	.name = "bad_abi_minor",
	.summary = "needs ABI 2.7",
	.version = "0",
	.open = minor_open,
	.close = minor_close,
	.consume = minor_consume,
};
