/*
 * run.h - one pipeline run: a source, an optional codec, one or more
 * sinks, wired through the bus (time-order merge, symbolizer state,
 * container writer for byte sinks); and the whole-file scans behind
 * `pipe info` and `pipe verify`.
 */
#ifndef PIPE_RUN_H
#define PIPE_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "container.h"
#include "pipe_plugin.h"

struct conf;
struct pipe_err;
struct meta;

struct run_opts {
	const struct conf *conf;     /* borrowed */
	const char *source;          /* "NAME[:ARGS]" */
	const char *codec;           /* "NAME[:ARGS]" or NULL */
	const char *const *sinks;    /* "NAME[:ARGS]" each */
	uint32_t nr_sinks;
	char *const *command;        /* -- CMD ARGS, NULL-terminated, or NULL */
	bool quiet;                  /* -q */
	bool verbose;                /* -v */
	uint32_t *breaches;          /* out, may be NULL: host calls refused */
};

/*
 * Run to the end.  Returns the process exit status (0, 1, 2 usage, 127
 * command not found, or the command's own status); on failure err holds
 * the one message.
 */
int run_pipeline(const struct run_opts *o, struct pipe_err *err);

/* What a whole-file scan found. */
struct scan_result {
	struct cr_stats st;
	struct meta *meta;           /* owned copy of the file's metadata */
	char digest[17];             /* hex XXH3-64 digest (docs/format.md) */
	uint64_t out_of_order;       /* records older than their predecessor */
	uint64_t file_size;
};

/* Read `path` end to end through the file source.  threads: decoding
 * threads, 0 for one per CPU.  Returns 0 or negative errno with err set. */
int run_scan(const struct conf *conf, const char *path, uint32_t threads,
	     struct scan_result *res, struct pipe_err *err);
/* The same through byte source `spec` ("./mine.so:x.dat"; its strict=on
 * stops the read at damage). */
int run_scan_spec(const struct conf *conf, const char *spec,
		  uint32_t threads, struct scan_result *res,
		  struct pipe_err *err);
void scan_result_release(struct scan_result *res);

/*
 * What `pipe info` shows: a cleanly closed file is answered from its END
 * block and INDEX chain (*scanned false; no DATA block is read, so payload
 * damage is not seen), any other file, or every file when `scan`, by
 * run_scan (*scanned true).  Returns 0 or negative errno with err set.
 */
int run_info(const struct conf *conf, const char *path, bool scan,
	     struct scan_result *res, bool *scanned, struct pipe_err *err);

/* Called with each time-ordered batch of a pipe file (views borrowed). */
typedef int (*run_batch_fn)(void *opaque, const struct meta *m,
			    const struct pipe_batch *b, struct pipe_err *err);
/* Read the pipe file of byte source `spec` ("file:x.dat,start=1s")
 * through fn; res gets the stats and a copy of the metadata. */
int run_read(const struct conf *conf, const char *spec, uint32_t threads,
	     run_batch_fn fn, void *opaque, struct scan_result *res,
	     struct pipe_err *err);

#endif
