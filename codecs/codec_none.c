/*
 * codec_none.c - the `none` codec: blocks stored as they are.  Useful for
 * speed, for debugging the format, and where no library is built.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_plugin.h"

struct none_state {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
};

static int none_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	struct none_state *s = malloc(sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->host = host;
	s->ctx = ctx;
	*state = s;
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
	struct none_state *s = state;

	if (dict_id) {
		s->host->error(s->ctx, "cannot compress with 'none': it takes no dictionary (id %u)",
			       dict_id);
		return -EINVAL;
	}
	if (len > cap) {
		s->host->error(s->ctx, "cannot compress with 'none': %zu bytes do not fit in %zu",
			       len, cap);
		return -EINVAL;
	}
	if (len)
		memcpy(dst, src, len);
	*out_len = len;
	return 0;
}

static int none_decompress(void *state, uint32_t dict_id, const void *src,
			   size_t len, void *dst, size_t raw_len)
{
	struct none_state *s = state;

	if (dict_id) {
		s->host->error(s->ctx, "cannot decompress with 'none': it takes no dictionary (id %u)",
			       dict_id);
		return -EINVAL;
	}
	if (len != raw_len) {
		s->host->error(s->ctx, "cannot decompress with 'none': stored length %zu is not the raw length %zu",
			       len, raw_len);
		return -EINVAL;
	}
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
