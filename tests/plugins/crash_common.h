/*
 * crash_common.h - how the crash fixtures crash: each signal the host
 * reports, raised the way a buggy plugin would raise it (a wild write, a
 * read past the end of a mapped file, a trap, abort); SIGFPE is raised
 * directly, since sanitizers intercept a division by zero before it.
 */
#ifndef CRASH_COMMON_H
#define CRASH_COMMON_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CRASH_SIGNALS "segv|bus|fpe|ill|abrt"

static void crash_now(int how)
{
	/* not NULL itself, which UBSan reports before the fault */
	volatile int *volatile bad = (volatile int *)(uintptr_t)16;
	volatile char *page;
	FILE *f;

	switch (how) {
	case 0:
		*bad = 1;
		break;
	case 1:
		/* a mapping past the end of an empty file */
		f = tmpfile();
		page = f ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0)
			 : MAP_FAILED;
		if (page != MAP_FAILED)
			(void)page[0];
		raise(SIGBUS);
		break;
	case 2:
		raise(SIGFPE);
		break;
	case 3:
		__builtin_trap();
	default:
		abort();
	}
}

#endif
