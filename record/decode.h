/*
 * decode.h - the one sample decoder: PERF_RECORD_SAMPLE bodies and the
 * sample_id_all trailers of other records, by the event's sample_type;
 * and the sideband records' bodies.
 */
#ifndef PIPE_DECODE_H
#define PIPE_DECODE_H

#include "pipe_plugin.h"

struct meta;

/* Decode a sample record.  Returns 0, -EINVAL for a record that is not a
 * sample or is malformed (short, callchain past the end).  Pointers in *out
 * borrow from rec. */
int decode_sample(const struct meta *m, const struct pipe_record *rec,
		  struct pipe_sample *out);
/* The user registers and stack dump of a sample (callchain=dwarf). */
struct decode_stack {
	uint64_t abi;          /* PERF_SAMPLE_REGS_ABI_*, 0: no registers */
	uint64_t regs_mask;    /* sample_regs_user: which registers, in order */
	const void *regs;      /* borrowed, nr_regs u64 values (unaligned) */
	uint32_t nr_regs;      /* registers present */
	uint32_t size_at;      /* offset in the record of the stack size */
	const uint8_t *stack;  /* borrowed dump, NULL: none */
	uint64_t size;         /* dump bytes in the record */
	uint64_t dyn_size;     /* of which the kernel copied this many */
};

/* decode_sample, plus the user registers and stack when recorded (*u
 * zeroed when not).  Pointers in *u borrow from rec. */
int decode_sample_stack(const struct meta *m, const struct pipe_record *rec,
			struct pipe_sample *s, struct decode_stack *u);
/* The ids of any record: sample fields for samples, the sample_id_all
 * trailer for the others.  -EINVAL if absent or malformed. */
int decode_sample_id(const struct meta *m, const struct pipe_record *rec,
		     struct pipe_sample_id *out);
/* A sideband record (COMM, MMAP, MMAP2, FORK, EXIT, LOST, LOST_SAMPLES,
 * THROTTLE, UNTHROTTLE) into *out; strings borrow from rec.  Returns 0,
 * -ENOENT for another type, -EINVAL for a malformed one (a string without
 * its NUL, a short body). */
int decode_sideband(const struct pipe_record *rec, struct pipe_sideband *out);
/* The time of a record, or 0 when it carries none. */
uint64_t decode_time(const struct meta *m, const struct perf_event_header *h);
/* Where a sample of event `event` holds its time: the byte offset from
 * the record header, or 0 when it holds none (no such event, no
 * PERF_SAMPLE_TIME).  A sample shorter than offset + 8 holds none. */
uint32_t decode_time_offset(const struct meta *m, uint32_t event);

#endif
