/*
 * pprof.h - builds a pprof profile (pprof's profile.proto, gzipped)
 * independent of pipe's plugin ABI: interned strings, mappings,
 * functions and locations deduplicated, samples with the same stack and
 * labels summed.  Encoded with libprotobuf-c from formats/profile.proto.
 *
 * Memory grows with distinct stacks, locations and strings, never with
 * samples; each table is bounded (PPROF_*_MAX) and going past it is
 * -E2BIG.
 */
#ifndef PIPE_PPROF_H
#define PIPE_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PPROF_STRINGS_MAX (1u << 24)
#define PPROF_ITEMS_MAX (1u << 24)   /* mappings, functions, locations */
#define PPROF_SAMPLES_MAX (1u << 24) /* distinct stacks and labels */
#define PPROF_TYPES_MAX 512          /* sample value columns */
#define PPROF_DEPTH_MAX 1024         /* frames of one stack */
#define PPROF_LINES_MAX 32           /* inline levels of one location */

struct pprof;

/* A new profile with `nr_types` value columns, set with pprof_type. */
int pprof_new(struct pprof **out, uint32_t nr_types);
void pprof_free(struct pprof *p); /* NULL is a no-op */

/* Name column i (type and unit copied). */
int pprof_type(struct pprof *p, uint32_t i, const char *type,
	       const char *unit);
/* The string index of s (interned, copied); negative errno. */
int64_t pprof_string(struct pprof *p, const char *s);

/* The id of the mapping of file `filename` (one per file: the first call
 * sets its range and build-id hex, NULL for none); 0 on error. */
uint64_t pprof_mapping(struct pprof *p, const char *filename,
		       uint64_t start, uint64_t limit, uint64_t offset,
		       const char *build_id);
/* The id of function `name` defined in `filename` (NULL: none) from
 * `start_line` (0: unknown); 0 on error. */
uint64_t pprof_function(struct pprof *p, const char *name,
			const char *filename, int64_t start_line);

/* One level of a location: a function (0: none) and a line in it. */
struct pprof_line {
	uint64_t function; /* pprof_function id */
	int64_t line;      /* 0: unknown */
};

/*
 * The id of the location at `address` in mapping (0: none) with its
 * levels (at most PPROF_LINES_MAX, copied): the innermost function
 * first, then each function it was inlined into, as pprof's
 * Location.line; 0 on error.
 */
uint64_t pprof_location(struct pprof *p, uint64_t mapping, uint64_t address,
			const struct pprof_line *lines, uint32_t nr_lines);

struct pprof_labels {
	int64_t pid, tid;          /* < 0: left out */
	const char *comm;          /* NULL: left out */
};

/* Add `values` (nr_types of them) to the sample of this stack (location
 * ids, leaf first) and labels. */
int pprof_sample(struct pprof *p, const uint64_t *locs, uint32_t nr_locs,
		 const int64_t *values, const struct pprof_labels *labels);

/* Header fields: start time, duration (ns), the default column. */
void pprof_set_times(struct pprof *p, int64_t time_nanos,
		     int64_t duration_nanos);
void pprof_set_default(struct pprof *p, uint32_t type_index);
/* Pack, gzip (level 1-9) and write the profile to fd.  Returns 0 or
 * negative errno (-EIO: see errno of the write). */
int pprof_write(struct pprof *p, int fd, int level);

/* Counts, for notes and tests. */
uint64_t pprof_nr_samples(const struct pprof *p);
uint64_t pprof_nr_locations(const struct pprof *p);

#endif
