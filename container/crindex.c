/*
 * crindex.c - finding blocks without reading them: the INDEX chain walked
 * back from END, or a scan of the block headers when there is none; the
 * plan of a window read and the summary of `pipe info`; reading a block
 * header, and the next good one after damage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "crstate.h"
#include "grow.h"

/* Bytes [off, off + n) of a block header at *p: in place, or copied to
 * `copy` when it is not NULL (*got grows then). */
static int cr_header_bytes(struct creader *r, uint64_t off, size_t n,
			   uint8_t *copy, const uint8_t **p, size_t *got,
			   struct pipe_err *err)
{
	if (!copy)
		return cr_fetch(r, off, n, p, got, err);
	*p = copy;
	return cr_read_copy(r, off, copy, n, got, err);
}

/*
 * Read and check the block header at off: 0 with *what set (*b filled
 * when it is CR_HDR_GOOD), or a negative errno when reading failed.  A
 * mapped file read by a pool, in blocks of CR_TOUCH_MAPS or more, has
 * its headers read with read_at: the first touch of a page maps it and
 * its neighbours (about 0.7 us a page on a tmpfs), and the thread that
 * should map a block's pages is the decoder that checks it.
 */
int cr_header_at(struct creader *r, uint64_t off, struct fmt_block *b,
		 enum cr_hdr *what, struct pipe_err *err)
{
	uint8_t buf[FMT_BLOCK_HDR_MAX];
	uint8_t *copy = r->map && r->pool && r->big_blocks ? buf : NULL;
	const uint8_t *p;
	uint32_t size;
	size_t got = 0;
	int ret;

	ret = cr_header_bytes(r, off, FMT_BLOCK_HDR_SIZE, copy, &p, &got, err);
	if (ret < 0)
		return ret;
	if (got < FMT_BLOCK_HDR_SIZE) {
		*what = got == 0 ? CR_HDR_EOF : CR_HDR_SHORT;
		return 0;
	}
	size = fmt_get16(p + FMT_BH_HDR_SIZE);
	if (fmt_get32(p) == FMT_BLOCK_MAGIC && size > FMT_BLOCK_HDR_SIZE &&
	    size <= FMT_BLOCK_HDR_MAX) {
		ret = cr_header_bytes(r, off, size, copy, &p, &got, err);
		if (ret < 0)
			return ret;
	}
	*what = fmt_block_decode(b, p, got, r->salt) < 0 ? CR_HDR_BAD
							 : CR_HDR_GOOD;
	return 0;
}

static int cr_add_entry(struct creader *r, uint64_t off, uint32_t type,
			uint32_t stream, uint64_t t_min, uint64_t t_max,
			uint32_t records, uint32_t raw)
{
	struct cr_entry *e;
	int ret;

	/* no file holds more blocks than the maximum */
	ret = grow_array(&r->ents, &r->ents_cap, r->nr_ents + 1, sizeof(*e),
			 256, r->size / CR_MIN_BLOCK_LEN + 256);
	if (ret < 0)
		return ret == -E2BIG ? -EINVAL : ret;
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
		if (idx >= limit)
			goto bad;
		ret = grow_array(&chain, &cap, nr_chain + 1, sizeof(*chain), 16,
				 SIZE_MAX);
		if (ret < 0)
			goto bad_ret;
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
		return pipe_err_nomem(err, "cannot read '%s'", r->opts.name);
	return ret < 0 ? ret : 1;
}

/*
 * The blocks of a clean file from its END block and INDEX chain: 0, or 1
 * when there is none or it is damaged (the caller scans instead).
 */
int cr_read_index(struct creader *r, struct pipe_err *err)
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
	uint64_t end = r->size & ~(uint64_t)7, start, at, lo;
	uint64_t budget = r->size;
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
		/* the 8-aligned offsets in [start, end), from the last */
		lo = (start + 7) & ~(uint64_t)7;
		for (at = (end + 7) & ~(uint64_t)7; at > lo;) {
			at -= 8;
			if (at - start + FMT_BLOCK_HDR_SIZE > got)
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
int cr_plan(struct creader *r, struct pipe_err *err)
{
	int ret;

	r->small_reads = true;
	ret = cr_plan_blocks(r, err);
	r->small_reads = false;
	return ret;
}

/* A LOST block the index lists, for the summary: 0, or 1 when it is not
 * a good one. */
static int cr_lost_counts(struct creader *r, uint64_t off, struct cr_stats *st,
			  struct pipe_err *err)
{
	struct fmt_block b;
	const uint8_t *p;
	size_t i;
	int ret;

	ret = cr_small_block(r, off, FMT_LOST, &b, &p, err);
	if (ret != 0)
		return ret;
	st->dropped_blocks++;
	for (i = 0; i + 16 <= b.stored; i += 16)
		st->dropped_lost += fmt_get64(p + i + 8);
	return 0;
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
		if (r->ents[i].type == FMT_LOST) {
			ret = cr_lost_counts(r, r->ents[i].off, st, err);
			if (ret != 0)
				goto out;
		}
		if (r->ents[i].type != FMT_DATA)
			continue;
		blocks++;
		records += r->ents[i].records;
		raw += r->ents[i].raw;
	}
	ret = 1;
	if (blocks != st->blocks || records != st->records ||
	    raw != st->raw_bytes || st->samples > st->records ||
	    st->dropped_lost > st->lost || st->t_first > st->t_last)
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

/* Look for the next good block header after `from`; *found or MAX. */
int cr_resync(struct creader *r, uint64_t from, uint64_t *found,
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
		/* a mapped file: skip to the next magic in place */
		while (r->map && at + FMT_BLOCK_HDR_SIZE <= r->size &&
		       fmt_get32(r->map + at) != FMT_BLOCK_MAGIC)
			at += 8;
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
