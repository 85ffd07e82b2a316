/*
 * symbolizer.h - process state from the sideband (threads, comms, maps)
 * and address -> binary -> symbol resolution (ELF via libelf, kallsyms,
 * perf-PID.map), offered to sinks through the host table.
 */
#ifndef PIPE_SYMBOLIZER_H
#define PIPE_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "pipe_plugin.h"

struct meta;
struct pipe_err;
struct symbolizer;

struct symbolizer_opts {
	bool demangle;               /* C++/Rust names demangled */
	const char *debug_dir;       /* extra debug-file root, or NULL */
	const char *kallsyms;        /* NULL: /proc/kallsyms */
	bool debuginfod;             /* fetch missing debug files by
					build-id (DEBUGINFOD_URLS) */
	uint64_t debuginfod_timeout_ns; /* one file's transfer, at most */
	const volatile bool *interrupted; /* the run was interrupted, or NULL */
	/* warnings (build-id mismatch, kernel differs): one line each */
	void (*warn)(void *opaque, const char *line);
	void *opaque;
};

/* meta (borrowed, outlives s) gives kernel_text / kernel_build_id props. */
int symbolizer_new(struct symbolizer **out, const struct symbolizer_opts *o,
		   const struct meta *meta, struct pipe_err *err);
void symbolizer_free(struct symbolizer *s);
/* Apply one sideband record (MMAP, MMAP2, COMM, FORK, EXIT); other types
 * are ignored.  Malformed records are ignored too (counted). */
void symbolizer_apply(struct symbolizer *s, const struct perf_event_header *h);
/* How many records symbolizer_apply ignored as malformed so far. */
uint64_t symbolizer_nr_malformed(const struct symbolizer *s);
/* Whether the names resolve_* hands out from now on are demangled. */
void symbolizer_set_demangle(struct symbolizer *s, bool on);
/* Resolve; strings in *out live as long as s. */
int symbolizer_resolve(struct symbolizer *s, uint32_t pid, uint64_t ip,
		       uint16_t misc, struct pipe_symbol *out);
/*
 * The source lines and inline frames of ip (see struct pipe_srcline),
 * from the DWARF of its binary or the binary's debug file; nr 0 when
 * unknown.  Never NULL; lives until the next call, its strings as long
 * as s.
 */
const struct pipe_srcline *symbolizer_srcline(struct symbolizer *s,
					      uint32_t pid, uint64_t ip,
					      uint16_t misc);
/* The answer for no source position (nr 0), for callers without s. */
const struct pipe_srcline *symbolizer_srcline_none(void);
/*
 * Decode a sample (as decode_sample) and, when it carries user registers
 * and a stack dump (callchain=dwarf), unwind them as of the state applied
 * so far: the call chain becomes the recorded kernel part, then
 * PERF_CONTEXT_USER and the unwound user frames, as perf joins them.
 * out->callchain then points into s and lives until the next call.
 */
int symbolizer_decode(struct symbolizer *s, const struct meta *m,
		      const struct pipe_record *rec, struct pipe_sample *out);
/* Never NULL ("[unknown]" when not known). */
const char *symbolizer_comm(struct symbolizer *s, uint32_t tid);

#endif
