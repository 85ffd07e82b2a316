/*
 * ctest.h - what the container tests (tests/unit/test_container_*.c)
 * share: a toy codec, deterministic records, writing them to a memory
 * file, reading one back into a summary, and a file's block layout.
 */
#ifndef PIPE_TEST_CTEST_H
#define PIPE_TEST_CTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "container.h"
#include "format.h"
#include "host.h"
#include "loader.h"
#include "memfile.h"
#include "meta.h"

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
		     PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
		     PERF_SAMPLE_PERIOD)
#define SAMPLE_ID 100
#define NR_CPUS 4

/* xor with 0x5a behind one length byte (codec id 77), and the same codec
 * with 20 ms of sleep in each compress (slow_codec is filled in by
 * ct_slow_codec_init) */
extern const struct pipe_plugin xor_codec;
extern struct pipe_plugin slow_codec;
void ct_slow_codec_init(void);

/* codec instances read_file opened and closed */
extern int opens, closes;
/* a real codec plugin (test_dict), tried before xor by read_file */
extern struct loaded *real_lp;
extern struct host_run real_run;
/* how write_file and read_file run: the transform, the decoding threads,
 * a window and subset, the writer's dictionary and codec state */
extern bool use_transform;
extern uint32_t read_threads;
extern bool read_mapped;      /* read_file's source hands out `map` */
extern struct cr_opts window;
extern struct cw_opts dict_opts; /* dict_mode, dict_size, dict_data */
extern void *codec_state;

/* true on the ThreadSanitizer build (or with PIPE_TEST_THREADED_ONLY
 * set): each test binary runs only its checks on several threads */
bool ct_threaded_only(void);

int codec_open(void *opaque, uint32_t codec_id, const struct pipe_plugin **p,
	       void **state, struct pipe_ctx **ctx, struct pipe_err *err);
void codec_close(void *opaque, const struct pipe_plugin *p, void *state);

struct gen {
	uint8_t *buf;              /* all records, back to back */
	size_t len;                /* bytes in buf */
	struct pipe_record *recs;  /* nr records pointing into buf */
	size_t nr;
	size_t samples;            /* how many of them are samples */
};

/* The one-event, NR_CPUS-stream metadata of generated records; aborts
 * if it cannot be built.  The caller frees it with meta_free. */
struct meta *make_meta(void);
void put64(uint8_t **p, uint64_t v);
/* Deterministic records: samples on NR_CPUS streams, comms on sideband,
 * one PERF_RECORD_LOST (5 lost) and two throttles; times strictly
 * increasing.  Freed with gen_free. */
void gen_records(struct gen *g, size_t nr, uint32_t seed);
void gen_free(struct gen *g);

/* Write g in batches of 37 to out with the given block size and codec
 * (NULL: none); finish with END when asked.  Returns the writer's
 * result (0 or negative errno); st, when not NULL, gets its stats. */
int write_file(struct mem *out, const struct gen *g, const struct meta *meta,
	       uint32_t block, const struct pipe_plugin *codec, bool finish,
	       struct cw_stats *st);

struct result {
	size_t nr;             /* records read */
	bool ordered;          /* times never went back */
	uint64_t hash;         /* order-independent per-record hash sum */
	int ret;               /* last creader_next / open result */
	char msg[512];         /* the error of ret, "" at the end */
	int reports;           /* damage lines reported */
	char first_report[512];
	struct cr_stats st;
	uint64_t order[NR_CPUS + 1]; /* order-dependent hash per stream (the
				      * sideband last) */
	uint64_t last[NR_CPUS + 1];  /* read_blocks: each stream's last time */
};

/*
 * read_file reads the file a second time block by block (creader_blocks):
 * reads that stopped because a stream's blocks went back in time, reads
 * to the end, and those whose records, totals or damage lines differed
 * from the merged read's (each stream's records in the same order).
 */
extern int blocks_stopped, blocks_whole, blocks_differ;

/* a cr_opts report callback: counts the lines in the struct result its
 * opaque points to, keeps the first */
void on_report(void *opaque, const char *line);
uint64_t rec_hash(const struct pipe_record *r);
/* Read all of src (from its start) with read_threads threads and the
 * window, into res. */
void read_file(struct mem *src, bool strict, struct result *res);
/* Open src (from its start) with one thread and take creader_summary
 * into st: its return (1: the caller has to scan), or the open's error;
 * damage lines are dropped. */
int read_summary(struct mem *src, struct cr_stats *st);
/* the rec_hash sum of g's records [from, to) */
uint64_t gen_hash(const struct gen *g, size_t from, size_t to);

/* the blocks of a file, for cuts and damage */
struct layout {
	uint64_t off[4096];        /* where each block starts */
	uint64_t end[4096];        /* and ends */
	uint32_t type[4096];       /* FMT_DATA, ... */
	uint32_t records[4096];    /* records the header counts */
	size_t nr;
};

void get_layout(const struct mem *f, struct layout *l);

#endif
