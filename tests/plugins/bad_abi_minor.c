/*
 * bad_abi_minor.c - a broken plugin for the loader tests: an otherwise
 * valid sink that needs minor version 7 of this ABI, newer than this
 * pipe speaks.
 */
#include "pipe_plugin.h"
#include "stub.h"

PIPE_EXPORT const struct pipe_plugin pipe_plugin = {
	.abi = (PIPE_ABI_MAJOR << 16) | 7,
	.size = sizeof(struct pipe_plugin),
	.kind = PIPE_KIND_SINK,
	.name = "bad_abi_minor",
	.summary = "needs ABI 2.7",
	.version = "0",
	.open = stub_open,
	.close = stub_close,
	.consume = stub_consume,
};
