/*
 * test_container_writer.c - the container writer: the file header and
 * metadata, the flush tick, one index or several, write errors and bad
 * block sizes, user stacks trimmed to what was dumped, records written
 * per stream (with and without the transform), and dictionaries with the
 * real zstd plugin.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "ctest.h"
#include "harness.h"

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

int main(void)
{
	test_meta_and_header();
	test_stack_trim();
	test_per_stream();
	use_transform = true;
	test_per_stream();
	use_transform = false;
	test_flush_tick_and_index();
	test_many_indexes();
	test_writer_errors();
	test_dict();
	/* read block by block, each file reads as merged */
	CHECK(blocks_differ == 0);
	/* test_per_stream's sideband goes back across blocks */
	CHECK(blocks_stopped > 0);
	return test_result();
}
