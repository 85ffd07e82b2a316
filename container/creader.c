/*
 * creader.c - the container reader: walks a pipe file forward block by
 * block through a byte source, checks every checksum and length, skips and
 * reports damaged blocks, drops a torn tail, and releases the records of
 * all streams in time order using the block horizons (record/merge.h).
 * Layout: docs/format.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container.h"
#include "err.h"
#include "format.h"
#include "host.h"
#include "merge.h"
#include "meta.h"
#include "transform.h"
#include "cblock.h"

#define CR_CHUNK (256u << 10)     /* bytes asked of the source at once */
#define CR_BATCH 4096             /* records per released batch */
#define CR_SMALL_READ 4096        /* bytes per read while jumping around */
#define CR_MIN_BLOCK_LEN 112      /* the smallest possible block */
/* records held for ordering; past this (a file whose horizons do not
 * move) the oldest go out anyway, so memory stays bounded */
#define CR_MERGE_MAX ((size_t)256 << 20)
#define CR_MERGE_PER_RECORD 16    /* the merge's bytes besides a record */
/* bytes the blocks in flight may claim (their payload, codec output,
 * records and record views, by their headers), and what the decode slots
 * keep between blocks in all: past these, blocks wait or buffers go */
#define CR_INFLIGHT_MAX ((uint64_t)128 << 20)

/* A block the window read will visit. */
struct cr_entry {
	uint64_t off;                 /* block offset */
	uint64_t t_min, t_max;        /* its record times */
	uint32_t stream;              /* its stream */
	uint32_t type;                /* its block type */
	uint32_t records;             /* its record count */
	uint32_t raw;                 /* its raw length */
};

struct creader {
	struct cr_opts opts;          /* copy; pointers borrowed */
	uint64_t salt;                /* low 8 bytes of the file id */
	bool seekable;                /* size() worked */
	bool small_reads;             /* jumping around: read what is asked */
	uint64_t size;                /* file size when seekable */
	/* bytes [base, base + len) of the file are in buf */
	uint8_t *buf;                 /* owned */
	size_t cap;
	uint64_t base;
	size_t len;
	uint64_t eof_at;              /* where the source ended, or MAX */
	struct meta *meta;            /* owned */
	struct merge *merge;          /* owned */
	struct cb_ctx ctx;            /* codecs, transforms, dictionaries */
	struct cb_pool *pool;         /* owned; NULL: decode inline */
	struct cb_job job;            /* the inline job */
	uint64_t pos;                 /* offset of the next block */
	uint64_t hdr_end;             /* offset of the first block after META */
	uint64_t horizon;             /* records older than this are read */
	uint64_t origin;              /* time 0 of messages: first block */
	bool have_origin;
	bool at_end;                  /* no more blocks */
	bool clean_end;               /* saw a good END block */
	/* window and subset */
	bool filter;                  /* a window or subset was asked */
	bool have_window;             /* lo and hi are known */
	uint64_t lo, hi;              /* absolute window, ns */
	bool *stream_ok;              /* owned, per CPU stream: wanted */
	uint32_t nr_stream_ok;
	struct cr_entry *ents;        /* owned: the blocks to visit */
	size_t nr_ents, next_ent, ents_cap;
	bool selective;               /* visit ents only */
	bool index_read;              /* a forward read looked for ents */
	const struct cr_entry *expect; /* the entry at pos, when selective */
	uint64_t inflight;            /* bytes the pending jobs claim */
	bool sync;                    /* the block at pos waits for every
				       * job before it to retire, one by one
				       * with releases between, as inline */
	uint64_t resume;              /* end of the last block visited */
	char line[512];               /* the last damage line */
	struct cr_stats st;
};



/* Read more bytes after base + len; 0 at the end of the source. */
static int cr_fill(struct creader *r, size_t *got, struct pipe_err *err)
{
	uint64_t at = r->base + r->len;
	struct crash_site site;
	size_t want;
	int ret;

	*got = 0;
	if (at >= r->eof_at || r->len == r->cap)
		return 0;
	want = r->cap - r->len;
	if (r->small_reads && want > CR_SMALL_READ)
		want = CR_SMALL_READ;
	site = host_enter(r->opts.src_ctx, "read_at");
	ret = r->opts.src->read_at(r->opts.src_state, at, r->buf + r->len,
				   want, got);
	host_leave(site);
	if (ret < 0)
		return pipe_err_set(err, ret, "cannot read '%s': %s",
				    r->opts.name, strerror(-ret));
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
static int cr_fetch(struct creader *r, uint64_t off, size_t n,
		    const uint8_t **p, size_t *got, struct pipe_err *err)
{
	size_t more;
	int ret;

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
	if (fmt_grow((void **)&r->buf, &r->cap, (size_t)(off - r->base) + n,
		     65536))
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				    r->opts.name, strerror(ENOMEM));
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

/* What cr_header_at found at an offset. */
enum cr_hdr {
	CR_HDR_GOOD,  /* a block header that checks out, decoded */
	CR_HDR_BAD,   /* bytes that are not a good block header */
	CR_HDR_SHORT, /* fewer than FMT_BLOCK_HDR_SIZE bytes, but some */
	CR_HDR_EOF,   /* no byte at all: the end of the data */
};

/*
 * Read and check the block header at off: 0 with *what set (*b filled
 * when it is CR_HDR_GOOD), or a negative errno when reading failed.
 */
static int cr_header_at(struct creader *r, uint64_t off, struct fmt_block *b,
			enum cr_hdr *what, struct pipe_err *err)
{
	const uint8_t *p;
	uint32_t size;
	size_t got;
	int ret;

	ret = cr_fetch(r, off, FMT_BLOCK_HDR_SIZE, &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < FMT_BLOCK_HDR_SIZE) {
		*what = got == 0 ? CR_HDR_EOF : CR_HDR_SHORT;
		return 0;
	}
	size = fmt_get16(p + FMT_BH_HDR_SIZE);
	if (fmt_get32(p) == FMT_BLOCK_MAGIC && size > FMT_BLOCK_HDR_SIZE &&
	    size <= FMT_BLOCK_HDR_MAX) {
		ret = cr_fetch(r, off, size, &p, &got, err);
		if (ret < 0)
			return ret;
	}
	*what = fmt_block_decode(b, p, got, r->salt) < 0 ? CR_HDR_BAD
							 : CR_HDR_GOOD;
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
static int cr_damage(struct creader *r, struct pipe_err *err)
{
	if (r->opts.strict)
		return pipe_err_set(err, -EIO, "%s", r->line);
	if (r->opts.report)
		r->opts.report(r->opts.opaque, r->line);
	return 0;
}

/* A damaged block; a DATA block's times are told from `origin` (as it
 * was when the block was read, so threads do not change the line). */
static int cr_block_damaged(struct creader *r, const struct fmt_block *b,
			    uint64_t off, uint64_t origin, const char *why,
			    struct pipe_err *err)
{
	char sname[32];

	r->st.blocks_damaged++;
	if (b->type == FMT_DATA) {
		r->st.records_damaged += b->records;
		snprintf(r->line, sizeof(r->line),
			 "damaged block in '%s' at offset %" PRIu64
			 ": %s, time %.3f-%.3f s, %" PRIu32
			 " records skipped: %s", r->opts.name, off,
			 cr_stream_name(b->stream, sname, sizeof(sname)),
			 cr_secs(origin, b->t_min), cr_secs(origin, b->t_max),
			 b->records, why);
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
		if (merge_push(r->merge, j->recs, j->nr) < 0)
			return pipe_err_set(err, -ENOMEM,
					    "cannot read '%s': %s",
					    r->opts.name, strerror(ENOMEM));
	}
	if (j->horizon > r->horizon)
		r->horizon = j->horizon;
	return 0;
}

/* What decoding a block claims at most, by its header: the payload copy,
 * the codec's output, the records and their views. */
static uint64_t cr_job_cost(const struct fmt_block *b)
{
	return (uint64_t)b->stored + b->coded + b->raw +
	       (uint64_t)b->records * sizeof(struct pipe_record);
}

/* Buffers a slot keeps for the next block: an even share of the bound,
 * so a crafted block's 64 MiB buffers do not stay for the whole read. */
static void cr_job_shrink(struct cb_job *j, uint64_t keep)
{
	if ((uint64_t)j->copy_cap + j->coded_cap + j->raw_cap +
	    j->recs_cap > keep)
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

static bool cr_stream_wanted(const struct creader *r, uint32_t stream)
{
	if (!r->stream_ok || stream == PIPE_STREAM_SIDEBAND)
		return true;
	return stream < r->nr_stream_ok && r->stream_ok[stream];
}

/* Set the window from the first record time, once known. */
static void cr_window(struct creader *r, uint64_t origin)
{
	if (r->have_window)
		return;
	r->have_window = true;
	r->lo = r->opts.start_ns ? origin + r->opts.start_ns : 0;
	r->hi = r->opts.stop_ns ? origin + r->opts.stop_ns : UINT64_MAX;
}

static int cr_data_block(struct creader *r, const struct fmt_block *b,
			 const uint8_t *payload, uint64_t off, bool trailer_bad,
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
	if (b->codec != FMT_CODEC_NONE)
		c = cb_codec_get(&r->ctx, b->codec);
	while (r->pool && !(j = cb_pool_slot(r->pool))) {
		ret = cr_retire_oldest(r, err);
		if (ret < 0)
			return ret;
	}
	j->b = *b;
	j->off = off;
	j->origin = cr_origin(r);
	j->horizon = b->horizon;
	j->trailer_bad = trailer_bad;
	j->codec = c;
	j->filter = r->filter;
	j->lo = r->have_window ? r->lo : 0;
	j->hi = r->have_window ? r->hi : UINT64_MAX;
	if (!r->pool) {
		j->payload = payload;
		cb_job_run(&r->ctx, 0, j);
		ret = cr_retire(r, j, err);
		cr_job_shrink(j, CR_INFLIGHT_MAX);
		return ret;
	}
	if (cb_job_copy(j, payload, b->stored) < 0)
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				    r->opts.name, strerror(ENOMEM));
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

	for (i = 0; i + 16 <= len; i += 16)
		r->st.lost += fmt_get64(p + i + 8);
	return 0;
}

/* Look for the next good block header after `from`; *found or MAX. */
static int cr_resync(struct creader *r, uint64_t from, uint64_t *found,
		     struct pipe_err *err)
{
	uint64_t at = (from + 8) & ~(uint64_t)7;
	struct fmt_block b;
	enum cr_hdr what;
	const uint8_t *p;
	size_t got;
	int ret;

	*found = UINT64_MAX;
	for (;; at += 8) {
		ret = cr_fetch(r, at, FMT_BLOCK_HDR_SIZE, &p, &got, err);
		if (ret < 0)
			return ret;
		if (got < FMT_BLOCK_HDR_SIZE)
			return 0;
		if (fmt_get32(p) != FMT_BLOCK_MAGIC)
			continue;
		ret = cr_header_at(r, at, &b, &what, err);
		if (ret < 0)
			return ret;
		if (what == CR_HDR_GOOD) {
			*found = at;
			return 0;
		}
	}
}

static int cr_torn(struct creader *r, uint64_t off, const struct fmt_block *b,
		   uint64_t bytes, struct pipe_err *err)
{
	char sname[32];
	int ret;

	ret = cr_drain(r, err);
	if (ret < 0)
		return ret;
	r->st.recovered = true;
	r->st.torn_bytes += bytes;
	r->at_end = true;
	if (b && b->type == FMT_DATA) {
		r->st.records_damaged += b->records;
		snprintf(r->line, sizeof(r->line),
			 "torn tail in '%s' at offset %" PRIu64
			 ": %s, time %.3f-%.3f s, %" PRIu32
			 " records dropped", r->opts.name, off,
			 cr_stream_name(b->stream, sname, sizeof(sname)),
			 cr_secs(cr_origin(r), b->t_min),
			 cr_secs(cr_origin(r), b->t_max), b->records);
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

static int cr_read_index(struct creader *r, struct pipe_err *err);

/*
 * Records of the DATA blocks the index places in [from, to): what a
 * region skipped for a bad header held.  Known in a forward read of a
 * seekable file with a good END and index chain, read on the first bad
 * header; 0 otherwise (a window read's entries are only those it needs).
 */
static int cr_indexed_records(struct creader *r, uint64_t from, uint64_t to,
			      uint64_t *nr, struct pipe_err *err)
{
	size_t lo = 0, hi;
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
	hi = r->nr_ents;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ents[mid].off < from)
			lo = mid + 1;
		else
			hi = mid;
	}
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
	trailer_bad = fmt_get64(p + total - 16) != total ||
		      fmt_get64(p + total - 8) != r->salt;
	p += b.hdr_size;
	if (b.type == FMT_DATA)
		return cr_data_block(r, &b, p, off, trailer_bad, err);
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
		merge_pop(r->merge, merge_bytes(r->merge) +
			  merge_count(r->merge) * CR_MERGE_PER_RECORD >
			  CR_MERGE_MAX ?
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

/* ---- finding blocks without reading them: the index, or a scan ------- */

static int cr_add_entry(struct creader *r, uint64_t off, uint32_t type,
			uint32_t stream, uint64_t t_min, uint64_t t_max,
			uint32_t records, uint32_t raw)
{
	struct cr_entry *e;

	if (r->nr_ents == r->ents_cap) {
		size_t n = r->ents_cap ? r->ents_cap * 2 : 256;

		/* no file holds more blocks than this */
		if (n > r->size / CR_MIN_BLOCK_LEN + 256)
			n = r->size / CR_MIN_BLOCK_LEN + 256;
		if (r->nr_ents == n)
			return -EINVAL;
		e = realloc(r->ents, n * sizeof(*e));
		if (!e)
			return -ENOMEM;
		r->ents = e;
		r->ents_cap = n;
	}
	e = &r->ents[r->nr_ents++];
	e->off = off;
	e->type = type;
	e->stream = stream;
	e->t_min = t_min;
	e->t_max = t_max;
	e->records = records;
	e->raw = raw;
	return 0;
}

/*
 * Read and check a whole non-DATA block at off of the given type: 0 with
 * *p at its payload, 1 when it is not a good one.
 */
static int cr_small_block(struct creader *r, uint64_t off, uint32_t type,
			  struct fmt_block *b, const uint8_t **p,
			  struct pipe_err *err)
{
	enum cr_hdr what;
	size_t got;
	int ret;

	ret = cr_header_at(r, off, b, &what, err);
	if (ret < 0)
		return ret;
	if (what != CR_HDR_GOOD)
		return 1;
	if (b->type != type || b->codec != FMT_CODEC_NONE ||
	    off + fmt_block_len(b) > r->size)
		return 1;
	ret = cr_fetch(r, off, (size_t)fmt_block_len(b), p, &got, err);
	if (ret < 0)
		return ret;
	if (got < fmt_block_len(b))
		return 1;
	*p += b->hdr_size;
	return fmt_checksum_ok(*p, b->stored, r->salt, b->payload_sum) ? 0 : 1;
}

/*
 * Add the entries of the INDEX chain ending at idx (each index before
 * `limit`), in file order: 0, or 1 when a link is damaged.
 */
static int cr_read_chain(struct creader *r, uint64_t idx, uint64_t limit,
			 struct pipe_err *err)
{
	uint64_t *chain = NULL, total = 0;
	size_t nr_chain = 0, cap = 0, i;
	struct fmt_block b;
	const uint8_t *p;
	int ret;

	/* walk back, remembering the chain, then read it forward */
	while (idx) {
		uint64_t *v;

		if (idx >= limit)
			goto bad;
		if (nr_chain == cap) {
			cap = cap ? cap * 2 : 16;
			v = realloc(chain, cap * sizeof(*v));
			if (!v) {
				ret = -ENOMEM;
				goto bad_ret;
			}
			chain = v;
		}
		chain[nr_chain++] = idx;
		ret = cr_small_block(r, idx, FMT_INDEX, &b, &p, err);
		if (ret != 0 || b.stored < FMT_INDEX_HEAD)
			goto bad_ret;
		/* links never overlap: the chain costs at most the file */
		if (idx + fmt_block_len(&b) > limit)
			goto bad;
		limit = idx;
		idx = fmt_get64(p);
	}
	for (i = nr_chain; i-- > 0;) {
		uint32_t n, esize, k;

		ret = cr_small_block(r, chain[i], FMT_INDEX, &b, &p, err);
		if (ret != 0)
			goto bad_ret;
		n = fmt_get32(p + 8);
		esize = fmt_get32(p + 12);
		if (esize < FMT_INDEX_ENTRY ||
		    (uint64_t)n * esize > b.stored - FMT_INDEX_HEAD)
			goto bad;
		for (k = 0; k < n; k++) {
			const uint8_t *e = p + FMT_INDEX_HEAD +
					   (size_t)k * esize;
			uint64_t off = fmt_get64(e);

			if (off >= chain[i] || off < total)
				goto bad;
			total = off + 1;
			ret = cr_add_entry(r, off, e[40], fmt_get32(e + 24),
					   fmt_get64(e + 8), fmt_get64(e + 16),
					   fmt_get32(e + 28), fmt_get32(e + 36));
			if (ret == -ENOMEM)
				goto bad_ret;
			if (ret < 0)
				goto bad;
		}
	}
	free(chain);
	return 0;
bad:
	ret = 1;
bad_ret:
	free(chain);
	r->nr_ents = 0;
	if (ret == -ENOMEM)
		return pipe_err_set(err, ret, "cannot read '%s': %s",
				    r->opts.name, strerror(ENOMEM));
	return ret < 0 ? ret : 1;
}

/*
 * The blocks of a clean file from its END block and INDEX chain: 0, or 1
 * when there is none or it is damaged (the caller scans instead).
 */
static int cr_read_index(struct creader *r, struct pipe_err *err)
{
	struct fmt_block b;
	const uint8_t *p;
	uint64_t end_off;
	size_t got;
	int ret;

	if (r->size < FMT_TRAILER_SIZE)
		return 1;
	ret = cr_fetch(r, r->size - FMT_TRAILER_SIZE, FMT_TRAILER_SIZE, &p,
		       &got, err);
	if (ret < 0)
		return ret;
	if (got < FMT_TRAILER_SIZE || fmt_get64(p + 8) != r->salt ||
	    fmt_get64(p) > r->size)
		return 1;
	end_off = r->size - fmt_get64(p);
	ret = cr_small_block(r, end_off, FMT_END, &b, &p, err);
	if (ret != 0 || b.stored < FMT_END_SIZE)
		return ret < 0 ? ret : 1;
	return cr_read_chain(r, fmt_get64(p), end_off, err);
}

/*
 * A file without END: look back from its end for the last good INDEX
 * block.  *idx is its offset, or 0 when there is none.  The payloads
 * checked on the way cost at most the file's size in all (a crafted file
 * can hold an INDEX-looking header every 96 bytes, each claiming the rest
 * of the file); past that the caller scans from the start instead.
 */
static int cr_last_index(struct creader *r, uint64_t *idx,
			 struct pipe_err *err)
{
	uint64_t end = r->size & ~(uint64_t)7, start, at, budget = r->size;
	struct fmt_block b;
	const uint8_t *p, *q;
	size_t got;
	int ret;

	*idx = 0;
	while (end > r->pos) {
		start = end - r->pos > CR_CHUNK ? end - CR_CHUNK : r->pos;
		ret = cr_fetch(r, start, (size_t)(end - start) +
			       FMT_BLOCK_HDR_SIZE, &p, &got, err);
		if (ret < 0)
			return ret;
		for (at = end; at-- > start;) {
			if (at % 8 || at - start + FMT_BLOCK_HDR_SIZE > got)
				continue;
			q = p + (at - start);
			if (fmt_get32(q) != FMT_BLOCK_MAGIC ||
			    q[FMT_BH_TYPE] != FMT_INDEX ||
			    fmt_block_decode(&b, q, FMT_BLOCK_HDR_SIZE,
					     r->salt) < 0)
				continue;
			if (at + fmt_block_len(&b) > r->size)
				continue;
			if (b.stored > budget)
				return 0;
			budget -= b.stored;
			ret = cr_small_block(r, at, FMT_INDEX, &b, &q, err);
			if (ret < 0)
				return ret;
			if (ret == 0) {
				*idx = at;
				return 0;
			}
			/* the buffer moved: fetch this window again */
			ret = cr_fetch(r, start, (size_t)(end - start) +
				       FMT_BLOCK_HDR_SIZE, &p, &got, err);
			if (ret < 0)
				return ret;
		}
		end = start;
	}
	return 0;
}

/* The blocks of a file without a usable index: its headers, in order. */
static int cr_scan(struct creader *r, uint64_t pos, struct pipe_err *err)
{
	struct fmt_block b;
	enum cr_hdr what;
	uint64_t next;
	int ret;

	for (;;) {
		ret = cr_header_at(r, pos, &b, &what, err);
		if (ret < 0)
			return ret;
		if (what == CR_HDR_EOF)
			break;
		if (what != CR_HDR_GOOD) {
			ret = cr_resync(r, pos, &next, err);
			if (ret < 0)
				return ret;
			if (next == UINT64_MAX)
				break;
			pos = next;
			continue;
		}
		if (pos + fmt_block_len(&b) > r->size)
			break;
		ret = cr_add_entry(r, pos, b.type, b.stream, b.t_min,
				   b.t_max, b.records, b.raw);
		if (ret < 0)
			return pipe_err_set(err, ret, "cannot read '%s': %s",
					    r->opts.name, strerror(-ret));
		pos += fmt_block_len(&b);
		if (b.type == FMT_END)
			return 0;
	}
	/* no END: the walk over the chosen blocks reports no torn tail */
	r->st.recovered = true;
	r->st.torn_bytes = r->size - pos;
	if (pos < r->size) {
		snprintf(r->line, sizeof(r->line),
			 "torn tail in '%s' at offset %" PRIu64
			 ": %" PRIu64 " bytes dropped", r->opts.name, pos,
			 r->size - pos);
		return cr_damage(r, err);
	}
	return 0;
}

/* Keep only the blocks a window or subset read needs. */
static void cr_select(struct creader *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr_ents; i++) {
		const struct cr_entry *e = &r->ents[i];
		bool keep;

		switch (e->type) {
		case FMT_DATA:
			keep = cr_stream_wanted(r, e->stream) &&
			       e->t_min < r->hi &&
			       (e->stream == PIPE_STREAM_SIDEBAND ||
				e->t_max >= r->lo);
			break;
		case FMT_DICT:
		case FMT_LOST:
			keep = true;
			break;
		default:
			keep = e->type != FMT_META && e->type != FMT_INDEX &&
			       e->type != FMT_END;
		}
		if (keep)
			r->ents[n++] = *e;
	}
	r->nr_ents = n;
}

/* A window or subset read of a seekable file: decide which blocks. */
static int cr_plan_blocks(struct creader *r, struct pipe_err *err)
{
	size_t i;
	int ret;

	ret = cr_read_index(r, err);
	if (ret < 0)
		return ret;
	if (ret > 0) {
		/* recovery: the last good index, then forward from it */
		uint64_t idx, from = r->pos;
		struct fmt_block ib;
		const uint8_t *p;

		ret = cr_last_index(r, &idx, err);
		if (ret == 0 && idx)
			ret = cr_read_chain(r, idx, r->size, err);
		if (ret == 0 && idx)
			ret = cr_small_block(r, idx, FMT_INDEX, &ib, &p, err);
		if (ret == 0 && idx)
			from = idx + fmt_block_len(&ib);
		if (ret < 0)
			return ret;
		if (ret > 0)
			r->nr_ents = 0;
		ret = cr_scan(r, ret > 0 ? r->pos : from, err);
		if (ret < 0)
			return ret;
	}
	/* time 0 as a forward read finds it (END's oldest time may differ):
	 * the first DATA block with a time, in file order */
	for (i = 0; !r->have_origin && i < r->nr_ents; i++) {
		if (r->ents[i].type == FMT_DATA && r->ents[i].t_min) {
			r->origin = r->ents[i].t_min;
			r->have_origin = true;
		}
	}
	cr_window(r, r->have_origin ? r->origin : 0);
	cr_select(r);
	r->selective = true;
	return 0;
}

/* The index is read in small pieces: only what is asked. */
static int cr_plan(struct creader *r, struct pipe_err *err)
{
	int ret;

	r->small_reads = true;
	ret = cr_plan_blocks(r, err);
	r->small_reads = false;
	return ret;
}

int creader_summary(struct creader *r, struct cr_stats *st,
		    struct pipe_err *err)
{
	uint64_t end_off, idx, records = 0, raw = 0, blocks = 0;
	struct fmt_block b;
	const uint8_t *p;
	size_t got, i;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!r->seekable || r->size < FMT_TRAILER_SIZE || r->pos != r->hdr_end)
		return 1;
	r->small_reads = true;
	ret = cr_fetch(r, r->size - FMT_TRAILER_SIZE, FMT_TRAILER_SIZE, &p,
		       &got, err);
	if (ret < 0)
		goto out;
	ret = 1;
	if (got < FMT_TRAILER_SIZE || fmt_get64(p + 8) != r->salt ||
	    fmt_get64(p) > r->size - r->pos)
		goto out;
	end_off = r->size - fmt_get64(p);
	ret = cr_small_block(r, end_off, FMT_END, &b, &p, err);
	if (ret != 0 || b.stored < FMT_END_SIZE_NOW) {
		ret = ret < 0 ? ret : 1;
		goto out;
	}
	idx = fmt_get64(p);
	st->records = fmt_get64(p + 8);
	st->samples = fmt_get64(p + 16);
	st->lost = fmt_get64(p + 24);
	st->blocks = fmt_get64(p + 32);
	st->t_first = fmt_get64(p + 40);
	st->t_last = fmt_get64(p + 48);
	st->raw_bytes = fmt_get64(p + 56);
	st->throttles = fmt_get64(p + FMT_END_THROTTLES);
	r->nr_ents = 0;
	ret = cr_read_chain(r, idx, end_off, err);
	if (ret != 0)
		goto out;
	/* END and the index must tell the same story */
	for (i = 0; i < r->nr_ents; i++) {
		if (r->ents[i].type != FMT_DATA)
			continue;
		blocks++;
		records += r->ents[i].records;
		raw += r->ents[i].raw;
	}
	ret = 1;
	if (blocks != st->blocks || records != st->records ||
	    raw != st->raw_bytes || st->samples > st->records ||
	    st->t_first > st->t_last)
		goto out;
	st->blocks_decoded = blocks;
	st->file_bytes = r->size;
	ret = 0;
out:
	r->nr_ents = 0;
	r->small_reads = false;
	if (ret != 0)
		memset(st, 0, sizeof(*st));
	return ret;
}

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
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				    r->opts.name, strerror(ENOMEM));
	r->nr_stream_ok = m->nr_streams;
	r->stream_ok = calloc(m->nr_streams + 1, sizeof(*r->stream_ok));
	if (!r->stream_ok)
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				    r->opts.name, strerror(ENOMEM));
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

int creader_open(struct creader **out, const struct cr_opts *opts,
		 struct pipe_err *err)
{
	struct creader *r;
	struct crash_site site;
	uint32_t hdr_size = 0, threads = cr_threads(opts);
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				    opts->name, strerror(ENOMEM));
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
	if (fmt_grow((void **)&r->buf, &r->cap, CR_CHUNK, 65536)) {
		ret = pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				   opts->name, strerror(ENOMEM));
		goto fail;
	}
	ret = merge_new(&r->merge);
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
	r->ctx.codec_open = opts->codec_open;
	r->ctx.codec_close = opts->codec_close;
	r->ctx.codec_error = opts->codec_error;
	r->ctx.opaque = opts->opaque;
	r->ctx.one_event = meta_nr_events(r->meta) == 1;
	r->ctx.nr_streams = cr_nr_streams(r->meta);
	r->ctx.pids = opts->pids;
	r->ctx.nr_pids = opts->nr_pids;
	if (threads > 1) {
		ret = cb_pool_new(&r->pool, &r->ctx, 2 * threads);
		if (ret < 0) {
			pipe_err_set(err, ret, "cannot read '%s': %s",
				     opts->name, strerror(-ret));
			goto fail;
		}
	}
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
	merge_free(r->merge);
	meta_free(r->meta);
	free(r->stream_ok);
	free(r->ents);
	free(r->buf);
	free(r);
}
