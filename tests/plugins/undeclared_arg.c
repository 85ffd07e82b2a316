/*
 * undeclared_arg.c - a sink with a bug: it asks the host for a parameter
 * its table does not declare.  pipe must warn and go on, not crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pipe_plugin.h"
#include "stub.h"

static int ua_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		   void **state)
{
	const char *v = host->arg_str(ctx, "colour");

	*state = malloc(1);
	if (!*state)
		return -ENOMEM;
	printf("colour: %s\n", v ? v : "(unset)");
	return 0;
}

static void ua_close(void *state)
{
	free(state);
}

PIPE_PLUGIN_SINK(
	.name = "undeclared",
	.summary = "asks for a parameter it does not declare",
	.version = "1",
	.open = ua_open,
	.close = ua_close,
	.consume = stub_consume
);
