/*
 * sink_pprof.c - the `pprof` record sink: writes the samples as a gzipped
 * pprof profile (formats/pprof.c) for go tool pprof and the fleet
 * profilers that read it.  Two value columns per event (samples, and the
 * period in its unit), one location per distinct address and symbol, one
 * mapping per binary with its build-id, labels pid, tid and comm.  Names
 * come from the host's symbolizer, as the report sink shows them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe_plugin.h"
#include "addrcache.h"
#include "buildid.h"
#include "fdio.h"
#include "frames.h"
#include "pprof.h"
#include "sideband.h"
#include "strtab.h"

#define CACHE_BITS 16            /* (pid, address, mode) -> location: 64K */
#define BINS_MAX (1u << 16)      /* binaries remembered from maps */

struct bin {
	const char *path;         /* borrowed from pp.paths */
	uint64_t start, limit, pgoff; /* the first map of it */
	char build_id[2 * BUILDID_MAX + 1]; /* hex, "" none */
	bool id_known;            /* build_id filled (or looked for) */
};

struct pp {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	const char *path;             /* borrowed from the args */
	int fd;                       /* the host's output */
	int level;                    /* gzip level */
	bool lines;                   /* source lines and inline levels */
	struct pprof *prof;           /* owned */
	uint32_t nr_events;
	int64_t *values;              /* 2 * nr_events */
	uint64_t *locs;               /* one stack */
	struct addrcache cache;       /* location id per (pid, address as
				       * recorded, cpumode | 1 << 16 when
				       * looked up one byte back), forgotten
				       * at each sideband record */
	struct strtab paths;          /* binaries: bins[number] */
	struct bin *bins;             /* owned: one per path */
	size_t cap_bins;              /* bins allocated */
	uint64_t kernel_text;
	uint64_t first_time, last_time;
};

static const struct pipe_param pp_params[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL | PIPE_PARAM_REQUIRED,
	  NULL, "profile file to write (gzipped profile.proto), - for "
	  "standard output", NULL, 0, 0 },
	{ "level", PIPE_PARAM_INT, 0, "6", "gzip level", NULL, 1, 9 },
	{ "lines", PIPE_PARAM_BOOL, 0, "on",
	  "source lines and inlined functions from DWARF", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static void pp_close(void *state)
{
	struct pp *s = state;

	pprof_free(s->prof);
	strtab_release(&s->paths);
	free(s->bins);
	addrcache_free(&s->cache);
	free(s->locs);
	free(s->values);
}

static int pp_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		   void **state)
{
	struct pp *s = *state; /* zeroed by the host (state_size) */
	int ret = -ENOMEM;

	s->host = host;
	s->ctx = ctx;
	s->path = host->arg_str(ctx, "path");
	s->paths.max = BINS_MAX;
	s->level = (int)host->arg_int(ctx, "level");
	s->lines = host->arg_int(ctx, "lines") && PIPE_HOST_HAS(host, srcline);
	s->locs = malloc(PPROF_DEPTH_MAX * sizeof(*s->locs));
	if (!s->locs ||
	    addrcache_init(&s->cache, CACHE_BITS, sizeof(uint64_t)) < 0) {
		host->error(ctx, "cannot start sink 'pprof': out of memory");
		goto fail;
	}
	ret = fdio_output(host, ctx, s->path, &s->fd, NULL);
	if (ret < 0)
		goto fail;
	return 0;
fail:
	pp_close(s);
	return ret;
}

/* The period's unit: the software clocks count nanoseconds. */
static const char *period_unit(const struct perf_event_attr *a)
{
	if (a->type == PERF_TYPE_SOFTWARE &&
	    (a->config == PERF_COUNT_SW_CPU_CLOCK ||
	     a->config == PERF_COUNT_SW_TASK_CLOCK))
		return "nanoseconds";
	return "events";
}

static int pp_start(void *state)
{
	struct pp *s = state;
	const struct pipe_meta *m = s->host->meta(s->ctx);
	const char *kt = s->host->meta_prop(s->ctx, "kernel_text");
	char name[300];
	uint32_t e;
	int ret;

	s->nr_events = m->nr_events;
	if (!s->nr_events || 2 * s->nr_events > PPROF_TYPES_MAX) {
		s->host->error(s->ctx, "cannot write '%s': %u events (1 to %u "
			       "can be written)", s->path, s->nr_events,
			       PPROF_TYPES_MAX / 2);
		return -EINVAL;
	}
	s->values = calloc(2 * s->nr_events, sizeof(*s->values));
	ret = s->values ? pprof_new(&s->prof, 2 * s->nr_events) : -ENOMEM;
	for (e = 0; ret == 0 && e < s->nr_events; e++) {
		snprintf(name, sizeof(name), "%s_samples", pipe_meta_event(m, e)->name);
		ret = pprof_type(s->prof, 2 * e, name, "count");
		if (ret == 0)
			ret = pprof_type(s->prof, 2 * e + 1, pipe_meta_event(m, e)->name,
					 period_unit(pipe_meta_event(m, e)->attr));
	}
	if (ret < 0) {
		s->host->error(s->ctx, "cannot write '%s': %s", s->path,
			       strerror(-ret));
		return ret;
	}
	pprof_set_default(s->prof, 1);
	s->kernel_text = kt ? strtoull(kt, NULL, 0) : 0;
	return 0;
}

/* The binary mapped from path (borrowed: until the next bin_find that
 * adds), added when `add` and unknown; NULL: unknown, or no room. */
static struct bin *bin_find(struct pp *s, const char *path, bool add)
{
	int64_t i = add ? strtab_add_item(&s->paths, path, &s->bins,
					  &s->cap_bins, sizeof(*s->bins))
			: strtab_find(&s->paths, path);

	if (i < 0)
		return NULL;
	s->bins[i].path = s->paths.strs[i];
	return &s->bins[i];
}

static void hex(const uint8_t *id, uint32_t len, char *out)
{
	uint32_t i;

	for (i = 0; i < len && i < BUILDID_MAX; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* Remember where a binary is first mapped, and its recorded build-id. */
static void note_map(struct pp *s, const struct perf_event_header *h)
{
	struct sideband sb;
	struct bin *b;

	if (sideband_decode(h, &sb) < 0 ||
	    (sb.misc & PERF_RECORD_MISC_MMAP_DATA) || !sb.name[0])
		return;
	b = bin_find(s, sb.name, true);
	if (!b || b->limit)
		return;
	b->start = sb.start;
	b->limit = sb.start + sb.len;
	b->pgoff = sb.pgoff;
	if (sb.build_id && sb.build_id_len <= BUILDID_MAX) {
		hex(sb.build_id, sb.build_id_len, b->build_id);
		b->id_known = true;
	}
}

static uint64_t mapping_of(struct pp *s, const struct pipe_symbol *sym)
{
	uint8_t id[BUILDID_MAX];
	uint32_t len;
	struct bin *b;

	if (!sym->dso)
		return 0;
	if (sym->flags & PIPE_SYM_KERNEL)
		return pprof_mapping(s->prof, sym->dso,
				     s->kernel_text ? s->kernel_text
						    : UINT64_C(0xffffffff80000000),
				     UINT64_MAX, 0,
				     s->host->meta_prop(s->ctx,
							"kernel_build_id"));
	b = bin_find(s, sym->dso, false);
	if (!b)
		return pprof_mapping(s->prof, sym->dso, 0, 0, 0, NULL);
	if (!b->id_known) {
		b->id_known = true;
		if (buildid_of_file(b->path, id, &len) == 0)
			hex(id, len, b->build_id);
	}
	return pprof_mapping(s->prof, b->path, b->start, b->limit, b->pgoff,
			     b->build_id);
}

/*
 * The levels of a location into lines: with source lines, the functions
 * inlined at `look` (innermost first) and the symbol's own function, each
 * with its line; else the symbol alone.  Returns how many.
 */
static uint32_t levels(struct pp *s, uint32_t pid, uint64_t look,
		       uint16_t misc, const char *name, bool named,
		       struct pprof_line *lines)
{
	const struct pipe_srcline *sl = NULL;
	uint32_t i, n = 0;

	if (s->lines && named)
		sl = s->host->srcline(s->ctx, pid, look, misc);
	for (i = 0; sl && i < sl->nr && n < PPROF_LINES_MAX; i++) {
		const struct pipe_src_frame *f = pipe_src_frame(sl, i);
		bool own = i + 1 == sl->nr;

		/* the last level is the symbol's: named as the report names
		 * it */
		lines[n].function = pprof_function(s->prof,
			own ? name : f->function ? f->function : "[unknown]",
			f->decl_file, f->decl_line);
		lines[n].line = f->line;
		n += lines[n].function != 0;
	}
	if (n > 0)
		return n;
	lines[0].function = pprof_function(s->prof, name, NULL, 0);
	lines[0].line = 0;
	return lines[0].function != 0;
}

/* The location of address `addr` of pid (looked up at `look`, one byte
 * back for return addresses), through the cache. */
static uint64_t location(struct pp *s, uint32_t pid, uint64_t addr,
			 uint64_t look, uint16_t misc)
{
	uint32_t mode = misc | (uint32_t)(addr - look) << 16;
	struct addrcache_key *slot;
	const uint64_t *hit = addrcache_get(&s->cache, pid, addr, mode, &slot);
	struct pipe_symbol sym = PIPE_INIT(sym);
	struct pprof_line lines[PPROF_LINES_MAX];
	char buf[512];
	const char *name;
	uint64_t map, loc;
	uint32_t n;

	if (hit)
		return *hit;
	if (s->host->symbolize(s->ctx, pid, look, misc, &sym) < 0)
		memset(&sym, 0, sizeof(sym));
	name = sym.name;
	if (!name) {
		/* as the report shows it: the recorded address, not the one
		 * looked up */
		const char *base = sym.dso ? strrchr(sym.dso, '/') : NULL;

		base = base ? base + 1 : sym.dso;
		if (base)
			snprintf(buf, sizeof(buf), "[unknown] %s+0x%" PRIx64,
				 base, sym.offset + (addr - look));
		else
			snprintf(buf, sizeof(buf), "[unknown] 0x%" PRIx64,
				 sym.offset + (addr - look));
		name = buf;
	}
	map = mapping_of(s, &sym);
	n = levels(s, pid, look, misc, name, name == sym.name, lines);
	loc = pprof_location(s->prof, map, addr, lines, n);
	if (loc)
		*(uint64_t *)addrcache_put(&s->cache, slot, pid, addr, mode) =
			loc;
	return loc;
}

/*
 * The locations of a sample's stack, leaf first, in s->locs: how many,
 * or 0 with *full set when the profile had no room for one (memory, or
 * PPROF_ITEMS_MAX).
 */
static uint32_t stack(struct pp *s, const struct pipe_sample *smp,
		      bool *full)
{
	struct frames walk;
	struct frame f;
	uint32_t n = 0;

	*full = false;
	if (!smp->nr_callchain) {
		s->locs[n] = location(s, smp->pid, smp->ip, smp->ip,
				      smp->misc & PERF_RECORD_MISC_CPUMODE_MASK);
		*full = !s->locs[n];
		return s->locs[n] ? 1 : 0;
	}
	frames_init(&walk, smp);
	while (n < PPROF_DEPTH_MAX && frames_next(&walk, &f)) {
		/* return addresses point after the call: look one back */
		s->locs[n] = location(s, smp->pid, f.addr, f.addr - f.ret,
				      f.misc & PERF_RECORD_MISC_CPUMODE_MASK);
		if (!s->locs[n]) {
			*full = true;
			return 0;
		}
		n++;
	}
	return n;
}

static int pp_sample(struct pp *s, const struct pipe_record *rec)
{
	struct pipe_sample smp = PIPE_INIT(smp);
	struct pprof_labels lab;
	uint32_t n;
	bool full;
	int ret;

	if (s->host->decode_sample(s->ctx, rec, &smp) < 0 ||
	    smp.event >= s->nr_events)
		return 0;
	if (smp.time) {
		if (!s->first_time)
			s->first_time = smp.time;
		s->last_time = smp.time;
	}
	n = stack(s, &smp, &full);
	if (full) {
		s->host->error(s->ctx, "cannot write '%s': no room for another "
			       "location (%s, or %u at most)", s->path,
			       strerror(ENOMEM), PPROF_ITEMS_MAX);
		return -ENOMEM;
	}
	memset(s->values, 0, 2 * s->nr_events * sizeof(*s->values));
	s->values[2 * smp.event] = 1;
	s->values[2 * smp.event + 1] = (int64_t)smp.period;
	lab.pid = (smp.sample_type & PERF_SAMPLE_TID) ? (int64_t)smp.pid : -1;
	lab.tid = (smp.sample_type & PERF_SAMPLE_TID) ? (int64_t)smp.tid : -1;
	lab.comm = s->host->thread_comm(s->ctx, smp.tid);
	ret = pprof_sample(s->prof, s->locs, n, s->values, &lab);
	if (ret < 0)
		s->host->error(s->ctx, "cannot write '%s': %s", s->path,
			       ret == -E2BIG ? "too many distinct stacks"
					     : strerror(-ret));
	return ret;
}

static int pp_consume(void *state, const struct pipe_batch *b)
{
	struct pp *s = state;
	size_t i;
	int ret;

	for (i = 0; i < b->nr; i++) {
		const struct perf_event_header *h = b->recs[i].hdr;

		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			ret = pp_sample(s, &b->recs[i]);
			if (ret < 0)
				return ret;
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			note_map(s, h);
			addrcache_forget(&s->cache);
			break;
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
			addrcache_forget(&s->cache);
			break;
		default:
			break;
		}
	}
	return 0;
}

static int pp_finish(void *state)
{
	struct pp *s = state;
	const char *start = s->host->meta_prop(s->ctx, "start_realtime_ns");
	int ret;

	pprof_set_times(s->prof, start ? strtoll(start, NULL, 10) : 0,
			(int64_t)(s->last_time - s->first_time));
	ret = pprof_write(s->prof, s->fd, s->level);
	if (ret < 0)
		s->host->error(s->ctx, "cannot write '%s': %s", s->path,
			       strerror(-ret));
	return ret;
}

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_SYMBOLS | PIPE_PLUGIN_OUTPUT,
	.name = "pprof",
	.summary = "write a pprof profile (gzipped profile.proto) for go tool "
		   "pprof and fleet profilers",
	.version = "1.0",
	.params = pp_params,
	.state_size = sizeof(struct pp),
	.open = pp_open,
	.close = pp_close,
	.start_sink = pp_start,
	.consume = pp_consume,
	.finish = pp_finish
);
