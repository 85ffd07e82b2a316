/*
 * crash_batch.c - a batch sink that crashes in consume (after `after=`
 * batches) or in flush, with the signal `sig=`.
 */
#include "crash_common.h"
#include "pipe_plugin.h"

enum { AT_CONSUME, AT_FLUSH };

static const struct pipe_param crashb_params[] = {
	PIPE_P_ENUM("sig", "segv", CRASH_SIGNALS, "how to crash"),
	PIPE_P_ENUM("at", "consume", "consume|flush", "where to crash"),
	PIPE_P_INT("after", 0, "0", 0, 1000000000, "batches before crashing"),
	PIPE_P_END,
};

static int crashb_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	crash_how_read(*state, host, ctx, true);
	return 0;
}

static int crashb_consume(void *state, const struct pipe_batch *b)
{
	(void)b;
	crash_at(state, AT_CONSUME);
	return 0;
}

static int crashb_flush(void *state)
{
	crash_at(state, AT_FLUSH);
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "crash_batch",
	.summary = "a batch sink that crashes as asked",
	.state_size = sizeof(struct crash_how),
	.params = crashb_params,
	.open = crashb_open,
	.consume = crashb_consume,
	.flush = crashb_flush
);
