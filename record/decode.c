/*
 * decode.c - the sample decoder (see decode.h).  Walks a record's body in
 * the kernel's sample_type order, bounds-checking every field, so that
 * sinks never parse sample_type bits and damaged records never overrun.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "decode.h"
#include "meta.h"
#include "sideband.h"

struct cursor {
	const uint8_t *p;   /* next byte */
	const uint8_t *end; /* one past the record */
	bool bad;           /* a read ran past end */
};

/* 1 when flag f is set in v, else 0: fields are counted by their bits */
static uint64_t has(uint64_t v, uint64_t f)
{
	return (v & f) ? 1 : 0;
}

static uint64_t take64(struct cursor *c)
{
	uint64_t v;

	if (c->end - c->p < 8) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void take32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	uint64_t v = take64(c);

	*a = (uint32_t)v;
	*b = (uint32_t)(v >> 32);
}

static const void *take_bytes(struct cursor *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p += n;
	return p;
}

static void skip_read(struct cursor *c, uint64_t rf)
{
	uint64_t per = 1 + has(rf, PERF_FORMAT_ID) + has(rf, PERF_FORMAT_LOST);
	uint64_t head = has(rf, PERF_FORMAT_TOTAL_TIME_ENABLED) +
			has(rf, PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & PERF_FORMAT_GROUP) {
		uint64_t nr = take64(c);

		if (nr > 4096) {
			c->bad = true;
			return;
		}
		take_bytes(c, (head + nr * per) * 8);
	} else {
		take_bytes(c, (head + per) * 8);
	}
}

static void skip_regs(struct cursor *c, uint64_t mask)
{
	if (take64(c)) /* abi: 0 means no registers follow */
		take_bytes(c, (uint64_t)__builtin_popcountll(mask) * 8);
}

/*
 * The event a record belongs to, by its sample id: IDENTIFIER first in
 * samples and last in the sample_id_all trailer of the others; else ID,
 * after IP, TID, TIME and ADDR in a sample and before STREAM_ID and CPU
 * at the end of the trailer (perf record asks for ID alone when its
 * events share one sample_type).  Every event shares the first one's
 * layout.  The only/first event when there is no id.
 */
static uint32_t record_event(const struct meta *m,
			     const struct perf_event_header *h)
{
	const struct perf_event_attr *a0 = meta_attr(m, 0);
	uint64_t t, id;
	size_t at;

	if (!a0)
		return PIPE_EVENT_NONE;
	t = a0->sample_type;
	if (meta_nr_events(m) == 1 ||
	    !(t & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)))
		return 0;
	if (t & PERF_SAMPLE_IDENTIFIER) {
		at = h->type == PERF_RECORD_SAMPLE ? 8 : (size_t)h->size - 8;
	} else if (h->type == PERF_RECORD_SAMPLE) {
		at = 8 * (1 + (size_t)!!(t & PERF_SAMPLE_IP) +
			  !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
			  !!(t & PERF_SAMPLE_ADDR));
	} else {
		if (!a0->sample_id_all)
			return PIPE_EVENT_NONE;
		at = (size_t)h->size - 8 * (1 + (size_t)!!(t & PERF_SAMPLE_STREAM_ID) +
					     !!(t & PERF_SAMPLE_CPU));
	}
	/* at may have wrapped below 0 for a record shorter than its trailer */
	if (h->size < sizeof(*h) + 8 || at < sizeof(*h) ||
	    at > (size_t)h->size - 8)
		return PIPE_EVENT_NONE;
	memcpy(&id, (const uint8_t *)h + at, 8);
	return meta_event_of_id(m, id);
}

/* The user registers: where they are, or none. */
static void take_regs(struct cursor *c, uint64_t mask,
		      struct decode_stack *u)
{
	u->abi = take64(c);
	if (!u->abi)
		return;
	u->regs_mask = mask;
	u->nr_regs = (uint32_t)__builtin_popcountll(mask);
	u->regs = take_bytes(c, (uint64_t)u->nr_regs * 8);
	if (!u->regs)
		u->abi = 0;
}

static void take_stack(struct cursor *c, const struct perf_event_header *h,
		       struct decode_stack *u)
{
	u->size_at = (uint32_t)(c->p - (const uint8_t *)h);
	u->size = take64(c);
	u->stack = take_bytes(c, u->size);
	if (u->size)
		u->dyn_size = take64(c);
	if (u->dyn_size > u->size)
		c->bad = true;
}

/* The next u64 when sample_type st has field f, else 0. */
static uint64_t take_if(struct cursor *c, uint64_t st, uint64_t f)
{
	return (st & f) ? take64(c) : 0;
}

/* The next two u32 into *a and *b when st has field f, else 0 and 0. */
static void take32x2_if(struct cursor *c, uint64_t st, uint64_t f,
			uint32_t *a, uint32_t *b)
{
	*a = 0;
	*b = 0;
	if (st & f)
		take32x2(c, a, b);
}

/* A rejected record decodes to nothing: only size (and the event when
 * known) are set. */
static int decode_fail(struct pipe_sample *s, struct decode_stack *u,
		       uint32_t event)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->event = event;
	memset(u, 0, sizeof(*u));
	return -EINVAL;
}

/*
 * Every field of *s is written exactly once, present or 0, rather than
 * the whole struct zeroed first: a memset of it per sample was a tenth of
 * a flat report's CPU (a `rep stos` of 170 bytes).
 */
static int decode_body(const struct meta *m, const struct pipe_record *rec,
		       struct pipe_sample *s, struct decode_stack *u)
{
	const struct perf_event_header *h = rec->hdr;
	const struct perf_event_attr *a;
	struct decode_stack none;
	struct cursor c;
	uint64_t st;

	if (!u)
		u = &none;
	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h))
		return decode_fail(s, u, 0);
	s->event = rec->event != PIPE_EVENT_NONE ? rec->event
						 : record_event(m, h);
	a = meta_attr(m, s->event);
	if (!a)
		return decode_fail(s, u, s->event);
	memset(u, 0, sizeof(*u));
	st = a->sample_type;
	s->size = sizeof(*s);
	s->sample_type = st;
	s->misc = h->misc;
	s->reserved = 0;
	c.p = (const uint8_t *)(h + 1);
	c.end = (const uint8_t *)h + h->size;
	c.bad = false;
	s->id = take_if(&c, st, PERF_SAMPLE_IDENTIFIER);
	s->ip = take_if(&c, st, PERF_SAMPLE_IP);
	take32x2_if(&c, st, PERF_SAMPLE_TID, &s->pid, &s->tid);
	s->time = take_if(&c, st, PERF_SAMPLE_TIME);
	s->addr = take_if(&c, st, PERF_SAMPLE_ADDR);
	if (st & PERF_SAMPLE_ID)
		s->id = take64(&c);
	s->stream_id = take_if(&c, st, PERF_SAMPLE_STREAM_ID);
	take32x2_if(&c, st, PERF_SAMPLE_CPU, &s->cpu, &s->cpu_res);
	s->period = take_if(&c, st, PERF_SAMPLE_PERIOD);
	if (st & PERF_SAMPLE_READ)
		skip_read(&c, a->read_format);
	s->callchain = NULL;
	s->nr_callchain = 0;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		s->nr_callchain = take64(&c);
		/* checked before the multiplication can wrap */
		if (s->nr_callchain > (1u << 16))
			c.bad = true;
		else
			s->callchain = take_bytes(&c, s->nr_callchain * 8);
	}
	s->raw = NULL;
	s->raw_size = 0;
	s->reserved2 = 0;
	if (st & PERF_SAMPLE_RAW) {
		uint64_t padded;
		uint32_t sz;

		/* the u32 size and the data are padded to 8 together; in 64
		 * bits, so a size near 4 GiB cannot wrap to a small one */
		if (c.end - c.p < 4) {
			c.bad = true;
		} else {
			memcpy(&sz, c.p, 4);
			s->raw = c.p + 4;
			s->raw_size = sz;
			padded = (4 + (uint64_t)sz + 7) & ~UINT64_C(7);
			take_bytes(&c, padded);
		}
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = take64(&c);

		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			take64(&c);
		if (nr > 4096)
			c.bad = true;
		else
			take_bytes(&c, nr * 24);
	}
	if (st & PERF_SAMPLE_REGS_USER)
		take_regs(&c, a->sample_regs_user, u);
	if (st & PERF_SAMPLE_STACK_USER)
		take_stack(&c, h, u);
	s->weight = take_if(&c, st, PERF_SAMPLE_WEIGHT |
			    PERF_SAMPLE_WEIGHT_STRUCT);
	s->data_src = take_if(&c, st, PERF_SAMPLE_DATA_SRC);
	s->transaction = take_if(&c, st, PERF_SAMPLE_TRANSACTION);
	if (st & PERF_SAMPLE_REGS_INTR)
		skip_regs(&c, a->sample_regs_intr);
	s->phys_addr = take_if(&c, st, PERF_SAMPLE_PHYS_ADDR);
	s->cgroup = take_if(&c, st, PERF_SAMPLE_CGROUP);
	/* fields a later minor of the ABI adds after cgroup (none in this
	 * build but the suite's grown host) */
	memset((char *)&s->cgroup + sizeof(s->cgroup), 0,
	       sizeof(*s) - offsetof(struct pipe_sample, cgroup) -
	       sizeof(s->cgroup));
	if (c.bad) {
		s->callchain = NULL;
		s->nr_callchain = 0;
		s->raw = NULL;
		s->raw_size = 0;
		memset(u, 0, sizeof(*u));
		return -EINVAL;
	}
	return 0;
}

int decode_sample(const struct meta *m, const struct pipe_record *rec,
		  struct pipe_sample *s)
{
	return decode_body(m, rec, s, NULL);
}

int decode_sample_stack(const struct meta *m, const struct pipe_record *rec,
			struct pipe_sample *s, struct decode_stack *u)
{
	return decode_body(m, rec, s, u);
}

/* Bytes of the sample_id_all trailer for sample_type st. */
static uint32_t trailer_size(uint64_t st)
{
	return 8 * (has(st, PERF_SAMPLE_TID) + has(st, PERF_SAMPLE_TIME) +
		    has(st, PERF_SAMPLE_ID) + has(st, PERF_SAMPLE_STREAM_ID) +
		    has(st, PERF_SAMPLE_CPU) + has(st, PERF_SAMPLE_IDENTIFIER));
}

int decode_sample_id(const struct meta *m, const struct pipe_record *rec,
		     struct pipe_sample_id *out)
{
	const struct perf_event_header *h = rec->hdr;
	const struct perf_event_attr *a;
	struct cursor c;
	uint64_t st;
	uint32_t res;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	if (h->type == PERF_RECORD_SAMPLE) {
		struct pipe_sample s;

		if (decode_sample(m, rec, &s) < 0)
			return -EINVAL;
		out->pid = s.pid;
		out->tid = s.tid;
		out->time = s.time;
		out->id = s.id;
		out->cpu = s.cpu;
		out->event = s.event;
		return 0;
	}
	out->event = rec->event != PIPE_EVENT_NONE ? rec->event
						   : record_event(m, h);
	a = meta_attr(m, out->event);
	if (!a || !a->sample_id_all || h->type >= PERF_RECORD_MAX ||
	    h->size < sizeof(*h))
		return -EINVAL;
	st = a->sample_type;
	if (h->size - sizeof(*h) < trailer_size(st))
		return -EINVAL;
	c.p = (const uint8_t *)h + h->size - trailer_size(st);
	c.end = (const uint8_t *)h + h->size;
	c.bad = false;
	take32x2_if(&c, st, PERF_SAMPLE_TID, &out->pid, &out->tid);
	out->time = take_if(&c, st, PERF_SAMPLE_TIME);
	if (st & PERF_SAMPLE_ID)
		out->id = take64(&c);
	if (st & PERF_SAMPLE_STREAM_ID)
		take64(&c);
	take32x2_if(&c, st, PERF_SAMPLE_CPU, &out->cpu, &res);
	if (st & PERF_SAMPLE_IDENTIFIER)
		out->id = take64(&c);
	return c.bad ? -EINVAL : 0;
}

uint32_t decode_time_offset(const struct meta *m, uint32_t event)
{
	const struct perf_event_attr *a = meta_attr(m, event);
	uint64_t st;

	if (!a || !(a->sample_type & PERF_SAMPLE_TIME))
		return 0;
	st = a->sample_type;
	return 8 + 8 * (uint32_t)(has(st, PERF_SAMPLE_IDENTIFIER) +
				  has(st, PERF_SAMPLE_IP) +
				  has(st, PERF_SAMPLE_TID));
}

uint64_t decode_time(const struct meta *m, const struct perf_event_header *h)
{
	struct pipe_record rec = {
		.hdr = h,
		.event = PIPE_EVENT_NONE,
	};
	struct pipe_sample_id id;

	if (h->type == PERF_RECORD_SAMPLE) {
		/* the fast path: time sits at a fixed offset */
		uint32_t off = decode_time_offset(m, record_event(m, h));
		uint64_t t;

		if (!off || h->size < off + 8)
			return 0;
		memcpy(&t, (const uint8_t *)h + off, 8);
		return t;
	}
	if (decode_sample_id(m, &rec, &id) < 0)
		return 0;
	return id.time;
}

/* The host's name of a sideband record's type (decode_sideband's). */
static uint32_t sb_type(uint32_t perf_type)
{
	switch (perf_type) {
	case PERF_RECORD_COMM:
		return PIPE_SB_COMM;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return PIPE_SB_MMAP;
	case PERF_RECORD_FORK:
		return PIPE_SB_FORK;
	case PERF_RECORD_EXIT:
		return PIPE_SB_EXIT;
	case PERF_RECORD_THROTTLE:
		return PIPE_SB_THROTTLE;
	case PERF_RECORD_UNTHROTTLE:
		return PIPE_SB_UNTHROTTLE;
	default:
		return PIPE_SB_LOST;
	}
}

int decode_sideband(const struct pipe_record *rec, struct pipe_sideband *out)
{
	struct sideband sb;
	int ret;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->rec = rec;
	out->time = rec->time;
	ret = sideband_decode(rec->hdr, &sb);
	if (ret == -ENOENT)
		ret = sideband_decode_loss(rec->hdr, &sb);
	if (ret < 0)
		return ret;
	out->type = sb_type(sb.type);
	out->pid = sb.pid;
	out->tid = sb.tid;
	out->ppid = sb.ppid;
	out->ptid = sb.ptid;
	if (sb.type == PERF_RECORD_COMM)
		out->comm = sb.name;
	else
		out->filename = sb.name;
	out->exec = sb.exec;
	out->prot = sb.prot;
	out->addr = sb.start;
	out->len = sb.len;
	out->pgoff = sb.pgoff;
	out->build_id = sb.build_id;
	out->build_id_size = sb.build_id_len;
	out->lost = sb.lost;
	out->id = sb.id;
	if (!out->time)
		out->time = sb.time;
	return 0;
}
