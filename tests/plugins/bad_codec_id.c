/*
 * bad_codec_id.c - a broken plugin for the loader tests: a codec that
 * claims id 7, in the range reserved for pipe's own codecs.
 */
#include <errno.h>
#include <string.h>

#include "pipe_plugin.h"
#include "stub.h"

static size_t bc_bound(void *state, size_t raw_len)
{
	(void)state;
	return raw_len;
}

static int bc_compress(void *state, uint32_t dict_id, const void *src,
		       size_t len, void *dst, size_t cap, size_t *out_len)
{
	(void)state;
	(void)dict_id;
	if (len > cap)
		return -ENOSPC;
	memcpy(dst, src, len);
	*out_len = len;
	return 0;
}

static int bc_decompress(void *state, uint32_t dict_id, const void *src,
			 size_t len, void *dst, size_t raw_len)
{
	(void)state;
	(void)dict_id;
	(void)raw_len;
	memcpy(dst, src, len);
	return 0;
}

PIPE_PLUGIN_CODEC(
	.name = "bad_codec_id",
	.summary = "a codec id from pipe's own range",
	.version = "0",
	.codec_id = 7,
	.open = stub_open,
	.close = stub_close,
	.bound = bc_bound,
	.compress = bc_compress,
	.decompress = bc_decompress
);
