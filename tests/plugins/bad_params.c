/*
 * bad_params.c - a broken plugin for the loader tests: a record sink whose
 * parameter table has a default outside the parameter's own bounds.
 */
#include "pipe_plugin.h"
#include "stub.h"

static const struct pipe_param bad_params[] = {
	{ .name = "level", .type = PIPE_PARAM_INT, .def = "30",
	  .help = "a level", .min = 1, .max = 19 },
	{ 0 },
};

PIPE_PLUGIN_SINK(
	.name = "bad_params",
	.summary = "a default out of bounds",
	.version = "0",
	.params = bad_params,
	.open = stub_open,
	.close = stub_close,
	.consume = stub_consume
);
