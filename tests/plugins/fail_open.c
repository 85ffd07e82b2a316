/*
 * fail_open.c - a broken plugin for the tests: a valid record sink whose
 * `open` always fails through host->error, so the host must print the
 * plugin's message and exit 1.
 */
#include <errno.h>

#include "pipe_plugin.h"
#include "stub.h"

static int fail_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	*state = NULL;
	host->error(ctx, "cannot frobnicate 'x': no reason");
	return -EINVAL;
}

PIPE_PLUGIN_SINK(
	.name = "fail_open",
	.summary = "a sink whose open always fails",
	.version = "0",
	.open = fail_open,
	.close = stub_close,
	.consume = stub_consume
);
