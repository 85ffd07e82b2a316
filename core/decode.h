/*
 * decode.h - the one sample decoder: PERF_RECORD_SAMPLE bodies and the
 * sample_id_all trailers of other records, by the event's sample_type.
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
/* The ids of any record: sample fields for samples, the sample_id_all
 * trailer for the others.  -EINVAL if absent or malformed. */
int decode_sample_id(const struct meta *m, const struct pipe_record *rec,
		     struct pipe_sample_id *out);
/* The time of a record, or 0 when it carries none. */
uint64_t decode_time(const struct meta *m, const struct perf_event_header *h);

#endif
