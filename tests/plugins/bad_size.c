/*
 * bad_size.c - a broken plugin for the loader tests: a sink whose
 * descriptor claims to be 16 bytes, smaller than ABI 1.0 allows.
 */
#include "pipe_plugin.h"
#include "stub.h"

PIPE_EXPORT const struct pipe_plugin pipe_plugin = {
	.abi = PIPE_ABI,
	.size = 16,
	.kind = PIPE_KIND_SINK,
	.name = "bad_size",
	.summary = "a truncated descriptor",
	.version = "0",
	.open = stub_open,
	.close = stub_close,
	.consume = stub_consume,
};
