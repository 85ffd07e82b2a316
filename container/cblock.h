/*
 * cblock.h - decoding DATA blocks for the container reader (internal to
 * creader.c): checksum, codec, inverse transform, record walk and window
 * filter of one block as a job, run inline or on a pool of worker threads
 * that keeps file order and a fixed number of blocks in flight.
 */
#ifndef PIPE_CBLOCK_H
#define PIPE_CBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "container.h"
#include "format.h"

struct meta;
struct cb_pool;

#define CB_MAX_CODECS 16
#define CB_MAX_DECODERS 64
#define CB_MAX_DICTS CONTAINER_DICTS_MAX

/* One codec id and an instance of it per decoder. */
struct cb_codec {
	uint32_t id;                          /* codec id of block headers */
	bool ok;                              /* instances are open */
	bool nomem;                           /* not, for want of memory */
	const struct pipe_plugin *p[CB_MAX_DECODERS];
	void *state[CB_MAX_DECODERS];
	struct pipe_ctx *ctx[CB_MAX_DECODERS]; /* their instances */
	char why[512];                        /* why it could not open */
};

/* A dictionary seen in the file, kept for instances opened later. */
struct cb_dict {
	uint32_t codec;                       /* codec id it is for */
	uint32_t id;                          /* dictionary id */
	uint8_t *bytes;                       /* owned */
	size_t len;
};

/* What every decoder shares; read-only while jobs run. */
struct cb_ctx {
	const struct meta *meta;              /* borrowed */
	uint64_t salt;                        /* file salt */
	uint32_t nr_dec;                      /* decoders (workers, or 1) */
	struct transform *tf[CB_MAX_DECODERS]; /* owned, made on first use */
	struct cb_codec codecs[CB_MAX_CODECS];
	uint32_t nr_codecs;
	struct cb_dict dicts[CB_MAX_DICTS];
	uint32_t nr_dicts;
	container_codec_open_fn codec_open;
	container_codec_close_fn codec_close;
	container_codec_error_fn codec_error; /* may be NULL */
	void *opaque;
	bool one_event;                       /* the metadata has one event */
	uint32_t time_off;                    /* ... whose samples hold their
					       * time at this byte, 0: none */
	uint32_t nr_streams;                  /* CPU stream ids below this */
	/* pids: CPU-stream records of other processes are dropped */
	const uint32_t *pids;
	uint32_t nr_pids;
};

/* Totals of the records a job kept. */
struct cb_counts {
	uint64_t records;
	uint64_t samples;
	uint64_t lost;
	uint64_t throttles;
	uint64_t t_first, t_last;             /* 0: no timed record */
};

enum cb_state { CB_FREE = 0, CB_QUEUED, CB_RUNNING, CB_DONE };

/* The buffers a decoded block's records live in: traded out of a job
 * while the records are read in place, and back for a later block. */
struct cb_bufs {
	uint8_t *copy;                        /* owned copy of the payload */
	size_t copy_cap;
	uint8_t *coded;                       /* owned codec output */
	size_t coded_cap;
	uint8_t *raw;                         /* owned record bytes */
	size_t raw_cap;
	struct pipe_record *recs;             /* owned views of the records */
	size_t recs_cap;
};

struct cb_job {
	struct fmt_block b;                   /* its header */
	uint64_t off;                         /* its offset in the file */
	uint64_t origin;                      /* time 0 of its damage line */
	uint64_t horizon;                     /* released when it retires */
	struct cb_codec *codec;               /* NULL for codec 0 */
	/* the window: records outside are dropped (CPU streams: time in
	 * [lo, hi); the sideband: time < hi) */
	bool filter;
	uint64_t lo, hi;
	const uint8_t *trailer;               /* its trailer, for the job to
					       * check (set trailer_bad), or
					       * NULL */
	bool trailer_bad;                     /* report at retire */
	const uint8_t *drop;                  /* mapped file bytes no one
					       * reads any more, dropped
					       * after the job (their pages
					       * unmapped), or NULL */
	size_t drop_len;
	const uint8_t *payload;               /* stored bytes (copy or view) */
	struct cb_bufs buf;                   /* owned */
	const uint8_t *bytes;                 /* the records: raw or payload */
	size_t nr;                            /* records kept, in buf.recs in
					       * time order (ties: file order) */
	bool in_order;                        /* ... and they are every record
					       * of `bytes`, as they lie */
	struct cb_counts c;
	int status;                           /* 0, -EINVAL damaged, -ENOMEM */
	char why[300];                        /* what was wrong with it */
	int state;                            /* enum cb_state (pool) */
};

/*
 * Make codec `id` usable by every decoder (opens one instance per
 * decoder through ctx->codec_open, adds the known dictionaries).  Call
 * only while no job runs.  *out is NULL when there is no such codec;
 * ctx keeps the reason.
 */
struct cb_codec *cb_codec_get(struct cb_ctx *ctx, uint32_t id);
/* Add a dictionary for codec `codec` (copied) to every instance.  Call
 * only while no job runs.  0, or -EINVAL with *why filled. */
int cb_dict_add(struct cb_ctx *ctx, uint32_t codec, uint32_t id,
		const void *bytes, size_t len, char *why, size_t cap);
/* Release every instance, transform and dictionary. */
void cb_ctx_release(struct cb_ctx *ctx);

/* Decode job j with decoder `dec` (0 when inline).  Sets j->status;
 * drops j->drop's pages and clears it. */
void cb_job_run(struct cb_ctx *ctx, uint32_t dec, struct cb_job *j);
/* Only check and decode j's payload into j->raw (no record walk): 0,
 * -EINVAL with j->why, or -ENOMEM. */
int cb_job_decode_only(struct cb_ctx *ctx, uint32_t dec, struct cb_job *j);
/* Point j->payload at a private copy of len bytes.  -ENOMEM. */
int cb_job_copy(struct cb_job *j, const uint8_t *payload, size_t len);
void cb_job_release(struct cb_job *j);
/* Swap j's buffers with *b: the records of a finished job (their views
 * in buf.recs, their bytes in the other buffers or in a payload that is
 * no copy) go to *b, the job gets b's buffers to reuse. */
void cb_job_trade(struct cb_job *j, struct cb_bufs *b);
/* The bytes b's buffers hold. */
size_t cb_bufs_size(const struct cb_bufs *b);
void cb_bufs_release(struct cb_bufs *b);

/*
 * The pool: ctx->nr_dec decoders (at least 2), a worker thread for each
 * but the last, which is the caller's, and a ring of `depth` jobs.  Jobs
 * come back in the order they were submitted.  A sleeping worker wakes
 * once half the ring is queued; the caller runs queued jobs itself when
 * it waits for the oldest (cb_pool_oldest).
 */
int cb_pool_new(struct cb_pool **out, struct cb_ctx *ctx, uint32_t depth);
void cb_pool_free(struct cb_pool *pool); /* NULL is a no-op */
/* A free job to fill, or NULL when the ring is full. */
struct cb_job *cb_pool_slot(struct cb_pool *pool);
/* Queue the job cb_pool_slot returned. */
void cb_pool_submit(struct cb_pool *pool);
/* The number of jobs the ring holds. */
uint32_t cb_pool_depth(const struct cb_pool *pool);
/* Jobs queued or running or done but not yet retired. */
uint32_t cb_pool_pending(const struct cb_pool *pool);
/* The oldest job, finished: queued jobs are run on the calling thread
 * (the oldest first) while it is not done, then it waits for a worker.
 * NULL when none is pending. */
struct cb_job *cb_pool_oldest(struct cb_pool *pool);
/* The oldest pending job, finished or not (only what the caller set
 * before cb_pool_submit may be read), or NULL. */
const struct cb_job *cb_pool_head(const struct cb_pool *pool);
/* The newest pending job (for horizons of blocks that are not jobs). */
struct cb_job *cb_pool_newest(struct cb_pool *pool);
/* Free the oldest job's slot after its results were used. */
void cb_pool_retire(struct cb_pool *pool);

#endif
