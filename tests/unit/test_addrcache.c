/*
 * test_addrcache.c - lib/addrcache.c: an answer found again under its
 * whole key and under no other (pid, address, mode), one slot holding
 * the last of two keys that share it, values of any size kept beside
 * their key, a new generation forgetting every slot (also when the
 * generation wraps), and sizes out of range refused.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "addrcache.h"
#include "harness.h"

#define BITS 6

struct big {
	char text[37]; /* an odd size: the next slot's key stays aligned */
};

/* Two keys of one slot: a pid beside pid 1's address 0x1000. */
static uint32_t collider(const struct addrcache *c)
{
	struct addrcache_key *k = addrcache_slot(c, 1, 0x1000, 0);
	uint32_t pid;

	for (pid = 2; addrcache_slot(c, pid, 0x1000, 0) != k; pid++)
		;
	return pid;
}

static void test_keys(void)
{
	struct addrcache c;
	struct addrcache_key *k;
	uint32_t *v, pid;

	CHECK(addrcache_init(&c, BITS, sizeof(uint32_t)) == 0);
	CHECK(c.stride % 8 == 0 && c.stride >= sizeof(*k) + sizeof(*v));
	CHECK(!addrcache_get(&c, 1, 0x1000, 0, &k));
	v = addrcache_put(&c, k, 1, 0x1000, 0);
	*v = 7;
	v = addrcache_get(&c, 1, 0x1000, 0, &k);
	CHECK(v && *v == 7);
	/* any other part of the key misses */
	CHECK(!addrcache_get(&c, 2, 0x1000, 0, &k));
	CHECK(!addrcache_get(&c, 1, 0x1001, 0, &k));
	CHECK(!addrcache_get(&c, 1, 0x1000, 1, &k));
	/* a key of the same slot takes it over */
	pid = collider(&c);
	CHECK(!addrcache_get(&c, pid, 0x1000, 0, &k));
	*(uint32_t *)addrcache_put(&c, k, pid, 0x1000, 0) = 8;
	CHECK(!addrcache_get(&c, 1, 0x1000, 0, &k));
	v = addrcache_get(&c, pid, 0x1000, 0, &k);
	CHECK(v && *v == 8);
	addrcache_free(&c);
	CHECK(!c.slots);
	addrcache_free(&c); /* twice: harmless */
}

static void test_values(void)
{
	struct addrcache c;
	struct addrcache_key *k;
	struct big *b;
	uint64_t a;
	unsigned hits = 0;

	CHECK(addrcache_init(&c, BITS, sizeof(struct big)) == 0);
	CHECK(c.stride % 8 == 0 &&
	      c.stride >= sizeof(*k) + sizeof(struct big));
	for (a = 0; a < 1000; a++) {
		b = addrcache_put(&c, (addrcache_get(&c, 3, a * 16, 2, &k), k),
				  3, a * 16, 2);
		CHECK((uintptr_t)b % 8 == 0);
		memset(b->text, (int)(a & 0x7f), sizeof(b->text));
	}
	/* each of the 64 slots holds one of the last keys put, whole */
	for (a = 0; a < 1000; a++) {
		b = addrcache_get(&c, 3, a * 16, 2, &k);
		if (!b)
			continue;
		hits++;
		CHECK(b->text[0] == (char)(a & 0x7f) &&
		      b->text[sizeof(b->text) - 1] == (char)(a & 0x7f));
	}
	CHECK(hits > 0 && hits <= 1u << BITS);
	addrcache_free(&c);
}

static void test_generations(void)
{
	struct addrcache c;
	struct addrcache_key *k;

	CHECK(addrcache_init(&c, BITS, 8) == 0);
	addrcache_put(&c, (addrcache_get(&c, 1, 0x10, 0, &k), k), 1, 0x10, 0);
	CHECK(addrcache_get(&c, 1, 0x10, 0, &k));
	addrcache_forget(&c);
	CHECK(!addrcache_get(&c, 1, 0x10, 0, &k));
	addrcache_put(&c, k, 1, 0x10, 0);
	CHECK(addrcache_get(&c, 1, 0x10, 0, &k));

	/* a slot of generation 1, then the generation wraps to 1 again */
	addrcache_free(&c);
	CHECK(addrcache_init(&c, BITS, 8) == 0);
	addrcache_put(&c, (addrcache_get(&c, 1, 0x10, 0, &k), k), 1, 0x10, 0);
	c.gen = UINT32_MAX;
	addrcache_forget(&c);
	CHECK(c.gen == 1);
	CHECK(!addrcache_get(&c, 1, 0x10, 0, &k));
	addrcache_free(&c);
}

static void test_sizes(void)
{
	struct addrcache c;

	CHECK(addrcache_init(&c, 0, 4) == -EINVAL && !c.slots);
	CHECK(addrcache_init(&c, ADDRCACHE_BITS_MAX + 1, 4) == -EINVAL);
	CHECK(addrcache_init(&c, 4, ADDRCACHE_VALUE_MAX + 1) == -EINVAL);
	addrcache_free(&c);
	CHECK(addrcache_init(&c, 1, 0) == 0 &&
	      c.stride == sizeof(struct addrcache_key));
	addrcache_forget(&c);
	addrcache_free(&c);
}

int main(void)
{
	test_keys();
	test_values();
	test_generations();
	test_sizes();
	return test_result();
}
