/*
 * transform.c - the column transform of a block (docs/codecs.md, "The
 * column transform", is the format): samples are split field by field
 * into columns of varints and 64-bit words so the codec sees like next to
 * like; every other record is copied whole into its own column.  Encoding
 * restarts at each block.  This file encodes; transform_dec.c decodes.
 */
#include "grow.h"
#include "tstate.h"

/* An event's sample layout, looked up once per run of its samples. */
struct tlayout {
	uint32_t ev;   /* the event, PIPE_EVENT_NONE: not split */
	uint64_t st;   /* its sample_type */
	size_t fixed;  /* bytes of its fixed fields */
};

/* A block being encoded record by record (transform.h). */
struct tenc {
	const struct meta *meta;     /* borrowed */
	struct bytebuf cols[COL_COUNT]; /* the columns but CHAIN, each at
					   most twice the format's length
					   limit; their len is kept in `at`
					   while adding */
	uint8_t *at[COL_COUNT];      /* where each column's next byte goes */
	uint8_t *big;                /* owned: the head and the columns before
					CHAIN (its front), CHAIN, then OTHER:
					the encoded block, CHAIN never moved */
	size_t big_cap;              /* bytes allocated */
	size_t front;                /* CHAIN starts here in big */
	size_t hint;                 /* bytes of records a block probably
					holds: CHAIN and OTHER get room for
					them at once, never regrown */
	size_t chain_len;            /* bytes of CHAIN */
	size_t room;                 /* bytes free in every column, at least */
	struct tprev prev;           /* previous split sample, for deltas */
	struct tlayout lay;          /* layout of the last sample's event */
	uint64_t last_id;            /* the last sample's first word */
	bool last_set;               /* last_id is set */
	uint64_t nr_records;         /* records added */
	uint64_t nr_samples;         /* of which split into columns */
	size_t raw_len;              /* bytes added */
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
	if (!t)
		return;
	tenc_free(t->enc);
	free(t);
}

/* ---- encoding ---------------------------------------------------------- */

/* Most bytes one record adds to any column but CHAIN and OTHER: three
 * 10-byte varints (IDENTIFIER, ID and STREAM_ID into COL_ID). */
#define TENC_SMALL_MAX 32
/* Room before CHAIN for the head and the small columns at first; it
 * grows to what a block needed. */
#define TENC_FRONT 16384

static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (0 - (d >> 63));
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
 * The encoder's writers do no bounds checks of their own: tenc_add makes
 * sure every column has room for what one record can add (TENC_SMALL_MAX
 * bytes, its own size to CHAIN and OTHER) before it splits it.  Each
 * column is written through its cursor in e->at, loaded once and stored
 * once per field: a byte stored through a column's pointer could be its
 * length, as far as the compiler knows, so a length would be loaded
 * again after every byte.
 */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint8_t *put_delta(uint8_t *p, uint64_t v, uint64_t *prev)
{
	uint64_t d = v - *prev;

	*prev = v;
	return put_varint(p, zigzag(d));
}

static inline uint8_t *put_word(uint8_t *p, uint64_t v)
{
	put_u64(p, v);
	return p + 8;
}

/* The sample_type of the perf source's samples with call chains: its
 * split has every field at a constant place. */
#define TENC_ST_PERF                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |      \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |        \
	 PERF_SAMPLE_CALLCHAIN)

/*
 * Split a sample record of `size` bytes with layout l (sample_type st)
 * (fixed bytes before a callchain) into the columns.  Returns false,
 * having written nothing, when the record does not have exactly that
 * layout (it is then copied whole).  Inlined with st a constant for the
 * common layout, so that its field tests fold away.
 */
static inline __attribute__((always_inline)) bool
enc_sample_st(struct tenc *e, const struct tlayout *l, const uint8_t *rec,
	      size_t size, uint64_t st, size_t fixed)
{
	uint8_t **cur = e->at;
	struct tprev *pv = &e->prev;
	const uint8_t *p = rec + 8, *chain = NULL;
	uint64_t nr = 0, ip, j;
	bool drop = false;

	if (size < 8 + fixed)
		return false;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (size < 16 + fixed || (size - 16 - fixed) % 8)
			return false;
		nr = get_u64(rec + 8 + fixed);
		if (nr != (size - 16 - fixed) / 8)
			return false;
		chain = rec + 16 + fixed;
	} else if (size != 8 + fixed) {
		return false;
	}
	cur[COL_KIND] = put_varint(cur[COL_KIND], (uint64_t)l->ev + 1);
	if (st & PERF_SAMPLE_IP && st & PERF_SAMPLE_CALLCHAIN) {
		ip = get_u64(p + (st & PERF_SAMPLE_IDENTIFIER ? 8 : 0));
		j = chain_ip_index(chain, nr);
		drop = j < nr && get_u64(chain + 8 * j) == ip;
	}
	cur[COL_MISC] = put_varint(cur[COL_MISC],
				   (uint64_t)(get_u32(rec + 4) & 0xffff) << 1 |
				   drop);
	if (st & PERF_SAMPLE_IDENTIFIER) {
		cur[COL_ID] = put_delta(cur[COL_ID], get_u64(p),
					&pv->identifier);
		p += 8;
	}
	if (st & PERF_SAMPLE_IP) {
		if (!drop)
			cur[COL_IP] = put_word(cur[COL_IP], get_u64(p));
		p += 8;
	}
	if (st & PERF_SAMPLE_TID) {
		uint32_t pid = get_u32(p), tid = get_u32(p + 4);

		cur[COL_TID] = put_delta(cur[COL_TID], pid, &pv->pid);
		cur[COL_TID] = put_varint(cur[COL_TID],
					  zigzag((uint64_t)tid - pid));
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		cur[COL_TIME] = put_delta(cur[COL_TIME], get_u64(p), &pv->time);
		p += 8;
	}
	if (st & PERF_SAMPLE_ADDR) {
		cur[COL_ADDR] = put_word(cur[COL_ADDR], get_u64(p));
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		cur[COL_ID] = put_delta(cur[COL_ID], get_u64(p), &pv->id);
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		cur[COL_ID] = put_delta(cur[COL_ID], get_u64(p),
					&pv->stream_id);
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		cur[COL_CPU] = put_delta(cur[COL_CPU], get_u32(p), &pv->cpu);
		cur[COL_CPU] = put_varint(cur[COL_CPU], get_u32(p + 4));
		p += 8;
	}
	if (st & PERF_SAMPLE_PERIOD)
		cur[COL_PERIOD] = put_delta(cur[COL_PERIOD], get_u64(p),
					    &pv->period);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		cur[COL_NR] = put_varint(cur[COL_NR], nr);
		/* the column is u64 LE as the record's words are read: the
		 * same bytes on any host */
		memcpy(e->big + e->front + e->chain_len, chain, 8 * nr);
		e->chain_len += 8 * nr;
	}
	return true;
}

static bool enc_sample(struct tenc *e, const struct tlayout *l,
		       const uint8_t *rec, size_t size)
{
	if (l->st == TENC_ST_PERF)
		return enc_sample_st(e, l, rec, size, TENC_ST_PERF,
				     sample_fixed_size(TENC_ST_PERF));
	return enc_sample_st(e, l, rec, size, l->st, l->fixed);
}

int tenc_new(struct tenc **out, const struct meta *meta, size_t hint)
{
	struct tenc *e = calloc(1, sizeof(*e));
	int i;

	if (!e)
		return -ENOMEM;
	e->meta = meta;
	for (i = 0; i < COL_COUNT; i++)
		e->cols[i].max = 2 * TRANSFORM_LEN_MAX;
	e->front = TENC_FRONT;
	/* and one record more, the largest a header can say */
	e->hint = (hint < TRANSFORM_LEN_MAX ? hint : TRANSFORM_LEN_MAX) +
		  65536;
	tenc_reset(e);
	*out = e;
	return 0;
}

void tenc_free(struct tenc *e)
{
	int i;

	if (!e)
		return;
	for (i = 0; i < COL_COUNT; i++)
		free(e->cols[i].p);
	free(e->big);
	free(e);
}

void tenc_reset(struct tenc *e)
{
	int i;

	for (i = 0; i < COL_COUNT; i++) {
		e->cols[i].len = 0;
		e->at[i] = e->cols[i].p;
	}
	e->chain_len = 0;
	e->room = 0;
	memset(&e->prev, 0, sizeof(e->prev));
	e->lay.ev = PIPE_EVENT_NONE;
	e->lay.st = 0;
	e->lay.fixed = 0;
	e->last_id = 0;
	e->last_set = false;
	e->nr_records = 0;
	e->nr_samples = 0;
	e->raw_len = 0;
}

/* Room for `need` more bytes in every column: e->room at least need. */
static int tenc_grow(struct tenc *e, size_t need)
{
	size_t room = SIZE_MAX, used;
	int i, ret;

	for (i = 0; i < COL_COUNT; i++) {
		struct bytebuf *b = &e->cols[i];

		if (i == COL_CHAIN)
			continue;
		b->len = (size_t)(e->at[i] - b->p);
		ret = bytebuf_reserve(b, need);
		if (ret < 0)
			return ret == -E2BIG ? -EINVAL : ret;
		e->at[i] = b->p + b->len;
		if (b->cap - b->len < room)
			room = b->cap - b->len;
	}
	/* CHAIN too: at most twice the limit; big starts with a block's room */
	used = e->front + e->chain_len;
	ret = grow_array(&e->big, &e->big_cap, used + need, 1, used + e->hint,
			 e->front + 2 * TRANSFORM_LEN_MAX);
	if (ret < 0)
		return ret == -E2BIG ? -EINVAL : ret;
	if (e->big_cap - used < room)
		room = e->big_cap - used;
	e->room = room;
	return 0;
}

int tenc_add(struct tenc *e, const void *rec, size_t size)
{
	const uint8_t *p = rec;
	uint32_t ev = PIPE_EVENT_NONE;
	uint64_t id;
	int ret;

	if (size < 8 || size > TRANSFORM_LEN_MAX - e->raw_len)
		return -EINVAL;
	if (e->room < size + TENC_SMALL_MAX) {
		ret = tenc_grow(e, size + TENC_SMALL_MAX);
		if (ret < 0)
			return ret;
	}
	e->room -= size + TENC_SMALL_MAX;
	e->raw_len += size;
	e->nr_records++;
	if (get_u32(p) == PERF_RECORD_SAMPLE) {
		id = size >= 16 ? get_u64(p + 8) : 0;
		/* consecutive samples mostly share an event */
		if (!e->last_set || id != e->last_id || size < 16) {
			ev = sample_event(e->meta, p, size);
			e->last_id = id;
			e->last_set = size >= 16;
			if (ev != e->lay.ev)
				layout_of(e->meta, ev, &e->lay);
		}
		ev = e->lay.ev;
	}
	if (ev != PIPE_EVENT_NONE && enc_sample(e, &e->lay, p, size)) {
		e->nr_samples++;
		return 0;
	}
	*e->at[COL_KIND]++ = 0;
	memcpy(e->at[COL_OTHER], p, size);
	e->at[COL_OTHER] += size;
	return 0;
}

uint64_t tenc_records(const struct tenc *e)
{
	return e->nr_records;
}

size_t tenc_raw_len(const struct tenc *e)
{
	return e->raw_len;
}

void tenc_other(const struct tenc *e, const void **out, size_t *len)
{
	*out = e->cols[COL_OTHER].p;
	*len = (size_t)(e->at[COL_OTHER] - e->cols[COL_OTHER].p);
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

/* big with room for `front` bytes before CHAIN and n after it. */
static int tenc_big(struct tenc *e, size_t front, size_t n)
{
	size_t need = front + e->chain_len + n, cap;
	uint8_t *p;

	if (need > e->big_cap) {
		cap = front + e->hint > need ? front + e->hint : need;
		p = realloc(e->big, cap);
		if (!p)
			return -ENOMEM;
		e->big = p;
		e->big_cap = cap;
	}
	if (front != e->front) {
		memmove(e->big + front, e->big + e->front, e->chain_len);
		e->front = front;
		e->room = 0; /* measured again at the next add */
	}
	return 0;
}

/* The head, the columns before CHAIN copied to end where it starts,
 * OTHER after it. */
int tenc_finish(struct tenc *e, const void **out, size_t *out_len)
{
	uint8_t head[TRANSFORM_HEAD_MAX];
	size_t hlen = 0, small = 0, total, other;
	uint8_t *p;
	int i, ret;

	/* nothing to split: the block is better stored as it is */
	if (!e->nr_samples)
		return -EINVAL;
	for (i = 0; i < COL_COUNT; i++)
		e->cols[i].len = (size_t)(e->at[i] - e->cols[i].p);
	other = e->cols[COL_OTHER].len;
	head[hlen++] = TRANSFORM_VERSION;
	hlen += head_varint(head + hlen, e->nr_records);
	for (i = 0; i < COL_COUNT; i++)
		hlen += head_varint(head + hlen, i == COL_CHAIN ?
				    e->chain_len : e->cols[i].len);
	for (i = 0; i < COL_CHAIN; i++)
		small += e->cols[i].len;
	total = hlen + small + e->chain_len + other;
	if (total > TRANSFORM_LEN_MAX)
		return -E2BIG;
	/* a front too small moves CHAIN once, and the next blocks get more */
	ret = tenc_big(e, hlen + small > e->front ?
			  (hlen + small) + (hlen + small) / 4 : e->front,
		       other);
	if (ret < 0)
		return ret;
	p = e->big + e->front - small - hlen;
	*out = p;
	*out_len = total;
	memcpy(p, head, hlen);
	p += hlen;
	for (i = 0; i < COL_CHAIN; i++) {
		if (e->cols[i].len)
			memcpy(p, e->cols[i].p, e->cols[i].len);
		p += e->cols[i].len;
	}
	p += e->chain_len;
	if (other)
		memcpy(p, e->cols[COL_OTHER].p, other);
	return 0;
}

int transform_encode(struct transform *t, const void *raw, size_t len,
		     const void **out, size_t *out_len)
{
	const uint8_t *p = raw;
	size_t off = 0, size;
	int ret;

	if (len > TRANSFORM_LEN_MAX)
		return -EINVAL;
	if (!t->enc) {
		ret = tenc_new(&t->enc, t->meta, len);
		if (ret < 0)
			return ret;
	}
	tenc_reset(t->enc);
	while (off < len) {
		if (len - off < 8)
			return -EINVAL;
		size = get_u32(p + off + 4) >> 16;
		if (size < 8 || size > len - off)
			return -EINVAL;
		ret = tenc_add(t->enc, p + off, size);
		if (ret < 0)
			return ret;
		off += size;
	}
	ret = tenc_finish(t->enc, out, out_len);
	return ret == -E2BIG ? -EINVAL : ret;
}
