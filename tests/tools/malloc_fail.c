/*
 * malloc_fail.c - an LD_PRELOAD shim that makes one allocation fail, for
 * the out-of-memory tests: with MALLOC_FAIL_AT=N the Nth call of malloc,
 * calloc, realloc, posix_memalign or aligned_alloc in the process (its
 * threads and plugins included, counted from 1) returns NULL with errno
 * ENOMEM, and every other call succeeds.  With MALLOC_FAIL_COUNT=PATH
 * the number of calls made is written to PATH at exit; with
 * MALLOC_FAIL_TRACE=1 the failing call's stack goes to stderr.  With
 * MALLOC_FAIL_SIZE=N instead, every malloc of exactly N bytes fails (a
 * buffer of a size that only it has, as the crash handler's stacks).  The real
 * allocator is the next one (libc's, or a sanitizer's), found with
 * dlsym(RTLD_NEXT); the few allocations dlsym makes before that come
 * from a static arena.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);

static atomic_ulong calls;     /* allocation calls so far */
static atomic_ulong fail_at;   /* the call that fails, 0: none */
static atomic_int resolving;   /* inside dlsym: serve from the arena */
static int trace;              /* print the failing call's stack */
static size_t fail_size;       /* malloc of this size fails, 0: none */

static _Alignas(16) unsigned char arena[16384];
static atomic_size_t arena_used;

static void *arena_take(size_t n)
{
	size_t at = atomic_fetch_add(&arena_used, (n + 15) & ~(size_t)15);

	if (at + n > sizeof(arena))
		return NULL;
	return arena + at;
}

static int in_arena(const void *p)
{
	return (const unsigned char *)p >= arena &&
	       (const unsigned char *)p < arena + sizeof(arena);
}

static void resolve(void)
{
	if (real_malloc)
		return;
	atomic_store(&resolving, 1);
	/* POSIX's way to a function pointer from dlsym, under -Wpedantic */
	*(void **)&real_calloc = dlsym(RTLD_NEXT, "calloc");
	*(void **)&real_realloc = dlsym(RTLD_NEXT, "realloc");
	*(void **)&real_free = dlsym(RTLD_NEXT, "free");
	*(void **)&real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	*(void **)&real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	*(void **)&real_malloc = dlsym(RTLD_NEXT, "malloc");
	atomic_store(&resolving, 0);
}

/* The environment is there once libc has started, which may be after
 * the first allocations (a sanitizer's runtime starts before it). */
__attribute__((constructor)) static void settings_in(void)
{
	const char *at = getenv("MALLOC_FAIL_AT");

	fail_at = at ? strtoul(at, NULL, 10) : 0;
	at = getenv("MALLOC_FAIL_SIZE");
	fail_size = at ? strtoul(at, NULL, 10) : 0;
	at = getenv("MALLOC_FAIL_TRACE");
	trace = at && *at == '1';
}

/* Whether pthread_getattr_np is among the n frames. */
static int in_getattr(void *const *frames, int n)
{
	Dl_info di;
	int i;

	for (i = 0; i < n; i++)
		if (dladdr(frames[i], &di) && di.dli_sname &&
		    !strcmp(di.dli_sname, "pthread_getattr_np"))
			return 1;
	return 0;
}

/*
 * Whether this call is the one that fails.  A sanitizer's runtime stops
 * the process when pthread_getattr_np fails as a thread starts: not
 * pipe's to handle, so the next call fails instead.
 */
static int failing(void)
{
	void *frames[32];
	int n;

	if (atomic_fetch_add(&calls, 1) + 1 != atomic_load(&fail_at))
		return 0;
	n = backtrace(frames, 32);
	if (in_getattr(frames, n)) {
		atomic_fetch_add(&fail_at, 1);
		return 0;
	}
	if (trace)
		backtrace_symbols_fd(frames, n, 2);
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	if (atomic_load(&resolving))
		return arena_take(n);
	resolve();
	if (failing())
		return NULL;
	if (fail_size && n == fail_size) {
		errno = ENOMEM;
		return NULL;
	}
	return real_malloc(n);
}

void *calloc(size_t nr, size_t size)
{
	if (atomic_load(&resolving))
		return arena_take(nr * size); /* static: zeroed */
	resolve();
	if (failing())
		return NULL;
	return real_calloc(nr, size);
}

void *realloc(void *p, size_t n)
{
	void *q;

	resolve();
	if (in_arena(p)) {
		q = real_malloc(n);
		if (q)
			memcpy(q, p, n < 64 ? n : 64);
		return q;
	}
	if (failing())
		return NULL;
	return real_realloc(p, n);
}

void free(void *p)
{
	if (!p || in_arena(p))
		return;
	resolve();
	real_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	resolve();
	if (failing())
		return ENOMEM;
	return real_posix_memalign(out, align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	resolve();
	if (failing())
		return NULL;
	return real_aligned_alloc(align, n);
}

__attribute__((destructor)) static void count_out(void)
{
	const char *path = getenv("MALLOC_FAIL_COUNT");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%lu\n", atomic_load(&calls));
	fclose(f);
}
