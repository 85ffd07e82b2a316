/*
 * fuzz_codec.c - one codec plugin's decompress (FUZZ_CODEC names it; the
 * Makefile builds one harness per codec).  Bytes 0-3 give the raw length
 * (at most 128 KiB), byte 4 bit 0 asks for a dictionary of the length in
 * bytes 5-6 taken from the input (codecs that take them), the rest is the
 * payload.  The payload is also compressed and must decompress to itself.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_plugins.h"

/* raw bytes at most: past a few blocks the codecs run the same loops,
 * and a smaller cap keeps each input cheap */
#define FUZZ_RAW_MAX (128u << 10)

static struct loaded *codec_lp;
static struct inst *codec_in;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct pipe_plugin *p;
	uint32_t raw_len, dict_id = 0;
	size_t dict_len = 0, out_len, cap;
	uint8_t *raw, *packed;

	if (!codec_lp) {
		codec_lp = fuzz_codec_load(FUZZ_CODEC);
		codec_in = fuzz_codec_open(codec_lp);
		if (!codec_in)
			abort(); /* the plugin must be built */
	}
	if (size < 7)
		return 0;
	p = codec_in->p;
	memcpy(&raw_len, data, 4);
	raw_len %= FUZZ_RAW_MAX + 1;
	if ((data[4] & 1) && p->add_dict) {
		dict_len = (size_t)(data[5] | data[6] << 8);
		if (dict_len > size - 7)
			dict_len = size - 7;
		/* a fresh id each time: dictionaries are added, not kept */
		if (dict_len && p->add_dict(codec_in->state, 1, data + 7,
					    dict_len) == 0)
			dict_id = 1;
	}
	data += 7 + dict_len;
	size -= 7 + dict_len;
	raw = malloc(raw_len ? raw_len : 1);
	if (!raw)
		return 0;
	p->decompress(codec_in->state, dict_id, data, size, raw, raw_len);
	free(raw);
	/* the writer side on the same bytes: a round trip */
	if (size > FUZZ_RAW_MAX)
		return 0;
	cap = p->bound(codec_in->state, size);
	packed = malloc(cap ? cap : 1);
	raw = malloc(size ? size : 1);
	if (packed && raw &&
	    p->compress(codec_in->state, dict_id, data, size, packed, cap,
			&out_len) == 0) {
		if (p->decompress(codec_in->state, dict_id, packed, out_len,
				  raw, size) < 0 || memcmp(raw, data, size))
			abort(); /* what the codec wrote it must read */
	}
	free(packed);
	free(raw);
	return 0;
}
