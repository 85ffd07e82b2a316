/*
 * bad_abi_major.c - a broken plugin for the loader tests: an otherwise
 * valid sink that claims ABI 2.0, which this pipe must refuse.
 */
#include "pipe_plugin.h"

static int major_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	(void)host;
	(void)ctx;
	*state = NULL;
	return 0;
}

static void major_close(void *state)
{
	(void)state;
}

static int major_consume(void *state, const struct pipe_batch *batch)
{
	(void)state;
	(void)batch;
	return 0;
}

PIPE_EXPORT const struct pipe_plugin pipe_plugin = {
	.abi = (1 << 16) | 0,
	.size = sizeof(struct pipe_plugin),
	.kind = PIPE_KIND_SINK,
	.name = "bad_abi_major",
	.summary = "claims ABI 1.0",
	.version = "0",
	.open = major_open,
	.close = major_close,
	.consume = major_consume,
};
