/*
 * addrcache.h - the one cache of answers per address: a direct-mapped
 * table of 2^bits slots, each a key (pid, address, the caller's mode)
 * with a value of the caller's size beside it.  The sinks that symbolize
 * ask it before the host: the report's symbols and source lines, the
 * json sink's symbols, the pprof sink's locations.  A slot is valid for
 * one generation: a new one (after a process's maps changed) forgets
 * every slot at once.  Lookups are inline: they run for every frame of
 * every sample.
 */
#ifndef PIPE_ADDRCACHE_H
#define PIPE_ADDRCACHE_H

#include <stddef.h>
#include <stdint.h>

/* A slot's key; its value follows it (8-byte aligned). */
struct addrcache_key {
	uint64_t addr;
	uint32_t pid;
	uint32_t mode; /* the caller's: cpumode, looked up one byte back, ... */
	uint32_t gen;  /* valid while equal to the cache's; 0: never filled */
	uint32_t pad;
};

struct addrcache {
	unsigned char *slots; /* owned: 2^bits slots of stride bytes */
	size_t stride;        /* key and value, a multiple of 8 */
	uint32_t shift;       /* 64 - bits: a hash's top bits pick the slot */
	uint32_t gen;         /* the generation slots are valid for, >= 1 */
};

#define ADDRCACHE_BITS_MAX 24     /* 16M slots */
#define ADDRCACHE_VALUE_MAX 65536 /* bytes of one value */

/*
 * Room for 2^bits slots (1 <= bits <= ADDRCACHE_BITS_MAX), each with a
 * value of value_size bytes (at most ADDRCACHE_VALUE_MAX), all empty: 0,
 * -EINVAL for a size out of range, or -ENOMEM (c is then empty, and
 * addrcache_free harmless).
 */
int addrcache_init(struct addrcache *c, unsigned bits, size_t value_size);
void addrcache_free(struct addrcache *c);
/* A new generation: every slot is forgotten. */
void addrcache_forget(struct addrcache *c);

/* The slot (pid, addr, mode) lives in, or would. */
static inline struct addrcache_key *addrcache_slot(const struct addrcache *c,
						   uint32_t pid, uint64_t addr,
						   uint32_t mode)
{
	uint64_t h = (addr ^ ((uint64_t)pid << 32 | mode)) *
		     0x9e3779b97f4a7c15ULL;

	return (struct addrcache_key *)(c->slots +
					(size_t)(h >> c->shift) * c->stride);
}

/*
 * The value cached for (pid, addr, mode), or NULL; *slot is then where
 * addrcache_put stores the answer once the caller has it.
 */
static inline void *addrcache_get(const struct addrcache *c, uint32_t pid,
				  uint64_t addr, uint32_t mode,
				  struct addrcache_key **slot)
{
	struct addrcache_key *k = addrcache_slot(c, pid, addr, mode);

	*slot = k;
	if (k->gen == c->gen && k->addr == addr && k->pid == pid &&
	    k->mode == mode)
		return k + 1;
	return NULL;
}

/*
 * Give slot k (from addrcache_get) to (pid, addr, mode), replacing what
 * it held: its value, for the caller to fill.
 */
static inline void *addrcache_put(const struct addrcache *c,
				  struct addrcache_key *k, uint32_t pid,
				  uint64_t addr, uint32_t mode)
{
	k->addr = addr;
	k->pid = pid;
	k->mode = mode;
	k->gen = c->gen;
	return k + 1;
}

#endif
