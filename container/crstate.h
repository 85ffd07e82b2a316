/*
 * crstate.h - the container reader's state, shared by its files and by
 * no one else: creader.c (the forward walk, damage, the records),
 * crindex.c (block headers; the index, or a scan of the headers, the
 * plan of a window read, the next good header after damage), cropen.c
 * (the file header, the metadata, open and free), crmap.c (a mapped
 * file: headers by read_at, pages dropped once read).  The reader's
 * interface is container.h.
 */
#ifndef PIPE_CRSTATE_H
#define PIPE_CRSTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cblock.h"
#include "container.h"
#include "err.h"
#include "format.h"
#include "meta.h"
#include "runmerge.h"

#define CR_CHUNK (256u << 10)     /* bytes asked of the source at once */
#define CR_BATCH 4096             /* records per released batch */
#define CR_SMALL_READ 4096        /* bytes per read while jumping around */
#define CR_MIN_BLOCK_LEN 112      /* the smallest possible block */
/* bytes of decoded blocks held for ordering; past this (a file whose
 * horizons do not move) the oldest records go out anyway, so memory
 * stays bounded */
#define CR_MERGE_MAX ((size_t)256 << 20)
/* decoded blocks' buffers kept for reuse when their records were read */
#define CR_HELD_SPARE 8
/* bytes the blocks in flight may claim (their payload, codec output,
 * records and record views, by their headers), and what the decode slots
 * keep between blocks in all: past these, blocks wait or buffers go */
#define CR_INFLIGHT_MAX ((uint64_t)128 << 20)
/* what the first touch of a mapped page maps (it and its neighbours, the
 * kernel's fault-around): blocks this long have their headers read with
 * read_at, shorter ones share their pages with their neighbours */
#define CR_TOUCH_MAPS (64u << 10)
/* the mapped file's pages are dropped in aligned pieces of this much, so
 * that a huge page is never split */
#define CR_DROP_ALIGN ((uintptr_t)2 << 20)

/* A decoded block whose records the merge reads in place: the buffers
 * traded out of its job. */
struct cr_held {
	struct cb_bufs buf;           /* owned */
	uint64_t map_off;             /* its block's offset while its records
				       * are read in the mapping, else MAX */
	struct cr_held *next;         /* the spare list */
	struct cr_held *next_all;     /* every one the reader made */
};

/* A block the window read will visit. */
struct cr_entry {
	uint64_t off;                 /* block offset */
	uint64_t t_min, t_max;        /* its record times */
	uint32_t stream;              /* its stream */
	uint32_t type;                /* its block type */
	uint32_t records;             /* its record count */
	uint32_t raw;                 /* its raw length */
};

struct creader {
	struct cr_opts opts;          /* copy; pointers borrowed */
	uint64_t salt;                /* low 8 bytes of the file id */
	bool seekable;                /* size() worked */
	bool small_reads;             /* jumping around: read what is asked */
	uint64_t size;                /* file size when seekable */
	const uint8_t *map;           /* the whole file (size bytes), from
				       * the source's `map`, or NULL: then
				       * bytes [base, base + len) are in buf */
	bool map_drop;                /* the mapping is shared: pages read
				       * may be dropped (MADV_DONTNEED) and
				       * come back from the file if touched */
	bool big_blocks;              /* the last block was CR_TOUCH_MAPS
				       * or longer: with a pool, headers are
				       * read with read_at (crmap.c) */
	uintptr_t drop_lo, drop_hi;   /* [lo, hi): mapped pages no one needs,
				       * for the next job to drop; below lo
				       * they went already */
	uint8_t *buf;                 /* owned */
	size_t cap;
	uint64_t base;
	size_t len;
	uint64_t eof_at;              /* where the source ended, or MAX */
	struct meta *meta;            /* owned */
	struct runmerge *runs;        /* owned: decoded blocks, in order */
	struct cr_held *held_all;     /* owned, linked by next_all */
	cr_block_fn block_fn;         /* creader_blocks: blocks go here */
	void *block_opaque;
	bool block_stop;              /* ... and it asked to stop */
	struct cr_held *spare;        /* spent ones to reuse, by next */
	uint32_t nr_spare;
	struct cb_ctx ctx;            /* codecs, transforms, dictionaries */
	struct cb_pool *pool;         /* owned; NULL: decode inline */
	struct cb_job job;            /* the inline job */
	uint64_t pos;                 /* offset of the next block */
	uint64_t hdr_end;             /* offset of the first block after META */
	uint64_t horizon;             /* records older than this are read */
	uint64_t origin;              /* time 0 of messages: first block */
	bool have_origin;
	bool at_end;                  /* no more blocks */
	bool clean_end;               /* saw a good END block */
	/* window and subset */
	bool filter;                  /* a window or subset was asked */
	bool have_window;             /* lo and hi are known */
	uint64_t lo, hi;              /* absolute window, ns */
	bool *stream_ok;              /* owned, per CPU stream: wanted */
	uint32_t nr_stream_ok;
	struct cr_entry *ents;        /* owned: the blocks to visit */
	size_t nr_ents, next_ent, ents_cap;
	bool selective;               /* visit ents only */
	bool index_read;              /* a forward read looked for ents */
	const struct cr_entry *expect; /* the entry at pos, when selective */
	uint64_t inflight;            /* bytes the pending jobs claim */
	bool sync;                    /* the block at pos waits for every
				       * job before it to retire, one by one
				       * with releases between, as inline */
	uint64_t resume;              /* end of the last block visited */
	int codec_failed;             /* a codec could not be opened: the
				       * negative errno, 0: none */
	struct pipe_err codec_err;    /* ... and why */
	char line[512];               /* the last damage line */
	struct cr_stats st;
};

/* What cr_header_at found at an offset. */
enum cr_hdr {
	CR_HDR_GOOD,  /* a block header that checks out, decoded */
	CR_HDR_BAD,   /* bytes that are not a good block header */
	CR_HDR_SHORT, /* fewer than FMT_BLOCK_HDR_SIZE bytes, but some */
	CR_HDR_EOF,   /* no byte at all: the end of the data */
};

/* creader.c */
/* Make bytes [off, off + n) available at *p (valid until the next call);
 * *got says how many (fewer than n only at the end of the file). */
int cr_fetch(struct creader *r, uint64_t off, size_t n,
	     const uint8_t **p, size_t *got, struct pipe_err *err);
/* Report r->line: one damage line, or -EIO under strict=on. */
int cr_damage(struct creader *r, struct pipe_err *err);
bool cr_stream_wanted(const struct creader *r, uint32_t stream);
/* Set the window from the first record time, once known. */
void cr_window(struct creader *r, uint64_t origin);

/* crmap.c */
/* Is [base, base + len) mapped shared (MAP_SHARED), in one or more
 * mappings?  Only such pages may be dropped and come back from the file. */
bool cr_map_is_shared(const void *base, uint64_t len);
/* One call of the source's read_at (through the host): up to n bytes at
 * off into buf, *got of them; 0 at the end of the file. */
int cr_src_read(struct creader *r, uint64_t off, uint8_t *buf, size_t n,
		size_t *got, struct pipe_err *err);
/* n bytes at off into buf with the source's read_at, not through the
 * mapping; *got grows (fewer than n only at the end of the file). */
int cr_read_copy(struct creader *r, uint64_t off, uint8_t *buf, size_t n,
		 size_t *got, struct pipe_err *err);
/* Give j the mapped pages before the block at off that no one reads any
 * more (r->map_drop), for its decoder to drop. */
void cr_drop_before(struct creader *r, uint64_t off, struct cb_job *j);

/* crindex.c */
/* Read and check the block header at off: 0 with *what set (*b filled
 * when it is CR_HDR_GOOD), or a negative errno when reading failed. */
int cr_header_at(struct creader *r, uint64_t off, struct fmt_block *b,
		 enum cr_hdr *what, struct pipe_err *err);
/* Look for the next good block header after `from`; *found or MAX. */
int cr_resync(struct creader *r, uint64_t from, uint64_t *found,
	      struct pipe_err *err);
/* The blocks of a clean file from its END block and INDEX chain: 0, or 1
 * when there is none or it is damaged (the caller scans instead). */
int cr_read_index(struct creader *r, struct pipe_err *err);
/* The blocks a window read visits, from the index or a scan. */
int cr_plan(struct creader *r, struct pipe_err *err);

#endif
