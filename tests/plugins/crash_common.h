/*
 * crash_common.h - how the crash fixtures crash: each signal the host
 * reports, raised the way a buggy plugin would raise it (a wild write, a
 * read past the end of a mapped file, a trap, abort); SIGFPE is raised
 * directly, since sanitizers intercept a division by zero before it;
 * `stack` overflows the stack (a SIGSEGV only an alternate signal stack
 * can report).
 * struct crash_how is what their sig=, at= and after= ask for.
 */
#ifndef CRASH_COMMON_H
#define CRASH_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pipe_plugin.h"

#define CRASH_SIGNALS "segv|bus|fpe|ill|abrt|stack"

/* 0: no end (the compiler cannot tell, so it keeps the recursion) */
static volatile int crash_depth_max;

/* Recurse until the stack runs out: SIGSEGV on the guard page, whose
 * handler needs an alternate stack to run at all. */
static int crash_deep(volatile char *up, int depth)
{
	volatile char frame[4096];

	frame[0] = (char)depth;
	frame[1] = up ? up[0] : 0;
	if (crash_depth_max && depth >= crash_depth_max)
		return frame[1];
	return crash_deep(frame, depth + 1) + frame[0];
}

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
	case 5:
		crash_deep(NULL, 1);
		break;
	default:
		abort();
	}
}

/* What a crash plugin was asked: a plugin's state, or its first field. */
struct crash_how {
	int sig;        /* index in CRASH_SIGNALS */
	int at;         /* index in the plugin's choices of at= */
	uint64_t after; /* calls at `at` that return before the crash */
	uint64_t calls; /* calls at `at` so far */
};

/* sig= and at= into h; after= too when the plugin declares it. */
static void crash_how_read(struct crash_how *h, const struct pipe_host *host,
			   struct pipe_ctx *ctx, bool with_after)
{
	h->sig = (int)host->arg_int(ctx, "sig");
	h->at = (int)host->arg_int(ctx, "at");
	if (with_after)
		h->after = (uint64_t)host->arg_int(ctx, "after");
}

/* Crash if h asks for a crash in the call `at`, once `after` have passed. */
static void crash_at(struct crash_how *h, int at)
{
	if (h->at == at && ++h->calls > h->after)
		crash_now(h->sig);
}

#endif
