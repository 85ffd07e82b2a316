/*
 * bad_abi_major.c - a broken plugin for the loader tests: an otherwise
 * valid sink that claims ABI 1.0, an old major this pipe must refuse.
 */
#include "pipe_plugin.h"
#include "stub.h"

PIPE_EXPORT const struct pipe_plugin pipe_plugin = {
	.abi = (1 << 16) | 0,
	.size = sizeof(struct pipe_plugin),
	.kind = PIPE_KIND_SINK,
	.name = "bad_abi_major",
	.summary = "claims ABI 1.0",
	.version = "0",
	.open = stub_open,
	.close = stub_close,
	.consume = stub_consume,
};
