/*
 * ctest.c - the container tests' shared parts (see ctest.h): the toy
 * codecs, generated records, writing and reading memory files, layouts.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "ctest.h"
#include "err.h"
#include "rnd.h"

/* ---- a tiny codec: xor with 0x5a, one length byte of overhead ---- */

static size_t xor_bound(void *state, size_t raw_len)
{
	(void)state;
	return raw_len + 1;
}

static int xor_compress(void *state, uint32_t dict_id, const void *src,
			size_t len, void *dst, size_t cap, size_t *out_len)
{
	const uint8_t *s = src;
	uint8_t *d = dst;
	size_t i;

	(void)state;
	(void)dict_id;
	if (cap < len + 1)
		return -ENOSPC;
	d[0] = 0xa5;
	for (i = 0; i < len; i++)
		d[i + 1] = s[i] ^ 0x5a;
	*out_len = len + 1;
	return 0;
}

static int xor_decompress(void *state, uint32_t dict_id, const void *src,
			  size_t len, void *dst, size_t raw_len)
{
	const uint8_t *s = src;
	uint8_t *d = dst;
	size_t i;

	(void)state;
	(void)dict_id;
	if (len != raw_len + 1 || s[0] != 0xa5)
		return -EINVAL;
	for (i = 0; i < raw_len; i++)
		d[i] = s[i + 1] ^ 0x5a;
	return 0;
}

const struct pipe_plugin xor_codec = {
	.abi = PIPE_ABI,
	.size = sizeof(struct pipe_plugin),
	.kind = PIPE_KIND_CODEC,
	.name = "xor",
	.codec_id = 77,
	.bound = xor_bound,
	.compress = xor_compress,
	.decompress = xor_decompress,
};

/* the same codec, slow: 20 ms a block, to fill the encoder's queue */
static int slow_compress(void *state, uint32_t dict_id, const void *src,
			 size_t len, void *dst, size_t cap, size_t *out_len)
{
	usleep(20000);
	return xor_compress(state, dict_id, src, len, dst, cap, out_len);
}

struct pipe_plugin slow_codec;

void ct_slow_codec_init(void)
{
	slow_codec = xor_codec;
	slow_codec.compress = slow_compress;
}

/* gcc says -fsanitize=thread with __SANITIZE_THREAD__, clang with
 * __has_feature */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CT_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(CT_TSAN)
#define CT_TSAN 1
#endif
#ifndef CT_TSAN
#define CT_TSAN 0
#endif

bool ct_threaded_only(void)
{
	return CT_TSAN || getenv("PIPE_TEST_THREADED_ONLY") != NULL;
}

int opens, closes;
/* a real codec plugin, for dictionaries (NULL when not built) */
struct loaded *real_lp;
struct host_run real_run;
static struct inst *real_insts[64];
static int nr_real;
bool use_transform;
uint32_t read_threads = 1;
bool read_mapped;
/* window and subset of read_file */
struct cr_opts window;

int codec_open(void *opaque, uint32_t codec_id,
	       const struct pipe_plugin **p, void **state,
	       struct pipe_ctx **ctx, struct pipe_err *err)
{
	(void)opaque;
	*ctx = NULL;
	if (real_lp && codec_id == real_lp->plugin->codec_id && nr_real < 64) {
		struct inst *in;
		int ret = inst_open_loaded(&in, real_lp, "", &real_run, err);

		if (ret < 0)
			return ret;
		real_insts[nr_real++] = in;
		*p = in->p;
		*state = in->state;
		*ctx = &in->ctx;
		opens++;
		return 0;
	}
	if (codec_id != xor_codec.codec_id)
		return pipe_err_set(err, -ENOENT, "no codec with id %u",
				    codec_id);
	*p = &xor_codec;
	*state = NULL;
	opens++;
	return 0;
}

void codec_close(void *opaque, const struct pipe_plugin *p,
		 void *state)
{
	int i;

	(void)opaque;
	(void)p;
	for (i = 0; i < nr_real; i++) {
		if (real_insts[i] && real_insts[i]->state == state) {
			inst_free(real_insts[i]);
			real_insts[i] = NULL;
		}
	}
	closes++;
}

/* ---- records ---- */


struct meta *make_meta(void)
{
	struct perf_event_attr attr = { 0 };
	uint64_t id = SAMPLE_ID;
	int32_t cpus[NR_CPUS] = { 0, 1, 2, 3 };
	struct pipe_err err;
	struct meta *m = meta_new();

	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_type = SAMPLE_TYPE;
	attr.sample_id_all = 1;
	if (meta_add_event(m, &attr, "cpu-clock", &id, 1, &err) < 0 ||
	    meta_set_streams(m, NR_CPUS, cpus, &err) < 0 ||
	    meta_set_prop(m, "hostname", "test", &err) < 0) {
		printf("FAILED make_meta: %s\n", err.msg);
		abort();
	}
	return m;
}

void put64(uint8_t **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

/* Deterministic records: samples on NR_CPUS streams, comms on sideband,
 * one PERF_RECORD_LOST; times strictly increasing. */
void gen_records(struct gen *g, size_t nr, uint32_t seed)
{
	size_t i, off = 0;
	uint64_t t = 1000000000;
	uint32_t x = seed;

	g->buf = calloc(nr, 64);
	g->recs = calloc(nr, sizeof(*g->recs));
	g->nr = nr;
	g->samples = 0;
	for (i = 0; i < nr; i++) {
		struct perf_event_header *h = (void *)(g->buf + off);
		uint8_t *p = (uint8_t *)(h + 1);
		uint32_t cpu;

		t += 1000 + (rnd_lcg32(&x) >> 20);
		cpu = (x >> 8) % NR_CPUS;
		if (i % 50 == 7) {
			h->type = PERF_RECORD_COMM;
			h->size = 64;
			put64(&p, (uint64_t)(i + 1) << 32 | (i + 1));
			memcpy(p, "worker-name\0\0\0\0", 16);
			p += 16;
			put64(&p, (uint64_t)(i + 1) << 32 | (i + 1));
			put64(&p, t);
			put64(&p, cpu);
			put64(&p, SAMPLE_ID);
			g->recs[i].stream = PIPE_STREAM_SIDEBAND;
		} else if (i == 34 || i == 35) {
			h->type = PERF_RECORD_THROTTLE;
			h->size = 64;
			put64(&p, t);
			put64(&p, SAMPLE_ID);
			put64(&p, SAMPLE_ID);
			put64(&p, (uint64_t)cpu << 32 | cpu);
			put64(&p, t);
			put64(&p, cpu);
			put64(&p, SAMPLE_ID);
			g->recs[i].stream = cpu;
		} else if (i == 33) {
			h->type = PERF_RECORD_LOST;
			h->size = 56;
			put64(&p, SAMPLE_ID);
			put64(&p, 5);
			put64(&p, (uint64_t)cpu << 32 | cpu);
			put64(&p, t);
			put64(&p, cpu);
			put64(&p, SAMPLE_ID);
			g->recs[i].stream = cpu;
		} else {
			h->type = PERF_RECORD_SAMPLE;
			h->size = 56;
			put64(&p, SAMPLE_ID);
			put64(&p, 0x400000 + i);
			put64(&p, (uint64_t)(x & 0xff) << 32 | (x & 0xff));
			put64(&p, t);
			put64(&p, cpu);
			put64(&p, 1000);
			g->recs[i].stream = cpu;
			g->samples++;
		}
		g->recs[i].time = t;
		g->recs[i].event = 0;
		off += h->size;
	}
	g->len = off;
	/* set hdr pointers once the buffer is final */
	off = 0;
	for (i = 0; i < nr; i++) {
		g->recs[i].hdr = (void *)(g->buf + off);
		off += g->recs[i].hdr->size;
	}
}

void gen_free(struct gen *g)
{
	free(g->buf);
	free(g->recs);
}

struct cw_opts dict_opts; /* dict_mode, dict_size, dict_data */
void *codec_state;

int write_file(struct mem *out, const struct gen *g,
	       const struct meta *meta, uint32_t block,
	       const struct pipe_plugin *codec, bool finish,
	       struct cw_stats *st)
{
	struct cw_opts o = {
		.codec = codec,
		.codec_state = codec_state,
		.dict_mode = dict_opts.dict_mode,
		.dict_size = dict_opts.dict_size,
		.dict_data = dict_opts.dict_data,
		.dict_len = dict_opts.dict_len,
		.codec_name = codec ? codec->name : "none",
		.block_size = block,
		.flush_ns = 1000000000,
		.transform = use_transform,
		.write = mem_write,
		.opaque = out,
	};
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct pipe_batch b;
	size_t i;
	int ret;

	ret = cwriter_new(&w, &o, meta, &err);
	if (ret < 0)
		return ret;
	for (i = 0; i < g->nr && ret == 0; i += 37) {
		b.recs = g->recs + i;
		b.nr = g->nr - i < 37 ? g->nr - i : 37;
		b.flags = 0;
		ret = cwriter_add(w, &b, &err);
	}
	if (ret == 0 && finish)
		ret = cwriter_finish(w, &err);
	if (st)
		cwriter_stats(w, st);
	cwriter_free(w);
	return ret;
}


void on_report(void *opaque, const char *line)
{
	struct result *res = opaque;

	if (!res->reports++)
		snprintf(res->first_report, sizeof(res->first_report), "%s",
			 line);
}

uint64_t rec_hash(const struct pipe_record *r)
{
	const uint8_t *p = (const uint8_t *)r->hdr;
	uint64_t h = 1469598103934665603u ^ r->stream;
	size_t i;

	for (i = 0; i < r->hdr->size; i++)
		h = (h ^ p[i]) * 1099511628211u;
	return h;
}

int blocks_stopped, blocks_whole, blocks_differ;

/* The per-stream order hash of a record's stream, in res. */
static void order_add(struct result *res, const struct pipe_record *r)
{
	uint32_t i = r->stream == PIPE_STREAM_SIDEBAND ? NR_CPUS : r->stream;

	if (i <= NR_CPUS)
		res->order[i] = res->order[i] * 1099511628211u + rec_hash(r);
}

static int on_block(void *opaque, const struct cr_block *b,
		    struct pipe_err *err)
{
	struct result *res = opaque;
	uint32_t k = b->stream == PIPE_STREAM_SIDEBAND ? NR_CPUS : b->stream;
	size_t i, off = 0;

	(void)err;
	/* a block that goes back in its stream, or behind the horizon:
	 * only the merge orders it (as pipe verify does, this stops) */
	if (k <= NR_CPUS && b->nr &&
	    (b->recs[0].time < res->last[k] || b->recs[0].time < b->horizon))
		return 1;
	if (k <= NR_CPUS && b->nr)
		res->last[k] = b->recs[b->nr - 1].time;
	for (i = 0; i < b->nr; i++) {
		/* in order: the bytes hold the records, one after another */
		if (b->in_order &&
		    (const uint8_t *)b->recs[i].hdr != b->bytes + off)
			blocks_differ++;
		off += b->recs[i].hdr->size;
		if (i && b->recs[i].time < b->recs[i - 1].time)
			res->ordered = false;
		order_add(res, &b->recs[i]);
		res->hash += rec_hash(&b->recs[i]);
		res->nr++;
	}
	if (b->in_order && off != b->len)
		blocks_differ++;
	return 0;
}

/* The same file block by block: when no stream's blocks go back in
 * time, each stream's records in the order of the merged read, the same
 * totals and the same damage lines. */
static void read_blocks(struct cr_opts *o, struct mem *src,
			const struct result *want)
{
	struct pipe_err err = { { 0 }, { 0 } };
	int was_open = opens, was_closed = closes;
	struct creader *r = NULL;
	struct result got;
	int ret;

	memset(&got, 0, sizeof(got));
	got.ordered = true;
	o->opaque = &got;
	src->next = 0;
	ret = creader_open(&r, o, &err);
	if (ret == 0)
		ret = creader_blocks(r, on_block, &got, &err);
	if (r)
		creader_stats(r, &got.st);
	creader_free(r);
	/* the tests count the codec instances of their own read */
	opens = was_open;
	closes = was_closed;
	if (ret == 1) {
		blocks_stopped++;
		return;
	}
	if (want->ret != PIPE_EOF)
		return; /* not read to the end */
	blocks_whole++;
	if (ret != 0 || got.nr != want->nr || got.hash != want->hash ||
	    memcmp(got.order, want->order, sizeof(got.order)) ||
	    got.st.records != want->st.records ||
	    got.st.blocks_damaged != want->st.blocks_damaged ||
	    got.reports != want->reports ||
	    strcmp(got.first_report, want->first_report))
		blocks_differ++;
}

void read_file(struct mem *src, bool strict, struct result *res)
{
	struct cr_opts o = {
		.src = &mem_source,
		.src_state = src,
		.name = "x.dat",
		.strict = strict,
		.threads = read_threads,
		.codec_open = codec_open,
		.codec_close = codec_close,
		.report = on_report,
		.opaque = res,
	};
	struct pipe_err err = { { 0 }, { 0 } };
	struct creader *r = NULL;
	struct pipe_batch b;
	uint64_t last = 0;
	size_t i;
	int ret;

	o.start_ns = window.start_ns;
	o.stop_ns = window.stop_ns;
	o.cpus = window.cpus;
	o.nr_cpus = window.nr_cpus;
	o.pids = window.pids;
	o.nr_pids = window.nr_pids;
	memset(res, 0, sizeof(*res));
	res->ordered = true;
	src->next = 0;
	src->mapped = read_mapped;
	ret = creader_open(&r, &o, &err);
	while (ret == 0) {
		ret = creader_next(r, &b, &err);
		for (i = 0; ret == 0 && i < b.nr; i++) {
			if (b.recs[i].time < last)
				res->ordered = false;
			last = b.recs[i].time;
			res->hash += rec_hash(&b.recs[i]);
			order_add(res, &b.recs[i]);
			res->nr++;
		}
	}
	res->ret = ret;
	snprintf(res->msg, sizeof(res->msg), "%s", ret < 0 ? err.msg : "");
	if (r)
		creader_stats(r, &res->st);
	creader_free(r);
	read_blocks(&o, src, res);
}

int read_summary(struct mem *src, struct cr_stats *st)
{
	struct result quiet;
	struct cr_opts o = {
		.src = &mem_source,
		.src_state = src,
		.name = "x.dat",
		.threads = 1,
		.codec_open = codec_open,
		.codec_close = codec_close,
		.report = on_report,
		.opaque = &quiet,
	};
	struct pipe_err err = { { 0 }, { 0 } };
	struct creader *r = NULL;
	int ret;

	memset(&quiet, 0, sizeof(quiet));
	src->next = 0;
	ret = creader_open(&r, &o, &err);
	if (ret == 0)
		ret = creader_summary(r, st, &err);
	creader_free(r);
	return ret;
}

uint64_t gen_hash(const struct gen *g, size_t from, size_t to)
{
	uint64_t h = 0;
	size_t i;

	for (i = from; i < to; i++)
		h += rec_hash(&g->recs[i]);
	return h;
}

/* ---- the block layout, for cuts and damage ---- */


void get_layout(const struct mem *f, struct layout *l)
{
	uint64_t salt = fmt_get64(f->p + FMT_FH_FILE_ID);
	uint64_t at = FMT_FILE_HDR_SIZE;
	struct fmt_block b;

	l->nr = 0;
	while (at < f->len && l->nr < 4096) {
		if (fmt_block_decode(&b, f->p + at, f->len - at, salt) < 0)
			break;
		l->off[l->nr] = at;
		l->type[l->nr] = b.type;
		l->records[l->nr] = b.records;
		at += fmt_block_len(&b);
		l->end[l->nr++] = at;
	}
}
