/*
 * fuzz_transform.c - the column transform's decoder (untrusted: it runs
 * on every transformed block of a file).  The first 16 bytes choose two
 * events' sample_type and the raw length (at most 1 MiB); the rest is the
 * encoded block.  What decodes must be whole records, and must encode and
 * decode again to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "fuzz_events.h"
#include "meta.h"
#include "transform.h"

#define FUZZ_RAW_MAX (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_attr a = { 0 };
	uint64_t ids[2] = { 7, 8 }, st;
	struct transform *t = NULL;
	struct pipe_err err;
	struct meta *m;
	uint32_t raw_len;
	uint8_t *raw = NULL, *back = NULL;
	const void *enc;
	size_t enc_len;

	if (size < 16)
		return 0;
	memcpy(&st, data, 8);
	memcpy(&raw_len, data + 8, 4);
	raw_len %= FUZZ_RAW_MAX + 1;
	a.size = sizeof(a);
	a.sample_type = (st & ((PERF_SAMPLE_WEIGHT_STRUCT << 1) - 1)) |
			PERF_SAMPLE_TIME;
	a.sample_id_all = data[12] & 1;
	m = fuzz_events(&a, ids, data[12] & 2);
	if (!m)
		return 0;
	if (transform_new(&t, m, &err) < 0)
		goto out;
	raw = malloc(raw_len ? raw_len : 1);
	if (!raw)
		goto out;
	if (transform_decode(t, data + 16, size - 16, raw, raw_len, &err) < 0)
		goto out;
	if (transform_encode(t, raw, raw_len, &enc, &enc_len) == 0) {
		back = malloc(raw_len ? raw_len : 1);
		if (!back)
			goto out;
		if (transform_decode(t, enc, enc_len, back, raw_len, &err) < 0 ||
		    memcmp(raw, back, raw_len))
			abort(); /* the transform must round-trip */
	}
out:
	free(back);
	free(raw);
	transform_free(t);
	meta_free(m);
	return 0;
}
