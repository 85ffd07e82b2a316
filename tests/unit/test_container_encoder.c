/*
 * test_container_encoder.c - the container writer's encoder thread:
 * behind a slow codec and a short queue, waiting or dropping whole
 * blocks (never the sideband) and counting them lost; and encoding in
 * the caller's idle moments once blocks are known to be fast.  All of
 * it runs threads, so the ThreadSanitizer run takes all of it.
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
	ct_slow_codec_init();
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

int main(void)
{
	test_encoder_queue(false);
	test_encoder_queue(true);
	test_encoder_idle();
	/* read block by block, each file reads as merged */
	CHECK(blocks_differ == 0);
	return test_result();
}
