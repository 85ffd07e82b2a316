/*
 * srcline.h - source lines and inline frames of one binary's addresses,
 * read from its DWARF (the binary itself or its debug file) with libdw,
 * and cached per address.  The symbolizer keeps one per binary.
 */
#ifndef PIPE_SRCLINE_H
#define PIPE_SRCLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "pipe_plugin.h"

struct srcline;

/* Inline levels kept per address; deeper chains keep the innermost. */
#define SRCLINE_MAX_DEPTH 32
/* Addresses cached per binary; past it, lookups are not kept. */
#define SRCLINE_CACHE_MAX (UINT32_C(1) << 20)

/*
 * Open the DWARF of the ELF file `path` into *out (owned by the caller,
 * srcline_free).  Returns 0, -ENODATA when the file has no line
 * information (no .debug_info or .debug_line), or another negative errno
 * when it cannot be read.
 */
int srcline_new(struct srcline **out, const char *path);
void srcline_free(struct srcline *sl);

/*
 * The source position of `vaddr` (an address as the file's symbols and
 * DWARF give them), innermost level first; nr 0 when no unit covers it.
 * Function names are demangled when `demangle`.  Never NULL.  The struct
 * lives until the next call on sl, its strings as long as sl.
 */
const struct pipe_srcline *srcline_find(struct srcline *sl, uint64_t vaddr,
					bool demangle);

/* The answer for addresses without line information (nr 0). */
const struct pipe_srcline *srcline_none(void);

#endif
