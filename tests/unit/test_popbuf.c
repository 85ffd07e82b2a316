/*
 * test_popbuf.c - record/popbuf.h: the merges' batch array grows to what
 * a pop asks for, doubling from its first room (so pops that ask a little
 * more each time do not reallocate each time), keeps its room and records
 * for smaller pops, hands out the room it has when it cannot grow, and is
 * empty again after popbuf_release.
 */
#include "harness.h"
#include "popbuf.h"

int main(void)
{
	struct popbuf b = { NULL, 0 };
	struct pipe_record *first;
	size_t cap, i;

	CHECK(popbuf_reserve(&b, 0) == 0 && !b.recs);
	CHECK(popbuf_reserve(&b, 64) == 64 && b.cap == POPBUF_FIRST && b.recs);
	b.recs[POPBUF_FIRST - 1].time = 7; /* all there (ASan checks) */
	first = b.recs;
	CHECK(popbuf_reserve(&b, 16) == 16 && b.cap == POPBUF_FIRST &&
	      b.recs == first);
	/* one more than the room: the room doubles */
	CHECK(popbuf_reserve(&b, POPBUF_FIRST + 1) == POPBUF_FIRST + 1 &&
	      b.cap == 2 * POPBUF_FIRST);
	CHECK(b.recs[POPBUF_FIRST - 1].time == 7);
	/* pops asking one more each time: a handful of reallocations */
	for (i = POPBUF_FIRST; i <= 100000; i++) {
		cap = b.cap;
		CHECK(popbuf_reserve(&b, i) == i && b.cap >= i);
		if (b.cap != cap)
			CHECK(b.cap == 2 * cap);
	}
	CHECK(b.cap == POPBUF_FIRST << 9);
	b.recs[b.cap - 1].time = 8;
	/* more than it can ever hold: the room it has, records kept */
	cap = b.cap;
	CHECK(popbuf_reserve(&b, POPBUF_MAX + 1) == cap && b.cap == cap);
	CHECK(b.recs[POPBUF_FIRST - 1].time == 7 && b.recs[cap - 1].time == 8);
	popbuf_release(&b);
	CHECK(!b.recs && b.cap == 0);
	popbuf_release(&b);
	return test_result();
}
