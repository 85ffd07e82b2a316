/*
 * unwind.h - user stacks unwound at read time through libdw (elfutils):
 * one Dwfl per process, its modules reported from the process's maps as
 * frames reach them, so libdw keeps each binary's CFI (.eh_frame,
 * .debug_frame) parsed across samples; registers and stack memory come
 * from the sample's dump (callchain=dwarf recordings).
 */
#ifndef PIPE_UNWIND_H
#define PIPE_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

struct unwind;

/* The file mapped at an address of a process, as the caller knows it. */
struct unwind_map {
	uint64_t start;   /* first address of the map */
	uint64_t end;     /* one past its last address */
	uint64_t pgoff;   /* file offset of start */
	const char *path; /* file to read (borrowed for the call) */
};

/* Find the ELF file mapped at addr in process pid: true and *out set. */
typedef bool (*unwind_find_map_fn)(void *opaque, uint32_t pid,
				   uint64_t addr, struct unwind_map *out);

/* The user registers and stack of one sample (borrowed for the call). */
struct unwind_regs {
	uint64_t mask;        /* sample_regs_user */
	const void *regs;     /* the values of the mask's bits, in order */
	uint32_t nr_regs;
	const uint8_t *stack; /* dump from the stack pointer up */
	uint64_t stack_len;   /* bytes in it */
};

/* Most frames one unwind returns (perf's default --max-stack). */
#define UNWIND_MAX_FRAMES 127

/* *out is owned by the caller (unwind_free).  Returns 0 or -ENOMEM. */
int unwind_new(struct unwind **out, unwind_find_map_fn find_map,
	       void *opaque);
void unwind_free(struct unwind *u); /* NULL is a no-op */

/* Forget process pid (it exited or exec'ed): its maps are gone. */
void unwind_drop(struct unwind *u, uint32_t pid);

/*
 * Unwind thread tid of process pid from its registers and stack dump
 * (x86_64 register layout): frames[0] is the interrupted pc, the others
 * return addresses as found on the stack (a caller looks one byte back).
 * Returns the number of frames (0 when nothing could be unwound, not
 * even the pc).
 */
uint32_t unwind_stack(struct unwind *u, uint32_t pid, uint32_t tid,
		      const struct unwind_regs *r, uint64_t *frames,
		      uint32_t max);

#endif
