/*
 * sink_perfdata.c - the `perfdata` record sink: writes the records it is
 * fed as a perf.data file that perf report, perf script and hotspot's
 * perfparser read (formats/pdwrite.c): file mode to a file, pipe mode to
 * a pipe, optionally zstd-compressed records.  Build-ids come from MMAP2
 * records that carry one, else from the files the maps name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe_plugin.h"
#include "buildid.h"
#include "fdio.h"
#include "pdwrite.h"
#include "sideband.h"
#include "strtab.h"

#define PATHS_MAX (1u << 16) /* distinct mapped files remembered */

struct mapped {
	uint8_t id[PD_BUILD_ID_MAX]; /* from an MMAP2 record */
	uint8_t len;                 /* 0: none recorded */
	bool kernel;
};

struct pdsink {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	const char *path;             /* borrowed from the args */
	int fd;                       /* the host's output */
	struct pdwrite *w;            /* owned */
	struct strtab paths;          /* mapped files: maps[number] */
	struct mapped *maps;          /* owned: one per path */
	size_t cap_maps;              /* maps allocated */
};

static const struct pipe_param pdsink_params[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL | PIPE_PARAM_REQUIRED,
	  NULL, "perf.data file to write, - for standard output", NULL, 0,
	  0 },
	{ "compress", PIPE_PARAM_INT, 0, "0",
	  "zstd level of compressed records, 0: none", NULL, 0, 19 },
	{ "record", PIPE_PARAM_ENUM, 0, "compressed",
	  "compressed records as PERF_RECORD_COMPRESSED (perf 5.2 on) or "
	  "COMPRESSED2 (8-aligned, newer perf)", "compressed|compressed2",
	  0, 0 },
	{ "mode", PIPE_PARAM_ENUM, 0, "auto",
	  "file or pipe mode; auto: file mode for a regular file",
	  "auto|file|pipe", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static int pdsink_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	struct pdsink *s = *state; /* zeroed by the host (state_size) */
	bool regular;
	int ret;

	s->host = host;
	s->ctx = ctx;
	s->path = host->arg_str(ctx, "path");
	s->paths.max = PATHS_MAX;
	ret = fdio_output(host, ctx, s->path, &s->fd, &regular);
	if (ret < 0)
		return ret;
	if (!strcmp(s->path, "-") && regular &&
	    host->arg_int(ctx, "mode") != 2)
		host->log(ctx, PIPE_LOG_NOTE,
			  "perf.data to standard output is written in pipe "
			  "mode");
	return 0;
}

static void pdsink_close(void *state)
{
	struct pdsink *s = state;

	pdwrite_free(s->w);
	strtab_release(&s->paths);
	free(s->maps);
}

static int fail_write(struct pdsink *s, int ret)
{
	s->host->error(s->ctx, "%s", pdwrite_error(s->w));
	return ret;
}

static int pdsink_start(void *state)
{
	struct pdsink *s = state;
	const struct pipe_meta *m = s->host->meta(s->ctx);
	struct pdwrite_event *ev;
	struct pdwrite_info info = { 0 };
	const char *online, *ktext;
	char msg[512];
	uint32_t i;
	int32_t max_cpu = -1;
	int ret, level = (int)s->host->arg_int(s->ctx, "compress");
	enum pdwrite_comp comp = PDWRITE_COMP_NONE;

	if (!m->nr_events) {
		s->host->error(s->ctx, "cannot write '%s': the recording has "
			       "no events", s->path);
		return -EINVAL;
	}
	ev = calloc(m->nr_events, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (i = 0; i < m->nr_events; i++) {
		ev[i].attr = pipe_meta_event(m, i)->attr;
		ev[i].name = pipe_meta_event(m, i)->name;
		ev[i].ids = pipe_meta_event(m, i)->ids;
		ev[i].nr_ids = pipe_meta_event(m, i)->nr_ids;
	}
	for (i = 0; i < m->nr_streams; i++)
		if (m->stream_cpu[i] > max_cpu)
			max_cpu = m->stream_cpu[i];
	online = s->host->meta_prop(s->ctx, "nr_cpus_online");
	info.hostname = s->host->meta_prop(s->ctx, "hostname");
	info.release = s->host->meta_prop(s->ctx, "release");
	info.arch = s->host->meta_prop(s->ctx, "arch");
	info.cmdline = s->host->meta_prop(s->ctx, "cmdline");
	info.cpudesc = s->host->meta_prop(s->ctx, "cpu");
	info.version = PD_PIPE_VERSION;
	ktext = s->host->meta_prop(s->ctx, "kernel_text");
	info.kernel_text = ktext ? strtoull(ktext, NULL, 0) : 0;
	info.nr_cpus_online = online ? (uint32_t)strtoul(online, NULL, 10)
				     : 0;
	info.nr_cpus_avail = (uint32_t)(max_cpu + 1);
	if (info.nr_cpus_online > info.nr_cpus_avail)
		info.nr_cpus_avail = info.nr_cpus_online;
	if (!info.nr_cpus_online)
		info.nr_cpus_online = info.nr_cpus_avail;
	if (level)
		comp = s->host->arg_int(s->ctx, "record") == 1
			       ? PDWRITE_COMP_V2 : PDWRITE_COMP_V1;
	ret = pdwrite_new(&s->w, s->fd, strcmp(s->path, "-") ? s->path
							     : "<stdout>",
			  s->host->arg_int(s->ctx, "mode") == 2 ||
				  !strcmp(s->path, "-"),
			  comp, level, ev, m->nr_events, &info, msg,
			  sizeof(msg));
	free(ev);
	if (ret < 0)
		s->host->error(s->ctx, "%s", msg);
	return ret;
}

/* Remember a mapped file (and a build-id its MMAP2 record carries). */
static int note_map(struct pdsink *s, const struct perf_event_header *h)
{
	struct sideband sb;
	struct mapped *m;
	const char *name;
	int64_t i;

	if (sideband_decode(h, &sb) < 0 ||
	    (sb.misc & PERF_RECORD_MISC_MMAP_DATA))
		return 0;
	name = sb.name;
	if (name[0] != '/')
		return 0; /* files only: the kernel's id is in the metadata */
	i = strtab_add_item(&s->paths, name, &s->maps, &s->cap_maps,
			    sizeof(*s->maps));
	if (i == -E2BIG)
		return 0; /* PATHS_MAX remembered: no more */
	if (i < 0)
		return -ENOMEM;
	m = &s->maps[i];
	if (sb.build_id && sb.build_id_len <= PD_BUILD_ID_MAX && !m->len) {
		memcpy(m->id, sb.build_id, sb.build_id_len);
		m->len = (uint8_t)sb.build_id_len;
	}
	return 0;
}

static int pdsink_consume(void *state, const struct pipe_batch *b)
{
	struct pdsink *s = state;
	size_t i;
	int ret;

	for (i = 0; i < b->nr; i++) {
		const struct perf_event_header *h = b->recs[i].hdr;

		if (h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2) {
			ret = note_map(s, h);
			if (ret < 0)
				return ret;
		}
		ret = pdwrite_record(s->w, h, b->recs[i].time);
		if (ret < 0)
			return fail_write(s, ret);
	}
	return 0;
}

static int hex_id(const char *hex, uint8_t *id, uint32_t *len)
{
	uint32_t n = 0;
	unsigned int v;

	while (hex[0] && hex[1] && n < PD_BUILD_ID_MAX) {
		if (sscanf(hex, "%2x", &v) != 1)
			return -1;
		id[n++] = (uint8_t)v;
		hex += 2;
	}
	*len = n;
	return n ? 0 : -1;
}

static int pdsink_finish(void *state)
{
	struct pdsink *s = state;
	const char *kid = s->host->meta_prop(s->ctx, "kernel_build_id");
	uint8_t id[PD_BUILD_ID_MAX];
	uint32_t i, len;
	int ret = 0;

	if (kid && hex_id(kid, id, &len) == 0)
		ret = pdwrite_build_id(s->w, "[kernel.kallsyms]", id, len,
				       true);
	for (i = 0; ret == 0 && i < s->paths.nr; i++) {
		const struct mapped *m = &s->maps[i];
		const char *path = s->paths.strs[i];

		if (m->len)
			ret = pdwrite_build_id(s->w, path, m->id, m->len,
					       false);
		else if (buildid_of_file(path, id, &len) == 0)
			ret = pdwrite_build_id(s->w, path, id, len, false);
	}
	if (ret < 0)
		return ret;
	ret = pdwrite_finish(s->w);
	if (ret < 0)
		return fail_write(s, ret);
	return 0;
}

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_OUTPUT,
	.name = "perfdata",
	.summary = "write a perf.data file for perf report, perf script and "
		   "hotspot",
	.version = "1.0",
	.params = pdsink_params,
	.state_size = sizeof(struct pdsink),
	.open = pdsink_open,
	.close = pdsink_close,
	.start_sink = pdsink_start,
	.consume = pdsink_consume,
	.finish = pdsink_finish
);
