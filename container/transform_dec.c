/*
 * transform_dec.c - the column transform's decoder: a block's columns
 * back into records (transform.c encodes; docs/codecs.md, "The column
 * transform", is the format).
 */
#include "tstate.h"

/* One sample's fields, in record order; absent fields are 0. */
struct tsample {
	uint16_t misc;         /* header misc */
	uint64_t identifier;   /* PERF_SAMPLE_IDENTIFIER */
	uint64_t ip;           /* PERF_SAMPLE_IP */
	uint32_t pid;          /* PERF_SAMPLE_TID, low word */
	uint32_t tid;          /* PERF_SAMPLE_TID, high word */
	uint64_t time;         /* PERF_SAMPLE_TIME, ns */
	uint64_t addr;         /* PERF_SAMPLE_ADDR */
	uint64_t id;           /* PERF_SAMPLE_ID */
	uint64_t stream_id;    /* PERF_SAMPLE_STREAM_ID */
	uint32_t cpu;          /* PERF_SAMPLE_CPU, low word */
	uint32_t res;          /* PERF_SAMPLE_CPU, high word (reserved) */
	uint64_t period;       /* PERF_SAMPLE_PERIOD */
	uint64_t nr;           /* callchain entries */
	const uint8_t *chain;  /* nr u64 words, unaligned, borrowed */
};

/* A bounded reader over one column. */
struct tcol {
	const uint8_t *p;  /* borrowed from the encoded block */
	size_t len;        /* bytes in the column */
	size_t pos;        /* bytes read */
};

/* A varint of more than one byte, or at the column's end. */
static int tcol_varint_long(struct tcol *c, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;

	/* the longest varint fits: no bound to check per byte */
	if (c->len - c->pos >= 10) {
		const uint8_t *p = c->p + c->pos;
		unsigned i;

		for (i = 0; i < 10; i++) {
			b = p[i];
			if (i == 9 && b > 1)
				return -EINVAL;
			x |= (uint64_t)(b & 0x7f) << (7 * i);
			if (!(b & 0x80)) {
				c->pos += i + 1;
				*v = x;
				return 0;
			}
		}
		return -EINVAL;
	}
	do {
		if (c->pos >= c->len || shift > 63)
			return -EINVAL;
		b = c->p[c->pos++];
		if (shift == 63 && b > 1)
			return -EINVAL;
		x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*v = x;
	return 0;
}

/* Most values of a column fit in one byte: that case inline, several
 * times per sample, and the rest out of line. */
static inline int tcol_varint(struct tcol *c, uint64_t *v)
{
	if (c->pos < c->len && c->p[c->pos] < 0x80) {
		*v = c->p[c->pos++];
		return 0;
	}
	return tcol_varint_long(c, v);
}

static inline int tcol_delta(struct tcol *c, uint64_t *prev)
{
	uint64_t z;

	if (tcol_varint(c, &z) < 0)
		return -EINVAL;
	*prev += unzigzag(z);
	return 0;
}

static int tcol_u64(struct tcol *c, uint64_t *v)
{
	if (c->len - c->pos < 8)
		return -EINVAL;
	*v = get_u64(c->p + c->pos);
	c->pos += 8;
	return 0;
}

/* The state of one decode call; `why` says what went wrong. */
struct tdec {
	const struct meta *meta;     /* borrowed */
	struct tcol cols[COL_COUNT]; /* the encoded block, split */
	struct tprev prev;           /* previous sample, for deltas */
	uint8_t *raw;                /* output, borrowed */
	size_t raw_len;              /* output bytes expected */
	size_t pos;                  /* output bytes written */
	const char *why;             /* set on failure */
};

static int dec_fail(struct tdec *d, const char *why)
{
	d->why = why;
	return -EINVAL;
}

static int decode_other(struct tdec *d)
{
	struct tcol *c = &d->cols[COL_OTHER];
	size_t size;

	if (c->len - c->pos < 8)
		return dec_fail(d, "record column ends early");
	size = get_u32(c->p + c->pos + 4) >> 16;
	if (size < 8)
		return dec_fail(d, "record shorter than its header");
	if (size > c->len - c->pos)
		return dec_fail(d, "record column ends early");
	if (size > d->raw_len - d->pos)
		return dec_fail(d, "records longer than the block");
	memcpy(d->raw + d->pos, c->p + c->pos, size);
	c->pos += size;
	d->pos += size;
	return 0;
}

/* Reads the fields of one sample from the columns into s; *drop says
 * the ip is to be taken from the callchain. */
static int decode_fields(struct tdec *d, uint64_t st, struct tsample *s,
			 bool *drop)
{
	struct tcol *c = d->cols;
	uint64_t v, misc;
	struct tprev *pr = &d->prev;

	if (tcol_varint(&c[COL_MISC], &misc) < 0 || misc >> 17)
		return dec_fail(d, "bad misc column");
	s->misc = (uint16_t)(misc >> 1);
	*drop = misc & 1;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		if (tcol_delta(&c[COL_ID], &pr->identifier) < 0)
			return dec_fail(d, "id column ends early");
		s->identifier = pr->identifier;
	}
	if (st & PERF_SAMPLE_IP && !*drop &&
	    tcol_u64(&c[COL_IP], &s->ip) < 0)
		return dec_fail(d, "ip column ends early");
	if (*drop && (!(st & PERF_SAMPLE_IP) ||
		      !(st & PERF_SAMPLE_CALLCHAIN)))
		return dec_fail(d, "ip dropped without a callchain");
	if (st & PERF_SAMPLE_TID) {
		if (tcol_delta(&c[COL_TID], &pr->pid) < 0 ||
		    tcol_varint(&c[COL_TID], &v) < 0)
			return dec_fail(d, "tid column ends early");
		v = pr->pid + unzigzag(v);
		if (pr->pid > UINT32_MAX || v > UINT32_MAX)
			return dec_fail(d, "pid or tid out of range");
		s->pid = (uint32_t)pr->pid;
		s->tid = (uint32_t)v;
	}
	if (st & PERF_SAMPLE_TIME) {
		if (tcol_delta(&c[COL_TIME], &pr->time) < 0)
			return dec_fail(d, "time column ends early");
		s->time = pr->time;
	}
	if (st & PERF_SAMPLE_ADDR && tcol_u64(&c[COL_ADDR], &s->addr) < 0)
		return dec_fail(d, "addr column ends early");
	if (st & PERF_SAMPLE_ID) {
		if (tcol_delta(&c[COL_ID], &pr->id) < 0)
			return dec_fail(d, "id column ends early");
		s->id = pr->id;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		if (tcol_delta(&c[COL_ID], &pr->stream_id) < 0)
			return dec_fail(d, "id column ends early");
		s->stream_id = pr->stream_id;
	}
	if (st & PERF_SAMPLE_CPU) {
		if (tcol_delta(&c[COL_CPU], &pr->cpu) < 0 ||
		    tcol_varint(&c[COL_CPU], &v) < 0)
			return dec_fail(d, "cpu column ends early");
		if (pr->cpu > UINT32_MAX || v > UINT32_MAX)
			return dec_fail(d, "cpu out of range");
		s->cpu = (uint32_t)pr->cpu;
		s->res = (uint32_t)v;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		if (tcol_delta(&c[COL_PERIOD], &pr->period) < 0)
			return dec_fail(d, "period column ends early");
		s->period = pr->period;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (tcol_varint(&c[COL_NR], &s->nr) < 0)
			return dec_fail(d, "callchain nr column ends early");
		if (s->nr > TRANSFORM_CHAIN_MAX)
			return dec_fail(d, "callchain too long");
		if ((c[COL_CHAIN].len - c[COL_CHAIN].pos) / 8 < s->nr)
			return dec_fail(d, "callchain column ends early");
		s->chain = c[COL_CHAIN].p + c[COL_CHAIN].pos;
		c[COL_CHAIN].pos += 8 * s->nr;
	}
	return 0;
}

static void put_field(uint8_t **p, uint64_t v)
{
	put_u64(*p, v);
	*p += 8;
}

static int decode_sample(struct tdec *d, uint64_t kind)
{
	const struct perf_event_attr *a;
	struct tsample s;
	uint64_t st, size, j;
	uint8_t *p;
	bool drop;
	int ret;

	if (kind - 1 >= meta_nr_events(d->meta))
		return dec_fail(d, "sample of an unknown event");
	a = meta_attr(d->meta, (uint32_t)(kind - 1));
	st = a->sample_type;
	if (st & ~(uint64_t)TRANSFORM_SAMPLE_BITS)
		return dec_fail(d, "sample of an event it cannot split");
	/* no memset: decode_fields sets every field of st, the only ones
	 * read below (a small memset is a `rep stos`, a quarter of this
	 * function's time) */
	s.nr = 0;
	ret = decode_fields(d, st, &s, &drop);
	if (ret < 0)
		return ret;
	size = 8 + sample_fixed_size(st);
	if (st & PERF_SAMPLE_CALLCHAIN)
		size += 8 + 8 * s.nr;
	if (size > 0xffff)
		return dec_fail(d, "sample larger than a record can be");
	if (size > d->raw_len - d->pos)
		return dec_fail(d, "records longer than the block");
	if (drop) {
		j = chain_ip_index(s.chain, s.nr);
		if (j >= s.nr)
			return dec_fail(d, "ip dropped without a callchain");
		s.ip = get_u64(s.chain + 8 * j);
	}
	p = d->raw + d->pos;
	put_u32(p, PERF_RECORD_SAMPLE);
	put_u32(p + 4, (uint32_t)s.misc | (uint32_t)size << 16);
	p += 8;
	if (st & PERF_SAMPLE_IDENTIFIER)
		put_field(&p, s.identifier);
	if (st & PERF_SAMPLE_IP)
		put_field(&p, s.ip);
	if (st & PERF_SAMPLE_TID)
		put_field(&p, (uint64_t)s.pid | (uint64_t)s.tid << 32);
	if (st & PERF_SAMPLE_TIME)
		put_field(&p, s.time);
	if (st & PERF_SAMPLE_ADDR)
		put_field(&p, s.addr);
	if (st & PERF_SAMPLE_ID)
		put_field(&p, s.id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put_field(&p, s.stream_id);
	if (st & PERF_SAMPLE_CPU)
		put_field(&p, (uint64_t)s.cpu | (uint64_t)s.res << 32);
	if (st & PERF_SAMPLE_PERIOD)
		put_field(&p, s.period);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		put_field(&p, s.nr);
		memcpy(p, s.chain, 8 * s.nr);
	}
	d->pos += size;
	return 0;
}

/* Reads the block header and splits the columns; *nr_records out. */
static int decode_header(struct tdec *d, const uint8_t *enc, size_t len,
			 uint64_t *nr_records)
{
	struct tcol h = { enc, len, 0 };
	uint64_t col_len[COL_COUNT];
	size_t off;
	int i;

	if (len < 1 || enc[0] != TRANSFORM_VERSION)
		return dec_fail(d, "unknown transform version");
	h.pos = 1;
	if (tcol_varint(&h, nr_records) < 0)
		return dec_fail(d, "truncated header");
	if (*nr_records > d->raw_len / 8)
		return dec_fail(d, "more records than the block can hold");
	for (i = 0; i < COL_COUNT; i++)
		if (tcol_varint(&h, &col_len[i]) < 0)
			return dec_fail(d, "truncated header");
	off = h.pos;
	for (i = 0; i < COL_COUNT; i++) {
		if (col_len[i] > len - off)
			return dec_fail(d, "column longer than the block");
		d->cols[i].p = enc + off;
		d->cols[i].len = (size_t)col_len[i];
		d->cols[i].pos = 0;
		off += (size_t)col_len[i];
	}
	if (off != len)
		return dec_fail(d, "bytes after the last column");
	return 0;
}

int transform_decode(struct transform *t, const void *enc, size_t len,
		     void *raw, size_t raw_len, struct pipe_err *err)
{
	struct tdec d;
	uint64_t nr_records, i, kind;
	int ret, c;

	memset(&d, 0, sizeof(d));
	d.meta = t->meta;
	d.raw = raw;
	d.raw_len = raw_len;
	if (len > TRANSFORM_LEN_MAX || raw_len > TRANSFORM_LEN_MAX) {
		ret = dec_fail(&d, "block too large");
		goto out;
	}
	ret = decode_header(&d, enc, len, &nr_records);
	for (i = 0; !ret && i < nr_records; i++) {
		if (tcol_varint(&d.cols[COL_KIND], &kind) < 0)
			ret = dec_fail(&d, "kind column ends early");
		else if (kind == 0)
			ret = decode_other(&d);
		else
			ret = decode_sample(&d, kind);
	}
	if (ret < 0)
		goto out;
	if (d.pos != raw_len) {
		ret = dec_fail(&d, "records shorter than the block");
		goto out;
	}
	for (c = 0; c < COL_COUNT; c++) {
		if (d.cols[c].pos != d.cols[c].len) {
			ret = dec_fail(&d, "column has bytes left over");
			goto out;
		}
	}
	return 0;
out:
	return pipe_err_set(err, ret, "cannot decode transformed block: %s",
			    d.why ? d.why : "bad input");
}
