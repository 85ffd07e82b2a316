/*
 * src_perfdata.c - the `perfdata` record source: reads a perf.data file of
 * `perf record` (file mode, or pipe mode from a pipe or `-`) through
 * formats/pdread.c, builds pipe's metadata from its attrs and features,
 * and hands out its records in batches, a round ending at each
 * FINISHED_ROUND.  A recording whose recorder was killed is read up to
 * its torn tail and reported as recovered.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe_plugin.h"
#include "grow.h"
#include "pdread.h"
#include "sideband.h"

#define BATCH_RECS 4096           /* records per batch at most */
#define ARENA_CAP (1u << 20)      /* bytes of records per batch */
#define AHEAD_RECS 65536          /* records read ahead for the metadata */
#define AHEAD_BYTES (16u << 20)
#define STREAMS_MAX 4096

struct pdsrc {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	const char *path;             /* borrowed from the args */
	bool strict;                  /* damage is an error */
	int fd;                       /* owned unless stdin */
	struct pdread *rd;            /* owned */
	uint32_t nr_streams;          /* CPU streams 0..n-1 are CPUs */
	/* records read ahead while building the metadata, handed out first */
	struct bytebuf ahead;         /* owned copies, back to back */
	size_t ahead_pos;
	bool ahead_round;             /* a round ended at ahead.len */
	/* the batch */
	uint8_t *arena;               /* ARENA_CAP bytes of record copies */
	struct pipe_record *recs;     /* BATCH_RECS entries */
	uint64_t bad_build_ids;       /* MMAP2 claiming an impossible id */
	bool ended;                   /* pdread said END */
	bool reported;
};

static const struct pipe_param pdsrc_params[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL | PIPE_PARAM_REQUIRED,
	  NULL, "perf.data file to read, - for standard input (pipe mode)",
	  NULL, 0, 0 },
	{ "strict", PIPE_PARAM_BOOL, 0, "off",
	  "a torn or damaged end is an error (exit 1) instead of a warning",
	  NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static void pdsrc_close(void *state)
{
	struct pdsrc *s = state;

	pdread_free(s->rd);
	if (s->fd > STDIN_FILENO)
		close(s->fd);
	free(s->ahead.p);
	free(s->arena);
	free(s->recs);
}

static int pdsrc_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct pdsrc *s = *state; /* zeroed by the host (state_size) */
	char msg[512];
	int ret;

	s->host = host;
	s->ctx = ctx;
	s->path = host->arg_str(ctx, "path");
	s->strict = host->arg_int(ctx, "strict");
	s->arena = malloc(ARENA_CAP);
	s->recs = malloc(BATCH_RECS * sizeof(*s->recs));
	if (!s->arena || !s->recs) {
		ret = -ENOMEM;
		host->error(ctx, "cannot start source 'perfdata': out of "
			    "memory");
		goto fail;
	}
	if (!strcmp(s->path, "-")) {
		s->fd = STDIN_FILENO;
	} else {
		s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0) {
			ret = -errno;
			host->error(ctx, "cannot open '%s': %s", s->path,
				    strerror(errno));
			goto fail;
		}
	}
	ret = pdread_open(&s->rd, s->fd,
			  strcmp(s->path, "-") ? s->path : "<stdin>", msg,
			  sizeof(msg));
	if (ret < 0) {
		host->error(ctx, "%s", msg);
		if (strstr(msg, "PERFILE2"))
			host->hint(ctx, "pipe files are read with -s file:%s",
				   s->path);
		goto fail;
	}
	return 0;
fail:
	pdsrc_close(s);
	return ret;
}

static int read_fail(struct pdsrc *s, int ret)
{
	s->host->error(s->ctx, "%s", pdread_error(s->rd));
	return ret;
}

/*
 * Pipe mode carries attrs and features as records, and the kernel's map
 * (for kernel_text) comes early in the data of both modes: read ahead
 * until the first sample, keeping copies to hand out first.
 */
static int read_ahead(struct pdsrc *s)
{
	const struct perf_event_header *h;
	size_t n = 0;
	int ret;

	while (n < AHEAD_RECS && s->ahead.len < AHEAD_BYTES) {
		ret = pdread_next(s->rd, &h);
		if (ret == PDREAD_END) {
			s->ended = true;
			return 0;
		}
		if (ret < 0)
			return read_fail(s, ret);
		if (bytebuf_put(&s->ahead, h, h->size) < 0)
			return -ENOMEM;
		n++;
		if (h->type == PERF_RECORD_SAMPLE)
			break;
	}
	return 0;
}

static int set_prop(struct pdsrc *s, const char *key, const char *value)
{
	if (!value || !value[0])
		return 0;
	return s->host->meta_set_prop(s->ctx, key, value);
}

static const char *kernel_build_id(const struct pdread_info *in, char *hex,
				   size_t cap)
{
	uint32_t i, j;

	for (i = 0; i < in->nr_build_ids; i++) {
		const struct pdread_build_id *b = &in->build_ids[i];

		if (strcmp(b->path, "[kernel.kallsyms]"))
			continue;
		for (j = 0; j < b->len && 2 * j + 2 < cap; j++)
			snprintf(hex + 2 * j, 3, "%02x", b->id[j]);
		return hex;
	}
	return NULL;
}

/* perf's default clock is its own (perf_clock); -k names a clockid */
static const char *clock_name(const struct pdread_info *in, char *buf,
			      size_t cap)
{
	static const char *const names[] = {
		"realtime", "monotonic", "process_cputime", "thread_cputime",
		"monotonic_raw", "realtime_coarse", "monotonic_coarse",
		"boottime", "realtime_alarm", "boottime_alarm", NULL, "tai",
	};

	if (!in->has_clockid)
		return "perf";
	if (in->clockid < sizeof(names) / sizeof(names[0]) &&
	    names[in->clockid])
		return names[in->clockid];
	snprintf(buf, cap, "clockid %" PRIu64, in->clockid);
	return buf;
}

static int build_meta(struct pdsrc *s)
{
	const struct pdread_info *in = pdread_info(s->rd);
	int32_t *cpus;
	char buf[128], name[96];
	uint32_t e, n;
	int ret = 0;

	if (!in->nr_events) {
		s->host->error(s->ctx, "cannot read '%s': it describes no "
			       "events (no attrs)", s->path);
		return -EINVAL;
	}
	for (e = 0; e < in->nr_events && ret >= 0; e++) {
		const struct pdread_event *ev = &in->events[e];
		const struct perf_event_attr *a =
			(const struct perf_event_attr *)(const void *)ev->attr;

		if (!ev->name)
			pdread_attr_name(a, name, sizeof(name));
		ret = s->host->meta_add_event(s->ctx, a,
					      ev->name ? ev->name : name,
					      ev->ids, ev->nr_ids);
	}
	if (ret < 0)
		return ret;
	n = in->nr_cpus_avail > in->nr_cpus_online ? in->nr_cpus_avail
						   : in->nr_cpus_online;
	if (n == 0)
		n = 1;
	if (n > STREAMS_MAX)
		n = STREAMS_MAX;
	cpus = malloc(n * sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	for (e = 0; e < n; e++)
		cpus[e] = (int32_t)e;
	ret = s->host->meta_set_streams(s->ctx, n, cpus);
	free(cpus);
	if (ret < 0)
		return ret;
	s->nr_streams = n;
	ret |= set_prop(s, "hostname", in->hostname);
	ret |= set_prop(s, "release", in->release);
	ret |= set_prop(s, "arch", in->arch);
	ret |= set_prop(s, "cmdline", in->cmdline);
	ret |= set_prop(s, "cpu", in->cpudesc);
	ret |= set_prop(s, "perf_version", in->version);
	if (in->nr_cpus_online) {
		snprintf(buf, sizeof(buf), "%" PRIu32, in->nr_cpus_online);
		ret |= set_prop(s, "nr_cpus_online", buf);
	}
	if (in->kernel_text) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, in->kernel_text);
		ret |= set_prop(s, "kernel_text", buf);
	}
	ret |= set_prop(s, "kernel_build_id",
			kernel_build_id(in, buf, sizeof(buf)));
	ret |= set_prop(s, "clock", clock_name(in, buf, sizeof(buf)));
	if (in->has_clock_data) {
		/* the recording's clock and the wall clock at one instant */
		snprintf(buf, sizeof(buf), "%" PRIu64, in->clock_ref_ns);
		ret |= set_prop(s, "clock_ref_ns", buf);
		snprintf(buf, sizeof(buf), "%" PRIu64, in->clock_wall_ns);
		ret |= set_prop(s, "clock_wall_ns", buf);
	}
	ret |= set_prop(s, "source", in->pipe_mode ? "perf.data (pipe mode)"
						     : "perf.data");
	return ret < 0 ? -EINVAL : 0;
}

static int pdsrc_start(void *state)
{
	struct pdsrc *s = state;
	int ret;

	ret = read_ahead(s);
	if (ret < 0)
		return ret;
	return build_meta(s);
}

/* The CPU stream of record h of event ev: its CPU field, else the cpu
 * perf's ID_INDEX gives its sample id (perf record leaves CPU out of the
 * samples of a command's events), else stream 0. */
static uint32_t stream_of(struct pdsrc *s, const struct perf_event_header *h,
			  uint32_t ev, uint32_t cpu)
{
	const struct pdread_info *in = pdread_info(s->rd);
	const struct perf_event_attr *a = NULL;
	int32_t where, tid;

	if (ev < in->nr_events)
		a = (const struct perf_event_attr *)(const void *)
		    in->events[ev].attr;
	if ((!a || !(a->sample_type & PERF_SAMPLE_CPU)) &&
	    pdread_where(s->rd, h, &where, &tid) == 0 && where >= 0)
		cpu = (uint32_t)where;
	return cpu < s->nr_streams ? cpu : 0;
}

/* Copy record h into the batch with its event, time and stream. */
static void batch_add(struct pdsrc *s, struct pipe_batch *b, size_t *used,
		      const struct perf_event_header *h)
{
	struct pipe_record *rec = &s->recs[b->nr];
	struct pipe_sample_id sid = PIPE_INIT(sid);
	struct sideband sb;
	uint32_t ev;

	memcpy(s->arena + *used, h, h->size);
	rec->hdr = (const struct perf_event_header *)(const void *)
		   (s->arena + *used);
	*used += (h->size + 7u) & ~7u;
	/* kernel 6.18 sets the build-id flag over maj/min/inode */
	if (h->type == PERF_RECORD_MMAP2 &&
	    (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
	    sideband_decode(h, &sb) == 0 && !sb.build_id)
		s->bad_build_ids++;
	ev = pdread_event_of(s->rd, h);
	rec->event = ev == UINT32_MAX ? PIPE_EVENT_NONE : ev;
	rec->time = 0;
	rec->stream = sideband_is_state(h->type) ? PIPE_STREAM_SIDEBAND : 0;
	if (s->host->decode_sample_id(s->ctx, rec, &sid) == 0) {
		rec->time = sid.time;
		if (rec->stream == 0)
			rec->stream = stream_of(s, h, ev, sid.cpu);
	}
	b->nr++;
}

static int report_end(struct pdsrc *s)
{
	const struct pdread_stats *st = pdread_stats(s->rd);
	const struct pdread_info *in = pdread_info(s->rd);

	if (s->reported)
		return 0;
	s->reported = true;
	if (st->late_attrs)
		s->host->log(s->ctx, PIPE_LOG_WARN,
			     "'%s': %" PRIu64 " event attrs after the first "
			     "record were ignored", s->path, st->late_attrs);
	if (st->id_index_ignored)
		s->host->log(s->ctx, PIPE_LOG_WARN,
			     "'%s': %" PRIu64 " ID_INDEX records ignored (a "
			     "bad size, or after the first kernel record)",
			     s->path, st->id_index_ignored);
	if (s->bad_build_ids)
		s->host->log(s->ctx, PIPE_LOG_WARN,
			     "'%s': %" PRIu64 " MMAP2 records flag a build-id "
			     "of impossible size (perf 6.1 aborts on them): "
			     "read as maps without a build-id", s->path,
			     s->bad_build_ids);
	if (in->size_unknown)
		s->host->log(s->ctx, PIPE_LOG_WARN,
			     "'%s' was not finished by its recorder (data "
			     "size 0, no features): recovered %" PRIu64
			     " records", s->path, st->records);
	if (!st->torn && !st->bad)
		return 0;
	if (s->strict) {
		s->host->error(s->ctx, "%s in '%s' at offset %" PRIu64
			       ": %" PRIu64 " bytes cannot be read",
			       st->bad ? "bad record" : "torn tail", s->path,
			       st->stop_offset, st->lost_bytes);
		return -EINVAL;
	}
	s->host->log(s->ctx, PIPE_LOG_WARN,
		     "%s in '%s' at offset %" PRIu64 ": %" PRIu64
		     " bytes dropped", st->bad ? "bad record" : "torn tail",
		     s->path, st->stop_offset, st->lost_bytes);
	return 0;
}

static int pdsrc_read(void *state, struct pipe_batch *out)
{
	struct pdsrc *s = state;
	const struct perf_event_header *h;
	size_t used = 0;
	int ret;

	out->recs = s->recs;
	out->nr = 0;
	out->flags = 0;
	while (out->nr < BATCH_RECS && used + 65536 <= ARENA_CAP) {
		if (s->ahead_pos < s->ahead.len) {
			h = (const void *)(s->ahead.p + s->ahead_pos);
			s->ahead_pos += h->size;
		} else if (s->ended) {
			break;
		} else {
			ret = pdread_next(s->rd, &h);
			if (ret == PDREAD_END) {
				s->ended = true;
				break;
			}
			if (ret < 0)
				return read_fail(s, ret);
		}
		if (h->type == PD_REC_FINISHED_ROUND) {
			out->flags |= PIPE_BATCH_ROUND_END;
			break;
		}
		batch_add(s, out, &used, h);
	}
	if (out->nr || out->flags)
		return 0;
	ret = report_end(s);
	return ret < 0 ? ret : PIPE_EOF;
}

PIPE_PLUGIN_SOURCE(
	.name = "perfdata",
	.summary = "read a perf.data file of perf record (file or pipe mode)",
	.version = "1.0",
	.params = pdsrc_params,
	.state_size = sizeof(struct pdsrc),
	.open = pdsrc_open,
	.close = pdsrc_close,
	.start = pdsrc_start,
	.read = pdsrc_read
);
