/*
 * symtab.h - a compact, sorted symbol table (start, size, name offset into
 * one string pool) built once from any source of symbols: ELF tables,
 * kallsyms, perf-PID.map.  The builder collects raw entries that point
 * into the caller's string buffer, then sorts them with a natural-run merge
 * sort, resolves aliases and fixes zero sizes, copying only kept names.
 */
#ifndef PIPE_SYMTAB_H
#define PIPE_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pipe_err;
struct symtab;
struct symtab_builder;

/*
 * Binding ranks for alias resolution (higher wins), in perf's order: a
 * weak symbol loses to any other, then global beats local.
 */
enum symtab_bind {
	SYMTAB_WEAK = 0,
	SYMTAB_LOCAL = 1,
	SYMTAB_GLOBAL = 2,
};

/* Most entries one table may hold (16 bytes each). */
#define SYMTAB_MAX_ENTRIES (UINT32_C(1) << 26)

/*
 * Start a builder over `strs` (borrowed, `len` bytes, names are offsets
 * into it and end at a NUL or at `len`).  `hint` preallocates entries.
 */
int symtab_builder_new(struct symtab_builder **out, const char *strs,
		       size_t len, size_t hint, struct pipe_err *err);
void symtab_builder_free(struct symtab_builder *b);
/*
 * The strings lie in `map` (from mmap, map_len bytes) and end with a NUL:
 * the builder takes the mapping and the table keeps it instead of copying
 * names, which are then touched only when shown (munmap'd at the end).
 */
void symtab_builder_adopt(struct symtab_builder *b, void *map,
			  size_t map_len);
/* Add one symbol; size 0 means "up to the next symbol".  Returns 0 or
 * -ENOMEM / -E2BIG (over SYMTAB_MAX_ENTRIES). */
int symtab_builder_add(struct symtab_builder *b, uint64_t start,
		       uint64_t size, uint32_t name, enum symtab_bind bind);
/* Sort, resolve aliases, fix ends and copy the kept names: *out is owned
 * by the caller (symtab_free).  The builder may be freed afterwards. */
int symtab_builder_finish(struct symtab_builder *b, struct symtab **out,
			  struct pipe_err *err);

void symtab_free(struct symtab *t); /* NULL is a no-op */

/* Bytes per entry of symtab_parts' array (native endian: u64 start,
 * u32 size, u32 name offset into the pool), sorted by start. */
#define SYMTAB_ENT_BYTES 16
/* The table's entries and name pool (borrowed), to save as an image. */
void symtab_parts(const struct symtab *t, const void **ents, uint32_t *nr,
		  const char **pool, size_t *pool_len);
/*
 * A table over saved parts lying in `map` (from mmap): nothing is
 * copied, and the table unmaps map at symtab_free.  The parts are
 * checked (starts strictly increasing, names inside a NUL-ended pool):
 * -EINVAL, and map stays the caller's, when they are not a table.
 */
int symtab_from_parts(void *map, size_t map_len, const void *ents,
		      uint32_t nr, const char *pool, size_t pool_len,
		      struct symtab **out);
uint32_t symtab_count(const struct symtab *t);
/*
 * The symbol holding `addr`: returns true and sets *idx, false if none.
 */
bool symtab_find(const struct symtab *t, uint64_t addr, uint32_t *idx);
uint64_t symtab_start(const struct symtab *t, uint32_t idx);
uint64_t symtab_size(const struct symtab *t, uint32_t idx);
/* Borrowed, lives as long as t. */
const char *symtab_name(const struct symtab *t, uint32_t idx);
/*
 * The name as shown: demangled (C++ and Rust, through libiberty) when
 * `demangle` and the name has a mangling prefix; computed once per symbol
 * and cached in t.  Borrowed, lives as long as t.
 */
const char *symtab_display_name(struct symtab *t, uint32_t idx,
				bool demangle);

#endif
