/*
 * test_heap.c - lib/heap.h: items come out in order through pushes,
 * pops and re-sifts at any index, and `moved` always names each item's
 * index.
 */
#include <stdlib.h>

#include "harness.h"
#include "heap.h"

#define N 2000

struct item {
	uint64_t key;  /* what orders the heap */
	uint32_t id;   /* ties: the smaller id first */
	uint32_t pos;  /* index told by moved */
};

static bool item_before(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key;
	return a->id < b->id;
}

static void item_moved(void *it, uint32_t pos)
{
	((struct item *)it)->pos = pos;
}

static const struct heap_ops ops = {
	.before = item_before,
	.moved = item_moved,
};

/* Every item where moved said, and no child before its parent. */
static bool heap_ok(void **items, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++) {
		if (((struct item *)items[i])->pos != i)
			return false;
		if (i && item_before(items[i], items[(i - 1) / 2]))
			return false;
	}
	return true;
}

static void test_order(void)
{
	static struct item it[N];
	static void *items[N];
	struct item *prev = NULL;
	uint32_t len = 0, i, bad = 0;

	srand(7);
	for (i = 0; i < N; i++) {
		it[i].key = (uint64_t)(rand() % 500);
		it[i].id = i;
		heap_push(items, &len, &it[i], &ops);
	}
	CHECK(len == N && heap_ok(items, len));
	/* some items change their key and are sifted where they stand */
	for (i = 0; i < N; i += 7) {
		struct item *t = &it[i];
		uint64_t old = t->key;

		t->key = (uint64_t)(rand() % 500);
		if (t->key < old)
			heap_up(items, t->pos, &ops);
		else
			heap_down(items, len, t->pos, &ops);
	}
	CHECK(heap_ok(items, len));
	while (len) {
		struct item *top = items[0];

		if (prev && item_before(top, prev))
			bad++;
		prev = top;
		heap_pop(items, &len, &ops);
	}
	CHECK(bad == 0);
}

/* Without moved, and the last item popped. */
static void test_plain(void)
{
	static const struct heap_ops plain = { .before = item_before };
	struct item a = { 3, 0, 0 }, b = { 1, 1, 0 };
	void *items[2];
	uint32_t len = 0;

	heap_push(items, &len, &a, &plain);
	heap_push(items, &len, &b, &plain);
	CHECK(items[0] == &b);
	heap_pop(items, &len, &plain);
	CHECK(len == 1 && items[0] == &a);
	heap_pop(items, &len, &plain);
	CHECK(len == 0);
}

int main(void)
{
	test_order();
	test_plain();
	return test_result();
}
