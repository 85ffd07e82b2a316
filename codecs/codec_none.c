/*
 * codec_none.c - the `none` codec: blocks stored as they are.  Useful for
 * speed, for debugging the format, and where no library is built.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec_check.h"
#include "pipe_plugin.h"

static int none_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	struct codec_who *w = malloc(sizeof(*w));

	if (!w)
		return -ENOMEM;
	*w = (struct codec_who){ host, ctx, "none" };
	*state = w;
	return 0;
}

static void none_close(void *state)
{
	free(state);
}

static size_t none_bound(void *state, size_t raw_len)
{
	(void)state;
	return raw_len;
}

static int none_compress(void *state, uint32_t dict_id, const void *src,
			 size_t len, void *dst, size_t cap, size_t *out_len)
{
	if (dict_id)
		return codec_no_dict(state, dict_id);
	if (len > cap)
		return codec_no_room(state, cap);
	if (len)
		memcpy(dst, src, len);
	*out_len = len;
	return 0;
}

static int none_decompress(void *state, uint32_t dict_id, const void *src,
			   size_t len, void *dst, size_t raw_len)
{
	if (dict_id)
		return codec_no_dict(state, dict_id);
	if (len != raw_len)
		return codec_check_end(state, len, raw_len, 0);
	if (len)
		memcpy(dst, src, len);
	return 0;
}

PIPE_PLUGIN_CODEC(
	.name = "none",
	.summary = "blocks stored uncompressed",
	.version = "1",
	.codec_id = PIPE_CODEC_NONE,
	.open = none_open,
	.close = none_close,
	.bound = none_bound,
	.compress = none_compress,
	.decompress = none_decompress
);
