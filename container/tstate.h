/*
 * tstate.h - what the column transform's encoder (transform.c) and
 * decoder (transform_dec.c) share: the columns, the limits, the previous
 * sample's values and the word helpers.  No other file includes it.
 */
#ifndef PIPE_TSTATE_H
#define PIPE_TSTATE_H

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "meta.h"
#include "transform.h"

#define TRANSFORM_VERSION 1
/* The format's limit on any stored or raw length (docs/format.md). */
#define TRANSFORM_LEN_MAX (64u << 20)
/* Largest head: version, record count, a length per column (varints). */
#define TRANSFORM_HEAD_MAX (1 + 10 * (COL_COUNT + 1))
/* Largest callchain a record can hold: its size is a u16. */
#define TRANSFORM_CHAIN_MAX (0xffffu / 8)

/* The sample_type bits whose fields are columns. */
#define TRANSFORM_SAMPLE_BITS                                             \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |      \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |           \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |   \
	 PERF_SAMPLE_CALLCHAIN)

/* Columns, in their order in the encoded block. */
enum transform_col {
	COL_KIND,   /* varint per record: 0 copied whole, else event + 1 */
	COL_MISC,   /* varint per sample: header misc << 1 | ip dropped */
	COL_ID,     /* varint zigzag deltas: IDENTIFIER, ID, STREAM_ID */
	COL_TID,    /* varint zigzag: pid delta, then tid - pid */
	COL_TIME,   /* varint zigzag time delta */
	COL_CPU,    /* varint zigzag cpu delta, then varint reserved */
	COL_PERIOD, /* varint zigzag period delta */
	COL_IP,     /* u64 LE, when not dropped */
	COL_ADDR,   /* u64 LE */
	COL_NR,     /* varint callchain length */
	COL_CHAIN,  /* u64 LE callchain entries */
	COL_OTHER,  /* whole records that are not column-coded */
	COL_COUNT
};

/* The previous split sample's values: deltas restart at each block. */
struct tprev {
	uint64_t identifier; /* PERF_SAMPLE_IDENTIFIER */
	uint64_t id;         /* PERF_SAMPLE_ID */
	uint64_t stream_id;  /* PERF_SAMPLE_STREAM_ID */
	uint64_t pid;        /* u32 in records; wider only when corrupt */
	uint64_t time;       /* ns */
	uint64_t cpu;        /* u32 in records; wider only when corrupt */
	uint64_t period;     /* events or ns per sample */
};

struct transform {
	const struct meta *meta;     /* borrowed */
	struct tenc *enc;            /* owned, made at the first encode */
};

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* Little-endian words, unaligned: one load or store each (a byte loop
 * here cost a tenth of the encoder). */
static inline uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static inline uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static inline void put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

/* Bytes of the fixed fields before the callchain. */
static inline size_t sample_fixed_size(uint64_t st)
{
	size_t n = 0;

	n += st & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	n += st & PERF_SAMPLE_IP ? 8 : 0;
	n += st & PERF_SAMPLE_TID ? 8 : 0;
	n += st & PERF_SAMPLE_TIME ? 8 : 0;
	n += st & PERF_SAMPLE_ADDR ? 8 : 0;
	n += st & PERF_SAMPLE_ID ? 8 : 0;
	n += st & PERF_SAMPLE_STREAM_ID ? 8 : 0;
	n += st & PERF_SAMPLE_CPU ? 8 : 0;
	n += st & PERF_SAMPLE_PERIOD ? 8 : 0;
	return n;
}

/* Index of the callchain entry the ip may repeat: the first one after
 * a leading context marker (PERF_CONTEXT_USER/KERNEL/...). */
static inline uint64_t chain_ip_index(const uint8_t *chain, uint64_t nr)
{
	return nr && get_u64(chain) >= PERF_CONTEXT_MAX ? 1 : 0;
}

#endif
