/*
 * test_strtab.c - lib/strtab.c: strings numbered in the order first seen
 * and found again past the index's first room, copies independent of the
 * caller's buffer, a table at its maximum refusing a new string but still
 * finding the old ones, and the caller's items growing beside it zeroed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "strtab.h"

#define N 3000

struct item {
	unsigned seen;
	unsigned pad;
};

int main(void)
{
	struct strtab t = { 0 };
	struct item *items = NULL;
	size_t cap = 0;
	char buf[32];
	uint32_t i;

	CHECK(strtab_find(&t, "a") == -1);
	for (i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "name-%u", i);
		CHECK(strtab_add(&t, buf) == i);
	}
	memset(buf, 'x', sizeof(buf) - 1); /* the copies are the table's */
	for (i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "name-%u", i);
		CHECK(strtab_find(&t, buf) == i);
		CHECK(strtab_add(&t, buf) == i);
		CHECK(strcmp(t.strs[i], buf) == 0 && t.strs[i] != buf);
	}
	CHECK(t.nr == N && strtab_find(&t, "name-") == -1);
	strtab_release(&t);
	CHECK(!t.strs && !t.nr && strtab_find(&t, "name-0") == -1);

	/* at the maximum: old strings found, a new one refused */
	t.max = 2;
	CHECK(strtab_add(&t, "") == 0 && strtab_add(&t, "b") == 1);
	CHECK(strtab_add(&t, "c") == -E2BIG && strtab_add(&t, "b") == 1);
	CHECK(t.nr == 2 && strtab_find(&t, "c") == -1);
	strtab_release(&t);

	/* items beside the strings: one per string, a new one zeroed */
	t.max = 0;
	for (i = 0; i < 200; i++) {
		snprintf(buf, sizeof(buf), "%u", i % 100);
		CHECK(strtab_add_item(&t, buf, &items, &cap,
				      sizeof(*items)) == i % 100);
		CHECK(cap >= t.nr);
		CHECK(items[i % 100].seen == i / 100);
		items[i % 100].seen++;
	}
	CHECK(t.nr == 100);
	strtab_release(&t);
	free(items);
	return test_result();
}
