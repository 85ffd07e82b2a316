/*
 * format.h - the byte layout of pipe file format version 1, shared by the
 * container writer (cwriter.c) and reader (creader.c).  docs/format.md is
 * the specification; this header only names its offsets and constants.
 */
#ifndef PIPE_FORMAT_H
#define PIPE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipe_plugin.h"

#define FMT_VERSION 1

/* File header: 64 bytes. */
#define FMT_MAGIC "\x89PIP\r\n\x1a\n" /* PNG-style: catches text mode */
#define FMT_MAGIC_LEN 8
#define FMT_FILE_HDR_SIZE 64
#define FMT_FH_VERSION 8     /* u16 */
#define FMT_FH_HDR_SIZE 10   /* u16 */
#define FMT_FH_CLOCK 12      /* u32 */
#define FMT_FH_INCOMPAT 16   /* u64 */
#define FMT_FH_COMPAT 24     /* u64 */
#define FMT_FH_FILE_ID 32    /* 16 bytes */
#define FMT_FH_CTIME 48      /* u64 */
#define FMT_FH_CHECKSUM 56   /* u64 */
#define FMT_CLOCK_PERF UINT32_C(0xffffffff)

/* Block header: 96 bytes in version 1 (header_size may grow). */
#define FMT_BLOCK_MAGIC UINT32_C(0x4b4c4250) /* "PBLK" */
#define FMT_BLOCK_HDR_SIZE 96
#define FMT_BLOCK_HDR_MAX 4096
#define FMT_TRAILER_SIZE 16
#define FMT_BH_MAGIC 0       /* u32 */
#define FMT_BH_HDR_SIZE 4    /* u16 */
#define FMT_BH_TYPE 6        /* u8 */
#define FMT_BH_FLAGS 7       /* u8 */
#define FMT_BH_CODEC 8       /* u32 */
#define FMT_BH_TRANSFORM 12  /* u32 */
#define FMT_BH_STREAM 16     /* u32 */
#define FMT_BH_DICT 20       /* u32 */
#define FMT_BH_SEQ 24        /* u64 */
#define FMT_BH_STORED 32     /* u32 */
#define FMT_BH_RAW 36        /* u32 */
#define FMT_BH_RECORDS 40    /* u32 */
#define FMT_BH_SAMPLES 44    /* u32 */
#define FMT_BH_TMIN 48       /* u64 */
#define FMT_BH_TMAX 56       /* u64 */
#define FMT_BH_HORIZON 64    /* u64 */
#define FMT_BH_PAYLOAD_SUM 72 /* u64 */
#define FMT_BH_CODED 80      /* u32: length the codec decodes to */
#define FMT_BH_RESERVED 84   /* u32, zero */
/* the header checksum is the last 8 bytes of the header */

enum fmt_block_type {
	FMT_META = 1,
	FMT_DATA = 2,
	FMT_DICT = 3,
	FMT_LOST = 4,
	FMT_INDEX = 5,
	FMT_END = 6,
	FMT_ANCILLARY = 0x80, /* bit: a reader may skip unknown ones */
};

/* Codec ids: the `codec_id` of codec plugins, defined with their ranges
 * in pipe_plugin.h. */
enum fmt_codec {
	FMT_CODEC_NONE = PIPE_CODEC_NONE,
	FMT_CODEC_ZLIB = PIPE_CODEC_ZLIB,
	FMT_CODEC_LZMA = PIPE_CODEC_LZMA,
	FMT_CODEC_ZSTD = PIPE_CODEC_ZSTD,
};

/* INDEX payload: 16-byte head, then 48-byte entries. */
#define FMT_INDEX_HEAD 16
#define FMT_INDEX_ENTRY 48
#define FMT_INDEX_MAX_ENTRIES 65536
/* END payload: readers accept 64 bytes and up; since throttle counts
 * were added the writer stores 72 */
#define FMT_END_SIZE 64
#define FMT_END_THROTTLES 64
#define FMT_END_SIZE_NOW 72

/* The parsed fixed fields of a block header. */
struct fmt_block {
	uint32_t hdr_size;     /* bytes of header, checksum included */
	uint32_t type;         /* enum fmt_block_type */
	uint32_t flags;        /* zero in version 1 */
	uint32_t codec;        /* enum fmt_codec */
	uint32_t transform;    /* enum transform_id */
	uint32_t stream;       /* CPU stream, or PIPE_STREAM_SIDEBAND */
	uint32_t dict;         /* dictionary id, 0: none */
	uint64_t seq;          /* block number in the file, from 0 */
	uint32_t stored;       /* payload bytes in the file */
	uint32_t raw;          /* record bytes after decoding */
	uint32_t coded;        /* bytes the codec decodes to */
	uint32_t records;      /* records in the block */
	uint32_t samples;      /* of which PERF_RECORD_SAMPLE */
	uint64_t t_min, t_max; /* record times, ns */
	uint64_t horizon;      /* every older record is in this or earlier */
	uint64_t payload_sum;  /* XXH3-64 of the stored payload, salted */
};

static inline void fmt_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void fmt_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void fmt_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t fmt_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t fmt_get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t fmt_get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline size_t fmt_pad8(size_t n)
{
	return (8 - (n & 7)) & 7;
}

/* Total bytes of a block with this header: header, payload, pad, trailer. */
static inline uint64_t fmt_block_len(const struct fmt_block *b)
{
	return (uint64_t)b->hdr_size + b->stored + fmt_pad8(b->stored) +
	       FMT_TRAILER_SIZE;
}

/* Serialize b into hdr (FMT_BLOCK_HDR_SIZE bytes), checksum included. */
void fmt_block_encode(const struct fmt_block *b, uint64_t salt, uint8_t *hdr);
/* Parse and check a header of `avail` bytes at hdr: 0, or -EBADMSG for a
 * bad magic, size, checksum or a length above CONTAINER_LEN_MAX. */
int fmt_block_decode(struct fmt_block *b, const uint8_t *hdr, size_t avail,
		     uint64_t salt);
uint64_t fmt_checksum(const void *buf, size_t len, uint64_t salt);
/* Whether len bytes at buf have checksum `want`.  Always true in a
 * fuzzing build (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION), so that
 * mutated files reach the parsers behind the checksums. */
bool fmt_checksum_ok(const void *buf, size_t len, uint64_t salt,
		     uint64_t want);
/* Copy a message into dst, cut to fit. */
void fmt_copy_msg(char *dst, size_t cap, const char *src);

#endif
