/*
 * good_sink.c - a batch record sink for the loader tests: counts the
 * records (or only the samples) it is fed and prints the count when the
 * run ends; with lost=on also the counts of its PERF_RECORD_LOST records,
 * and with delay= it sleeps that long per record (a record sink that
 * falls behind a live recording).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipe_plugin.h"

struct count {
	const struct pipe_host *host; /* the host table, for host calls */
	struct pipe_ctx *ctx;         /* our instance, for host calls */
	const char *label;            /* word printed after the count */
	bool samples_only;            /* count PERF_RECORD_SAMPLE only */
	bool lost_too;                /* print the PERF_RECORD_LOST counts */
	int64_t delay_ns;             /* sleep per record */
	uint64_t n;                   /* records counted */
	uint64_t lost;                /* PERF_RECORD_LOST counts */
};

static const struct pipe_param count_params[] = {
	{ .name = "label", .type = PIPE_PARAM_STR,
	  .flags = PIPE_PARAM_POSITIONAL, .def = "records",
	  .help = "word printed after the count" },
	{ .name = "samples", .type = PIPE_PARAM_BOOL, .def = "off",
	  .help = "count only samples" },
	{ .name = "lost", .type = PIPE_PARAM_BOOL, .def = "off",
	  .help = "also print the sum of the lost records' counts" },
	{ .name = "delay", .type = PIPE_PARAM_DURATION, .def = "0",
	  .help = "sleep this long per record" },
	{ 0 },
};

static int count_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct count *c = calloc(1, sizeof(*c));

	if (!c) {
		host->error(ctx, "cannot start sink 'count': out of memory");
		return -ENOMEM;
	}
	c->host = host;
	c->ctx = ctx;
	c->label = host->arg_str(ctx, "label");
	c->samples_only = host->arg_int(ctx, "samples");
	c->lost_too = host->arg_int(ctx, "lost");
	c->delay_ns = host->arg_int(ctx, "delay");
	*state = c;
	return 0;
}

static void count_close(void *state)
{
	free(state);
}

static int count_consume(void *state, const struct pipe_batch *batch)
{
	struct count *c = state;
	size_t i;

	for (i = 0; i < batch->nr; i++) {
		const struct perf_event_header *h = batch->recs[i].hdr;

		if (!c->samples_only || h->type == PERF_RECORD_SAMPLE)
			c->n++;
		if (h->type == PERF_RECORD_LOST && h->size >= 24) {
			uint64_t v;

			memcpy(&v, (const char *)h + 16, sizeof(v));
			c->lost += v;
		}
		if (c->delay_ns > 0) {
			struct timespec ts = { c->delay_ns / 1000000000,
					       c->delay_ns % 1000000000 };

			nanosleep(&ts, NULL);
		}
	}
	return 0;
}

static int count_finish(void *state)
{
	struct count *c = state;

	printf("%" PRIu64 " %s\n", c->n, c->label);
	if (c->lost_too)
		printf("%" PRIu64 " lost\n", c->lost);
	if (fflush(stdout) == EOF) {
		int e = errno;

		c->host->error(c->ctx, "cannot write to stdout: %s",
			       strerror(e));
		return -e;
	}
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "count",
	.summary = "count records and print the total at the end",
	.version = "1.0",
	.params = count_params,
	.open = count_open,
	.close = count_close,
	.consume = count_consume,
	.finish = count_finish
);
