/*
 * test_popbuf.c - record/popbuf.h: the merges' batch array grows to what
 * a pop asks for, keeps its room for smaller pops, and is empty again
 * after popbuf_release.
 */
#include "harness.h"
#include "popbuf.h"

int main(void)
{
	struct popbuf b = { NULL, 0 };
	struct pipe_record *first;

	CHECK(popbuf_reserve(&b, 0) == 0);
	CHECK(popbuf_reserve(&b, 64) == 64 && b.cap == 64 && b.recs);
	b.recs[63].time = 7; /* all 64 are there (ASan checks) */
	first = b.recs;
	CHECK(popbuf_reserve(&b, 16) == 16 && b.cap == 64 &&
	      b.recs == first);
	CHECK(popbuf_reserve(&b, 1000) == 1000 && b.cap == 1000);
	CHECK(b.recs[63].time == 7);
	popbuf_release(&b);
	CHECK(!b.recs && b.cap == 0);
	popbuf_release(&b);
	return test_result();
}
