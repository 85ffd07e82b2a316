/*
 * transform.c - the column transform of a block (docs/codecs.md, "The
 * column transform", is the format): samples are split field by field into columns of varints
 * and 64-bit words so the codec sees like next to like; every other record
 * is copied whole into its own column.  Encoding restarts at each block.
 */
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "meta.h"
#include "transform.h"

#define TRANSFORM_VERSION 1
/* The format's limit on any stored or raw length (docs/format.md). */
#define TRANSFORM_LEN_MAX (64u << 20)
/* Largest head: version, record count, a length per column (varints). */
#define TRANSFORM_HEAD_MAX (1 + 10 * (COL_COUNT + 1))
/* Largest callchain a record can hold: its size is a u16. */
#define TRANSFORM_CHAIN_MAX (0xffffu / 8)

/* The sample_type bits whose fields are columns. */
#define TRANSFORM_SAMPLE_BITS                                             \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |      \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |           \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |   \
	 PERF_SAMPLE_CALLCHAIN)

/* Columns, in their order in the encoded block. */
enum transform_col {
	COL_KIND,   /* varint per record: 0 copied whole, else event + 1 */
	COL_MISC,   /* varint per sample: header misc << 1 | ip dropped */
	COL_ID,     /* varint zigzag deltas: IDENTIFIER, ID, STREAM_ID */
	COL_TID,    /* varint zigzag: pid delta, then tid - pid */
	COL_TIME,   /* varint zigzag time delta */
	COL_CPU,    /* varint zigzag cpu delta, then varint reserved */
	COL_PERIOD, /* varint zigzag period delta */
	COL_IP,     /* u64 LE, when not dropped */
	COL_ADDR,   /* u64 LE */
	COL_NR,     /* varint callchain length */
	COL_CHAIN,  /* u64 LE callchain entries */
	COL_OTHER,  /* whole records that are not column-coded */
	COL_COUNT
};

/* A growable byte buffer, at most twice the format's length limit. */
struct tbuf {
	uint8_t *p;  /* owned */
	size_t len;  /* bytes used */
	size_t cap;  /* bytes allocated */
};

/* The previous split sample's values: deltas restart at each block. */
struct tprev {
	uint64_t identifier; /* PERF_SAMPLE_IDENTIFIER */
	uint64_t id;         /* PERF_SAMPLE_ID */
	uint64_t stream_id;  /* PERF_SAMPLE_STREAM_ID */
	uint64_t pid;        /* u32 in records; wider only when corrupt */
	uint64_t time;       /* ns */
	uint64_t cpu;        /* u32 in records; wider only when corrupt */
	uint64_t period;     /* events or ns per sample */
};

struct transform {
	const struct meta *meta;     /* borrowed */
	struct tbuf cols[COL_COUNT]; /* encoder's columns but CHAIN */
	struct tbuf out;             /* encoder's result */
	uint8_t *chain;              /* the CHAIN column, inside out.p at
					its final place: never copied */
	size_t chain_len;            /* its bytes */
};

/* One sample's fields, in record order; absent fields are 0. */
struct tsample {
	uint64_t sample_type;  /* of its event: which fields exist */
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

int transform_new(struct transform **out, const struct meta *meta,
		  struct pipe_err *err)
{
	struct transform *t = calloc(1, sizeof(*t));

	if (!t)
		return pipe_err_set(err, -ENOMEM,
				    "cannot create transform: out of memory");
	t->meta = meta;
	*out = t;
	return 0;
}

void transform_free(struct transform *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < COL_COUNT; i++)
		free(t->cols[i].p);
	free(t->out.p);
	free(t);
}

/* ---- encoding ---------------------------------------------------------- */

static int tbuf_reserve(struct tbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *p;

	if (n > 2 * TRANSFORM_LEN_MAX - b->len)
		return -EINVAL;
	if (b->len + n <= b->cap)
		return 0;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int tbuf_put(struct tbuf *b, const void *src, size_t n)
{
	int ret = tbuf_reserve(b, n);

	if (ret < 0)
		return ret;
	if (n)
		memcpy(b->p + b->len, src, n);
	b->len += n;
	return 0;
}

static int tbuf_varint(struct tbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	return tbuf_put(b, tmp, n);
}

static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (0 - (d >> 63));
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* Little-endian words, unaligned: one load or store each (a byte loop
 * here cost a tenth of the encoder). */
static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

/* Bytes of the fixed fields before the callchain. */
static size_t sample_fixed_size(uint64_t st)
{
	size_t n = 0;

	n += st & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	n += st & PERF_SAMPLE_IP ? 8 : 0;
	n += st & PERF_SAMPLE_TID ? 8 : 0;
	n += st & PERF_SAMPLE_TIME ? 8 : 0;
	n += st & PERF_SAMPLE_ADDR ? 8 : 0;
	n += st & PERF_SAMPLE_ID ? 8 : 0;
	n += st & PERF_SAMPLE_STREAM_ID ? 8 : 0;
	n += st & PERF_SAMPLE_CPU ? 8 : 0;
	n += st & PERF_SAMPLE_PERIOD ? 8 : 0;
	return n;
}

/* Index of the callchain entry the ip may repeat: the first one after
 * a leading context marker (PERF_CONTEXT_USER/KERNEL/...). */
static uint64_t chain_ip_index(const uint8_t *chain, uint64_t nr)
{
	return nr && get_u64(chain) >= PERF_CONTEXT_MAX ? 1 : 0;
}

/* The event whose layout a sample record has, or PIPE_EVENT_NONE. */
static uint32_t sample_event(const struct meta *m, const uint8_t *rec,
			     size_t size)
{
	const struct perf_event_attr *a0;

	if (meta_nr_events(m) == 0)
		return PIPE_EVENT_NONE;
	a0 = meta_attr(m, 0);
	if (!(a0->sample_type & PERF_SAMPLE_IDENTIFIER))
		return 0;
	if (size < 16)
		return PIPE_EVENT_NONE;
	return meta_event_of_id(m, get_u64(rec + 8));
}

/* An event's sample layout, looked up once per run of its samples. */
struct tlayout {
	uint32_t ev;   /* the event, PIPE_EVENT_NONE: not split */
	uint64_t st;   /* its sample_type */
	size_t fixed;  /* bytes of its fixed fields */
};

/* The layout of event ev's samples; ev PIPE_EVENT_NONE in it when they
 * are not split (copied whole). */
static void layout_of(const struct meta *m, uint32_t ev, struct tlayout *l)
{
	const struct perf_event_attr *a = ev == PIPE_EVENT_NONE ? NULL :
					  meta_attr(m, ev);

	l->ev = PIPE_EVENT_NONE;
	l->st = 0;
	l->fixed = 0;
	if (!a || a->sample_type & ~(uint64_t)TRANSFORM_SAMPLE_BITS)
		return;
	/* with IDENTIFIER in event 0, every event must have it first */
	if (ev != 0 && !(a->sample_type & PERF_SAMPLE_IDENTIFIER))
		return;
	l->ev = ev;
	l->st = a->sample_type;
	l->fixed = sample_fixed_size(l->st);
}

/*
 * Parse a sample record of `size` bytes with layout l.  Returns false
 * when the record does not have exactly that layout (it is then copied
 * whole).  Only the fields of l->st are set: encode_sample reads no other.
 */
static bool sample_parse(const struct tlayout *l, const uint8_t *rec,
			 size_t size, struct tsample *s)
{
	const uint8_t *p = rec + 8;
	uint64_t st = l->st;
	size_t fixed = l->fixed;

	if (size < 8 + fixed)
		return false;
	s->sample_type = st;
	s->misc = get_u32(rec + 4) & 0xffff;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		s->identifier = get_u64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_IP) {
		s->ip = get_u64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_TID) {
		s->pid = get_u32(p);
		s->tid = get_u32(p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		s->time = get_u64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ADDR) {
		s->addr = get_u64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		s->id = get_u64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		s->stream_id = get_u64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		s->cpu = get_u32(p);
		s->res = get_u32(p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		s->period = get_u64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (size < 8 + fixed + 8)
			return false;
		s->nr = get_u64(p);
		p += 8;
		if (s->nr != (size - 16 - fixed) / 8 ||
		    (size - 16 - fixed) % 8)
			return false;
		s->chain = p;
		return true;
	}
	return size == 8 + fixed;
}

/*
 * The encoder's writers do no bounds checks of their own: no record adds
 * more than twice its own size to any column (a varint of at most 10
 * bytes per 8-byte field, 5 per header, call chains as they are), so
 * transform_encode makes room for twice the block in each column once.
 */
static void tput_varint(struct tbuf *b, uint64_t v)
{
	uint8_t *p = b->p + b->len;

	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->p);
}

static void tput_delta(struct tbuf *b, uint64_t v, uint64_t *prev)
{
	uint64_t d = v - *prev;

	*prev = v;
	tput_varint(b, zigzag(d));
}

static void tput_u64(struct tbuf *b, uint64_t v)
{
	put_u64(b->p + b->len, v);
	b->len += 8;
}

static void encode_sample(struct transform *t, uint32_t ev,
			  const struct tsample *s, struct tprev *prev)
{
	struct tbuf *c = t->cols;
	uint64_t st = s->sample_type, j;
	bool drop = false;

	if (st & PERF_SAMPLE_IP && st & PERF_SAMPLE_CALLCHAIN) {
		j = chain_ip_index(s->chain, s->nr);
		drop = j < s->nr && get_u64(s->chain + 8 * j) == s->ip;
	}
	tput_varint(&c[COL_KIND], (uint64_t)ev + 1);
	tput_varint(&c[COL_MISC], (uint64_t)s->misc << 1 | drop);
	if (st & PERF_SAMPLE_IDENTIFIER)
		tput_delta(&c[COL_ID], s->identifier, &prev->identifier);
	if (st & PERF_SAMPLE_IP && !drop)
		tput_u64(&c[COL_IP], s->ip);
	if (st & PERF_SAMPLE_TID) {
		tput_delta(&c[COL_TID], s->pid, &prev->pid);
		tput_varint(&c[COL_TID], zigzag((uint64_t)s->tid - s->pid));
	}
	if (st & PERF_SAMPLE_TIME)
		tput_delta(&c[COL_TIME], s->time, &prev->time);
	if (st & PERF_SAMPLE_ADDR)
		tput_u64(&c[COL_ADDR], s->addr);
	if (st & PERF_SAMPLE_ID)
		tput_delta(&c[COL_ID], s->id, &prev->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		tput_delta(&c[COL_ID], s->stream_id, &prev->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		tput_delta(&c[COL_CPU], s->cpu, &prev->cpu);
		tput_varint(&c[COL_CPU], s->res);
	}
	if (st & PERF_SAMPLE_PERIOD)
		tput_delta(&c[COL_PERIOD], s->period, &prev->period);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		tput_varint(&c[COL_NR], s->nr);
		/* the column is u64 LE as the record's words are read: the
		 * same bytes on any host */
		memcpy(t->chain + t->chain_len, s->chain, 8 * s->nr);
		t->chain_len += 8 * s->nr;
	}
}

/*
 * The output buffer of a block of len raw bytes: the CHAIN column, the
 * largest, is written in place at `front`, after room for the head and
 * the columns before it (at most 3 bytes per raw byte: each 8-byte
 * field gives at most 20 in varints, a header at most 8), and before
 * room for OTHER; encode_finish moves only the small columns.
 */
static int encode_start(struct transform *t, size_t len)
{
	size_t front = TRANSFORM_HEAD_MAX + 3 * len + 16;
	size_t need = front + 2 * len + 16;
	uint8_t *p;

	if (need > t->out.cap) {
		p = realloc(t->out.p, need);
		if (!p)
			return -ENOMEM;
		t->out.p = p;
		t->out.cap = need;
	}
	t->chain = t->out.p + front;
	t->chain_len = 0;
	return 0;
}

static size_t head_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Head, the columns before CHAIN moved to end where it starts, OTHER
 * after it; out/out_len the block. */
static int encode_finish(struct transform *t, uint64_t nr_records,
			 const void **out, size_t *out_len)
{
	uint8_t head[TRANSFORM_HEAD_MAX];
	size_t hlen = 0, small = 0, total;
	uint8_t *p;
	int i;

	head[hlen++] = TRANSFORM_VERSION;
	hlen += head_varint(head + hlen, nr_records);
	for (i = 0; i < COL_COUNT; i++)
		hlen += head_varint(head + hlen, i == COL_CHAIN ?
				    t->chain_len : t->cols[i].len);
	for (i = 0; i < COL_CHAIN; i++)
		small += t->cols[i].len;
	assert(hlen + small <= (size_t)(t->chain - t->out.p));
	total = hlen + small + t->chain_len + t->cols[COL_OTHER].len;
	if (total > TRANSFORM_LEN_MAX)
		return -EINVAL;
	p = t->chain - small - hlen;
	*out = p;
	*out_len = total;
	memcpy(p, head, hlen);
	p += hlen;
	for (i = 0; i < COL_CHAIN; i++) {
		if (t->cols[i].len)
			memcpy(p, t->cols[i].p, t->cols[i].len);
		p += t->cols[i].len;
	}
	p += t->chain_len;
	if (t->cols[COL_OTHER].len)
		memcpy(p, t->cols[COL_OTHER].p, t->cols[COL_OTHER].len);
	return 0;
}

int transform_encode(struct transform *t, const void *raw, size_t len,
		     const void **out, size_t *out_len)
{
	const uint8_t *p = raw;
	struct tprev prev;
	struct tsample s = { 0 };
	struct tlayout lay = { PIPE_EVENT_NONE, 0, 0 };
	uint64_t nr_records = 0, nr_samples = 0, last_id = 0;
	size_t off = 0, size;
	uint32_t type, ev;
	bool last_set = false;
	int ret = 0, i;

	if (len > TRANSFORM_LEN_MAX)
		return -EINVAL;
	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < COL_COUNT; i++) {
		t->cols[i].len = 0;
		if (i == COL_CHAIN)
			continue;
		ret = tbuf_reserve(&t->cols[i], 2 * len + 16);
		if (ret < 0)
			return ret;
	}
	ret = encode_start(t, len);
	if (ret < 0)
		return ret;
	while (off < len) {
		if (len - off < 8)
			return -EINVAL;
		type = get_u32(p + off);
		size = get_u32(p + off + 4) >> 16;
		if (size < 8 || size > len - off)
			return -EINVAL;
		ev = PIPE_EVENT_NONE;
		if (type == PERF_RECORD_SAMPLE && size >= 16 &&
		    get_u64(p + off + 8) == last_id && last_set) {
			ev = lay.ev; /* consecutive samples share an event */
		} else if (type == PERF_RECORD_SAMPLE) {
			ev = sample_event(t->meta, p + off, size);
			last_id = size >= 16 ? get_u64(p + off + 8) : 0;
			last_set = size >= 16;
			if (ev != lay.ev)
				layout_of(t->meta, ev, &lay);
			ev = lay.ev;
		}
		if (ev != PIPE_EVENT_NONE &&
		    sample_parse(&lay, p + off, size, &s)) {
			encode_sample(t, ev, &s, &prev);
			nr_samples++;
		} else {
			ret = tbuf_varint(&t->cols[COL_KIND], 0);
			if (!ret)
				ret = tbuf_put(&t->cols[COL_OTHER], p + off,
					       size);
		}
		if (ret < 0)
			return ret;
		off += size;
		nr_records++;
	}
	/* nothing to split: the block is better stored as it is */
	if (!nr_samples)
		return -EINVAL;
	return encode_finish(t, nr_records, out, out_len);
}

/* ---- decoding ---------------------------------------------------------- */

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
