/*
 * fuzz_container.c - the container reader on a whole file in memory,
 * with the real codec plugins (instances kept across files): a forward read from a seekable source or
 * from a stream (a pipe), or a window or CPU/pid subset read, chosen by
 * the input's length modulo 4.  A seekable input is read in place, as
 * pipe reads a regular file (the source's `map`: the input itself, so
 * ASan sees a read past its end), or through read_at, as a file that
 * cannot be mapped: bit 2 of the length chooses.  Every record handed
 * out is decoded as a sink would, and its callchain and raw bytes are
 * read in full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "decode.h"
#include "fuzz.h"
#include "fuzz_plugins.h"
#include "memfile.h"

#define FUZZ_INSTS 64

/*
 * Codec instances cost much to open (the real host parses arguments, a
 * codec allocates its contexts), so an instance a file closes is kept
 * for the next file, unless it was handed a dictionary: that would carry
 * over and make a finding depend on the inputs before it.  The reader
 * gets a copy of the codec's descriptor whose add_dict marks the
 * instance before calling the codec's own.
 */
struct pooled {
	struct inst *in;      /* NULL: slot free */
	uint32_t codec;       /* codec id */
	bool busy;            /* opened by the file being read */
	bool dirty;           /* a dictionary was added: freed at close */
};

static struct loaded *codecs[4];
static struct pipe_plugin wrapped[4];
static struct pooled pool[FUZZ_INSTS];
static volatile uint64_t sink;

static struct pooled *pooled_of(const void *state)
{
	int i;

	for (i = 0; i < FUZZ_INSTS; i++)
		if (pool[i].in && pool[i].in->state == state)
			return &pool[i];
	return NULL;
}

static int add_dict_marked(void *state, uint32_t id, const void *dict,
			   size_t len)
{
	struct pooled *pd = pooled_of(state);

	if (!pd)
		abort(); /* the reader handed a state we never gave */
	pd->dirty = true;
	return codecs[pd->codec]->plugin->add_dict(state, id, dict, len);
}

static int codec_open(void *opaque, uint32_t codec_id,
		      const struct pipe_plugin **p, void **state,
		      struct pipe_ctx **ctx, struct pipe_err *err)
{
	struct pooled *pd = NULL;
	int i;

	(void)opaque;
	*ctx = NULL;
	if (codec_id >= 4 || !codecs[codec_id])
		return pipe_err_set(err, -ENOENT, "no codec %u", codec_id);
	for (i = 0; i < FUZZ_INSTS && !pd; i++)
		if (pool[i].in && !pool[i].busy && pool[i].codec == codec_id)
			pd = &pool[i];
	for (i = 0; i < FUZZ_INSTS && !pd; i++)
		if (!pool[i].in)
			pd = &pool[i];
	if (pd && !pd->in) {
		pd->in = fuzz_codec_open(codecs[codec_id]);
		pd->codec = codec_id;
		pd->dirty = false;
	}
	if (!pd || !pd->in)
		return pipe_err_set(err, -ENOMEM, "cannot open codec %u",
				    codec_id);
	if (!wrapped[codec_id].name) {
		wrapped[codec_id] = *pd->in->p;
		if (wrapped[codec_id].add_dict)
			wrapped[codec_id].add_dict = add_dict_marked;
	}
	pd->busy = true;
	*p = &wrapped[codec_id];
	*state = pd->in->state;
	*ctx = &pd->in->ctx;
	return 0;
}

static void codec_close(void *opaque, const struct pipe_plugin *p,
			void *state)
{
	struct pooled *pd = pooled_of(state);

	(void)opaque;
	(void)p;
	if (!pd)
		return;
	pd->busy = false;
	if (pd->dirty) {
		inst_free(pd->in);
		memset(pd, 0, sizeof(*pd));
	}
}

static const char *codec_error(void *opaque, void *state)
{
	struct pooled *pd = pooled_of(state);

	(void)opaque;
	return pd ? pd->in->ctx.err.msg : NULL;
}

static void on_report(void *opaque, const char *line)
{
	(void)opaque;
	(void)line;
}

static void use_record(const struct meta *m, const struct pipe_record *rec)
{
	struct pipe_sample_id sid;
	struct pipe_sample s;
	uint64_t i;

	if (decode_sample(m, rec, &s) == 0) {
		for (i = 0; i < s.nr_callchain; i++)
			sink += s.callchain[i];
		for (i = 0; i < s.raw_size; i++)
			sink += ((const uint8_t *)s.raw)[i];
	}
	if (decode_sample_id(m, rec, &sid) == 0)
		sink += sid.time;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[4] = { "none", "zlib", "lzma", "zstd" };
	static const uint32_t cpus[2] = { 0, 2 };
	static uint32_t pid;
	/* the reader only reads it */
	struct mem src = { .p = (uint8_t *)data, .len = size,
			   .stream = size % 4 == 1 };
	struct cr_opts o = {
		.src = &mem_source,
		.src_state = &src,
		.name = "fuzz.dat",
		.threads = 1,
		.codec_open = codec_open,
		.codec_close = codec_close,
		.codec_error = codec_error,
		.report = on_report,
	};
	struct pipe_err err;
	struct creader *r = NULL;
	struct cr_stats st;
	struct pipe_batch b;
	size_t i;
	int k, ret;

	if (!codecs[0]) {
		for (k = 0; k < 4; k++)
			codecs[k] = fuzz_codec_load(names[k]);
	}
	/* half the inputs mapped whole, as src_file maps a regular file */
	src.mapped = !src.stream && (size >> 2) % 2 == 0;
	if (size % 4 == 2) {
		o.start_ns = 1000000;
		o.stop_ns = 3000000000u;
	} else if (size % 4 == 3) {
		o.cpus = cpus;
		o.nr_cpus = 2;
		pid = size > 64 ? data[size / 2] : 1;
		o.pids = &pid;
		o.nr_pids = 1;
	}
	ret = creader_open(&r, &o, &err);
	while (ret == 0) {
		ret = creader_next(r, &b, &err);
		for (i = 0; ret == 0 && i < b.nr; i++)
			use_record(creader_meta(r), &b.recs[i]);
	}
	if (r)
		creader_stats(r, &st);
	creader_free(r);
	return 0;
}
