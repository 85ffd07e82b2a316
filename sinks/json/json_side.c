/*
 * json_side.c - the sideband records of events=all (mmap, comm, fork,
 * exit and the others by name), written to their own temporary file in
 * format=perf and copied after the samples at the end.
 */
#include <errno.h>
#include <string.h>

#include "json.h"

/* ---- sideband ----------------------------------------------------------- */

/* A NUL-terminated name at `off` of the record, or NULL if it does not
 * fit.  The kernel pads names to 8 bytes; a missing NUL is damage. */
static const char *record_name(const struct perf_event_header *h, size_t off)
{
	const char *p = (const char *)h + off;

	if (h->size <= off || !memchr(p, '\0', h->size - off))
		return NULL;
	return p;
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

/* The start of a sideband object: where it goes, and its "type". */
static struct jout *side_begin(struct json *j, const char *type,
			       const struct pipe_record *r, int *depth)
{
	bool lines = j->format == JSON_FORMAT_LINES;
	struct jout *o = lines ? &j->out : &j->side;

	*depth = lines ? 0 : 2;
	if (!lines)
		delim(j, o, j->sideband > 0, *depth);
	jout_put(o, "{", 1);
	key(j, o, false, *depth + 1, "type");
	jout_str(o, type);
	key(j, o, true, *depth + 1, "timestamp");
	time_put(j, o, r->time);
	return o;
}

static void side_end(struct json *j, struct jout *o, int depth)
{
	delim(j, o, false, depth);
	jout_put(o, "}", 1);
	if (j->format == JSON_FORMAT_LINES)
		jout_put(o, "\n", 1);
	j->sideband++;
}

static void key_i32(struct json *j, struct jout *o, int depth,
		    const char *name, uint32_t v)
{
	key(j, o, true, depth, name);
	jout_i64(o, (int32_t)v);
}

static int mmap_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	size_t name_off = h->type == PERF_RECORD_MMAP2 ? 72 : 40;
	const char *name = record_name(h, name_off);
	struct jout *o;
	int depth;

	if (!name)
		return -EINVAL;
	o = side_begin(j, "mmap", r, &depth);
	key_i32(j, o, depth + 1, "pid", rd32(h, 8));
	key_i32(j, o, depth + 1, "tid", rd32(h, 12));
	key(j, o, true, depth + 1, "start");
	jout_hex(o, rd64(h, 16));
	key(j, o, true, depth + 1, "len");
	jout_hex(o, rd64(h, 24));
	key(j, o, true, depth + 1, "pgoff");
	jout_hex(o, rd64(h, 32));
	key(j, o, true, depth + 1, "filename");
	jout_str(o, name);
	side_end(j, o, depth);
	return 0;
}

static int comm_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	const char *name = record_name(h, 16);
	struct jout *o;
	int depth;

	if (!name)
		return -EINVAL;
	o = side_begin(j, "comm", r, &depth);
	key_i32(j, o, depth + 1, "pid", rd32(h, 8));
	key_i32(j, o, depth + 1, "tid", rd32(h, 12));
	key(j, o, true, depth + 1, "comm");
	jout_str(o, name);
	key(j, o, true, depth + 1, "exec");
	jout_lit(o, h->misc & PERF_RECORD_MISC_COMM_EXEC ? "true" : "false");
	side_end(j, o, depth);
	return 0;
}

static int task_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	struct jout *o;
	int depth;

	if (h->size < 24)
		return -EINVAL;
	o = side_begin(j, h->type == PERF_RECORD_FORK ? "fork" : "exit", r,
		       &depth);
	key_i32(j, o, depth + 1, "pid", rd32(h, 8));
	key_i32(j, o, depth + 1, "ppid", rd32(h, 12));
	key_i32(j, o, depth + 1, "tid", rd32(h, 16));
	key_i32(j, o, depth + 1, "ptid", rd32(h, 20));
	side_end(j, o, depth);
	return 0;
}

void other_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	int ret = 0;

	switch (h->type) {
	case PERF_RECORD_LOST:
		if (h->size >= 24)
			j->lost += rd64(h, 16);
		else
			j->bad++;
		return;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= 16)
			j->lost += rd64(h, 8);
		else
			j->bad++;
		return;
	case PERF_RECORD_THROTTLE:
		j->throttle++;
		return;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		break;
	default:
		return;
	}
	j->sym_gen++;
	if (j->events != JSON_EVENTS_ALL)
		return;
	if (h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2)
		ret = mmap_put(j, r);
	else if (h->type == PERF_RECORD_COMM)
		ret = comm_put(j, r);
	else
		ret = task_put(j, r);
	if (ret < 0)
		j->bad++;
}
