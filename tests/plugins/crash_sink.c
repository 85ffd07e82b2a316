/*
 * crash_sink.c - a per-record sink that crashes with the signal `sig=`
 * in the call `at=` (after `after=` samples, for sample): the host must
 * print one line naming it, its file and the call.
 */
#include "crash_common.h"
#include "pipe_plugin.h"

struct crash {
	int sig;          /* index in CRASH_SIGNALS */
	int at;           /* index in the choices of at= */
	uint64_t after;   /* samples before crashing in sample */
	uint64_t samples; /* seen so far */
};

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
	struct crash *c = *state;

	c->sig = (int)host->arg_int(ctx, "sig");
	c->at = (int)host->arg_int(ctx, "at");
	c->after = (uint64_t)host->arg_int(ctx, "after");
	if (c->at == AT_OPEN)
		crash_now(c->sig);
	return 0;
}

static int crash_start(void *state)
{
	struct crash *c = state;

	if (c->at == AT_START_SINK)
		crash_now(c->sig);
	return 0;
}

static int crash_sample(void *state, const struct pipe_sample_view *v)
{
	struct crash *c = state;

	(void)v;
	if (c->at == AT_SAMPLE && ++c->samples > c->after)
		crash_now(c->sig);
	return 0;
}

static int crash_sideband(void *state, const struct pipe_sideband *sb)
{
	struct crash *c = state;

	(void)sb;
	if (c->at == AT_SIDEBAND)
		crash_now(c->sig);
	return 0;
}

static int crash_finish(void *state)
{
	struct crash *c = state;

	if (c->at == AT_FINISH)
		crash_now(c->sig);
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "crash",
	.summary = "crashes as asked",
	.state_size = sizeof(struct crash),
	.params = crash_params,
	.open = crash_open,
	.start_sink = crash_start,
	.sample = crash_sample,
	.sideband = crash_sideband,
	.finish = crash_finish
);
