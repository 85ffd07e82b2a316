/*
 * sink_json.c - the `json` record sink: samples as JSON in the layout of
 * `perf data convert --to-json` (format=perf, the default) or one object
 * per line (format=lines), symbolized by the host.  Output streams through
 * one fixed buffer, so memory does not grow with the samples; strings are
 * escaped and bytes that are not UTF-8 become U+FFFD.  See docs/json.md.
 * This file holds the plugin: its parameters, outputs and callbacks
 * (json.h lists the others).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "json.h"

static const struct pipe_param json_params[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL, "-",
	  "output file; - writes standard output", NULL, 0, 0 },
	{ "format", PIPE_PARAM_ENUM, 0, "perf",
	  "perf: the layout of perf data convert --to-json; lines: one "
	  "object per line", "perf|lines", 0, 0 },
	{ "compact", PIPE_PARAM_BOOL, 0, "off",
	  "format=perf without whitespace", NULL, 0, 0 },
	{ "symbols", PIPE_PARAM_BOOL, 0, "on",
	  "resolve addresses to symbol and dso (off: raw addresses)",
	  NULL, 0, 0 },
	{ "srcline", PIPE_PARAM_BOOL, 0, "off",
	  "add each frame's source line and inlined functions (DWARF)",
	  NULL, 0, 0 },
	{ "time", PIPE_PARAM_ENUM, 0, "ns",
	  "timestamps in nanoseconds or in seconds with 9 decimals", "ns|s",
	  0, 0 },
	{ "events", PIPE_PARAM_ENUM, 0, "samples",
	  "samples, or all: also the mmap, comm, fork and exit records",
	  "samples|all", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

/* ---- the plugin --------------------------------------------------------- */

static int out_error(struct json *j, const char *path, int e)
{
	j->host->error(j->ctx, "cannot write '%s': %s", path, strerror(e));
	return -e;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The host's output file; written through its fd with our own buffer. */
static int json_open_output(struct json *j)
{
	bool regular;
	int ret = fdio_output(j->host, j->ctx, j->path, &j->out.fd, &regular);

	if (ret < 0)
		return ret;
	j->streaming = !regular;
	return 0;
}

/* Where O_TMPFILE is not supported: a named file, unlinked at once. */
static int tmp_create(const char *dir)
{
	char path[4096];
	int fd, e;

	if (snprintf(path, sizeof(path), "%s/pipe-json.XXXXXX", dir) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (unlink(path) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The sideband waits in an unlinked temporary file (format=perf only). */
static int json_open_side(struct json *j)
{
	/* a set-id pipe or one with file capabilities takes no directory
	 * from its caller's environment (secure_getenv, as glibc's own
	 * temporary files do) */
	const char *dir = secure_getenv("TMPDIR");
	int e;

	j->side.buf = malloc(JSON_BUF_SIZE);
	j->side.cap = JSON_BUF_SIZE;
	if (!j->side.buf) {
		j->host->error(j->ctx, "cannot start sink 'json': out of "
			       "memory");
		return -ENOMEM;
	}
	if (!dir || !*dir)
		dir = "/tmp";
	j->side.fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (j->side.fd >= 0)
		return 0;
	j->side.fd = tmp_create(dir);
	if (j->side.fd >= 0)
		return 0;
	e = errno;
	j->host->error(j->ctx, "cannot create a temporary file in '%s': %s",
		       dir, strerror(e));
	j->host->hint(j->ctx, "set TMPDIR to a writable directory, or use "
		      "format=lines");
	return -e;
}

static void json_close(void *state)
{
	struct json *j = state;
	uint32_t i;

	if (j->side.fd >= 0)
		close(j->side.fd);
	free(j->out.buf);
	free(j->side.buf);
	addrcache_free(&j->syms);
	for (i = 0; j->esc && i < JSON_ESC_SLOTS; i++)
		free(j->esc[i].json);
	free(j->esc);
}

static int json_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	struct json *j = *state; /* zeroed by the host (state_size) */
	int ret;

	j->host = host;
	j->ctx = ctx;
	j->sample.size = sizeof(j->sample); /* the rest zero (state_size) */
	j->out.fd = -1;
	j->side.fd = -1;
	j->path = host->arg_str(ctx, "path");
	j->format = (uint32_t)host->arg_int(ctx, "format");
	j->events = (uint32_t)host->arg_int(ctx, "events");
	j->symbols = host->arg_int(ctx, "symbols");
	j->srcline = host->arg_int(ctx, "srcline") &&
		     PIPE_HOST_HAS(host, srcline);
	j->seconds = host->arg_int(ctx, "time") == 1;
	j->pretty = j->format == JSON_FORMAT_PERF &&
		    !host->arg_int(ctx, "compact");
	j->out.buf = malloc(JSON_BUF_SIZE);
	j->out.cap = JSON_BUF_SIZE;
	j->esc = calloc(JSON_ESC_SLOTS, sizeof(*j->esc));
	if (!j->out.buf || !j->esc ||
	    addrcache_init(&j->syms, JSON_SYM_BITS,
			   sizeof(struct pipe_symbol)) < 0) {
		host->error(ctx, "cannot start sink 'json': out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	if (j->format == JSON_FORMAT_PERF && j->events == JSON_EVENTS_ALL) {
		ret = json_open_side(j);
		if (ret < 0)
			goto out_free;
	}
	ret = json_open_output(j);
	if (ret < 0)
		goto out_free;
	return 0;

out_free:
	json_close(j);
	return ret;
}

static int json_start(void *state)
{
	struct json *j = state;
	struct jout *o = &j->out;

	j->meta = j->host->meta(j->ctx);
	lits_build(j);
	if (j->format == JSON_FORMAT_LINES) {
		jout_lit(o, "{\"type\":\"header\","
			 "\"linux-perf-json-version\":1,\"headers\":");
		headers_put(j, o, 0);
		jout_lit(o, "}\n");
	} else {
		jout_put(o, "{", 1);
		key(j, o, false, 1, "linux-perf-json-version");
		jout_put(o, "1", 1);
		key(j, o, true, 1, "headers");
		headers_put(j, o, 1);
		key(j, o, true, 1, "samples");
		jout_put(o, "[", 1);
	}
	return o->err ? out_error(j, j->path, o->err) : 0;
}

static int json_consume(void *state, const struct pipe_batch *b)
{
	struct json *j = state;
	size_t i;

	for (i = 0; i < b->nr; i++) {
		const struct pipe_record *r = &b->recs[i];

		if (r->hdr->type == PERF_RECORD_SAMPLE)
			sample_put(j, r);
		else
			other_put(j, r);
	}
	/* a reader at the other end of a pipe sees the samples as they come */
	if (j->streaming && j->out.len) {
		uint64_t now = now_ns();

		if (now - j->flushed_ns >= JSON_STREAM_NS) {
			jout_flush(&j->out);
			j->flushed_ns = now;
		}
	}
	if (j->out.err)
		return out_error(j, j->path, j->out.err);
	if (j->side.err)
		return out_error(j, "(temporary file)", j->side.err);
	return 0;
}

static int json_flush(void *state)
{
	struct json *j = state;

	jout_flush(&j->out);
	return j->out.err ? out_error(j, j->path, j->out.err) : 0;
}

/* Append the waiting sideband array to the output. */
static int side_copy(struct json *j)
{
	struct jout *o = &j->out;
	off_t off = 0;

	jout_flush(&j->side);
	if (j->side.err)
		return out_error(j, "(temporary file)", j->side.err);
	key(j, o, true, 1, "sideband");
	jout_put(o, "[", 1);
	for (;;) {
		ssize_t n = fdio_pread_full(j->side.fd, j->side.buf,
					    JSON_BUF_SIZE, off);

		if (n < 0)
			return out_error(j, "(temporary file)", (int)-n);
		if (n == 0)
			break;
		jout_put(o, j->side.buf, (size_t)n);
		off += n;
	}
	if (j->sideband)
		delim(j, o, false, 1);
	jout_put(o, "]", 1);
	return 0;
}

static int json_finish(void *state)
{
	struct json *j = state;
	struct jout *o = &j->out;
	int ret;

	if (j->format == JSON_FORMAT_LINES) {
		jout_lit(o, "{\"type\":\"summary\",\"samples\":");
		jout_u64(o, j->samples);
		jout_lit(o, ",\"lost\":");
		jout_u64(o, j->lost);
		jout_lit(o, ",\"throttle\":");
		jout_u64(o, j->throttle);
		jout_lit(o, "}\n");
	} else {
		delim(j, o, false, 1);
		jout_put(o, "]", 1);
		key(j, o, true, 1, "lost");
		jout_u64(o, j->lost);
		key(j, o, true, 1, "throttle");
		jout_u64(o, j->throttle);
		if (j->events == JSON_EVENTS_ALL) {
			ret = side_copy(j);
			if (ret < 0)
				return ret;
		}
		delim(j, o, false, 0);
		jout_lit(o, "}\n");
	}
	jout_flush(o);
	if (o->err)
		return out_error(j, j->path, o->err);
	if (j->bad)
		j->host->log(j->ctx, PIPE_LOG_WARN, "json: %" PRIu64
			     " malformed records left out of '%s'", j->bad,
			     j->path);
	return 0;
}

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_SYMBOLS | PIPE_PLUGIN_OUTPUT,
	.name = "json",
	.summary = "samples as JSON: perf data convert --to-json's layout, "
		   "or JSON lines",
	.version = "1.0",
	.params = json_params,
	.state_size = sizeof(struct json),
	.open = json_open,
	.close = json_close,
	.start_sink = json_start,
	.consume = json_consume,
	.flush = json_flush,
	.finish = json_finish
);
