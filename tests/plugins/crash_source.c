/*
 * crash_source.c - a record source that crashes with `sig=` in `at=`
 * (open, start or read); before crashing in read it hands out nothing.
 */
#include "crash_common.h"
#include "pipe_plugin.h"

struct crashs {
	int sig; /* index in CRASH_SIGNALS */
	int at;  /* 0 open, 1 start, 2 read */
};

static const struct pipe_param crashs_params[] = {
	PIPE_P_ENUM("sig", "segv", CRASH_SIGNALS, "how to crash"),
	PIPE_P_ENUM("at", "read", "open|start|read", "where to crash"),
	PIPE_P_END,
};

static int crashs_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	struct crashs *c = *state;

	c->sig = (int)host->arg_int(ctx, "sig");
	c->at = (int)host->arg_int(ctx, "at");
	if (c->at == 0)
		crash_now(c->sig);
	return 0;
}

static int crashs_start(void *state)
{
	struct crashs *c = state;

	if (c->at == 1)
		crash_now(c->sig);
	return 0;
}

static int crashs_read(void *state, struct pipe_batch *out)
{
	struct crashs *c = state;

	(void)out;
	if (c->at == 2)
		crash_now(c->sig);
	return PIPE_EOF;
}

PIPE_PLUGIN_SOURCE(
	.name = "crash_source",
	.summary = "a source that crashes as asked",
	.state_size = sizeof(struct crashs),
	.params = crashs_params,
	.open = crashs_open,
	.start = crashs_start,
	.read = crashs_read
);
