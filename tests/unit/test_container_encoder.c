/*
 * test_container_encoder.c - the container writer's encoder thread:
 * behind a slow codec or a slow sink and a short queue, waiting or
 * dropping whole blocks (never the sideband) and counting them lost; and
 * encoding in the caller's idle moments once blocks are known to be
 * fast, while every write stays on the worker; one wake of the worker for
 * every stream a flush deadline writes out.  All of it runs threads,
 * so the ThreadSanitizer run takes all of it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <unistd.h>

#include "ctest.h"
#include "harness.h"

/* END and the index tell what a whole read of the file found, dropped
 * blocks or not: `pipe info` takes its totals from them. */
static void check_summary(struct mem *f, const struct result *res)
{
	struct cr_opts o = {
		.src = &mem_source,
		.src_state = f,
		.name = "x.dat",
		.threads = 1,
		.codec_open = codec_open,
		.codec_close = codec_close,
		.report = on_report,
	};
	struct pipe_err err = { { 0 }, { 0 } };
	struct result quiet;
	struct creader *r = NULL;
	struct cr_stats st;

	memset(&quiet, 0, sizeof(quiet));
	o.opaque = &quiet;
	f->next = 0;
	CHECK(creader_open(&r, &o, &err) == 0);
	CHECK(r && creader_summary(r, &st, &err) == 0);
	CHECK(st.records == res->st.records);
	CHECK(st.samples == res->st.samples);
	CHECK(st.lost == res->st.lost);
	CHECK(st.blocks == res->st.blocks);
	CHECK(st.raw_bytes == res->st.raw_bytes);
	creader_free(r);
}

/*
 * The encoder on its own thread, behind a slow codec and a queue of two
 * blocks.  Waiting (not live): every record reaches the file.  Live
 * (drop_when_behind): blocks are dropped, never the sideband, and each
 * drop is counted in the stats and written as lost, so the file reads
 * back as what was kept plus a lost count for the rest; with the
 * transform too, where a dropped block's records are columns.
 */
static void test_encoder_queue(bool drop, bool transform)
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
		.transform = transform,
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
	check_summary(&f, &res);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* Wait until the worker has written the first blocks, timed them and
 * gone back to sleep, however slowly a loaded machine runs it. */
static void wait_settled(struct cwriter *w)
{
	struct cw_stats ws;
	int waits;

	for (waits = 0; waits < 60000; waits++) {
		cwriter_stats(w, &ws);
		if (ws.blocks && cwriter_settled(w))
			break;
		usleep(1000);
	}
	CHECK(ws.blocks > 0 && cwriter_settled(w));
}

/*
 * Live, blocks wait for the caller's idle moments: the first ones go to
 * the worker (their cost is not known yet), and once a block is known to
 * encode fast the caller encodes the queue itself while the records are
 * in cache; the worker writes them, in file order.
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
		wait_settled(w);
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

/*
 * Live, one flush deadline takes every stream's pending block, and the
 * worker is woken once for all of them; what is not due yet wakes no one.
 */
static void test_encoder_one_wake(void)
{
	struct meta *meta = make_meta();
	struct cw_opts o = {
		.codec = &xor_codec,
		.codec_name = "xor",
		.block_size = 65536,
		.flush_ns = 1000000000,
		.write = mem_write,
		.async = true,
		.drop_when_behind = true,
	};
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct mem f = { 0 };
	struct pipe_batch b = { 0 };
	struct pipe_record *r = NULL;
	struct cw_stats ws;
	struct result res;
	struct gen g;
	size_t i, n = 0, first = 0;
	uint32_t s;

	o.opaque = &f;
	gen_records(&g, 400, 9);
	r = calloc(g.nr, sizeof(*r));
	CHECK(r != NULL);
	/* the CPU streams' records, stream by stream */
	for (s = 0; s < NR_CPUS; s++)
		for (i = 0; i < g.nr; i++)
			if (g.recs[i].stream == s)
				r[n++] = g.recs[i];
	while (first < n && r[first].stream == 0)
		first++;
	CHECK(first > 0 && first < n);
	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	/* stream 0 came after 10 s, the others after 10.6 s */
	cwriter_set_arrival(w, 10000000000);
	b.recs = r;
	b.nr = first;
	CHECK(cwriter_add(w, &b, &err) == 0);
	cwriter_set_arrival(w, 10600000000);
	b.recs = r + first;
	b.nr = n - first;
	CHECK(cwriter_add(w, &b, &err) == 0);
	CHECK(cwriter_tick(w, 10700000000, 100000000, &err) == 0);
	cwriter_idle(w, 10700000000);
	cwriter_stats(w, &ws);
	CHECK(ws.worker_wakes == 0);
	CHECK(ws.blocks == 0 && cwriter_next_tick(w) == 11000000000);
	/* stream 0 due within 0.1 s: every stream goes, one wake */
	CHECK(cwriter_tick(w, 10950000000, 100000000, &err) == 0);
	cwriter_idle(w, 10950000000);
	wait_settled(w);
	cwriter_idle(w, 10960000000);
	cwriter_stats(w, &ws);
	CHECK(ws.worker_wakes == 1);
	CHECK(ws.blocks == NR_CPUS);
	CHECK(cwriter_next_tick(w) == UINT64_MAX);
	CHECK(cwriter_finish(w, &err) == 0);
	cwriter_free(w);
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == n);
	CHECK(res.ordered);
	free(r);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* A sink whose writes take 5 ms each once `slow` is set, and which
 * counts the writes made on the thread that adds records while `watch`
 * is set. */
struct slow_sink {
	struct mem f;          /* what was written */
	pthread_t caller;      /* the thread that adds records */
	int watch;             /* atomic: count the caller's writes */
	int slow;              /* atomic: each write sleeps */
	int caller_writes;     /* atomic: writes made on the caller */
};

static int slow_write(void *opaque, const void *buf, size_t len,
		      struct pipe_err *err)
{
	struct slow_sink *s = opaque;

	if (__atomic_load_n(&s->watch, __ATOMIC_ACQUIRE) &&
	    pthread_equal(pthread_self(), s->caller))
		__atomic_add_fetch(&s->caller_writes, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&s->slow, __ATOMIC_ACQUIRE))
		usleep(5000);
	return mem_write(&s->f, buf, len, err);
}

/*
 * Live, a sink that turns slow (a slow disk, a pipe read slowly): the
 * caller, which drains the rings, never writes, not even in its idle
 * moments once blocks are known to encode fast, so it never waits for
 * the sink; the queue fills and whole blocks are dropped, counted and
 * written as lost, never silently.
 */
static void test_encoder_slow_sink(void)
{
	struct meta *meta = make_meta();
	struct cw_opts o = {
		.codec = &xor_codec,
		.codec_name = "xor",
		.block_size = 4096,
		.flush_ns = 1000000000,
		.write = slow_write,
		.async = true,
		.drop_when_behind = true,
		.queue_bytes = 65536,
		.inline_ns = UINT64_C(10000000000),
	};
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct slow_sink sink;
	struct pipe_batch b = { 0 };
	struct cw_stats ws;
	struct result res;
	struct gen g;
	size_t i;

	memset(&sink, 0, sizeof(sink));
	sink.caller = pthread_self();
	o.opaque = &sink;
	gen_records(&g, 3000, 5);
	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	__atomic_store_n(&sink.watch, 1, __ATOMIC_RELEASE);
	for (i = 0; i < g.nr; i += 50) {
		b.recs = g.recs + i;
		b.nr = g.nr - i < 50 ? g.nr - i : 50;
		CHECK(cwriter_add(w, &b, &err) == 0);
		cwriter_idle(w, UINT64_MAX / 2);
		if (i == 1500) {
			/* the caller encoded blocks; now the sink is slow */
			cwriter_stats(w, &ws);
			CHECK(ws.inline_blocks > 0);
			__atomic_store_n(&sink.slow, 1, __ATOMIC_RELEASE);
		}
		if (i != 500)
			continue;
		/* the first blocks written and timed: from here on the
		 * caller encodes in its idle moments */
		wait_settled(w);
	}
	CHECK(cwriter_finish(w, &err) == 0);
	__atomic_store_n(&sink.watch, 0, __ATOMIC_RELEASE);
	cwriter_stats(w, &ws);
	cwriter_free(w);
	CHECK(__atomic_load_n(&sink.caller_writes, __ATOMIC_RELAXED) == 0);
	CHECK(ws.records == g.nr);
	CHECK(ws.dropped_blocks > 0);
	read_file(&sink.f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr - ws.dropped_records);
	CHECK(res.ordered);
	CHECK(ws.lost == 5 + ws.dropped_records ||
	      ws.lost == 4 + ws.dropped_records);
	CHECK(res.st.lost == ws.lost);
	CHECK(ws.stored_bytes == sink.f.len);
	check_summary(&sink.f, &res);
	gen_free(&g);
	free(sink.f.p);
	meta_free(meta);
}

int main(void)
{
	test_encoder_queue(false, false);
	test_encoder_queue(true, false);
	test_encoder_queue(false, true);
	test_encoder_queue(true, true);
	test_encoder_idle();
	test_encoder_one_wake();
	test_encoder_slow_sink();
	/* read block by block, each file reads as merged */
	CHECK(blocks_differ == 0);
	return test_result();
}
