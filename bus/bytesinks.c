/*
 * bytesinks.c - the byte sinks' side of the bus: the container writer's
 * options (codec, block size, dictionaries) and its output to every byte
 * sink.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "params.h"
#include "pipeline.h"
#include "trust.h"

/* What the writer asks of the byte sinks. */
enum byte_call {
	BYTES_WRITE, /* the next bytes of the file */
	BYTES_FLUSH, /* push buffered output out (started sinks only) */
};

/* Every byte sink still running gets the call, even after one of them
 * failed on it, so that each failing sink's error is shown. */
static int call_byte_sinks(struct pipeline *pl, enum byte_call call,
			   const void *buf, size_t len, struct pipe_err *err)
{
	struct pipe_err e;
	uint32_t i;
	int ret, first = 0;

	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];

		if (!(s->p->flags & PIPE_PLUGIN_BYTES) || s->failed)
			continue;
		if (call == BYTES_FLUSH && !s->started)
			continue;
		if (call == BYTES_WRITE)
			ret = inst_write(s, buf, len, &e);
		else
			ret = inst_flush(s, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	return first;
}

static int write_bytes(void *opaque, const void *buf, size_t len,
		       struct pipe_err *err)
{
	return call_byte_sinks(opaque, BYTES_WRITE, buf, len, err);
}

/* The writer's flush: byte sinks push buffered output out, on the
 * thread that writes to them. */
static int flush_bytes(void *opaque, struct pipe_err *err)
{
	return call_byte_sinks(opaque, BYTES_FLUSH, NULL, 0, err);
}

bool has_byte_sink(const struct pipeline *pl)
{
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++)
		if (pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES)
			return true;
	return false;
}

bool has_record_sink(const struct pipeline *pl)
{
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++) {
		const struct pipe_plugin *p = pl->sinks[i]->p;

		if (!(p->flags & PIPE_PLUGIN_BYTES) &&
		    (p->consume || p->sample || p->sideband))
			return true;
	}
	return false;
}

/*
 * Without -c: zstd at level 3, and at level 1 for a live recording, whose
 * encoder runs on the machine being profiled: on the size/CPU curve
 * measured against perf record -z (docs/performance.md) level 1 keeps
 * the file under 0.8x perf's for less encoder CPU than level 3.
 */
static const char *default_codec(const struct pipeline *pl)
{
	const struct conf_entry *e = conf_find(pl->o->conf, PIPE_KIND_CODEC,
					       "zstd");

	if (!e || access(e->path, R_OK) != 0)
		return "none";
	/* live: level 1, but level 3 for blocks under 96 KiB, cut by their
	 * flush interval at a low rate or a quiet sideband: a tenth
	 * smaller for little CPU (docs/performance.md) */
	return pl->src->p->flags & PIPE_PLUGIN_LIVE ? "zstd:1,small=3" :
						       "zstd:3";
}

/* A pre-trained dictionary from dict_file=, copied into the file; opened
 * as an untrusted file is (a FIFO there must not hang pipe). */
static int read_dict_file(struct pipeline *pl, const char *path,
			  struct pipe_err *err)
{
	struct stat st;
	ssize_t n;
	int fd = trust_open(path, "cannot open dictionary", &st, err);

	if (fd < 0)
		return fd;
	if (st.st_size < 8 || st.st_size > (off_t)CONTAINER_DICT_MAX) {
		close(fd);
		return pipe_err_set(err, -EINVAL,
				    "cannot use dictionary '%s': %lld bytes (8 B to 1 MiB)",
				    path, (long long)st.st_size);
	}
	pl->dict_data = malloc((size_t)st.st_size);
	if (!pl->dict_data) {
		close(fd);
		return pipe_err_nomem(err, "cannot read dictionary '%s'", path);
	}
	n = fdio_read_full(fd, pl->dict_data, (size_t)st.st_size);
	close(fd);
	pl->dict_len = n < 0 ? 0 : (size_t)n;
	if (pl->dict_len != (size_t)st.st_size)
		return pipe_err_set(err, -EIO, "cannot read dictionary '%s'", path);
	return 0;
}

/* The writer options dict=, dict_size=, dict_file=: for codecs that
 * take dictionaries; asking another codec for one is an error. */
static int writer_dict_opts(struct pipeline *pl, struct cw_opts *wo,
			    struct pipe_err *err)
{
	static const int modes[] = { CW_DICT_AUTO, CW_DICT_ON, CW_DICT_OFF };
	const struct args *a = pl->codec->ctx.args;
	const char *file;
	int64_t m;

	wo->dict_mode = CW_DICT_OFF;
	m = args_int(a, "dict"); /* index in "auto|on|off" */
	if (!pl->codec->p->train || !pl->codec->p->add_dict) {
		if (m != 1 && !args_is_set(a, "dict_file"))
			return 0;
		pipe_err_set(err, -EINVAL, "%s takes no dictionary",
			     pl->codec->ctx.what);
		pipe_err_hint(err, "drop dict= and dict_file=, or use -c zstd");
		return -EINVAL;
	}
	if (m < 0 || m > 2)
		m = 2;
	file = args_str(a, "dict_file");
	if (file && m == 2) {
		pipe_err_set(err, -EINVAL, "codec '%s': dict_file='%s' needs "
			     "dictionaries, and dict=off turns them off",
			     pl->codec->p->name, file);
		pipe_err_hint(err, "drop dict=off to use the dictionary, or "
			      "dict_file= to go without");
		return -EINVAL;
	}
	/*
	 * A training takes up to seconds: on the encoder thread it still
	 * fills the queue a live recording must keep moving, so a live
	 * recording trains only when asked with dict=on or auto;
	 * transcoding trains by default.  A dict_file= needs no training:
	 * live, it is used as with dict=on.
	 */
	if (m == 0 && (pl->src->p->flags & PIPE_PLUGIN_LIVE) &&
	    !args_is_set(a, "dict"))
		m = file ? 1 : 2;
	wo->dict_mode = modes[m];
	wo->dict_size = (uint32_t)args_int(a, "dict_size");
	if (file) {
		int ret = read_dict_file(pl, file, err);

		if (ret < 0)
			return ret;
		wo->dict_data = pl->dict_data;
		wo->dict_len = pl->dict_len;
	}
	return 0;
}

/* Does some event record user stacks (PERF_SAMPLE_STACK_USER)? */
static bool meta_has_stacks(const struct meta *m)
{
	uint32_t i;

	for (i = 0; i < meta_nr_events(m); i++)
		if (meta_attr(m, i)->sample_type & PERF_SAMPLE_STACK_USER)
			return true;
	return false;
}

int open_writer(struct pipeline *pl, struct pipe_err *err)
{
	const char *spec = pl->o->codec ? pl->o->codec : default_codec(pl);
	struct cw_opts wo = { 0 };
	uint32_t i;
	int64_t tr;
	int ret;

	ret = inst_open(&pl->codec, pl->o->conf, PIPE_KIND_CODEC, spec,
			&pl->hr, err);
	if (ret < 0)
		return ret;
	wo.codec = pl->codec->p;
	wo.codec_state = pl->codec->state;
	wo.codec_ctx = &pl->codec->ctx;
	wo.codec_name = pl->codec->p->name;
	wo.block_size = (uint32_t)args_int(pl->codec->ctx.args, "block");
	/* a sample with a user stack is some 30 times larger: keep about as
	 * many samples of a thread together as the codec needs to find the
	 * stack they share */
	if (!args_is_set(pl->codec->ctx.args, "block") &&
	    meta_has_stacks(pl->hr.meta))
		wo.block_size = RUN_STACK_BLOCK;
	wo.flush_ns = (uint64_t)args_int(pl->codec->ctx.args, "flush");
	tr = args_int(pl->codec->ctx.args, "transform");
	wo.transform = tr == 1 || (tr == 0 && pl->codec->p->codec_id != 0);
	ret = writer_dict_opts(pl, &wo, err);
	if (ret < 0)
		return ret;
	wo.write = write_bytes;
	for (i = 0; i < pl->nr_sinks; i++)
		if ((pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES) &&
		    pl->sinks[i]->p->flush)
			wo.flush = flush_bytes;
	wo.opaque = pl;
	wo.async = true;
	/* the thread that drains the rings must never wait for the encoder */
	wo.drop_when_behind = pl->src->p->flags & PIPE_PLUGIN_LIVE;
	wo.queue_bytes = (size_t)args_int(pl->codec->ctx.args, "queue");
	return cwriter_new(&pl->writer, &wo, pl->hr.meta, err);
}
