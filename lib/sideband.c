/*
 * sideband.c - the one decoder of perf's sideband records (sideband.h).
 * The layouts are perf_event.h's, without the sample_id_all trailer.
 */
#include <errno.h>
#include <string.h>

#include "sideband.h"

#define MMAP_MIN 48   /* header, pid, tid, addr, len, pgoff, 8-byte name */
#define MMAP2_MIN 80  /* ... maj, min, ino, ino_generation, prot, flags */
#define TASK_MIN 32   /* header, pid, ppid, tid, ptid, time */

bool sideband_is_state(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_NAMESPACES:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
	case PERF_RECORD_CGROUP:
	case PERF_RECORD_TEXT_POKE:
		return true;
	default:
		return false;
	}
}

bool sideband_is_task(uint32_t type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
	       type == PERF_RECORD_COMM || type == PERF_RECORD_FORK ||
	       type == PERF_RECORD_EXIT;
}

static uint32_t rd32(const struct perf_event_header *h, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)h + off, sizeof(v));
	return v;
}

static uint64_t rd64(const struct perf_event_header *h, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)h + off, sizeof(v));
	return v;
}

/* The NUL-ended name at `off`, or NULL when the record holds no NUL
 * after it: the kernel pads names to 8 bytes, a missing NUL is damage. */
static const char *rec_name(const struct perf_event_header *h, size_t off)
{
	const char *p = (const char *)h + off;

	if (h->size <= off || !memchr(p, '\0', h->size - off))
		return NULL;
	return p;
}

static int decode_mmap(const struct perf_event_header *h, bool v2,
		       struct sideband *out)
{
	const uint8_t *rec = (const uint8_t *)h;

	if (h->size < (v2 ? MMAP2_MIN : MMAP_MIN))
		return -EINVAL;
	out->pid = rd32(h, 8);
	out->tid = rd32(h, 12);
	out->start = rd64(h, 16);
	out->len = rd64(h, 24);
	out->pgoff = rd64(h, 32);
	if (v2)
		out->prot = rd32(h, 64);
	/* kernels have set the build-id bit over maj/min/ino: a length out
	 * of range means no build-id (docs/report.md) */
	if (v2 && (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && rec[40] &&
	    rec[40] <= SIDEBAND_BUILD_ID_MAX) {
		out->build_id_len = rec[40];
		out->build_id = rec + 44;
	}
	out->name = rec_name(h, v2 ? 72 : 40);
	return out->name ? 0 : -EINVAL;
}

int sideband_decode(const struct perf_event_header *h, struct sideband *out)
{
	memset(out, 0, sizeof(*out));
	out->type = h->type;
	out->misc = h->misc;
	if (!sideband_is_task(h->type))
		return -ENOENT;
	if (h->size < sizeof(*h))
		return -EINVAL;
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return decode_mmap(h, h->type == PERF_RECORD_MMAP2, out);
	case PERF_RECORD_COMM:
		out->name = rec_name(h, 16);
		if (!out->name)
			return -EINVAL;
		out->pid = rd32(h, 8);
		out->tid = rd32(h, 12);
		out->exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
		return 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (h->size < TASK_MIN)
			return -EINVAL;
		out->pid = rd32(h, 8);
		out->ppid = rd32(h, 12);
		out->tid = rd32(h, 16);
		out->ptid = rd32(h, 20);
		out->time = rd64(h, 24);
		return 0;
	default:
		return -ENOENT;
	}
}

int sideband_decode_loss(const struct perf_event_header *h,
			 struct sideband *out)
{
	memset(out, 0, sizeof(*out));
	out->type = h->type;
	out->misc = h->misc;
	switch (h->type) {
	case PERF_RECORD_LOST:   /* header, id, lost */
		if (h->size < 24)
			return -EINVAL;
		out->id = rd64(h, 8);
		out->lost = rd64(h, 16);
		return 0;
	case PERF_RECORD_LOST_SAMPLES: /* header, lost */
		if (h->size < 16)
			return -EINVAL;
		out->lost = rd64(h, 8);
		return 0;
	case PERF_RECORD_THROTTLE:   /* header, time, id, stream_id */
	case PERF_RECORD_UNTHROTTLE:
		if (h->size < 24)
			return -EINVAL;
		out->time = rd64(h, 8);
		out->id = rd64(h, 16);
		return 0;
	default:
		return -ENOENT;
	}
}

int sideband_lost(const struct perf_event_header *h, uint64_t *lost)
{
	struct sideband sb;
	int ret;

	if (h->type != PERF_RECORD_LOST && h->type != PERF_RECORD_LOST_SAMPLES)
		return -ENOENT;
	ret = sideband_decode_loss(h, &sb);
	if (ret == 0)
		*lost = sb.lost;
	return ret;
}
