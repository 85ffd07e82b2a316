/*
 * crash_batch.c - a batch sink that crashes in consume (after `after=`
 * batches) or in flush, with the signal `sig=`.
 */
#include "crash_common.h"
#include "pipe_plugin.h"

struct crashb {
	int sig;         /* index in CRASH_SIGNALS */
	int at;          /* 0: consume, 1: flush */
	uint64_t after;  /* batches before crashing */
	uint64_t seen;
};

static const struct pipe_param crashb_params[] = {
	PIPE_P_ENUM("sig", "segv", CRASH_SIGNALS, "how to crash"),
	PIPE_P_ENUM("at", "consume", "consume|flush", "where to crash"),
	PIPE_P_INT("after", 0, "0", 0, 1000000000, "batches before crashing"),
	PIPE_P_END,
};

static int crashb_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	struct crashb *c = *state;

	c->sig = (int)host->arg_int(ctx, "sig");
	c->at = (int)host->arg_int(ctx, "at");
	c->after = (uint64_t)host->arg_int(ctx, "after");
	return 0;
}

static int crashb_consume(void *state, const struct pipe_batch *b)
{
	struct crashb *c = state;

	(void)b;
	if (c->at == 0 && ++c->seen > c->after)
		crash_now(c->sig);
	return 0;
}

static int crashb_flush(void *state)
{
	struct crashb *c = state;

	if (c->at == 1)
		crash_now(c->sig);
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "crash_batch",
	.summary = "a batch sink that crashes as asked",
	.state_size = sizeof(struct crashb),
	.params = crashb_params,
	.open = crashb_open,
	.consume = crashb_consume,
	.flush = crashb_flush
);
