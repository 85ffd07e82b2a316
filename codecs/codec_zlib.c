/*
 * codec_zlib.c - the zlib codec (id 1): each block is one zlib stream
 * (RFC 1950: deflate with a 32 KiB window and an Adler-32 trailer).  One
 * deflate and one inflate stream per instance, reset for every block.
 * No dictionaries.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include <zlib.h>

#include "codec_check.h"
#include "pipe_plugin.h"

struct zlib_state {
	struct codec_who who;         /* host, ctx, "zlib": for messages */
	int level;                    /* 1..9 */
	z_stream def;                 /* deflate, reset per block */
	z_stream inf;                 /* inflate, reset per block */
	int def_ready;                /* def was initialized */
	int inf_ready;                /* inf was initialized */
};

static const struct pipe_param zlib_params[] = {
	{ "level", PIPE_PARAM_INT, PIPE_PARAM_POSITIONAL, "6",
	  "compression level, 1 fastest, 9 smallest", NULL, 1, 9 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static void zlib_close(void *state)
{
	struct zlib_state *s = state;

	if (!s)
		return;
	if (s->def_ready)
		deflateEnd(&s->def);
	if (s->inf_ready)
		inflateEnd(&s->inf);
	free(s);
}

/* zlib's message for ret, or a description of the return code. */
static const char *zlib_why(const z_stream *z, int ret)
{
	if (z->msg)
		return z->msg;
	switch (ret) {
	case Z_MEM_ERROR:
		return "out of memory";
	case Z_BUF_ERROR:
		return "stream ends early or does not fit";
	case Z_NEED_DICT:
		return "stream needs a preset dictionary";
	case Z_DATA_ERROR:
		return "corrupt data";
	default:
		return zError(ret);
	}
}

static int zlib_fail(struct zlib_state *s, const char *what,
		     const z_stream *z, int ret)
{
	s->who.host->error(s->who.ctx, "cannot %s 'zlib': %s", what,
			   zlib_why(z, ret));
	return ret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
}

static int zlib_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	struct zlib_state *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s) {
		host->error(ctx, "cannot open 'zlib': out of memory");
		return -ENOMEM;
	}
	s->who = (struct codec_who){ host, ctx, "zlib" };
	s->level = (int)host->arg_int(ctx, "level");
	ret = deflateInit2(&s->def, s->level, Z_DEFLATED, 15, 8,
			   Z_DEFAULT_STRATEGY);
	if (ret != Z_OK) {
		ret = zlib_fail(s, "open", &s->def, ret);
		goto out_free;
	}
	s->def_ready = 1;
	ret = inflateInit2(&s->inf, 15);
	if (ret != Z_OK) {
		ret = zlib_fail(s, "open", &s->inf, ret);
		goto out_free;
	}
	s->inf_ready = 1;
	*state = s;
	return 0;
out_free:
	zlib_close(s);
	return ret;
}

static size_t zlib_bound(void *state, size_t raw_len)
{
	struct zlib_state *s = state;

	if (raw_len > UINT_MAX / 2)
		return 0;
	return deflateBound(&s->def, (uLong)raw_len);
}

static int zlib_compress(void *state, uint32_t dict_id, const void *src,
			 size_t len, void *dst, size_t cap, size_t *out_len)
{
	struct zlib_state *s = state;
	int ret;

	if (dict_id)
		return codec_no_dict(&s->who, dict_id);
	if (len > UINT_MAX / 2)
		return codec_too_big(&s->who, "compress", len);
	if (cap > UINT_MAX)
		cap = UINT_MAX;
	ret = deflateReset(&s->def);
	if (ret != Z_OK)
		return zlib_fail(s, "compress with", &s->def, ret);
	s->def.next_in = (Bytef *)src; /* zlib's API is not const */
	s->def.avail_in = (uInt)len;
	s->def.next_out = dst;
	s->def.avail_out = (uInt)cap;
	ret = deflate(&s->def, Z_FINISH);
	if (ret != Z_STREAM_END) {
		if (ret == Z_OK || ret == Z_BUF_ERROR)
			return codec_no_room(&s->who, cap);
		return zlib_fail(s, "compress with", &s->def, ret);
	}
	*out_len = s->def.total_out;
	return 0;
}

static int zlib_decompress(void *state, uint32_t dict_id, const void *src,
			   size_t len, void *dst, size_t raw_len)
{
	struct zlib_state *s = state;
	unsigned char none;
	int ret;

	if (dict_id)
		return codec_no_dict(&s->who, dict_id);
	if (len > UINT_MAX || raw_len > UINT_MAX)
		return codec_too_big(&s->who, "decompress",
				     len > raw_len ? len : raw_len);
	ret = inflateReset(&s->inf);
	if (ret != Z_OK)
		return zlib_fail(s, "decompress with", &s->inf, ret);
	s->inf.next_in = (Bytef *)src; /* zlib's API is not const */
	s->inf.avail_in = (uInt)len;
	s->inf.next_out = raw_len ? dst : &none;
	s->inf.avail_out = (uInt)raw_len;
	ret = inflate(&s->inf, Z_FINISH);
	if (ret != Z_STREAM_END) {
		if (ret == Z_BUF_ERROR && s->inf.avail_out == 0)
			return codec_too_long(&s->who, raw_len);
		return zlib_fail(s, "decompress with", &s->inf, ret);
	}
	return codec_check_end(&s->who, s->inf.total_out, raw_len,
			       s->inf.avail_in);
}

PIPE_PLUGIN_CODEC(
	.flags = 0,
	.name = "zlib",
	.summary = "zlib (deflate) blocks",
	.version = "1 (zlib " ZLIB_VERSION ")",
	.params = zlib_params,
	.codec_id = PIPE_CODEC_ZLIB,
	.open = zlib_open,
	.close = zlib_close,
	.bound = zlib_bound,
	.compress = zlib_compress,
	.decompress = zlib_decompress
);
