/*
 * test_grow.c - lib/grow.c: an array doubles from its first room until
 * it fits, stops at its maximum, refuses more than that, and keeps what
 * it held; a byte buffer appends the same way.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "harness.h"

int main(void)
{
	uint64_t *v = NULL;
	char *bytes = NULL;
	size_t cap = 0, i;

	CHECK(grow_array(&v, &cap, 0, sizeof(*v), 16, 100) == 0);
	CHECK(!v && cap == 0);
	CHECK(grow_array(&v, &cap, 1, sizeof(*v), 16, 100) == 0);
	CHECK(v && cap == 16);
	for (i = 0; i < 16; i++)
		v[i] = i;
	CHECK(grow_array(&v, &cap, 16, sizeof(*v), 16, 100) == 0 &&
	      cap == 16);
	CHECK(grow_array(&v, &cap, 40, sizeof(*v), 16, 100) == 0 &&
	      cap == 64);
	CHECK(v[15] == 15);
	v[63] = 63; /* all 64 are there (ASan checks) */
	/* doubling stops at the maximum, which still fits n */
	CHECK(grow_array(&v, &cap, 65, sizeof(*v), 16, 100) == 0 &&
	      cap == 100);
	v[99] = 99;
	CHECK(grow_array(&v, &cap, 101, sizeof(*v), 16, 100) == -E2BIG);
	CHECK(cap == 100 && v[15] == 15 && v[63] == 63);
	free(v);

	/* bytes, no maximum; an element count the size overflows */
	cap = 0;
	CHECK(grow_array(&bytes, &cap, 5000, 1, 4096, SIZE_MAX) == 0 &&
	      cap == 8192);
	CHECK(grow_array(&bytes, &cap, SIZE_MAX / 2, 4, 1, SIZE_MAX) ==
	      -ENOMEM);
	CHECK(cap == 8192 && bytes);
	free(bytes);

	/* a byte buffer: appends from empty, its first room, a maximum */
	{
		struct bytebuf b = { 0 };
		char big[5000];

		memset(big, 'x', sizeof(big));
		CHECK(bytebuf_put(&b, NULL, 0) == 0 && b.len == 0);
		CHECK(bytebuf_put(&b, "abc", 3) == 0 && b.len == 3 &&
		      b.cap == BYTEBUF_FIRST);
		CHECK(bytebuf_put(&b, big, sizeof(big)) == 0 &&
		      b.len == 5003 && b.cap == 2 * BYTEBUF_FIRST);
		CHECK(!memcmp(b.p, "abcx", 4) && b.p[5002] == 'x');
		free(b.p);
		b = (struct bytebuf){ .max = 6000 };
		CHECK(bytebuf_put(&b, big, 5000) == 0 && b.cap == 6000);
		CHECK(bytebuf_put(&b, big, 1000) == 0 && b.len == 6000);
		CHECK(bytebuf_put(&b, "y", 1) == -E2BIG && b.len == 6000);
		CHECK(bytebuf_reserve(&b, 0) == 0);
		free(b.p);
	}
	return test_result();
}
