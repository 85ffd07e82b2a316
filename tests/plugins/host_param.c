/*
 * host_param.c - a broken plugin for the loader tests: a byte source
 * that declares `strict`, one of the reader options the host parses for
 * every byte source.
 */
#include "pipe_plugin.h"
#include "stub.h"

static const struct pipe_param hp_params[] = {
	{ .name = "path", .type = PIPE_PARAM_STR,
	  .flags = PIPE_PARAM_POSITIONAL, .help = "a file" },
	{ .name = "strict", .type = PIPE_PARAM_BOOL, .def = "off",
	  .help = "the host's, not ours" },
	{ 0 },
};

static int hp_read_at(void *state, uint64_t off, void *buf, size_t len,
		      size_t *got)
{
	(void)state;
	(void)off;
	(void)buf;
	(void)len;
	*got = 0;
	return 0;
}

PIPE_PLUGIN_SOURCE(
	.flags = PIPE_PLUGIN_BYTES,
	.name = "host_param",
	.summary = "declares a host-owned option",
	.version = "0",
	.params = hp_params,
	.open = stub_open,
	.close = stub_close,
	.read_at = hp_read_at
);
