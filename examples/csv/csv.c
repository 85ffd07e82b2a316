/*
 * csv.c - a pipe sink that writes one CSV line per sample: time (ns),
 * CPU, process, thread, command, event, period, and the symbol and binary
 * of the sampled address, resolved by pipe's symbolizer:
 *
 *	pipe -s file:run.dat -k ./csv.so:samples.csv
 *	1234567890,0,4242,4242,my-program,cpu-clock,250000,main,my-program
 *
 * pipe opens the output file named by the `output` parameter itself, with
 * its usual rules: "-" is standard output, an existing file is kept unless
 * force=on, and it is replaced only by a run that succeeds.
 */
#include <inttypes.h>
#include <string.h>

#include "pipe_plugin.h"

static const struct pipe_param csv_params[] = {
	PIPE_P_OUTPUT("output", "-", "CSV file to write (-: standard output)"),
	PIPE_P_END,
};

/* One field; quoted, its quotes doubled, when it holds a separator, a
 * quote or a line end (C++ names hold commas). */
static void field(FILE *f, const char *s, char end)
{
	if (s[strcspn(s, ",\"\r\n")]) {
		putc('"', f);
		for (; *s; s++)
			fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
		s = "\"";
	}
	fprintf(f, "%s%c", s, end);
}

/* Called for every sample, in time order; v->host and v->ctx make host
 * calls without any state of our own. */
static int csv_sample(void *state, const struct pipe_sample_view *v)
{
	FILE *f = v->host->arg_file(v->ctx, "output");
	const struct pipe_sample *s = v->sample;
	/* frame 0 is the sampled address; the symbolizer runs only now */
	const struct pipe_symbol *sym = v->host->frame_symbol(v->ctx, v, 0);

	(void)state;
	fprintf(f, "%" PRIu64 ",%u,%u,%u,", s->time, s->cpu, s->pid, s->tid);
	field(f, v->comm, ',');
	field(f, v->event_name, ',');
	fprintf(f, "%" PRIu64 ",", s->period);
	field(f, sym->name, ',');
	field(f, sym->dso_short, '\n');
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "csv",
	.summary = "one CSV line per sample, with its symbol",
	.version = "1.0",
	.params = csv_params,
	.sample = csv_sample
);
