/*
 * sinkq.c - the record sinks' own thread on live runs: the thread that
 * drains the source copies each batch into a bounded queue, this one
 * merges, symbolizes and hands the batches to the record sinks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "grow.h"
#include "params.h"
#include "pipeline.h"

static void *sinkq_main(void *arg)
{
	struct pipeline *pl = arg;
	struct sinkq *q = pl->sq;
	struct sink_job *j;
	struct pipe_batch b;
	struct pipe_err e;
	int ret = 0;

	crash_thread_begin(); /* a sink's stack overflow is reported too */
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->head && !q->quit && !q->flush_req)
			pthread_cond_wait(&q->work, &q->mu);
		j = q->head;
		if (!j && q->flush_req) {
			q->flush_req = false;
			pthread_mutex_unlock(&q->mu);
			ret = q->ret ? 0 : flush_record_sinks(pl, &e);
			pthread_mutex_lock(&q->mu);
			if (ret < 0 && !q->ret) {
				q->err = e;
				q->ret = ret;
			}
			continue;
		}
		if (!j)
			break;
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		pthread_mutex_unlock(&q->mu);
		b.recs = j->recs;
		b.nr = j->nr;
		b.flags = j->flags;
		if (q->ret == 0)
			ret = merge_batch(pl, &b, &e);
		pthread_mutex_lock(&q->mu);
		q->bytes -= j->len;
		if (ret < 0 && !q->ret) {
			q->err = e;
			q->ret = ret;
		}
		j->next = q->spare;
		q->spare = j;
		pthread_cond_broadcast(&q->room);
	}
	pthread_mutex_unlock(&q->mu);
	/* the end of the recording: everything left, in order */
	if (q->ret == 0) {
		ret = release(pl, UINT64_MAX, &e);
		if (ret < 0) {
			q->err = e;
			q->ret = ret;
		}
	}
	crash_thread_end();
	return NULL;
}

static void sinkq_job_free(struct sink_job *j)
{
	while (j) {
		struct sink_job *next = j->next;

		free(j->buf);
		free(j->recs);
		free(j);
		j = next;
	}
}

/* The largest queue= of the record sinks. */
static size_t sinkq_limit(const struct pipeline *pl)
{
	size_t limit = 0;
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++) {
		const struct inst *s = pl->sinks[i];

		if (!(s->p->flags & PIPE_PLUGIN_BYTES) &&
		    (size_t)args_int(s->ctx.args, "queue") > limit)
			limit = (size_t)args_int(s->ctx.args, "queue");
	}
	return limit;
}

int sinkq_start(struct pipeline *pl, struct pipe_err *err)
{
	struct sinkq *q = calloc(1, sizeof(*q));
	int ret;

	if (!q)
		return pipe_err_nomem(err, "cannot start the sinks' thread");
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->room, NULL);
	q->limit = sinkq_limit(pl);
	pl->sq = q;
	ret = -pthread_create(&q->thread, NULL, sinkq_main, pl);
	if (ret < 0) {
		pl->sq = NULL;
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->work);
		pthread_cond_destroy(&q->room);
		free(q);
		return pipe_err_set(err, ret, "cannot start the sinks' thread: %s",
				    strerror(-ret));
	}
	return 0;
}

/* End the thread after the queue; its failure, if any.  NULL: no-op. */
int sinkq_stop(struct pipeline *pl, struct pipe_err *err)
{
	struct sinkq *q = pl->sq;
	int ret;

	if (!q)
		return 0;
	pthread_mutex_lock(&q->mu);
	q->quit = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	pl->sinks_dropped_records = q->dropped_records;
	pl->sinks_dropped_samples = q->dropped_samples;
	ret = q->ret;
	if (ret < 0)
		*err = q->err;
	sinkq_job_free(q->head);
	sinkq_job_free(q->spare);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->room);
	free(q);
	pl->sq = NULL;
	return ret;
}

/* Bytes of a PERF_RECORD_LOST: header, id, count, a sample_id_all
 * trailer of at most six words. */
#define SINKQ_LOST_MAX (8 + 16 + 48)

/*
 * A PERF_RECORD_LOST in place of a dropped batch, built at buf (room for
 * SINKQ_LOST_MAX bytes): `lost` records, the id, time and CPU of the
 * batch's first record, with the sample_id_all trailer of its event (pid
 * and tid unknown: -1), so the record sinks count it as perf's own.
 */
static void sinkq_lost(const struct pipeline *pl, const struct pipe_batch *b,
		       uint64_t lost, uint8_t *buf, struct pipe_record *out)
{
	struct pipe_sample_id sid = PIPE_INIT(sid);
	const struct perf_event_attr *a = NULL;
	struct perf_event_header h;
	uint64_t w[8], st = 0;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->stream = b->recs[0].stream;
	out->time = b->recs[0].time;
	out->event = PIPE_EVENT_NONE;
	if (decode_sample_id(pl->hr.meta, &b->recs[0], &sid) == 0 &&
	    sid.event != PIPE_EVENT_NONE)
		a = meta_attr(pl->hr.meta, sid.event);
	if (a && a->sample_id_all) {
		st = a->sample_type;
		out->event = sid.event;
	}
	w[n++] = sid.id;
	w[n++] = lost;
	if (st & PERF_SAMPLE_TID)
		w[n++] = UINT64_MAX;
	if (st & PERF_SAMPLE_TIME)
		w[n++] = out->time;
	if (st & PERF_SAMPLE_ID)
		w[n++] = sid.id;
	if (st & PERF_SAMPLE_STREAM_ID)
		w[n++] = 0;
	if (st & PERF_SAMPLE_CPU)
		w[n++] = sid.cpu;
	if (st & PERF_SAMPLE_IDENTIFIER)
		w[n++] = sid.id;
	h.type = PERF_RECORD_LOST;
	h.misc = 0;
	h.size = (uint16_t)(sizeof(h) + 8 * n);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), w, 8 * n);
	out->hdr = (const void *)buf;
}

/*
 * Copy a batch (views into the ring) for the sinks' thread; when the
 * queue is full, a PERF_RECORD_LOST for it instead: the thread that
 * drains the rings never waits for the record sinks.
 */
static int sinkq_put(struct pipeline *pl, const struct pipe_batch *b,
		     struct pipe_err *err)
{
	struct sinkq *q = pl->sq;
	struct sink_job *j;
	size_t i, len = 0, off = 0;
	uint64_t lost = 0, samples = 0, v;
	bool drop = false;
	int ret;

	for (i = 0; i < b->nr; i++)
		len += b->recs[i].hdr->size;
	pthread_mutex_lock(&q->mu);
	ret = q->ret;
	if (ret < 0)
		*err = q->err;
	if (ret == 0 && q->bytes && q->bytes + len > q->limit && b->nr) {
		/* what the batch stands for: its samples, and the counts of
		 * the kernel's own PERF_RECORD_LOST among its records */
		for (i = 0; i < b->nr; i++) {
			const struct perf_event_header *h = b->recs[i].hdr;

			if (h->type == PERF_RECORD_SAMPLE) {
				samples++;
			} else if (h->type == PERF_RECORD_LOST &&
				   h->size >= 24) {
				memcpy(&v, (const uint8_t *)h + 16, 8);
				lost += v;
			}
		}
		q->dropped_records += b->nr;
		q->dropped_samples += samples;
		lost += samples;
		len = SINKQ_LOST_MAX;
		drop = true;
	}
	j = q->spare;
	if (j)
		q->spare = j->next;
	pthread_mutex_unlock(&q->mu);
	if (ret < 0)
		return ret;
	if (!j)
		j = calloc(1, sizeof(*j));
	if (!j ||
	    grow_array(&j->buf, &j->cap, len ? len : 8, 1, 65536, SIZE_MAX) ||
	    grow_array(&j->recs, &j->rcap, b->nr ? b->nr : 1,
		       sizeof(*j->recs), 65536 / sizeof(*j->recs), SIZE_MAX)) {
		if (j)
			sinkq_job_free(j);
		return pipe_err_nomem(err, "cannot buffer records");
	}
	if (drop) {
		sinkq_lost(pl, b, lost, j->buf, &j->recs[0]);
		len = j->recs[0].hdr->size;
	}
	for (i = 0; !drop && i < b->nr; i++) {
		const struct perf_event_header *h = b->recs[i].hdr;

		memcpy(j->buf + off, h, h->size);
		j->recs[i] = b->recs[i];
		j->recs[i].hdr = (const void *)(j->buf + off);
		off += h->size;
	}
	j->len = len;
	j->nr = drop ? 1 : b->nr;
	j->flags = b->flags;
	j->next = NULL;
	pthread_mutex_lock(&q->mu);
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	q->bytes += len;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

/*
 * A batch of a record source.  Byte sinks need no global time order
 * (blocks are per stream and readers merge them): the records go from
 * the source's views straight into the writer's blocks, and the rounds
 * only bound the writer's horizons.  Record sinks get them through the
 * time-order merge, live on their own thread.
 */
int take_batch(struct pipeline *pl, const struct pipe_batch *b,
	       struct pipe_err *err)
{
	uint64_t horizon = 0;
	bool round_end = rounds_take(&pl->rounds, b, &horizon);
	int ret;

	if (pl->direct) {
		ret = cwriter_add(pl->writer, b, err);
		if (ret < 0)
			return ret;
	}
	count_records(pl, b);
	if (round_end && pl->direct) {
		ret = cwriter_cap_horizon(pl->writer, horizon, err);
		if (ret < 0)
			return ret;
	}
	if (pl->sq)
		return sinkq_put(pl, b, err);
	if (pl->merge)
		return merge_batch(pl, b, err);
	return 0;
}
