/*
 * threads.h - process state rebuilt from the sideband: threads and their
 * command names, processes and their executable maps (a sorted array per
 * process: O(1) append at the tail, binary insertion otherwise; a new map
 * trims, splits or replaces the ones it overlaps, as mmap does).
 *
 * Exited threads stay resolvable for a while (samples may trail the EXIT
 * record) and are dropped after THREADS_MAX_DEAD later exits, so memory
 * stays bounded by the live tasks, not by every task ever seen.
 */
#ifndef PIPE_THREADS_H
#define PIPE_THREADS_H

#include <stdbool.h>
#include <stdint.h>

struct dso;
struct threads;

#define THREADS_MAX_DEAD 1024
#define THREADS_MAX_MAPS (1u << 20) /* per process */

struct threads_map {
	uint64_t start;  /* first address */
	uint64_t end;    /* one past the last address */
	uint64_t pgoff;  /* file offset of start */
	struct dso *dso; /* borrowed, owned by the symbolizer */
};

int threads_new(struct threads **out);
void threads_free(struct threads *t); /* NULL is a no-op */

/* COMM: name thread tid of process pid (copied); exec drops pid's maps. */
int threads_set_comm(struct threads *t, uint32_t pid, uint32_t tid,
		     const char *comm, bool exec);
/* FORK: tid of pid from ptid of ppid; a new process copies ppid's maps,
 * a new thread (pid == ppid) shares them.  The comm is inherited. */
int threads_fork(struct threads *t, uint32_t pid, uint32_t ppid,
		 uint32_t tid, uint32_t ptid);
/* EXIT of thread tid. */
void threads_exit(struct threads *t, uint32_t pid, uint32_t tid);
/* MMAP/MMAP2: map [start, start + len) at file offset pgoff into pid. */
int threads_add_map(struct threads *t, uint32_t pid, uint64_t start,
		    uint64_t len, uint64_t pgoff, struct dso *dso);
/* The map of pid holding ip, or NULL; borrowed until the next change. */
const struct threads_map *threads_find_map(struct threads *t, uint32_t pid,
					   uint64_t ip);
/* Maps of pid (borrowed until the next change); *nr set. */
const struct threads_map *threads_maps(struct threads *t, uint32_t pid,
				       uint32_t *nr);
/* The comm of tid, or NULL if unknown; borrowed for t's lifetime. */
const char *threads_comm(struct threads *t, uint32_t tid);

#endif
