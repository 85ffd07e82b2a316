/*
 * json_side.c - the sideband records of events=all (mmap, comm, fork,
 * exit and the others by name), written to their own temporary file in
 * format=perf and copied after the samples at the end.
 */
#include <errno.h>
#include <string.h>

#include "json.h"
#include "sideband.h"

/* ---- sideband ----------------------------------------------------------- */

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

static void key_hex(struct json *j, struct jout *o, int depth,
		    const char *name, uint64_t v)
{
	key(j, o, true, depth, name);
	jout_hex(o, v);
}

/* The start of an mmap or comm object: its type, time, pid and tid. */
static struct jout *side_begin_ids(struct json *j, const char *type,
				   const struct pipe_record *r,
				   const struct sideband *sb, int *depth)
{
	struct jout *o = side_begin(j, type, r, depth);

	key_i32(j, o, *depth + 1, "pid", sb->pid);
	key_i32(j, o, *depth + 1, "tid", sb->tid);
	return o;
}

static void mmap_put(struct json *j, const struct pipe_record *r,
		     const struct sideband *sb)
{
	struct jout *o;
	int depth;

	o = side_begin_ids(j, "mmap", r, sb, &depth);
	key_hex(j, o, depth + 1, "start", sb->start);
	key_hex(j, o, depth + 1, "len", sb->len);
	key_hex(j, o, depth + 1, "pgoff", sb->pgoff);
	key(j, o, true, depth + 1, "filename");
	jout_str(o, sb->name);
	side_end(j, o, depth);
}

static void comm_put(struct json *j, const struct pipe_record *r,
		     const struct sideband *sb)
{
	struct jout *o;
	int depth;

	o = side_begin_ids(j, "comm", r, sb, &depth);
	key(j, o, true, depth + 1, "comm");
	jout_str(o, sb->name);
	key(j, o, true, depth + 1, "exec");
	jout_lit(o, sb->exec ? "true" : "false");
	side_end(j, o, depth);
}

static void task_put(struct json *j, const struct pipe_record *r,
		     const struct sideband *sb)
{
	struct jout *o;
	int depth;

	o = side_begin(j, sb->type == PERF_RECORD_FORK ? "fork" : "exit", r,
		       &depth);
	key_i32(j, o, depth + 1, "pid", sb->pid);
	key_i32(j, o, depth + 1, "ppid", sb->ppid);
	key_i32(j, o, depth + 1, "tid", sb->tid);
	key_i32(j, o, depth + 1, "ptid", sb->ptid);
	side_end(j, o, depth);
}

void other_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	struct sideband sb;
	uint64_t lost;
	int ret;

	ret = sideband_lost(h, &lost);
	if (ret != -ENOENT) {
		if (ret < 0)
			j->bad++;
		else
			j->lost += lost;
		return;
	}
	if (h->type == PERF_RECORD_THROTTLE) {
		j->throttle++;
		return;
	}
	ret = sideband_decode(h, &sb);
	if (ret == -ENOENT)
		return;
	addrcache_forget(&j->syms);
	if (j->events != JSON_EVENTS_ALL)
		return;
	if (ret < 0)
		j->bad++;
	else if (sb.type == PERF_RECORD_MMAP || sb.type == PERF_RECORD_MMAP2)
		mmap_put(j, r, &sb);
	else if (sb.type == PERF_RECORD_COMM)
		comm_put(j, r, &sb);
	else
		task_put(j, r, &sb);
}
