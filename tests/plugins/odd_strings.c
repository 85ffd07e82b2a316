/*
 * odd_strings.c - a record source whose every string is hostile: the
 * event name, each property's key and value, a COMM and an MMAP2 hold
 * bytes that are not UTF-8, quotes, backslashes and control characters.
 * Every JSON pipe prints about such a recording must stay valid.  With
 * malformed=on the batch also holds process state that cannot be read: a
 * COMM whose name has no NUL and a FORK cut short.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "pipe_plugin.h"

#define ODD "q\"b\\s\001\037\377\303(\342\202\254\355\240\200\t_"
#define ODD_ID 77    /* the sample id of the one event */
#define ODD_PID 4242 /* the one process */
#define ODD_NR 5     /* records: COMM, MMAP2, (bad COMM, bad FORK,) SAMPLE */

struct odd {
	const struct pipe_host *host;
	struct pipe_ctx *ctx;
	uint64_t buf[64];                /* the records, 8-aligned */
	struct pipe_record recs[ODD_NR]; /* views into buf */
	int done;                        /* the batch was handed over */
	int malformed;                   /* malformed=on */
};

static const struct pipe_param odd_params[] = {
	PIPE_P_BOOL("malformed", "off", "add two malformed sideband records"),
	PIPE_P_END,
};

static int odd_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		    void **state)
{
	struct odd *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->host = host;
	s->ctx = ctx;
	s->malformed = (int)host->arg_int(ctx, "malformed");
	*state = s;
	return 0;
}

static void odd_close(void *state)
{
	free(state);
}

static int odd_start(void *state)
{
	static const char *const keys[] = {
		"hostname", "release", "arch", "cpu_desc", "cpuid", "cmdline",
		"nr_cpus_online", "start_realtime_ns", "source", ODD,
	};
	struct odd *s = state;
	struct perf_event_attr attr;
	uint64_t id = ODD_ID;
	int32_t cpu = 0;
	size_t i;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 1000;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			   PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	ret = s->host->meta_add_event(s->ctx, &attr, ODD, &id, 1);
	if (ret >= 0)
		ret = s->host->meta_set_streams(s->ctx, 1, &cpu);
	for (i = 0; ret >= 0 && i < sizeof(keys) / sizeof(keys[0]); i++)
		ret = s->host->meta_set_prop(s->ctx, keys[i],
					     i % 2 ? "1" ODD " " ODD : ODD);
	return ret < 0 ? ret : 0;
}

/* The sample_id_all trailer of sideband records: TID, TIME, IDENTIFIER. */
static uint64_t *trailer(uint64_t *p, uint64_t time)
{
	*p++ = (uint64_t)ODD_PID | (uint64_t)ODD_PID << 32;
	*p++ = time;
	*p++ = ODD_ID;
	return p;
}

static struct perf_event_header *header(uint64_t *p, uint32_t type,
					uint16_t misc, const uint64_t *end)
{
	struct perf_event_header *h = (struct perf_event_header *)p;

	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)((const char *)end - (const char *)p);
	return h;
}

static int odd_read(void *state, struct pipe_batch *out)
{
	struct odd *s = state;
	uint64_t *p = s->buf, *rec;
	size_t room = (sizeof(ODD) + 7) / 8, n;

	if (s->done)
		return PIPE_EOF;
	memset(s->buf, 0, sizeof(s->buf));
	/* COMM: pid, tid, comm */
	rec = p++;
	*p++ = (uint64_t)ODD_PID | (uint64_t)ODD_PID << 32;
	memcpy(p, ODD, sizeof(ODD) < 16 ? sizeof(ODD) : 15);
	p += 2;
	p = trailer(p, 10);
	s->recs[0] = (struct pipe_record){
		header(rec, PERF_RECORD_COMM, 0, p), 10,
		PIPE_STREAM_SIDEBAND, 0 };
	/* MMAP2: pid, tid, start, len, pgoff, maj, min, ino, ino_generation,
	 * prot, flags, filename */
	rec = p++;
	*p++ = (uint64_t)ODD_PID | (uint64_t)ODD_PID << 32;
	*p++ = 0x400000;
	*p++ = 0x1000;
	*p++ = 0;
	*p++ = 8 | (uint64_t)1 << 32;
	*p++ = 1000;
	*p++ = 0;
	*p++ = 5 | (uint64_t)2 << 32;
	memcpy(p, ODD, sizeof(ODD));
	p += room;
	p = trailer(p, 20);
	s->recs[1] = (struct pipe_record){
		header(rec, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, p), 20,
		PIPE_STREAM_SIDEBAND, 0 };
	n = 2;
	if (s->malformed) {
		/* COMM: pid, tid and 8 bytes of name without a NUL */
		rec = p++;
		*p++ = (uint64_t)ODD_PID | (uint64_t)ODD_PID << 32;
		memcpy(p++, "unended!", 8);
		s->recs[n++] = (struct pipe_record){
			header(rec, PERF_RECORD_COMM, 0, p), 24,
			PIPE_STREAM_SIDEBAND, 0 };
		/* FORK: pid, ppid, tid, ptid and no time */
		rec = p++;
		*p++ = (uint64_t)ODD_PID | (uint64_t)1 << 32;
		*p++ = (uint64_t)ODD_PID | (uint64_t)1 << 32;
		s->recs[n++] = (struct pipe_record){
			header(rec, PERF_RECORD_FORK, 0, p), 26,
			PIPE_STREAM_SIDEBAND, 0 };
	}
	/* SAMPLE: identifier, ip, pid/tid, time */
	rec = p++;
	*p++ = ODD_ID;
	*p++ = 0x400100;
	*p++ = (uint64_t)ODD_PID | (uint64_t)ODD_PID << 32;
	*p++ = 30;
	s->recs[n++] = (struct pipe_record){
		header(rec, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, p), 30,
		0, 0 };
	out->recs = s->recs;
	out->nr = n;
	out->flags = PIPE_BATCH_ROUND_END;
	s->done = 1;
	return 0;
}

static int odd_stop(void *state, int signo)
{
	(void)state;
	(void)signo;
	return 0;
}

PIPE_PLUGIN_SOURCE(
	.name = "oddstrings",
	.summary = "a recording whose every string is not UTF-8",
	.version = "1",
	.params = odd_params,
	.open = odd_open,
	.close = odd_close,
	.start = odd_start,
	.read = odd_read,
	.stop = odd_stop
);
