/*
 * cwriter.c - the container writer: splits records by stream and cuts
 * each stream into blocks on the caller's thread; an encoder (a worker
 * thread with opts.async, else inline) transforms, compresses, checksums
 * and writes them in order, with index blocks and the END block.
 * Append-only: bytes once handed to opts->write are never rewritten.
 * Layout: docs/format.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cwstate.h"
#include "decode.h"
#include "grow.h"
#include "transform.h"

/* The oldest time a record still to be written can have. */
static uint64_t cw_horizon(const struct cwriter *w)
{
	uint64_t h = w->last_time < w->horizon_cap ? w->last_time
						   : w->horizon_cap;
	uint32_t i;

	for (i = 0; i < w->nr_by_id; i++) {
		const struct cw_stream *s = w->by_id[i];

		if (s && s->len && s->t_min < h)
			h = s->t_min;
	}
	if (w->side && w->side->len && w->side->t_min < h)
		h = w->side->t_min;
	if (w->nr_held && w->held[0].time < h)
		h = w->held[0].time;
	return h;
}

static int cw_flush_stream(struct cwriter *w, struct cw_stream *s,
			   struct pipe_err *err)
{
	struct cw_job *j;
	struct tenc *enc;
	uint8_t *buf;
	size_t cap;

	if (!s->len)
		return 0;
	j = cw_job_get(w);
	enc = NULL;
	if (j && s->enc && cw_tenc_get(w, &enc) < 0) {
		cw_job_free(j);
		j = NULL;
	}
	if (!j)
		return pipe_err_set(err, -ENOMEM, "cannot write block: %s",
				    strerror(ENOMEM));
	/* the records move to the job; the stream takes a spare encoder
	 * (the job gives its own back once its block is encoded), or the
	 * job's old buffers */
	if (s->enc) {
		tenc_free(j->enc);
		j->enc = s->enc;
		s->enc = enc;
	} else {
		buf = j->buf;
		cap = j->cap;
		j->buf = s->buf;
		j->cap = s->cap;
		s->buf = buf;
		s->cap = cap;
	}
	j->len = s->len;
	j->kind = CW_JOB_DATA;
	j->b.type = FMT_DATA;
	j->b.stream = s->id;
	j->b.records = s->records;
	j->b.samples = s->samples;
	j->b.t_min = s->t_min;
	j->b.t_max = s->t_max;
	j->queued_at = s->pending_since;
	/* this stream's records leave the pending set before the horizon */
	s->len = 0;
	s->records = 0;
	s->samples = 0;
	s->pending_since = 0;
	j->b.horizon = cw_horizon(w);
	return cw_queue(w, j, err);
}

static int cw_stream_of(struct cwriter *w, uint32_t id, struct cw_stream **out,
			struct pipe_err *err)
{
	struct cw_stream *s = NULL;

	if (id == PIPE_STREAM_SIDEBAND && w->side) {
		*out = w->side;
		return 0;
	}
	if (id != PIPE_STREAM_SIDEBAND && id < w->nr_by_id && w->by_id[id]) {
		*out = w->by_id[id];
		return 0;
	}
	/* readers take a block of any other stream for damage */
	if (id != PIPE_STREAM_SIDEBAND && id >= w->nr_streams)
		return pipe_err_set(err, -EINVAL,
				    "cannot write record of stream %u: the metadata has %u streams",
				    id, w->nr_streams);
	if (id != PIPE_STREAM_SIDEBAND && id >= w->nr_by_id) {
		struct cw_stream **v = realloc(w->by_id, (id + 1) * sizeof(*v));

		if (!v)
			return pipe_err_set(err, -ENOMEM,
					    "cannot add stream: %s",
					    strerror(ENOMEM));
		memset(v + w->nr_by_id, 0, (id + 1 - w->nr_by_id) * sizeof(*v));
		w->by_id = v;
		w->nr_by_id = id + 1;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return pipe_err_set(err, -ENOMEM, "cannot add stream: %s",
				    strerror(ENOMEM));
	s->id = id;
	if (w->cols && cw_tenc_get(w, &s->enc) < 0) {
		free(s);
		return pipe_err_set(err, -ENOMEM, "cannot add stream: %s",
				    strerror(ENOMEM));
	}
	if (id == PIPE_STREAM_SIDEBAND)
		w->side = s;
	else
		w->by_id[id] = s;
	*out = s;
	return 0;
}

/*
 * Cut a sample's user stack dump to what the kernel copied: the rest of
 * the `size` bytes it reserves is stale ring memory.  The record at rec
 * (a copy the writer owns) shrinks in place; returns its new size.
 */
static uint16_t cw_trim_stack(const struct cwriter *w,
			      const struct pipe_record *r, uint8_t *rec)
{
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct pipe_record copy = *r;
	struct decode_stack u;
	struct pipe_sample smp;
	uint64_t keep, tail_at, end;

	copy.hdr = h;
	if (decode_sample_stack(w->meta, &copy, &smp, &u) < 0 || !u.stack)
		return h->size;
	keep = (u.dyn_size + 7) & ~UINT64_C(7);
	if (keep >= u.size)
		return h->size;
	/* size, dump, dyn_size, then the fields after the stack */
	tail_at = u.size_at + 8 + u.size + 8;
	end = h->size;
	memcpy(rec + u.size_at, &keep, 8);
	if (keep) {
		memmove(rec + u.size_at + 8 + keep, rec + u.size_at + 8 + u.size,
			end - (u.size_at + 8 + u.size));
	} else {
		/* an empty dump has no dyn_size */
		memmove(rec + u.size_at + 8, rec + tail_at, end - tail_at);
	}
	h->size = (uint16_t)(end - (u.size - keep) - (keep ? 0 : 8));
	return h->size;
}

/* Count a record of `size` bytes (its header h) as appended to s: the
 * block's and the file's time ranges, the writer's counts. */
static void cw_count(struct cwriter *w, struct cw_stream *s,
		     const struct perf_event_header *h, uint64_t time,
		     uint16_t size)
{
	if (!s->len) {
		s->t_min = time;
		s->t_max = time;
		s->pending_since = w->arrival_ns;
	}
	if (time < s->t_min)
		s->t_min = time;
	if (time > s->t_max)
		s->t_max = time;
	s->len += size;
	s->records++;
	if (h->type == PERF_RECORD_SAMPLE) {
		s->samples++;
		w->st.samples++;
	} else if (h->type == PERF_RECORD_LOST && h->size >= 24) {
		uint64_t n;

		memcpy(&n, (const uint8_t *)h + 16, 8);
		w->lost += n;
	} else if (h->type == PERF_RECORD_THROTTLE) {
		w->throttles++;
	}
	if (time > w->last_time)
		w->last_time = time;
	/* records without a time (0) do not move the file's time range */
	if (time && (!w->have_time || time < w->t_first))
		w->t_first = time;
	if (time > w->t_last)
		w->t_last = time;
	if (time)
		w->have_time = true;
	w->st.records++;
	w->st.raw_bytes += size;
}

/* Make room for `need` more bytes in s's block, whole blocks at a time:
 * no regrowing while it fills. */
static int cw_room(struct cwriter *w, struct cw_stream *s, size_t need,
		   struct pipe_err *err)
{
	if (grow_array(&s->buf, &s->cap, s->len + need, 1,
		       w->opts.block_size, SIZE_MAX))
		return pipe_err_set(err, -ENOMEM, "cannot buffer records: %s",
				    strerror(ENOMEM));
	return 0;
}

/* Append one checked record to stream s's block, cutting it first when
 * the record would not fit. */
static int cw_append_to(struct cwriter *w, struct cw_stream *s,
			const struct pipe_record *r, struct pipe_err *err)
{
	const struct perf_event_header *h = r->hdr;
	uint16_t size;
	int ret;

	if (s->len && s->len + h->size > w->opts.block_size) {
		ret = cw_flush_stream(w, s, err);
		if (ret < 0)
			return ret;
	}
	if (s->enc) {
		/* split into columns straight from where the record is */
		ret = tenc_add(s->enc, h, h->size);
		if (ret < 0)
			return pipe_err_set(err, ret,
					    "cannot buffer records: %s",
					    strerror(-ret));
		cw_count(w, s, h, r->time, h->size);
		return 0;
	}
	ret = cw_room(w, s, h->size, err);
	if (ret < 0)
		return ret;
	memcpy(s->buf + s->len, h, h->size);
	size = h->size;
	if (w->stacks && h->type == PERF_RECORD_SAMPLE)
		size = cw_trim_stack(w, r, s->buf + s->len);
	cw_count(w, s, h, r->time, size);
	return 0;
}

/* Append one checked record to its stream's block. */
static int cw_append(struct cwriter *w, const struct pipe_record *r,
		     struct pipe_err *err)
{
	struct cw_stream *s = NULL;
	int ret;

	ret = cw_stream_of(w, r->stream, &s, err);
	if (ret < 0)
		return ret;
	return cw_append_to(w, s, r, err);
}

/* Move held records older than `before` (all: UINT64_MAX) to the
 * sideband's block, oldest first. */
static int cw_release_held(struct cwriter *w, uint64_t before,
			   struct pipe_err *err)
{
	uint32_t n = 0, i;
	size_t off = 0, tmp_cap;
	uint8_t *tmp;
	int ret = 0;

	while (n < w->nr_held && (w->held[n].time < before ||
				  before == UINT64_MAX)) {
		const struct cw_held *e = &w->held[n];
		struct pipe_record r = {
			.hdr = (const void *)(w->hold + e->off),
			.time = e->time,
			.stream = PIPE_STREAM_SIDEBAND,
			.event = PIPE_EVENT_NONE,
		};

		ret = cw_append(w, &r, err);
		if (ret < 0)
			return ret;
		n++;
	}
	if (!n)
		return 0;
	/* the rest, compacted into the other buffer, which becomes hold */
	if (grow_array(&w->hold2, &w->hold2_cap, w->hold_len, 1, 4096, SIZE_MAX))
		return pipe_err_set(err, -ENOMEM, "cannot buffer records: %s",
				    strerror(ENOMEM));
	for (i = n; i < w->nr_held; i++) {
		struct cw_held *e = &w->held[i];

		memcpy(w->hold2 + off, w->hold + e->off, e->size);
		e->off = off;
		off += e->size;
		w->held[i - n] = *e;
	}
	tmp = w->hold;
	w->hold = w->hold2;
	w->hold2 = tmp;
	tmp_cap = w->hold_cap;
	w->hold_cap = w->hold2_cap;
	w->hold2_cap = tmp_cap;
	w->nr_held -= n;
	w->hold_len = off;
	return 0;
}

/*
 * The sideband gathers records from every CPU, so when records come per
 * stream its records come out of order: hold them, sorted by time, until
 * the caller's horizon passes them.
 */
static int cw_hold(struct cwriter *w, const struct pipe_record *r,
		   struct pipe_err *err)
{
	uint32_t size = r->hdr->size, i;

	if (grow_array(&w->hold, &w->hold_cap, w->hold_len + size, 1,
		       4096, SIZE_MAX) ||
	    grow_array(&w->held, &w->held_cap,
		       (w->nr_held + 1) * sizeof(*w->held), 1, 1024,
		       SIZE_MAX))
		return pipe_err_set(err, -ENOMEM, "cannot buffer records: %s",
				    strerror(ENOMEM));
	memcpy(w->hold + w->hold_len, r->hdr, size);
	/* mostly in order already: insert from the end, after equal times */
	for (i = w->nr_held; i > 0 && w->held[i - 1].time > r->time; i--)
		w->held[i] = w->held[i - 1];
	w->held[i].time = r->time;
	w->held[i].off = w->hold_len;
	w->held[i].size = size;
	w->nr_held++;
	w->hold_len += size;
	if (w->hold_len > CW_HOLD_MAX) /* a caller that never raises the cap */
		return cw_release_held(w, UINT64_MAX, err);
	return 0;
}

static int cw_add_one(struct cwriter *w, const struct pipe_record *r,
		      struct pipe_err *err)
{
	const struct perf_event_header *h = r->hdr;

	if (h->size < sizeof(*h) || h->size % 8)
		return pipe_err_set(err, -EINVAL,
				    "cannot write record of type %u: size %u is not a multiple of 8",
				    h->type, h->size);
	if (r->stream == PIPE_STREAM_SIDEBAND &&
	    w->horizon_cap != UINT64_MAX)
		return cw_hold(w, r, err);
	return cw_append(w, r, err);
}

/*
 * A stream whose oldest pending record lags the newest record by more than
 * the flush interval (in record time) is written out: the horizon, and so
 * a reader's memory, never lags more than that behind.
 */
static int cw_flush_lagging(struct cwriter *w, struct pipe_err *err)
{
	uint64_t lag = w->opts.flush_ns ? w->opts.flush_ns : CW_LAG_DEFAULT;
	uint32_t i;
	int ret;

	if (w->last_time < lag)
		return 0;
	for (i = 0; i <= w->nr_by_id; i++) {
		struct cw_stream *s = i < w->nr_by_id ? w->by_id[i] : w->side;

		if (!s || !s->len || s->t_min >= w->last_time - lag)
			continue;
		ret = cw_flush_stream(w, s, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Bytes counted into stream s's block but not copied there yet: records
 * that lie back to back in memory (views into a ring that does not wrap
 * between them) go in with one copy per run rather than one per record.
 */
struct cw_pend {
	struct cw_stream *s;    /* the stream of the run, NULL: none yet */
	const uint8_t *src;     /* the run's first record */
	size_t len;             /* its bytes, the last len of s's block */
};

static void cw_pend_copy(struct cw_pend *p)
{
	if (p->len)
		memcpy(p->s->buf + p->s->len - p->len, p->src, p->len);
	p->len = 0;
}

/* Add one record of a CPU stream, checked, to the run in p. */
static int cw_add_run(struct cwriter *w, const struct pipe_record *r,
		      struct cw_pend *p, struct pipe_err *err)
{
	const struct perf_event_header *h = r->hdr;
	struct cw_stream *s = p->s;
	int ret;

	if (!s || s->id != r->stream) {
		cw_pend_copy(p);
		ret = cw_stream_of(w, r->stream, &s, err);
		if (ret < 0)
			return ret;
		p->s = s;
	}
	if (p->len && (const uint8_t *)h != p->src + p->len)
		cw_pend_copy(p);
	if (s->len && s->len + h->size > w->opts.block_size) {
		cw_pend_copy(p);
		ret = cw_flush_stream(w, s, err);
		if (ret < 0)
			return ret;
	}
	if (s->len + h->size > s->cap) {
		cw_pend_copy(p);
		ret = cw_room(w, s, h->size, err);
		if (ret < 0)
			return ret;
	}
	if (!p->len)
		p->src = (const uint8_t *)h;
	cw_count(w, s, h, r->time, h->size);
	p->len += h->size;
	return 0;
}

/*
 * Split a batch into its streams' columns: what cw_add_one does for each
 * record, with the stream of the last record at hand (a batch is one
 * ring's records, mostly of one stream).
 */
static int cw_add_cols(struct cwriter *w, const struct pipe_batch *b,
		       struct pipe_err *err)
{
	struct cw_stream *s = NULL;
	size_t i;
	int ret;

	for (i = 0; i < b->nr; i++) {
		const struct pipe_record *r = &b->recs[i];
		const struct perf_event_header *h = r->hdr;

		if (r->stream == PIPE_STREAM_SIDEBAND ||
		    h->size < sizeof(*h) || h->size % 8) {
			ret = cw_add_one(w, r, err);
			if (ret < 0)
				return ret;
			continue;
		}
		if (!s || s->id != r->stream) {
			ret = cw_stream_of(w, r->stream, &s, err);
			if (ret < 0)
				return ret;
		}
		ret = cw_append_to(w, s, r, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int cwriter_add(struct cwriter *w, const struct pipe_batch *b,
		struct pipe_err *err)
{
	struct cw_pend pend = { NULL, NULL, 0 };
	size_t i;
	int ret = 0;

	if (w->finished)
		return pipe_err_set(err, -EINVAL,
				    "cannot add records: the file is finished");
	if (w->cols) {
		ret = cw_add_cols(w, b, err);
		if (ret < 0)
			return ret;
		return cw_flush_lagging(w, err);
	}
	for (i = 0; i < b->nr && ret == 0; i++) {
		const struct pipe_record *r = &b->recs[i];
		const struct perf_event_header *h = r->hdr;

		/* stack dumps are cut record by record; cw_add_one holds
		 * the sideband and refuses bad sizes */
		if (w->stacks || r->stream == PIPE_STREAM_SIDEBAND ||
		    h->size < sizeof(*h) || h->size % 8) {
			cw_pend_copy(&pend);
			ret = cw_add_one(w, r, err);
		} else {
			ret = cw_add_run(w, r, &pend, err);
		}
	}
	cw_pend_copy(&pend);
	if (ret < 0)
		return ret;
	return cw_flush_lagging(w, err);
}

int cwriter_cap_horizon(struct cwriter *w, uint64_t cap,
			struct pipe_err *err)
{
	w->horizon_cap = cap;
	return cw_release_held(w, cap, err);
}

void cwriter_set_arrival(struct cwriter *w, uint64_t mono_ns)
{
	w->arrival_ns = mono_ns;
}

uint64_t cwriter_next_tick(struct cwriter *w)
{
	uint64_t next = UINT64_MAX;
	uint32_t i;

	if (w->thread_on) {
		pthread_mutex_lock(&w->mu);
		next = cw_kick_due_locked(w);
		pthread_mutex_unlock(&w->mu);
	}
	for (i = 0; i <= w->nr_by_id; i++) {
		const struct cw_stream *s = i < w->nr_by_id ? w->by_id[i]
							    : w->side;

		if (!s || !s->len)
			continue;
		if (!s->pending_since)
			return 0; /* not seen by a tick yet */
		if (s->pending_since + w->opts.flush_ns < next)
			next = s->pending_since + w->opts.flush_ns;
	}
	return next;
}

int cwriter_tick(struct cwriter *w, uint64_t now_ns, uint64_t early_ns,
		 struct pipe_err *err)
{
	bool due = false;
	uint32_t i;
	int ret;

	if (w->finished)
		return 0;
	for (i = 0; i <= w->nr_by_id; i++) {
		struct cw_stream *s = i < w->nr_by_id ? w->by_id[i] : w->side;

		if (!s || !s->len)
			continue;
		if (!s->pending_since)
			s->pending_since = now_ns ? now_ns : 1;
		if (now_ns + early_ns - s->pending_since >= w->opts.flush_ns ||
		    now_ns < s->pending_since)
			due = true;
	}
	if (w->thread_on) {
		pthread_mutex_lock(&w->mu);
		if (cw_kick_due_locked(w) <= now_ns + early_ns)
			due = true;
		pthread_mutex_unlock(&w->mu);
	}
	if (!due)
		return 0;
	/* one deadline writes out every pending stream, and the worker is
	 * woken once for all of them: the streams' deadlines stay together,
	 * one write batch per flush interval rather than one per stream */
	for (i = 0; i <= w->nr_by_id; i++) {
		struct cw_stream *s = i < w->nr_by_id ? w->by_id[i] : w->side;

		if (!s || !s->len)
			continue;
		ret = cw_flush_stream(w, s, err);
		if (ret < 0)
			return ret;
	}
	if (w->thread_on) {
		pthread_mutex_lock(&w->mu);
		w->kick = w->head != NULL;
		pthread_mutex_unlock(&w->mu);
	}
	return 0;
}

/* Write every pending block, oldest first (keeps the horizons
 * meaningful). */
static int cw_flush_all(struct cwriter *w, struct pipe_err *err)
{
	uint32_t i;
	int ret;

	ret = cw_release_held(w, UINT64_MAX, err);
	if (ret < 0)
		return ret;
	w->horizon_cap = UINT64_MAX;
	for (;;) {
		struct cw_stream *best = NULL;

		for (i = 0; i <= w->nr_by_id; i++) {
			struct cw_stream *s = i < w->nr_by_id ? w->by_id[i]
							      : w->side;

			if (s && s->len && (!best || s->t_min < best->t_min))
				best = s;
		}
		if (!best)
			break;
		ret = cw_flush_stream(w, best, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int cwriter_finish(struct cwriter *w, struct pipe_err *err)
{
	int ret;

	if (w->finished)
		return 0;
	ret = cw_flush_all(w, err);
	if (ret == 0)
		ret = cw_queue_end(w, err);
	if (ret == 0)
		ret = cw_stop_worker(w, err);
	if (ret < 0)
		return ret;
	w->finished = true;
	return 0;
}

int cwriter_cut(struct cwriter *w, struct pipe_err *err)
{
	struct pipe_err e2;
	int ret, ret2;

	if (w->finished)
		return 0;
	ret = cw_flush_all(w, err);
	ret2 = cw_stop_worker(w, ret < 0 ? &e2 : err);
	w->finished = true;
	return ret < 0 ? ret : ret2;
}

int cwriter_flush_output(struct cwriter *w, struct pipe_err *err)
{
	if (!w->opts.flush)
		return 0;
	if (!w->thread_on)
		return w->opts.flush(w->opts.opaque, err);
	pthread_mutex_lock(&w->mu);
	w->flush_req = true;
	w->woken = true;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/*
 * Whether the caller may encode a block before it sleeps: the rings fill
 * meanwhile, so only while the last block it encoded took little wall
 * time, or little against the time between its sleeps (a high sample
 * rate wakes it often; a loaded machine stretches an encode).  Refused,
 * that time decays, and a block is tried again a few sleeps later.
 */
static bool cw_inline_fits(struct cwriter *w)
{
	if (w->inline_wall < CW_INLINE_SHORT_NS ||
	    w->inline_wall <= w->idle_gap / 8)
		return true;
	w->inline_wall -= w->inline_wall / 8;
	return false;
}

void cwriter_idle(struct cwriter *w, uint64_t now_ns)
{
	bool wake = false;
	uint64_t t0, t;

	if (!w->thread_on)
		return;
	t0 = cw_clock(CLOCK_MONOTONIC);
	if (w->idle_at && t0 > w->idle_at)
		w->idle_gap = w->idle_gap ?
			      (3 * w->idle_gap + (t0 - w->idle_at)) / 4 :
			      t0 - w->idle_at;
	w->idle_at = t0;
	pthread_mutex_lock(&w->mu);
	/* encode only, never write: a write may wait (a slow disk, a full
	 * pipe), and this thread drains the rings.  A training takes
	 * seconds: it stays on the worker, as does the queue once the
	 * worker was woken for it (it would only wait for this thread) */
	while (!w->running && !w->woken && !w->enc_ret &&
	       w->opts.dict_mode == CW_DICT_OFF &&
	       w->job_ns < w->opts.inline_ns &&
	       (t = cw_clock(CLOCK_MONOTONIC)) - t0 < w->opts.inline_ns &&
	       cw_inline_fits(w) && cw_encode_one_locked(w))
		w->inline_wall = cw_clock(CLOCK_MONOTONIC) - t;
	if (!w->head)
		w->asleep_ok = false;
	/* the worker wakes for a deadline cwriter_tick found (or one
	 * already past), or for a backlog */
	if ((w->head && !w->running &&
	     (w->queued >= CW_KICK_BYTES || w->kick ||
	      cw_kick_due_locked(w) <= now_ns)) ||
	    w->flush_req) {
		wake = !w->woken;
		w->woken = true;
		w->st.worker_wakes += wake;
		w->asleep_ok = false;
		w->kick = false;
	}
	pthread_mutex_unlock(&w->mu);
	/* after the unlock: the worker does not wake into a held lock */
	if (wake)
		pthread_cond_signal(&w->work);
}

int cwriter_lost(struct cwriter *w, uint32_t stream, uint64_t count,
		 struct pipe_err *err)
{
	struct cw_job *j;
	uint8_t *p;

	if (w->finished)
		return pipe_err_set(err, -EINVAL,
				    "cannot add lost counts: the file is finished");
	j = cw_job_get(w);
	if (!j || grow_array(&j->buf, &j->cap, 16, 1, 4096, SIZE_MAX)) {
		cw_job_free(j);
		return pipe_err_set(err, -ENOMEM, "cannot add lost counts: %s",
				    strerror(ENOMEM));
	}
	p = j->buf;
	fmt_put32(p, stream);
	fmt_put32(p + 4, 0);
	fmt_put64(p + 8, count);
	j->kind = CW_JOB_LOST;
	j->len = 16;
	j->b.type = FMT_LOST;
	j->b.stream = PIPE_STREAM_SIDEBAND;
	j->b.horizon = cw_horizon(w);
	j->b.stored = 16;
	j->b.raw = 16;
	j->b.coded = 16;
	w->lost += count;
	return cw_queue(w, j, err);
}

void cwriter_stats(const struct cwriter *w, struct cw_stats *st)
{
	*st = w->st;
	st->lost = w->lost;
	st->stored_bytes = __atomic_load_n(&w->pub_stored, __ATOMIC_RELAXED);
	st->blocks = __atomic_load_n(&w->pub_blocks, __ATOMIC_RELAXED);
}

bool cwriter_settled(struct cwriter *w)
{
	bool settled;

	if (!w->thread_on)
		return true;
	pthread_mutex_lock(&w->mu);
	settled = !w->head && !w->running;
	pthread_mutex_unlock(&w->mu);
	return settled;
}

void cwriter_free(struct cwriter *w)
{
	uint32_t i;

	if (!w)
		return;
	if (w->thread_on) {
		struct pipe_err ignored;

		cw_stop_worker(w, &ignored);
	}
	while (w->head) {
		struct cw_job *j = w->head;

		w->head = j->next;
		cw_job_free(j);
	}
	while (w->spare) {
		struct cw_job *j = w->spare;

		w->spare = j->next;
		cw_job_free(j);
	}
	for (i = 0; i < w->nr_tspare; i++)
		tenc_free(w->tspare[i]);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->room);
	for (i = 0; i < w->nr_by_id; i++) {
		if (w->by_id[i]) {
			free(w->by_id[i]->buf);
			tenc_free(w->by_id[i]->enc);
		}
		free(w->by_id[i]);
	}
	if (w->side) {
		free(w->side->buf);
		tenc_free(w->side->enc);
	}
	free(w->side);
	free(w->by_id);
	free(w->out);
	free(w->zbuf);
	free(w->zbuf2);
	free(w->dict.samples);
	free(w->dict.sizes);
	free(w->index.buf);
	free(w->held);
	free(w->hold);
	free(w->hold2);
	transform_free(w->tf);
	free(w);
}

