/*
 * crash_source.c - a record source that crashes with `sig=` in `at=`
 * (open, start or read); before crashing in read it hands out nothing.
 */
#include "crash_common.h"
#include "pipe_plugin.h"

enum { AT_OPEN, AT_START, AT_READ };

static const struct pipe_param crashs_params[] = {
	PIPE_P_ENUM("sig", "segv", CRASH_SIGNALS, "how to crash"),
	PIPE_P_ENUM("at", "read", "open|start|read", "where to crash"),
	PIPE_P_END,
};

static int crashs_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	struct crash_how *h = *state;

	crash_how_read(h, host, ctx, false);
	crash_at(h, AT_OPEN);
	return 0;
}

static int crashs_start(void *state)
{
	crash_at(state, AT_START);
	return 0;
}

static int crashs_read(void *state, struct pipe_batch *out)
{
	(void)out;
	crash_at(state, AT_READ);
	return PIPE_EOF;
}

PIPE_PLUGIN_SOURCE(
	.name = "crash_source",
	.summary = "a source that crashes as asked",
	.state_size = sizeof(struct crash_how),
	.params = crashs_params,
	.open = crashs_open,
	.start = crashs_start,
	.read = crashs_read
);
