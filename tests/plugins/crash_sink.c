/*
 * crash_sink.c - a per-record sink that crashes with the signal `sig=`
 * in the call `at=` (after `after=` samples, for sample): the host must
 * print one line naming it, its file and the call.
 */
#include "crash_common.h"
#include "pipe_plugin.h"

enum { AT_OPEN, AT_START_SINK, AT_SAMPLE, AT_SIDEBAND, AT_FINISH };

static const struct pipe_param crash_params[] = {
	PIPE_P_ENUM("sig", "segv", CRASH_SIGNALS, "how to crash"),
	PIPE_P_ENUM("at", "sample", "open|start_sink|sample|sideband|finish",
		    "where to crash"),
	PIPE_P_INT("after", 0, "0", 0, 1000000000, "samples before crashing"),
	PIPE_P_END,
};

static int crash_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct crash_how *h = *state;

	crash_how_read(h, host, ctx, true);
	crash_at(h, AT_OPEN);
	return 0;
}

static int crash_start(void *state)
{
	crash_at(state, AT_START_SINK);
	return 0;
}

static int crash_sample(void *state, const struct pipe_sample_view *v)
{
	(void)v;
	crash_at(state, AT_SAMPLE);
	return 0;
}

static int crash_sideband(void *state, const struct pipe_sideband *sb)
{
	(void)sb;
	crash_at(state, AT_SIDEBAND);
	return 0;
}

static int crash_finish(void *state)
{
	crash_at(state, AT_FINISH);
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "crash",
	.summary = "crashes as asked",
	.state_size = sizeof(struct crash_how),
	.params = crash_params,
	.open = crash_open,
	.start_sink = crash_start,
	.sample = crash_sample,
	.sideband = crash_sideband,
	.finish = crash_finish
);
