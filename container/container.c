/*
 * container.c - the pieces of pipe file format version 1 that the writer
 * (cwriter.c) and the reader (creader.c) share: block header encoding,
 * parsing and checksums.  docs/format.md is the specification.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "format.h"
#include "xxh.h"

void fmt_copy_msg(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

uint64_t fmt_checksum(const void *buf, size_t len, uint64_t salt)
{
	return XXH3_64bits_withSeed(buf, len, salt);
}

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
bool fmt_checksum_ok(const void *buf, size_t len, uint64_t salt,
		     uint64_t want)
{
	(void)buf;
	(void)len;
	(void)salt;
	(void)want;
	return true;
}
#else
bool fmt_checksum_ok(const void *buf, size_t len, uint64_t salt,
		     uint64_t want)
{
	return fmt_checksum(buf, len, salt) == want;
}
#endif

void fmt_block_encode(const struct fmt_block *b, uint64_t salt, uint8_t *hdr)
{
	memset(hdr, 0, FMT_BLOCK_HDR_SIZE);
	fmt_put32(hdr + FMT_BH_MAGIC, FMT_BLOCK_MAGIC);
	fmt_put16(hdr + FMT_BH_HDR_SIZE, FMT_BLOCK_HDR_SIZE);
	hdr[FMT_BH_TYPE] = (uint8_t)b->type;
	hdr[FMT_BH_FLAGS] = (uint8_t)b->flags;
	fmt_put32(hdr + FMT_BH_CODEC, b->codec);
	fmt_put32(hdr + FMT_BH_TRANSFORM, b->transform);
	fmt_put32(hdr + FMT_BH_STREAM, b->stream);
	fmt_put32(hdr + FMT_BH_DICT, b->dict);
	fmt_put64(hdr + FMT_BH_SEQ, b->seq);
	fmt_put32(hdr + FMT_BH_STORED, b->stored);
	fmt_put32(hdr + FMT_BH_RAW, b->raw);
	fmt_put32(hdr + FMT_BH_RECORDS, b->records);
	fmt_put32(hdr + FMT_BH_SAMPLES, b->samples);
	fmt_put64(hdr + FMT_BH_TMIN, b->t_min);
	fmt_put64(hdr + FMT_BH_TMAX, b->t_max);
	fmt_put64(hdr + FMT_BH_HORIZON, b->horizon);
	fmt_put64(hdr + FMT_BH_PAYLOAD_SUM, b->payload_sum);
	fmt_put32(hdr + FMT_BH_CODED, b->coded);
	fmt_put64(hdr + FMT_BLOCK_HDR_SIZE - 8,
		  fmt_checksum(hdr, FMT_BLOCK_HDR_SIZE - 8, salt));
}

int fmt_block_decode(struct fmt_block *b, const uint8_t *hdr, size_t avail,
		     uint64_t salt)
{
	uint32_t size;

	if (avail < FMT_BLOCK_HDR_SIZE ||
	    fmt_get32(hdr + FMT_BH_MAGIC) != FMT_BLOCK_MAGIC)
		return -EBADMSG;
	size = fmt_get16(hdr + FMT_BH_HDR_SIZE);
	if (size < FMT_BLOCK_HDR_SIZE || size > FMT_BLOCK_HDR_MAX ||
	    size % 8 || size > avail)
		return -EBADMSG;
	if (!fmt_checksum_ok(hdr, size - 8, salt, fmt_get64(hdr + size - 8)))
		return -EBADMSG;
	b->hdr_size = size;
	b->type = hdr[FMT_BH_TYPE];
	b->flags = hdr[FMT_BH_FLAGS];
	b->codec = fmt_get32(hdr + FMT_BH_CODEC);
	b->transform = fmt_get32(hdr + FMT_BH_TRANSFORM);
	b->stream = fmt_get32(hdr + FMT_BH_STREAM);
	b->dict = fmt_get32(hdr + FMT_BH_DICT);
	b->seq = fmt_get64(hdr + FMT_BH_SEQ);
	b->stored = fmt_get32(hdr + FMT_BH_STORED);
	b->raw = fmt_get32(hdr + FMT_BH_RAW);
	b->records = fmt_get32(hdr + FMT_BH_RECORDS);
	b->samples = fmt_get32(hdr + FMT_BH_SAMPLES);
	b->t_min = fmt_get64(hdr + FMT_BH_TMIN);
	b->t_max = fmt_get64(hdr + FMT_BH_TMAX);
	b->horizon = fmt_get64(hdr + FMT_BH_HORIZON);
	b->payload_sum = fmt_get64(hdr + FMT_BH_PAYLOAD_SUM);
	b->coded = fmt_get32(hdr + FMT_BH_CODED);
	if (b->stored > CONTAINER_LEN_MAX || b->raw > CONTAINER_LEN_MAX ||
	    b->coded > CONTAINER_LEN_MAX)
		return -EBADMSG;
	return 0;
}
