/*
 * test_container_runs.c - the container writer on batches of records that lie
 * back to back in memory, as views into a ring hand them out: blocks are
 * cut where records added one at a time cut them, the counts are the
 * same, and every record reads back, across runs broken by other streams,
 * by records elsewhere in memory and by records larger than a block.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "ctest.h"
#include "err.h"
#include "format.h"
#include "harness.h"
#include "memfile.h"
#include "meta.h"
#include "rnd.h"

#define NR_RECS 3000
#define BLOCK 4096

struct recs {
	uint8_t *buf;              /* records back to back */
	uint8_t *far;              /* copies of some, elsewhere */
	struct pipe_record *r;
	size_t nr;
	uint64_t samples, lost, bytes;
};

static void put_at(uint8_t *p, size_t at, uint64_t v)
{
	memcpy(p + at, &v, 8);
}

/*
 * Mostly samples of stream 0, some padded to odd sizes, some larger than
 * a block; now and then a LOST or THROTTLE record, a sample of stream 1,
 * or a record whose bytes are elsewhere in memory.
 */
static void make_recs(struct recs *g)
{
	size_t i, off = 0, far_off = 0;
	uint64_t t = 1000;
	uint32_t x = 12345;

	memset(g, 0, sizeof(*g));
	g->buf = calloc(NR_RECS, 8192);
	g->far = calloc(NR_RECS, 64);
	g->r = calloc(NR_RECS, sizeof(*g->r));
	g->nr = NR_RECS;
	for (i = 0; i < NR_RECS; i++) {
		struct perf_event_header *h = (void *)(g->buf + off);
		uint8_t *p = (uint8_t *)h;

		t += 1 + (rnd_lcg32(&x) >> 24);
		g->r[i].stream = 0;
		g->r[i].time = t;
		g->r[i].event = 0;
		if (i % 97 == 5) {
			h->type = PERF_RECORD_LOST;
			h->size = 24;
			put_at(p, 8, SAMPLE_ID);
			put_at(p, 16, 3);
			g->lost += 3;
		} else if (i % 89 == 6) {
			h->type = PERF_RECORD_THROTTLE;
			h->size = 32;
			put_at(p, 8, t);
			put_at(p, 16, SAMPLE_ID);
			put_at(p, 24, SAMPLE_ID);
		} else {
			h->type = PERF_RECORD_SAMPLE;
			/* a few sizes; now and then one larger than a block */
			h->size = i % 211 == 9 ? 5000 :
				  i % 3 ? 64 : 40 + 8 * (x >> 29 & 3);
			put_at(p, 8, SAMPLE_ID);
			put_at(p, 16, 0x400000 + i);
			put_at(p, 24, (uint64_t)(i % 5) << 32 | (i % 5));
			put_at(p, 32, t);
			if (i % 61 == 4)
				g->r[i].stream = 1;
			g->samples++;
		}
		g->bytes += h->size;
		g->r[i].hdr = h;
		if (i % 53 == 8 && h->size <= 64) {
			memcpy(g->far + far_off, h, h->size);
			g->r[i].hdr = (void *)(g->far + far_off);
			far_off += 64;
		}
		off += h->size;
	}
}

static void free_recs(struct recs *g)
{
	free(g->buf);
	free(g->far);
	free(g->r);
}

/* Write g's records, `per` of them per cwriter_add. */
static void write_recs(struct mem *out, const struct recs *g,
		       const struct meta *meta, size_t per,
		       struct cw_stats *st)
{
	struct cw_opts o = {
		.codec_name = "none",
		.block_size = BLOCK,
		.flush_ns = UINT64_C(1000000000000),
		.write = mem_write,
		.opaque = out,
	};
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct pipe_batch b = { 0 };
	size_t i;

	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	if (!w)
		return;
	for (i = 0; i < g->nr; i += per) {
		b.recs = g->r + i;
		b.nr = g->nr - i < per ? g->nr - i : per;
		CHECK(cwriter_add(w, &b, &err) == 0);
	}
	CHECK(cwriter_finish(w, &err) == 0);
	cwriter_stats(w, st);
	cwriter_free(w);
}

/* The DATA blocks of a file: stream, records and raw bytes of each. */
static size_t data_blocks(const struct mem *f, uint32_t *out, size_t max)
{
	uint64_t salt = fmt_get64(f->p + FMT_FH_FILE_ID);
	uint64_t at = FMT_FILE_HDR_SIZE;
	struct fmt_block b;
	size_t n = 0;

	while (at < f->len && n + 3 <= max) {
		if (fmt_block_decode(&b, f->p + at, f->len - at, salt) < 0)
			break;
		if (b.type == FMT_DATA) {
			out[n++] = b.stream;
			out[n++] = b.records;
			out[n++] = b.raw;
			CHECK(b.raw <= BLOCK || b.records == 1);
		}
		at += fmt_block_len(&b);
	}
	CHECK(at == f->len);
	return n;
}

/* Every record reads back, byte for byte, in its stream (the reader
 * orders them by time, which the records here do not all carry). */
static void check_read(struct mem *f, const struct recs *g)
{
	struct result res;
	uint64_t want = 0;
	size_t i;

	for (i = 0; i < g->nr; i++)
		want += rec_hash(&g->r[i]);
	read_file(f, true, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g->nr);
	CHECK(res.hash == want);
}

/* Each stream's blocks hold its records in order, and each but its last
 * is cut only because the next record would not fit. */
static void check_cuts(const uint32_t *blk, size_t n, const struct recs *g)
{
	uint32_t s;
	size_t i, k;

	for (s = 0; s < 2; s++) {
		k = 0;
		for (i = 0; i < n; i += 3) {
			uint64_t raw = 0;
			uint32_t left;

			if (blk[i] != s)
				continue;
			for (left = blk[i + 1]; left && k < g->nr; k++) {
				if (g->r[k].stream != s)
					continue;
				raw += g->r[k].hdr->size;
				left--;
			}
			CHECK(raw == blk[i + 2]);
			while (k < g->nr && g->r[k].stream != s)
				k++;
			if (k < g->nr)
				CHECK(raw + g->r[k].hdr->size > BLOCK);
		}
		CHECK(k == g->nr);
	}
}

static void test_runs_cut_like_single_records(void)
{
	static uint32_t one[3 * 4096], many[3 * 4096];
	struct meta *meta = make_meta();
	size_t pers[] = { 2, 37, 500, NR_RECS }, n1, n, k;
	struct cw_stats st1, st;
	struct mem f1 = { 0 };
	struct recs g;

	make_recs(&g);
	write_recs(&f1, &g, meta, 1, &st1);
	n1 = data_blocks(&f1, one, 3 * 4096);
	CHECK(n1 > 3 * 10);
	check_cuts(one, n1, &g);
	CHECK(st1.records == g.nr);
	CHECK(st1.samples == g.samples);
	CHECK(st1.raw_bytes == g.bytes);
	CHECK(st1.lost == g.lost);
	check_read(&f1, &g);
	for (k = 0; k < sizeof(pers) / sizeof(pers[0]); k++) {
		struct mem f = { 0 };

		write_recs(&f, &g, meta, pers[k], &st);
		n = data_blocks(&f, many, 3 * 4096);
		CHECK(n == n1);
		CHECK(!memcmp(one, many, n1 * sizeof(one[0])));
		CHECK(st.records == st1.records);
		CHECK(st.samples == st1.samples);
		CHECK(st.raw_bytes == st1.raw_bytes);
		CHECK(st.lost == st1.lost);
		CHECK(f.len == f1.len);
		check_read(&f, &g);
		free(f.p);
	}
	free(f1.p);
	free_recs(&g);
	meta_free(meta);
}

/* A record of a bad size ends the run before it and fails the add. */
static void test_bad_size_in_run(void)
{
	struct meta *meta = make_meta();
	struct cw_opts o = {
		.codec_name = "none",
		.block_size = BLOCK,
		.flush_ns = 1000000000,
		.write = mem_write,
	};
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct pipe_batch b = { 0 };
	struct cw_stats st;
	struct mem f = { 0 };
	struct recs g;

	o.opaque = &f;
	make_recs(&g);
	((struct perf_event_header *)g.r[3].hdr)->size = 20;
	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	b.recs = g.r;
	b.nr = 10;
	CHECK(cwriter_add(w, &b, &err) == -EINVAL);
	CHECK(strstr(err.msg, "not a multiple of 8") != NULL);
	cwriter_stats(w, &st);
	CHECK(st.records == 3);
	cwriter_free(w);
	free(f.p);
	free_recs(&g);
	meta_free(meta);
}

int main(void)
{
	test_runs_cut_like_single_records();
	test_bad_size_in_run();
	return test_result();
}
