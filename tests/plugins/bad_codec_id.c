/*
 * bad_codec_id.c - a broken plugin for the loader tests: a codec that
 * claims id 7, in the range reserved for pipe's own codecs.
 */
#include "pipe_plugin.h"
#include "stub.h"

PIPE_PLUGIN_CODEC(
	.name = "bad_codec_id",
	.summary = "a codec id from pipe's own range",
	.version = "0",
	.codec_id = 7,
	.open = stub_open,
	.close = stub_close,
	.bound = stub_bound,
	.compress = stub_compress,
	.decompress = stub_decompress
);
