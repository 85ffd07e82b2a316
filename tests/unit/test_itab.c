/*
 * test_itab.c - lib/itab.c: items found by key after the table grew past
 * its first room, colliding hashes probed in turn, a key never put not
 * found, a table at its maximum refusing more, and the string hash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "itab.h"

#define N 5000

static uint64_t keys[N];

/* every 4th key shares its hash with the one before it (keys differ
 * in bit 0 only), so probing must step over one to find the other */
static uint64_t key_hash(uint64_t k)
{
	return itab_mix(0, k & ~(uint64_t)1);
}

static uint64_t rehash(const void *items, uint32_t item)
{
	return key_hash(((const uint64_t *)items)[item]);
}

static bool eq(const void *items, uint32_t item, const void *key)
{
	return ((const uint64_t *)items)[item] == *(const uint64_t *)key;
}

int main(void)
{
	struct itab t = { 0 };
	uint64_t k = 7;
	uint32_t i, slot, item, seen;

	CHECK(itab_find(&t, key_hash(k), eq, keys, &k) == ITAB_NONE);
	for (i = 0; i < N; i++) {
		keys[i] = 1000 + 2 * (uint64_t)i - (i % 4 == 3);
		CHECK(itab_reserve(&t, 4, UINT32_MAX, rehash, keys) == 0);
		itab_put(&t, key_hash(keys[i]), i);
	}
	CHECK(t.nr == N && t.cap == 8192); /* at most 3/4 full */
	for (i = 0; i < N; i++)
		CHECK(itab_find(&t, key_hash(keys[i]), eq, keys, &keys[i]) ==
		      i);
	k = 999;
	CHECK(itab_find(&t, key_hash(k), eq, keys, &k) == ITAB_NONE);
	/* probing by hand visits both items of a shared hash */
	seen = 0;
	for (slot = itab_first(&t, key_hash(keys[3]));
	     (item = itab_next(&t, &slot)) != ITAB_NONE;)
		seen += item == 2 || item == 3;
	CHECK(seen == 2);
	itab_free(&t);
	CHECK(!t.slots && !t.cap && !t.nr);

	/* a maximum of 16 slots holds 12 items, and no 13th */
	for (i = 0; i < 12; i++) {
		CHECK(itab_reserve(&t, 1, 16, rehash, keys) == 0);
		itab_put(&t, key_hash(keys[i]), i);
	}
	CHECK(t.cap == 16);
	CHECK(itab_reserve(&t, 1, 16, rehash, keys) == -E2BIG);
	CHECK(t.cap == 16 && t.nr == 12);
	for (i = 0; i < 12; i++)
		CHECK(itab_find(&t, key_hash(keys[i]), eq, keys, &keys[i]) ==
		      i);
	itab_free(&t);

	/* FNV-1a, 64 bits */
	CHECK(itab_hash_str("") == 0xcbf29ce484222325ULL);
	CHECK(itab_hash_str("a") == 0xaf63dc4c8601ec8cULL);
	return test_result();
}
