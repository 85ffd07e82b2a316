/*
 * codec_zstd.c - the zstd codec (id 3): each block is one zstd frame with
 * its content size and without a dictionary id (the block header names the
 * dictionary).  Dictionaries are added by id and trained with ZDICT;
 * when to train, and how big, are the host's writer options (dict=,
 * dict_size=, dict_file=).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zdict.h>
/* ZSTD_c_literalCompressionMode: experimental in zstd's API, but a
 * parameter of the shared library since 1.4.5 */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include "pipe_plugin.h"

#define ZSTD_LEVEL_MIN -50
#define ZSTD_LEVEL_MAX 19
#define ZSTD_MAX_DICTS 64
/* Largest dictionary add_dict accepts: what pipe writes (a trained
 * dict_size or a dict_file= is at most 1 MiB). */
#define ZSTD_DICT_MAX (1u << 20)
/* Blocks below this many bytes of input take the level `small=`: a
 * block cut by its flush interval before it filled, whose matches are
 * fewer, so a higher level costs little and saves a tenth.  Full blocks
 * of 256 KiB of samples with call chains come out of the transform at
 * 110 to 180 KiB. */
#define ZSTD_SMALL_BYTES (96u << 10)
/* and, at a small level of 1 to 3 (zstd's fast and double-fast match
 * finders), tables sized for them: zstd sizes its tables by the block's
 * length, but at level 3 a block of 32 to 96 KiB still gets 384 KiB of
 * them to clear and probe (hashLog 16, chainLog 15).  These cost a
 * third less CPU on the recorder's small blocks for 0.3% more bytes
 * (docs/performance.md, "Live recording"); hashlog= overrides the
 * first. */
#define ZSTD_SMALL_TABLES_LEVEL 3
#define ZSTD_SMALL_HASHLOG 13
#define ZSTD_SMALL_CHAINLOG 12

struct zstd_dict {
	uint32_t id;          /* container dictionary id, never 0 */
	void *bytes;          /* owned copy, for a compression side later */
	size_t len;
	ZSTD_CDict *cdict;    /* compression side, made on first use only:
			       * a reader never builds one */
	ZSTD_DDict *ddict;    /* decompression side */
};

struct zstd_state {
	const struct pipe_host *host; /* borrowed for the instance's life */
	struct pipe_ctx *ctx;         /* borrowed, passed to host calls */
	int level;                    /* compression level */
	int small;                    /* level below ZSTD_SMALL_BYTES, 0: level */
	int hashlog;                  /* hashlog=, 0: the level's own */
	int cur;                      /* level the cctx is set to */
	ZSTD_CCtx *cctx;              /* reused for every block */
	ZSTD_DCtx *dctx;              /* reused for every block */
	struct zstd_dict dicts[ZSTD_MAX_DICTS]; /* first nr_dicts used */
	uint32_t nr_dicts;
};

static const struct pipe_param zstd_params[] = {
	{ "level", PIPE_PARAM_INT, PIPE_PARAM_POSITIONAL, "3",
	  "compression level, negative is faster (0: zstd's default, 3)",
	  NULL, ZSTD_LEVEL_MIN, ZSTD_LEVEL_MAX },
	{ "literals", PIPE_PARAM_ENUM, 0, "huffman",
	  "literals Huffman-coded, or stored raw (faster, a little larger)",
	  "huffman|raw", 0, 0 },
	{ "small", PIPE_PARAM_INT, 0, "0",
	  "compression level for blocks under 96 KiB (0: the same as level)",
	  NULL, ZSTD_LEVEL_MIN, ZSTD_LEVEL_MAX },
	{ "hashlog", PIPE_PARAM_INT, 0, "0",
	  "log2 of the match finder's hash table (0: the level's own; "
	  "smaller is faster on small blocks)", NULL, 0, 30 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

/* A valid pointer for empty buffers: zstd may not accept NULL. */
static const unsigned char zstd_empty[1];

static void zstd_free_dict(struct zstd_dict *d)
{
	ZSTD_freeCDict(d->cdict);
	ZSTD_freeDDict(d->ddict);
	free(d->bytes);
	d->cdict = NULL;
	d->ddict = NULL;
	d->bytes = NULL;
}

static void zstd_close(void *state)
{
	struct zstd_state *s = state;
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_dicts; i++)
		zstd_free_dict(&s->dicts[i]);
	ZSTD_freeCCtx(s->cctx);
	ZSTD_freeDCtx(s->dctx);
	free(s);
}

/* Report a zstd error code through the host; returns -ENOMEM when zstd
 * ran out of memory, else -EINVAL. */
static int zstd_fail(struct zstd_state *s, const char *what, size_t code)
{
	s->host->error(s->ctx, "cannot %s 'zstd': %s", what,
		       ZSTD_getErrorName(code));
	if (ZSTD_getErrorCode(code) == ZSTD_error_memory_allocation)
		return -ENOMEM;
	return -EINVAL;
}

static int zstd_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	struct zstd_state *s;
	size_t r;
	int ret = -ENOMEM;

	s = calloc(1, sizeof(*s));
	if (!s) {
		host->error(ctx, "cannot open 'zstd': out of memory");
		return -ENOMEM;
	}
	s->host = host;
	s->ctx = ctx;
	s->level = (int)host->arg_int(ctx, "level");
	s->small = (int)host->arg_int(ctx, "small");
	s->hashlog = (int)host->arg_int(ctx, "hashlog");
	s->cur = s->level;
	s->cctx = ZSTD_createCCtx();
	s->dctx = ZSTD_createDCtx();
	if (!s->cctx || !s->dctx) {
		host->error(ctx, "cannot open 'zstd': out of memory");
		goto out_free;
	}
	r = ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_compressionLevel,
				   s->level);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_dictIDFlag, 0);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_contentSizeFlag, 1);
	if (!ZSTD_isError(r) && host->arg_int(ctx, "literals") == 1)
		r = ZSTD_CCtx_setParameter(s->cctx,
					   ZSTD_c_literalCompressionMode,
					   ZSTD_ps_disable);
	if (!ZSTD_isError(r) && s->hashlog)
		r = ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_hashLog,
					   s->hashlog);
	if (ZSTD_isError(r)) {
		ret = zstd_fail(s, "set the parameters of", r);
		goto out_free;
	}
	*state = s;
	return 0;
out_free:
	zstd_close(s);
	return ret;
}

static struct zstd_dict *zstd_find_dict(struct zstd_state *s, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < s->nr_dicts; i++)
		if (s->dicts[i].id == id)
			return &s->dicts[i];
	return NULL;
}

static size_t zstd_bound(void *state, size_t raw_len)
{
	(void)state;
	return ZSTD_compressBound(raw_len);
}

/* Switch the cctx between the level and the small level, with the
 * small blocks' tables (0: the level's own); a zstd error code. */
static size_t zstd_set_level(struct zstd_state *s, int level)
{
	bool small = level != s->level && level >= 1 &&
		     level <= ZSTD_SMALL_TABLES_LEVEL;
	size_t r;

	r = ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(r) && !s->hashlog)
		r = ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_hashLog,
					   small ? ZSTD_SMALL_HASHLOG : 0);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_chainLog,
					   small ? ZSTD_SMALL_CHAINLOG : 0);
	return r;
}

static int zstd_compress(void *state, uint32_t dict_id, const void *src,
			 size_t len, void *dst, size_t cap, size_t *out_len)
{
	struct zstd_state *s = state;
	const ZSTD_CDict *cdict = NULL;
	struct zstd_dict *d;
	size_t r;
	int level;

	if (dict_id) {
		d = zstd_find_dict(s, dict_id);
		if (!d) {
			s->host->error(s->ctx,
				       "cannot compress with 'zstd': unknown dictionary id %u",
				       dict_id);
			return -EINVAL;
		}
		if (!d->cdict)
			d->cdict = ZSTD_createCDict(d->bytes, d->len,
						    s->level);
		if (!d->cdict) {
			s->host->error(s->ctx,
				       "cannot compress with 'zstd': dictionary %u: out of memory",
				       dict_id);
			return -ENOMEM;
		}
		cdict = d->cdict;
	}
	/* A failed block may leave a session open; the dictionary reference
	 * is sticky: clear it for blocks without one. */
	r = ZSTD_CCtx_reset(s->cctx, ZSTD_reset_session_only);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_refCDict(s->cctx, cdict);
	if (ZSTD_isError(r))
		return zstd_fail(s, "select a dictionary in", r);
	/* a dictionary's blocks keep the level its tables were made at */
	level = !cdict && s->small && len < ZSTD_SMALL_BYTES ? s->small :
							      s->level;
	if (level != s->cur) {
		r = zstd_set_level(s, level);
		if (ZSTD_isError(r))
			return zstd_fail(s, "set the level of", r);
		s->cur = level;
	}
	r = ZSTD_compress2(s->cctx, dst, cap, len ? src : zstd_empty, len);
	if (ZSTD_isError(r))
		return zstd_fail(s, "compress with", r);
	*out_len = r;
	return 0;
}

/* The frame's own dictionary id (if any) must agree with the block's. */
static int zstd_check_frame_dict(struct zstd_state *s, uint32_t dict_id,
				 const struct zstd_dict *d, const void *src,
				 size_t len)
{
	unsigned frame_id = ZSTD_getDictID_fromFrame(src, len);
	unsigned dict_own;

	if (!frame_id)
		return 0;
	if (!d) {
		s->host->error(s->ctx,
			       "cannot decompress with 'zstd': frame needs dictionary %u, block names none",
			       frame_id);
		return -EINVAL;
	}
	dict_own = ZSTD_getDictID_fromDDict(d->ddict);
	if (dict_own && dict_own != frame_id) {
		s->host->error(s->ctx,
			       "cannot decompress with 'zstd': frame needs dictionary %u, block dictionary %u is %u",
			       frame_id, dict_id, dict_own);
		return -EINVAL;
	}
	return 0;
}

static int zstd_decompress(void *state, uint32_t dict_id, const void *src,
			   size_t len, void *dst, size_t raw_len)
{
	struct zstd_state *s = state;
	const struct zstd_dict *d = NULL;
	unsigned long long content;
	unsigned char none;
	void *out = raw_len ? dst : &none;
	size_t r;
	int ret;

	if (dict_id) {
		d = zstd_find_dict(s, dict_id);
		if (!d) {
			s->host->error(s->ctx,
				       "cannot decompress with 'zstd': unknown dictionary id %u",
				       dict_id);
			return -EINVAL;
		}
	}
	if (!len) {
		s->host->error(s->ctx,
			       "cannot decompress with 'zstd': empty payload");
		return -EINVAL;
	}
	content = ZSTD_getFrameContentSize(src, len);
	if (content == ZSTD_CONTENTSIZE_ERROR) {
		s->host->error(s->ctx,
			       "cannot decompress with 'zstd': not a zstd frame");
		return -EINVAL;
	}
	if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != raw_len) {
		s->host->error(s->ctx,
			       "cannot decompress with 'zstd': frame holds %llu bytes, block header says %zu",
			       content, raw_len);
		return -EINVAL;
	}
	ret = zstd_check_frame_dict(s, dict_id, d, src, len);
	if (ret < 0)
		return ret;
	if (d)
		r = ZSTD_decompress_usingDDict(s->dctx, out, raw_len, src, len,
					       d->ddict);
	else
		r = ZSTD_decompressDCtx(s->dctx, out, raw_len, src, len);
	if (ZSTD_isError(r))
		return zstd_fail(s, "decompress with", r);
	if (r != raw_len) {
		s->host->error(s->ctx,
			       "cannot decompress with 'zstd': got %zu bytes, block header says %zu",
			       r, raw_len);
		return -EINVAL;
	}
	return 0;
}

static int zstd_add_dict(void *state, uint32_t id, const void *dict,
			 size_t len)
{
	struct zstd_state *s = state;
	struct zstd_dict *d;
	struct zstd_dict fresh = { .id = id };

	if (!id || !len || len > ZSTD_DICT_MAX) {
		s->host->error(s->ctx,
			       "cannot add dictionary %u to 'zstd': %s", id,
			       !id ? "id 0 means none" : "bad length");
		return -EINVAL;
	}
	d = zstd_find_dict(s, id);
	if (!d && s->nr_dicts == ZSTD_MAX_DICTS) {
		s->host->error(s->ctx,
			       "cannot add dictionary %u to 'zstd': already %u dictionaries",
			       id, ZSTD_MAX_DICTS);
		return -ENOSPC;
	}
	fresh.bytes = malloc(len);
	if (fresh.bytes) {
		memcpy(fresh.bytes, dict, len);
		fresh.len = len;
		fresh.ddict = ZSTD_createDDict(fresh.bytes, len);
	}
	if (!fresh.ddict) {
		zstd_free_dict(&fresh);
		s->host->error(s->ctx,
			       "cannot add dictionary %u to 'zstd': invalid dictionary or out of memory",
			       id);
		return -EINVAL;
	}
	/* A dictionary that is replaced may still be referenced: drop it. */
	if (d) {
		ZSTD_CCtx_refCDict(s->cctx, NULL);
		zstd_free_dict(d);
	} else {
		d = &s->dicts[s->nr_dicts++];
	}
	*d = fresh;
	return 0;
}

static int zstd_train(void *state, const void *samples, const size_t *sizes,
		      uint32_t nr, void *dict, size_t cap, size_t *dict_len)
{
	struct zstd_state *s = state;
	size_t r;

	if (!nr || cap < 256) {
		s->host->error(s->ctx,
			       "cannot train a 'zstd' dictionary: %s",
			       !nr ? "no samples" : "capacity too small");
		return -EINVAL;
	}
	r = ZDICT_trainFromBuffer(dict, cap, samples, sizes, nr);
	if (ZDICT_isError(r)) {
		s->host->error(s->ctx,
			       "cannot train a 'zstd' dictionary from %u samples: %s",
			       nr, ZDICT_getErrorName(r));
		return -EINVAL;
	}
	*dict_len = r;
	return 0;
}

PIPE_PLUGIN_CODEC(
	.flags = 0,
	.name = "zstd",
	.summary = "zstd blocks, optional trained dictionaries",
	.version = "1 (libzstd " ZSTD_VERSION_STRING ")",
	.params = zstd_params,
	.codec_id = PIPE_CODEC_ZSTD,
	.open = zstd_open,
	.close = zstd_close,
	.bound = zstd_bound,
	.compress = zstd_compress,
	.decompress = zstd_decompress,
	.add_dict = zstd_add_dict,
	.train = zstd_train
);
