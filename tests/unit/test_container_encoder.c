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
	struct cr_stats st;

	CHECK(read_summary(f, &st) == 0);
	CHECK(st.records == res->st.records);
	CHECK(st.samples == res->st.samples);
	CHECK(st.lost == res->st.lost);
	CHECK(st.dropped_blocks == res->st.dropped_blocks);
	CHECK(st.dropped_lost == res->st.dropped_lost);
	CHECK(st.blocks == res->st.blocks);
	CHECK(st.raw_bytes == res->st.raw_bytes);
}

/*
 * One writer test: the records, a live writer with the xor codec and
 * blocks of 4 KiB (o, changed by the test before enc_start), and the
 * file it writes into memory.
 */
struct enc {
	struct meta *meta;  /* make_meta's */
	struct cw_opts o;   /* the writer's options; opaque: &f */
	struct gen g;       /* the records, from enc_start */
	struct cwriter *w;  /* from enc_start to enc_finish */
	struct mem f;       /* the file */
	struct cw_stats ws; /* the writer's stats at enc_finish */
	struct result res;  /* the file read back by check_kept */
	struct pipe_err err;
};

static void enc_init(struct enc *e)
{
	memset(e, 0, sizeof(*e));
	e->meta = make_meta();
	e->o.codec = &xor_codec;
	e->o.codec_name = "xor";
	e->o.block_size = 4096;
	e->o.flush_ns = 1000000000;
	e->o.write = mem_write;
	e->o.opaque = &e->f;
	e->o.async = true;
	e->o.drop_when_behind = true;
}

/* nr records of gen_records(seed), and the writer. */
static void enc_start(struct enc *e, size_t nr, uint32_t seed)
{
	gen_records(&e->g, nr, seed);
	CHECK(cwriter_new(&e->w, &e->o, e->meta, &e->err) == 0);
}

/* Add the records [i, i + 50) (fewer at the end) in one batch. */
static void enc_add_50(struct enc *e, size_t i)
{
	struct pipe_batch b = { 0 };

	b.recs = e->g.recs + i;
	b.nr = e->g.nr - i < 50 ? e->g.nr - i : 50;
	CHECK(cwriter_add(e->w, &b, &e->err) == 0);
}

/* End the file, keep the stats, free the writer. */
static void enc_finish(struct enc *e)
{
	CHECK(cwriter_finish(e->w, &e->err) == 0);
	cwriter_stats(e->w, &e->ws);
	cwriter_free(e->w);
	e->w = NULL;
}

static void enc_release(struct enc *e)
{
	gen_free(&e->g);
	free(e->f.p);
	meta_free(e->meta);
}

/*
 * The file f, read back into e->res: all the records but those of the
 * blocks dropped, in order, each counted lost with the 5 of the one
 * PERF_RECORD_LOST (in place of itself, when its block went); no damage;
 * its summary says the same.
 */
static void check_kept(struct enc *e, struct mem *f)
{
	CHECK(e->ws.records == e->g.nr);
	CHECK(e->ws.stored_bytes == f->len);
	read_file(f, false, &e->res);
	CHECK(e->res.ret == PIPE_EOF);
	CHECK(e->res.nr == e->g.nr - e->ws.dropped_records);
	CHECK(e->res.ordered);
	CHECK(e->ws.lost == 5 + e->ws.dropped_records ||
	      e->ws.lost == 4 + e->ws.dropped_records);
	CHECK(e->res.st.lost == e->ws.lost);
	/* each dropped block is a LOST block: the reader counts them, and
	 * what they counted is all of lost but the kept LOST record's 5 */
	CHECK(e->res.st.dropped_blocks == e->ws.dropped_blocks);
	CHECK(e->res.st.dropped_lost == e->ws.lost ||
	      e->res.st.dropped_lost == e->ws.lost - 5);
	CHECK(e->res.st.dropped_lost >= e->ws.dropped_records);
	CHECK(e->res.reports == 0);
	check_summary(f, &e->res);
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
	struct enc e;
	size_t i, side = 0;

	enc_init(&e);
	e.o.codec = &slow_codec;
	e.o.drop_when_behind = drop;
	e.o.queue_bytes = 8192;
	e.o.transform = transform;
	ct_slow_codec_init();
	enc_start(&e, 3000, 5);
	for (i = 0; i < e.g.nr; i++)
		side += e.g.recs[i].stream == PIPE_STREAM_SIDEBAND;
	for (i = 0; i < e.g.nr; i += 50)
		enc_add_50(&e, i);
	enc_finish(&e);
	if (drop) {
		CHECK(e.ws.dropped_blocks > 0);
		CHECK(e.ws.dropped_records > 0);
		CHECK(e.ws.dropped_samples <= e.ws.dropped_records);
	} else {
		CHECK(e.ws.dropped_blocks == 0);
	}
	check_kept(&e, &e.f);
	/* the sideband is never dropped */
	CHECK(e.res.nr >= side);
	enc_release(&e);
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
	struct enc e;
	size_t i;

	enc_init(&e);
	/* a budget no sanitizer's slowness reaches */
	e.o.inline_ns = UINT64_C(10000000000);
	enc_start(&e, 3000, 0);
	for (i = 0; i < e.g.nr; i += 50) {
		enc_add_50(&e, i);
		/* due long ago: what is not encoded here wakes the worker */
		cwriter_idle(e.w, UINT64_MAX / 2);
		if (i != 500)
			continue;
		/* let the worker write the first blocks, time them and go
		 * back to sleep (however slowly a loaded machine runs it):
		 * the blocks queued from now on wait for cwriter_idle */
		wait_settled(e.w);
	}
	cwriter_stats(e.w, &e.ws);
	CHECK(e.ws.inline_blocks > 0);
	enc_finish(&e);
	CHECK(e.ws.dropped_blocks == 0);
	check_kept(&e, &e.f);
	enc_release(&e);
}

/*
 * Live, with the transform, a stream's next block takes the column
 * encoder of a block already encoded rather than a new one.  Blocks
 * encoded in the caller's idle moments wait for the worker's next
 * wake-up (up to a flush interval, a dozen of them at 20 kHz); each
 * used to keep its encoder meanwhile, so the next blocks made new ones,
 * whose pages fault in as they fill.  Here every block after the first
 * ones waits until the end: the encoders made stay at the streams' and
 * one or two more, not one a block.
 */
static void test_encoder_reuses_columns(void)
{
	struct cw_stats at = { 0 };
	struct enc e;
	size_t i;

	enc_init(&e);
	e.o.transform = true;
	e.o.inline_ns = UINT64_C(10000000000);
	enc_start(&e, 8000, 3);
	for (i = 0; i < e.g.nr; i += 50) {
		enc_add_50(&e, i);
		/* the first blocks go to the worker, which times them; then
		 * nothing is due: the caller encodes, the worker sleeps */
		cwriter_idle(e.w, i <= 500 ? UINT64_MAX / 2 : 0);
		if (i == 500) {
			wait_settled(e.w);
			cwriter_stats(e.w, &at);
		}
	}
	cwriter_stats(e.w, &e.ws);
	CHECK(e.ws.inline_blocks > at.inline_blocks);
	enc_finish(&e);
	CHECK(e.ws.blocks >= 100);
	CHECK(at.cols_made >= NR_CPUS + 1);
	/* made: one a stream, and one per block waiting for the worker
	 * before it settled; after that at most one a stream more (the
	 * blocks one batch cuts before the caller's next idle moment),
	 * and one for each block the caller left to the worker (a loaded
	 * machine stretches an encode past what it does inline): none for
	 * the blocks it encoded */
	CHECK(e.ws.cols_made <= at.cols_made + NR_CPUS + 1 +
	      (e.ws.blocks - at.blocks) -
	      (e.ws.inline_blocks - at.inline_blocks));
	check_kept(&e, &e.f);
	enc_release(&e);
}

/*
 * Live, a block that takes long to encode (a codec that sleeps 20 ms: the
 * wall time a loaded machine can stretch an encode to) is left to the
 * worker once the caller has timed one: the caller sleeps far more often
 * than every 160 ms, and meanwhile no one would drain its rings.  A
 * block is tried again a few sleeps later, so a few are encoded there.
 */
static void test_encoder_inline_slow(void)
{
	struct meta *meta = make_meta();
	struct cw_opts o = {
		.codec = &slow_codec,
		.codec_name = "xor",
		.block_size = 4096,
		.flush_ns = 1000000000,
		.write = mem_write,
		.async = true,
		.drop_when_behind = true,
		.queue_bytes = 1u << 20,
		.inline_ns = UINT64_C(10000000000),
	};
	struct pipe_err err;
	struct cwriter *w = NULL;
	struct mem f = { 0 };
	struct pipe_batch b = { 0 };
	struct cw_stats ws, at;
	struct result res;
	struct gen g;
	size_t i;

	o.opaque = &f;
	ct_slow_codec_init();
	gen_records(&g, 3000, 0);
	CHECK(cwriter_new(&w, &o, meta, &err) == 0);
	memset(&at, 0, sizeof(at));
	for (i = 0; i < g.nr; i += 50) {
		b.recs = g.recs + i;
		b.nr = g.nr - i < 50 ? g.nr - i : 50;
		CHECK(cwriter_add(w, &b, &err) == 0);
		cwriter_idle(w, UINT64_MAX / 2);
		usleep(1000);
		if (i != 500)
			continue;
		wait_settled(w);
		cwriter_stats(w, &at);
	}
	CHECK(cwriter_finish(w, &err) == 0);
	cwriter_stats(w, &ws);
	cwriter_free(w);
	/* of the blocks after the first were timed, at most a quarter */
	CHECK(ws.blocks > at.blocks + 8);
	CHECK(ws.inline_blocks - at.inline_blocks <=
	      1 + (ws.blocks - at.blocks) / 4);
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.ordered);
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
	struct pipe_batch b = { 0 };
	struct pipe_record *r = NULL;
	struct enc e;
	size_t i, n = 0, first = 0;
	uint32_t s;

	enc_init(&e);
	e.o.block_size = 65536;
	enc_start(&e, 400, 9);
	r = calloc(e.g.nr, sizeof(*r));
	CHECK(r != NULL);
	/* the CPU streams' records, stream by stream */
	for (s = 0; s < NR_CPUS; s++)
		for (i = 0; i < e.g.nr; i++)
			if (e.g.recs[i].stream == s)
				r[n++] = e.g.recs[i];
	while (first < n && r[first].stream == 0)
		first++;
	CHECK(first > 0 && first < n);
	/* stream 0 came after 10 s, the others after 10.6 s */
	cwriter_set_arrival(e.w, 10000000000);
	b.recs = r;
	b.nr = first;
	CHECK(cwriter_add(e.w, &b, &e.err) == 0);
	cwriter_set_arrival(e.w, 10600000000);
	b.recs = r + first;
	b.nr = n - first;
	CHECK(cwriter_add(e.w, &b, &e.err) == 0);
	CHECK(cwriter_tick(e.w, 10700000000, 100000000, &e.err) == 0);
	cwriter_idle(e.w, 10700000000);
	cwriter_stats(e.w, &e.ws);
	CHECK(e.ws.worker_wakes == 0);
	CHECK(e.ws.blocks == 0 && cwriter_next_tick(e.w) == 11000000000);
	/* stream 0 due within 0.1 s: every stream goes, one wake */
	CHECK(cwriter_tick(e.w, 10950000000, 100000000, &e.err) == 0);
	cwriter_idle(e.w, 10950000000);
	wait_settled(e.w);
	cwriter_idle(e.w, 10960000000);
	cwriter_stats(e.w, &e.ws);
	CHECK(e.ws.worker_wakes == 1);
	CHECK(e.ws.blocks == NR_CPUS);
	CHECK(cwriter_next_tick(e.w) == UINT64_MAX);
	enc_finish(&e);
	read_file(&e.f, false, &e.res);
	CHECK(e.res.ret == PIPE_EOF);
	CHECK(e.res.nr == n);
	CHECK(e.res.ordered);
	free(r);
	enc_release(&e);
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
	struct slow_sink sink;
	struct enc e;
	size_t i;

	enc_init(&e);
	memset(&sink, 0, sizeof(sink));
	sink.caller = pthread_self();
	e.o.write = slow_write;
	e.o.opaque = &sink;
	e.o.queue_bytes = 65536;
	e.o.inline_ns = UINT64_C(10000000000);
	enc_start(&e, 3000, 5);
	__atomic_store_n(&sink.watch, 1, __ATOMIC_RELEASE);
	for (i = 0; i < e.g.nr; i += 50) {
		enc_add_50(&e, i);
		cwriter_idle(e.w, UINT64_MAX / 2);
		if (i == 1500) {
			/* the caller encoded blocks; now the sink is slow */
			cwriter_stats(e.w, &e.ws);
			CHECK(e.ws.inline_blocks > 0);
			__atomic_store_n(&sink.slow, 1, __ATOMIC_RELEASE);
		}
		if (i != 500)
			continue;
		/* the first blocks written and timed: from here on the
		 * caller encodes in its idle moments */
		wait_settled(e.w);
	}
	enc_finish(&e);
	__atomic_store_n(&sink.watch, 0, __ATOMIC_RELEASE);
	CHECK(__atomic_load_n(&sink.caller_writes, __ATOMIC_RELAXED) == 0);
	CHECK(e.ws.dropped_blocks > 0);
	check_kept(&e, &sink.f);
	free(sink.f.p);
	enc_release(&e);
}

int main(void)
{
	test_encoder_queue(false, false);
	test_encoder_queue(true, false);
	test_encoder_queue(false, true);
	test_encoder_queue(true, true);
	test_encoder_idle();
	test_encoder_reuses_columns();
	test_encoder_inline_slow();
	test_encoder_one_wake();
	test_encoder_slow_sink();
	/* read block by block, each file reads as merged */
	CHECK(blocks_differ == 0);
	return test_result();
}
