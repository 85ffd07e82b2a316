/*
 * creader.c - the container reader: walks a pipe file forward block by
 * block through a byte source, checks every checksum and length, skips and
 * reports damaged blocks, drops a torn tail, and releases the records of
 * all streams in time order using the block horizons (record/runmerge.h:
 * the records are read in place in the decoded blocks).
 * Layout: docs/format.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "crstate.h"
#include "grow.h"
#include "host.h"
#include "search.h"
#include "transform.h"

/* Read more bytes after base + len; 0 at the end of the source. */
static int cr_fill(struct creader *r, size_t *got, struct pipe_err *err)
{
	uint64_t at = r->base + r->len;
	size_t want;
	int ret;

	*got = 0;
	if (at >= r->eof_at || r->len == r->cap)
		return 0;
	want = r->cap - r->len;
	if (r->small_reads && want > CR_SMALL_READ)
		want = CR_SMALL_READ;
	ret = cr_src_read(r, at, r->buf + r->len, want, got, err);
	if (ret < 0)
		return ret;
	if (*got == 0)
		r->eof_at = at;
	r->len += *got;
	return 0;
}

/*
 * Make bytes [off, off + n) available: *p points at them and *got says
 * how many there are (fewer than n only at the end of the file).  *p is
 * valid until the next call.  A stream is only ever read forward.
 */
int cr_fetch(struct creader *r, uint64_t off, size_t n,
	     const uint8_t **p, size_t *got, struct pipe_err *err)
{
	size_t more;
	int ret;

	if (r->map) {
		*p = r->map + (off < r->size ? off : r->size);
		*got = off < r->size && r->size - off < n ?
		       (size_t)(r->size - off) : off < r->size ? n : 0;
		return 0;
	}
	if (off < r->base || off > r->base + r->len) {
		if (!r->seekable && off < r->base)
			return pipe_err_set(err, -ESPIPE,
					    "cannot read '%s': cannot seek back in a stream",
					    r->opts.name);
		if (r->seekable) {
			r->base = off;
			r->len = 0;
			r->eof_at = UINT64_MAX;
		}
		while (off > r->base + r->len) {
			r->base += r->len;
			r->len = 0;
			ret = cr_fill(r, &more, err);
			if (ret < 0)
				return ret;
			if (!more)
				break;
		}
		if (off > r->base + r->len) {
			*p = r->buf;
			*got = 0;
			return 0;
		}
	}
	if (r->base + r->len < off + n && off > r->base) {
		/* more to read: keep only what is still wanted */
		size_t drop = (size_t)(off - r->base);

		memmove(r->buf, r->buf + drop, r->len - drop);
		r->len -= drop;
		r->base = off;
	}
	if (grow_array(&r->buf, &r->cap, (size_t)(off - r->base) + n, 1, 65536,
		       SIZE_MAX))
		return pipe_err_nomem(err, "cannot read '%s'", r->opts.name);
	while (r->base + r->len < off + n) {
		ret = cr_fill(r, &more, err);
		if (ret < 0)
			return ret;
		if (!more)
			break;
	}
	*p = r->buf + (off - r->base);
	*got = r->base + r->len - off < n ? (size_t)(r->base + r->len - off)
					  : n;
	return 0;
}

static const char *cr_stream_name(uint32_t stream, char *buf, size_t cap)
{
	if (stream == PIPE_STREAM_SIDEBAND)
		return "sideband";
	snprintf(buf, cap, "stream %" PRIu32, stream);
	return buf;
}

/* Time 0 of messages and windows: the t_min of the first DATA block
 * with one (any stream: the recording's start, even when the sideband's
 * first records carry no time); UINT64_MAX while none was seen. */
static uint64_t cr_origin(const struct creader *r)
{
	return r->have_origin ? r->origin : UINT64_MAX;
}

static double cr_secs(uint64_t origin, uint64_t t)
{
	return t >= origin ? (double)(t - origin) / 1e9 : 0.0;
}

/*
 * Say what was lost: one report line, or the error under strict=on
 * (returns -EIO then, 0 otherwise).
 */
int cr_damage(struct creader *r, struct pipe_err *err)
{
	if (r->opts.strict)
		return pipe_err_set(err, -EIO, "%s", r->line);
	if (r->opts.report)
		r->opts.report(r->opts.opaque, r->line);
	return 0;
}

/*
 * The records of the DATA block b at off are lost: counted, and r->line
 * says "WHAT in 'NAME' at offset OFF: STREAM, time A-B s, N records
 * OUTCOME", its times told from origin.
 */
static void cr_data_lost(struct creader *r, const char *what,
			 const struct fmt_block *b, uint64_t off,
			 uint64_t origin, const char *outcome)
{
	char sname[32];

	r->st.records_damaged += b->records;
	snprintf(r->line, sizeof(r->line),
		 "%s in '%s' at offset %" PRIu64 ": %s, time %.3f-%.3f s, %"
		 PRIu32 " records %s", what, r->opts.name, off,
		 cr_stream_name(b->stream, sname, sizeof(sname)),
		 cr_secs(origin, b->t_min), cr_secs(origin, b->t_max),
		 b->records, outcome);
}

/* A damaged block; a DATA block's times are told from `origin` (as it
 * was when the block was read, so threads do not change the line). */
static int cr_block_damaged(struct creader *r, const struct fmt_block *b,
			    uint64_t off, uint64_t origin, const char *why,
			    struct pipe_err *err)
{
	size_t n;

	r->st.blocks_damaged++;
	if (b->type == FMT_DATA) {
		cr_data_lost(r, "damaged block", b, off, origin, "skipped");
		n = strlen(r->line);
		snprintf(r->line + n, sizeof(r->line) - n, ": %s", why);
	} else {
		snprintf(r->line, sizeof(r->line),
			 "damaged %s block in '%s' at offset %" PRIu64 ": %s",
			 b->type == FMT_INDEX ? "index" :
			 b->type == FMT_END ? "end" :
			 b->type == FMT_DICT ? "dictionary" :
			 b->type == FMT_LOST ? "lost-count" : "ancillary",
			 r->opts.name, off, why);
	}
	return cr_damage(r, err);
}

/* What decoding a block claims at most, by its header: the payload copy,
 * the codec's output, the records and their views. */
static uint64_t cr_job_cost(const struct fmt_block *b)
{
	return (uint64_t)b->stored + b->coded + b->raw +
	       (uint64_t)b->records * sizeof(struct pipe_record);
}

/* A finished job's records go to the merge in place: its buffers are
 * traded for those of a block read before. */
static int cr_hold(struct creader *r, struct cb_job *j)
{
	struct cr_held *h = r->spare;

	if (!j->nr)
		return 0;
	if (h) {
		r->spare = h->next;
		r->nr_spare--;
	} else {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		h->next_all = r->held_all;
		r->held_all = h;
	}
	cb_job_trade(j, &h->buf);
	h->map_off = r->map && j->bytes >= r->map &&
		     j->bytes < r->map + r->size ? j->off : UINT64_MAX;
	return runmerge_add(r->runs, h->buf.recs, j->nr, j->b.stream,
			    (size_t)cr_job_cost(&j->b), h);
}

/* A finished job's records go to creader_blocks' function. */
static int cr_give(struct creader *r, struct cb_job *j, struct pipe_err *err)
{
	struct cr_block b = {
		.stream = j->b.stream,
		.recs = j->buf.recs,
		.nr = j->nr,
		.in_order = j->in_order,
		.bytes = j->bytes,
		.len = j->b.raw,
		.horizon = r->horizon,
	};
	int ret = r->block_fn(r->block_opaque, &b, err);

	if (ret > 0) {
		/* unwinds like an error, which creader_blocks takes back */
		r->block_stop = true;
		return -ECANCELED;
	}
	return ret;
}

/* Blocks whose records were all read: their buffers are reused, a few of
 * them (the rest freed). */
static void cr_unhold(struct creader *r)
{
	struct cr_held *h;

	while ((h = runmerge_spent(r->runs))) {
		h->map_off = UINT64_MAX;
		if (r->nr_spare >= CR_HELD_SPARE ||
		    cb_bufs_size(&h->buf) > CR_INFLIGHT_MAX / CR_HELD_SPARE)
			cb_bufs_release(&h->buf);
		h->next = r->spare;
		r->spare = h;
		r->nr_spare++;
	}
}

/* A job's records go to the merge, or its damage is reported. */
static int cr_retire(struct creader *r, struct cb_job *j,
		     struct pipe_err *err)
{
	int ret;

	if (j->trailer_bad) {
		snprintf(r->line, sizeof(r->line),
			 "damaged block trailer in '%s' at offset %" PRIu64
			 ": its records are kept", r->opts.name,
			 j->off + fmt_block_len(&j->b) - FMT_TRAILER_SIZE);
		r->st.blocks_damaged++;
		ret = cr_damage(r, err);
		if (ret < 0)
			return ret;
	}
	if (j->status == -ENOMEM)
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				    r->opts.name, j->why);
	if (j->status < 0) {
		ret = cr_block_damaged(r, &j->b, j->off, j->origin, j->why,
				       err);
		if (ret < 0)
			return ret;
	} else {
		r->st.blocks_decoded++;
		r->st.raw_bytes += j->b.raw;
		r->st.records += j->c.records;
		r->st.samples += j->c.samples;
		r->st.lost += j->c.lost;
		r->st.throttles += j->c.throttles;
		if (j->c.t_first &&
		    (!r->st.t_first || j->c.t_first < r->st.t_first))
			r->st.t_first = j->c.t_first;
		if (j->c.t_last > r->st.t_last)
			r->st.t_last = j->c.t_last;
		ret = r->block_fn ? cr_give(r, j, err) : cr_hold(r, j);
		if (ret < 0 && !r->block_fn)
			return pipe_err_set(err, ret, "cannot read '%s': %s",
					    r->opts.name, strerror(-ret));
		if (ret < 0)
			return ret;
	}
	if (j->horizon > r->horizon)
		r->horizon = j->horizon;
	return 0;
}

/* Buffers a slot keeps for the next block: an even share of the bound,
 * so a crafted block's 64 MiB buffers do not stay for the whole read. */
static void cr_job_shrink(struct cb_job *j, uint64_t keep)
{
	if (cb_bufs_size(&j->buf) > keep)
		cb_job_release(j);
}

/* Retire the oldest job of the pool (waiting for it). */
static int cr_retire_oldest(struct creader *r, struct pipe_err *err)
{
	struct cb_job *j = cb_pool_oldest(r->pool);
	int ret;

	ret = cr_retire(r, j, err);
	r->inflight -= cr_job_cost(&j->b);
	cb_pool_retire(r->pool);
	cr_job_shrink(j, CR_INFLIGHT_MAX / cb_pool_depth(r->pool));
	return ret;
}

/* Finish every job in flight, so what follows is reported in order. */
static int cr_drain(struct creader *r, struct pipe_err *err)
{
	int ret;

	while (r->pool && cb_pool_pending(r->pool)) {
		ret = cr_retire_oldest(r, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* A horizon of a block that is no job: after the jobs before it. */
static void cr_horizon(struct creader *r, uint64_t h)
{
	struct cb_job *j = r->pool ? cb_pool_newest(r->pool) : NULL;

	if (j && h > j->horizon)
		j->horizon = h;
	else if (!j && h > r->horizon)
		r->horizon = h;
}

bool cr_stream_wanted(const struct creader *r, uint32_t stream)
{
	if (!r->stream_ok || stream == PIPE_STREAM_SIDEBAND)
		return true;
	return stream < r->nr_stream_ok && r->stream_ok[stream];
}

/* Set the window from the first record time, once known. */
void cr_window(struct creader *r, uint64_t origin)
{
	if (r->have_window)
		return;
	r->have_window = true;
	r->lo = r->opts.start_ns ? origin + r->opts.start_ns : 0;
	r->hi = r->opts.stop_ns ? origin + r->opts.stop_ns : UINT64_MAX;
}

/* A codec the blocks need could not be opened (a plugin that does not
 * load): the read stops, saying which, rather than skip their records as
 * damage. */
static int cr_codec_failed(struct creader *r, struct pipe_err *err)
{
	pipe_err_set(err, r->codec_failed, "cannot read '%s': %s",
		     r->opts.name, r->codec_err.msg);
	if (r->codec_err.hint[0])
		pipe_err_hint(err, "%s", r->codec_err.hint);
	return r->codec_failed;
}

static int cr_data_block(struct creader *r, const struct fmt_block *b,
			 const uint8_t *payload, uint64_t off,
			 const uint8_t *trailer, bool trailer_bad,
			 struct pipe_err *err)
{
	struct cb_job *j = &r->job;
	struct cb_codec *c = NULL;
	int ret;

	if (r->filter && !r->have_window && r->have_origin)
		cr_window(r, r->origin);
	if (!cr_stream_wanted(r, b->stream)) {
		cr_horizon(r, b->horizon);
		return 0;
	}
	r->st.blocks++;
	if (b->codec != FMT_CODEC_NONE) {
		c = cb_codec_get(&r->ctx, b->codec);
		if (r->codec_failed)
			return cr_codec_failed(r, err);
	}
	while (r->pool && !(j = cb_pool_slot(r->pool))) {
		ret = cr_retire_oldest(r, err);
		if (ret < 0)
			return ret;
	}
	j->b = *b;
	j->off = off;
	j->origin = cr_origin(r);
	j->horizon = b->horizon;
	j->trailer = trailer;
	j->trailer_bad = trailer_bad;
	j->codec = c;
	j->filter = r->filter;
	j->lo = r->have_window ? r->lo : 0;
	j->hi = r->have_window ? r->hi : UINT64_MAX;
	/* the records are read in place: in the mapped file, or in a copy
	 * of the payload (the read buffer moves on) */
	j->payload = payload;
	if (!r->map && cb_job_copy(j, payload, b->stored) < 0)
		return pipe_err_nomem(err, "cannot read '%s'", r->opts.name);
	j->drop = NULL;
	if (r->map_drop)
		cr_drop_before(r, off, j);
	if (!r->pool) {
		cb_job_run(&r->ctx, 0, j);
		ret = cr_retire(r, j, err);
		cr_job_shrink(j, CR_INFLIGHT_MAX);
		return ret;
	}
	r->inflight += cr_job_cost(b);
	cb_pool_submit(r->pool);
	return 0;
}

/* DICT: u32 codec id, u32 reserved, the dictionary (after decoding). */
static int cr_dict_block(struct creader *r, const struct fmt_block *b,
			 const uint8_t *payload, uint64_t off,
			 struct pipe_err *err)
{
	struct cb_job *j = &r->job;
	struct fmt_block d = *b;
	int ret;

	ret = cr_drain(r, err);
	if (ret < 0)
		return ret;
	/* the dictionary itself is compressed without one */
	d.dict = 0;
	j->b = d;
	j->payload = payload;
	j->codec = b->codec != FMT_CODEC_NONE ?
		cb_codec_get(&r->ctx, b->codec) : NULL;
	if (r->codec_failed)
		return cr_codec_failed(r, err);
	if (b->transform != TRANSFORM_NONE || b->raw < 8) {
		fmt_copy_msg(j->why, sizeof(j->why), "bad dictionary block");
		return cr_block_damaged(r, b, off, cr_origin(r), j->why,
					err);
	}
	/* refused before decoding: a small block may claim a huge one */
	if (b->raw - 8 > CONTAINER_DICT_MAX) {
		snprintf(j->why, sizeof(j->why), "a dictionary of %" PRIu32
			 " bytes (a file's are at most %u MiB)", b->raw - 8,
			 CONTAINER_DICT_MAX >> 20);
		return cr_block_damaged(r, b, off, cr_origin(r), j->why,
					err);
	}
	ret = cb_job_decode_only(&r->ctx, 0, j);
	if (ret == -ENOMEM)
		return pipe_err_set(err, ret, "cannot read '%s': %s",
				    r->opts.name, j->why);
	if (ret == 0)
		ret = cb_dict_add(&r->ctx, fmt_get32(j->bytes), b->dict,
				  j->bytes + 8, b->raw - 8, j->why,
				  sizeof(j->why));
	cr_job_shrink(j, CR_INFLIGHT_MAX);
	if (ret == -ENOMEM)
		return pipe_err_set(err, ret, "cannot read '%s': %s",
				    r->opts.name, j->why);
	if (ret < 0)
		return cr_block_damaged(r, b, off, cr_origin(r), j->why,
					err);
	return 0;
}

static int cr_lost_block(struct creader *r, const uint8_t *p, size_t len)
{
	size_t i;

	r->st.dropped_blocks++;
	for (i = 0; i + 16 <= len; i += 16) {
		r->st.lost += fmt_get64(p + i + 8);
		r->st.dropped_lost += fmt_get64(p + i + 8);
	}
	return 0;
}

static int cr_torn(struct creader *r, uint64_t off, const struct fmt_block *b,
		   uint64_t bytes, struct pipe_err *err)
{
	int ret;

	ret = cr_drain(r, err);
	if (ret < 0)
		return ret;
	r->st.recovered = true;
	r->st.torn_bytes += bytes;
	r->at_end = true;
	if (b && b->type == FMT_DATA) {
		cr_data_lost(r, "torn tail", b, off, cr_origin(r), "dropped");
	} else {
		snprintf(r->line, sizeof(r->line),
			 "torn tail in '%s' at offset %" PRIu64
			 ": %" PRIu64 " bytes dropped", r->opts.name, off,
			 bytes);
	}
	return cr_damage(r, err);
}

/* Bytes from off to the end of the file (reads them when streaming). */
static int cr_bytes_left(struct creader *r, uint64_t off, uint64_t *left,
			 struct pipe_err *err)
{
	const uint8_t *p;
	size_t got;
	int ret;

	*left = 0;
	if (r->seekable) {
		*left = r->size > off ? r->size - off : 0;
		return 0;
	}
	if (r->eof_at != UINT64_MAX) {
		*left = r->eof_at > off ? r->eof_at - off : 0;
		return 0;
	}
	do {
		ret = cr_fetch(r, off + *left, CR_CHUNK, &p, &got, err);
		if (ret < 0)
			return ret;
		*left += got;
	} while (got == CR_CHUNK);
	return 0;
}

/*
 * Records of the DATA blocks the index places in [from, to): what a
 * region skipped for a bad header held.  Known in a forward read of a
 * seekable file with a good END and index chain, read on the first bad
 * header; 0 otherwise (a window read's entries are only those it needs).
 */
static int cr_indexed_records(struct creader *r, uint64_t from, uint64_t to,
			      uint64_t *nr, struct pipe_err *err)
{
	size_t lo;
	int ret;

	*nr = 0;
	if (!r->seekable || r->filter)
		return 0;
	if (!r->index_read) {
		r->index_read = true;
		ret = cr_read_index(r, err);
		if (ret < 0)
			return ret;
	}
	/* entries are in file order: the first at or after from */
	lo = search_u64(r->ents, r->nr_ents, sizeof(*r->ents),
			offsetof(struct cr_entry, off), from,
			SEARCH_FIRST_NOT_BELOW);
	for (; lo < r->nr_ents && r->ents[lo].off < to; lo++)
		if (r->ents[lo].type == FMT_DATA)
			*nr += r->ents[lo].records;
	return 0;
}

/* A bad header at r->pos: resync on the next good one, or a torn tail. */
static int cr_bad_header(struct creader *r, struct pipe_err *err)
{
	uint64_t next, left, lost;
	int ret;

	ret = cr_drain(r, err);
	if (ret == 0)
		ret = cr_resync(r, r->pos, &next, err);
	if (ret < 0)
		return ret;
	if (next == UINT64_MAX) {
		ret = cr_bytes_left(r, r->pos, &left, err);
		if (ret < 0)
			return ret;
		return cr_torn(r, r->pos, NULL, left, err);
	}
	ret = cr_indexed_records(r, r->pos, next, &lost, err);
	if (ret < 0)
		return ret;
	r->st.blocks_damaged++;
	r->st.records_damaged += lost;
	if (lost)
		snprintf(r->line, sizeof(r->line),
			 "damaged block in '%s' at offset %" PRIu64
			 ": %" PRIu64 " bytes skipped, %" PRIu64
			 " records by the index: bad block header",
			 r->opts.name, r->pos, next - r->pos, lost);
	else
		snprintf(r->line, sizeof(r->line),
			 "damaged block in '%s' at offset %" PRIu64
			 ": %" PRIu64 " bytes skipped: bad block header",
			 r->opts.name, r->pos, next - r->pos);
	r->pos = next;
	return cr_damage(r, err);
}

/*
 * Bytes after a good END (a recording appended with >>, or garbage) are
 * not read, but a file's are reported: `verify` fails on them.  A stream
 * is left where END ended.
 */
static int cr_after_end(struct creader *r, struct pipe_err *err)
{
	if (!r->seekable || r->size <= r->pos)
		return 0;
	r->st.trailing_bytes = r->size - r->pos;
	snprintf(r->line, sizeof(r->line),
		 "data after the end in '%s' at offset %" PRIu64 ": %" PRIu64
		 " bytes not read (an appended recording, or garbage)",
		 r->opts.name, r->pos, r->st.trailing_bytes);
	return cr_damage(r, err);
}

/* Whether the block an entry led to is the one it describes. */
static bool cr_entry_matches(const struct cr_entry *e, enum cr_hdr what,
			     const struct fmt_block *b)
{
	return what == CR_HDR_GOOD && b->type == e->type && b->stream == e->stream &&
	       b->t_min == e->t_min && b->t_max == e->t_max;
}

/*
 * The index led to something other than the block it describes (bytes
 * inserted or lost before it, or a lying index): forget the plan and walk
 * forward from the end of the last block visited, filtering records as a
 * stream read does, so nothing after the damage is lost.
 */
static int cr_unplan(struct creader *r, struct pipe_err *err)
{
	snprintf(r->line, sizeof(r->line),
		 "damaged index in '%s': no block as it says at offset %"
		 PRIu64 "; reading on from offset %" PRIu64, r->opts.name,
		 r->pos, r->resume);
	r->selective = false;
	r->pos = r->resume;
	return cr_damage(r, err);
}

/*
 * Whether the block at off (cr_header_at said `what`, header *b) must
 * wait until every block before it retired: damage to report in order, a
 * dictionary, END, a torn tail, an index that led astray.  Those are
 * taken only with no job in flight, and the jobs before them retire one
 * at a time with records released between, exactly as when decoding
 * inline, so the record order never depends on the number of threads.
 */
static int cr_sync_point(struct creader *r, uint64_t off, enum cr_hdr what,
			 const struct fmt_block *b, bool *sync,
			 struct pipe_err *err)
{
	const uint8_t *p;
	uint64_t total;
	size_t got;
	int ret;

	*sync = true;
	if (what == CR_HDR_EOF) {
		*sync = false;
		return 0;
	}
	if (what != CR_HDR_GOOD ||
	    (r->selective && !cr_entry_matches(r->expect, what, b)))
		return 0;
	total = fmt_block_len(b);
	ret = cr_fetch(r, off, (size_t)total, &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < total)
		return 0;
	if (b->type == FMT_DATA) {
		/* a block that would take the bytes in flight past the
		 * bound waits until it is the only one */
		*sync = cr_stream_wanted(r, b->stream) &&
			r->inflight + cr_job_cost(b) > CR_INFLIGHT_MAX;
		return 0;
	}
	if (b->type == FMT_END || b->type == FMT_DICT ||
	    fmt_get64(p + total - 16) != total ||
	    fmt_get64(p + total - 8) != r->salt ||
	    !fmt_checksum_ok(p + b->hdr_size, b->stored, r->salt,
			     b->payload_sum))
		return 0;
	*sync = false;
	return 0;
}

/* Read the block at r->pos. */
static int cr_step(struct creader *r, struct pipe_err *err)
{
	struct fmt_block b;
	const uint8_t *p;
	uint64_t off = r->pos, total;
	enum cr_hdr what;
	bool trailer_bad;
	size_t got;
	int ret;

	ret = cr_header_at(r, off, &b, &what, err);
	if (ret < 0)
		return ret;
	if (r->pool && cb_pool_pending(r->pool)) {
		bool sync;
		int sret = cr_sync_point(r, off, what, &b, &sync, err);

		if (sret < 0)
			return sret;
		if (sync) {
			r->sync = true;
			return 0;
		}
	}
	if (r->selective && !cr_entry_matches(r->expect, what, &b))
		return cr_unplan(r, err);
	if (what == CR_HDR_EOF) {
		r->at_end = true;
		r->st.recovered = true;
		return 0;
	}
	if (what != CR_HDR_GOOD)
		return cr_bad_header(r, err);
	if (b.type == FMT_DATA && b.t_min && !r->have_origin) {
		r->origin = b.t_min;
		r->have_origin = true;
	}
	total = fmt_block_len(&b);
	ret = cr_fetch(r, off, (size_t)total, &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < total)
		return cr_torn(r, off, &b, got, err);
	r->pos = off + total;
	r->big_blocks = total >= CR_TOUCH_MAPS;
	/* a pool's decoder checks a mapped block's trailer: see
	 * cr_header_at */
	if (b.type == FMT_DATA && r->map && r->pool)
		return cr_data_block(r, &b, p + b.hdr_size, off,
				     p + total - FMT_TRAILER_SIZE, false, err);
	trailer_bad = fmt_get64(p + total - 16) != total ||
		      fmt_get64(p + total - 8) != r->salt;
	p += b.hdr_size;
	if (b.type == FMT_DATA)
		return cr_data_block(r, &b, p, off, NULL, trailer_bad, err);
	if (b.type == FMT_END || trailer_bad ||
	    !fmt_checksum_ok(p, b.stored, r->salt, b.payload_sum)) {
		/* what follows is said after the blocks before it */
		ret = cr_drain(r, err);
		if (ret < 0)
			return ret;
	}
	cr_horizon(r, b.horizon);
	if (trailer_bad) {
		snprintf(r->line, sizeof(r->line),
			 "damaged block trailer in '%s' at offset %" PRIu64
			 ": its records are kept", r->opts.name,
			 off + total - 16);
		r->st.blocks_damaged++;
		ret = cr_damage(r, err);
		if (ret < 0)
			return ret;
	}
	switch (b.type) {
	case FMT_META:
	case FMT_INDEX:
	case FMT_DICT:
	case FMT_LOST:
	case FMT_END:
		if (!fmt_checksum_ok(p, b.stored, r->salt, b.payload_sum)) {
			if (b.type == FMT_END)
				r->at_end = true;
			return cr_block_damaged(r, &b, off, cr_origin(r),
						"payload checksum mismatch",
						err);
		}
		if (b.type == FMT_DICT)
			return cr_dict_block(r, &b, p, off, err);
		if (b.type == FMT_LOST)
			return cr_lost_block(r, p, b.stored);
		if (b.type == FMT_END) {
			r->at_end = true;
			r->clean_end = true;
			return cr_after_end(r, err);
		}
		return 0;
	default:
		if (b.type & FMT_ANCILLARY)
			return 0;
		pipe_err_set(err, -EPROTO,
			     "cannot read '%s': block type %" PRIu32
			     " at offset %" PRIu64 " is from a newer pipe",
			     r->opts.name, b.type, off);
		pipe_err_hint(err, "upgrade pipe to read this file");
		return -EPROTO;
	}
}

int creader_next(struct creader *r, struct pipe_batch *out,
		 struct pipe_err *err)
{
	int ret;

	for (;;) {
		/* the views of the last batch are no longer used */
		cr_unhold(r);
		runmerge_pop(r->runs, runmerge_bytes(r->runs) > CR_MERGE_MAX ?
			     UINT64_MAX : r->horizon, CR_BATCH, out);
		if (out->nr)
			return 0;
		if (r->pool && cb_pool_pending(r->pool) &&
		    (r->at_end || r->sync || !cb_pool_slot(r->pool))) {
			ret = cr_retire_oldest(r, err);
			if (ret < 0)
				return ret;
			continue;
		}
		if (r->at_end) {
			if (r->horizon == UINT64_MAX)
				return PIPE_EOF;
			r->horizon = UINT64_MAX;
			continue;
		}
		if (r->sync) {
			/* nothing in flight now: take the block at pos */
			r->sync = false;
		} else if (r->selective) {
			if (r->next_ent == r->nr_ents) {
				r->at_end = true;
				continue;
			}
			/* r->pos is where the last visited block ended */
			r->resume = r->pos;
			r->expect = &r->ents[r->next_ent];
			r->pos = r->ents[r->next_ent++].off;
		}
		ret = cr_step(r, err);
		if (ret < 0)
			return ret;
	}
}


int creader_blocks(struct creader *r, cr_block_fn fn, void *opaque,
		   struct pipe_err *err)
{
	struct pipe_batch b;
	int ret;

	r->block_fn = fn;
	r->block_opaque = opaque;
	/* no record reaches the merge: this returns at the end only */
	do
		ret = creader_next(r, &b, err);
	while (ret == 0);
	r->block_fn = NULL;
	if (r->block_stop)
		return 1;
	return ret == PIPE_EOF ? 0 : ret;
}
