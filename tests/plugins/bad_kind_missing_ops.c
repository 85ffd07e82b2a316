/*
 * bad_kind_missing_ops.c - a broken plugin for the loader tests: a sink
 * with neither `consume` (record sink) nor `write` (byte sink).
 */
#include "pipe_plugin.h"

static int noops_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	(void)host;
	(void)ctx;
	*state = NULL;
	return 0;
}

static void noops_close(void *state)
{
	(void)state;
}

PIPE_PLUGIN_SINK(
	.name = "bad_kind_missing_ops",
	.summary = "a sink that can take nothing",
	.version = "0",
	.open = noops_open,
	.close = noops_close
);
