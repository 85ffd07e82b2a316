/*
 * perf_ring.c - reading the rings: records handed out as views into the
 * mmap rings, copies of those that wrap, the last PERF_RECORD_LOST, hung-
 * up rings.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "grow.h"
#include "perfsrc.h"
#include "sideband.h"

/* The event of a kernel id; consecutive records mostly share one. */
static uint32_t ring_event(struct perf_src *s, struct perf_ring *r,
			   uint64_t id)
{
	if (id != r->last_id || r->last_event == PIPE_EVENT_NONE) {
		r->last_id = id;
		r->last_event = s->host->event_of_id(s->ctx, id);
	}
	return r->last_event;
}

/* Fill in a record's event, time and stream; count LOST and THROTTLE. */
static void record_fill(struct perf_src *s, struct perf_ring *r,
			uint32_t stream, struct pipe_record *rec)
{
	const struct perf_event_header *h = rec->hdr;
	const uint8_t *p = (const uint8_t *)h;
	struct pipe_sample_id sid = PIPE_INIT(sid);
	uint64_t id, v;

	rec->stream = sideband_is_state(h->type) ? PIPE_STREAM_SIDEBAND
						  : stream;
	rec->event = PIPE_EVENT_NONE;
	rec->time = 0;
	if (h->size < sizeof(*h) + 8)
		return;
	if (h->type == PERF_RECORD_SAMPLE) {
		memcpy(&id, p + sizeof(*h), 8);
		rec->event = ring_event(s, r, id);
		/* our sample_type: IDENTIFIER IP TID, then TIME */
		if (h->size >= sizeof(*h) + 32)
			memcpy(&rec->time, p + sizeof(*h) + 24, 8);
	} else {
		memcpy(&id, p + h->size - 8, 8);
		rec->event = ring_event(s, r, id);
		if (s->host->decode_sample_id(s->ctx, rec, &sid) == 0)
			rec->time = sid.time;
		if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16) {
			memcpy(&v, p + sizeof(*h) + 8, 8);
			r->lost += v;
		} else if (h->type == PERF_RECORD_THROTTLE) {
			r->throttled++;
		}
	}
	if (rec->time > r->last_time)
		r->last_time = rec->time;
}

/*
 * Take every record between tail and head of ring c as views; a record
 * that wraps the ring end is copied to the bounce buffer (at most one
 * does, as the range is at most the ring size).  The tail is published
 * at the next read, so the views stay valid until then.
 */
static int ring_take(struct perf_src *s, uint32_t c, uint64_t head,
		     struct pipe_batch *out)
{
	struct perf_ring *r = &s->rings[c];
	const struct perf_event_header *h;
	uint64_t tail = r->tail, off, size, first;
	bool bounced = false;
	size_t n = 0;
	int ret;

	if (head - tail > r->size) {
		s->host->error(s->ctx, "ring of cpu '%d' overran: head %" PRIu64
			       ", tail %" PRIu64, r->cpu, head, tail);
		return -EIO;
	}
	ret = grow_array(&s->recs, &s->recs_cap, (size_t)((head - tail) / 8),
			 sizeof(*s->recs), 1024, SIZE_MAX);
	if (ret < 0)
		return ret;
	while (tail != head) {
		off = tail & (r->size - 1);
		h = (const void *)(r->data + off);
		size = h->size;
		if (size < sizeof(*h) || size % 8 || size > head - tail ||
		    (off + size > r->size && bounced)) {
			s->host->error(s->ctx, "bad record in the ring of cpu "
				       "'%d': size %" PRIu64 " at %" PRIu64,
				       r->cpu, size, tail);
			return -EIO;
		}
		if (off + size > r->size) {
			first = r->size - off;
			memcpy(r->bounce, r->data + off, first);
			memcpy(r->bounce + first, r->data, size - first);
			h = (const void *)r->bounce;
			bounced = true;
		}
		s->recs[n].hdr = h;
		record_fill(s, r, c, &s->recs[n]);
		n++;
		tail += size;
	}
	r->tail = tail;
	s->cur = (int)c;
	out->recs = s->recs;
	out->nr = n;
	out->flags = 0;
	return 0;
}

static uint64_t ring_head(const struct perf_ring *r)
{
	return __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
}

/* Publish the tail of the ring whose views the previous read handed out. */
static void release_views(struct perf_src *s)
{
	struct perf_ring *r;

	if (s->cur < 0)
		return;
	r = &s->rings[s->cur];
	__atomic_store_n(&r->page->data_tail, r->tail, __ATOMIC_RELEASE);
	s->cur = -1;
}

/*
 * After the last drain: a LOST record per CPU for samples the kernel
 * counted lost (PERF_FORMAT_LOST) but never reported with a LOST record.
 */
static int final_lost(struct perf_src *s, struct pipe_batch *out)
{
	uint64_t vals[2], lost;
	uint32_t c, e, t, n = 0;
	uint8_t *p;

	s->final_done = true;
	if (!s->lost_format)
		return 0;
	s->final_buf = calloc(s->nr_cpus, 64);
	s->final_recs = calloc(s->nr_cpus, sizeof(*s->final_recs));
	if (!s->final_buf || !s->final_recs)
		return -ENOMEM;
	for (c = 0; c < s->nr_cpus; c++) {
		struct perf_ring *r = &s->rings[c];
		struct perf_event_header h;
		uint64_t body[6];

		lost = 0;
		for (e = 0; e < s->nr_events; e++) {
			for (t = 0; t < s->nr_targets; t++) {
				int fd = s->fds[fd_index(s, e, c, t)];

				if (read(fd, vals, sizeof(vals)) ==
				    (ssize_t)sizeof(vals))
					lost += vals[1];
			}
		}
		if (lost <= r->lost)
			continue;
		h.type = PERF_RECORD_LOST;
		h.misc = 0;
		h.size = sizeof(h) + sizeof(body);
		body[0] = s->ids[fd_index(s, 0, c, 0)];
		body[1] = lost - r->lost;
		body[2] = UINT64_C(0xffffffffffffffff); /* pid, tid unknown */
		body[3] = r->last_time;
		body[4] = (uint32_t)r->cpu;
		body[5] = body[0];
		r->lost = lost;
		p = s->final_buf + 64 * n;
		memcpy(p, &h, sizeof(h));
		memcpy(p + sizeof(h), body, sizeof(body));
		s->final_recs[n].hdr = (const void *)p;
		s->final_recs[n].time = r->last_time;
		s->final_recs[n].stream = c;
		s->final_recs[n].event = 0;
		n++;
	}
	out->recs = s->final_recs;
	out->nr = n;
	out->flags = PIPE_BATCH_ROUND_END;
	return 0;
}

/*
 * The rings of a command are owned by events of its first task; once that
 * task exits they poll as hung up forever.  Leave them out of the poll set
 * and drain them on a 100 ms timer instead; the child's pidfd says when
 * to end.
 */
static void mark_hangups(struct perf_src *s)
{
	struct itimerspec its;
	struct pollfd pfd;
	uint32_t c;

	if (s->mode != PERF_MODE_COMMAND)
		return;
	for (c = 0; c < s->nr_cpus; c++) {
		if (s->rings[c].hup)
			continue;
		pfd.fd = s->rings[c].fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))
			s->rings[c].hup = true;
		if (!s->rings[c].hup || s->hup_timerfd >= 0)
			continue;
		memset(&its, 0, sizeof(its));
		its.it_value.tv_nsec = 100000000;
		its.it_interval.tv_nsec = 100000000;
		s->hup_timerfd = timerfd_create(CLOCK_MONOTONIC,
						TFD_CLOEXEC | TFD_NONBLOCK);
		/* without the timer the host's own timeout still drains it */
		if (s->hup_timerfd >= 0 &&
		    timerfd_settime(s->hup_timerfd, 0, &its, NULL) < 0) {
			close(s->hup_timerfd);
			s->hup_timerfd = -1;
		}
	}
}

int perf_read(void *state, struct pipe_batch *out)
{
	struct perf_src *s = state;
	uint32_t c;
	int ret;

	out->recs = NULL;
	out->nr = 0;
	out->flags = 0;
	release_views(s);
	if (!s->started)
		return -EINVAL;
	if (s->synth_pending) {
		s->synth_pending = false;
		out->recs = s->synth_recs;
		out->nr = s->synth_nr;
		return 0;
	}
	if (s->next == 0 && !s->stopping && should_end(s))
		begin_stop(s);
	if (s->next == 0 && s->hup_timerfd >= 0) {
		uint64_t ticks;

		if (read(s->hup_timerfd, &ticks, sizeof(ticks)) < 0)
			ticks = 0; /* not due yet: EAGAIN */
	}
	for (c = s->next; c < s->nr_cpus; c++) {
		uint64_t head = ring_head(&s->rings[c]);

		if (head == s->rings[c].tail)
			continue;
		ret = ring_take(s, c, head, out);
		if (ret < 0)
			return ret;
		/* the pass ends here if the rings after c are empty */
		for (s->next = c + 1; s->next < s->nr_cpus; s->next++)
			if (ring_head(&s->rings[s->next]) !=
			    s->rings[s->next].tail)
				break;
		if (s->next == s->nr_cpus) {
			s->next = 0;
			out->flags |= PIPE_BATCH_ROUND_END;
		}
		return 0;
	}
	s->next = 0;
	if (!s->stopping) {
		mark_hangups(s);
		return -EAGAIN;
	}
	if (!s->final_done) {
		ret = final_lost(s, out);
		if (ret < 0 || out->nr)
			return ret;
	}
	return PIPE_EOF;
}
