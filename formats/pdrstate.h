/*
 * pdrstate.h - the perf.data reader's state, shared by its two files:
 * pdread.c (the forward reader, opening, the records and the zstd stream
 * of compressed ones) and pdmeta.c (header strings, features, events and
 * the id to event lookup).  Only those two include it.
 */
#ifndef PIPE_PDRSTATE_H
#define PIPE_PDRSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include "pdread.h"

#define IN_CAP (1u << 20)     /* forward buffer; > 2 records of 64 KiB */
#define REC_MAX 65535u        /* header.size is a u16 */

struct pdread {
	int fd;                   /* borrowed */
	char *name;               /* owned, for messages */
	char msg[512];            /* the last error */
	struct pdread_info info;
	size_t cap_build_ids;     /* allocated info.build_ids */
	size_t cap_events;        /* allocated info.events */
	struct pdread_stats st;
	bool started;             /* a kernel record was returned */
	/* the forward reader */
	uint8_t *buf;             /* IN_CAP bytes */
	size_t pos, len;          /* unread bytes are buf[pos, len) */
	uint64_t off;             /* file offset of buf[0] */
	uint64_t end;             /* offset where the data ends */
	bool eof;                 /* read() returned 0 */
	/* compressed records */
	ZSTD_DStream *zd;         /* one stream for the whole file */
	uint8_t *dbuf;            /* inflated bytes */
	size_t dcap, dpos, dlen;  /* unread are dbuf[dpos, dlen) */
	uint64_t dstart;          /* offset of the compressed record */
	/* a record copied to be 8-aligned */
	uint64_t *align;          /* REC_MAX + 1 bytes */
	/* ids sorted for lookup */
	uint64_t *id_keys;        /* sorted ids */
	uint32_t *id_events;      /* their events */
	uint32_t nr_sorted;
	bool ids_dirty;           /* events changed since the sort */
	bool ids_failed;          /* the sort found no memory: the next
				   * pdread_next fails, saying so */
	int id_pos;               /* sample: u64 index of the id, -1 none */
	int id_back;              /* others: u64s from the end, 0 none */
	/* ID_INDEX entries, sorted by id when ix_dirty is false */
	struct ix_entry *ix;      /* owned, cap_ix slots */
	uint32_t nr_ix, cap_ix;
	bool ix_dirty;            /* entries added since the sort */
};

/* One PERF_RECORD_ID_INDEX entry: where an id's event was opened. */
struct ix_entry {
	uint64_t id;              /* sample id */
	uint64_t seq;             /* order read: the last entry of an id wins */
	int32_t cpu;              /* -1: any */
	int32_t tid;              /* -1: any */
};

/* pdread.c */
/* Keep the message for pdread_error(); returns err. */
int fail(struct pdread *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Little-endian fields at any alignment (perf.data is read native). */
static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* pdmeta.c */
/* One build-id record of the BUILD_ID feature (size bytes at p) kept in
 * info.build_ids; skipped when malformed or out of memory. */
void pdr_add_build_id(struct pdread *r, const uint8_t *p, size_t size);

/* Event e is called `name` (a copy) unless name is empty. */
void pdr_name_event(struct pdread *r, uint32_t e, const char *name);

/* The event holding sample id `id`, UINT32_MAX if none (a linear scan:
 * used while reading metadata only). */
uint32_t pdr_event_by_id_scan(const struct pdread *r, uint64_t id);

/* The feature section `feat` (len bytes at p) into info; a malformed
 * one is skipped. */
void pdr_parse_feature(struct pdread *r, uint32_t feat, const uint8_t *p,
		       size_t len);

/*
 * One more event: its attr (avail bytes at attr, attr.size read from it)
 * and its nr_ids sample ids; 0 or a negative errno with the message set.
 */
int pdr_add_event(struct pdread *r, const uint8_t *attr, size_t avail,
		  const uint64_t *ids_le, uint64_t nr_ids);

#endif
