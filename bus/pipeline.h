/*
 * pipeline.h - the bus's own state, shared by its files and by no one
 * else: run.c (set-up, the loops, delivery), sinkq.c (the record sinks'
 * thread), bytesinks.c (the writer and byte sinks), readfile.c (reading
 * pipe files), status.c (the status line and summaries), scan.c (info
 * and verify).  The bus's interface is run.h.
 */
#ifndef PIPE_PIPELINE_H
#define PIPE_PIPELINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "container.h"
#include "err.h"
#include "host.h"
#include "meta.h"
#include "pipe_plugin.h"
#include "run.h"

#define BATCH_MAX 4096
#define MERGE_BYTES_MAX (512u << 20) /* force a release past this */
#define MAX_FDS 1024
/* how long a failed run lets the command end on SIGTERM, ms */
#define RUN_REAP_GRACE_MS 1000
/* default block size of recordings with user stacks (callchain=dwarf) */
#define RUN_STACK_BLOCK (1u << 20)
#define MORE_ERRORS_MAX 8 /* failures shown after the run's first */

#define FLUSH_EVERY_NS 1000000000u /* sinks' flush on live runs */

/* A source's rounds, by their batches' PIPE_BATCH_ROUND_END: every
 * record after a round is newer than the newest of the round before. */
struct rounds {
	uint64_t max;               /* newest time of this round */
	uint64_t prev_max;          /* newest time of the previous round */
};

/* One batch copied for the record sinks' thread. */
struct sink_job {
	struct sink_job *next;     /* queue or spare list */
	uint8_t *buf;              /* owned record bytes */
	size_t len, cap;           /* bytes used, allocated */
	struct pipe_record *recs;  /* owned, views into buf */
	size_t nr, rcap;           /* records used, allocated */
	uint32_t flags;            /* the batch's flags */
};

/*
 * Live, record sinks run on their own thread (merge, symbolizer, consume):
 * the thread that drains the rings only copies each batch into a job.
 * The queue is bounded (the record sinks' queue=); past it the drainer
 * never waits: the batch is dropped for the record sinks, who get a
 * PERF_RECORD_LOST for it, and the run warns at its end.  Byte sinks
 * (the file) get every batch either way.
 */
struct sinkq {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work;       /* a job queued, or quit */
	pthread_cond_t room;       /* a job done */
	struct sink_job *head, *tail, *spare;
	size_t bytes;              /* record bytes queued */
	size_t limit;              /* at most this many (the sinks' queue=) */
	uint64_t dropped_records;  /* not queued: the queue was full */
	uint64_t dropped_samples;
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
	struct meta *live_meta;     /* owned: a record source's metadata,
				       which hr.meta borrows; NULL when
				       hr.meta is the reader's */
	uint64_t lines_said;        /* its damage lines printed */
	uint64_t lines_skip;        /* ... and not printed: said already */
	struct merge *merge;        /* record sources with record sinks */
	struct sinkq *sq;           /* live: the record sinks' thread */
	uint64_t sinks_dropped_records; /* its queue's drops, once ended */
	uint64_t sinks_dropped_samples;
	bool counted;               /* records are counted as they come */
	struct rounds m_rounds;     /* the merge's own round times */
	bool direct;                /* record source: batches go straight
				       into the writer, by stream */
	struct rounds rounds;       /* the source's rounds */
	int sigfd;
	struct codec_slot *codecs;  /* reader codecs, by conf order */
	uint32_t nr_codecs;
	struct inst **open_codecs;  /* reader codec instances */
	uint32_t nr_open_codecs;
	size_t cap_open_codecs;     /* room in open_codecs */
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
	uint64_t woke_at;           /* monotonic ns the source's wait ended */
	uint64_t wake_gap;          /* ns between those ends, averaged */
	bool status_shown;          /* a status line is on the terminal */
	int cut_signo;              /* a file read stopped by this signal */
	bool usage_error;           /* the run failed on its usage: exit 2 */
};


/* run.c: delivery and the pipeline's end */
uint64_t now_ns(clockid_t clk);
void count_records(struct pipeline *pl, const struct pipe_batch *b);
/* Keep a sink's failure: the first goes to *err, later ones to pl->more;
 * returns the first failure's code. */
int sink_failed(struct pipeline *pl, int first, int ret,
		const struct pipe_err *e, struct pipe_err *err);
/* Batch b's times into r; true at the end of a round, with *horizon the
 * newest time of the round before: no later record is older. */
bool rounds_take(struct rounds *r, const struct pipe_batch *b,
		 uint64_t *horizon);
/* Hand the merged records older than horizon to the record sinks. */
int release(struct pipeline *pl, uint64_t horizon, struct pipe_err *err);
int merge_batch(struct pipeline *pl, const struct pipe_batch *b,
		struct pipe_err *err);
int flush_record_sinks(struct pipeline *pl, struct pipe_err *err);
void pipeline_free(struct pipeline *pl);

/* sinkq.c: the record sinks' thread */
int sinkq_start(struct pipeline *pl, struct pipe_err *err);
int sinkq_stop(struct pipeline *pl, struct pipe_err *err);
/* A live batch: to the record sinks' thread (copied) or delivered here. */
int take_batch(struct pipeline *pl, const struct pipe_batch *b,
	       struct pipe_err *err);

/* status.c: the terminal */
void status_update(struct pipeline *pl);
void status_clear(struct pipeline *pl);
void print_summary(struct pipeline *pl);
void say_cut(const struct pipeline *pl);
void warn_dropped(const struct pipeline *pl);
void warn_malformed(const struct pipeline *pl);

/* bytesinks.c: the writer and the byte sinks */
bool has_byte_sink(const struct pipeline *pl);
bool has_record_sink(const struct pipeline *pl);
int open_writer(struct pipeline *pl, struct pipe_err *err);

/* readfile.c: reading a pipe file */
void print_line(const char *prefix, const char *line);
int open_reader(struct pipeline *pl, uint32_t threads, struct pipe_err *err);

#endif
