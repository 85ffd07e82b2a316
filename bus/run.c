/*
 * run.c - the bus: pulls batches from the source (records live, or
 * decoded from pipe-file bytes), puts them in time order, keeps the
 * symbolizer's process state, and fans them out to record sinks and,
 * through the container writer, to byte sinks (see run.h).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "conf.h"
#include "container.h"
#include "crash.h"
#include "format.h"
#include "host.h"
#include "hostopts.h"
#include "loader.h"
#include "merge.h"
#include "meta.h"
#include "params.h"
#include "reap.h"
#include "run.h"
#include "symbolizer.h"

#define BATCH_MAX 4096
#define MERGE_BYTES_MAX (512u << 20) /* force a release past this */
#define MAX_FDS 1024
/* how long a failed run lets the command end on SIGTERM, ms */
#define RUN_REAP_GRACE_MS 1000
/* default block size of recordings with user stacks (callchain=dwarf) */
#define RUN_STACK_BLOCK (1u << 20)
#define MORE_ERRORS_MAX 8 /* failures shown after the run's first */
#define SINKQ_BYTES_MAX (64u << 20) /* records queued for record sinks */

#define FLUSH_EVERY_NS 1000000000u /* sinks' flush on live runs */

/* guards pipeline.more: sinks fail on the main and the writer's thread */
static pthread_mutex_t more_mu = PTHREAD_MUTEX_INITIALIZER;

/* One batch copied for the record sinks' thread. */
struct sink_job {
	struct sink_job *next;     /* queue or spare list */
	uint8_t *buf;              /* owned record bytes */
	size_t len, cap;
	struct pipe_record *recs;  /* owned, views into buf */
	size_t nr, rcap;
	uint32_t flags;            /* the batch's flags */
};

/*
 * Live, record sinks run on their own thread (merge, symbolizer, consume):
 * the thread that drains the rings only copies each batch into a job.
 * The queue is bounded; past it the drainer waits, and what the rings
 * lose meanwhile the kernel counts (PERF_RECORD_LOST).
 */
struct sinkq {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work;       /* a job queued, or quit */
	pthread_cond_t room;       /* a job done */
	struct sink_job *head, *tail, *spare;
	size_t bytes;              /* record bytes queued */
	bool quit;                 /* end when the queue is empty */
	bool flush_req;            /* flush the record sinks when idle */
	int ret;                   /* the thread's first failure, 0: none */
	struct pipe_err err;       /* its message */
};

struct codec_slot {
	struct loaded *lp;  /* owned */
	struct inst *inst;  /* reader instances, owned */
};

struct pipeline {
	const struct run_opts *o;
	struct host_run hr;
	struct inst *src;
	struct inst **sinks;        /* all sinks, owned */
	uint32_t nr_sinks;
	bool symbols;               /* some sink wants the symbolizer */
	struct inst *codec;         /* writer's codec, or NULL */
	struct cwriter *writer;     /* when there are byte sinks */
	struct creader *reader;     /* byte source */
	struct merge *merge;        /* record sources with record sinks */
	struct sinkq *sq;           /* live: the record sinks' thread */
	bool counted;               /* records are counted as they come */
	uint64_t m_round_max;       /* the merge's own round times */
	uint64_t m_prev_round_max;
	bool direct;                /* record source: batches go straight
				       into the writer, by stream */
	uint64_t round_max;         /* newest time of this round */
	uint64_t prev_round_max;    /* newest time of the previous round */
	int sigfd;
	struct codec_slot *codecs;  /* reader codecs, by conf order */
	uint32_t nr_codecs;
	struct inst **open_codecs;  /* reader codec instances */
	uint32_t nr_open_codecs;
	struct pipe_err more[MORE_ERRORS_MAX]; /* failures after the first */
	uint32_t nr_more;
	uint8_t *dict_data;         /* dict_file= contents, owned */
	size_t dict_len;
	uint32_t *win_cpus;         /* file source cpus=, owned */
	uint32_t *win_pids;         /* file source pid=, owned */
	/* counts for the live summary */
	uint64_t samples, lost, throttled, records;
	struct timespec t0;
	uint64_t next_status;       /* monotonic ns of the next status line */
	uint64_t next_flush;        /* monotonic ns of the next sink flush */
	uint64_t empty_at;          /* monotonic ns the source was last empty */
	bool status_shown;          /* a status line is on the terminal */
	int cut_signo;              /* a file read stopped by this signal */
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void count_records(struct pipeline *pl, const struct pipe_batch *b)
{
	size_t i;

	for (i = 0; i < b->nr; i++) {
		const struct perf_event_header *h = b->recs[i].hdr;

		pl->records++;
		if (h->type == PERF_RECORD_SAMPLE) {
			pl->samples++;
		} else if (h->type == PERF_RECORD_LOST && h->size >= 24) {
			uint64_t lost;

			memcpy(&lost, (const uint8_t *)h + 16, 8);
			pl->lost += lost;
		} else if (h->type == PERF_RECORD_THROTTLE) {
			pl->throttled++;
		}
	}
}

static bool is_state_record(uint32_t type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
	       type == PERF_RECORD_COMM || type == PERF_RECORD_FORK ||
	       type == PERF_RECORD_EXIT;
}

/*
 * A failure of a sink when `first` already holds the run's failure (0:
 * none yet): the first goes to err, the others are kept to be shown after
 * it.  Returns the run's failure.
 */
static int sink_failed(struct pipeline *pl, int first, int ret,
		       const struct pipe_err *e, struct pipe_err *err)
{
	if (!first) {
		*err = *e;
		return ret;
	}
	/* byte sinks fail on the writer's thread */
	pthread_mutex_lock(&more_mu);
	if (pl->nr_more < MORE_ERRORS_MAX)
		pl->more[pl->nr_more++] = *e;
	pthread_mutex_unlock(&more_mu);
	return first;
}

/* Every record sink gets the batch, even after one of them failed on
 * it, so that each failing sink's error is shown. */
static int consume_all(struct pipeline *pl, const struct pipe_batch *b,
		       bool symbols_only, struct pipe_err *err)
{
	struct pipe_err e;
	uint32_t i;
	int ret, first = 0;

	if (!b->nr)
		return 0;
	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];
		bool sym = s->p->flags & PIPE_PLUGIN_SYMBOLS;

		if ((s->p->flags & PIPE_PLUGIN_BYTES) || s->failed)
			continue;
		if (sym != symbols_only)
			continue;
		ret = s->p->consume ? inst_consume(s, b, &e) :
				      inst_records(s, b, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	return first;
}

/*
 * Symbolizing sinks must see each sample with the process state of its
 * time: cut the batch before every run of state records, apply the run,
 * then hand the next piece over.
 */
static int deliver_symbols(struct pipeline *pl, const struct pipe_batch *b,
			   struct pipe_err *err)
{
	struct pipe_batch part = { .flags = b->flags };
	size_t start = 0, i;
	bool seen_other = false;
	int ret;

	for (i = 0; i < b->nr; i++) {
		if (!is_state_record(b->recs[i].hdr->type)) {
			seen_other = true;
			continue;
		}
		if (seen_other) {
			part.recs = b->recs + start;
			part.nr = i - start;
			ret = consume_all(pl, &part, true, err);
			if (ret < 0)
				return ret;
			start = i;
			seen_other = false;
		}
		symbolizer_apply(pl->hr.sym, b->recs[i].hdr);
	}
	part.recs = b->recs + start;
	part.nr = b->nr - start;
	return consume_all(pl, &part, true, err);
}

static int deliver(struct pipeline *pl, const struct pipe_batch *b,
		   struct pipe_err *err)
{
	int ret;

	if (!b->nr)
		return 0;
	if (!pl->counted)
		count_records(pl, b);
	ret = consume_all(pl, b, false, err);
	if (ret < 0)
		return ret;
	if (pl->symbols) {
		ret = deliver_symbols(pl, b, err);
		if (ret < 0)
			return ret;
	}
	if (pl->writer && !pl->direct)
		return cwriter_add(pl->writer, b, err);
	return 0;
}

static int release(struct pipeline *pl, uint64_t horizon, struct pipe_err *err)
{
	struct pipe_batch b;
	int ret;

	for (;;) {
		merge_pop(pl->merge, horizon, BATCH_MAX, &b);
		if (!b.nr)
			return 0;
		ret = deliver(pl, &b, err);
		if (ret < 0)
			return ret;
	}
}

/* The time-order merge for record sinks, by the source's rounds. */
static int merge_batch(struct pipeline *pl, const struct pipe_batch *b,
		       struct pipe_err *err)
{
	size_t i;
	int ret;

	for (i = 0; i < b->nr; i++)
		if (b->recs[i].time > pl->m_round_max)
			pl->m_round_max = b->recs[i].time;
	ret = merge_push(pl->merge, b->recs, b->nr);
	if (ret < 0)
		return pipe_err_set(err, ret, "cannot buffer records: %s",
				    strerror(-ret));
	if (b->flags & PIPE_BATCH_ROUND_END) {
		ret = release(pl, pl->m_prev_round_max, err);
		pl->m_prev_round_max = pl->m_round_max;
		if (ret < 0)
			return ret;
	}
	if (merge_bytes(pl->merge) > MERGE_BYTES_MAX)
		return release(pl, pl->m_round_max, err);
	return 0;
}

/* Record sinks push buffered output out, on the thread that feeds them. */
static int flush_record_sinks(struct pipeline *pl, struct pipe_err *err)
{
	uint32_t i;
	int ret;

	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];

		if (!s->started || s->failed || (s->p->flags & PIPE_PLUGIN_BYTES))
			continue;
		ret = inst_flush(s, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- the record sinks' thread ------------------------------------------ */

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

static int sinkq_start(struct pipeline *pl, struct pipe_err *err)
{
	struct sinkq *q = calloc(1, sizeof(*q));
	int ret;

	if (!q)
		return -ENOMEM;
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
static int sinkq_stop(struct pipeline *pl, struct pipe_err *err)
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
static int take_batch(struct pipeline *pl, const struct pipe_batch *b,
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

/* ---- the status line (terminals only) --------------------------------- */

static uint64_t since_start(const struct pipeline *pl)
{
	return now_ns(CLOCK_MONOTONIC) - ((uint64_t)pl->t0.tv_sec * 1000000000u +
					  (uint64_t)pl->t0.tv_nsec);
}

/* One line, redrawn at most once a second, after the first second. */
static void status_update(struct pipeline *pl)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), el;
	double secs;

	if (!pl->next_status) /* the first line after a second of work */
		pl->next_status = now - since_start(pl) + 1000000000u;
	if (!pl->hr.tty || pl->hr.quiet || now < pl->next_status)
		return;
	pl->next_status = now + 1000000000u;
	el = since_start(pl);
	secs = (double)el / 1e9;
	if (pl->reader) {
		struct cr_stats st;
		uint64_t size = 0;

		creader_stats(pl->reader, &st);
		inst_byte_size(pl->src, &size);
		fprintf(stderr, "\r\033[Kpipe: reading %.1f MB", (double)st.file_bytes / 1e6);
		if (size)
			fprintf(stderr, " of %.1f MB (%.0f%%)", (double)size / 1e6,
				100.0 * (double)st.file_bytes / (double)size);
		fprintf(stderr, ", %.1f MB/s", (double)st.file_bytes / 1e6 / secs);
	} else {
		struct cw_stats ws = { 0 };

		if (pl->writer)
			cwriter_stats(pl->writer, &ws);
		fprintf(stderr, "\r\033[Kpipe: %.0f s, %llu samples, %.2f MB",
			secs, (unsigned long long)pl->samples,
			(double)ws.stored_bytes / 1e6);
		if (ws.stored_bytes)
			fprintf(stderr, ", %.1fx", (double)ws.raw_bytes /
					      (double)ws.stored_bytes);
		fprintf(stderr, ", %llu lost", (unsigned long long)
			(pl->writer ? ws.lost : pl->lost));
	}
	pl->status_shown = true;
}

static void status_clear(struct pipeline *pl)
{
	if (pl->status_shown)
		fputs("\r\033[K", stderr);
	pl->status_shown = false;
}

/* ---- byte sinks and the writer ---------------------------------------- */

static int write_bytes(void *opaque, const void *buf, size_t len,
		       struct pipe_err *err)
{
	struct pipeline *pl = opaque;
	struct pipe_err e;
	uint32_t i;
	int ret, first = 0;

	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];

		if (!(s->p->flags & PIPE_PLUGIN_BYTES) || s->failed)
			continue;
		ret = inst_write(s, buf, len, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	return first;
}

/* The writer's flush: byte sinks push buffered output out, on the
 * thread that writes to them. */
static int flush_bytes(void *opaque, struct pipe_err *err)
{
	struct pipeline *pl = opaque;
	struct pipe_err e;
	uint32_t i;
	int ret, first = 0;

	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];

		if (!(s->p->flags & PIPE_PLUGIN_BYTES) || s->failed ||
		    !s->started)
			continue;
		ret = inst_flush(s, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	return first;
}

static bool has_byte_sink(const struct pipeline *pl)
{
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++)
		if (pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES)
			return true;
	return false;
}

static bool has_record_sink(const struct pipeline *pl)
{
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++) {
		const struct pipe_plugin *p = pl->sinks[i]->p;

		if (!(p->flags & PIPE_PLUGIN_BYTES) &&
		    (p->consume || p->sample || p->sideband))
			return true;
	}
	return false;
}

/*
 * Without -c: zstd at level 3, and at level 1 for a live recording, whose
 * encoder runs on the machine being profiled: on the size/CPU curve
 * measured against perf record -z (docs/performance.md) level 1 keeps
 * the file under 0.8x perf's for less encoder CPU than level 3.
 */
static const char *default_codec(const struct pipeline *pl)
{
	const struct conf_entry *e = conf_find(pl->o->conf, PIPE_KIND_CODEC,
					       "zstd");

	if (!e || access(e->path, R_OK) != 0)
		return "none";
	return pl->src->p->flags & PIPE_PLUGIN_LIVE ? "zstd:1" : "zstd:3";
}

/* A pre-trained dictionary from dict_file=, copied into the file. */
static int read_dict_file(struct pipeline *pl, const char *path,
			  struct pipe_err *err)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return pipe_err_set(err, -errno, "cannot open dictionary '%s': %s",
				    path, strerror(errno));
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return pipe_err_set(err, -EIO, "cannot read dictionary '%s'", path);
	}
	if (n < 8 || n > (long)CONTAINER_DICT_MAX) {
		fclose(f);
		return pipe_err_set(err, -EINVAL,
				    "cannot use dictionary '%s': %ld bytes (8 B to 1 MiB)",
				    path, n);
	}
	pl->dict_data = malloc((size_t)n);
	if (!pl->dict_data) {
		fclose(f);
		return -ENOMEM;
	}
	pl->dict_len = fread(pl->dict_data, 1, (size_t)n, f);
	fclose(f);
	if (pl->dict_len != (size_t)n)
		return pipe_err_set(err, -EIO, "cannot read dictionary '%s'", path);
	return 0;
}

/* The writer options dict=, dict_size=, dict_file=: for codecs that
 * take dictionaries; asking another codec for one is an error. */
static int writer_dict_opts(struct pipeline *pl, struct cw_opts *wo,
			    struct pipe_err *err)
{
	static const int modes[] = { CW_DICT_AUTO, CW_DICT_ON, CW_DICT_OFF };
	const struct args *a = pl->codec->ctx.args;
	const char *file;
	int64_t m;

	wo->dict_mode = CW_DICT_OFF;
	m = args_int(a, "dict"); /* index in "auto|on|off" */
	if (!pl->codec->p->train || !pl->codec->p->add_dict) {
		if (m != 1 && !args_is_set(a, "dict_file"))
			return 0;
		pipe_err_set(err, -EINVAL, "%s takes no dictionary",
			     pl->codec->ctx.what);
		pipe_err_hint(err, "drop dict= and dict_file=, or use -c zstd");
		return -EINVAL;
	}
	if (m < 0 || m > 2)
		m = 2;
	file = args_str(a, "dict_file");
	if (file && m == 2) {
		pipe_err_set(err, -EINVAL, "codec '%s': dict_file='%s' needs "
			     "dictionaries, and dict=off turns them off",
			     pl->codec->p->name, file);
		pipe_err_hint(err, "drop dict=off to use the dictionary, or "
			      "dict_file= to go without");
		return -EINVAL;
	}
	/*
	 * A training takes up to seconds: on the encoder thread it still
	 * fills the queue a live recording must keep moving, so a live
	 * recording trains only when asked with dict=on or auto;
	 * transcoding trains by default.  A dict_file= needs no training:
	 * live, it is used as with dict=on.
	 */
	if (m == 0 && (pl->src->p->flags & PIPE_PLUGIN_LIVE) &&
	    !args_is_set(a, "dict"))
		m = file ? 1 : 2;
	wo->dict_mode = modes[m];
	wo->dict_size = (uint32_t)args_int(a, "dict_size");
	if (file) {
		int ret = read_dict_file(pl, file, err);

		if (ret < 0)
			return ret;
		wo->dict_data = pl->dict_data;
		wo->dict_len = pl->dict_len;
	}
	return 0;
}

/* Does some event record user stacks (PERF_SAMPLE_STACK_USER)? */
static bool meta_has_stacks(const struct meta *m)
{
	uint32_t i;

	for (i = 0; i < meta_nr_events(m); i++)
		if (meta_attr(m, i)->sample_type & PERF_SAMPLE_STACK_USER)
			return true;
	return false;
}

static int open_writer(struct pipeline *pl, struct pipe_err *err)
{
	const char *spec = pl->o->codec ? pl->o->codec : default_codec(pl);
	struct cw_opts wo = { 0 };
	uint32_t i;
	int64_t tr;
	int ret;

	ret = inst_open(&pl->codec, pl->o->conf, PIPE_KIND_CODEC, spec,
			&pl->hr, err);
	if (ret < 0)
		return ret;
	wo.codec = pl->codec->p;
	wo.codec_state = pl->codec->state;
	wo.codec_ctx = &pl->codec->ctx;
	wo.codec_name = pl->codec->p->name;
	wo.block_size = (uint32_t)args_int(pl->codec->ctx.args, "block");
	/* a sample with a user stack is some 30 times larger: keep about as
	 * many samples of a thread together as the codec needs to find the
	 * stack they share */
	if (!args_is_set(pl->codec->ctx.args, "block") &&
	    meta_has_stacks(pl->hr.meta))
		wo.block_size = RUN_STACK_BLOCK;
	wo.flush_ns = (uint64_t)args_int(pl->codec->ctx.args, "flush");
	tr = args_int(pl->codec->ctx.args, "transform");
	wo.transform = tr == 1 || (tr == 0 && pl->codec->p->codec_id != 0);
	ret = writer_dict_opts(pl, &wo, err);
	if (ret < 0)
		return ret;
	wo.write = write_bytes;
	for (i = 0; i < pl->nr_sinks; i++)
		if ((pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES) &&
		    pl->sinks[i]->p->flush)
			wo.flush = flush_bytes;
	wo.opaque = pl;
	wo.async = true;
	/* the thread that drains the rings must never wait for the encoder */
	wo.drop_when_behind = pl->src->p->flags & PIPE_PLUGIN_LIVE;
	wo.queue_bytes = (size_t)args_int(pl->codec->ctx.args, "queue");
	return cwriter_new(&pl->writer, &wo, pl->hr.meta, err);
}

/* ---- reading pipe files ------------------------------------------------ */

static int reader_codec_open(void *opaque, uint32_t codec_id,
			     const struct pipe_plugin **p, void **state,
			     struct pipe_ctx **ctx, struct pipe_err *err)
{
	struct pipeline *pl = opaque;
	const struct conf *conf = pl->o->conf;
	struct inst *in, **list;
	uint32_t i;
	int ret;

	if (!pl->codecs) {
		pl->codecs = calloc(conf->nr ? conf->nr : 1, sizeof(*pl->codecs));
		if (!pl->codecs)
			return -ENOMEM;
		pl->nr_codecs = conf->nr;
	}
	for (i = 0; i < conf->nr; i++) {
		const struct conf_entry *e = &conf->entries[i];
		struct pipe_err ignored;

		if (e->kind != PIPE_KIND_CODEC)
			continue;
		if (!pl->codecs[i].lp &&
		    loader_open(&pl->codecs[i].lp, e->path, PIPE_KIND_CODEC,
				&ignored) < 0)
			continue;
		if (pl->codecs[i].lp->plugin->codec_id == codec_id)
			break;
	}
	if (i == conf->nr)
		return pipe_err_set(err, -ENOENT,
				    "no codec plugin for codec id %u", codec_id);
	ret = inst_open_loaded(&in, pl->codecs[i].lp, NULL, &pl->hr, err);
	if (ret < 0)
		return ret;
	list = realloc(pl->open_codecs, (pl->nr_open_codecs + 1) * sizeof(*list));
	if (!list) {
		inst_free(in);
		return -ENOMEM;
	}
	pl->open_codecs = list;
	list[pl->nr_open_codecs++] = in;
	*p = in->p;
	*state = in->state;
	*ctx = &in->ctx;
	return 0;
}

static void reader_codec_close(void *opaque, const struct pipe_plugin *p,
			       void *state)
{
	struct pipeline *pl = opaque;
	uint32_t i;

	(void)p;
	for (i = 0; i < pl->nr_open_codecs; i++) {
		if (pl->open_codecs[i] && pl->open_codecs[i]->state == state) {
			inst_free(pl->open_codecs[i]);
			pl->open_codecs[i] = NULL;
		}
	}
}

/* The codec instance's own message for its last failure, then cleared. */
static const char *reader_codec_error(void *opaque, void *state)
{
	struct pipeline *pl = opaque;
	uint32_t i;

	for (i = 0; i < pl->nr_open_codecs; i++) {
		struct inst *in = pl->open_codecs[i];

		if (in && in->state == state) {
			/* copy out so the next failure can write the slot */
			snprintf(in->last_msg, sizeof(in->last_msg), "%s",
				 in->ctx.err.msg);
			pipe_err_clear(&in->ctx.err);
			return in->last_msg;
		}
	}
	return NULL;
}

/* Print a line that may hold names from a file: control bytes become
 * '?', so nothing in it reaches the terminal as an escape sequence. */
static void print_line(const char *prefix, const char *line)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s", line);
	pipe_err_clean(buf);
	fprintf(stderr, "pipe: %s%s\n", prefix, buf);
}

static void reader_report(void *opaque, const char *line)
{
	(void)opaque;
	print_line("", line);
}

/* "0-3+8" items into numbers; *out malloc'd (caller frees). */
static int parse_numbers(const struct inst *src, const char *key,
			 uint32_t **out, uint32_t *nr, struct pipe_err *err)
{
	const char *const *items;
	uint32_t n = args_list(src->ctx.args, key, &items), i, cap = 0;
	uint32_t *v = NULL;

	*out = NULL;
	*nr = 0;
	for (i = 0; i < n; i++) {
		unsigned long a, b;
		char *end;

		a = strtoul(items[i], &end, 10);
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (end == items[i] || *end || b < a || b - a > 65536 ||
		    b > UINT32_MAX) {
			free(v);
			pipe_err_set(err, -EINVAL, "bad value '%s' for '%s' of %s",
				     items[i], key, src->ctx.what);
			pipe_err_hint(err, "expected numbers or ranges joined by '+', as 0-3+8");
			return -EINVAL;
		}
		for (; a <= b; a++) {
			if (*nr == cap) {
				uint32_t *nv;

				cap = cap ? cap * 2 : 16;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[(*nr)++] = (uint32_t)a;
		}
	}
	*out = v;
	return 0;
}

static int open_reader(struct pipeline *pl, bool strict, uint32_t threads,
		       struct pipe_err *err)
{
	struct inst *src = pl->src;
	struct cr_opts ro = { 0 };
	const char *name = inst_subject(src);
	int ret;

	ro.src = src->p;
	ro.src_state = src->state;
	ro.src_ctx = &src->ctx;
	ro.name = name ? name : src->ctx.what;
	ro.strict = strict || args_int(src->ctx.args, "strict");
	ro.codec_open = reader_codec_open;
	ro.codec_close = reader_codec_close;
	ro.codec_error = reader_codec_error;
	ro.report = reader_report;
	ro.opaque = pl;
	ro.threads = threads ? threads :
		     (uint32_t)args_int(src->ctx.args, "threads");
	ro.start_ns = (uint64_t)args_int(src->ctx.args, "start");
	if (args_is_set(src->ctx.args, "stop"))
		ro.stop_ns = (uint64_t)args_int(src->ctx.args, "stop");
	if (ro.stop_ns && ro.stop_ns <= ro.start_ns)
		return pipe_err_set(err, -EINVAL,
				    "stop= must come after start= for %s",
				    src->ctx.what);
	ret = parse_numbers(src, "cpus", &pl->win_cpus, &ro.nr_cpus, err);
	if (ret == 0)
		ret = parse_numbers(src, "pid", &pl->win_pids, &ro.nr_pids, err);
	if (ret < 0)
		return ret;
	ro.cpus = pl->win_cpus;
	ro.pids = pl->win_pids;
	ret = creader_open(&pl->reader, &ro, err);
	if (ret < 0)
		return ret;
	pl->hr.meta = (struct meta *)creader_meta(pl->reader);
	return 0;
}

/* ---- signals ---------------------------------------------------------- */

static int signals_open(struct pipeline *pl, sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return -errno;
	pl->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return pl->sigfd < 0 ? -errno : 0;
}

/* Returns the signal number read, or 0. */
static int signal_take(struct pipeline *pl)
{
	struct signalfd_siginfo si;

	if (read(pl->sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	pl->hr.interrupted = true;
	return (int)si.ssi_signo;
}

/* ---- the loops ---------------------------------------------------------- */

static int stop_source(struct pipeline *pl, int signo, struct pipe_err *err)
{
	return inst_stop(pl->src, signo, err);
}

/* Ask every sink that is working to push its buffered output out, at
 * most once a FLUSH_EVERY_NS (the first time with the first records), so
 * a long run reaches its outputs as it goes. */
static int flush_sinks(struct pipeline *pl, struct pipe_err *err)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint32_t i;
	int ret;

	if (now < pl->next_flush)
		return 0;
	pl->next_flush = now + FLUSH_EVERY_NS;
	/* the record sinks' thread, and the writer's, flush what they feed */
	for (i = 0; pl->sq && i < pl->nr_sinks; i++)
		if (pl->sinks[i]->p->flush &&
		    !(pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES))
			break;
	if (pl->sq && i < pl->nr_sinks) {
		pthread_mutex_lock(&pl->sq->mu);
		pl->sq->flush_req = true;
		pthread_cond_signal(&pl->sq->work);
		pthread_mutex_unlock(&pl->sq->mu);
	}
	for (i = 0; i < pl->nr_sinks; i++) {
		/* (their `failed` is the other thread's to read) */
		if (pl->writer && (pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES))
			continue;
		if (pl->sq && !(pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES))
			continue;
		if (!pl->sinks[i]->started || pl->sinks[i]->failed)
			continue;
		ret = inst_flush(pl->sinks[i], err);
		if (ret < 0)
			return ret;
	}
	return pl->writer ? cwriter_flush_output(pl->writer, err) : 0;
}

/* A started sink pushes buffered output out when asked (flush_sinks). */
static bool sink_flushes(const struct pipeline *pl)
{
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++)
		if (pl->sinks[i]->p->flush && pl->sinks[i]->started)
			return true;
	return false;
}

/*
 * How long the source may sleep: the rings wake the host at their
 * watermark, so a timeout is needed only for the next status line and
 * for flush=: records that came into a quiet ring just after it was
 * drained must reach the file within the flush interval, as must the
 * writer's pending blocks, and sinks that buffer must be asked to flush
 * on time.  At most a second without a writer.
 */
static int wait_timeout(struct pipeline *pl)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), next, w;

	pl->empty_at = now;
	next = now + (pl->writer && pl->codec ?
		      (uint64_t)args_int(pl->codec->ctx.args, "flush") :
		      1000000000u);
	if (pl->writer) {
		cwriter_idle(pl->writer, now);
		cwriter_set_arrival(pl->writer, now);
		w = cwriter_next_tick(pl->writer);
		if (w < next)
			next = w;
	}
	if (pl->hr.tty && !pl->hr.quiet && pl->next_status &&
	    pl->next_status < next)
		next = pl->next_status;
	if (pl->next_flush && pl->next_flush < next && sink_flushes(pl))
		next = pl->next_flush;
	if (next <= now)
		return 0;
	/* round up: waking a little late beats waking twice */
	return (int)((next - now + 999999) / 1000000);
}

static int wait_source(struct pipeline *pl, struct pipe_err *err)
{
	struct pollfd pfd[MAX_FDS + 1];
	int fds[MAX_FDS], n = 0, i, ret, signo;

	n = inst_fds(pl->src, fds, MAX_FDS, err);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
	}
	pfd[n].fd = pl->sigfd;
	pfd[n].events = POLLIN;
	ret = poll(pfd, (nfds_t)n + 1, wait_timeout(pl));
	if (ret < 0 && errno != EINTR)
		return pipe_err_set(err, -errno, "poll failed: %s",
				    strerror(errno));
	if (pfd[n].revents & POLLIN) {
		signo = signal_take(pl);
		if (signo)
			return stop_source(pl, signo, err);
	}
	status_update(pl);
	if (pl->writer) {
		/* awake anyway: flush what would soon end a sleep */
		ret = cwriter_tick(pl->writer, now_ns(CLOCK_MONOTONIC),
				   (uint64_t)args_int(pl->codec->ctx.args,
						      "flush") / 2, err);
		if (ret < 0)
			return ret;
	}
	return flush_sinks(pl, err);
}

static int loop_records(struct pipeline *pl, struct pipe_err *err)
{
	struct pipe_batch b;
	int ret, signo;

	pl->direct = pl->writer != NULL;
	if (pl->direct) {
		/* nothing is known to have come yet */
		ret = cwriter_cap_horizon(pl->writer, 0, err);
		if (ret < 0)
			return ret;
	}
	pl->counted = true;
	if (has_record_sink(pl)) {
		ret = merge_new(&pl->merge);
		if (ret == 0 && (pl->src->p->flags & PIPE_PLUGIN_LIVE))
			ret = sinkq_start(pl, err);
		if (ret < 0)
			return ret;
	}
	for (;;) {
		ret = inst_read(pl->src, &b, err);
		if (ret == PIPE_EOF)
			break;
		if (ret == -EAGAIN) {
			ret = wait_source(pl, err);
			if (ret < 0)
				return ret;
			continue;
		}
		if (ret < 0)
			return ret;
		ret = take_batch(pl, &b, err);
		if (ret == 0)
			ret = flush_sinks(pl, err);
		if (ret < 0)
			return ret;
		status_update(pl);
		signo = signal_take(pl);
		if (signo) {
			ret = stop_source(pl, signo, err);
			if (ret < 0)
				return ret;
		}
	}
	if (pl->sq)
		return sinkq_stop(pl, err);
	if (pl->merge)
		return release(pl, UINT64_MAX, err);
	return 0;
}

static int loop_bytes(struct pipeline *pl, struct pipe_err *err)
{
	struct pipe_batch b;
	int ret;

	for (;;) {
		ret = creader_next(pl->reader, &b, err);
		if (ret == PIPE_EOF)
			return 0;
		if (ret < 0)
			return ret;
		ret = deliver(pl, &b, err);
		if (ret == 0)
			ret = flush_sinks(pl, err);
		if (ret < 0)
			return ret;
		status_update(pl);
		pl->cut_signo = signal_take(pl);
		if (pl->cut_signo)
			return 0; /* finish what was read; run_pipeline says so */
	}
}

/* ---- set-up and tear-down --------------------------------------------- */

static int open_sinks(struct pipeline *pl, struct pipe_err *err)
{
	uint32_t i;
	int ret;

	pl->sinks = calloc(pl->o->nr_sinks, sizeof(*pl->sinks));
	if (!pl->sinks)
		return -ENOMEM;
	for (i = 0; i < pl->o->nr_sinks; i++) {
		ret = inst_open(&pl->sinks[i], pl->o->conf, PIPE_KIND_SINK,
				pl->o->sinks[i], &pl->hr, err);
		if (ret < 0)
			return ret;
		pl->nr_sinks++;
		if (pl->sinks[i]->p->flags & PIPE_PLUGIN_SYMBOLS)
			pl->symbols = true;
	}
	return 0;
}

static void sym_warn(void *opaque, const char *line)
{
	(void)opaque;
	print_line("warning: ", line);
}

/*
 * The symbolizer is shared: its debug_dir= comes from whichever sink
 * gives one, and two sinks giving different ones is an error.  (demangle=
 * stays each sink's own: the host applies it per call.)
 */
static int sym_opts_from_sinks(struct pipeline *pl,
			       struct symbolizer_opts *so, struct pipe_err *err)
{
	const struct inst *from = NULL;
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];
		const char *dir;

		if (!(s->p->flags & PIPE_PLUGIN_SYMBOLS))
			continue;
		/* off when any sink says so; the shortest time limit */
		if (!args_int(s->ctx.args, "debuginfod"))
			so->debuginfod = false;
		if ((uint64_t)args_int(s->ctx.args, "debuginfod_timeout") <
		    so->debuginfod_timeout_ns)
			so->debuginfod_timeout_ns =
				(uint64_t)args_int(s->ctx.args,
						   "debuginfod_timeout");
		dir = args_str(s->ctx.args, "debug_dir");
		if (!dir)
			continue;
		if (from && strcmp(dir, so->debug_dir)) {
			pipe_err_set(err, -EINVAL, "%s and %s give different "
				     "debug_dir= values", from->ctx.what,
				     s->ctx.what);
			pipe_err_hint(err, "the symbolizer is shared: give "
				      "the same directory, or one sink only");
			return -EINVAL;
		}
		so->debug_dir = dir;
		from = s;
	}
	return 0;
}

static int start_sinks(struct pipeline *pl, struct pipe_err *err)
{
	struct symbolizer_opts so = { .demangle = true, .warn = sym_warn,
				      .debuginfod = true,
				      .debuginfod_timeout_ns = UINT64_MAX,
				      .interrupted = &pl->hr.interrupted };
	uint32_t i;
	int ret;

	ret = sym_opts_from_sinks(pl, &so, err);
	if (ret < 0)
		return ret;
	if (pl->symbols) {
		ret = symbolizer_new(&pl->hr.sym, &so, pl->hr.meta, err);
		if (ret < 0)
			return ret;
	}
	if (has_byte_sink(pl)) {
		ret = open_writer(pl, err);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < pl->nr_sinks; i++) {
		ret = inst_start_sink(pl->sinks[i], err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * End the outputs of every sink that started and has not failed: finish
 * runs after a successful run and after a failed one alike, so what the
 * sinks got ends cleanly (a failed sink gets only close).  After a
 * successful run (ok) the files the sinks opened take their place once
 * every finish succeeded; otherwise (a failed or interrupted run) the pipe
 * file keeps the blocks written so far but gets no trailer, so it does
 * not read as a complete recording, and the outputs are abandoned when
 * the sinks are freed.  `first` is the run's failure so far (0: none, err
 * holds it).
 */
static int finish_sinks(struct pipeline *pl, bool ok, int first,
			struct pipe_err *err)
{
	struct pipe_err e;
	uint32_t i;
	int ret;

	/* after a failure the sinks' thread may still run: end it first */
	ret = sinkq_stop(pl, &e);
	if (ret < 0)
		first = sink_failed(pl, first, ret, &e, err);
	if (pl->writer) {
		ret = ok ? cwriter_finish(pl->writer, &e) :
			   cwriter_cut(pl->writer, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	for (i = 0; i < pl->nr_sinks; i++) {
		if (!pl->sinks[i]->started || pl->sinks[i]->failed)
			continue;
		ret = inst_finish(pl->sinks[i], &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	for (i = 0; ok && !first && i < pl->nr_sinks; i++) {
		ret = inst_outputs_end(pl->sinks[i], true, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	return first;
}

/* Show the failures that came after the run's first, after it. */
static void show_more(struct pipeline *pl, struct pipe_err *err)
{
	uint32_t i;

	if (!pl->nr_more)
		return;
	pipe_err_print(err);
	for (i = 0; i < pl->nr_more; i++)
		pipe_err_print(&pl->more[i]);
	pipe_err_clear(err);
}

static void print_summary(struct pipeline *pl)
{
	double secs = (double)since_start(pl) / 1e9;
	uint32_t cpus = pl->hr.meta ? meta_view(pl->hr.meta)->nr_streams : 1;
	struct cw_stats ws = { 0 };

	if (pl->writer)
		cwriter_stats(pl->writer, &ws);
	fprintf(stderr,
		"pipe: %llu samples, %llu lost, %llu throttled, "
		"%.0f samples/s per CPU over %.2f s",
		/* with a file: what the file holds and says was lost */
		(unsigned long long)(pl->samples - ws.dropped_samples),
		(unsigned long long)(pl->writer ? ws.lost : pl->lost),
		(unsigned long long)pl->throttled,
		secs > 0 && cpus ? (double)pl->samples / secs / cpus : 0.0,
		secs);
	if (pl->writer)
		fprintf(stderr, ", raw %.2f MB, stored %.2f MB (%.2fx)",
			(double)ws.raw_bytes / 1e6,
			(double)ws.stored_bytes / 1e6,
			ws.stored_bytes ? (double)ws.raw_bytes /
					  (double)ws.stored_bytes : 0.0);
	fputc('\n', stderr);
}

static void say_cut(const struct pipeline *pl)
{
	struct cr_stats st;

	creader_stats(pl->reader, &st);
	fprintf(stderr, "pipe: interrupted (SIG%s) after %llu records: the "
		"output is incomplete\n", sigabbrev_np(pl->cut_signo),
		(unsigned long long)st.records);
}

/* Blocks the encoder could not take in time: a warning even with -q. */
static void warn_dropped(const struct pipeline *pl)
{
	struct cw_stats ws = { 0 };

	if (pl->writer)
		cwriter_stats(pl->writer, &ws);
	if (ws.dropped_blocks)
		fprintf(stderr, "pipe: warning: the encoder fell behind: %llu "
			"blocks (%llu records, %llu samples) were dropped and "
			"are counted lost in the file\n"
			"hint: use a faster codec level (such as -c zstd:1) or "
			"a larger queue= in -c\n",
			(unsigned long long)ws.dropped_blocks,
			(unsigned long long)ws.dropped_records,
			(unsigned long long)ws.dropped_samples);
}

static void pipeline_free(struct pipeline *pl)
{
	struct pipe_err ignored;
	uint32_t i;

	sinkq_stop(pl, &ignored);
	cwriter_free(pl->writer);
	for (i = 0; i < pl->nr_sinks; i++)
		inst_free(pl->sinks[i]);
	free(pl->sinks);
	inst_free(pl->codec);
	if (pl->hr.sym)
		symbolizer_free(pl->hr.sym);
	creader_free(pl->reader);
	merge_free(pl->merge);
	if (!pl->reader && pl->hr.meta)
		meta_free(pl->hr.meta);
	for (i = 0; i < pl->nr_open_codecs; i++)
		inst_free(pl->open_codecs[i]);
	free(pl->open_codecs);
	for (i = 0; i < pl->nr_codecs; i++)
		loader_close(pl->codecs[i].lp);
	free(pl->codecs);
	inst_free(pl->src);
	free(pl->win_cpus);
	free(pl->win_pids);
	free(pl->dict_data);
	if (pl->sigfd >= 0)
		close(pl->sigfd);
}

static int exit_status(const struct pipeline *pl, int ret)
{
	int st = pl->hr.command_status;

	/* the command was not found (127) or could not run (126) */
	if (st >= 0 && WIFEXITED(st) &&
	    (WEXITSTATUS(st) == 127 || WEXITSTATUS(st) == 126))
		return WEXITSTATUS(st);
	if (ret < 0)
		return 1;
	if (st < 0)
		return 0;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int run_pipeline(const struct run_opts *o, struct pipe_err *err)
{
	struct pipeline pl = { .o = o, .sigfd = -1 };
	sigset_t old;
	int ret;

	pl.hr.command = o->command;
	pl.hr.command_status = -1;
	pl.hr.quiet = o->quiet;
	pl.hr.verbose = o->verbose;
	pl.hr.tty = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &pl.t0);
	crash_install();
	ret = signals_open(&pl, &old);
	if (ret < 0) {
		pipe_err_set(err, ret, "cannot set up signals: %s", strerror(-ret));
		goto out;
	}
	/* the command's orphans come back to pipe, to be ended on failure */
	if (o->command) {
		int r = reap_adopt();

		if (r < 0)
			fprintf(stderr, "pipe: warning: cannot adopt the "
				"command's orphans: %s\n", strerror(-r));
	}
	ret = inst_open(&pl.src, o->conf, PIPE_KIND_SOURCE, o->source, &pl.hr,
			err);
	if (ret < 0)
		goto out;
	if (o->command && !(pl.src->p->flags & PIPE_PLUGIN_LIVE)) {
		ret = pipe_err_set(err, -EINVAL,
				   "%s does not run a command",
				   pl.src->ctx.what);
		pipe_err_hint(err, "a command after -- needs a live source, such as -s perf");
		pl.hr.command_status = 2 << 8; /* usage */
		goto out;
	}
	if (pl.src->p->flags & PIPE_PLUGIN_BYTES)
		pl.hr.input = inst_subject(pl.src);
	ret = open_sinks(&pl, err);
	if (ret < 0)
		goto out;
	if (o->codec && !has_byte_sink(&pl)) {
		ret = pipe_err_set(err, -EINVAL,
				   "-c '%s' needs a sink that writes a pipe file",
				   o->codec);
		pipe_err_hint(err, "add one, such as -k file:out.dat");
		pl.hr.command_status = 2 << 8;
		goto out;
	}
	if (pl.src->p->flags & PIPE_PLUGIN_BYTES) {
		ret = open_reader(&pl, false, 0, err);
	} else {
		pl.hr.meta = meta_new();
		ret = pl.hr.meta ? inst_start(pl.src, err) : -ENOMEM;
	}
	if (ret < 0)
		goto out;
	ret = start_sinks(&pl, err);
	if (ret < 0)
		goto out;
	if (pl.reader)
		ret = loop_bytes(&pl, err);
	else
		ret = loop_records(&pl, err);
	if (ret < 0) {
		/* keep what was written: close the outputs cleanly anyway */
		status_clear(&pl);
		finish_sinks(&pl, false, ret, err);
		goto out;
	}
	status_clear(&pl);
	/* an interrupted read: the outputs have what was read, a pipe file
	 * is cut (no trailer), an existing file is not replaced by them, and
	 * the exit status says so (128+N) */
	ret = finish_sinks(&pl, pl.cut_signo == 0, 0, err);
	if (ret == 0 && pl.cut_signo)
		say_cut(&pl);
	if (ret == 0 && (pl.src->p->flags & PIPE_PLUGIN_LIVE) && !o->quiet)
		print_summary(&pl);
	if (ret == 0)
		warn_dropped(&pl);
out:
	{
		int code = exit_status(&pl, ret);

		if (pl.hr.command_status == (2 << 8) && ret < 0)
			code = 2;
		if (ret == 0 && pl.cut_signo)
			code = 128 + pl.cut_signo;
		/* a failed run ends the command and all it started, as perf
		 * record ends its workload: SIGTERM, then SIGKILL */
		if (ret < 0 && o->command)
			reap_terminate(RUN_REAP_GRACE_MS);
		if (ret < 0)
			show_more(&pl, err);
		if (o->breaches)
			*o->breaches = pl.hr.breaches;
		pipeline_free(&pl);
		if (ret < 0 && o->command)
			reap_all(RUN_REAP_GRACE_MS);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return code;
	}
}

/* ---- whole-file scans: pipe info, pipe verify ------------------------- */

struct stream_hash {
	uint32_t stream;       /* stream id */
	XXH3_state_t *state;   /* owned */
};

struct digest {
	struct stream_hash *s; /* owned, nr used of cap */
	uint32_t nr, cap;
	uint32_t *slot;        /* owned: 1 + index in s by stream id (the
				* sideband last), 0: none yet */
};

/* The hash of a stream, found in constant time: a crafted file may hold
 * as many streams as the format allows. */
static XXH3_state_t *digest_stream(struct digest *d, uint32_t stream)
{
	uint32_t key = stream == PIPE_STREAM_SIDEBAND ? META_MAX_STREAMS
						      : stream;
	struct stream_hash *s;
	uint32_t i;

	if (!d->slot) {
		d->slot = calloc(META_MAX_STREAMS + 1, sizeof(*d->slot));
		if (!d->slot)
			return NULL;
	}
	if (key <= META_MAX_STREAMS && d->slot[key])
		return d->s[d->slot[key] - 1].state;
	for (i = 0; key > META_MAX_STREAMS && i < d->nr; i++)
		if (d->s[i].stream == stream)
			return d->s[i].state;
	if (d->nr == d->cap) {
		uint32_t cap = d->cap ? 2 * d->cap : 16;

		s = realloc(d->s, cap * sizeof(*s));
		if (!s)
			return NULL;
		d->s = s;
		d->cap = cap;
	}
	s = &d->s[d->nr];
	s->stream = stream;
	s->state = XXH3_createState();
	if (!s->state)
		return NULL;
	XXH3_64bits_reset(s->state);
	d->nr++;
	if (key <= META_MAX_STREAMS)
		d->slot[key] = d->nr;
	return s->state;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct stream_hash *x = a, *y = b;

	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* Each stream's records in order, then the streams combined by id. */
static uint64_t digest_final(struct digest *d)
{
	XXH3_state_t *all = XXH3_createState();
	uint64_t h = 0;
	uint32_t i;

	if (!all)
		return 0;
	if (d->nr)
		qsort(d->s, d->nr, sizeof(*d->s), cmp_stream);
	XXH3_64bits_reset(all);
	for (i = 0; i < d->nr; i++) {
		uint64_t sh = XXH3_64bits_digest(d->s[i].state);

		XXH3_64bits_update(all, &d->s[i].stream, sizeof(uint32_t));
		XXH3_64bits_update(all, &sh, sizeof(sh));
	}
	h = XXH3_64bits_digest(all);
	XXH3_freeState(all);
	return h;
}

static void digest_release(struct digest *d)
{
	uint32_t i;

	for (i = 0; i < d->nr; i++)
		XXH3_freeState(d->s[i].state);
	free(d->s);
	free(d->slot);
}

/* "file:" + path with the parameter syntax's specials escaped */
static char *file_spec(const char *path)
{
	size_t n = strlen(path), i, j = 5;
	char *s = malloc(5 + 2 * n + 1);

	if (!s)
		return NULL;
	memcpy(s, "file:", 5);
	for (i = 0; i < n; i++) {
		if (strchr(",+=\\:", path[i]))
			s[j++] = '\\';
		s[j++] = path[i];
	}
	s[j] = '\0';
	return s;
}

/* A pipeline of byte source `spec` and its reader, for whole-file
 * reads; free with pipeline_free. */
static int open_file_read(struct pipeline *pl, const char *spec, bool strict,
			  uint32_t threads, struct pipe_err *err)
{
	int ret;

	pl->hr.command_status = -1;
	pl->hr.tty = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &pl->t0);
	crash_install();
	ret = inst_open(&pl->src, pl->o->conf, PIPE_KIND_SOURCE, spec,
			&pl->hr, err);
	if (ret < 0)
		return ret;
	if (!(pl->src->p->flags & PIPE_PLUGIN_BYTES)) {
		ret = pipe_err_set(err, -EINVAL, "%s does not read pipe files",
				   pl->src->ctx.what);
		pipe_err_hint(err, "use -s file:FILE");
		return ret;
	}
	return open_reader(pl, strict, threads, err);
}

/* res->meta: a copy of the reader's metadata. */
static int copy_meta(struct pipeline *pl, const char *spec,
		     struct scan_result *res, struct pipe_err *err)
{
	uint8_t *buf;
	size_t len;
	int ret;

	ret = meta_encode(creader_meta(pl->reader), &buf, &len, err);
	if (ret == 0) {
		ret = meta_decode(&res->meta, buf, len, spec, err);
		free(buf);
	}
	return ret;
}

int run_read(const struct conf *conf, const char *spec, bool strict,
	     uint32_t threads, run_batch_fn fn, void *opaque,
	     struct scan_result *res, struct pipe_err *err)
{
	struct run_opts o = { .conf = conf, .quiet = true };
	struct pipeline pl = { .o = &o, .sigfd = -1 };
	struct pipe_batch b;
	uint64_t size = 0;
	int ret;

	memset(res, 0, sizeof(*res));
	ret = open_file_read(&pl, spec, strict, threads, err);
	if (ret < 0)
		goto out;
	for (;;) {
		ret = creader_next(pl.reader, &b, err);
		if (ret == PIPE_EOF) {
			ret = 0;
			break;
		}
		if (ret == 0)
			ret = fn(opaque, creader_meta(pl.reader), &b, err);
		if (ret < 0)
			goto out;
		status_update(&pl);
	}
	status_clear(&pl);
	creader_stats(pl.reader, &res->st);
	if (inst_byte_size(pl.src, &size) == 0)
		res->file_size = size;
	ret = copy_meta(&pl, spec, res, err);
out:
	pl.hr.meta = NULL;
	pipeline_free(&pl);
	return ret;
}

struct scan_state {
	struct digest d;
	uint64_t last_time;
	uint64_t out_of_order;
};

static int scan_batch(void *opaque, const struct meta *m,
		      const struct pipe_batch *b, struct pipe_err *err)
{
	struct scan_state *ss = opaque;
	size_t i;

	(void)m;
	(void)err;
	for (i = 0; i < b->nr; i++) {
		XXH3_state_t *st = digest_stream(&ss->d, b->recs[i].stream);

		if (!st)
			return -ENOMEM;
		XXH3_64bits_update(st, b->recs[i].hdr, b->recs[i].hdr->size);
		if (b->recs[i].time < ss->last_time)
			ss->out_of_order++;
		else
			ss->last_time = b->recs[i].time;
	}
	return 0;
}

int run_scan(const struct conf *conf, const char *path, bool strict,
	     uint32_t threads, struct scan_result *res, struct pipe_err *err)
{
	char *spec = file_spec(path);
	int ret;

	if (!spec)
		return -ENOMEM;
	ret = run_scan_spec(conf, spec, strict, threads, res, err);
	free(spec);
	return ret;
}

int run_scan_spec(const struct conf *conf, const char *spec, bool strict,
		  uint32_t threads, struct scan_result *res,
		  struct pipe_err *err)
{
	struct scan_state ss = { { 0 }, 0, 0 };
	int ret;

	ret = run_read(conf, spec, strict, threads, scan_batch, &ss, res, err);
	if (ret == 0) {
		res->out_of_order = ss.out_of_order;
		snprintf(res->digest, sizeof(res->digest), "%016llx",
			 (unsigned long long)digest_final(&ss.d));
	}
	digest_release(&ss.d);
	return ret;
}

int run_info(const struct conf *conf, const char *path, bool scan,
	     struct scan_result *res, bool *scanned, struct pipe_err *err)
{
	struct run_opts o = { .conf = conf, .quiet = true };
	struct pipeline pl = { .o = &o, .sigfd = -1 };
	char *spec = file_spec(path);
	int ret = 1;

	memset(res, 0, sizeof(*res));
	*scanned = true;
	if (!spec)
		return -ENOMEM;
	if (!scan) {
		ret = open_file_read(&pl, spec, false, 1, err);
		if (ret == 0)
			ret = creader_summary(pl.reader, &res->st, err);
		if (ret == 0) {
			res->file_size = res->st.file_bytes;
			ret = copy_meta(&pl, spec, res, err);
			*scanned = false;
		}
		pl.hr.meta = NULL;
		pipeline_free(&pl);
	}
	free(spec);
	if (ret > 0)
		return run_scan(conf, path, false, 0, res, err);
	return ret;
}

void scan_result_release(struct scan_result *res)
{
	meta_free(res->meta);
	res->meta = NULL;
}
