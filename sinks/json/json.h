/*
 * json.h - the json sink's state, shared by its files: sink_json.c (the
 * plugin: parameters, outputs, open, start, consume, finish), json_out.c
 * (the buffered output and its layout: numbers, strings, keys, indent),
 * json_headers.c (the headers object from the recording's metadata),
 * json_samples.c (one sample and its callchain; the sample layout built
 * once), json_side.c (the sideband records of events=all).
 */
#ifndef PIPE_JSON_H
#define PIPE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "addrcache.h"
#include "pipe_plugin.h"

#define JSON_BUF_SIZE (256 * 1024) /* output buffer, flushed when full */
#define JSON_SYM_BITS 12           /* symbolized addresses kept: 4K */
#define JSON_CMDLINE_MAX 4096      /* longest cmdline property we split */
#define JSON_ESC_SLOTS 65536       /* escaped names kept, a power of 2 */
#define JSON_ESC_BYTES (16 << 20)  /* their bytes at most */
#define JSON_STREAM_NS 200000000   /* pipe or tty: flush at least this often */

enum json_format {
	JSON_FORMAT_PERF = 0,  /* perf data convert --to-json */
	JSON_FORMAT_LINES = 1, /* one object per line */
};

enum json_events {
	JSON_EVENTS_SAMPLES = 0, /* samples only */
	JSON_EVENTS_ALL = 1,     /* plus mmap, comm, fork and exit records */
};

/* A buffered output file. */
struct jout {
	int fd;          /* output, or -1 */
	char *buf;       /* cap bytes */
	size_t len;      /* bytes pending in buf */
	size_t cap;      /* JSON_BUF_SIZE, or a literal's size */
	int err;         /* first write error (positive errno), 0: none */
};

/* A precomputed run of layout: delimiters, indentation and a key. */
struct lit {
	char s[56];
	size_t n;
};

/* The layout of a sample, built once for the format (see lits_build). */
struct lits {
	struct lit open[2];    /* [first?]: up to the timestamp value */
	struct lit pid, tid, cpu, comm, event, period;
	struct lit chain;      /* "callchain": [ */
	struct lit frame[2];   /* [first?]: a frame up to its ip value */
	struct lit symbol, dso;
	struct lit frame_end;
	struct lit chain_end;
	struct lit close;      /* the end of the sample */
};

/* A symbol or dso name (stable for the run) already escaped and quoted. */
struct esc_slot {
	const char *name; /* the host's string; NULL: empty slot */
	char *json;       /* "escaped", malloc'd */
	size_t len;
};

struct json {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	struct pipe_sample sample;    /* the sample being written, its
				       * size set once at open: the host
				       * overwrites what it knows, and no
				       * sample pays a memset of it all */
	const char *path;             /* output path, "-" for stdout */
	struct jout out;              /* the output */
	struct jout side;             /* format=perf, events=all: the
				       * sideband, in an unlinked temporary
				       * file until the end */
	const struct pipe_meta *meta; /* borrowed, from start_sink */
	uint32_t format;              /* enum json_format */
	uint32_t events;              /* enum json_events */
	bool symbols;                 /* resolve callchain addresses */
	bool srcline;                 /* frames' source lines (DWARF) */
	bool seconds;                 /* time=s: timestamps in seconds */
	bool pretty;                  /* format=perf with perf's whitespace */
	bool streaming;               /* output is a pipe, tty or socket */
	uint64_t flushed_ns;          /* CLOCK_MONOTONIC of the last flush */
	uint64_t samples;             /* samples written */
	uint64_t sideband;            /* sideband records written */
	uint64_t lost;                /* sum of LOST and LOST_SAMPLES counts */
	uint64_t throttle;            /* THROTTLE records */
	uint64_t bad;                 /* records too malformed to write */
	struct addrcache syms;        /* struct pipe_symbol per (pid, ip,
				       * cpumode), forgotten at every
				       * sideband record */
	struct esc_slot *esc;         /* JSON_ESC_SLOTS slots */
	uint32_t nr_esc;              /* slots in use */
	size_t esc_bytes;             /* bytes of their json */
	struct lits lit;              /* the sample layout */
};

/* json_out.c */
/* Write out the buffered bytes. */
void jout_flush(struct jout *o);

/* Room for n more bytes (n <= cap) at the returned pointer; the caller
 * writes them and adds what it used to o->len. */
static inline char *jout_reserve(struct jout *o, size_t n)
{
	if (o->len + n > o->cap)
		jout_flush(o);
	return o->buf + o->len;
}

/* A literal: always copies the whole array (a fixed-size copy the
 * compiler inlines), then keeps l->n bytes of it. */
static inline void jout_lit_put(struct jout *o, const struct lit *l)
{
	memcpy(jout_reserve(o, sizeof(l->s)), l->s, sizeof(l->s));
	o->len += l->n;
}

/* n bytes through the buffer (straight out when larger than it). */
void jout_put(struct jout *o, const char *p, size_t n);

/* A C string as it is (keys and punctuation, no escaping). */
void jout_lit(struct jout *o, const char *s);

/* Decimal digits written straight into the buffer, two at a time. */
void jout_u64(struct jout *o, uint64_t v);

/* A signed decimal. */
void jout_i64(struct jout *o, int64_t v);

/* "0x1f" with the quotes, as perf writes addresses */
void jout_hex(struct jout *o, uint64_t v);

/* A JSON string with quotes (see jsonw.h).  NULL writes "". */
void jout_str(struct jout *o, const char *str);

/* Before a value in an object or array: the comma, then (pretty) a newline
 * and `depth` tabs, as perf does. */
void delim(struct json *j, struct jout *o, bool comma, int depth);

/* `"name": ` after its delimiter */
void key(struct json *j, struct jout *o, bool comma, int depth,
	 const char *name);

/* A timestamp: nanoseconds, or seconds with 9 decimals (time=s). */
void time_put(struct json *j, struct jout *o, uint64_t ns);

/* json_headers.c */
/* The keys of perf's "headers" object that a pipe recording knows, then
 * the events and properties. */
void headers_put(struct json *j, struct jout *o, int depth);

/* json_samples.c */
/* One sample record, in the layout lits_build made. */
void sample_put(struct json *j, const struct pipe_record *r);

/* The sample layout: perf's (depth 2 in "samples"), or a line's. */
void lits_build(struct json *j);

/* json_side.c */
/* Count lost and throttled; write the sideband when asked. */
void other_put(struct json *j, const struct pipe_record *r);

#endif
