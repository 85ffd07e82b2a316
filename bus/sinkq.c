/*
 * sinkq.c - the record sinks' own thread on live runs: the thread that
 * drains the source copies each batch into a bounded queue, this one
 * merges, symbolizes and hands the batches to the record sinks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
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

int sinkq_start(struct pipeline *pl, struct pipe_err *err)
{
	struct sinkq *q = calloc(1, sizeof(*q));
	int ret;

	if (!q)
		return pipe_err_set(err, -ENOMEM,
				    "cannot start the sinks' thread: out of memory");
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->room, NULL);
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

/* Copy a batch (views into the ring) for the sinks' thread. */
static int sinkq_put(struct pipeline *pl, const struct pipe_batch *b,
		     struct pipe_err *err)
{
	struct sinkq *q = pl->sq;
	struct sink_job *j;
	size_t i, len = 0, off = 0;
	int ret;

	for (i = 0; i < b->nr; i++)
		len += b->recs[i].hdr->size;
	pthread_mutex_lock(&q->mu);
	while (!q->ret && q->bytes && q->bytes + len > SINKQ_BYTES_MAX)
		pthread_cond_wait(&q->room, &q->mu);
	ret = q->ret;
	if (ret < 0)
		*err = q->err;
	j = q->spare;
	if (j)
		q->spare = j->next;
	pthread_mutex_unlock(&q->mu);
	if (ret < 0)
		return ret;
	if (!j)
		j = calloc(1, sizeof(*j));
	if (!j || fmt_grow((void **)&j->buf, &j->cap, len ? len : 8, 65536) ||
	    fmt_grow((void **)&j->recs, &j->rcap,
		     (b->nr ? b->nr : 1) * sizeof(*j->recs), 65536)) {
		if (j)
			sinkq_job_free(j);
		return pipe_err_set(err, -ENOMEM, "cannot buffer records: %s",
				    strerror(ENOMEM));
	}
	for (i = 0; i < b->nr; i++) {
		const struct perf_event_header *h = b->recs[i].hdr;

		memcpy(j->buf + off, h, h->size);
		j->recs[i] = b->recs[i];
		j->recs[i].hdr = (const void *)(j->buf + off);
		off += h->size;
	}
	j->len = len;
	j->nr = b->nr;
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
	size_t i;
	int ret;

	for (i = 0; i < b->nr; i++)
		if (b->recs[i].time > pl->round_max)
			pl->round_max = b->recs[i].time;
	if (pl->direct) {
		ret = cwriter_add(pl->writer, b, err);
		if (ret < 0)
			return ret;
	}
	count_records(pl, b);
	if ((b->flags & PIPE_BATCH_ROUND_END) && pl->direct) {
		ret = cwriter_cap_horizon(pl->writer, pl->prev_round_max, err);
		if (ret < 0)
			return ret;
	}
	if (b->flags & PIPE_BATCH_ROUND_END)
		pl->prev_round_max = pl->round_max;
	if (pl->sq)
		return sinkq_put(pl, b, err);
	if (pl->merge)
		return merge_batch(pl, b, err);
	return 0;
}
