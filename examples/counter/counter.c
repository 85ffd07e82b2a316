/*
 * counter.c - the smallest useful pipe sink: counts the samples it is
 * given and the records the kernel lost, and prints both when the run
 * ends, as the report sink's "# Total samples" and "# Total Lost Samples"
 * lines count them:
 *
 *	pipe -s perf -k ./counter.so -- ./my-program
 *	1234 samples, 0 lost
 */
#include <inttypes.h>
#include <stdio.h>

#include "pipe_plugin.h"

/* The instance: pipe allocates it zeroed (state_size) and frees it. */
struct counter {
	uint64_t samples; /* samples seen */
	uint64_t lost;    /* records the kernel dropped */
};

/* Called for every sample, in time order. */
static int counter_sample(void *state, const struct pipe_sample_view *v)
{
	struct counter *c = state;

	(void)v; /* we only count */
	c->samples++;
	return 0;
}

/* Called for every comm, mmap, fork, exit, lost and throttle record. */
static int counter_sideband(void *state, const struct pipe_sideband *sb)
{
	struct counter *c = state;

	if (sb->type == PIPE_SB_LOST)
		c->lost += sb->lost;
	return 0;
}

/* Called once, after the last record. */
static int counter_finish(void *state)
{
	struct counter *c = state;

	/* pipe checks standard output once the run ends */
	printf("%" PRIu64 " samples, %" PRIu64 " lost\n", c->samples, c->lost);
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "counter",
	.summary = "count samples and lost records",
	.version = "1.0",
	.state_size = sizeof(struct counter),
	.sample = counter_sample,
	.sideband = counter_sideband,
	.finish = counter_finish
);
