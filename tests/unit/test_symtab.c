/*
 * test_symtab.c - the compact symbol table: the natural-run merge sort
 * against qsort on random and run-structured input, alias resolution,
 * zero-size ends, lookups at the edges; and elfsyms on a system library.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "err.h"
#include "harness.h"
#include "rnd.h"
#include "symtab.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	return rnd_xorshift(&rng);
}

/* n symbols made of `runs` ascending runs, all starts distinct, size 1 */
static void check_sort(size_t n, size_t runs)
{
	static const char names[] = "\0f";
	struct symtab_builder *b = NULL;
	struct symtab *t = NULL;
	struct pipe_err err;
	uint64_t *want = malloc(n * sizeof(*want));
	uint64_t seed = rng;
	size_t i, bad = 0;

	CHECK(want != NULL);
	if (!want)
		return;
	CHECK(symtab_builder_new(&b, names, sizeof(names), 4, &err) == 0);
	for (i = 0; i < n; i++) {
		/* distinct, even, run-structured values */
		uint64_t v = runs ? ((i % runs) * n + i) * 2
				  : (next_rand() % (1ULL << 40)) * 2;

		want[i] = v;
	}
	qsort(want, n, sizeof(*want), cmp_u64);
	for (i = 0; i < n; i++) {
		uint64_t v = runs ? ((i % runs) * n + i) * 2
				  : 0;

		if (!runs)
			break;
		CHECK(symtab_builder_add(b, v, 1, 1, SYMTAB_GLOBAL) == 0);
	}
	if (!runs) {
		/* replay the same random sequence */
		rng = seed;
		for (i = 0; i < n; i++)
			CHECK(symtab_builder_add(
				      b, (next_rand() % (1ULL << 40)) * 2, 1, 1,
				      SYMTAB_GLOBAL) == 0);
	}
	CHECK(symtab_builder_finish(b, &t, &err) == 0);
	symtab_builder_free(b);
	{
		size_t u = 0;

		for (i = 0; i < n; i++)
			if (i == 0 || want[i] != want[i - 1])
				want[u++] = want[i];
		CHECK(symtab_count(t) == u);
		for (i = 0; i < u && i < symtab_count(t); i++)
			if (symtab_start(t, (uint32_t)i) != want[i])
				bad++;
		CHECK(bad == 0);
		if (bad)
			printf("n=%zu runs=%zu bad=%zu\n", n, runs, bad);
	}
	symtab_free(t);
	free(want);
}

static void test_aliases_and_ends(void)
{
	/* offsets: 1 "weak_a", 8 "global_b", 17 "_local", 24 "zero",
	 * 29 "last", 34 "__glob" */
	static const char s[] =
		"\0weak_a\0global_b\0_local\0zero\0last\0__glob";
	struct symtab_builder *b = NULL;
	struct symtab *t = NULL;
	struct pipe_err err;
	uint32_t idx;

	CHECK(symtab_builder_new(&b, s, sizeof(s), 1, &err) == 0);
	CHECK(symtab_builder_add(b, 0x2000, 0, 29, SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_add(b, 0x1000, 0x20, 1, SYMTAB_WEAK) == 0);
	CHECK(symtab_builder_add(b, 0x1000, 0x20, 8, SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_add(b, 0x1000, 0x20, 17, SYMTAB_LOCAL) == 0);
	CHECK(symtab_builder_add(b, 0x1100, 0, 24, SYMTAB_GLOBAL) == 0);
	/* same binding: fewer leading underscores wins */
	CHECK(symtab_builder_add(b, 0x1800, 8, 34, SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_add(b, 0x1800, 8, 8, SYMTAB_GLOBAL) == 0);
	/* as perf: local beats weak, whatever the underscores */
	CHECK(symtab_builder_add(b, 0x1900, 8, 1, SYMTAB_WEAK) == 0);
	CHECK(symtab_builder_add(b, 0x1900, 8, 17, SYMTAB_LOCAL) == 0);
	CHECK(symtab_builder_finish(b, &t, &err) == 0);
	symtab_builder_free(b);
	CHECK(symtab_count(t) == 5);
	CHECK(symtab_find(t, 0x1000, &idx));
	CHECK_STR(symtab_name(t, idx), "global_b");
	CHECK(symtab_find(t, 0x101f, &idx));
	CHECK(!symtab_find(t, 0x1020, &idx)); /* past its size */
	CHECK(!symtab_find(t, 0xfff, &idx));
	/* zero size: up to the next symbol */
	CHECK(symtab_find(t, 0x17ff, &idx));
	CHECK_STR(symtab_name(t, idx), "zero");
	CHECK(symtab_find(t, 0x1804, &idx));
	CHECK_STR(symtab_name(t, idx), "global_b");
	CHECK(symtab_find(t, 0x1904, &idx));
	CHECK_STR(symtab_name(t, idx), "_local");
	CHECK(symtab_find(t, 0x2010, &idx));
	CHECK_STR(symtab_name(t, idx), "last");
	symtab_free(t);
}

static void test_demangle(void)
{
	static const char s[] = "\0_ZN3foo3barEi\0plain\0_Znotvalid";
	struct symtab_builder *b = NULL;
	struct symtab *t = NULL;
	struct pipe_err err;

	CHECK(symtab_builder_new(&b, s, sizeof(s), 1, &err) == 0);
	CHECK(symtab_builder_add(b, 0x10, 4, 1, SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_add(b, 0x20, 4, 15, SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_add(b, 0x30, 4, 21, SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_finish(b, &t, &err) == 0);
	symtab_builder_free(b);
	CHECK_STR(symtab_display_name(t, 0, true), "foo::bar(int)");
	CHECK_STR(symtab_display_name(t, 0, true), "foo::bar(int)");
	CHECK_STR(symtab_display_name(t, 0, false), "_ZN3foo3barEi");
	CHECK_STR(symtab_display_name(t, 1, true), "plain");
	CHECK_STR(symtab_display_name(t, 2, true), "_Znotvalid");
	symtab_free(t);
}

/* Rust names (v0 and legacy) come out as c++filt prints them. */
static void test_rust(void)
{
	static const char s[] = "\0_RNvNtCs15kBYyAo9fc_7mycrate3foo3bar"
				"\0_ZN7mycrate3foo3bar17h0123456789abcdefE";
	const char *names[2] = { s + 1, s + 1 + strlen(s + 1) + 1 };
	struct symtab_builder *b = NULL;
	struct symtab *t = NULL;
	struct pipe_err err;
	uint32_t i;

	CHECK(symtab_builder_new(&b, s, sizeof(s), 1, &err) == 0);
	CHECK(symtab_builder_add(b, 0x10, 4, (uint32_t)(names[0] - s),
				 SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_add(b, 0x20, 4, (uint32_t)(names[1] - s),
				 SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_finish(b, &t, &err) == 0);
	symtab_builder_free(b);
	for (i = 0; i < 2; i++) {
		char cmd[256], want[256] = "";
		FILE *f;

		snprintf(cmd, sizeof(cmd), "c++filt '%s'", names[i]);
		f = popen(cmd, "r");
		if (f && fgets(want, sizeof(want), f))
			want[strcspn(want, "\n")] = '\0';
		if (f)
			pclose(f);
		CHECK(want[0] != '\0');
		CHECK_STR(symtab_display_name(t, i, true), want);
	}
	symtab_free(t);
}

static void test_system_library(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	struct elfsyms_info info;
	struct symtab *t = NULL;
	struct pipe_err err;
	uint32_t i, bad = 0;

	if (elfsyms_read(libc, ELFSYMS_DYNSYM, &info, &t, &err) < 0) {
		printf("note: %s\n", err.msg);
		return;
	}
	CHECK(t != NULL);
	CHECK(symtab_count(t) > 1000);
	CHECK(info.build_id_len == 20);
	CHECK(info.nr_loads >= 2);
	for (i = 1; i < symtab_count(t); i++)
		if (symtab_start(t, i) <= symtab_start(t, i - 1))
			bad++;
	CHECK(bad == 0);
	symtab_free(t);
	/* missing file: a message naming it */
	CHECK(elfsyms_read("/nonexistent/x.so", ELFSYMS_ANY, &info, &t,
			   &err) < 0);
	CHECK(strstr(err.msg, "'/nonexistent/x.so'") != NULL);
	/* not ELF */
	CHECK(elfsyms_read("/etc/hostname", ELFSYMS_ANY, &info, &t, &err) <
	      0 || access("/etc/hostname", R_OK) != 0);
}

int main(void)
{
	check_sort(1, 1);
	check_sort(1000, 1);
	check_sort(1000, 7);
	check_sort(4096, 1000);
	check_sort(10000, 0);
	check_sort(3, 0);
	test_aliases_and_ends();
	test_demangle();
	test_rust();
	test_system_library();
	return test_result();
}
