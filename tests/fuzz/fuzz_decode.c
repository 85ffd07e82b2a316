/*
 * fuzz_decode.c - the sample decoder sinks rely on: the first 48 bytes
 * choose an event's sample_type, read_format, branch and register masks,
 * the rest is one record (its size field forced to the bytes given, as
 * the container reader guarantees).  Every pointer decode_sample hands
 * out is read in full, as a sink would.
 */
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "fuzz.h"
#include "fuzz_events.h"
#include "meta.h"

static volatile uint64_t sink;

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_attr a = { 0 };
	uint64_t ids[2] = { 1, 2 };
	struct pipe_sample_id sid;
	struct pipe_record rec;
	struct pipe_sample s;
	struct perf_event_header *h;
	struct meta *m;
	size_t len, i;
	uint8_t *copy;

	if (size < 48 + 8)
		return 0;
	a.size = sizeof(a);
	a.sample_type = get64(data) & ((PERF_SAMPLE_WEIGHT_STRUCT << 1) - 1);
	a.read_format = get64(data + 8) & 0x1f;
	a.branch_sample_type = get64(data + 16);
	a.sample_regs_user = get64(data + 24);
	a.sample_regs_intr = get64(data + 32);
	a.sample_id_all = data[40] & 1;
	m = fuzz_events(&a, ids, data[40] & 2);
	if (!m)
		return 0;
	len = (size - 48) & ~(size_t)7;
	if (len > 0xfff8)
		len = 0xfff8;
	copy = malloc(len);
	if (!copy)
		goto out;
	memcpy(copy, data + 48, len);
	h = (struct perf_event_header *)copy;
	h->size = (uint16_t)len;
	rec.hdr = h;
	rec.time = 0;
	rec.stream = 0;
	rec.event = PIPE_EVENT_NONE;
	if (decode_sample(m, &rec, &s) == 0) {
		for (i = 0; i < s.nr_callchain; i++)
			sink += s.callchain[i];
		for (i = 0; i < s.raw_size; i++)
			sink += ((const uint8_t *)s.raw)[i];
	}
	decode_sample_id(m, &rec, &sid);
	sink += decode_time(m, h);
	free(copy);
out:
	meta_free(m);
	return 0;
}
