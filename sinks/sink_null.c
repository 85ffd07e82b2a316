/*
 * sink_null.c - the `null` record sink: counts records and samples,
 * checks they come in time order, and discards them.  For tests and
 * benchmarks of everything upstream.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pipe_plugin.h"

struct nsink {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	uint64_t records;
	uint64_t samples;
	uint64_t out_of_order;        /* records older than the one before */
	uint64_t last_time;           /* ns */
	uint64_t bytes;               /* record bytes */
	bool print;                   /* print the counts at the end */
};

static const struct pipe_param nsink_params[] = {
	{ "print", PIPE_PARAM_BOOL, 0, "on",
	  "print the counts on standard output at the end", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static int nsink_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct nsink *s = *state; /* zeroed by the host (state_size) */

	s->host = host;
	s->ctx = ctx;
	s->print = host->arg_int(ctx, "print");
	return 0;
}

static int nsink_consume(void *state, const struct pipe_batch *b)
{
	struct nsink *s = state;
	size_t i;

	for (i = 0; i < b->nr; i++) {
		const struct pipe_record *r = &b->recs[i];

		s->records++;
		s->bytes += r->hdr->size;
		if (r->hdr->type == PERF_RECORD_SAMPLE)
			s->samples++;
		if (r->time < s->last_time)
			s->out_of_order++;
		else
			s->last_time = r->time;
	}
	return 0;
}

static int nsink_finish(void *state)
{
	struct nsink *s = state;

	if (s->print)
		printf("records: %" PRIu64 "\nsamples: %" PRIu64
		       "\nbytes: %" PRIu64 "\nout_of_order: %" PRIu64 "\n",
		       s->records, s->samples, s->bytes, s->out_of_order);
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "null",
	.summary = "count records, check their order, discard them",
	.version = "1",
	.params = nsink_params,
	.state_size = sizeof(struct nsink),
	.open = nsink_open,
	.consume = nsink_consume,
	.finish = nsink_finish
);
