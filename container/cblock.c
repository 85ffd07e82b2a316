/*
 * cblock.c - decoding one DATA block of a pipe file (checksum, codec,
 * inverse transform, record walk, window filter) and the worker pool that
 * decodes several at once while the reader keeps them in file order.
 * Layout: docs/format.md; the reader that drives this: creader.c.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cblock.h"
#include "decode.h"
#include "err.h"
#include "grow.h"
#include "host.h"
#include "meta.h"
#include "transform.h"



/* ---- codecs and dictionaries ------------------------------------------ */

static int cb_apply_dict(struct cb_ctx *ctx, struct cb_codec *c,
			 const struct cb_dict *d, char *why, size_t cap)
{
	struct crash_site site;
	uint32_t i;
	int ret;

	for (i = 0; i < ctx->nr_dec; i++) {
		if (!c->p[i]->add_dict) {
			snprintf(why, cap, "codec '%s' takes no dictionaries",
				 c->p[i]->name);
			return -EINVAL;
		}
		site = host_enter(c->ctx[i], "add_dict");
		ret = c->p[i]->add_dict(c->state[i], d->id, d->bytes, d->len);
		host_leave(site);
		if (ret < 0) {
			snprintf(why, cap, "codec '%s' refused dictionary %"
				 PRIu32 ": %s", c->p[i]->name, d->id,
				 strerror(-ret));
			return ret == -ENOMEM ? ret : -EINVAL;
		}
	}
	return 0;
}

struct cb_codec *cb_codec_get(struct cb_ctx *ctx, uint32_t id)
{
	struct pipe_err e = { { 0 }, { 0 } };
	struct cb_codec *c;
	char why[300];
	uint32_t i;
	int ret = 0;

	for (i = 0; i < ctx->nr_codecs; i++)
		if (ctx->codecs[i].id == id)
			return &ctx->codecs[i];
	if (ctx->nr_codecs == CB_MAX_CODECS)
		return NULL;
	c = &ctx->codecs[ctx->nr_codecs++];
	memset(c, 0, sizeof(*c));
	c->id = id;
	snprintf(c->why, sizeof(c->why), "unknown codec %" PRIu32, id);
	for (i = 0; i < ctx->nr_dec && ret == 0; i++) {
		ret = ctx->codec_open ? ctx->codec_open(ctx->opaque, id,
							&c->p[i], &c->state[i],
							&c->ctx[i], &e)
				      : -ENOENT;
		if (ret == 0 && (!c->p[i] || !c->p[i]->decompress))
			ret = -ENOENT;
		if (ret < 0) {
			if (c->p[i] && ctx->codec_close)
				ctx->codec_close(ctx->opaque, c->p[i],
						 c->state[i]);
			c->p[i] = NULL;
			if (e.msg[0])
				fmt_copy_msg(c->why, sizeof(c->why), e.msg);
		}
	}
	c->nomem = ret == -ENOMEM;
	if (ret < 0)
		return c;
	c->ok = true;
	for (i = 0; i < ctx->nr_dicts; i++) {
		if (ctx->dicts[i].codec != id)
			continue;
		ret = cb_apply_dict(ctx, c, &ctx->dicts[i], why, sizeof(why));
		if (ret < 0) {
			fmt_copy_msg(c->why, sizeof(c->why), why);
			c->ok = false;
			c->nomem = ret == -ENOMEM;
			break;
		}
	}
	return c;
}

int cb_dict_add(struct cb_ctx *ctx, uint32_t codec, uint32_t id,
		const void *bytes, size_t len, char *why, size_t cap)
{
	struct cb_dict *d;
	struct cb_codec *c;
	uint32_t i;

	if (id == 0) {
		snprintf(why, cap, "dictionary id 0 is reserved");
		return -EINVAL;
	}
	for (i = 0; i < ctx->nr_dicts; i++) {
		if (ctx->dicts[i].codec == codec && ctx->dicts[i].id == id) {
			snprintf(why, cap, "dictionary %" PRIu32
				 " is defined twice", id);
			return -EINVAL;
		}
	}
	if (ctx->nr_dicts == CB_MAX_DICTS) {
		snprintf(why, cap, "more than the %d dictionaries a file may "
			 "define", CB_MAX_DICTS);
		return -EINVAL;
	}
	if (len == 0 || len > CONTAINER_DICT_MAX) {
		snprintf(why, cap, "a dictionary of %zu bytes (a file's are "
			 "1 byte to %u KiB)", len, CONTAINER_DICT_MAX >> 10);
		return -EINVAL;
	}
	d = &ctx->dicts[ctx->nr_dicts];
	d->bytes = malloc(len ? len : 1);
	if (!d->bytes) {
		snprintf(why, cap, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(d->bytes, bytes, len);
	d->len = len;
	d->codec = codec;
	d->id = id;
	ctx->nr_dicts++;
	/* instances already open learn it now; later ones on opening */
	for (i = 0; i < ctx->nr_codecs; i++) {
		c = &ctx->codecs[i];
		if (c->id == codec && c->ok)
			return cb_apply_dict(ctx, c, d, why, cap);
	}
	return 0;
}

void cb_ctx_release(struct cb_ctx *ctx)
{
	uint32_t i, d;

	for (i = 0; i < ctx->nr_codecs; i++) {
		for (d = 0; d < ctx->nr_dec; d++) {
			if (ctx->codecs[i].p[d] && ctx->codec_close)
				ctx->codec_close(ctx->opaque,
						 ctx->codecs[i].p[d],
						 ctx->codecs[i].state[d]);
		}
	}
	ctx->nr_codecs = 0;
	for (d = 0; d < CB_MAX_DECODERS; d++) {
		transform_free(ctx->tf[d]);
		ctx->tf[d] = NULL;
	}
	for (i = 0; i < ctx->nr_dicts; i++)
		free(ctx->dicts[i].bytes);
	ctx->nr_dicts = 0;
}

/* ---- one block ---------------------------------------------------------- */

static int cb_decode(struct cb_ctx *ctx, uint32_t dec, struct cb_job *j)
{
	const struct fmt_block *b = &j->b;
	const uint8_t *coded = j->payload;
	struct pipe_err e = { { 0 }, { 0 } };
	struct crash_site site;
	struct cb_codec *c;
	bool need_raw;
	int ret;

	need_raw = b->transform != TRANSFORM_NONE ||
		   (uintptr_t)j->payload % 8;
	if ((b->codec != FMT_CODEC_NONE &&
	     grow_array(&j->buf.coded, &j->buf.coded_cap,
			(size_t)b->coded + 8, 1, 65536, SIZE_MAX)) ||
	    (need_raw &&
	     grow_array(&j->buf.raw, &j->buf.raw_cap, (size_t)b->raw + 8, 1,
			65536, SIZE_MAX))) {
		fmt_copy_msg(j->why, sizeof(j->why), strerror(ENOMEM));
		return -ENOMEM;
	}
	if (b->transform == TRANSFORM_NONE && b->coded != b->raw) {
		snprintf(j->why, sizeof(j->why), "coded length %" PRIu32
			 " differs from raw length %" PRIu32, b->coded, b->raw);
		return -EINVAL;
	}
	if (b->transform != TRANSFORM_NONE &&
	    b->transform != TRANSFORM_COLUMNS) {
		snprintf(j->why, sizeof(j->why), "unknown transform %" PRIu32,
			 b->transform);
		return -EINVAL;
	}
	if (b->codec == FMT_CODEC_NONE) {
		if (b->stored != b->coded) {
			snprintf(j->why, sizeof(j->why), "stored length %"
				 PRIu32 " differs from coded length %" PRIu32,
				 b->stored, b->coded);
			return -EINVAL;
		}
	} else {
		/* the reader opened it before queueing the job */
		c = j->codec;
		if (!c || !c->ok) {
			fmt_copy_msg(j->why, sizeof(j->why),
				c ? c->why : "too many codecs");
			return c && c->nomem ? -ENOMEM : -EINVAL;
		}
		site = host_enter(c->ctx[dec], "decompress");
		ret = c->p[dec]->decompress(c->state[dec], b->dict, j->payload,
					    b->stored, j->buf.coded, b->coded);
		host_leave(site);
		if (ret < 0) {
			const char *msg = ctx->codec_error ?
				ctx->codec_error(ctx->opaque, c->state[dec]) : NULL;

			if (msg && msg[0])
				snprintf(j->why, sizeof(j->why), "%s", msg);
			else
				snprintf(j->why, sizeof(j->why),
					 "codec '%s' cannot decode it: %s",
					 c->p[dec]->name, strerror(-ret));
			return ret == -ENOMEM ? ret : -EINVAL;
		}
		coded = j->buf.coded;
	}
	if (b->transform == TRANSFORM_NONE) {
		/* records are read in place when aligned as in the file */
		j->bytes = coded;
		if ((uintptr_t)coded % 8) {
			memcpy(j->buf.raw, coded, b->raw);
			j->bytes = j->buf.raw;
		}
		return 0;
	}
	j->bytes = j->buf.raw;
	if (!ctx->tf[dec]) {
		ret = transform_new(&ctx->tf[dec], ctx->meta, &e);
		if (ret < 0) {
			fmt_copy_msg(j->why, sizeof(j->why), e.msg);
			return ret == -ENOMEM ? ret : -EINVAL;
		}
	}
	ret = transform_decode(ctx->tf[dec], coded, b->coded, j->buf.raw, b->raw,
			       &e);
	if (ret < 0) {
		fmt_copy_msg(j->why, sizeof(j->why),
			e.msg[0] ? e.msg : "bad transform");
		return -EINVAL;
	}
	return 0;
}

static bool cb_pid_wanted(const struct cb_ctx *ctx, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < ctx->nr_pids; i++)
		if (ctx->pids[i] == pid)
			return true;
	return false;
}

/* Should this record, with its time and ids, come out? */
static bool cb_keep(const struct cb_ctx *ctx, const struct cb_job *j,
		    uint32_t type, uint64_t time, bool have_id, uint32_t pid)
{
	if (!j->filter)
		return true;
	if (j->b.stream == PIPE_STREAM_SIDEBAND)
		return time < j->hi;
	if (time < j->lo || time >= j->hi)
		return false;
	/* pids select samples; other records of a CPU stream stay */
	return !ctx->nr_pids || type != PERF_RECORD_SAMPLE || !have_id ||
	       cb_pid_wanted(ctx, pid);
}

static void cb_count(struct cb_counts *c, const struct pipe_record *rec)
{
	const struct perf_event_header *h = rec->hdr;

	c->records++;
	if (h->type == PERF_RECORD_SAMPLE) {
		c->samples++;
	} else if (h->type == PERF_RECORD_THROTTLE) {
		c->throttles++;
	} else if (h->type == PERF_RECORD_LOST && h->size >= 24) {
		uint64_t lost;

		memcpy(&lost, (const uint8_t *)h + 16, 8);
		c->lost += lost;
	}
	if (rec->time) {
		if (!c->t_first || rec->time < c->t_first)
			c->t_first = rec->time;
		if (rec->time > c->t_last)
			c->t_last = rec->time;
	}
}

/* Records of a block in time order, ties in file order (a stable merge
 * sort: a crafted block cannot make it quadratic): most blocks are in
 * order already and are only checked (j->in_order says whether they
 * are the block's records as they lie).  0 or -ENOMEM. */
static int cb_sort(struct cb_job *j)
{
	struct pipe_record *a = j->buf.recs, *b, *t;
	size_t n = j->nr, w, i;

	for (i = 1; i < n && a[i - 1].time <= a[i].time; i++)
		;
	j->in_order = i >= n && n == j->b.records;
	if (i >= n)
		return 0;
	b = malloc(n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t l = i, lend = i + w < n ? i + w : n;
			size_t r = lend, rend = i + 2 * w < n ? i + 2 * w : n;
			size_t o = i;

			while (l < lend && r < rend)
				b[o++] = a[r].time < a[l].time ? a[r++] : a[l++];
			while (l < lend)
				b[o++] = a[l++];
			while (r < rend)
				b[o++] = a[r++];
		}
		t = a;
		a = b;
		b = t;
	}
	if (a != j->buf.recs) {
		memcpy(j->buf.recs, a, n * sizeof(*a));
		free(a);
	} else {
		free(b);
	}
	return 0;
}

/*
 * cb_walk for the common case (every record kept, one event): the counts
 * and the order check in the same pass as the views, a sample's time at
 * its offset.  Returns 0, 1 when the records are out of time order (the
 * views are done, cb_sort orders them), or -EINVAL with j->why set.
 */
static int cb_walk_all(struct cb_ctx *ctx, struct cb_job *j)
{
	const struct fmt_block *b = &j->b;
	const uint8_t *bytes = j->bytes;
	struct pipe_record *rec = j->buf.recs;
	uint64_t last = b->t_min, prev = 0, t_first = 0;
	size_t off = 0, n = 0, raw = b->raw, records = b->records;
	uint32_t samples = 0, time_off = ctx->time_off;
	bool ordered = true;

	while (off < raw) {
		const struct perf_event_header *h =
			(const struct perf_event_header *)(bytes + off);
		size_t size;

		if (raw - off < sizeof(*h))
			break;
		size = h->size;
		if (size < sizeof(*h) || size % 8 || size > raw - off)
			break;
		if (n == records) {
			snprintf(j->why, sizeof(j->why),
				 "more records than the %" PRIu32
				 " of its header", b->records);
			return -EINVAL;
		}
		rec->hdr = h;
		rec->stream = b->stream;
		if (h->type == PERF_RECORD_SAMPLE) {
			uint64_t t = 0;

			samples++;
			if (time_off && size >= time_off + 8)
				memcpy(&t, (const uint8_t *)h + time_off, 8);
			rec->event = 0;
			if (t)
				last = t;
		} else {
			struct pipe_sample_id sid;

			rec->event = PIPE_EVENT_NONE;
			if (decode_sample_id(ctx->meta, rec, &sid) == 0) {
				rec->event = sid.event;
				if (sid.time)
					last = sid.time;
			}
			if (h->type == PERF_RECORD_THROTTLE) {
				j->c.throttles++;
			} else if (h->type == PERF_RECORD_LOST && size >= 24) {
				uint64_t lost;

				memcpy(&lost, (const uint8_t *)h + 16, 8);
				j->c.lost += lost;
			}
		}
		/* a record without a time has its predecessor's */
		rec->time = last;
		if (last < prev)
			ordered = false;
		prev = last;
		if (!t_first)
			t_first = last;
		off += size;
		rec++;
		n++;
	}
	if (off < raw) {
		snprintf(j->why, sizeof(j->why), "bad record length at byte %zu",
			 off);
		return -EINVAL;
	}
	if (n != records || samples != b->samples) {
		snprintf(j->why, sizeof(j->why), "%zu records and %" PRIu32
			 " samples, its header says %" PRIu32 " and %" PRIu32,
			 n, samples, b->records, b->samples);
		return -EINVAL;
	}
	j->nr = n;
	j->c.records = n;
	j->c.samples = samples;
	j->c.t_first = t_first;
	j->c.t_last = prev;
	if (!ordered) {
		/* the first and last of the records sorted */
		size_t i;

		for (i = 0; i < n; i++) {
			uint64_t t = j->buf.recs[i].time;

			if (t && (!j->c.t_first || t < j->c.t_first))
				j->c.t_first = t;
			if (t > j->c.t_last)
				j->c.t_last = t;
		}
	}
	j->in_order = ordered;
	return !ordered;
}

/* Check every record against the header and keep the wanted ones, in
 * time order. */
static int cb_walk(struct cb_ctx *ctx, struct cb_job *j)
{
	const struct fmt_block *b = &j->b;
	uint64_t last = b->t_min;
	size_t off = 0, n = 0;
	uint32_t samples = 0;

	if (b->records > b->raw / 8) {
		snprintf(j->why, sizeof(j->why), "%" PRIu32
			 " records cannot fit in %" PRIu32 " bytes",
			 b->records, b->raw);
		return -EINVAL;
	}
	if (grow_array(&j->buf.recs, &j->buf.recs_cap,
		       (size_t)b->records * sizeof(*j->buf.recs) + 1, 1, 65536,
		       SIZE_MAX)) {
		fmt_copy_msg(j->why, sizeof(j->why), strerror(ENOMEM));
		return -ENOMEM;
	}
	if (!j->filter && ctx->one_event && !ctx->nr_pids) {
		int ret = cb_walk_all(ctx, j);

		if (ret <= 0)
			return ret;
		goto sort;
	}
	while (off < b->raw) {
		const struct perf_event_header *h;
		struct pipe_sample_id sid;
		struct pipe_record *rec;
		bool have_id;

		h = (const struct perf_event_header *)(j->bytes + off);
		if (b->raw - off < sizeof(*h) || h->size < sizeof(*h) ||
		    h->size % 8 || h->size > b->raw - off) {
			snprintf(j->why, sizeof(j->why),
				 "bad record length at byte %zu", off);
			return -EINVAL;
		}
		if (n == b->records) {
			snprintf(j->why, sizeof(j->why),
				 "more records than the %" PRIu32
				 " of its header", b->records);
			return -EINVAL;
		}
		n++;
		if (h->type == PERF_RECORD_SAMPLE)
			samples++;
		off += h->size;
		rec = &j->buf.recs[j->nr];
		rec->hdr = h;
		rec->stream = b->stream;
		rec->event = PIPE_EVENT_NONE;
		if (h->type == PERF_RECORD_SAMPLE && ctx->one_event &&
		    !ctx->nr_pids) {
			/* the common case needs only the time */
			uint64_t t = 0;

			if (ctx->time_off && h->size >= ctx->time_off + 8)
				memcpy(&t, (const uint8_t *)h + ctx->time_off,
				       8);

			have_id = true;
			sid.pid = 0;
			rec->event = 0;
			if (t)
				last = t;
		} else {
			have_id = decode_sample_id(ctx->meta, rec, &sid) == 0;
			if (have_id) {
				rec->event = sid.event;
				if (sid.time)
					last = sid.time;
			}
		}
		/* a record without a time has its predecessor's */
		rec->time = last;
		if (!cb_keep(ctx, j, h->type, rec->time, have_id, sid.pid))
			continue;
		cb_count(&j->c, rec);
		j->nr++;
	}
	if (n != b->records || samples != b->samples) {
		snprintf(j->why, sizeof(j->why), "%zu records and %" PRIu32
			 " samples, its header says %" PRIu32 " and %" PRIu32,
			 n, samples, b->records, b->samples);
		return -EINVAL;
	}
sort:
	if (cb_sort(j) < 0) {
		fmt_copy_msg(j->why, sizeof(j->why), strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

int cb_job_decode_only(struct cb_ctx *ctx, uint32_t dec, struct cb_job *j)
{
	j->why[0] = 0;
	if (!fmt_checksum_ok(j->payload, j->b.stored, ctx->salt,
			     j->b.payload_sum)) {
		fmt_copy_msg(j->why, sizeof(j->why), "payload checksum mismatch");
		return -EINVAL;
	}
	return cb_decode(ctx, dec, j);
}

void cb_job_run(struct cb_ctx *ctx, uint32_t dec, struct cb_job *j)
{
	int ret;

	if (j->drop) {
		/* unmapping costs as much as mapping: on the decoders, not
		 * all at the end on the reading thread */
		madvise((void *)(uintptr_t)j->drop, j->drop_len,
			MADV_DONTNEED);
		j->drop = NULL;
	}
	j->nr = 0;
	j->in_order = false;
	memset(&j->c, 0, sizeof(j->c));
	j->why[0] = 0;
	if (j->trailer)
		j->trailer_bad = fmt_get64(j->trailer) != fmt_block_len(&j->b) ||
				 fmt_get64(j->trailer + 8) != ctx->salt;
	if (!fmt_checksum_ok(j->payload, j->b.stored, ctx->salt,
			     j->b.payload_sum)) {
		fmt_copy_msg(j->why, sizeof(j->why), "payload checksum mismatch");
		j->status = -EINVAL;
		return;
	}
	if (j->b.stream != PIPE_STREAM_SIDEBAND &&
	    j->b.stream >= ctx->nr_streams) {
		snprintf(j->why, sizeof(j->why), "stream id %" PRIu32
			 " is not one of the %" PRIu32 " of the metadata",
			 j->b.stream, ctx->nr_streams);
		ret = -EINVAL;
	} else {
		ret = cb_decode(ctx, dec, j);
	}
	if (ret == 0)
		ret = cb_walk(ctx, j);
	if (ret < 0) {
		j->nr = 0;
		memset(&j->c, 0, sizeof(j->c));
	}
	j->status = ret;
}

int cb_job_copy(struct cb_job *j, const uint8_t *payload, size_t len)
{
	if (grow_array(&j->buf.copy, &j->buf.copy_cap, len + 8, 1, 65536,
		       SIZE_MAX))
		return -ENOMEM;
	memcpy(j->buf.copy, payload, len);
	j->payload = j->buf.copy;
	return 0;
}

void cb_job_release(struct cb_job *j)
{
	cb_bufs_release(&j->buf);
	memset(j, 0, sizeof(*j));
}

void cb_job_trade(struct cb_job *j, struct cb_bufs *b)
{
	struct cb_bufs t = j->buf;

	j->buf = *b;
	*b = t;
}

size_t cb_bufs_size(const struct cb_bufs *b)
{
	return b->copy_cap + b->coded_cap + b->raw_cap +
	       b->recs_cap;
}

void cb_bufs_release(struct cb_bufs *b)
{
	free(b->copy);
	free(b->coded);
	free(b->raw);
	free(b->recs);
	memset(b, 0, sizeof(*b));
}

/* ---- the pool ------------------------------------------------------------ */

struct cb_worker {
	struct cb_pool *pool;  /* borrowed */
	uint32_t dec;          /* its decoder index */
	pthread_t th;
	bool started;
};

struct cb_pool {
	struct cb_ctx *ctx;                /* borrowed */
	struct cb_worker w[CB_MAX_DECODERS];
	pthread_mutex_t mu;
	pthread_cond_t work;               /* jobs were queued, or stop */
	pthread_cond_t done;               /* a job finished */
	struct cb_job *ring;               /* owned, depth jobs */
	uint32_t depth;
	uint32_t head;                     /* the oldest pending job */
	uint32_t count;                    /* pending jobs */
	uint32_t queued;                   /* of which nobody runs yet */
	uint32_t batch;                    /* queued jobs that wake a worker */
	bool stop;
};

static struct cb_job *cb_pool_queued(struct cb_pool *pool)
{
	uint32_t i;

	if (!pool->queued)
		return NULL;
	for (i = 0; i < pool->count; i++) {
		struct cb_job *j = &pool->ring[(pool->head + i) % pool->depth];

		if (j->state == CB_QUEUED)
			return j;
	}
	return NULL;
}

/* Run queued job j with decoder dec; called and returns with mu held. */
static void cb_pool_run(struct cb_pool *pool, uint32_t dec, struct cb_job *j)
{
	j->state = CB_RUNNING;
	pool->queued--;
	pthread_mutex_unlock(&pool->mu);
	cb_job_run(pool->ctx, dec, j);
	pthread_mutex_lock(&pool->mu);
	j->state = CB_DONE;
}

static void *cb_worker_main(void *arg)
{
	struct cb_worker *w = arg;
	struct cb_pool *pool = w->pool;
	struct cb_job *j;

	crash_thread_begin(); /* a codec's stack overflow is reported too */
	pthread_mutex_lock(&pool->mu);
	for (;;) {
		j = cb_pool_queued(pool);
		if (!j && pool->stop)
			break;
		if (!j) {
			pthread_cond_wait(&pool->work, &pool->mu);
			continue;
		}
		cb_pool_run(pool, w->dec, j);
		pthread_cond_broadcast(&pool->done);
	}
	pthread_mutex_unlock(&pool->mu);
	crash_thread_end();
	return NULL;
}

int cb_pool_new(struct cb_pool **out, struct cb_ctx *ctx, uint32_t depth)
{
	struct cb_pool *pool = calloc(1, sizeof(*pool));
	pthread_mutexattr_t ma;
	uint32_t i;
	int ret;

	if (!pool)
		return -ENOMEM;
	pool->ctx = ctx;
	pool->depth = depth;
	pool->ring = calloc(depth, sizeof(*pool->ring));
	if (!pool->ring) {
		free(pool);
		return -ENOMEM;
	}
	/* held for a few instructions at a time: a thread that finds it
	 * taken spins briefly rather than sleep and be woken */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&pool->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_cond_init(&pool->work, NULL);
	pthread_cond_init(&pool->done, NULL);
	/* a worker wakes for half the ring, not for every block: each wake
	 * is a context switch, as costly as decoding a small block */
	pool->batch = depth / 2 ? depth / 2 : 1;
	/* the last decoder is the caller's, who runs queued jobs itself
	 * rather than wait for them */
	assert(ctx->nr_dec >= 2);
	for (i = 0; i + 1 < ctx->nr_dec; i++) {
		pool->w[i].pool = pool;
		pool->w[i].dec = i;
		ret = pthread_create(&pool->w[i].th, NULL, cb_worker_main,
				     &pool->w[i]);
		if (ret) {
			cb_pool_free(pool);
			return -ret;
		}
		pool->w[i].started = true;
	}
	*out = pool;
	return 0;
}

void cb_pool_free(struct cb_pool *pool)
{
	uint32_t i;

	if (!pool)
		return;
	pthread_mutex_lock(&pool->mu);
	pool->stop = true;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->mu);
	for (i = 0; i < CB_MAX_DECODERS; i++)
		if (pool->w[i].started)
			pthread_join(pool->w[i].th, NULL);
	for (i = 0; i < pool->depth; i++)
		cb_job_release(&pool->ring[i]);
	pthread_mutex_destroy(&pool->mu);
	pthread_cond_destroy(&pool->work);
	pthread_cond_destroy(&pool->done);
	free(pool->ring);
	free(pool);
}

struct cb_job *cb_pool_slot(struct cb_pool *pool)
{
	if (pool->count == pool->depth)
		return NULL;
	return &pool->ring[(pool->head + pool->count) % pool->depth];
}

void cb_pool_submit(struct cb_pool *pool)
{
	pthread_mutex_lock(&pool->mu);
	pool->ring[(pool->head + pool->count) % pool->depth].state = CB_QUEUED;
	pool->count++;
	pool->queued++;
	if (pool->queued >= pool->batch)
		pthread_cond_signal(&pool->work);
	pthread_mutex_unlock(&pool->mu);
}

uint32_t cb_pool_depth(const struct cb_pool *pool)
{
	return pool->depth;
}

uint32_t cb_pool_pending(const struct cb_pool *pool)
{
	return pool->count;
}

struct cb_job *cb_pool_oldest(struct cb_pool *pool)
{
	struct cb_job *j;

	if (!pool->count)
		return NULL;
	j = &pool->ring[pool->head];
	pthread_mutex_lock(&pool->mu);
	while (j->state != CB_DONE) {
		/* jobs nobody runs yet (the oldest first) are run here: the
		 * caller never sleeps while there is work, and a worker is
		 * never needed for the oldest job to finish */
		struct cb_job *q = cb_pool_queued(pool);

		if (!q) {
			pthread_cond_wait(&pool->done, &pool->mu);
			continue;
		}
		/* the next queued job is for a worker, run beside this one
		 * (a caller that waits often decodes at the pace of one) */
		if (pool->queued >= 2)
			pthread_cond_signal(&pool->work);
		cb_pool_run(pool, pool->ctx->nr_dec - 1, q);
	}
	pthread_mutex_unlock(&pool->mu);
	return j;
}

const struct cb_job *cb_pool_head(const struct cb_pool *pool)
{
	return pool->count ? &pool->ring[pool->head] : NULL;
}

struct cb_job *cb_pool_newest(struct cb_pool *pool)
{
	if (!pool->count)
		return NULL;
	return &pool->ring[(pool->head + pool->count - 1) % pool->depth];
}

void cb_pool_retire(struct cb_pool *pool)
{
	pthread_mutex_lock(&pool->mu);
	pool->ring[pool->head].state = CB_FREE;
	pool->head = (pool->head + 1) % pool->depth;
	pool->count--;
	pthread_mutex_unlock(&pool->mu);
}
