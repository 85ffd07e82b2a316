/*
 * dbgfetch.h - debug files fetched by build-id from debuginfod servers
 * (the DEBUGINFOD_URLS environment variable, as every elfutils tool reads
 * it) through libdebuginfod, with its cache, a time limit per file and
 * Ctrl-C honoured while a transfer runs.
 */
#ifndef PIPE_DBGFETCH_H
#define PIPE_DBGFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dbgfetch;

struct dbgfetch_opts {
	uint64_t timeout_ns;       /* one file's transfer, at most */
	const volatile bool *interrupted; /* the run was interrupted, or NULL */
	/* why a fetch failed or was cut: one line each */
	void (*warn)(void *opaque, const char *line);
	void *opaque;
};

/*
 * A client into *out, or NULL in *out (and 0) when nothing may be
 * fetched: DEBUGINFOD_URLS unset or empty, or pipe built without
 * libdebuginfod.  Returns 0 or -ENOMEM.  Free with dbgfetch_free.
 */
int dbgfetch_new(struct dbgfetch **out, const struct dbgfetch_opts *o);
void dbgfetch_free(struct dbgfetch *f);

/*
 * The debug file of build-id `id` (from the client's cache, else
 * downloaded into it): its path into path (cap bytes).  Returns 0, or a
 * negative errno: -ENOENT no server has it, -ETIMEDOUT the time limit
 * cut the transfer, -EINTR Ctrl-C did, -ECANCELED an earlier failure to
 * reach the servers stopped this run's fetches.  f may be NULL (-ENOENT).
 */
int dbgfetch_debuginfo(struct dbgfetch *f, const uint8_t *id, uint32_t len,
		       char *path, size_t cap);

/* Debug files fetched or found in the cache, for notes and tests. */
uint32_t dbgfetch_nr_found(const struct dbgfetch *f);

#endif
