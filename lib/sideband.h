/*
 * sideband.h - the one decoder of perf's sideband records: the process
 * state (MMAP, MMAP2, COMM, FORK, EXIT) and the records about sampling
 * itself (LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE) as fields, checked
 * against the record's size, for the core and every plugin that reads
 * them.
 */
#ifndef PIPE_SIDEBAND_H
#define PIPE_SIDEBAND_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#define SIDEBAND_BUILD_ID_MAX 20 /* bytes of an MMAP2 build-id */

/* One sideband record's fields; which are set depends on its type. */
struct sideband {
	uint32_t type;            /* PERF_RECORD_* */
	uint16_t misc;            /* the header's misc */
	uint32_t pid, tid;        /* MMAP*, COMM; FORK, EXIT: the child */
	uint32_t ppid, ptid;      /* FORK, EXIT: the parent */
	uint64_t start, len;      /* MMAP*: the mapped range */
	uint64_t pgoff;           /* MMAP*: file offset of start */
	const char *name;         /* MMAP*: file name; COMM: the comm;
				     borrowed from the record */
	const uint8_t *build_id;  /* MMAP2 that carries one, else NULL;
				     borrowed from the record */
	uint32_t build_id_len;    /* its bytes, 1 to SIDEBAND_BUILD_ID_MAX */
	bool exec;                /* COMM: the name comes from an exec */
	uint32_t prot;            /* MMAP2: PROT_* of the mapping; else 0 */
	uint64_t time;            /* FORK, EXIT, THROTTLE, UNTHROTTLE: the
				     time in the body (ns) */
	uint64_t id;              /* LOST, THROTTLE, UNTHROTTLE: the sample
				     id of the event */
	uint64_t lost;            /* LOST, LOST_SAMPLES: samples lost */
};

/*
 * Is `type` a record of process state, which a reader must apply in time
 * order before the samples after it (maps, names, tasks, namespaces,
 * kernel symbols, BPF programs, cgroups, text patches)?
 */
bool sideband_is_state(uint32_t type);

/*
 * Is `type` one of the records sideband_decode reads (MMAP, MMAP2, COMM,
 * FORK, EXIT): the state the symbolizer applies?
 */
bool sideband_is_task(uint32_t type);

/*
 * Decode the process-state record h (h->size bytes readable) into *out.
 * Returns 0; -ENOENT for a type other than MMAP, MMAP2, COMM, FORK,
 * EXIT; -EINVAL when h is too short for its type or a name has no NUL
 * inside the record (*out then partly filled).
 */
int sideband_decode(const struct perf_event_header *h, struct sideband *out);

/*
 * Decode a record about sampling itself into *out: LOST (lost, id),
 * LOST_SAMPLES (lost), THROTTLE and UNTHROTTLE (time, id).  Returns 0;
 * -ENOENT for another type; -EINVAL when h is too short for its type.
 */
int sideband_decode_loss(const struct perf_event_header *h,
			 struct sideband *out);

/*
 * The samples a LOST or LOST_SAMPLES record h says were lost, into *lost.
 * Returns 0, -EINVAL when h is too short, -ENOENT for another type.
 */
int sideband_lost(const struct perf_event_header *h, uint64_t *lost);

#endif
