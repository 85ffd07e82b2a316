/*
 * container.h - the pipe file format, version 1 (docs/format.md): the
 * writer turns time-ordered records into per-stream blocks (transform,
 * codec, checksums, index, trailer); the reader turns pipe-file bytes back
 * into time-ordered records, skipping and reporting damage.
 */
#ifndef PIPE_CONTAINER_H
#define PIPE_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipe_plugin.h"

struct pipe_err;
struct meta;
struct cwriter;
struct creader;

/* Limits of the format (docs/format.md). */
#define CONTAINER_BLOCK_MIN (4u << 10)
#define CONTAINER_BLOCK_MAX (4u << 20)
#define CONTAINER_LEN_MAX (64u << 20)
/* Dictionaries: the largest a writer stores (a trained dict_size or a
 * dict_file=), and how many one file defines; readers refuse more. */
#define CONTAINER_DICT_MAX (1u << 20)
#define CONTAINER_DICTS_MAX 8

/* Where finished bytes go: the host fans them out to every byte sink. */
typedef int (*container_write_fn)(void *opaque, const void *buf, size_t len,
				  struct pipe_err *err);
/* Where the output is asked to push buffered bytes out. */
typedef int (*container_flush_fn)(void *opaque, struct pipe_err *err);

enum cw_dict_mode { CW_DICT_OFF = 0, CW_DICT_ON = 1, CW_DICT_AUTO = 2 };

struct pipe_ctx;

struct cw_opts {
	const struct pipe_plugin *codec; /* borrowed; compress side */
	void *codec_state;               /* borrowed, opened by the host */
	struct pipe_ctx *codec_ctx;      /* its instance, named on a crash */
	const char *codec_name;          /* stored in META */
	uint32_t block_size;             /* raw bytes per block */
	uint64_t flush_ns;               /* a quiet stream reaches the disk */
	bool transform;                  /* record-aware column transform */
	int dict_mode;                   /* enum cw_dict_mode */
	uint32_t dict_size;              /* bytes to train */
	const void *dict_data;           /* pre-trained dictionary or NULL */
	size_t dict_len;
	container_write_fn write;        /* from the encoder's thread */
	container_flush_fn flush;        /* likewise; optional */
	void *opaque;
	bool async;                      /* encode on a worker thread */
	bool drop_when_behind;           /* live: a full queue drops blocks */
	size_t queue_bytes;              /* raw bytes queued, 0: 16 MiB */
	uint64_t inline_ns;              /* cwriter_idle's budget, 0: 5 ms */
};

struct cw_stats {
	uint64_t records;
	uint64_t samples;
	uint64_t raw_bytes;      /* record bytes in */
	uint64_t stored_bytes;   /* file bytes out */
	uint64_t blocks;
	uint64_t dropped_records; /* in blocks dropped by a full queue */
	uint64_t dropped_samples;
	uint64_t dropped_blocks;
	uint64_t inline_blocks;   /* encoded by the caller (cwriter_idle) */
	uint64_t worker_wakes;    /* times the caller woke the worker */
	uint64_t cols_made;       /* column encoders made for the streams'
				     blocks (the rest reuse them) */
	uint64_t lost;            /* the file's lost count: PERF_RECORD_LOST
				     sums kept, and what dropped blocks and
				     cwriter_lost stand for */
};

/*
 * Writes the file header and META block at once.  `meta` is borrowed and
 * must outlive the writer.  Samples with a user stack dump are written
 * with only the part the kernel copied (dyn_size) kept.
 */
int cwriter_new(struct cwriter **out, const struct cw_opts *opts,
		const struct meta *meta, struct pipe_err *err);
/* Append records, in time order within each stream and, unless the
 * horizon is capped, across streams (views borrowed for the call only). */
int cwriter_add(struct cwriter *w, const struct pipe_batch *b,
		struct pipe_err *err);
/*
 * When a stream's pending records, or a queued block's, will have waited
 * flush_ns within early_ns of monotonic now (since the arrival time set
 * when they came, or else since the first tick that saw them), flush
 * every pending stream, and have the next cwriter_idle wake the worker
 * for all of them: one write batch per flush interval, however many
 * streams.  A caller that woke for other work gives an early_ns (about
 * the time until it expects to wake again), so that its next sleep need
 * not end for a flush.
 */
int cwriter_tick(struct cwriter *w, uint64_t now_ns, uint64_t early_ns,
		 struct pipe_err *err);
/*
 * Records added from now on came after monotonic time mono_ns (the last
 * time the caller found its source empty), so their flush interval runs
 * from there.  0: from the first tick that sees them.
 */
void cwriter_set_arrival(struct cwriter *w, uint64_t mono_ns);
/* Monotonic ns at which cwriter_tick has a stream to flush or
 * cwriter_idle a queued block to hand over: 0 for now, UINT64_MAX for
 * nothing pending. */
uint64_t cwriter_next_tick(struct cwriter *w);
/*
 * Records may come per stream rather than in global time order: the
 * caller promises only that no record older than `cap` is still to come
 * (a live source's rounds).  Block horizons stay at or below it, and
 * sideband records, which gather from every CPU, are held and written in
 * time order once the cap passes them.  UINT64_MAX (the default, and at
 * cwriter_finish): records come in time order.  -ENOMEM or a write error.
 */
int cwriter_cap_horizon(struct cwriter *w, uint64_t cap,
			struct pipe_err *err);
/* Flush everything, write the last index and the trailer; the worker,
 * if any, ends.  An encoder or write failure comes back here or from
 * any later add. */
int cwriter_finish(struct cwriter *w, struct pipe_err *err);
/*
 * End a run that failed: write the pending blocks (what was recorded is
 * kept) but no last index and no trailer, so the file reads like a cut
 * one: readers recover every block and say so, verify fails.  The
 * worker, if any, ends.
 */
int cwriter_cut(struct cwriter *w, struct pipe_err *err);
/*
 * Live (drop_when_behind), queued blocks wait for the caller's next
 * sleep: the caller calls this (monotonic now) before it sleeps, and
 * sleeps no longer than cwriter_next_tick.  While a block takes less than
 * a few milliseconds to encode (and no dictionary is trained), the caller
 * encodes queued blocks here itself, a few milliseconds at most, while
 * the worker is idle; it never writes (a write may wait).  The worker
 * wakes to write and encode what is queued once 4 MiB has gathered, when
 * cwriter_tick found a flush deadline near or the oldest block's is past,
 * and for a backlog at once.
 */
void cwriter_idle(struct cwriter *w, uint64_t now_ns);
/* Have opts.flush called on the thread that writes, once the blocks
 * queued before it are written (now without a worker).  A failure comes
 * back from a later call, as the encoder's do. */
int cwriter_flush_output(struct cwriter *w, struct pipe_err *err);
void cwriter_stats(const struct cwriter *w, struct cw_stats *st);
/* True when no job waits and the worker runs none (so the next ones
 * queued wait for cwriter_idle). */
bool cwriter_settled(struct cwriter *w);
/* Records the recorder lost on `stream` besides the kernel's own
 * PERF_RECORD_LOST (ring overruns it counted itself): a LOST block now.
 * Readers add them to cr_stats.lost. */
int cwriter_lost(struct cwriter *w, uint32_t stream, uint64_t count,
		 struct pipe_err *err);
void cwriter_free(struct cwriter *w);

/* How the reader gets a codec instance for a block's codec id. */
typedef int (*container_codec_open_fn)(void *opaque, uint32_t codec_id,
				       const struct pipe_plugin **p,
				       void **state, struct pipe_ctx **ctx,
				       struct pipe_err *err);
typedef void (*container_codec_close_fn)(void *opaque,
					 const struct pipe_plugin *p,
					 void *state);
/* The message a codec instance gave for its last failure (borrowed), or
 * NULL; the reader calls it from the thread that owns the instance. */
typedef const char *(*container_codec_error_fn)(void *opaque, void *state);
/* One line of damage report ("damaged block ..."), without "pipe: ". */
typedef void (*container_report_fn)(void *opaque, const char *line);

struct cr_opts {
	const struct pipe_plugin *src; /* byte source (read_at, size) */
	void *src_state;
	struct pipe_ctx *src_ctx;      /* its instance, named on a crash */
	const char *name;              /* file name for messages */
	bool strict;                   /* stop at first damage */
	uint32_t threads;              /* decode workers, 0: nr CPUs */
	container_codec_open_fn codec_open;
	container_codec_close_fn codec_close;
	container_report_fn report;
	void *opaque;
	/* window and subset (0/empty: everything) */
	uint64_t start_ns, stop_ns;    /* relative to the first record */
	const uint32_t *cpus;
	uint32_t nr_cpus;
	const uint32_t *pids;
	uint32_t nr_pids;
	container_codec_error_fn codec_error; /* may be NULL */
};

struct cr_stats {
	uint64_t records;
	uint64_t samples;
	uint64_t lost;            /* lost samples (PERF_RECORD_LOST sum) */
	uint64_t dropped_blocks;  /* LOST blocks: blocks a live writer's
				   * encoder queue dropped */
	uint64_t dropped_lost;    /* what they counted lost (part of lost) */
	uint64_t throttles;
	uint64_t blocks;
	uint64_t blocks_decoded;
	uint64_t blocks_damaged;
	uint64_t records_damaged; /* in skipped blocks, per their headers */
	uint64_t torn_bytes;      /* dropped at a torn tail */
	uint64_t trailing_bytes;  /* after a good END, not read */
	bool recovered;           /* no clean trailer */
	uint64_t t_first, t_last;
	uint64_t file_bytes, raw_bytes;
};

/* Reads the file header and META block; damage there is fatal (-EINVAL
 * with a message naming the file). */
int creader_open(struct creader **out, const struct cr_opts *opts,
		 struct pipe_err *err);
/* Borrowed; valid for the reader's life. */
const struct meta *creader_meta(const struct creader *r);
/* Next time-ordered batch, borrowed until the next call: 0, PIPE_EOF, or
 * negative errno (strict damage, I/O). */
int creader_next(struct creader *r, struct pipe_batch *out,
		 struct pipe_err *err);
void creader_stats(const struct creader *r, struct cr_stats *st);

/* One decoded DATA block, for creader_blocks. */
struct cr_block {
	uint32_t stream;                /* its stream */
	const struct pipe_record *recs; /* its records in time order (ties:
					 * file order) */
	size_t nr;
	bool in_order;                  /* recs are the records of bytes, one
					 * after another, as they lie */
	const uint8_t *bytes;           /* when in_order: len bytes */
	size_t len;
	uint64_t horizon;               /* the blocks before held every
					 * record older than this */
};
/* 0 to read on, 1 to stop, or a negative errno with err set. */
typedef int (*cr_block_fn)(void *opaque, const struct cr_block *b,
			   struct pipe_err *err);
/*
 * Read to the end without ordering records across blocks: each decoded
 * block goes to fn in file order, on the calling thread, its views
 * borrowed for the call (for consumers that need each stream's records
 * in order only).  Call instead of creader_next.  Returns 0, 1 when fn
 * stopped the read, or a negative errno (damage under strict=on, I/O).
 */
int creader_blocks(struct creader *r, cr_block_fn fn, void *opaque,
		   struct pipe_err *err);
/*
 * The totals of a cleanly closed file from its END block, checked against
 * its INDEX chain, without decoding a DATA block (so payload damage goes
 * unseen): 0 with *st filled, 1 when the file has no such END and index
 * (a recovered file, one written before END held throttle counts, or
 * damage there), negative errno on I/O errors.  Call before creader_next.
 */
int creader_summary(struct creader *r, struct cr_stats *st,
		    struct pipe_err *err);
void creader_free(struct creader *r);

#endif
