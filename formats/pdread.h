/*
 * pdread.h - a reader of perf's perf.data files (file mode and pipe mode),
 * independent of pipe's plugin ABI: attrs and ids, the feature sections,
 * perf's own records (pipe-mode headers, compressed records, rounds), and
 * the kernel records one at a time.
 *
 * Files are untrusted: every length is checked before use, memory is
 * bounded (PDREAD_*_MAX), a bad record ends the data with the offset
 * saved for the caller's message, never a crash.
 */
#ifndef PIPE_PDREAD_H
#define PIPE_PDREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata.h"

#define PDREAD_END 1          /* pdread_next: no more records */
#define PDREAD_ATTR_MAX 256   /* attr bytes kept (zero-padded) */
#define PDREAD_EVENTS_MAX 256 /* events in one file */
#define PDREAD_IDS_MAX (1u << 20)        /* sample ids, all events */
#define PDREAD_FEATURE_MAX (64u << 20)   /* bytes of one feature */
#define PDREAD_BUILD_IDS_MAX (1u << 16)  /* build-id entries kept */
#define PDREAD_INFLATE_MAX (64u << 20)   /* one compressed record's output */
#define PDREAD_ID_INDEX_MAX (1u << 20)   /* ID_INDEX entries kept */

struct pdread;

struct pdread_event {
	uint8_t attr[PDREAD_ATTR_MAX]; /* perf_event_attr, zero-padded */
	uint32_t attr_size;            /* bytes the file gave, >= 64 */
	char *name;                    /* owned; NULL until named */
	uint64_t *ids;                 /* owned, nr_ids sample ids */
	uint32_t nr_ids;
};

struct pdread_build_id {
	int32_t pid;                   /* -1: kernel or any */
	uint16_t misc;                 /* cpumode bits */
	uint8_t len;                   /* bytes of id used */
	uint8_t id[PD_BUILD_ID_MAX];  /* the build-id */
	char *path;                    /* owned */
};

/* What the file says about itself; strings are owned by the reader,
 * NULL when absent. */
struct pdread_info {
	bool pipe_mode;             /* perf record -o - */
	bool size_unknown;          /* file mode with data size 0: killed */
	uint64_t data_offset;       /* file mode: where records start */
	uint64_t data_size;         /* file mode: as the header says */
	uint64_t file_size;         /* file mode: bytes on disk */
	uint32_t nr_events;
	struct pdread_event *events;
	char *hostname, *release, *version, *arch, *cpudesc, *cpuid;
	char *cmdline;              /* the words joined by spaces */
	uint32_t nr_cpus_avail;     /* 0: unknown */
	uint32_t nr_cpus_online;
	uint64_t total_mem_kb;
	bool has_clockid;
	uint64_t clockid;
	bool has_clock_data;
	uint64_t clock_wall_ns;     /* wall time at clock_ref_ns */
	uint64_t clock_ref_ns;      /* perf clock at the same instant */
	uint32_t comp_type;         /* COMPRESSED feature: 1 zstd */
	uint32_t comp_level;
	uint32_t comp_mmap_len;
	uint64_t first_sample_ns, last_sample_ns; /* 0: unknown */
	uint32_t nr_build_ids;
	struct pdread_build_id *build_ids;
	uint64_t kernel_text;       /* from the kernel's MMAP, 0 unknown */
};

/* Counters of what reading met, for the caller's notes. */
struct pdread_stats {
	uint64_t records;           /* kernel records returned */
	uint64_t rounds;            /* FINISHED_ROUND records */
	uint64_t compressed;        /* compressed records inflated */
	uint64_t inflated_bytes;    /* bytes they gave */
	uint64_t skipped;           /* perf records not used (aux, stat) */
	uint64_t id_index;          /* ID_INDEX entries read */
	uint64_t id_index_ignored;  /* ID_INDEX records ignored: a bad size,
				       or after the first kernel record */
	uint64_t late_attrs;        /* attrs after the records began */
	bool torn;                  /* the data ended inside a record */
	bool bad;                   /* a record's size was impossible */
	uint64_t stop_offset;       /* torn/bad: offset of that record */
	uint64_t lost_bytes;        /* torn/bad: bytes not read after it */
};

/*
 * Read the header of `fd` (a regular file or a pipe; `name` is used in
 * messages): file mode reads attrs, ids and features now and leaves fd
 * positioned at the data; pipe mode reads the 16-byte header only (its
 * attrs and features come as records).  *out is owned by the caller, free
 * it with pdread_free; fd stays the caller's.  Returns 0, or negative
 * errno with the message (what failed, the file in quotes, the cause)
 * written to msg (cap bytes).
 */
int pdread_open(struct pdread **out, int fd, const char *name, char *msg,
		size_t cap);
void pdread_free(struct pdread *r); /* NULL is a no-op */

/*
 * The next record: a kernel record (type < 64) or a FINISHED_ROUND
 * (type 68, no payload).  perf's other records are absorbed into the info
 * (pipe-mode attrs, features, build ids, event names) or skipped; the
 * contents of compressed records are returned one record at a time.
 * *out is 8-aligned and borrowed until the next call.  Returns 0,
 * PDREAD_END (also after a torn or bad tail: see the stats), or
 * negative errno with pdread_error() set (I/O error, broken stream).
 */
int pdread_next(struct pdread *r, const struct perf_event_header **out);

/* Borrowed; valid until the next pdread_next or pdread_free. */
const struct pdread_info *pdread_info(const struct pdread *r);
const struct pdread_stats *pdread_stats(const struct pdread *r);
const char *pdread_error(const struct pdread *r);

/*
 * The event index of record h (kernel type): the sample id read where
 * the first event's sample_type puts it (IDENTIFIER, or ID in a sample
 * or the sample_id_all trailer), looked up in the ids.  The only event
 * when there is one; UINT32_MAX when unknown.
 */
uint32_t pdread_event_of(struct pdread *r,
			 const struct perf_event_header *h);

/*
 * Where the event of record h (kernel type) was opened, as perf's
 * PERF_RECORD_ID_INDEX records say (perf record writes one: each sample
 * id with the cpu and the thread of its event; perf takes a sample's cpu
 * from there when the sample has none): 0 with *cpu and *tid set (-1:
 * any cpu, any thread), or -ENOENT when the record carries no id or no
 * index entry names it.  A later entry for an id replaces an earlier
 * one; index records after the first kernel record are ignored.
 */
int pdread_where(struct pdread *r, const struct perf_event_header *h,
		 int32_t *cpu, int32_t *tid);

/* A name for an attr that the file leaves unnamed ("cpu-clock", ...),
 * written to buf. */
void pdread_attr_name(const struct perf_event_attr *a, char *buf,
		      size_t cap);

#endif
