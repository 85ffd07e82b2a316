/*
 * runmerge.c - a binary heap of runs keyed by the time of each run's next
 * record (see runmerge.h).  The run on top gives records without touching
 * the heap for as long as they come before the best of the others, so
 * the common case (a few streams, each in long runs) costs a compare and
 * a 24-byte view copy per record.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "grow.h"
#include "heap.h"
#include "popbuf.h"
#include "runmerge.h"

struct run {
	const struct pipe_record *recs; /* borrowed from the owner */
	size_t nr;                      /* records in recs */
	size_t next;                    /* the next record to pop */
	uint64_t time;                  /* recs[next].time */
	uint64_t seq;                   /* order of adding: the last tie-break */
	uint32_t order;                 /* sideband 0, stream s: s + 1 */
	size_t bytes;                   /* record bytes, for runmerge_bytes */
	void *owner;                    /* given back by runmerge_spent */
	struct run *link;               /* the spent list */
};

struct runmerge {
	void **heap;                    /* owned; struct run *: the runs
					   with records left */
	uint32_t heap_len;              /* runs in heap */
	size_t heap_cap;                /* room in heap */
	struct run *spent;              /* owned; popped to the end */
	struct run *spare;              /* owned; free run structs */
	struct popbuf out;              /* the batch array */
	uint64_t seq;                   /* runs added */
	size_t bytes;                   /* record bytes not yet spent */
	size_t count;                   /* records not yet popped */
};

int runmerge_new(struct runmerge **out)
{
	struct runmerge *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	*out = m;
	return 0;
}

static void runs_free(struct run *r)
{
	while (r) {
		struct run *next = r->link;

		free(r);
		r = next;
	}
}

void runmerge_free(struct runmerge *m)
{
	uint32_t i;

	if (!m)
		return;
	for (i = 0; i < m->heap_len; i++)
		free(m->heap[i]);
	runs_free(m->spent);
	runs_free(m->spare);
	free(m->heap);
	popbuf_release(&m->out);
	free(m);
}

/* Whether a's next record goes before b's. */
static bool run_before(const struct run *a, const struct run *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	if (a->order != b->order)
		return a->order < b->order;
	return a->seq < b->seq;
}

static bool heap_before(const void *a, const void *b)
{
	return run_before(a, b);
}

static const struct heap_ops run_heap = { .before = heap_before };

int runmerge_add(struct runmerge *m, const struct pipe_record *recs,
		 size_t nr, uint32_t stream, size_t bytes, void *owner)
{
	struct run *r = m->spare;

	if (grow_array(&m->heap, &m->heap_cap, (size_t)m->heap_len + 1,
		       sizeof(*m->heap), 16, UINT32_MAX) < 0)
		return -ENOMEM;
	if (r)
		m->spare = r->link;
	else
		r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->recs = recs;
	r->nr = nr;
	r->next = 0;
	r->seq = m->seq++;
	r->order = stream == PIPE_STREAM_SIDEBAND ? 0 : stream + 1;
	r->bytes = bytes;
	r->owner = owner;
	r->link = NULL;
	m->bytes += bytes;
	if (!nr) {
		r->link = m->spent;
		m->spent = r;
		return 0;
	}
	r->time = recs[0].time;
	m->count += nr;
	heap_push(m->heap, &m->heap_len, r, &run_heap);
	return 0;
}

/* The top run leaves the heap: all its records were popped. */
static void heap_pop_top(struct runmerge *m)
{
	struct run *r = m->heap[0];

	r->link = m->spent;
	m->spent = r;
	heap_pop(m->heap, &m->heap_len, &run_heap);
}

/*
 * How far the top run may go without the heap: its records with time
 * below *until, or equal to it when *equal_ok, come before every other
 * run's next record and before the horizon.
 */
static void top_limit(const struct runmerge *m, uint64_t horizon,
		      uint64_t *until, bool *equal_ok)
{
	const struct run *top = m->heap[0], *second = NULL;

	if (m->heap_len > 1)
		second = m->heap[1];
	if (m->heap_len > 2 && run_before(m->heap[2], m->heap[1]))
		second = m->heap[2];
	*until = UINT64_MAX;
	*equal_ok = true;
	if (second) {
		*until = second->time;
		*equal_ok = top->order != second->order ?
			    top->order < second->order : top->seq < second->seq;
	}
	if (horizon != UINT64_MAX && horizon <= *until) {
		*until = horizon;
		*equal_ok = false;
	}
}

/* A heap of at most this many runs is merged two runs at a time. */
#define RUNMERGE_SMALL 4

/* The small heap again after pop_two moved its runs on: spent runs out,
 * the rest sorted (a sorted array is a heap). */
static void small_reheap(struct runmerge *m)
{
	uint32_t i, k, n = 0;

	for (i = 0; i < m->heap_len; i++) {
		struct run *r = m->heap[i];

		if (r->next == r->nr) {
			r->link = m->spent;
			m->spent = r;
			continue;
		}
		r->time = r->recs[r->next].time;
		for (k = n; k > 0 && run_before(r, m->heap[k - 1]); k--)
			m->heap[k] = m->heap[k - 1];
		m->heap[k] = r;
		n++;
	}
	m->heap_len = n;
}

/*
 * A heap of 2 to RUNMERGE_SMALL runs: the best two merged directly, one
 * compare per record, while their records are older than the horizon and
 * than every other run's next.  Returns the new n.
 */
static size_t pop_two(struct runmerge *m, uint64_t horizon, size_t n,
		      size_t max)
{
	struct run *a = m->heap[0], *b = m->heap[1];
	bool capped = horizon != UINT64_MAX, a_first;
	uint64_t cap = horizon;
	size_t ia = a->next, ib, start = n;
	uint32_t i, second = 1;

	if (m->heap_len > 2 && run_before(m->heap[2], b)) {
		b = m->heap[2];
		second = 2;
	}
	for (i = 1; i < m->heap_len; i++) {
		const struct run *other = m->heap[i];

		if (i != second && (!capped || other->time < cap)) {
			cap = other->time;
			capped = true;
		}
	}
	ib = b->next;
	a_first = a->order != b->order ? a->order < b->order : a->seq < b->seq;
	while (n < max) {
		uint64_t ta = a->recs[ia].time, tb = b->recs[ib].time;
		bool take_a = ta < tb || (ta == tb && a_first);
		uint64_t t = take_a ? ta : tb;

		if (capped && t >= cap)
			break;
		if (take_a) {
			m->out.recs[n++] = a->recs[ia++];
			if (ia == a->nr)
				break;
		} else {
			m->out.recs[n++] = b->recs[ib++];
			if (ib == b->nr)
				break;
		}
	}
	a->next = ia;
	b->next = ib;
	m->count -= n - start;
	if (n > start)
		small_reheap(m);
	return n;
}

void runmerge_pop(struct runmerge *m, uint64_t horizon, size_t max,
		  struct pipe_batch *out)
{
	size_t n = 0;

	out->flags = 0;
	max = popbuf_reserve(&m->out, max);
	while (n < max && m->heap_len) {
		struct run *r;
		size_t i, start = n;
		uint64_t until;
		bool equal_ok;

		if (m->heap_len >= 2 && m->heap_len <= RUNMERGE_SMALL) {
			n = pop_two(m, horizon, n, max);
			if (n == max || !m->heap_len)
				break;
		}
		r = m->heap[0];
		i = r->next;
		start = n;

		top_limit(m, horizon, &until, &equal_ok);
		while (n < max && i < r->nr &&
		       (r->recs[i].time < until ||
			(equal_ok && r->recs[i].time == until)))
			m->out.recs[n++] = r->recs[i++];
		r->next = i;
		m->count -= n - start;
		if (i == r->nr) {
			heap_pop_top(m);
			continue;
		}
		r->time = r->recs[i].time;
		if (n == start)
			break; /* the horizon holds the oldest back */
		heap_down(m->heap, m->heap_len, 0, &run_heap);
	}
	out->recs = m->out.recs;
	out->nr = n;
}

void *runmerge_spent(struct runmerge *m)
{
	struct run *r = m->spent;

	if (!r)
		return NULL;
	m->spent = r->link;
	m->bytes -= r->bytes;
	r->link = m->spare;
	m->spare = r;
	return r->owner;
}

size_t runmerge_bytes(const struct runmerge *m)
{
	return m->bytes;
}

size_t runmerge_count(const struct runmerge *m)
{
	return m->count;
}
