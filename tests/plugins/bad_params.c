/*
 * bad_params.c - a broken plugin for the loader tests: a record sink whose
 * parameter table has a default outside the parameter's own bounds.
 */
#include "pipe_plugin.h"

static const struct pipe_param bad_params[] = {
	{ .name = "level", .type = PIPE_PARAM_INT, .def = "30",
	  .help = "a level", .min = 1, .max = 19 },
	{ 0 },
};

static int params_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	(void)host;
	(void)ctx;
	*state = NULL;
	return 0;
}

static void params_close(void *state)
{
	(void)state;
}

static int params_consume(void *state, const struct pipe_batch *batch)
{
	(void)state;
	(void)batch;
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "bad_params",
	.summary = "a default out of bounds",
	.version = "0",
	.params = bad_params,
	.open = params_open,
	.close = params_close,
	.consume = params_consume
);
