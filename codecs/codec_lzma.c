/*
 * codec_lzma.c - the lzma codec (id 2): each block is one raw LZMA2
 * stream (no .xz headers or check; the container checksums blocks), made
 * from the preset `level` (+ `extreme`) with the dictionary capped to the
 * block, so encoder memory follows the block size.  The decoder's
 * dictionary is the block's raw length.  No dictionaries.
 */
#include <errno.h>
#include <stdlib.h>

#include <lzma.h>

#include "codec_check.h"
#include "pipe_plugin.h"

/* Largest block either side accepts: the format's length limit. */
#define LZMA_BLOCK_MAX (64u << 20)

struct xz_state {
	struct codec_who who;         /* host, ctx, "lzma": for messages */
	lzma_options_lzma preset;     /* from level and extreme */
	lzma_stream enc;              /* re-initialized per block */
	lzma_stream dec;              /* re-initialized per block */
};

static const struct pipe_param xz_params[] = {
	{ "level", PIPE_PARAM_INT, PIPE_PARAM_POSITIONAL, "6",
	  "compression preset, 0 fastest, 9 smallest", NULL, 0, 9 },
	{ "extreme", PIPE_PARAM_BOOL, 0, "off",
	  "slower preset variant for slightly smaller output", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static void xz_close(void *state)
{
	struct xz_state *s = state;

	if (!s)
		return;
	lzma_end(&s->enc);
	lzma_end(&s->dec);
	free(s);
}

static const char *xz_why(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR:
		return "out of memory";
	case LZMA_MEMLIMIT_ERROR:
		return "memory limit reached";
	case LZMA_OPTIONS_ERROR:
		return "unsupported options";
	case LZMA_DATA_ERROR:
		return "corrupt data";
	case LZMA_BUF_ERROR:
		return "stream ends early or does not fit";
	case LZMA_FORMAT_ERROR:
		return "not an lzma stream";
	case LZMA_PROG_ERROR:
		return "invalid arguments";
	default:
		return "unexpected return code";
	}
}

static int xz_fail(struct xz_state *s, const char *what, lzma_ret ret)
{
	s->who.host->error(s->who.ctx, "cannot %s 'lzma': %s", what,
			   xz_why(ret));
	return ret == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
}

static int xz_open(const struct pipe_host *host, struct pipe_ctx *ctx,
			   void **state)
{
	struct xz_state *s;
	const lzma_stream init = LZMA_STREAM_INIT;
	uint32_t preset;

	s = calloc(1, sizeof(*s));
	if (!s) {
		host->error(ctx, "cannot open 'lzma': out of memory");
		return -ENOMEM;
	}
	s->who = (struct codec_who){ host, ctx, "lzma" };
	s->enc = init;
	s->dec = init;
	preset = (uint32_t)host->arg_int(ctx, "level");
	if (host->arg_int(ctx, "extreme"))
		preset |= LZMA_PRESET_EXTREME;
	if (lzma_lzma_preset(&s->preset, preset)) {
		host->error(ctx, "cannot open 'lzma': unsupported preset %u",
			    preset & LZMA_PRESET_LEVEL_MASK);
		free(s);
		return -EINVAL;
	}
	*state = s;
	return 0;
}

/* The smallest dictionary that covers len bytes, at most `max`. */
static uint32_t xz_dict_for(size_t len, uint32_t max)
{
	uint32_t d = LZMA_DICT_SIZE_MIN;

	while (d < len && d < max)
		d <<= 1;
	return d < max ? d : max;
}

/* The filter chain of one raw LZMA2 stream made with opt. */
static void xz_filters(lzma_filter f[2], lzma_options_lzma *opt)
{
	f[0].id = LZMA_FILTER_LZMA2;
	f[0].options = opt;
	f[1].id = LZMA_VLI_UNKNOWN;
	f[1].options = NULL;
}

static size_t xz_bound(void *state, size_t raw_len)
{
	(void)state;
	/* An .xz stream bounds the raw LZMA2 stream inside it. */
	return lzma_stream_buffer_bound(raw_len);
}

static int xz_compress(void *state, uint32_t dict_id, const void *src,
			 size_t len, void *dst, size_t cap, size_t *out_len)
{
	struct xz_state *s = state;
	lzma_options_lzma opt = s->preset;
	lzma_filter filters[2];
	lzma_ret ret;

	if (dict_id)
		return codec_no_dict(&s->who, dict_id);
	if (len > LZMA_BLOCK_MAX)
		return codec_too_big(&s->who, "compress", len);
	opt.dict_size = xz_dict_for(len, s->preset.dict_size);
	xz_filters(filters, &opt);
	ret = lzma_raw_encoder(&s->enc, filters);
	if (ret != LZMA_OK)
		return xz_fail(s, "compress with", ret);
	s->enc.next_in = src;
	s->enc.avail_in = len;
	s->enc.next_out = dst;
	s->enc.avail_out = cap;
	do
		ret = lzma_code(&s->enc, LZMA_FINISH);
	while (ret == LZMA_OK && s->enc.avail_out);
	if (ret != LZMA_STREAM_END) {
		if (ret == LZMA_OK || ret == LZMA_BUF_ERROR)
			return codec_no_room(&s->who, cap);
		return xz_fail(s, "compress with", ret);
	}
	*out_len = (size_t)s->enc.total_out;
	return 0;
}

static int xz_decompress(void *state, uint32_t dict_id, const void *src,
			   size_t len, void *dst, size_t raw_len)
{
	struct xz_state *s = state;
	lzma_options_lzma opt = s->preset;
	lzma_filter filters[2];
	unsigned char none;
	lzma_ret ret;

	if (dict_id)
		return codec_no_dict(&s->who, dict_id);
	if (raw_len > LZMA_BLOCK_MAX)
		return codec_too_big(&s->who, "decompress", raw_len);
	/* No match reaches further back than the block's start. */
	opt.dict_size = xz_dict_for(raw_len, LZMA_BLOCK_MAX);
	xz_filters(filters, &opt);
	ret = lzma_raw_decoder(&s->dec, filters);
	if (ret != LZMA_OK)
		return xz_fail(s, "decompress with", ret);
	s->dec.next_in = src;
	s->dec.avail_in = len;
	s->dec.next_out = raw_len ? dst : &none;
	s->dec.avail_out = raw_len;
	/* LZMA_OK without progress comes back as LZMA_BUF_ERROR. */
	do
		ret = lzma_code(&s->dec, LZMA_FINISH);
	while (ret == LZMA_OK);
	if (ret == LZMA_BUF_ERROR && !s->dec.avail_out && s->dec.avail_in)
		return codec_too_long(&s->who, raw_len);
	if (ret != LZMA_STREAM_END)
		return xz_fail(s, "decompress with", ret);
	return codec_check_end(&s->who, s->dec.total_out, raw_len,
			       s->dec.avail_in);
}

PIPE_PLUGIN_CODEC(
	.flags = 0,
	.name = "lzma",
	.summary = "raw LZMA2 blocks (xz's compressor), slow and small",
	.version = "1 (liblzma " LZMA_VERSION_STRING ")",
	.params = xz_params,
	.codec_id = PIPE_CODEC_LZMA,
	.open = xz_open,
	.close = xz_close,
	.bound = xz_bound,
	.compress = xz_compress,
	.decompress = xz_decompress
);
