/*
 * cwqueue.c - the writer's encoder: each block a job that is transformed,
 * compressed, checksummed and written, inline or on a worker thread behind
 * a bounded queue; a live recording drops what the queue cannot take and
 * counts it lost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cwstate.h"
#include "grow.h"
#include "host.h"
#include "transform.h"

/* Room in *blk for a payload of up to n bytes in place. */
static int cw_blk_room(uint8_t **blk, size_t *cap, size_t n,
		       struct pipe_err *err)
{
	if (grow_array(blk, cap, FMT_BLOCK_HDR_SIZE + n + CW_TAIL, 1, 4096,
		       SIZE_MAX))
		return pipe_err_set(err, -ENOMEM, "cannot write block: %s",
				    strerror(ENOMEM));
	return 0;
}

/*
 * Transform and compress a DATA job's raw records into its own block
 * buffer, payload in place for cw_put_framed; its header fields but the
 * write's (sequence, checksum) are set.  The encoder's state (transform,
 * codec, dictionaries) is used by one caller at a time.
 */
static int cw_encode(struct cwriter *w, struct cw_job *j, struct pipe_err *err)
{
	const struct pipe_plugin *c = w->opts.codec;
	struct fmt_block *b = &j->b;
	const void *coded = j->buf;
	size_t coded_len = j->len;
	size_t out_len = 0, plain = 0;
	int ret;

	b->transform = TRANSFORM_NONE;
	if (j->enc) {
		const void *t;
		size_t tlen;

		ret = tenc_finish(j->enc, &t, &tlen);
		if (ret == 0) {
			coded = t;
			coded_len = tlen;
			b->transform = TRANSFORM_COLUMNS;
		} else if (ret == -EINVAL) {
			/* no sample: every record is in OTHER, in order */
			tenc_other(j->enc, &coded, &coded_len);
		} else {
			return pipe_err_set(err, ret,
					    "cannot transform block: %s",
					    strerror(-ret));
		}
	} else if (w->tf) {
		const void *t;
		size_t tlen;

		ret = transform_encode(w->tf, j->buf, j->len, &t, &tlen);
		if (ret == 0 && tlen <= CONTAINER_LEN_MAX) {
			coded = t;
			coded_len = tlen;
			b->transform = TRANSFORM_COLUMNS;
		} else if (ret < 0 && ret != -EINVAL) {
			return pipe_err_set(err, ret,
					    "cannot transform block: %s",
					    strerror(-ret));
		}
	}
	b->raw = (uint32_t)j->len;
	b->coded = (uint32_t)coded_len;
	b->codec = c ? c->codec_id : FMT_CODEC_NONE;
	b->dict = 0;
	if (b->codec == FMT_CODEC_NONE) {
		ret = cw_blk_room(&j->blk, &j->blk_cap, coded_len, err);
		if (ret < 0)
			return ret;
		memcpy(j->blk + FMT_BLOCK_HDR_SIZE, coded, coded_len);
		b->stored = (uint32_t)coded_len;
		return 0;
	}
	cw_dict_sample(w, coded, coded_len);
	b->dict = w->dict.cur;
	ret = cw_compress(w, b->dict, coded, coded_len, &j->blk, &j->blk_cap,
			  FMT_BLOCK_HDR_SIZE, &out_len, err);
	if (ret < 0)
		return ret;
	b->stored = (uint32_t)out_len;
	if (!b->dict || !w->dict.trial_left)
		return 0;
	ret = cw_compress(w, 0, coded, coded_len, &w->zbuf2, &w->zcap2, 0,
			  &plain, err);
	if (ret < 0)
		return ret;
	cw_dict_weigh(w, out_len, plain);
	if (plain < out_len) {
		/* the smaller of the two goes out */
		memcpy(j->blk + FMT_BLOCK_HDR_SIZE, w->zbuf2, plain);
		b->stored = (uint32_t)plain;
		b->dict = 0;
	}
	return 0;
}

/* A DATA job: encode unless done already, write, index (the encoder's
 * side). */
static int cw_encode_data(struct cwriter *w, struct cw_job *j,
			  struct pipe_err *err)
{
	int ret;

	if (!j->encoded) {
		ret = cw_encode(w, j, err);
		if (ret < 0)
			return ret;
	}
	w->enc_blocks++;
	ret = cw_put_framed(w, &j->b, j->blk, err);
	if (ret == 0)
		ret = cw_dict_after_block(w, err);
	if (ret < 0)
		return ret;
	if (j->b.t_min && (!w->enc_first || j->b.t_min < w->enc_first))
		w->enc_first = j->b.t_min;
	if (j->b.t_max > w->enc_last)
		w->enc_last = j->b.t_max;
	return cw_maybe_index(w, err);
}

static int cw_run_job(struct cwriter *w, struct cw_job *j,
		      struct pipe_err *err)
{
	int ret;

	switch (j->kind) {
	case CW_JOB_DATA:
		ret = cw_encode_data(w, j, err);
		break;
	case CW_JOB_LOST:
		ret = cw_put_block(w, &j->b, j->buf, err);
		break;
	default:
		ret = cw_write_index(w, err);
		if (ret < 0)
			break;
		fmt_put64(j->buf + 0, w->index.prev);
		fmt_put64(j->buf + 32, w->enc_blocks);
		ret = cw_put_block(w, &j->b, j->buf, err);
		break;
	}
	__atomic_store_n(&w->pub_stored, w->enc_stored, __ATOMIC_RELAXED);
	__atomic_store_n(&w->pub_blocks, w->enc_blocks, __ATOMIC_RELAXED);
	return ret;
}

/* A job to fill: a spare one with its buffer, or a new one. */
struct cw_job *cw_job_get(struct cwriter *w)
{
	struct cw_job *j = NULL;

	if (w->thread_on)
		pthread_mutex_lock(&w->mu);
	if (w->spare) {
		j = w->spare;
		w->spare = j->next;
		w->nr_spare--;
	}
	if (w->thread_on)
		pthread_mutex_unlock(&w->mu);
	if (!j)
		j = calloc(1, sizeof(*j));
	if (j) {
		j->next = NULL;
		j->len = 0;
		j->encoded = false;
		j->queued_at = 0;
		memset(&j->b, 0, sizeof(j->b));
	}
	return j;
}

int cw_tenc_get(struct cwriter *w, struct tenc **out)
{
	struct tenc *e = NULL;

	if (w->thread_on)
		pthread_mutex_lock(&w->mu);
	if (w->nr_tspare)
		e = w->tspare[--w->nr_tspare];
	if (w->thread_on)
		pthread_mutex_unlock(&w->mu);
	if (!e) {
		w->st.cols_made++;
		return tenc_new(out, w->meta, w->opts.block_size);
	}
	tenc_reset(e);
	*out = e;
	return 0;
}

/* A job's column encoder is not needed once its block is encoded: kept
 * for a stream's next block, or freed (mu held when the worker runs). */
static void cw_tenc_put_locked(struct cwriter *w, struct cw_job *j)
{
	if (!j->enc)
		return;
	if (w->nr_tspare < CW_TSPARE_MAX)
		w->tspare[w->nr_tspare++] = j->enc;
	else
		tenc_free(j->enc);
	j->enc = NULL;
}

/* Keep a done job for reuse, or free it (mu held when the worker runs). */
static void cw_job_put_locked(struct cwriter *w, struct cw_job *j)
{
	cw_tenc_put_locked(w, j);
	if (w->nr_spare < CW_SPARE_MAX) {
		j->next = w->spare;
		w->spare = j;
		w->nr_spare++;
		return;
	}
	cw_job_free(j);
}

void cw_job_free(struct cw_job *j)
{
	if (!j)
		return;
	free(j->buf);
	free(j->blk);
	tenc_free(j->enc);
	free(j);
}

uint64_t cw_clock(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Run step(w, j, e) with mu released, as the one job running (mu held on
 * entry and return).  After the encoder's first failure the step is
 * skipped and 0 returned: the rest is dropped, the caller stops.  *ns,
 * unless NULL, gets the thread CPU time the step took (set with mu held).
 */
static int cw_unlocked(struct cwriter *w,
		       int (*step)(struct cwriter *, struct cw_job *,
				   struct pipe_err *),
		       struct cw_job *j, struct pipe_err *e, uint64_t *ns)
{
	uint64_t t = 0;
	int ret;

	w->running = true;
	pthread_mutex_unlock(&w->mu);
	if (ns)
		t = cw_clock(CLOCK_THREAD_CPUTIME_ID);
	ret = w->enc_ret ? 0 : step(w, j, e);
	if (ns)
		t = cw_clock(CLOCK_THREAD_CPUTIME_ID) - t;
	pthread_mutex_lock(&w->mu);
	w->running = false;
	if (ns)
		*ns = t;
	return ret;
}

/* Keep the encoder's first failure, ret and its message e (mu held). */
static void cw_failed_locked(struct cwriter *w, int ret,
			     const struct pipe_err *e)
{
	if (ret < 0 && !w->enc_ret) {
		w->enc_err = *e;
		w->enc_ret = ret;
	}
}

/* The worker's flush of the output, as a step for cw_unlocked. */
static int cw_flush_step(struct cwriter *w, struct cw_job *j,
			 struct pipe_err *err)
{
	(void)j;
	return w->opts.flush(w->opts.opaque, err);
}

/* Run the job taken off the queue, with mu held on entry and return; one
 * job runs at a time, by the worker or by the caller in cwriter_idle. */
void cw_run_locked(struct cwriter *w, struct cw_job *j)
{
	struct pipe_err e;
	uint64_t t;
	int ret;

	ret = cw_unlocked(w, cw_run_job, j, &e, &t);
	if (j->kind == CW_JOB_DATA) {
		w->queued -= j->len;
		w->job_ns = t;
	}
	cw_failed_locked(w, ret, &e);
	cw_job_put_locked(w, j);
	pthread_cond_broadcast(&w->room);
}

/* Encode the first queued DATA job not encoded yet, leaving it queued
 * for the worker to write (mu held on entry and return); false when none
 * waits. */
bool cw_encode_one_locked(struct cwriter *w)
{
	struct cw_job *j;
	struct pipe_err e;
	int ret;

	for (j = w->head; j; j = j->next)
		if (j->kind == CW_JOB_DATA && !j->encoded)
			break;
	if (!j)
		return false;
	ret = cw_unlocked(w, cw_encode, j, &e, &w->job_ns);
	/* a failed block is encoded again by the worker, which reports it */
	j->encoded = ret == 0 && !w->enc_ret;
	if (j->encoded)
		cw_tenc_put_locked(w, j);
	w->st.inline_blocks += j->encoded;
	pthread_cond_broadcast(&w->room);
	return j->encoded;
}

void *cw_worker(void *arg)
{
	struct cwriter *w = arg;
	struct cw_job *j;
	struct pipe_err e;
	int ret;

	crash_thread_begin(); /* a codec's stack overflow is reported too */
	pthread_mutex_lock(&w->mu);
	for (;;) {
		/* the caller may be running a job itself (cwriter_idle) */
		while (w->running ||
		       (!w->head && !w->quit && !w->flush_req)) {
			w->woken = false;
			pthread_cond_wait(&w->work, &w->mu);
		}
		j = w->head;
		if (!j && w->flush_req) {
			w->flush_req = false;
			ret = cw_unlocked(w, cw_flush_step, NULL, &e, NULL);
			cw_failed_locked(w, ret, &e);
			continue;
		}
		if (!j)
			break;
		w->head = j->next;
		if (!w->head) {
			w->tail = NULL;
			w->asleep_ok = false;
			w->kick = false;
		}
		cw_run_locked(w, j);
	}
	pthread_mutex_unlock(&w->mu);
	crash_thread_end();
	return NULL;
}

/* The encoder's first failure, handed to the caller once seen (mu held). */
static int cw_enc_failed_locked(struct cwriter *w, struct pipe_err *err)
{
	if (!w->enc_ret)
		return 0;
	*err = w->enc_err;
	return w->enc_ret;
}

/* Records a dropped block stands for: its own, but a PERF_RECORD_LOST
 * among them for the records it counted. */
static uint64_t cw_lost_in(const struct cw_job *j, uint64_t *kernel)
{
	uint64_t n = j->b.records, v;
	const uint8_t *p = j->buf;
	size_t off = 0, len = j->len;
	const void *other;

	/* as columns, a LOST record is among those copied whole */
	if (j->enc) {
		tenc_other(j->enc, &other, &len);
		p = other;
	}
	while (off + sizeof(struct perf_event_header) <= len) {
		const struct perf_event_header *h = (const void *)(p + off);

		if (h->size < sizeof(*h) || h->size > len - off)
			break;
		if (h->type == PERF_RECORD_LOST && h->size >= 24) {
			memcpy(&v, p + off + 16, 8);
			n += v - 1;
			*kernel += v;
		}
		off += h->size;
	}
	return n;
}

/* A dropped block: its records are lost, and the file says so. */
static int cw_drop(struct cwriter *w, const struct fmt_block *b,
		   size_t raw, uint64_t lost, uint64_t kernel,
		   struct pipe_err *err)
{
	w->dropped_raw += raw;
	w->st.dropped_records += b->records;
	w->st.dropped_samples += b->samples;
	w->st.dropped_blocks++;
	w->lost -= kernel; /* counted when added; now in `lost` */
	return cwriter_lost(w, b->stream, lost, err);
}

/*
 * Hand a job to the encoder, which owns it from here: run it now without
 * a worker; else queue it.  A full queue (opts.queue_bytes of raw DATA)
 * makes a live recording drop a CPU stream's block, counted and written
 * as lost, rather than stall the thread that drains the rings; anything
 * else waits for room.
 */
int cw_queue(struct cwriter *w, struct cw_job *j, struct pipe_err *err)
{
	bool data = j->kind == CW_JOB_DATA;
	size_t limit = w->opts.queue_bytes;
	int ret;

	if (!w->thread_on) {
		ret = cw_run_job(w, j, err);
		cw_job_put_locked(w, j);
		return ret;
	}
	pthread_mutex_lock(&w->mu);
	ret = cw_enc_failed_locked(w, err);
	while (ret == 0 && data && w->queued && w->queued + j->len > limit &&
	       !(w->opts.drop_when_behind && j->b.stream != PIPE_STREAM_SIDEBAND)) {
		w->woken = true;
		pthread_cond_signal(&w->work);
		pthread_cond_wait(&w->room, &w->mu);
		ret = cw_enc_failed_locked(w, err);
	}
	if (ret == 0 && data && w->queued && w->queued + j->len > limit) {
		struct fmt_block b = j->b;
		size_t raw = j->len;
		uint64_t kernel = 0, lost = cw_lost_in(j, &kernel);

		cw_job_put_locked(w, j);
		pthread_mutex_unlock(&w->mu);
		return cw_drop(w, &b, raw, lost, kernel, err);
	}
	if (ret < 0) {
		cw_job_put_locked(w, j);
		pthread_mutex_unlock(&w->mu);
		return ret;
	}
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	if (data)
		w->queued += j->len;
	/* live, blocks wait for cwriter_idle, which encodes them or wakes
	 * the worker for them; a backlog, or anyone but a live recording,
	 * wakes it now */
	if (!j->queued_at)
		j->queued_at = w->arrival_ns;
	if (!w->opts.drop_when_behind || w->queued > limit / 4) {
		w->st.worker_wakes += !w->woken;
		w->woken = true;
		pthread_cond_signal(&w->work);
	} else
		w->asleep_ok = true;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* When the oldest job waiting for a kick must be written (mu held). */
uint64_t cw_kick_due_locked(const struct cwriter *w)
{
	if (!w->asleep_ok || !w->head || w->woken)
		return UINT64_MAX;
	return w->head->queued_at + w->opts.flush_ns;
}

/* The END job: its payload but for what the encoder knows. */
int cw_queue_end(struct cwriter *w, struct pipe_err *err)
{
	struct cw_job *j = cw_job_get(w);
	uint8_t *p;

	if (!j || grow_array(&j->buf, &j->cap, FMT_END_SIZE_NOW, 1, 4096,
			     SIZE_MAX)) {
		cw_job_free(j);
		return pipe_err_set(err, -ENOMEM, "cannot end the file: %s",
				    strerror(ENOMEM));
	}
	p = j->buf;
	memset(p, 0, FMT_END_SIZE_NOW);
	/* what the file holds: dropped blocks are in its LOST blocks */
	fmt_put64(p + 8, w->st.records - w->st.dropped_records);
	fmt_put64(p + 16, w->st.samples - w->st.dropped_samples);
	fmt_put64(p + 24, w->lost);
	fmt_put64(p + 40, w->t_first);
	fmt_put64(p + 48, w->t_last);
	fmt_put64(p + 56, w->st.raw_bytes - w->dropped_raw);
	fmt_put64(p + FMT_END_THROTTLES, w->throttles);
	j->kind = CW_JOB_END;
	j->len = FMT_END_SIZE_NOW;
	j->b.type = FMT_END;
	j->b.stream = PIPE_STREAM_SIDEBAND;
	j->b.t_min = w->t_first;
	j->b.t_max = w->t_last;
	j->b.horizon = UINT64_MAX;
	j->b.stored = FMT_END_SIZE_NOW;
	j->b.raw = FMT_END_SIZE_NOW;
	j->b.coded = FMT_END_SIZE_NOW;
	return cw_queue(w, j, err);
}

/* Let the worker finish the queue and end; its failure, if any. */
int cw_stop_worker(struct cwriter *w, struct pipe_err *err)
{
	int ret;

	if (!w->thread_on)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	w->woken = true;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->thread_on = false;
	ret = w->enc_ret;
	if (ret < 0)
		*err = w->enc_err;
	return ret;
}
