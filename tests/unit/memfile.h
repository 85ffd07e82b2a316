/*
 * memfile.h - a growable memory file for tests and fuzzing harnesses: a
 * byte sink (mem_write, for the container writer) and a byte source
 * plugin (mem_source: seekable, mapped or not, or a stream that hands out
 * small pieces and notes reads that go backwards, as a pipe would refuse
 * them).
 */
#ifndef PIPE_TEST_MEMFILE_H
#define PIPE_TEST_MEMFILE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "pipe_plugin.h"

struct mem {
	uint8_t *p;
	size_t len, cap;
	bool stream;     /* source: not seekable */
	bool mapped;     /* source: `map` hands out p (seekable only) */
	uint64_t next;   /* source: the next offset a stream may read */
	bool bad_seek;   /* a stream was read backwards */
	int fail_write;  /* sink: fail the write after this many (0: never) */
	int writes;
};

static inline int mem_write(void *opaque, const void *buf, size_t len,
			    struct pipe_err *err)
{
	struct mem *m = opaque;

	m->writes++;
	if (m->fail_write && m->writes >= m->fail_write)
		return pipe_err_set(err, -ENOSPC, "cannot write 'mem': %s",
				    strerror(ENOSPC));
	if (m->len + len > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;

		while (cap < m->len + len)
			cap *= 2;
		m->p = realloc(m->p, cap);
		m->cap = cap;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

static int mem_read_at(void *state, uint64_t off, void *buf, size_t len,
		       size_t *got)
{
	struct mem *m = state;

	if (m->stream) {
		if (off != m->next)
			m->bad_seek = true;
	}
	*got = 0;
	if (off < m->len) {
		*got = m->len - off < len ? m->len - off : len;
		/* a stream hands out small pieces, as a pipe does */
		if (m->stream && *got > 1000)
			*got = 1000;
		memcpy(buf, m->p + off, *got);
	}
	m->next = off + *got;
	return 0;
}

static int mem_size(void *state, uint64_t *size)
{
	struct mem *m = state;

	if (m->stream)
		return -ESPIPE;
	*size = m->len;
	return 0;
}

static int mem_map(void *state, const void **base, uint64_t *len)
{
	struct mem *m = state;

	if (!m->mapped || m->stream || !m->len)
		return -ENOTSUP;
	*base = m->p;
	*len = m->len;
	return 0;
}

/* unused in the files that include this header only for struct mem */
__attribute__((unused)) static const struct pipe_plugin mem_source = {
	.abi = PIPE_ABI,
	.size = sizeof(struct pipe_plugin),
	.kind = PIPE_KIND_SOURCE,
	.flags = PIPE_PLUGIN_BYTES,
	.name = "mem",
	.read_at = mem_read_at,
	.byte_size = mem_size,
	.map = mem_map,
};

#endif
