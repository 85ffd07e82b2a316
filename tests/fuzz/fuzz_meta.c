/*
 * fuzz_meta.c - the META block payload: meta_decode, then everything a
 * reader asks of the result (view, properties, id map), then a re-encode
 * that must decode again.
 */
#include <stdlib.h>

#include "err.h"
#include "fuzz.h"
#include "meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct pipe_meta *v;
	struct meta *m = NULL, *again = NULL;
	struct pipe_err err;
	uint8_t *buf;
	size_t len;
	uint32_t i;

	if (meta_decode(&m, data, size, "fuzz.dat", &err) < 0)
		return 0;
	v = meta_view(m);
	if (v) {
		for (i = 0; i < v->nr_events; i++) {
			if (v->events[i].nr_ids)
				meta_event_of_id(m, v->events[i].ids[0]);
			(void)meta_attr(m, i)->sample_type;
		}
		for (i = 0; i < v->nr_props; i++)
			meta_prop(m, v->prop_keys[i]);
	}
	meta_event_of_id(m, 0);
	if (meta_encode(m, &buf, &len, &err) == 0) {
		if (meta_decode(&again, buf, len, "again", &err) < 0)
			abort(); /* what we encode we must read back */
		meta_free(again);
		free(buf);
	}
	meta_free(m);
	return 0;
}
