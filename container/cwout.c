/*
 * cwout.c - the container writer's output: every block goes out through
 * cw_put_framed (frame, checksum, write, index entry); index blocks are
 * written when the entries, bytes or time since the last one reach their
 * bound; cw_compress runs the codec on one block through the host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cwstate.h"
#include "grow.h"
#include "host.h"

int cw_write(struct cwriter *w, const void *buf, size_t len,
	     struct pipe_err *err)
{
	int ret = w->opts.write(w->opts.opaque, buf, len, err);

	if (ret < 0)
		return ret;
	w->off += len;
	w->enc_stored += len;
	return 0;
}

static int cw_index_add(struct cwriter *w, const struct fmt_block *b,
			uint64_t off)
{
	uint8_t *e;

	if (grow_array(&w->index.buf, &w->index.cap,
		       w->index.len + FMT_INDEX_ENTRY, 1, 4096, SIZE_MAX))
		return -ENOMEM;
	e = w->index.buf + w->index.len;
	memset(e, 0, FMT_INDEX_ENTRY);
	fmt_put64(e + 0, off);
	fmt_put64(e + 8, b->t_min);
	fmt_put64(e + 16, b->t_max);
	fmt_put32(e + 24, b->stream);
	fmt_put32(e + 28, b->records);
	fmt_put32(e + 32, b->dict);
	fmt_put32(e + 36, b->raw);
	e[40] = (uint8_t)b->type;
	w->index.len += FMT_INDEX_ENTRY;
	w->index.nr++;
	return 0;
}

int cw_put_framed(struct cwriter *w, struct fmt_block *b, uint8_t *blk,
		  struct pipe_err *err)
{
	size_t pad = fmt_pad8(b->stored);
	size_t total;
	uint8_t *p;
	uint64_t at = w->off;
	int ret;

	b->hdr_size = FMT_BLOCK_HDR_SIZE;
	b->seq = w->seq;
	/* horizons never decrease, even when a record broke the caller's
	 * promise and came older than the cap */
	if (b->horizon < w->horizon_out)
		b->horizon = w->horizon_out;
	w->horizon_out = b->horizon;
	b->payload_sum = fmt_checksum(blk + FMT_BLOCK_HDR_SIZE, b->stored,
				      w->salt);
	total = (size_t)fmt_block_len(b);
	fmt_block_encode(b, w->salt, blk);
	p = blk + FMT_BLOCK_HDR_SIZE + b->stored;
	memset(p, 0, pad);
	p += pad;
	fmt_put64(p, total);
	fmt_put64(p + 8, w->salt);
	ret = cw_write(w, blk, total, err);
	if (ret < 0)
		return ret;
	w->seq++;
	if (b->type != FMT_INDEX && b->type != FMT_END &&
	    cw_index_add(w, b, at))
		return pipe_err_set(err, -ENOMEM, "cannot index block: %s",
				    strerror(ENOMEM));
	return 0;
}

/*
 * Append one block whose stored payload is `payload` (b->stored bytes);
 * fills in the sequence number and payload checksum.  One write call.
 */
int cw_put_block(struct cwriter *w, struct fmt_block *b,
		 const void *payload, struct pipe_err *err)
{
	if (grow_array(&w->out, &w->out_cap,
		       FMT_BLOCK_HDR_SIZE + (size_t)b->stored + CW_TAIL, 1, 4096,
		       SIZE_MAX))
		return pipe_err_set(err, -ENOMEM, "cannot write block: %s",
				    strerror(ENOMEM));
	memcpy(w->out + FMT_BLOCK_HDR_SIZE, payload, b->stored);
	return cw_put_framed(w, b, w->out, err);
}

int cw_write_index(struct cwriter *w, struct pipe_err *err)
{
	struct fmt_block b = { 0 };
	uint8_t *payload;
	uint64_t at = w->off;
	size_t len = FMT_INDEX_HEAD + w->index.len;
	uint32_t i;
	int ret;

	if (!w->index.nr)
		return 0;
	payload = malloc(len);
	if (!payload)
		return pipe_err_set(err, -ENOMEM, "cannot write index: %s",
				    strerror(ENOMEM));
	fmt_put64(payload, w->index.prev);
	fmt_put32(payload + 8, w->index.nr);
	fmt_put32(payload + 12, FMT_INDEX_ENTRY);
	memcpy(payload + FMT_INDEX_HEAD, w->index.buf, w->index.len);
	b.type = FMT_INDEX;
	b.stream = PIPE_STREAM_SIDEBAND;
	b.t_min = UINT64_MAX;
	for (i = 0; i < w->index.nr; i++) {
		const uint8_t *e = w->index.buf + (size_t)i * FMT_INDEX_ENTRY;

		if (e[40] != FMT_DATA)
			continue;
		if (fmt_get64(e + 8) < b.t_min)
			b.t_min = fmt_get64(e + 8);
		if (fmt_get64(e + 16) > b.t_max)
			b.t_max = fmt_get64(e + 16);
	}
	if (b.t_min == UINT64_MAX)
		b.t_min = 0;
	b.horizon = w->horizon_out;
	b.stored = (uint32_t)len;
	b.raw = (uint32_t)len;
	b.coded = (uint32_t)len;
	ret = cw_put_block(w, &b, payload, err);
	free(payload);
	if (ret < 0)
		return ret;
	w->index.prev = at;
	w->index.off_at = w->off;
	w->index.time_at = w->enc_last;
	w->index.time_set = true;
	w->index.len = 0;
	w->index.nr = 0;
	return 0;
}

int cw_maybe_index(struct cwriter *w, struct pipe_err *err)
{
	if (w->index.nr >= FMT_INDEX_MAX_ENTRIES ||
	    w->off - w->index.off_at >= CW_INDEX_BYTES ||
	    (w->index.time_set &&
	     w->enc_last - w->index.time_at >= CW_INDEX_NS))
		return cw_write_index(w, err);
	if (!w->index.time_set && w->enc_first) {
		w->index.time_at = w->enc_first;
		w->index.time_set = true;
	}
	return 0;
}

int cw_compress(struct cwriter *w, uint32_t dict, const void *src,
		size_t len, uint8_t **buf, size_t *cap, size_t head,
		size_t *out_len, struct pipe_err *err)
{
	const struct pipe_plugin *c = w->opts.codec;
	struct crash_site site = host_enter(w->opts.codec_ctx, "bound");
	size_t bound = c->bound(w->opts.codec_state, len);
	int ret;

	host_leave(site);
	if (grow_array(buf, cap, head + bound + CW_TAIL, 1, 4096, SIZE_MAX))
		return pipe_err_set(err, -ENOMEM, "cannot compress block: %s",
				    strerror(ENOMEM));
	site = host_enter(w->opts.codec_ctx, "compress");
	ret = c->compress(w->opts.codec_state, dict, src, len, *buf + head,
			  *cap - head - CW_TAIL, out_len);
	host_leave(site);
	if (ret < 0)
		return pipe_err_set(err, ret,
				    "codec '%s' cannot compress a block: %s",
				    c->name, strerror(-ret));
	if (*out_len > CONTAINER_LEN_MAX)
		return pipe_err_set(err, -EOVERFLOW,
				    "codec '%s' made a block above the limit",
				    c->name);
	return 0;
}
