/*
 * test_container.c - the container writer and reader on memory buffers:
 * round trips (seekable and streamed, with and without a codec), flush,
 * index and END, and damage: cuts at every block edge and many offsets,
 * single-byte damage everywhere, bad versions, strict mode.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "container.h"
#include "err.h"
#include "format.h"
#include "harness.h"
#include "host.h"
#include "loader.h"
#include "memfile.h"
#include "meta.h"

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
		     PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
		     PERF_SAMPLE_PERIOD)
#define SAMPLE_ID 100
#define NR_CPUS 4

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

static const struct pipe_plugin xor_codec = {
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

static struct pipe_plugin slow_codec; /* xor_codec with slow_compress */

static int opens, closes;
/* a real codec plugin, for dictionaries (NULL when not built) */
static struct loaded *real_lp;
static struct host_run real_run;
static struct inst *real_insts[64];
static int nr_real;
static bool use_transform;
static uint32_t read_threads = 1;
/* window and subset of read_file */
static struct cr_opts window;

static int codec_open(void *opaque, uint32_t codec_id,
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

static void codec_close(void *opaque, const struct pipe_plugin *p,
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

struct rec_out {
	uint64_t time;
	uint32_t stream;
	uint32_t type;
	uint64_t key;    /* ip of samples, pid of comm records */
};

struct gen {
	uint8_t *buf;              /* all records, back to back */
	size_t len;
	struct pipe_record *recs;
	size_t nr;
	size_t samples;
};

static struct meta *make_meta(void)
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
	CHECK(meta_add_event(m, &attr, "cpu-clock", &id, 1, &err) == 0);
	CHECK(meta_set_streams(m, NR_CPUS, cpus, &err) == 0);
	CHECK(meta_set_prop(m, "hostname", "test", &err) == 0);
	return m;
}

static void put64(uint8_t **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

/* Deterministic records: samples on NR_CPUS streams, comms on sideband,
 * one PERF_RECORD_LOST; times strictly increasing. */
static void gen_records(struct gen *g, size_t nr, uint32_t seed)
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

		x = x * 1103515245u + 12345u;
		t += 1000 + (x >> 20);
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

static void gen_free(struct gen *g)
{
	free(g->buf);
	free(g->recs);
}

static struct cw_opts dict_opts; /* dict_mode, dict_size, dict_data */
static void *codec_state;

static int write_file(struct mem *out, const struct gen *g,
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

struct result {
	size_t nr;
	bool ordered;          /* times never went back */
	uint64_t hash;         /* order-independent per-record hash sum */
	int ret;               /* last creader_next / open result */
	char msg[512];
	int reports;
	char first_report[512];
	struct cr_stats st;
};

static void on_report(void *opaque, const char *line)
{
	struct result *res = opaque;

	if (!res->reports++)
		snprintf(res->first_report, sizeof(res->first_report), "%s",
			 line);
}

static uint64_t rec_hash(const struct pipe_record *r)
{
	const uint8_t *p = (const uint8_t *)r->hdr;
	uint64_t h = 1469598103934665603u ^ r->stream;
	size_t i;

	for (i = 0; i < r->hdr->size; i++)
		h = (h ^ p[i]) * 1099511628211u;
	return h;
}

static void read_file(struct mem *src, bool strict, struct result *res)
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
	ret = creader_open(&r, &o, &err);
	while (ret == 0) {
		ret = creader_next(r, &b, &err);
		for (i = 0; ret == 0 && i < b.nr; i++) {
			if (b.recs[i].time < last)
				res->ordered = false;
			last = b.recs[i].time;
			res->hash += rec_hash(&b.recs[i]);
			res->nr++;
		}
	}
	res->ret = ret;
	snprintf(res->msg, sizeof(res->msg), "%s", ret < 0 ? err.msg : "");
	if (r)
		creader_stats(r, &res->st);
	creader_free(r);
}

static uint64_t gen_hash(const struct gen *g, size_t from, size_t to)
{
	uint64_t h = 0;
	size_t i;

	for (i = from; i < to; i++)
		h += rec_hash(&g->recs[i]);
	return h;
}

/* ---- the block layout, for cuts and damage ---- */

struct layout {
	uint64_t off[4096];
	uint64_t end[4096];
	uint32_t type[4096];
	uint32_t records[4096];
	size_t nr;
};

static void get_layout(const struct mem *f, struct layout *l)
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

/* ---- tests ---- */

static void test_round_trip(const struct pipe_plugin *codec, bool stream)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 };
	struct gen g;
	struct cw_stats ws;
	struct result res;

	gen_records(&g, 20000, 1);
	CHECK(write_file(&f, &g, meta, 4096, codec, true, &ws) == 0);
	CHECK(ws.records == g.nr);
	CHECK(ws.samples == g.samples);
	CHECK(ws.raw_bytes == g.len);
	CHECK(ws.stored_bytes == f.len);
	CHECK(ws.blocks > g.len / 4096);
	f.stream = stream;
	opens = closes = 0;
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr);
	CHECK(res.ordered);
	CHECK(res.hash == gen_hash(&g, 0, g.nr));
	CHECK(res.reports == 0);
	CHECK(!res.st.recovered);
	CHECK(res.st.records == g.nr);
	CHECK(res.st.samples == g.samples);
	CHECK(res.st.lost == 5);
	CHECK(res.st.blocks == ws.blocks);
	CHECK(res.st.blocks_decoded == ws.blocks);
	CHECK(res.st.raw_bytes == g.len);
	CHECK(res.st.t_first == g.recs[0].time);
	CHECK(res.st.t_last == g.recs[g.nr - 1].time);
	CHECK(!f.bad_seek);
	CHECK(opens == (codec ? (int)read_threads : 0));
	CHECK(closes == opens);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* The totals from END and the index equal those of a whole read; a cut
 * file has none. */
static void test_summary(void)
{
	struct cr_opts o = {
		.src = &mem_source,
		.name = "x.dat",
		.threads = 1,
		.codec_open = codec_open,
		.codec_close = codec_close,
		.report = on_report,
	};
	struct pipe_err err = { { 0 }, { 0 } };
	struct meta *meta = make_meta();
	struct creader *r = NULL;
	struct cr_stats st;
	struct mem f = { 0 }, cut = { 0 };
	struct result res;
	struct cw_stats ws;
	struct gen g;

	gen_records(&g, 5000, 3);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, &ws) == 0);
	read_file(&f, false, &res);
	CHECK(res.st.throttles == 2);
	o.src_state = &f;
	o.opaque = &res;
	CHECK(creader_open(&r, &o, &err) == 0);
	CHECK(creader_summary(r, &st, &err) == 0);
	CHECK(st.records == res.st.records);
	CHECK(st.samples == res.st.samples);
	CHECK(st.lost == res.st.lost);
	CHECK(st.throttles == res.st.throttles);
	CHECK(st.blocks == res.st.blocks);
	CHECK(st.raw_bytes == res.st.raw_bytes);
	CHECK(st.t_first == res.st.t_first);
	CHECK(st.t_last == res.st.t_last);
	CHECK(!st.recovered && !st.blocks_damaged && !st.torn_bytes);
	CHECK(st.file_bytes == f.len);
	creader_free(r);
	/* without END the caller has to scan */
	cut.p = malloc(f.len);
	memcpy(cut.p, f.p, f.len - 8);
	cut.len = f.len - 8;
	o.src_state = &cut;
	CHECK(creader_open(&r, &o, &err) == 0);
	CHECK(creader_summary(r, &st, &err) == 1);
	creader_free(r);
	/* nor when END's record count disagrees with the index (a good
	 * END checksum over the changed count) */
	memcpy(cut.p, f.p, f.len);
	cut.len = f.len;
	{
		uint64_t salt = fmt_get64(cut.p + FMT_FH_FILE_ID);
		uint64_t end_off = cut.len - fmt_get64(cut.p + cut.len - 16);
		struct fmt_block eb;
		uint8_t *pl;

		CHECK(fmt_block_decode(&eb, cut.p + end_off, 4096, salt) == 0);
		CHECK(eb.type == FMT_END && eb.stored == FMT_END_SIZE_NOW);
		pl = cut.p + end_off + eb.hdr_size;
		fmt_put64(pl + 8, fmt_get64(pl + 8) + 1);
		eb.payload_sum = fmt_checksum(pl, eb.stored, salt);
		fmt_block_encode(&eb, salt, cut.p + end_off);
	}
	o.src_state = &cut;
	CHECK(creader_open(&r, &o, &err) == 0);
	CHECK(creader_summary(r, &st, &err) == 1);
	creader_free(r);
	free(cut.p);
	free(f.p);
	gen_free(&g);
	meta_free(meta);
}

static void test_meta_and_header(void)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 }, f2 = { 0 };
	struct gen g;
	struct cr_opts o = {
		.src = &mem_source,
		.name = "x.dat",
	};
	struct pipe_err err;
	struct creader *r;

	gen_records(&g, 10, 2);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	CHECK(!memcmp(f.p, "\x89PIP\r\n\x1a\n", 8));
	CHECK(f.len % 8 == 0);
	o.src_state = &f;
	CHECK(creader_open(&r, &o, &err) == 0);
	CHECK_STR(meta_prop(creader_meta(r), "hostname"), "test");
	CHECK_STR(meta_prop(creader_meta(r), "codec"), "none");
	CHECK(meta_nr_events(creader_meta(r)) == 1);
	creader_free(r);
	/* two files differ in id, hence in salt */
	CHECK(write_file(&f2, &g, meta, 4096, NULL, true, NULL) == 0);
	CHECK(memcmp(f.p + 32, f2.p + 32, 16) != 0);
	gen_free(&g);
	free(f.p);
	free(f2.p);
	meta_free(meta);
}

static void patch_header(struct mem *f, uint16_t version, uint64_t incompat)
{
	fmt_put16(f->p + FMT_FH_VERSION, version);
	fmt_put64(f->p + FMT_FH_INCOMPAT, incompat);
	fmt_put64(f->p + FMT_FH_CHECKSUM,
		  fmt_checksum(f->p, FMT_FH_CHECKSUM, 0));
}

static void test_bad_files(void)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 }, t = { 0 };
	struct result res;
	struct gen g;

	gen_records(&g, 100, 3);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);

	t.p = (uint8_t *)"hello world, this is not a pipe file at all, no.....";
	t.len = 52;
	read_file(&t, false, &res);
	CHECK(res.ret == -EINVAL);
	CHECK_STR(res.msg, "cannot read 'x.dat': not a pipe file");
	t.len = 0;
	read_file(&t, false, &res);
	CHECK_STR(res.msg, "cannot read 'x.dat': not a pipe file");

	patch_header(&f, 2, 0);
	read_file(&f, false, &res);
	CHECK(res.ret == -EPROTO);
	CHECK_STR(res.msg,
		  "cannot read 'x.dat': written by a newer pipe (format version 2)");
	patch_header(&f, 1, 1);
	read_file(&f, false, &res);
	CHECK(res.ret == -EPROTO);
	patch_header(&f, 1, 0);
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF && res.nr == g.nr);

	/* text-mode damage: \r\n became \n */
	f.p[4] ^= 0x40;
	read_file(&f, false, &res);
	CHECK(res.ret == -EINVAL);
	CHECK(strstr(res.msg, "damaged file header") != NULL);
	f.p[4] ^= 0x40;
	f.p[50] ^= 1;
	read_file(&f, false, &res);
	CHECK_STR(res.msg,
		  "cannot read 'x.dat': damaged file header (checksum mismatch)");
	f.p[50] ^= 1;
	/* metadata payload */
	f.p[FMT_FILE_HDR_SIZE + FMT_BLOCK_HDR_SIZE + 3] ^= 1;
	read_file(&f, false, &res);
	CHECK_STR(res.msg,
		  "cannot read 'x.dat': damaged metadata block (checksum mismatch)");
	f.p[FMT_FILE_HDR_SIZE + FMT_BLOCK_HDR_SIZE + 3] ^= 1;
	f.p[FMT_FILE_HDR_SIZE + 10] ^= 1;
	read_file(&f, false, &res);
	CHECK_STR(res.msg,
		  "cannot read 'x.dat': damaged metadata block header");
	f.p[FMT_FILE_HDR_SIZE + 10] ^= 1;
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF && res.nr == g.nr);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* Splice a block of `type` before the END block. */
static void splice_block(struct mem *f, uint32_t type, struct mem *out)
{
	struct layout *l = malloc(sizeof(*l));
	uint64_t salt = fmt_get64(f->p + FMT_FH_FILE_ID);
	struct fmt_block b = { 0 };
	uint8_t blk[FMT_BLOCK_HDR_SIZE + 8 + 16];
	uint64_t end_at;
	struct pipe_err err;

	get_layout(f, l);
	end_at = l->off[l->nr - 1];
	CHECK(l->type[l->nr - 1] == FMT_END);
	b.hdr_size = FMT_BLOCK_HDR_SIZE;
	b.type = type;
	b.stored = b.raw = b.coded = 8;
	b.payload_sum = fmt_checksum("ABCDEFGH", 8, salt);
	fmt_block_encode(&b, salt, blk);
	memcpy(blk + FMT_BLOCK_HDR_SIZE, "ABCDEFGH", 8);
	fmt_put64(blk + FMT_BLOCK_HDR_SIZE + 8, sizeof(blk));
	fmt_put64(blk + FMT_BLOCK_HDR_SIZE + 16, salt);
	out->len = 0;
	mem_write(out, f->p, end_at, &err);
	mem_write(out, blk, sizeof(blk), &err);
	mem_write(out, f->p + end_at, f->len - end_at, &err);
	free(l);
}

/* A block whose header is good but claims lengths past the limit is never
 * allocated for: it counts as a bad header and the read goes on. */
static void test_huge_lengths(void)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 }, t = { 0 };
	struct pipe_err err;
	struct fmt_block b = { 0 };
	struct result res;
	struct gen g;
	uint8_t blk[FMT_BLOCK_HDR_SIZE + 8 + 16];
	uint64_t salt, at;

	gen_records(&g, 500, 15);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	get_layout(&f, l);
	salt = fmt_get64(f.p + FMT_FH_FILE_ID);
	at = l->off[2];
	b.hdr_size = FMT_BLOCK_HDR_SIZE;
	b.type = FMT_DATA;
	b.records = 1000000;
	b.stored = 8;
	b.raw = CONTAINER_LEN_MAX + 8;
	b.coded = b.raw;
	b.payload_sum = fmt_checksum("ABCDEFGH", 8, salt);
	fmt_block_encode(&b, salt, blk);
	memcpy(blk + FMT_BLOCK_HDR_SIZE, "ABCDEFGH", 8);
	fmt_put64(blk + FMT_BLOCK_HDR_SIZE + 8, sizeof(blk));
	fmt_put64(blk + FMT_BLOCK_HDR_SIZE + 16, salt);
	mem_write(&t, f.p, at, &err);
	mem_write(&t, blk, sizeof(blk), &err);
	mem_write(&t, f.p + at, f.len - at, &err);
	read_file(&t, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr);
	CHECK(res.reports == 1);
	CHECK(strstr(res.first_report, "bad block header") != NULL);
	gen_free(&g);
	free(f.p);
	free(t.p);
	free(l);
	meta_free(meta);
}

static void test_block_types(void)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 }, t = { 0 };
	struct result res;
	struct gen g;

	gen_records(&g, 500, 4);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	splice_block(&f, 0x80 | 9, &t);
	read_file(&t, false, &res);
	CHECK(res.ret == PIPE_EOF && res.nr == g.nr && res.reports == 0);
	splice_block(&f, 9, &t);
	read_file(&t, false, &res);
	CHECK(res.ret == -EPROTO);
	CHECK(strstr(res.msg, "is from a newer pipe") != NULL);
	gen_free(&g);
	free(f.p);
	free(t.p);
	meta_free(meta);
}

/* A cut file reads exactly the blocks complete before the cut. */
static void test_cuts(bool stream)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 }, t = { 0 };
	struct result res;
	struct gen g;
	size_t cut, i, bad = 0, tries = 0;

	gen_records(&g, 3000, 5);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	get_layout(&f, l);
	CHECK(l->end[l->nr - 1] == f.len);
	t.stream = stream;
	for (cut = 0; cut < f.len; cut += 1 + cut % 397) {
		size_t want = 0, full = 0;

		t.p = f.p;
		t.len = cut;
		for (i = 0; i < l->nr; i++) {
			if (l->end[i] <= cut && l->type[i] == FMT_DATA)
				want += l->records[i];
			if (l->end[i] <= cut)
				full = l->end[i];
		}
		read_file(&t, false, &res);
		tries++;
		if (cut < l->end[0]) {
			/* file header or metadata cut: unreadable */
			if (res.ret != -EINVAL)
				bad++;
			continue;
		}
		if (res.ret != PIPE_EOF || res.nr != want || !res.ordered ||
		    !res.st.recovered ||
		    res.st.torn_bytes != cut - full ||
		    (cut != full && res.reports != 1) ||
		    (cut == full && res.reports != 0) || t.bad_seek) {
			if (bad++ < 5)
				printf("cut %zu (%s): ret %d nr %zu want %zu torn %llu full %zu reports %d seek %d rec %d\n",
				       cut, stream ? "stream" : "file", res.ret, res.nr, want,
				       (unsigned long long)res.st.torn_bytes,
				       full, res.reports, t.bad_seek,
				       res.st.recovered);
		}
	}
	CHECK(tries > 200);
	CHECK(bad == 0);
	/* the torn tail message */
	t.len = l->end[3] + 20;
	read_file(&t, false, &res);
	CHECK(strstr(res.first_report, "torn tail in 'x.dat' at offset") ==
	      res.first_report);
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}

/* One flipped byte: never a crash; everything outside the hit block read. */
static void test_flips(const struct pipe_plugin *codec)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 };
	struct result res;
	struct gen g;
	size_t pos, i, bad = 0, tries = 0;

	gen_records(&g, 3000, 6);
	CHECK(write_file(&f, &g, meta, 4096, codec, true, NULL) == 0);
	get_layout(&f, l);
	for (pos = 0; pos < f.len; pos += 1 + pos % 131) {
		size_t hit = l->nr, lo;

		for (i = 0; i < l->nr; i++)
			if (pos >= l->off[i] && pos < l->end[i])
				hit = i;
		f.p[pos] ^= 0x10;
		read_file(&f, false, &res);
		f.p[pos] ^= 0x10;
		tries++;
		if (hit == l->nr || hit == 0) {
			if (res.ret != -EINVAL)
				bad++;
			continue;
		}
		lo = g.nr - (l->type[hit] == FMT_DATA ? l->records[hit] : 0);
		if (res.ret != PIPE_EOF || res.nr < lo || res.nr > g.nr ||
		    !res.ordered || (res.reports == 0 && res.nr != g.nr)) {
			if (bad++ < 5)
				printf("flip %zu (block %zu type %u): ret %d nr %zu of %zu reports %d %s\n",
				       pos, hit, l->type[hit], res.ret, res.nr,
				       g.nr, res.reports, res.msg);
		}
		/* a damaged data block is reported */
		if (l->type[hit] == FMT_DATA && res.nr != g.nr &&
		    res.reports != 1)
			bad++;
	}
	CHECK(tries > 200);
	CHECK(bad == 0);
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}

/* Several kinds of damage at once, at seeded random places: the reader
 * always ends, with records or one clear error, and never crashes. */
static void test_random_damage(const struct pipe_plugin *codec)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 }, t = { 0 };
	struct result res;
	struct gen g;
	uint32_t x = 12345;
	int it, k, bad = 0;

	gen_records(&g, 3000, 14);
	CHECK(write_file(&f, &g, meta, 4096, codec, true, NULL) == 0);
	t.p = malloc(f.len * 2);
	for (it = 0; it < 150; it++) {
		int ops = 1 + it % 6;

		memcpy(t.p, f.p, f.len);
		t.len = f.len;
		for (k = 0; k < ops; k++) {
			size_t pos, n;

			x = x * 1103515245u + 12345u;
			pos = (x >> 8) % t.len;
			switch ((x >> 4) % 5) {
			case 0:
				t.p[pos] ^= (uint8_t)(1 + (x >> 24) % 255);
				break;
			case 1:
				n = t.len - pos < 8 ? t.len - pos : 8;
				memset(t.p + pos, 0xff, n);
				break;
			case 2:
				n = t.len - pos < 100 ? t.len - pos : 100;
				memset(t.p + pos, 0, n);
				break;
			case 3:
				if (pos > 2000)
					t.len = pos;
				break;
			default:
				/* a stretch of the file again, 8-aligned */
				pos &= ~(size_t)7;
				n = (x >> 16) % 9000 & ~(size_t)7;
				if (pos + n <= t.len &&
				    t.len + n <= f.len * 2) {
					memmove(t.p + pos + n, t.p + pos,
						t.len - pos);
					t.len += n;
				}
			}
		}
		read_file(&t, false, &res);
		if (res.ret != PIPE_EOF && res.ret != -EINVAL &&
		    res.ret != -EPROTO)
			bad++;
		if (res.ret == PIPE_EOF && res.nr > 2 * g.nr)
			bad++;
	}
	CHECK(bad == 0);
	gen_free(&g);
	free(f.p);
	free(t.p);
	meta_free(meta);
}

static void test_damage_line_and_strict(void)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 };
	struct result res;
	struct gen g;
	size_t i, d = 0;
	char want[256];

	gen_records(&g, 3000, 7);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	get_layout(&f, l);
	for (i = 3; i < l->nr; i++) {
		if (l->type[i] == FMT_DATA) {
			d = i;
			break;
		}
	}
	CHECK(d > 0);
	f.p[l->off[d] + FMT_BLOCK_HDR_SIZE + 20] ^= 1;
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.reports == 1);
	CHECK(res.nr == g.nr - l->records[d]);
	CHECK(res.st.blocks_damaged == 1);
	CHECK(res.st.records_damaged == l->records[d]);
	snprintf(want, sizeof(want),
		 "damaged block in 'x.dat' at offset %llu: ",
		 (unsigned long long)l->off[d]);
	CHECK(!strncmp(res.first_report, want, strlen(want)));
	snprintf(want, sizeof(want),
		 " %u records skipped: payload checksum mismatch",
		 l->records[d]);
	CHECK(strstr(res.first_report, want) != NULL);
	CHECK(strstr(res.first_report, ", time ") != NULL);
	read_file(&f, true, &res);
	CHECK(res.ret == -EIO);
	CHECK(!strncmp(res.msg, "damaged block in 'x.dat' at offset", 34));
	CHECK(res.reports == 0);
	/* a bad header resyncs on the next block */
	f.p[l->off[d] + FMT_BLOCK_HDR_SIZE + 20] ^= 1;
	f.p[l->off[d] + 30] ^= 1;
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.reports == 1);
	CHECK(res.nr == g.nr - l->records[d]);
	CHECK(strstr(res.first_report, "bad block header") != NULL);
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}

static void test_flush_tick_and_index(void)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct cw_opts o = {
		.codec_name = "none",
		.block_size = 65536,
		.flush_ns = 1000000000,
		.write = mem_write,
	};
	struct mem f = { 0 };
	struct pipe_err err;
	struct cwriter *w;
	struct pipe_batch b;
	struct gen g;
	size_t before, i, nidx = 0;

	o.opaque = &f;
	gen_records(&g, 40, 8);
	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	b.recs = g.recs;
	b.nr = g.nr;
	b.flags = 0;
	CHECK(cwriter_add(w, &b, &err) == 0);
	before = f.len;
	CHECK(cwriter_tick(w, 5000000000, 0, &err) == 0);
	CHECK(f.len == before);   /* first sight of the pending data */
	CHECK(cwriter_tick(w, 5500000000, 0, &err) == 0);
	CHECK(f.len == before);   /* not quiet long enough */
	CHECK(cwriter_tick(w, 6000000000, 0, &err) == 0);
	CHECK(f.len > before);    /* flushed within flush_ns */
	CHECK(cwriter_lost(w, 2, 1234, &err) == 0);
	CHECK(cwriter_finish(w, &err) == 0);
	CHECK(cwriter_add(w, &b, &err) == -EINVAL);
	CHECK(cwriter_lost(w, 2, 1, &err) == -EINVAL);
	cwriter_free(w);
	{
		struct result res;

		read_file(&f, false, &res);
		CHECK(res.ret == PIPE_EOF);
		CHECK(res.st.lost == 1234 + 5);
	}
	get_layout(&f, l);
	CHECK(l->type[0] == FMT_META);
	CHECK(l->type[l->nr - 1] == FMT_END);
	CHECK(l->type[l->nr - 2] == FMT_INDEX);
	for (i = 0; i < l->nr; i++)
		nidx += l->type[i] == FMT_INDEX;
	CHECK(nidx == 1);
	/* the index lists every block before it, META included */
	{
		const uint8_t *p = f.p + l->off[l->nr - 2] + FMT_BLOCK_HDR_SIZE;

		CHECK(fmt_get64(p) == 0);
		CHECK(fmt_get32(p + 8) == l->nr - 2);
		CHECK(fmt_get32(p + 12) == FMT_INDEX_ENTRY);
		CHECK(fmt_get64(p + 16) == FMT_FILE_HDR_SIZE);
	}
	/* the END points at the index */
	CHECK(fmt_get64(f.p + l->off[l->nr - 1] + FMT_BLOCK_HDR_SIZE) ==
	      l->off[l->nr - 2]);
	CHECK(fmt_get64(f.p + f.len - 16) == l->end[l->nr - 1] -
	      l->off[l->nr - 1]);
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}

static void test_many_indexes(void)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 };
	struct result res;
	struct gen g;
	size_t i, nidx = 0;
	uint64_t prev = 0;

	/* ~3 s of record time: an index at least every 2 s */
	gen_records(&g, 3000, 9);
	for (i = 0; i < g.nr; i++)
		g.recs[i].time = 1000000000 + i * 1000000ull;
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	get_layout(&f, l);
	for (i = 0; i < l->nr; i++) {
		if (l->type[i] != FMT_INDEX)
			continue;
		nidx++;
		CHECK(fmt_get64(f.p + l->off[i] + FMT_BLOCK_HDR_SIZE) == prev);
		prev = l->off[i];
	}
	CHECK(nidx >= 2);
	/* horizons never go back and never lag by much more than flush */
	{
		uint64_t salt = fmt_get64(f.p + FMT_FH_FILE_ID);
		uint64_t h = 0, newest = 0;
		struct fmt_block blk;
		bool mono = true, close = true;

		for (i = 0; i < l->nr; i++) {
			fmt_block_decode(&blk, f.p + l->off[i], 96, salt);
			if (blk.type != FMT_DATA)
				continue;
			mono = mono && blk.horizon >= h;
			h = blk.horizon;
			if (blk.t_max > newest)
				newest = blk.t_max;
			close = close &&
				h + 1000000000 + 100000000 >= newest;
		}
		CHECK(mono);
		CHECK(close);
	}
	read_file(&f, false, &res);
	CHECK(res.nr == g.nr);
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}

static void test_writer_errors(void)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 };
	struct gen g;

	gen_records(&g, 2000, 10);
	CHECK(write_file(&f, &g, meta, 1000, NULL, true, NULL) == -EINVAL);
	CHECK(write_file(&f, &g, meta, 8u << 20, NULL, true, NULL) == -EINVAL);
	f.len = 0;
	f.fail_write = 5;
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == -ENOSPC);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* Records of g a window read must return (times from the first record). */
/* Time 0 of windows: the t_min of the file's first DATA block with one. */
static uint64_t first_block_time(const struct mem *f)
{
	uint64_t salt = fmt_get64(f->p + FMT_FH_FILE_ID);
	uint64_t at = FMT_FILE_HDR_SIZE;
	struct fmt_block b;

	while (at < f->len &&
	       fmt_block_decode(&b, f->p + at, f->len - at, salt) == 0) {
		if (b.type == FMT_DATA && b.t_min)
			return b.t_min;
		at += fmt_block_len(&b);
	}
	return 0;
}

static size_t window_want(const struct gen *g, uint64_t origin,
			  uint64_t *hash)
{
	uint64_t lo = window.start_ns ? origin + window.start_ns : 0;
	uint64_t hi = window.stop_ns ? origin + window.stop_ns : UINT64_MAX;
	size_t i, k, n = 0;

	*hash = 0;
	for (i = 0; i < g->nr; i++) {
		const struct pipe_record *r = &g->recs[i];
		bool keep;

		if (r->stream == PIPE_STREAM_SIDEBAND) {
			keep = r->time < hi;
		} else {
			keep = r->time >= lo && r->time < hi;
			if (window.nr_cpus) {
				bool cpu = false;

				for (k = 0; k < window.nr_cpus; k++)
					cpu = cpu ||
					      window.cpus[k] == r->stream;
				keep = keep && cpu;
			}
			if (window.nr_pids &&
			    r->hdr->type == PERF_RECORD_SAMPLE) {
				uint32_t pid;
				bool any = false;

				memcpy(&pid, (const uint8_t *)r->hdr + 24, 4);
				for (k = 0; k < window.nr_pids; k++)
					any = any || window.pids[k] == pid;
				keep = keep && any;
			}
		}
		if (keep) {
			n++;
			*hash += rec_hash(r);
		}
	}
	return n;
}

static void test_window(bool cut, bool stream)
{
	static const uint32_t cpus[] = { 1, 3 };
	static const uint32_t pids[] = { 7, 9, 200 };
	struct meta *meta = make_meta();
	struct mem f = { 0 };
	struct cw_stats ws;
	struct result res;
	struct gen g;
	uint64_t hash, origin;
	size_t want;

	gen_records(&g, 6000, 12);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, &ws) == 0);
	if (cut)
		f.len -= f.len / 7;
	f.stream = stream;
	origin = first_block_time(&f);

	window.start_ns = 0;
	window.stop_ns = 0;
	read_file(&f, false, &res);
	want = res.nr;

	memset(&window, 0, sizeof(window));
	window.start_ns = 2000000;
	window.stop_ns = 4000000;
	read_file(&f, false, &res);
	if (!stream) {
		/* a cut file lost its last blocks (the sideband's) */
		CHECK(cut ? res.nr <= window_want(&g, origin, &hash)
			  : res.nr == window_want(&g, origin, &hash));
		CHECK(cut || res.hash == hash);
		CHECK(res.st.blocks_decoded > 0);
		CHECK(res.st.blocks_decoded < ws.blocks / 4);
	}
	CHECK(res.ordered);
	CHECK(res.nr < want);
	CHECK(res.st.recovered == cut);
	/* CPU subset and pids, no window */
	memset(&window, 0, sizeof(window));
	window.cpus = cpus;
	window.nr_cpus = 2;
	window.pids = pids;
	window.nr_pids = 3;
	read_file(&f, false, &res);
	if (!cut) {
		CHECK(res.nr == window_want(&g, origin, &hash));
		CHECK(res.hash == hash);
	}
	CHECK(res.nr > 0 && res.nr < want);
	CHECK(res.ordered);
	memset(&window, 0, sizeof(window));
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/*
 * A window read gives the same records from a file (through its index) as
 * from a pipe (forward), and 8 bytes inserted before one block cost no
 * record in either: the reader checks each block the index leads to and
 * walks forward from the damage.
 */
static void test_window_same_from_index_and_pipe(void)
{
	static const uint64_t spans[][2] = {
		{ 2000000, 4000000 }, { 0, 3000000 }, { 5000000, 0 },
	};
	struct meta *meta = make_meta();
	struct mem f = { 0 }, s = { 0 };
	struct result a, b, c, d;
	struct layout *l = malloc(sizeof(*l));
	struct cw_stats ws;
	struct gen g;
	size_t i, k;

	gen_records(&g, 6000, 21);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, &ws) == 0);
	get_layout(&f, l);
	/* a DATA block a third of the way in */
	for (k = l->nr / 3; k < l->nr && l->type[k] != FMT_DATA; k++)
		;
	CHECK(k < l->nr);
	s.p = malloc(f.len + 8);
	s.len = f.len + 8;
	memcpy(s.p, f.p, l->off[k]);
	memset(s.p + l->off[k], 0, 8);
	memcpy(s.p + l->off[k] + 8, f.p + l->off[k], f.len - l->off[k]);
	for (i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		memset(&window, 0, sizeof(window));
		window.start_ns = spans[i][0];
		window.stop_ns = spans[i][1];
		f.stream = false;
		read_file(&f, false, &a);
		f.stream = true;
		read_file(&f, false, &b);
		CHECK(a.nr > 0 && a.nr == b.nr && a.hash == b.hash);
		s.stream = false;
		read_file(&s, false, &c);
		s.stream = true;
		read_file(&s, false, &d);
		CHECK(c.nr == a.nr && c.hash == a.hash);
		CHECK(d.nr == a.nr && d.hash == a.hash);
		CHECK(c.ordered && d.ordered);
	}
	memset(&window, 0, sizeof(window));
	free(s.p);
	free(l);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* Dictionaries with the real zstd plugin: trained, stored, used, read. */
static void test_dict(void)
{
	const char *build = getenv("BUILD");
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct pipe_err err;
	struct inst *w = NULL;
	struct mem f = { 0 };
	struct result res;
	struct gen g;
	char path[512];
	size_t i, dicts, with;
	int mode;

	snprintf(path, sizeof(path), "%s/plugins/codec_zstd.so",
		 build ? build : "build");
	if (access(path, R_OK) || loader_open(&real_lp, path, PIPE_KIND_CODEC,
					      &err) < 0) {
		printf("note: %s not built, dictionaries untested\n", path);
		goto out;
	}
	real_run.meta = meta;
	real_run.command_status = -1;
	gen_records(&g, 30000, 13);
	for (mode = CW_DICT_ON; mode <= CW_DICT_AUTO + 1; mode++) {
		CHECK(inst_open_loaded(&w, real_lp, "", &real_run, &err) == 0);
		codec_state = w->state;
		memset(&dict_opts, 0, sizeof(dict_opts));
		dict_opts.dict_mode = mode <= CW_DICT_AUTO ? mode : CW_DICT_OFF;
		dict_opts.dict_size = 2048;
		if (mode > CW_DICT_AUTO) {
			/* a given dictionary: some record bytes */
			dict_opts.dict_data = g.buf;
			dict_opts.dict_len = 4096;
		}
		f.len = 0;
		CHECK(write_file(&f, &g, meta, 4096, w->p, true, NULL) == 0);
		inst_free(w);
		codec_state = NULL;
		get_layout(&f, l);
		dicts = with = 0;
		for (i = 0; i < l->nr; i++) {
			struct fmt_block b;
			uint64_t salt = fmt_get64(f.p + FMT_FH_FILE_ID);

			fmt_block_decode(&b, f.p + l->off[i], 96, salt);
			dicts += b.type == FMT_DICT;
			with += b.type == FMT_DATA && b.dict != 0;
			if (b.type == FMT_DICT)
				CHECK(b.dict == dicts);
		}
		printf("dict mode %d: %zu dictionaries, %zu of %zu blocks use"
		       " one\n", mode, dicts, with, l->nr);
		CHECK(dicts >= 1);
		if (mode == CW_DICT_ON || mode > CW_DICT_AUTO)
			CHECK(with > l->nr / 2);
		read_file(&f, false, &res);
		CHECK(res.ret == PIPE_EOF);
		CHECK(res.nr == g.nr);
		CHECK(res.hash == gen_hash(&g, 0, g.nr));
		CHECK(res.reports == 0);
		/* damage in the dictionary: the blocks that need it fail */
		for (i = 0; i < l->nr && l->type[i] != FMT_DICT; i++)
			;
		f.p[l->off[i] + FMT_BLOCK_HDR_SIZE + 5] ^= 1;
		read_file(&f, false, &res);
		CHECK(res.ret == PIPE_EOF);
		CHECK(res.nr < g.nr || !with);
		CHECK(res.reports >= 1);
	}
	memset(&dict_opts, 0, sizeof(dict_opts));
	gen_free(&g);
	loader_close(real_lp);
	real_lp = NULL;
out:
	free(f.p);
	free(l);
	meta_free(meta);
}

/*
 * A sample with user registers and a stack dump: `dyn` of its `size`
 * dump bytes were copied by the kernel.  Returns the record's length.
 */
static size_t stack_sample(uint8_t *rec, uint64_t size, uint64_t dyn,
			   uint64_t t)
{
	uint8_t *p = rec + 8;
	struct perf_event_header *h = (void *)rec;
	uint64_t i;

	put64(&p, SAMPLE_ID);
	put64(&p, 0x401000);              /* ip */
	put64(&p, 7 | (uint64_t)7 << 32); /* pid, tid */
	put64(&p, t);
	put64(&p, 0);                     /* cpu */
	put64(&p, 1000);                  /* period */
	put64(&p, 1);                     /* callchain nr */
	put64(&p, (uint64_t)PERF_CONTEXT_USER);
	put64(&p, PERF_SAMPLE_REGS_ABI_64);
	for (i = 0; i < 8; i++)
		put64(&p, 0x1000 + i);
	put64(&p, size);
	for (i = 0; i < size; i++)
		*p++ = (uint8_t)(i < dyn ? i + 1 : 0xee);
	if (size)
		put64(&p, dyn);
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)(p - rec);
	return (size_t)(p - rec);
}

/* The writer keeps only the dumped part of each user stack. */
static void test_stack_trim(void)
{
	struct perf_event_attr attr = { 0 };
	uint64_t id = SAMPLE_ID, size, dyn;
	int32_t cpus[1] = { 0 };
	static const uint64_t dyns[3] = { 40, 0, 256 };
	uint8_t recs[3][512];
	struct pipe_record in[3];
	struct pipe_err err;
	struct mem out = { 0 };
	struct meta *m = meta_new();
	struct gen g = { 0 };
	struct result res;
	struct cr_opts o = {
		.src = &mem_source, .src_state = &out, .name = "x.dat",
		.threads = 1, .codec_open = codec_open,
		.codec_close = codec_close, .report = on_report,
		.opaque = &res,
	};
	struct creader *r = NULL;
	struct pipe_batch b;
	size_t i, n = 0;
	const uint8_t *st;

	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_type = SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN |
			   PERF_SAMPLE_REGS_USER |
			   PERF_SAMPLE_STACK_USER;
	attr.sample_regs_user = UINT64_C(0xf001c2);
	attr.sample_stack_user = 256;
	attr.sample_id_all = 1;
	CHECK(meta_add_event(m, &attr, "cpu-clock", &id, 1, &err) == 0);
	CHECK(meta_set_streams(m, 1, cpus, &err) == 0);
	for (i = 0; i < 3; i++) {
		stack_sample(recs[i], 256, dyns[i], 1000 + i);
		in[i] = (struct pipe_record){ .hdr = (void *)recs[i],
					      .time = 1000 + i, .stream = 0,
					      .event = 0 };
	}
	g.recs = in;
	g.nr = 3;
	CHECK(write_file(&out, &g, m, 65536, NULL, true, NULL) == 0);
	memset(&res, 0, sizeof(res));
	CHECK(creader_open(&r, &o, &err) == 0);
	while (r && creader_next(r, &b, &err) == 0) {
		for (i = 0; i < b.nr && n < 3; i++, n++) {
			const uint8_t *p = (const uint8_t *)b.recs[i].hdr;
			/* the stack size field follows 8 fields, the chain,
			 * the abi and 8 registers */
			size_t at = 8 + 6 * 8 + 16 + 8 + 64;

			dyn = dyns[n];
			memcpy(&size, p + at, 8);
			CHECK(size == dyn);
			CHECK(b.recs[i].hdr->size ==
			      at + 8 + dyn + (dyn ? 8 : 0));
			st = p + at + 8;
			CHECK(dyn == 0 || (st[0] == 1 && st[dyn - 1] ==
					   (uint8_t)dyn));
			if (dyn) {
				memcpy(&size, st + dyn, 8);
				CHECK(size == dyn);
			}
		}
	}
	CHECK(n == 3);
	creader_free(r);
	free(out.p);
	meta_free(m);
}

/*
 * Records per stream, as a live recording without record sinks writes
 * them: each round's records grouped by stream, the sideband's reversed
 * (it gathers rings), the horizon capped at the next round's oldest.
 * The file reads back whole and in time order, every block's horizon
 * holds (no later block has a record older than it), and horizons never
 * decrease.
 */
static void test_per_stream(void)
{
	struct meta *meta = make_meta();
	struct cw_opts o = {
		.codec_name = "none",
		.block_size = 4096,
		.flush_ns = 1000000000,
		.transform = use_transform,
		.write = mem_write,
	};
	struct pipe_record *round;
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct mem f = { 0 };
	struct pipe_batch b = { 0 };
	struct result res;
	struct gen g;
	uint64_t salt, at, hmax = 0;
	size_t i, k, n, from, nb = 0;
	uint64_t hz[4096], tmin[4096];
	uint32_t st;

	o.opaque = &f;
	gen_records(&g, 20000, 3);
	round = calloc(200, sizeof(*round));
	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	CHECK(cwriter_cap_horizon(w, 0, &err) == 0);
	for (from = 0; from < g.nr; from += 200) {
		size_t to = from + 200 < g.nr ? from + 200 : g.nr;

		n = 0;
		for (st = 0; st < NR_CPUS; st++)
			for (i = from; i < to; i++)
				if (g.recs[i].stream == st)
					round[n++] = g.recs[i];
		for (i = to; i-- > from;)
			if (g.recs[i].stream == PIPE_STREAM_SIDEBAND)
				round[n++] = g.recs[i];
		CHECK(n == to - from);
		b.recs = round;
		b.nr = n;
		CHECK(cwriter_add(w, &b, &err) == 0);
		CHECK(cwriter_cap_horizon(w, to < g.nr ? g.recs[to].time :
					     UINT64_MAX, &err) == 0);
	}
	CHECK(cwriter_finish(w, &err) == 0);
	cwriter_free(w);
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr);
	CHECK(res.ordered);
	CHECK(res.hash == gen_hash(&g, 0, g.nr));
	salt = fmt_get64(f.p + FMT_FH_FILE_ID);
	at = FMT_FILE_HDR_SIZE;
	while (at < f.len && nb < 4096) {
		struct fmt_block fb;

		if (fmt_block_decode(&fb, f.p + at, f.len - at, salt) < 0)
			break;
		CHECK(fb.horizon >= hmax);
		hmax = fb.horizon;
		hz[nb] = fb.horizon;
		tmin[nb++] = fb.type == FMT_DATA ? fb.t_min : UINT64_MAX;
		at += fmt_block_len(&fb);
	}
	CHECK(at == f.len);
	for (k = 0; k < nb; k++)
		for (i = k + 1; i < nb; i++)
			CHECK(tmin[i] >= hz[k]);
	free(round);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/*
 * The encoder on its own thread, behind a slow codec and a queue of two
 * blocks.  Waiting (not live): every record reaches the file.  Live
 * (drop_when_behind): blocks are dropped, never the sideband, and each
 * drop is counted in the stats and written as lost, so the file reads
 * back as what was kept plus a lost count for the rest.
 */
static void test_encoder_queue(bool drop)
{
	struct meta *meta = make_meta();
	struct cw_opts o = {
		.codec = &slow_codec,
		.codec_name = "xor",
		.block_size = 4096,
		.flush_ns = 1000000000,
		.write = mem_write,
		.async = true,
		.drop_when_behind = drop,
		.queue_bytes = 8192,
	};
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct mem f = { 0 };
	struct pipe_batch b = { 0 };
	struct cw_stats ws;
	struct result res;
	struct gen g;
	size_t i, side = 0;

	o.opaque = &f;
	slow_codec = xor_codec;
	slow_codec.compress = slow_compress;
	gen_records(&g, 3000, 5);
	for (i = 0; i < g.nr; i++)
		side += g.recs[i].stream == PIPE_STREAM_SIDEBAND;
	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	for (i = 0; i < g.nr; i += 50) {
		b.recs = g.recs + i;
		b.nr = g.nr - i < 50 ? g.nr - i : 50;
		CHECK(cwriter_add(w, &b, &err) == 0);
	}
	CHECK(cwriter_finish(w, &err) == 0);
	cwriter_stats(w, &ws);
	cwriter_free(w);
	CHECK(ws.records == g.nr);
	if (drop) {
		CHECK(ws.dropped_blocks > 0);
		CHECK(ws.dropped_records > 0);
		CHECK(ws.dropped_samples <= ws.dropped_records);
	} else {
		CHECK(ws.dropped_blocks == 0);
	}
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr - ws.dropped_records);
	CHECK(res.ordered);
	/* the dropped records, and the 5 of the one PERF_RECORD_LOST
	 * (in place of itself, when its block went) */
	CHECK(ws.lost == 5 + ws.dropped_records ||
	      ws.lost == 4 + ws.dropped_records);
	CHECK(res.st.lost == ws.lost);
	CHECK(res.reports == 0);
	CHECK(ws.stored_bytes == f.len);
	/* the sideband is never dropped */
	CHECK(res.nr >= side);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/*
 * Live, blocks wait for the caller's idle moments: the first ones go to
 * the worker (their cost is not known yet), and once a block is known to
 * encode fast the caller encodes the queue itself, in file order with
 * what the worker wrote, so the worker need not wake.
 */
static void test_encoder_idle(void)
{
	struct meta *meta = make_meta();
	struct cw_opts o = {
		.codec = &xor_codec,
		.codec_name = "xor",
		.block_size = 4096,
		.flush_ns = 1000000000,
		.write = mem_write,
		.async = true,
		.drop_when_behind = true,
		/* a budget no sanitizer's slowness reaches */
		.inline_ns = UINT64_C(10000000000),
	};
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct mem f = { 0 };
	struct pipe_batch b = { 0 };
	struct cw_stats ws;
	struct result res;
	struct gen g;
	size_t i;
	int waits;

	o.opaque = &f;
	gen_records(&g, 3000, 0);
	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	for (i = 0; i < g.nr; i += 50) {
		b.recs = g.recs + i;
		b.nr = g.nr - i < 50 ? g.nr - i : 50;
		CHECK(cwriter_add(w, &b, &err) == 0);
		/* due long ago: what is not encoded here wakes the worker */
		cwriter_idle(w, UINT64_MAX / 2);
		if (i != 500)
			continue;
		/* let the worker write the first blocks, time them and go
		 * back to sleep (however slowly a loaded machine runs it):
		 * the blocks queued from now on wait for cwriter_idle */
		for (waits = 0; waits < 60000; waits++) {
			cwriter_stats(w, &ws);
			if (ws.blocks && cwriter_settled(w))
				break;
			usleep(1000);
		}
		CHECK(ws.blocks > 0 && cwriter_settled(w));
	}
	cwriter_stats(w, &ws);
	CHECK(ws.inline_blocks > 0);
	CHECK(cwriter_finish(w, &err) == 0);
	cwriter_stats(w, &ws);
	cwriter_free(w);
	CHECK(ws.records == g.nr);
	CHECK(ws.dropped_blocks == 0);
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr);
	CHECK(res.ordered);
	CHECK(res.reports == 0);
	CHECK(ws.stored_bytes == f.len);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* The tests that run threads: the writer's encoder thread, and the
 * reads again on four decoding threads. */
static void test_threaded(void)
{
	test_encoder_queue(false);
	test_encoder_queue(true);
	test_encoder_idle();
	read_threads = 4;
	test_round_trip(NULL, false);
	test_round_trip(&xor_codec, true);
	test_cuts(false);
	test_flips(&xor_codec);
	test_random_damage(&xor_codec);
	test_window(false, false);
	test_damage_line_and_strict();
	read_threads = 1;
}

int main(void)
{
	/* the ThreadSanitizer run (make tsan) takes the threaded tests only */
	if (getenv("PIPE_TEST_THREADED_ONLY")) {
		test_threaded();
		return test_result();
	}
	test_meta_and_header();
	test_stack_trim();
	test_summary();
	test_per_stream();
	test_round_trip(NULL, false);
	test_round_trip(NULL, true);
	test_round_trip(&xor_codec, false);
	test_round_trip(&xor_codec, true);
	use_transform = true;
	test_round_trip(NULL, false);
	test_round_trip(&xor_codec, true);
	test_flips(&xor_codec);
	test_per_stream();
	use_transform = false;
	test_bad_files();
	test_block_types();
	test_huge_lengths();
	test_flush_tick_and_index();
	test_many_indexes();
	test_damage_line_and_strict();
	test_writer_errors();
	test_cuts(false);
	test_cuts(true);
	test_flips(NULL);
	test_flips(&xor_codec);
	test_random_damage(NULL);
	test_random_damage(&xor_codec);
	test_dict();
	test_window(false, false);
	test_window(true, false);
	test_window(false, true);
	test_window_same_from_index_and_pipe();
	test_threaded();
	return test_result();
}
