/*
 * pdwrite.h - a writer of perf.data files that perf report, perf script
 * and hotspot's perfparser read, independent of pipe's plugin ABI: file
 * mode (header patched at the end, features after the data) or pipe mode
 * (for a pipe: everything as records), records optionally in zstd
 * PERF_RECORD_COMPRESSED or COMPRESSED2 records.
 */
#ifndef PIPE_PDWRITE_H
#define PIPE_PDWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata.h"

#define PDWRITE_BUILD_IDS_MAX (1u << 16) /* build-id entries kept */

struct pdwrite;

struct pdwrite_event {
	const struct perf_event_attr *attr; /* attr->size bytes */
	const char *name;
	const uint64_t *ids;
	uint32_t nr_ids;
};

/* What the header says about the recording; NULL strings are left out. */
struct pdwrite_info {
	const char *hostname, *release, *arch, *version, *cpudesc;
	const char *cmdline;       /* words joined by spaces */
	uint32_t nr_cpus_avail;    /* 0: not written */
	uint32_t nr_cpus_online;
	uint64_t kernel_text;      /* _text, for the kernel's map; 0: none */
};

enum pdwrite_comp {
	PDWRITE_COMP_NONE = 0,
	PDWRITE_COMP_V1 = 1,       /* PERF_RECORD_COMPRESSED (perf 5.2+) */
	PDWRITE_COMP_V2 = 2,       /* PERF_RECORD_COMPRESSED2, 8-aligned */
};

/*
 * Start a perf.data on fd (the caller's; `name` for messages).  A
 * seekable fd gets file mode, anything else pipe mode, unless
 * `pipe_mode` forces it.  `comp` and `level` (1-19) choose compressed
 * records.  The events are copied.  Returns 0, or negative errno with the
 * message in msg; *out is owned by the caller (pdwrite_free).
 */
int pdwrite_new(struct pdwrite **out, int fd, const char *name,
		bool pipe_mode, enum pdwrite_comp comp, int level,
		const struct pdwrite_event *events, uint32_t nr_events,
		const struct pdwrite_info *info, char *msg, size_t cap);
void pdwrite_free(struct pdwrite *w); /* NULL is a no-op */

/* Append one kernel record (copied).  Records should come in time order;
 * `time` (0: none) feeds the sample-time feature. */
int pdwrite_record(struct pdwrite *w, const struct perf_event_header *h,
		   uint64_t time);
/* A FINISHED_ROUND: every record so far may be processed. */
int pdwrite_round(struct pdwrite *w);
/* Add a build-id for a file (a kernel one when `kernel`); copies path. */
int pdwrite_build_id(struct pdwrite *w, const char *path, const uint8_t *id,
		     uint32_t len, bool kernel);
/* Flush, write the features (file mode: the header again, with the data
 * size and the feature bits; pipe mode: build-id records). */
int pdwrite_finish(struct pdwrite *w);
const char *pdwrite_error(const struct pdwrite *w);
/* Bytes written so far. */
uint64_t pdwrite_bytes(const struct pdwrite *w);

#endif
