/*
 * cwstate.h - the container writer's state, shared by its files and by
 * no one else: cwriter.c (records into per-stream blocks, index and END
 * blocks, the writer's interface), cwdict.c (dictionaries: samples,
 * training, the trial that keeps or drops one), cwqueue.c (the encoder:
 * jobs, the worker thread and its bounded queue), cwout.c (the output:
 * framing, checksums, the codec call, the write, index blocks), cwopen.c
 * (the file header, the metadata block, cwriter_new).  The interface is
 * container.h.
 */
#ifndef PIPE_CWSTATE_H
#define PIPE_CWSTATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "container.h"
#include "err.h"
#include "format.h"
#include "meta.h"

/* an index block at least every this many bytes or ns of record time */
#define CW_INDEX_BYTES (4u << 20)
#define CW_INDEX_NS UINT64_C(2000000000)
/*
 * Dictionaries (docs/format.md "Dictionaries in the writer"): train on
 * about 100x the dictionary size of coded bytes, cut into pieces; with
 * dict=auto keep one only if it saves CW_DICT_PAYS percent over a trial of
 * CW_DICT_TRIAL blocks; every CW_DICT_CHECK blocks compare again, and
 * retrain when the saving fell below half of what it was; at most
 * CW_DICT_MAX dictionaries per file.
 */
#define CW_DICT_SAMPLES 100
#define CW_DICT_SAMPLES_MAX (16u << 20)
#define CW_DICT_PIECE (8u << 10)
#define CW_DICT_TRIAL 16
#define CW_DICT_PAYS 5
#define CW_DICT_CHECK 64
#define CW_DICT_MAX CONTAINER_DICTS_MAX

/* sideband records held for ordering past this are released anyway */
#define CW_HOLD_MAX (64u << 20)

/* raw bytes waiting for the encoder when opts.queue_bytes is 0 */
#define CW_QUEUE_DEFAULT (16u << 20)
/* live, queued blocks wake the worker once this much waits, or when the
 * oldest one's records near their flush interval */
#define CW_KICK_BYTES (4u << 20)
/* live, the caller encodes queued blocks itself before it sleeps for up
 * to this long, while a block takes less (cwriter_idle) */
#define CW_INLINE_NS UINT64_C(5000000)
/* and only while a block encoded there takes under this much wall time,
 * or under an eighth of the time between the caller's sleeps: meanwhile
 * no one drains the rings */
#define CW_INLINE_SHORT_NS UINT64_C(2000000)
/* room after a block's payload: padding to 8 and the trailer */
#define CW_TAIL (7 + 16)
/* done jobs kept with their buffers for reuse */
#define CW_SPARE_MAX 32
/* column encoders kept for the streams' next blocks: each is a block's
 * worth of buffers (about 1.5x block_size), so one made anew faults all
 * its pages in as it fills */
#define CW_TSPARE_MAX 16

/* record-time lag of a pending stream when flush_ns is 0 */
#define CW_LAG_DEFAULT UINT64_C(1000000000)

struct cw_stream {
	uint32_t id;            /* stream id */
	uint8_t *buf;           /* owned pending records */
	size_t len;             /* bytes pending */
	size_t cap;             /* bytes allocated */
	uint32_t records;       /* records pending */
	uint32_t samples;       /* of which samples */
	uint64_t t_min, t_max;  /* times of the pending records, ns */
	uint64_t pending_since; /* monotonic ns of the first tick seeing data */
	struct tenc *enc;       /* owned: the pending records as columns
				   (w->cols; buf is unused then) */
};

/* A sideband record held until the caller's horizon passes its time. */
struct cw_held {
	uint64_t time;          /* record time, ns */
	size_t off;             /* offset of its bytes in the hold buffer */
	uint32_t size;          /* record bytes */
};

enum cw_job_kind {
	CW_JOB_DATA = 0,        /* a stream's raw records, to encode */
	CW_JOB_LOST = 1,        /* a LOST block, payload ready */
	CW_JOB_END = 2,         /* the last index and END; payload ready but
				   for the index offset and block count */
};

/* One block for the encoder, queued in file order. */
struct cw_job {
	struct cw_job *next;    /* queue or spare list */
	int kind;               /* enum cw_job_kind */
	struct fmt_block b;     /* header fields known when it was queued */
	uint8_t *buf;           /* owned: raw records or ready payload */
	struct tenc *enc;       /* owned: a DATA job's records as columns
				   (w->cols; buf is unused then), or kept
				   for the next one */
	size_t len;             /* bytes used */
	size_t cap;             /* bytes allocated */
	uint8_t *blk;           /* owned: the encoded DATA block, its payload
				   (b.stored bytes) at FMT_BLOCK_HDR_SIZE, room
				   for the header before and CW_TAIL after */
	size_t blk_cap;         /* bytes allocated */
	bool encoded;           /* blk and b are ready: only the write is left */
	uint64_t queued_at;     /* monotonic ns its oldest record came (the
				   caller's arrival time; at queueing when
				   unknown) */
};

/* The writer's dictionaries: training bytes, the one in use, its trial. */
struct cw_dicts {
	bool on;                      /* the codec trains and takes them */
	uint32_t cur;                 /* id blocks use now, 0: none */
	uint32_t last;                /* last id written */
	uint8_t *samples;             /* owned training bytes, or NULL */
	size_t samples_len, samples_cap;
	size_t *sizes;                /* owned piece sizes */
	uint32_t nr_sizes;             /* pieces gathered */
	size_t sizes_cap;             /* sizes allocated */
	uint32_t trial_left;          /* blocks still compressed both ways */
	uint64_t trial_with, trial_without; /* their stored bytes */
	uint32_t pays_pct;            /* saving of the current dictionary */
	uint32_t since_check;         /* blocks since the last comparison */
	bool given_up;                /* auto: dictionaries do not pay */
};

/* The entries since the last INDEX block, and when that one was written. */
struct cw_index {
	uint8_t *buf;                 /* owned entries */
	size_t len, cap;              /* bytes used, allocated */
	uint32_t nr;                  /* entries */
	uint64_t prev;                /* offset of the last index, 0: none */
	uint64_t off_at;              /* file offset when it was written */
	uint64_t time_at;             /* record time when it was written */
	bool time_set;                /* time_at is set */
};

struct cwriter {
	struct cw_opts opts;          /* copy; pointers borrowed */
	const struct meta *meta;      /* borrowed, outlives the writer */
	bool stacks;                  /* some event records user stacks */
	struct transform *tf;         /* owned, NULL: transform off */
	bool cols;                    /* records go straight into their
					 stream's columns (transform on, no
					 stack dumps to cut) */
	uint64_t salt;                /* low 8 bytes of the file id */
	uint64_t off;                 /* bytes written so far */
	uint64_t seq;                 /* next block sequence number */
	struct cw_stream **by_id;     /* CPU streams by id, may hold NULL */
	uint32_t nr_by_id;
	struct cw_stream *side;       /* the sideband stream, owned */
	uint32_t nr_streams;          /* CPU stream ids are below this */
	uint64_t last_time;           /* newest record time added */
	uint64_t horizon_cap;         /* records older may still come */
	uint64_t horizon_out;         /* largest horizon written */
	uint64_t arrival_ns;          /* monotonic: records came after, 0 */
	/* sideband records waiting for the cap (records per stream only) */
	struct cw_held *held;         /* owned, sorted by time */
	uint32_t nr_held;
	size_t held_cap;               /* bytes allocated for held */
	uint8_t *hold;                /* owned record bytes of `held` */
	size_t hold_len, hold_cap;
	uint8_t *hold2;               /* owned: where the rest is compacted */
	size_t hold2_cap;
	uint8_t *out;                 /* owned block assembly buffer */
	size_t out_cap;
	uint8_t *zbuf;                /* owned codec output buffer */
	size_t zcap;
	uint8_t *zbuf2;               /* owned: the other trial output */
	size_t zcap2;
	struct cw_dicts dict;         /* dictionaries (cwdict.c) */
	struct cw_index index;        /* entries of the next INDEX block */
	uint64_t dropped_raw;         /* raw bytes of blocks a full queue
					 dropped (st.dropped_records' bytes) */
	uint64_t lost;                /* PERF_RECORD_LOST sum */
	uint64_t throttles;           /* PERF_RECORD_THROTTLE records */
	uint64_t t_first, t_last;     /* record time range */
	bool have_time;
	bool finished;
	struct cw_stats st;           /* the adding side's counts */
	/* the encoder's side (its thread's alone while it runs) */
	uint64_t enc_first, enc_last; /* time range of DATA written, ns */
	uint64_t enc_stored;          /* bytes written */
	uint64_t enc_blocks;          /* DATA blocks written */
	uint64_t pub_stored;          /* enc_stored for cwriter_stats (atomic) */
	uint64_t pub_blocks;          /* enc_blocks likewise */
	/* the queue, under mu */
	pthread_mutex_t mu;
	pthread_cond_t work;          /* a job queued, or quit */
	pthread_cond_t room;          /* a job done */
	pthread_t thread;
	bool thread_on;               /* the worker runs */
	bool quit;                    /* the worker ends when the queue is empty */
	bool flush_req;               /* call opts.flush when the queue is empty */
	struct cw_job *head, *tail;   /* queued, oldest first */
	struct cw_job *spare;         /* done jobs, buffers kept */
	uint32_t nr_spare;
	struct tenc *tspare[CW_TSPARE_MAX]; /* owned column encoders of
					 encoded or done blocks, for the
					 streams' next ones */
	uint32_t nr_tspare;
	size_t queued;                /* raw bytes of queued DATA jobs */
	bool asleep_ok;               /* queued jobs may wait for a kick */
	bool kick;                    /* a flush deadline came: cwriter_idle
					 wakes the worker */
	bool woken;                   /* the worker was signalled and has not
					 slept since: it writes every queued
					 job before it does */
	bool running;                 /* a job is being run (by either side) */
	uint64_t job_ns;              /* CPU ns of the last DATA job, or
					 UINT64_MAX: none yet */
	/* the caller's side (cwriter_idle) */
	uint64_t idle_at;             /* monotonic ns of its last call, 0 */
	uint64_t idle_gap;            /* ns between its calls, averaged */
	uint64_t inline_wall;         /* wall ns of its last encode, decayed
					 while it does not encode */
	int enc_ret;                  /* first encoder failure, 0: none */
	struct pipe_err enc_err;      /* its message */
};

/* cwriter.c */
/* Hand len bytes to opts.write; the offset advances. */
int cw_write(struct cwriter *w, const void *buf, size_t len,
	     struct pipe_err *err);
/* Append one block whose stored payload is `payload` (b->stored bytes);
 * fills in the sequence number and payload checksum.  One write call. */
int cw_put_block(struct cwriter *w, struct fmt_block *b,
		 const void *payload, struct pipe_err *err);
/* The same for a payload already in place at blk + FMT_BLOCK_HDR_SIZE,
 * with CW_TAIL bytes of room after it: header and trailer are written
 * around it, nothing is copied. */
int cw_put_framed(struct cwriter *w, struct fmt_block *b, uint8_t *blk,
		  struct pipe_err *err);
/* An INDEX block of the entries since the last one. */
int cw_write_index(struct cwriter *w, struct pipe_err *err);
/* An INDEX block when enough bytes or record time have passed. */
int cw_maybe_index(struct cwriter *w, struct pipe_err *err);
/* Compress len bytes of src with dictionary `dict` (0: none) into *buf
 * at offset `head` (grown as needed, with CW_TAIL bytes to spare after
 * the codec's bound; w-owned); *out_len the coded length. */
int cw_compress(struct cwriter *w, uint32_t dict, const void *src,
		size_t len, uint8_t **buf, size_t *cap, size_t head,
		size_t *out_len, struct pipe_err *err);

/* cwdict.c */
/* Start gathering training bytes (a no-op past the cap). */
void cw_dict_collect(struct cwriter *w);
/* Keep coded bytes as training pieces while there is room. */
void cw_dict_sample(struct cwriter *w, const uint8_t *p, size_t len);
/* A DICT block for dictionary `id`, then the codec learns it. */
int cw_dict_write(struct cwriter *w, uint32_t id, const void *dict,
		  size_t len, struct pipe_err *err);
/* A trial block was compressed both ways: weigh the dictionary. */
void cw_dict_weigh(struct cwriter *w, size_t with, size_t without);
/* After each DATA block: train, start a trial or compare again. */
int cw_dict_after_block(struct cwriter *w, struct pipe_err *err);

/* cwqueue.c */
/* A job to fill: a spare one with its buffer, or a new one. */
struct cw_job *cw_job_get(struct cwriter *w);
/* Column encoders for a stream's next block: a spare one, reset, or a
 * new one (0 or -ENOMEM). */
int cw_tenc_get(struct cwriter *w, struct tenc **out);
/* Free a job and its buffers (NULL: a no-op). */
void cw_job_free(struct cw_job *j);
/* The time of clock clk, ns. */
uint64_t cw_clock(clockid_t clk);
/* Run the job taken off the queue, mu held on entry and return; one job
 * runs at a time, on the worker (or inline without one). */
void cw_run_locked(struct cwriter *w, struct cw_job *j);
/* Encode a queued DATA job but leave it queued for the worker to write
 * (cwriter_idle), mu held on entry and return; false when none waits. */
bool cw_encode_one_locked(struct cwriter *w);
/* The encoder thread (arg: the writer). */
void *cw_worker(void *arg);
/* Queue a filled job (or run it inline without a worker). */
int cw_queue(struct cwriter *w, struct cw_job *j, struct pipe_err *err);
/* When the oldest job waiting for a kick must be written (mu held). */
uint64_t cw_kick_due_locked(const struct cwriter *w);
/* The END job: its payload but for what the encoder knows. */
int cw_queue_end(struct cwriter *w, struct pipe_err *err);
/* Let the worker finish the queue and end; its failure, if any. */
int cw_stop_worker(struct cwriter *w, struct pipe_err *err);

#endif
