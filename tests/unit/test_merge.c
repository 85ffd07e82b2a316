/*
 * test_merge.c - the time-order merge: order across streams, ties, the
 * horizon, views surviving until the next call, many records.
 */
#include <stdlib.h>

#include "harness.h"
#include "merge.h"
#include "rnd.h"

struct fake {
	struct perf_event_header h; /* type SAMPLE, size 16 */
	uint64_t tag;               /* stream << 32 | seq */
};

static struct pipe_record mk(struct fake *f, uint32_t stream, uint64_t t,
			     uint64_t seq)
{
	f->h.type = PERF_RECORD_SAMPLE;
	f->h.misc = 0;
	f->h.size = sizeof(*f);
	f->tag = ((uint64_t)stream << 32) | seq;
	return (struct pipe_record){ &f->h, t, stream, 0 };
}

static void test_order(void)
{
	struct merge *m;
	struct fake f[6];
	struct pipe_record r[6];
	struct pipe_batch b;
	uint64_t last = 0;
	size_t i;

	CHECK(merge_new(&m) == 0);
	r[0] = mk(&f[0], 0, 10, 0);
	r[1] = mk(&f[1], 0, 30, 1);
	r[2] = mk(&f[2], 1, 20, 0);
	r[3] = mk(&f[3], 1, 30, 1);
	r[4] = mk(&f[4], PIPE_STREAM_SIDEBAND, 30, 0);
	r[5] = mk(&f[5], PIPE_STREAM_SIDEBAND, 5, 1); /* came late */
	CHECK(merge_push(m, r, 6) == 0);
	CHECK(merge_count(m) == 6);
	CHECK(merge_reordered(m) == 1);
	CHECK(merge_oldest(m) == 5);
	merge_pop(m, 25, 100, &b);
	CHECK(b.nr == 3);
	/* the late record still comes out in its time's place */
	CHECK(b.recs[0].time == 5 && b.recs[0].stream == PIPE_STREAM_SIDEBAND);
	CHECK(((const struct fake *)b.recs[0].hdr)->tag ==
	      ((uint64_t)PIPE_STREAM_SIDEBAND << 32 | 1));
	CHECK(b.recs[1].time == 10 && b.recs[2].time == 20);
	CHECK(b.recs[2].stream == 1);
	merge_pop(m, UINT64_MAX, 100, &b);
	CHECK(b.nr == 3);
	/* ties at 30: the sideband first, then stream 0, then stream 1 */
	CHECK(b.recs[0].stream == PIPE_STREAM_SIDEBAND);
	CHECK(b.recs[1].stream == 0 && b.recs[2].stream == 1);
	for (i = 0; i < b.nr; i++) {
		CHECK(b.recs[i].time >= last);
		last = b.recs[i].time;
	}
	CHECK(merge_count(m) == 0 && merge_bytes(m) == 0);
	merge_pop(m, UINT64_MAX, 100, &b);
	CHECK(b.nr == 0);
	merge_free(m);
}

static void test_many(void)
{
	enum { STREAMS = 7, PER = 50000 };
	struct merge *m;
	struct fake *f = calloc(STREAMS * PER, sizeof(*f));
	struct pipe_record *r = calloc(PER, sizeof(*r));
	struct pipe_batch b;
	uint64_t last = 0, seen = 0, next_seq[STREAMS] = { 0 };
	bool ordered = true, fifo = true;
	uint32_t s;
	size_t i;

	CHECK(merge_new(&m) == 0);
	for (s = 0; s < STREAMS; s++) {
		for (i = 0; i < PER; i++)
			r[i] = mk(&f[s * PER + i], s, i * 13 + s * 5 + (i % 3), i);
		CHECK(merge_push(m, r, PER) == 0);
	}
	merge_free(NULL);
	for (;;) {
		merge_pop(m, UINT64_MAX, 999, &b);
		if (!b.nr)
			break;
		for (i = 0; i < b.nr; i++) {
			const struct fake *x = (const struct fake *)b.recs[i].hdr;
			uint32_t st = (uint32_t)(x->tag >> 32);

			if (b.recs[i].time < last)
				ordered = false;
			last = b.recs[i].time;
			if (st != b.recs[i].stream || (x->tag & 0xffffffff) != next_seq[st])
				fifo = false;
			next_seq[st]++;
			seen++;
		}
	}
	CHECK(ordered);
	CHECK(fifo);
	CHECK(seen == (uint64_t)STREAMS * PER);
	merge_free(m);
	free(f);
	free(r);
}

/* Many late records in one stream come out sorted among the others. */
static void test_late(void)
{
	enum { N = 5000 };
	struct merge *m;
	struct fake *f = calloc(2 * N, sizeof(*f));
	struct pipe_record *r = calloc(2 * N, sizeof(*r));
	struct pipe_batch b;
	uint64_t last = 0, seen = 0, x = 12345;
	bool ordered = true;
	size_t i;

	CHECK(merge_new(&m) == 0);
	for (i = 0; i < N; i++) {
		/* the sideband: times jump back and forth */
		r[i] = mk(&f[i], PIPE_STREAM_SIDEBAND,
			  (rnd_lcg64(&x) >> 33) % 100000, i);
		r[N + i] = mk(&f[N + i], 0, i * 20, i);
	}
	CHECK(merge_push(m, r, 2 * N) == 0);
	CHECK(merge_reordered(m) > N / 4);
	for (;;) {
		merge_pop(m, UINT64_MAX, 333, &b);
		if (!b.nr)
			break;
		/* push more between pops: views of the last pop stay valid */
		for (i = 0; i < b.nr; i++) {
			if (b.recs[i].time < last)
				ordered = false;
			last = b.recs[i].time;
			seen++;
		}
	}
	CHECK(ordered);
	CHECK(seen == 2 * N);
	CHECK(merge_count(m) == 0 && merge_bytes(m) == 0);
	merge_free(m);
	free(f);
	free(r);
}

int main(void)
{
	test_order();
	test_late();
	test_many();
	return test_result();
}
