/*
 * cropen.c - opening a pipe file for reading: the file header, the
 * metadata block, the streams, the reader's threads; and its end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crstate.h"
#include "decode.h"
#include "grow.h"
#include "host.h"
#include "transform.h"

static int cr_file_header(struct creader *r, uint32_t *hdr_size,
			  struct pipe_err *err)
{
	const char *name = r->opts.name;
	const uint8_t *p;
	uint32_t version, size;
	uint64_t incompat;
	size_t got;
	int ret;

	ret = cr_fetch(r, 0, FMT_FILE_HDR_SIZE, &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < FMT_MAGIC_LEN || memcmp(p, FMT_MAGIC, FMT_MAGIC_LEN)) {
		if (got >= 4 && !memcmp(p, FMT_MAGIC, 4))
			return pipe_err_set(err, -EINVAL,
					    "cannot read '%s': damaged file header (bad magic; copied in text mode?)",
					    name);
		return pipe_err_set(err, -EINVAL,
				    "cannot read '%s': not a pipe file", name);
	}
	if (got < FMT_FILE_HDR_SIZE)
		return pipe_err_set(err, -EINVAL,
				    "cannot read '%s': file header is cut short",
				    name);
	version = fmt_get16(p + FMT_FH_VERSION);
	if (version > FMT_VERSION) {
		pipe_err_set(err, -EPROTO,
			     "cannot read '%s': written by a newer pipe (format version %" PRIu32 ")",
			     name, version);
		pipe_err_hint(err, "upgrade pipe to read it");
		return -EPROTO;
	}
	size = fmt_get16(p + FMT_FH_HDR_SIZE);
	if (version == 0 || size < FMT_FILE_HDR_SIZE || size % 8 ||
	    size > FMT_BLOCK_HDR_MAX)
		return pipe_err_set(err, -EINVAL,
				    "cannot read '%s': damaged file header",
				    name);
	ret = cr_fetch(r, 0, size, &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < size ||
	    !fmt_checksum_ok(p, size - 8, 0, fmt_get64(p + size - 8)))
		return pipe_err_set(err, -EINVAL,
				    "cannot read '%s': damaged file header (checksum mismatch)",
				    name);
	incompat = fmt_get64(p + FMT_FH_INCOMPAT);
	if (incompat) {
		pipe_err_set(err, -EPROTO,
			     "cannot read '%s': written by a newer pipe (features 0x%" PRIx64 ")",
			     name, incompat);
		pipe_err_hint(err, "upgrade pipe to read it");
		return -EPROTO;
	}
	r->salt = fmt_get64(p + FMT_FH_FILE_ID);
	*hdr_size = size;
	return 0;
}

static int cr_meta(struct creader *r, uint64_t off, struct pipe_err *err)
{
	const char *name = r->opts.name;
	struct fmt_block b;
	enum cr_hdr what;
	const uint8_t *p;
	size_t got;
	int ret;

	ret = cr_header_at(r, off, &b, &what, err);
	if (ret < 0)
		return ret;
	if (what != CR_HDR_GOOD || b.type != FMT_META)
		return pipe_err_set(err, -EINVAL,
				    "cannot read '%s': damaged metadata block header",
				    name);
	ret = cr_fetch(r, off, (size_t)fmt_block_len(&b), &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < fmt_block_len(&b))
		return pipe_err_set(err, -EINVAL,
				    "cannot read '%s': metadata block is cut short",
				    name);
	p += b.hdr_size;
	if (!fmt_checksum_ok(p, b.stored, r->salt, b.payload_sum))
		return pipe_err_set(err, -EINVAL,
				    "cannot read '%s': damaged metadata block (checksum mismatch)",
				    name);
	if (b.codec != FMT_CODEC_NONE || b.transform != TRANSFORM_NONE ||
	    b.stored != b.raw)
		return pipe_err_set(err, -EINVAL,
				    "cannot read '%s': metadata block is encoded",
				    name);
	ret = meta_decode(&r->meta, p, b.stored, name, err);
	if (ret < 0)
		return ret;
	r->pos = off + fmt_block_len(&b);
	r->hdr_end = r->pos;
	return 0;
}

/* Which CPU streams a cpus= subset wants, from the metadata. */
static int cr_streams(struct creader *r, struct pipe_err *err)
{
	const struct pipe_meta *m = meta_view(r->meta);
	uint32_t i, k;

	if (!r->opts.nr_cpus)
		return 0;
	if (!m)
		return pipe_err_nomem(err, "cannot read '%s'", r->opts.name);
	r->nr_stream_ok = m->nr_streams;
	r->stream_ok = calloc(m->nr_streams + 1, sizeof(*r->stream_ok));
	if (!r->stream_ok)
		return pipe_err_nomem(err, "cannot read '%s'", r->opts.name);
	for (i = 0; i < m->nr_streams; i++)
		for (k = 0; k < r->opts.nr_cpus; k++)
			if (m->stream_cpu[i] >= 0 &&
			    (uint32_t)m->stream_cpu[i] == r->opts.cpus[k])
				r->stream_ok[i] = true;
	return 0;
}

/* DATA blocks name a CPU stream below this: the metadata's stream count,
 * or the format's limit when the metadata lists none. */
static uint32_t cr_nr_streams(const struct meta *m)
{
	const struct pipe_meta *v = meta_view(m);

	return v && v->nr_streams ? v->nr_streams : META_MAX_STREAMS;
}

static uint32_t cr_threads(const struct cr_opts *opts)
{
	long n = opts->threads;

	if (n == 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	if (n > CB_MAX_DECODERS)
		n = CB_MAX_DECODERS;
	return (uint32_t)n;
}

/*
 * The reader's own codec callbacks, around the caller's: a codec that
 * could not be opened for a reason other than -ENOENT (no plugin has the
 * id: the blocks are damaged) or -ENOMEM (said as such) keeps its message
 * in r->codec_err, and the read ends with it (cr_codec_failed) instead of
 * skipping the blocks as damaged.
 */
static int cr_codec_open(void *opaque, uint32_t codec_id,
			 const struct pipe_plugin **p, void **state,
			 struct pipe_ctx **ctx, struct pipe_err *err)
{
	struct creader *r = opaque;
	int ret;

	ret = r->opts.codec_open(r->opts.opaque, codec_id, p, state, ctx, err);
	if (ret < 0 && ret != -ENOENT && ret != -ENOMEM && !r->codec_failed) {
		r->codec_failed = ret;
		r->codec_err = *err;
	}
	return ret;
}

static void cr_codec_close(void *opaque, const struct pipe_plugin *p,
			   void *state)
{
	struct creader *r = opaque;

	if (r->opts.codec_close)
		r->opts.codec_close(r->opts.opaque, p, state);
}

static const char *cr_codec_error(void *opaque, void *state)
{
	struct creader *r = opaque;

	return r->opts.codec_error ?
	       r->opts.codec_error(r->opts.opaque, state) : NULL;
}

int creader_open(struct creader **out, const struct cr_opts *opts,
		 struct pipe_err *err)
{
	struct creader *r;
	struct crash_site site;
	uint32_t hdr_size = 0, threads = cr_threads(opts);
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return pipe_err_nomem(err, "cannot read '%s'", opts->name);
	r->opts = *opts;
	r->eof_at = UINT64_MAX;
	site = host_enter(opts->src_ctx, "byte_size");
	ret = opts->src->byte_size ? opts->src->byte_size(opts->src_state,
							       &r->size)
			      : -ESPIPE;
	host_leave(site);
	if (ret < 0 && ret != -ESPIPE) {
		pipe_err_set(err, ret, "cannot read '%s': %s", opts->name,
			     strerror(-ret));
		goto fail;
	}
	r->seekable = ret == 0;
	if (r->seekable && opts->src->map) {
		const void *base = NULL;
		uint64_t len = 0;

		site = host_enter(opts->src_ctx, "map");
		ret = opts->src->map(opts->src_state, &base, &len);
		host_leave(site);
		/* the file is read where it is mapped, when it is whole */
		if (ret == 0 && base && len == r->size)
			r->map = base;
	}
	if (grow_array(&r->buf, &r->cap, CR_CHUNK, 1, 65536, SIZE_MAX)) {
		ret = pipe_err_nomem(err, "cannot read '%s'", opts->name);
		goto fail;
	}
	ret = runmerge_new(&r->runs);
	if (ret < 0) {
		pipe_err_set(err, ret, "cannot read '%s': %s", opts->name,
			     strerror(-ret));
		goto fail;
	}
	ret = cr_file_header(r, &hdr_size, err);
	if (ret < 0)
		goto fail;
	ret = cr_meta(r, hdr_size, err);
	if (ret < 0)
		goto fail;
	r->ctx.meta = r->meta;
	r->ctx.salt = r->salt;
	r->ctx.nr_dec = threads;
	r->ctx.codec_open = opts->codec_open ? cr_codec_open : NULL;
	r->ctx.codec_close = cr_codec_close;
	r->ctx.codec_error = cr_codec_error;
	r->ctx.opaque = r;
	r->ctx.one_event = meta_nr_events(r->meta) == 1;
	r->ctx.time_off = decode_time_offset(r->meta, 0);
	r->ctx.nr_streams = cr_nr_streams(r->meta);
	r->ctx.pids = opts->pids;
	r->ctx.nr_pids = opts->nr_pids;
	if (threads > 1) {
		ret = cb_pool_new(&r->pool, &r->ctx, 4 * threads);
		if (ret < 0) {
			pipe_err_set(err, ret, "cannot read '%s': %s",
				     opts->name, strerror(-ret));
			goto fail;
		}
	}
	/* the pages of what was read are dropped (all but a first partial
	 * piece) */
	r->map_drop = r->map && cr_map_is_shared(r->map, r->size);
	r->drop_lo = ((uintptr_t)r->map + CR_DROP_ALIGN - 1) &
		     ~(CR_DROP_ALIGN - 1);
	r->drop_hi = r->drop_lo;
	r->filter = opts->start_ns || opts->stop_ns || opts->nr_cpus ||
		    opts->nr_pids;
	ret = cr_streams(r, err);
	if (ret == 0 && r->filter && r->seekable)
		ret = cr_plan(r, err);
	if (ret < 0)
		goto fail;
	*out = r;
	return 0;
fail:
	creader_free(r);
	return ret;
}

const struct meta *creader_meta(const struct creader *r)
{
	return r->meta;
}

void creader_stats(const struct creader *r, struct cr_stats *st)
{
	*st = r->st;
	/* how far the walk got: progress while reading */
	st->file_bytes = r->pos;
}

void creader_free(struct creader *r)
{
	if (!r)
		return;
	cb_pool_free(r->pool);
	cb_job_release(&r->job);
	cb_ctx_release(&r->ctx);
	runmerge_free(r->runs);
	while (r->held_all) {
		struct cr_held *h = r->held_all;

		r->held_all = h->next_all;
		cb_bufs_release(&h->buf);
		free(h);
	}
	meta_free(r->meta);
	free(r->stream_ok);
	free(r->ents);
	free(r->buf);
	free(r);
}
