/*
 * llvm_syms.c - how long the symbolizer takes to load and sort one big
 * symbol table: elfsyms_read(ELFSYMS_ANY) on a library (libLLVM's ~45k
 * .dynsym functions), warm cache, no demangling; one warm-up run, then
 * the median of RUNS, in this thread's CPU time (a busy machine stretches
 * wall time, not the work).  Built and run by tests/bench/report.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "elfsyms.h"
#include "err.h"
#include "symtab.h"

#define RUNS 15

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	double ms[RUNS];
	uint32_t nr = 0;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: llvm_syms LIBRARY\n");
		return 2;
	}
	for (i = -1; i < RUNS; i++) {
		struct elfsyms_info info;
		struct symtab *t = NULL;
		struct pipe_err err;
		struct timespec a, b;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		if (elfsyms_read(argv[1], ELFSYMS_ANY, &info, &t, &err) < 0) {
			fprintf(stderr, "llvm_syms: %s\n", err.msg);
			return 1;
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		nr = symtab_count(t);
		symtab_free(t);
		if (i >= 0)
			ms[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 +
				(double)(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	qsort(ms, RUNS, sizeof(ms[0]), cmp_double);
	printf("%u %.3f %.3f %.3f\n", nr, ms[RUNS / 2], ms[0], ms[RUNS - 1]);
	return 0;
}
