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
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
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
		r->side_bytes += h->size;
		if (h->type == PERF_RECORD_EXIT)
			s->exits++;
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
	/* fuller than the drain timer allows: its rate bound was wrong (or
	 * the drain came late); the watermarks wake the next sleeps */
	if (s->timed && head - tail > s->drain_level)
		s->mark_sleeps = DRAIN_MARK_SLEEPS;
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

/*
 * Waking on a timer.  A ring's fd wakes its poller at the watermark, and
 * also whenever a task with an inherited event exits: the kernel kicks the
 * waiters of every event on the ring so that poll can see a hang-up, poll
 * finds nothing and sleeps again inside the kernel, one wake-up each
 * time, never seen by pipe.  A command that starts and ends many tasks
 * (or processes attached with pid=) then wakes the recorder once per
 * exit.  When that costs more than a timer would, the rings' fds stay out
 * of the poll set and a timer drains every ring at once, when the ring
 * nearest to it could at the most reach three quarters of its size: at
 * freq= samples a second per CPU and event (events driven by a timer,
 * cpu-clock and task-clock, sample no faster), each of the largest size
 * its sample_type allows (the longest call chain, perf_event_max_stack
 * frames and perf_event_max_contexts_per_stack markers; a DWARF stack
 * dump whole), plus twice the ring's recent peak of other records
 * (fading by 3% a 100 ms window) and 64 KiB a second.  At that worst
 * rate the slack past the timer is the quarter of the ring the watermark
 * leaves at 4 kHz; at any lesser rate the timer comes early.  The timer
 * is used only while it is due less often than the watermarks and the
 * exits would wake the poller (their rates, measured from the first
 * sleep, which is on the timer), and never under 10 ms.  A drain that
 * finds a ring past three quarters, or a LOST record, puts the watermarks
 * back for the next 64 sleeps.
 */
#define DRAIN_WINDOW_NS 100000000.0 /* rates are measured over this */
#define DRAIN_MIN_NS 10000000.0     /* a shorter timer: the watermarks */

static void drain_disarm(struct perf_src *s)
{
	struct itimerspec its;

	if (!s->timer_armed)
		return;
	memset(&its, 0, sizeof(its));
	timerfd_settime(s->drain_timerfd, 0, &its, NULL);
	s->timer_armed = false;
}

/* A new rate window: each ring's rate and peak of other records, exits. */
static void drain_rates(struct perf_src *s, double now)
{
	double dt = now - s->win_at, v;
	uint32_t c;

	for (c = 0; c < s->nr_cpus; c++) {
		struct perf_ring *r = &s->rings[c];
		uint64_t head = ring_head(r);

		if (s->win_at > 0) {
			r->rate = (double)(head - r->rate_head) * 1e9 / dt;
			v = (double)(r->side_bytes - r->side_mark) * 1e9 / dt;
			r->side_peak = v > r->side_peak * 0.97 ? v :
				       r->side_peak * 0.97;
		}
		r->rate_head = head;
		r->side_mark = r->side_bytes;
	}
	if (s->win_at > 0) {
		v = (double)(s->exits - s->exits_mark) * 1e9 / dt;
		s->exit_rate = (s->exit_rate + v) / 2;
	}
	s->exits_mark = s->exits;
	s->win_at = now;
}

bool drain_plan(struct perf_src *s)
{
	struct itimerspec its;
	struct timespec ts;
	double now, wait = -1, marks = 0;
	uint64_t lost = 0;
	bool first;
	uint32_t c;

	s->timed = false;
	if (!s->timed_ok)
		return true;
	s->sleeps_marked++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
	first = s->win_at <= 0;
	if (first || now - s->win_at >= DRAIN_WINDOW_NS)
		drain_rates(s, now);
	for (c = 0; c < s->nr_cpus; c++)
		lost += s->rings[c].lost;
	if (lost != s->lost_seen) {
		s->lost_seen = lost;
		s->mark_sleeps = DRAIN_MARK_SLEEPS;
	}
	if (s->mark_sleeps) {
		s->mark_sleeps--;
		drain_disarm(s);
		return true;
	}
	for (c = 0; c < s->nr_cpus; c++) {
		struct perf_ring *r = &s->rings[c];
		uint64_t fill = ring_head(r) - r->tail;
		double bound = s->samples_max + 2 * r->side_peak + 65536, t;

		if (fill >= s->drain_level)
			break;
		t = (double)(s->drain_level - fill) * 1e9 / bound;
		if (wait < 0 || t < wait)
			wait = t;
		marks += r->rate / (double)s->mark_bytes;
	}
	/* the timer must pay: due less often than the watermarks and the
	 * exits' kicks would wake the poller (until their rates are known,
	 * it is tried: a sleep on the watermarks may last until flush=) */
	if (c < s->nr_cpus || wait < DRAIN_MIN_NS ||
	    (!first && 1e9 / wait >= marks + s->exit_rate)) {
		drain_disarm(s);
		return true;
	}
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(wait / 1e9);
	its.it_value.tv_nsec = (long)(wait - (double)its.it_value.tv_sec * 1e9);
	if (timerfd_settime(s->drain_timerfd, 0, &its, NULL) < 0)
		return true;
	s->timer_armed = true;
	s->timed = true;
	s->sleeps_marked--;
	s->sleeps_timed++;
	return false;
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
	if (!s->said_sleeps) {
		struct rusage ru;

		s->said_sleeps = true;
		if (getrusage(RUSAGE_THREAD, &ru) < 0)
			ru.ru_nvcsw = -1;
		if (s->timed_ok)
			s->host->log(s->ctx, PIPE_LOG_DEBUG, "slept %" PRIu64
				     " times on the drain timer, %" PRIu64
				     " on the rings' watermarks; the draining "
				     "thread woke %ld times", s->sleeps_timed,
				     s->sleeps_marked, ru.ru_nvcsw);
		else
			s->host->log(s->ctx, PIPE_LOG_DEBUG, "the draining "
				     "thread woke %ld times", ru.ru_nvcsw);
	}
	return PIPE_EOF;
}
