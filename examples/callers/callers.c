/*
 * callers.c - a pipe sink that shows who calls what: for every sample,
 * the symbol it hit and the symbol of its caller (the next frame of the
 * callchain), counted, printed as a table sorted by count when the run
 * ends:
 *
 *	pipe -s perf -k ./callers.so -- ./my-program
 *	 samples	caller	symbol
 *	     812	main	compute
 *	     301	compute	sqrt
 *
 * It shows the per-sample entry point with frames and symbols, and a sink
 * that keeps state (a hash table) and prints at the end.  Symbol strings
 * live for the whole run, so the table keys on their addresses.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_plugin.h"

#define MAX_ROWS (1u << 24) /* a table never grows past this */

struct row {
	const char *caller; /* symbol name, borrowed for the run */
	const char *callee; /* symbol name, borrowed for the run */
	uint64_t samples;
};

struct callers {
	const struct pipe_host *host; /* for host calls from finish */
	struct pipe_ctx *ctx;         /* our instance */
	struct row *rows;   /* open addressing; callee NULL: empty slot */
	uint32_t cap;       /* slots, a power of two */
	uint32_t nr;        /* slots in use */
	uint64_t dropped;   /* samples past MAX_ROWS */
};

static const struct pipe_param callers_params[] = {
	PIPE_P_OUTPUT("output", "-", "where the table goes (-: standard output)"),
	PIPE_P_INT("top", 0, "0", 0, 1000000000, "rows to print, 0: all"),
	PIPE_P_END,
};

static uint32_t slot_of(const struct row *rows, uint32_t cap,
			const char *caller, const char *callee)
{
	uint64_t h = ((uintptr_t)caller * UINT64_C(0x9e3779b97f4a7c15)) ^
		     (uintptr_t)callee;
	uint32_t i = (uint32_t)(h ^ h >> 29) & (cap - 1);

	while (rows[i].callee &&
	       (rows[i].caller != caller || rows[i].callee != callee))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Double the table when it is half full; false when it cannot grow. */
static bool grow(struct callers *c)
{
	uint32_t cap = c->cap ? c->cap * 2 : 1024, i;
	struct row *rows;

	if (c->nr < c->cap / 2)
		return true;
	if (cap > MAX_ROWS)
		return false;
	rows = calloc(cap, sizeof(*rows));
	if (!rows)
		return false;
	for (i = 0; i < c->cap; i++)
		if (c->rows[i].callee)
			rows[slot_of(rows, cap, c->rows[i].caller,
				     c->rows[i].callee)] = c->rows[i];
	free(c->rows);
	c->rows = rows;
	c->cap = cap;
	return true;
}

static int callers_sample(void *state, const struct pipe_sample_view *v)
{
	struct callers *c = state;
	const char *callee, *caller = "[none]";
	struct row *r;

	/* frame 0 is the sampled address, frame 1 its caller (if the
	 * recording has callchains) */
	callee = v->host->frame_symbol(v->ctx, v, 0)->name;
	if (v->nr_frames > 1)
		caller = v->host->frame_symbol(v->ctx, v, 1)->name;
	if (!grow(c)) {
		c->dropped++;
		return 0;
	}
	r = &c->rows[slot_of(c->rows, c->cap, caller, callee)];
	if (!r->callee) {
		r->caller = caller;
		r->callee = callee;
		c->nr++;
	}
	r->samples++;
	return 0;
}

static int by_samples(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	/* ties by name: the same table from run to run */
	if (strcmp(x->caller, y->caller))
		return strcmp(x->caller, y->caller);
	return strcmp(x->callee, y->callee);
}

/* The run ended: compact the table, sort it, print it. */
static int callers_finish(void *state)
{
	struct callers *c = state;
	FILE *f = c->host->arg_file(c->ctx, "output");
	uint64_t top = (uint64_t)c->host->arg_int(c->ctx, "top");
	uint32_t i, n = 0;

	for (i = 0; i < c->cap; i++)
		if (c->rows[i].callee)
			c->rows[n++] = c->rows[i];
	c->nr = n;
	if (n)
		qsort(c->rows, n, sizeof(*c->rows), by_samples);
	/* tab-separated: names hold spaces (C++), tools split on tabs */
	fprintf(f, "%8s\t%s\t%s\n", "samples", "caller", "symbol");
	for (i = 0; i < n && (!top || i < top); i++)
		fprintf(f, "%8" PRIu64 "\t%s\t%s\n", c->rows[i].samples,
			c->rows[i].caller, c->rows[i].callee);
	if (c->dropped)
		c->host->log(c->ctx, PIPE_LOG_WARN, "callers: %" PRIu64
			     " samples past %u rows were not counted",
			     c->dropped, MAX_ROWS);
	return 0;
}

/* pipe allocated the state (state_size); keep what finish needs. */
static int callers_open(const struct pipe_host *host, struct pipe_ctx *ctx,
			void **state)
{
	struct callers *c = *state;

	c->host = host;
	c->ctx = ctx;
	return 0;
}

static void callers_close(void *state)
{
	struct callers *c = state;

	free(c->rows); /* the state itself is pipe's */
}

PIPE_PLUGIN_SINK(
	.name = "callers",
	.summary = "samples per caller and symbol, from the callchains",
	.version = "1.0",
	.state_size = sizeof(struct callers),
	.params = callers_params,
	.open = callers_open,
	.close = callers_close,
	.sample = callers_sample,
	.finish = callers_finish
);
