/*
 * test_runmerge.c - the merge of runs read in place: the order (time,
 * then the sideband, then the stream, then the run added first) against
 * a reference sort, over few and many runs, with horizons, small batches
 * and runs added between pops; spent runs given back only once popped.
 */
#include <stdlib.h>

#include "harness.h"
#include "rnd.h"
#include "runmerge.h"

struct fake {
	struct perf_event_header h; /* type SAMPLE, size 16 */
	uint64_t tag;               /* run << 32 | index in the run */
};

/* One run: its records and views, in time order. */
struct trun {
	struct fake *f;
	struct pipe_record *r;
	size_t nr;
	uint32_t stream;
	bool spent;                 /* runmerge_spent gave it back */
};

static uint64_t rnd(uint64_t *x)
{
	return rnd_lcg64(x) >> 33;
}

static void trun_make(struct trun *t, uint32_t id, uint32_t stream,
		      size_t nr, uint64_t t0, uint64_t spread, uint64_t *x)
{
	uint64_t time = t0;
	size_t i;

	t->f = calloc(nr ? nr : 1, sizeof(*t->f));
	t->r = calloc(nr ? nr : 1, sizeof(*t->r));
	t->nr = nr;
	t->stream = stream;
	t->spent = false;
	for (i = 0; i < nr; i++) {
		time += rnd(x) % spread; /* ties are frequent */
		t->f[i].h.type = PERF_RECORD_SAMPLE;
		t->f[i].h.size = sizeof(t->f[i]);
		t->f[i].tag = (uint64_t)id << 32 | i;
		t->r[i] = (struct pipe_record){ &t->f[i].h, time, stream, 0 };
	}
}

static uint32_t order_of(uint32_t stream)
{
	return stream == PIPE_STREAM_SIDEBAND ? 0 : stream + 1;
}

/* The reference: (time, sideband first then stream, run, index). */
static int ref_cmp(const void *a, const void *b)
{
	const struct pipe_record *x = a, *y = b;
	const struct fake *fx = (const struct fake *)x->hdr;
	const struct fake *fy = (const struct fake *)y->hdr;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (order_of(x->stream) != order_of(y->stream))
		return order_of(x->stream) < order_of(y->stream) ? -1 : 1;
	return fx->tag < fy->tag ? -1 : fx->tag > fy->tag;
}

/*
 * nr_runs runs over `streams` streams (the last one the sideband), each
 * starting `apart` after the one before, its times `spread` apart at
 * most (1: all equal), added
 * as a horizon moves in `step`s (0: all at once, then everything popped)
 * and popped in batches of `max`.
 */
static void check_merge(uint32_t nr_runs, uint32_t streams, size_t per,
			uint64_t spread, uint64_t apart, size_t max,
			uint64_t step, uint64_t seed)
{
	struct trun *t = calloc(nr_runs, sizeof(*t));
	struct pipe_record *ref, *got;
	struct runmerge *m;
	struct pipe_batch b;
	size_t total = 0, n = 0, i;
	uint64_t x = seed, horizon = step ? step : UINT64_MAX;
	uint32_t k, added = 0;
	bool same = true, spent_ok = true;
	void *owner;

	for (k = 0; k < nr_runs; k++) {
		uint32_t s = k % streams;

		if (s == streams - 1)
			s = PIPE_STREAM_SIDEBAND;
		/* runs of one stream overlap in time, as a disordered
		 * sideband's blocks do */
		trun_make(&t[k], k, s, per ? rnd(&x) % per : 0,
			  (uint64_t)k * apart, spread, &x);
		total += t[k].nr;
	}
	ref = calloc(total + 1, sizeof(*ref));
	got = calloc(total + 1, sizeof(*got));
	for (k = 0; k < nr_runs; k++)
		for (i = 0; i < t[k].nr; i++)
			ref[n++] = t[k].r[i];
	qsort(ref, n, sizeof(*ref), ref_cmp);
	CHECK(runmerge_new(&m) == 0);
	n = 0;
	for (;;) {
		uint32_t last = added;

		/* every run with a record older than the horizon goes in
		 * first, as blocks are read before their horizon passes */
		for (k = added; k < nr_runs; k++)
			if (horizon == UINT64_MAX ||
			    (t[k].nr && t[k].r[0].time < horizon))
				last = k + 1;
		for (; added < last; added++)
			CHECK(runmerge_add(m, t[added].r, t[added].nr,
					   t[added].stream, t[added].nr * 16,
					   &t[added]) == 0);
		do {
			while ((owner = runmerge_spent(m))) {
				struct trun *s = owner;

				/* once, after all its records came out */
				for (i = 0; i < s->nr; i++)
					if (!s->f[i].h.misc)
						spent_ok = false;
				if (s->spent)
					spent_ok = false;
				s->spent = true;
			}
			runmerge_pop(m, horizon, max, &b);
			for (i = 0; i < b.nr && n < total; i++) {
				got[n++] = b.recs[i];
				((struct fake *)b.recs[i].hdr)->h.misc = 1;
			}
		} while (b.nr);
		if (horizon == UINT64_MAX ||
		    (added == nr_runs && !runmerge_count(m)))
			break;
		horizon = step && horizon < UINT64_MAX - step ? horizon + step
							      : UINT64_MAX;
	}
	CHECK(n == total);
	CHECK(runmerge_count(m) == 0);
	while ((owner = runmerge_spent(m)))
		((struct trun *)owner)->spent = true;
	CHECK(runmerge_bytes(m) == 0);
	for (k = 0; k < nr_runs; k++)
		CHECK(t[k].spent);
	CHECK(spent_ok);
	for (i = 0; i < n && i < total; i++)
		if (got[i].hdr != ref[i].hdr || got[i].time != ref[i].time ||
		    got[i].stream != ref[i].stream)
			same = false;
	CHECK(same);
	runmerge_free(m);
	for (k = 0; k < nr_runs; k++) {
		free(t[k].f);
		free(t[k].r);
	}
	free(t);
	free(ref);
	free(got);
}

/* The horizon holds records back; ties across streams and runs. */
static void test_order(void)
{
	struct fake f[6];
	struct pipe_record r[6];
	struct runmerge *m;
	struct pipe_batch b;
	int i;

	for (i = 0; i < 6; i++) {
		f[i].h.type = PERF_RECORD_SAMPLE;
		f[i].h.size = sizeof(f[i]);
		f[i].tag = (uint64_t)i;
	}
	r[0] = (struct pipe_record){ &f[0].h, 10, 0, 0 };
	r[1] = (struct pipe_record){ &f[1].h, 30, 0, 0 };
	r[2] = (struct pipe_record){ &f[2].h, 20, 1, 0 };
	r[3] = (struct pipe_record){ &f[3].h, 30, 1, 0 };
	r[4] = (struct pipe_record){ &f[4].h, 30, PIPE_STREAM_SIDEBAND, 0 };
	r[5] = (struct pipe_record){ &f[5].h, 30, 0, 0 }; /* a later run */
	CHECK(runmerge_new(&m) == 0);
	CHECK(runmerge_add(m, &r[0], 2, 0, 32, &r[0]) == 0);
	CHECK(runmerge_add(m, &r[2], 2, 1, 32, &r[2]) == 0);
	CHECK(runmerge_add(m, &r[4], 1, PIPE_STREAM_SIDEBAND, 16, &r[4]) == 0);
	CHECK(runmerge_add(m, &r[5], 1, 0, 16, &r[5]) == 0);
	CHECK(runmerge_add(m, NULL, 0, 0, 0, NULL) == 0);
	CHECK(runmerge_count(m) == 6 && runmerge_bytes(m) == 96);
	runmerge_pop(m, 25, 100, &b);
	CHECK(b.nr == 2);
	CHECK(b.recs[0].hdr == &f[0].h && b.recs[1].hdr == &f[2].h);
	CHECK(runmerge_spent(m) == NULL); /* the empty run */
	CHECK(runmerge_spent(m) == NULL);
	runmerge_pop(m, 25, 100, &b);
	CHECK(b.nr == 0);
	runmerge_pop(m, UINT64_MAX, 100, &b);
	CHECK(b.nr == 4);
	/* ties at 30: the sideband, stream 0 (its first run, then its
	 * second), stream 1 */
	CHECK(b.recs[0].hdr == &f[4].h && b.recs[1].hdr == &f[1].h);
	CHECK(b.recs[2].hdr == &f[5].h && b.recs[3].hdr == &f[3].h);
	for (i = 0; i < 4; i++)
		CHECK(runmerge_spent(m) != NULL);
	CHECK(runmerge_spent(m) == NULL);
	CHECK(runmerge_count(m) == 0 && runmerge_bytes(m) == 0);
	runmerge_free(m);
	runmerge_free(NULL);
}

int main(void)
{
	test_order();
	/* few runs (the two-run path), many (the heap), ties, horizons;
	 * runs of one stream that overlap, as a disordered sideband's */
	check_merge(2, 2, 3000, 5, 0, 4096, 0, 1);
	check_merge(3, 3, 3000, 3, 100, 100, 0, 2);
	check_merge(4, 3, 2000, 2, 50, 7, 5, 3);
	check_merge(4, 2, 2000, 2, 10, 64, 3, 8);
	check_merge(4, 2, 500, 1, 1, 16, 1, 9);
	check_merge(40, 5, 1000, 4, 500, 333, 0, 4);
	check_merge(40, 3, 1000, 2, 30, 50, 40, 10);
	check_merge(200, 9, 300, 3, 100, 4096, 700, 5);
	check_merge(64, 64, 50, 1, 1, 1, 0, 6);
	check_merge(30, 4, 0, 3, 10, 100, 0, 7); /* every run empty */
	return test_result();
}
