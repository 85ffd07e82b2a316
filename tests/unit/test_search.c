/*
 * test_search.c - lib/search.h: the first element not below a key and
 * the first above it, over a struct array and a plain uint64_t array,
 * with runs of equal keys, keys outside the range and no elements.
 */
#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "search.h"

struct item {
	uint32_t pad;  /* the key is not at offset 0 */
	uint64_t key;
};

int main(void)
{
	static const struct item v[] = {
		{ 0, 10 }, { 0, 20 }, { 0, 20 }, { 0, 20 }, { 0, 30 },
	};
	static const uint64_t plain[] = { 1, 3, 5, 7 };
	const size_t n = sizeof(v) / sizeof(v[0]);
	const size_t off = offsetof(struct item, key);

	CHECK(search_u64(v, n, sizeof(v[0]), off, 20,
			 SEARCH_FIRST_NOT_BELOW) == 1);
	CHECK(search_u64(v, n, sizeof(v[0]), off, 20,
			 SEARCH_FIRST_ABOVE) == 4);
	CHECK(search_u64(v, n, sizeof(v[0]), off, 5,
			 SEARCH_FIRST_NOT_BELOW) == 0);
	CHECK(search_u64(v, n, sizeof(v[0]), off, 5,
			 SEARCH_FIRST_ABOVE) == 0);
	CHECK(search_u64(v, n, sizeof(v[0]), off, 30,
			 SEARCH_FIRST_ABOVE) == n);
	CHECK(search_u64(v, n, sizeof(v[0]), off, 31,
			 SEARCH_FIRST_NOT_BELOW) == n);
	CHECK(search_u64(v, n, sizeof(v[0]), off, 25,
			 SEARCH_FIRST_NOT_BELOW) == 4);
	CHECK(search_u64(v, 0, sizeof(v[0]), off, 25,
			 SEARCH_FIRST_NOT_BELOW) == 0);
	CHECK(search_u64(plain, 4, sizeof(plain[0]), 0, 6,
			 SEARCH_FIRST_NOT_BELOW) == 3);
	CHECK(search_u64(plain, 4, sizeof(plain[0]), 0, UINT64_MAX,
			 SEARCH_FIRST_ABOVE) == 4);
	return test_result();
}
