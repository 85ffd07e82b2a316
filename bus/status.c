/*
 * status.c - what a run tells the terminal: the status line while it runs,
 * the summary of a live run, an interrupted read, dropped blocks, process
 * state that could not be read.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "pipeline.h"
#include "symbolizer.h"

static uint64_t since_start(const struct pipeline *pl)
{
	return now_ns(CLOCK_MONOTONIC) - ((uint64_t)pl->t0.tv_sec * 1000000000u +
					  (uint64_t)pl->t0.tv_nsec);
}

/* One line, redrawn at most once a second, after the first second. */
void status_update(struct pipeline *pl)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), el;
	double secs;

	if (!pl->next_status) /* the first line after a second of work */
		pl->next_status = now - since_start(pl) + 1000000000u;
	if (!pl->hr.tty || pl->hr.quiet || now < pl->next_status)
		return;
	pl->next_status = now + 1000000000u;
	el = since_start(pl);
	secs = (double)el / 1e9;
	if (pl->reader) {
		struct cr_stats st;
		uint64_t size = 0;

		creader_stats(pl->reader, &st);
		inst_byte_size(pl->src, &size);
		fprintf(stderr, "\r\033[Kpipe: reading %.1f MB", (double)st.file_bytes / 1e6);
		if (size)
			fprintf(stderr, " of %.1f MB (%.0f%%)", (double)size / 1e6,
				100.0 * (double)st.file_bytes / (double)size);
		fprintf(stderr, ", %.1f MB/s", (double)st.file_bytes / 1e6 / secs);
	} else {
		struct cw_stats ws = { 0 };

		if (pl->writer)
			cwriter_stats(pl->writer, &ws);
		fprintf(stderr, "\r\033[Kpipe: %.0f s, %llu samples, %.2f MB",
			secs, (unsigned long long)pl->samples,
			(double)ws.stored_bytes / 1e6);
		if (ws.stored_bytes)
			fprintf(stderr, ", %.1fx", (double)ws.raw_bytes /
					      (double)ws.stored_bytes);
		fprintf(stderr, ", %llu lost", (unsigned long long)
			(pl->writer ? ws.lost : pl->lost));
	}
	pl->status_shown = true;
}

void status_clear(struct pipeline *pl)
{
	if (pl->status_shown)
		fputs("\r\033[K", stderr);
	pl->status_shown = false;
}

void print_summary(struct pipeline *pl)
{
	double secs = (double)since_start(pl) / 1e9;
	const struct pipe_meta *m = pl->hr.meta ? meta_view(pl->hr.meta) : NULL;
	uint32_t cpus = m ? m->nr_streams : 1;
	struct cw_stats ws = { 0 };

	if (pl->writer)
		cwriter_stats(pl->writer, &ws);
	fprintf(stderr,
		"pipe: %llu samples, %llu lost, %llu throttled, "
		"%.0f samples/s per CPU over %.2f s",
		/* with a file: what the file holds and says was lost */
		(unsigned long long)(pl->samples - ws.dropped_samples),
		(unsigned long long)(pl->writer ? ws.lost : pl->lost),
		(unsigned long long)pl->throttled,
		secs > 0 && cpus ? (double)pl->samples / secs / cpus : 0.0,
		secs);
	if (pl->writer)
		fprintf(stderr, ", raw %.2f MB, stored %.2f MB (%.2fx)",
			(double)ws.raw_bytes / 1e6,
			(double)ws.stored_bytes / 1e6,
			ws.stored_bytes ? (double)ws.raw_bytes /
					  (double)ws.stored_bytes : 0.0);
	fputc('\n', stderr);
}

void say_cut(const struct pipeline *pl)
{
	struct cr_stats st;

	creader_stats(pl->reader, &st);
	fprintf(stderr, "pipe: interrupted (SIG%s) after %llu records: the "
		"output is incomplete\n", sigabbrev_np(pl->cut_signo),
		(unsigned long long)st.records);
}

/* Blocks the encoder could not take in time: a warning even with -q. */
void warn_dropped(const struct pipeline *pl)
{
	struct cw_stats ws = { 0 };

	if (pl->writer)
		cwriter_stats(pl->writer, &ws);
	if (ws.dropped_blocks)
		fprintf(stderr, "pipe: warning: the encoder fell behind: %llu "
			"blocks (%llu records, %llu samples) were dropped and "
			"are counted lost in the file\n"
			"hint: use a faster codec level (such as -c zstd:1) or "
			"a larger queue= in -c\n",
			(unsigned long long)ws.dropped_blocks,
			(unsigned long long)ws.dropped_records,
			(unsigned long long)ws.dropped_samples);
	if (pl->sinks_dropped_records)
		fprintf(stderr, "pipe: warning: the record sinks fell behind: "
			"%llu records (%llu samples) were not given to them "
			"and are counted lost there%s\n"
			"hint: a larger queue= for the record sinks, or record "
			"to a file and read it afterwards\n",
			(unsigned long long)pl->sinks_dropped_records,
			(unsigned long long)pl->sinks_dropped_samples,
			has_byte_sink(pl) ? " (the file has them)" : "");
}

/* Records of process state (COMM, MMAP, FORK, EXIT) the symbolizer
 * ignored as malformed: a warning naming the input, even with -q. */
void warn_malformed(const struct pipeline *pl)
{
	uint64_t n = pl->hr.sym ? symbolizer_nr_malformed(pl->hr.sym) : 0;
	char from[PATH_MAX + 8], line[PATH_MAX + 160];

	if (!n)
		return;
	if (pl->hr.input)
		snprintf(from, sizeof(from), "in '%s'", pl->hr.input);
	else
		snprintf(from, sizeof(from), "from %s", pl->src->ctx.what);
	snprintf(line, sizeof(line), "%" PRIu64 " malformed records of "
		 "process state ignored %s: samples after them may show "
		 "[unknown]", n, from);
	print_line("warning: ", line);
}
