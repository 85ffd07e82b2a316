/*
 * no_symbol.c - a broken plugin for the loader tests: a shared object
 * that exports a descriptor under the wrong name, so 'pipe_plugin' is
 * missing.
 */
#include "pipe_plugin.h"

PIPE_EXPORT const struct pipe_plugin pipe_plugin_v1 = {
	.abi = PIPE_ABI,
	.size = sizeof(struct pipe_plugin),
	.kind = PIPE_KIND_SINK,
	.name = "no_symbol",
};
