/*
 * creader.c - the container reader: walks a pipe file forward block by
 * block through a byte source, checks every checksum and length, skips and
 * reports damaged blocks, drops a torn tail, and releases the records of
 * all streams in time order using the block horizons (core/merge.h).
 * Layout: docs/format.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "decode.h"
#include "err.h"
#include "format.h"
#include "merge.h"
#include "meta.h"
#include "transform.h"

#define CR_CHUNK (256u << 10)     /* bytes asked of the source at once */
#define CR_BATCH 4096             /* records per released batch */
#define CR_MAX_CODECS 16

struct cr_codec {
	uint32_t id;                  /* codec id of block headers */
	const struct pipe_plugin *p;  /* NULL: could not open */
	void *state;                  /* the host's instance */
	char why[512];                /* why it could not open */
};

struct creader {
	struct cr_opts opts;          /* copy; pointers borrowed */
	uint64_t salt;                /* low 8 bytes of the file id */
	bool seekable;                /* size() worked */
	uint64_t size;                /* file size when seekable */
	/* bytes [base, base + len) of the file are in buf */
	uint8_t *buf;                 /* owned */
	size_t cap;
	uint64_t base;
	size_t len;
	uint64_t eof_at;              /* where the source ended, or MAX */
	struct meta *meta;            /* owned */
	struct merge *merge;          /* owned */
	struct transform *tf;         /* owned, made on first use */
	struct cr_codec codecs[CR_MAX_CODECS];
	uint32_t nr_codecs;
	uint64_t pos;                 /* offset of the next block */
	uint64_t horizon;             /* records older than this are read */
	uint64_t origin;              /* time 0 of messages: first block */
	bool have_origin;
	bool at_end;                  /* no more blocks */
	bool clean_end;               /* saw a good END block */
	uint8_t *coded;               /* owned codec output */
	size_t coded_cap;
	uint8_t *raw;                 /* owned record bytes */
	size_t raw_cap;
	struct pipe_record *recs;     /* owned views into raw */
	size_t recs_cap;
	char line[512];               /* the last damage line */
	struct cr_stats st;
};

/* Copy a message, cut to fit. */
static void cr_copy(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

static int cr_grow(uint8_t **buf, size_t *cap, size_t want)
{
	uint8_t *p;
	size_t n;

	if (want <= *cap)
		return 0;
	n = *cap ? *cap : 65536;
	while (n < want)
		n *= 2;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

/* Read more bytes after base + len; 0 at the end of the source. */
static int cr_fill(struct creader *r, size_t *got, struct pipe_err *err)
{
	uint64_t at = r->base + r->len;
	int ret;

	*got = 0;
	if (at >= r->eof_at || r->len == r->cap)
		return 0;
	ret = r->opts.src->read_at(r->opts.src_state, at, r->buf + r->len,
				   r->cap - r->len, got);
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
	if (off > r->base && (off - r->base) + n > r->cap) {
		size_t drop = (size_t)(off - r->base);

		memmove(r->buf, r->buf + drop, r->len - drop);
		r->len -= drop;
		r->base = off;
	}
	if (cr_grow(&r->buf, &r->cap, (size_t)(off - r->base) + n +
		    (n < CR_CHUNK ? CR_CHUNK : 0)))
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

/*
 * Read and check the block header at off: 0 with *b filled, 1 when the
 * header is bad, 2 when fewer than FMT_BLOCK_HDR_SIZE bytes are left.
 */
static int cr_header_at(struct creader *r, uint64_t off, struct fmt_block *b,
			struct pipe_err *err)
{
	const uint8_t *p;
	uint32_t size;
	size_t got;
	int ret;

	ret = cr_fetch(r, off, FMT_BLOCK_HDR_SIZE, &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < FMT_BLOCK_HDR_SIZE)
		return got == 0 ? 3 : 2;
	size = fmt_get16(p + FMT_BH_HDR_SIZE);
	if (fmt_get32(p) == FMT_BLOCK_MAGIC && size > FMT_BLOCK_HDR_SIZE &&
	    size <= FMT_BLOCK_HDR_MAX) {
		ret = cr_fetch(r, off, size, &p, &got, err);
		if (ret < 0)
			return ret;
	}
	return fmt_block_decode(b, p, got, r->salt) < 0 ? 1 : 0;
}

static const char *cr_stream_name(uint32_t stream, char *buf, size_t cap)
{
	if (stream == PIPE_STREAM_SIDEBAND)
		return "sideband";
	snprintf(buf, cap, "stream %" PRIu32, stream);
	return buf;
}

static double cr_secs(const struct creader *r, uint64_t t)
{
	return t >= r->origin ? (double)(t - r->origin) / 1e9 : 0.0;
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

static int cr_block_damaged(struct creader *r, const struct fmt_block *b,
			    uint64_t off, const char *why,
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
			 cr_secs(r, b->t_min), cr_secs(r, b->t_max),
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

static int cr_codec_get(struct creader *r, uint32_t id, struct cr_codec **out)
{
	struct pipe_err e = { { 0 }, { 0 } };
	struct cr_codec *c;
	uint32_t i;
	int ret;

	for (i = 0; i < r->nr_codecs; i++) {
		if (r->codecs[i].id == id) {
			*out = &r->codecs[i];
			return 0;
		}
	}
	if (r->nr_codecs == CR_MAX_CODECS)
		return -ENOSPC;
	c = &r->codecs[r->nr_codecs++];
	memset(c, 0, sizeof(*c));
	c->id = id;
	ret = r->opts.codec_open ? r->opts.codec_open(r->opts.opaque, id, &c->p,
						      &c->state, &e)
				 : -ENOENT;
	if (ret < 0 || !c->p || !c->p->decompress) {
		c->p = NULL;
		snprintf(c->why, sizeof(c->why), "unknown codec %" PRIu32, id);
		if (e.msg[0])
			cr_copy(c->why, sizeof(c->why), e.msg);
	}
	*out = c;
	return 0;
}

/*
 * Turn a block's stored payload into its raw bytes in r->raw.  On
 * failure *why says what went wrong (for the damage line).
 */
static int cr_decode_payload(struct creader *r, const struct fmt_block *b,
			     const uint8_t *payload, char *why, size_t cap)
{
	struct pipe_err e = { { 0 }, { 0 } };
	const uint8_t *coded = payload;
	struct cr_codec *c;
	int ret;

	if (cr_grow(&r->raw, &r->raw_cap, (size_t)b->raw + 8) ||
	    cr_grow(&r->coded, &r->coded_cap, (size_t)b->coded + 8)) {
		cr_copy(why, cap, strerror(ENOMEM));
		return -ENOMEM;
	}
	if (b->transform == TRANSFORM_NONE && b->coded != b->raw) {
		snprintf(why, cap, "coded length %" PRIu32
			 " differs from raw length %" PRIu32, b->coded, b->raw);
		return -EINVAL;
	}
	if (b->transform != TRANSFORM_NONE &&
	    b->transform != TRANSFORM_COLUMNS) {
		snprintf(why, cap, "unknown transform %" PRIu32, b->transform);
		return -EINVAL;
	}
	if (b->codec == FMT_CODEC_NONE) {
		if (b->stored != b->coded) {
			snprintf(why, cap, "stored length %" PRIu32
				 " differs from coded length %" PRIu32,
				 b->stored, b->coded);
			return -EINVAL;
		}
	} else {
		ret = cr_codec_get(r, b->codec, &c);
		if (ret < 0 || !c->p) {
			cr_copy(why, cap, ret < 0 ? "too many codecs" : c->why);
			return -EINVAL;
		}
		ret = c->p->decompress(c->state, b->dict, payload, b->stored,
				       r->coded, b->coded);
		if (ret < 0) {
			snprintf(why, cap, "codec '%s' cannot decode it: %s",
				 c->p->name, strerror(-ret));
			return -EINVAL;
		}
		coded = r->coded;
	}
	if (b->transform == TRANSFORM_NONE) {
		if (coded != r->raw)
			memcpy(r->raw, coded, b->raw);
		return 0;
	}
	if (!r->tf) {
		ret = transform_new(&r->tf, r->meta, &e);
		if (ret < 0) {
			cr_copy(why, cap, e.msg);
			return ret;
		}
	}
	ret = transform_decode(r->tf, coded, b->coded, r->raw, b->raw, &e);
	if (ret < 0) {
		cr_copy(why, cap, e.msg[0] ? e.msg : "bad transform");
		return -EINVAL;
	}
	return 0;
}

/* Check the records of r->raw against the header and fill r->recs. */
static int cr_walk_records(struct creader *r, const struct fmt_block *b,
			   char *why, size_t cap)
{
	size_t off = 0, n = 0;
	uint32_t samples = 0;

	if (b->records > b->raw / 8) {
		snprintf(why, cap, "%" PRIu32 " records cannot fit in %"
			 PRIu32 " bytes", b->records, b->raw);
		return -EINVAL;
	}
	if (r->recs_cap < b->records) {
		struct pipe_record *v = realloc(r->recs,
						b->records * sizeof(*v));

		if (!v) {
			cr_copy(why, cap, strerror(ENOMEM));
			return -ENOMEM;
		}
		r->recs = v;
		r->recs_cap = b->records;
	}
	while (off < b->raw) {
		const struct perf_event_header *h;
		struct pipe_sample_id sid;
		struct pipe_record *rec;

		h = (const struct perf_event_header *)(r->raw + off);
		if (b->raw - off < sizeof(*h) || h->size < sizeof(*h) ||
		    h->size % 8 || h->size > b->raw - off) {
			snprintf(why, cap, "bad record length at byte %zu", off);
			return -EINVAL;
		}
		if (n == b->records) {
			snprintf(why, cap, "more records than the %" PRIu32
				 " of its header", b->records);
			return -EINVAL;
		}
		rec = &r->recs[n++];
		rec->hdr = h;
		rec->stream = b->stream;
		rec->event = PIPE_EVENT_NONE;
		rec->time = 0;
		if (decode_sample_id(r->meta, rec, &sid) == 0) {
			rec->time = sid.time;
			rec->event = sid.event;
		}
		if (h->type == PERF_RECORD_SAMPLE)
			samples++;
		off += h->size;
	}
	if (n != b->records || samples != b->samples) {
		snprintf(why, cap, "%zu records and %" PRIu32
			 " samples, its header says %" PRIu32 " and %" PRIu32,
			 n, samples, b->records, b->samples);
		return -EINVAL;
	}
	return 0;
}

static void cr_count(struct creader *r, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct pipe_record *rec = &r->recs[i];
		const struct perf_event_header *h = rec->hdr;

		if (h->type == PERF_RECORD_SAMPLE)
			r->st.samples++;
		else if (h->type == PERF_RECORD_THROTTLE)
			r->st.throttles++;
		else if (h->type == PERF_RECORD_LOST && h->size >= 24) {
			uint64_t lost;

			memcpy(&lost, (const uint8_t *)h + 16, 8);
			r->st.lost += lost;
		}
		if (rec->time) {
			if (!r->st.t_first || rec->time < r->st.t_first)
				r->st.t_first = rec->time;
			if (rec->time > r->st.t_last)
				r->st.t_last = rec->time;
		}
	}
	r->st.records += nr;
}

static int cr_data_block(struct creader *r, const struct fmt_block *b,
			 const uint8_t *payload, uint64_t off,
			 struct pipe_err *err)
{
	char why[300];
	int ret;

	r->st.blocks++;
	if (fmt_checksum(payload, b->stored, r->salt) != b->payload_sum)
		return cr_block_damaged(r, b, off, "payload checksum mismatch",
					err);
	ret = cr_decode_payload(r, b, payload, why, sizeof(why));
	if (ret == 0)
		ret = cr_walk_records(r, b, why, sizeof(why));
	if (ret == -ENOMEM)
		return pipe_err_set(err, ret, "cannot read '%s': %s",
				    r->opts.name, why);
	if (ret < 0)
		return cr_block_damaged(r, b, off, why, err);
	r->st.blocks_decoded++;
	r->st.raw_bytes += b->raw;
	cr_count(r, b->records);
	if (merge_push(r->merge, r->recs, b->records) < 0)
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				    r->opts.name, strerror(ENOMEM));
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
		ret = cr_header_at(r, at, &b, err);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			*found = at;
			return 0;
		}
	}
}

static int cr_torn(struct creader *r, uint64_t off, const struct fmt_block *b,
		   uint64_t bytes, struct pipe_err *err)
{
	char sname[32];

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
			 cr_secs(r, b->t_min), cr_secs(r, b->t_max),
			 b->records);
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

/* A bad header at r->pos: resync on the next good one, or a torn tail. */
static int cr_bad_header(struct creader *r, struct pipe_err *err)
{
	uint64_t next, left;
	int ret;

	ret = cr_resync(r, r->pos, &next, err);
	if (ret < 0)
		return ret;
	if (next == UINT64_MAX) {
		ret = cr_bytes_left(r, r->pos, &left, err);
		if (ret < 0)
			return ret;
		return cr_torn(r, r->pos, NULL, left, err);
	}
	r->st.blocks_damaged++;
	snprintf(r->line, sizeof(r->line),
		 "damaged block in '%s' at offset %" PRIu64
		 ": %" PRIu64 " bytes skipped: bad block header",
		 r->opts.name, r->pos, next - r->pos);
	r->pos = next;
	return cr_damage(r, err);
}

/* Read the block at r->pos. */
static int cr_step(struct creader *r, struct pipe_err *err)
{
	struct fmt_block b;
	const uint8_t *p;
	uint64_t off = r->pos, total;
	size_t got;
	int ret;

	ret = cr_header_at(r, off, &b, err);
	if (ret < 0)
		return ret;
	if (ret == 3) {
		r->at_end = true;
		r->st.recovered = true;
		return 0;
	}
	if (ret > 0)
		return cr_bad_header(r, err);
	if (b.type == FMT_DATA && !r->have_origin) {
		r->origin = b.t_min;
		r->have_origin = true;
	}
	total = fmt_block_len(&b);
	ret = cr_fetch(r, off, (size_t)total, &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < total)
		return cr_torn(r, off, &b, got, err);
	if (b.horizon > r->horizon)
		r->horizon = b.horizon;
	r->pos = off + total;
	if (fmt_get64(p + total - 16) != total ||
	    fmt_get64(p + total - 8) != r->salt) {
		snprintf(r->line, sizeof(r->line),
			 "damaged block trailer in '%s' at offset %" PRIu64
			 ": its records are kept", r->opts.name,
			 off + total - 16);
		r->st.blocks_damaged++;
		ret = cr_damage(r, err);
		if (ret < 0)
			return ret;
	}
	p += b.hdr_size;
	switch (b.type) {
	case FMT_DATA:
		return cr_data_block(r, &b, p, off, err);
	case FMT_META:
	case FMT_INDEX:
	case FMT_DICT:
	case FMT_LOST:
	case FMT_END:
		if (fmt_checksum(p, b.stored, r->salt) != b.payload_sum) {
			if (b.type == FMT_END)
				r->at_end = true;
			return cr_block_damaged(r, &b, off,
						"payload checksum mismatch",
						err);
		}
		if (b.type == FMT_LOST)
			return cr_lost_block(r, p, b.stored);
		if (b.type == FMT_END) {
			r->at_end = true;
			r->clean_end = true;
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
		merge_pop(r->merge, r->horizon, CR_BATCH, out);
		if (out->nr)
			return 0;
		if (r->at_end) {
			if (r->horizon == UINT64_MAX)
				return PIPE_EOF;
			r->horizon = UINT64_MAX;
			r->st.file_bytes = r->pos;
			continue;
		}
		ret = cr_step(r, err);
		if (ret < 0)
			return ret;
	}
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
	    fmt_get64(p + size - 8) != fmt_checksum(p, size - 8, 0))
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
	const uint8_t *p;
	size_t got;
	int ret;

	ret = cr_header_at(r, off, &b, err);
	if (ret < 0)
		return ret;
	if (ret > 0 || b.type != FMT_META)
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
	if (fmt_checksum(p, b.stored, r->salt) != b.payload_sum)
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
	return 0;
}

int creader_open(struct creader **out, const struct cr_opts *opts,
		 struct pipe_err *err)
{
	struct creader *r;
	uint32_t hdr_size = 0;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s",
				    opts->name, strerror(ENOMEM));
	r->opts = *opts;
	r->eof_at = UINT64_MAX;
	ret = opts->src->byte_size ? opts->src->byte_size(opts->src_state,
							       &r->size)
			      : -ESPIPE;
	if (ret < 0 && ret != -ESPIPE) {
		pipe_err_set(err, ret, "cannot read '%s': %s", opts->name,
			     strerror(-ret));
		goto fail;
	}
	r->seekable = ret == 0;
	if (cr_grow(&r->buf, &r->cap, CR_CHUNK)) {
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
	if (!st->file_bytes)
		st->file_bytes = r->pos;
}

void creader_free(struct creader *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->nr_codecs; i++) {
		if (r->codecs[i].p && r->opts.codec_close)
			r->opts.codec_close(r->opts.opaque, r->codecs[i].p,
					    r->codecs[i].state);
	}
	transform_free(r->tf);
	merge_free(r->merge);
	meta_free(r->meta);
	free(r->buf);
	free(r->coded);
	free(r->raw);
	free(r->recs);
	free(r);
}
