/*
 * merge.c - per-stream FIFO queues in chunks, merged by a binary heap of
 * stream heads (see merge.h).  Each record is copied once, on push.  A
 * record older than its stream's newest (the perf source's sideband
 * stream gathers several rings) goes to a small per-stream heap of late
 * records instead, so it still comes out in its time's place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "heap.h"
#include "merge.h"
#include "popbuf.h"

#define CHUNK_SIZE (256u << 10)

struct entry {
	uint64_t time;  /* ns */
	uint32_t event; /* event index */
	uint32_t size;  /* bytes of the record that follows */
};

struct chunk {
	struct chunk *next; /* younger chunk of the same queue */
	uint32_t head;      /* offset of the oldest unread entry */
	uint32_t tail;      /* offset where the next entry goes */
	uint8_t data[];     /* CHUNK_SIZE bytes of entries */
};

struct late {
	struct late *next;  /* retired list link */
	struct entry e;     /* the entry, record bytes follow */
};

struct queue {
	uint32_t stream;     /* stream id */
	uint32_t order;      /* tie-break rank: sideband 0, others 1+id */
	struct chunk *first; /* oldest chunk */
	struct chunk *last;  /* youngest chunk */
	uint64_t last_time; /* time of the youngest FIFO record */
	size_t count;       /* records in the FIFO */
	void **late;        /* struct late *: heap by time of the records
			       that came late */
	uint32_t nr_late;   /* records in late */
	size_t cap_late;    /* room in late */
	int32_t heap_pos;   /* index in the heap, -1 when not in it */
};

struct merge {
	struct queue **queues;    /* owned, nr_queues entries */
	uint32_t nr_queues;
	size_t cap_queues;        /* room in queues */
	size_t cap_heap;          /* room in heap */
	void **heap;              /* struct queue *: the non-empty queues,
				     heap by head time */
	uint32_t heap_len;
	struct chunk *retired;    /* consumed chunks, freed on next call */
	struct late *retired_late; /* consumed late records, likewise */
	struct chunk *spare;      /* one recycled chunk */
	struct popbuf out;        /* the batch array */
	size_t bytes;             /* record bytes held */
	size_t count;             /* records held */
	uint64_t reordered;
};

int merge_new(struct merge **out)
{
	struct merge *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	*out = m;
	return 0;
}

static void late_free(struct late *l);

static void chunks_free(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;

		free(c);
		c = next;
	}
}

void merge_free(struct merge *m)
{
	uint32_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_queues; i++) {
		uint32_t k;

		chunks_free(m->queues[i]->first);
		for (k = 0; k < m->queues[i]->nr_late; k++)
			free(m->queues[i]->late[k]);
		free(m->queues[i]->late);
		free(m->queues[i]);
	}
	chunks_free(m->retired);
	late_free(m->retired_late);
	free(m->spare);
	free(m->queues);
	free(m->heap);
	popbuf_release(&m->out);
	free(m);
}

static void late_free(struct late *l)
{
	while (l) {
		struct late *next = l->next;

		free(l);
		l = next;
	}
}

static void retire_flush(struct merge *m)
{
	late_free(m->retired_late);
	m->retired_late = NULL;
	while (m->retired) {
		struct chunk *c = m->retired;

		m->retired = c->next;
		if (!m->spare)
			m->spare = c;
		else
			free(c);
	}
}

static struct chunk *chunk_get(struct merge *m)
{
	struct chunk *c = m->spare;

	if (c)
		m->spare = NULL;
	else
		c = malloc(sizeof(*c) + CHUNK_SIZE);
	if (!c)
		return NULL;
	c->next = NULL;
	c->head = 0;
	c->tail = 0;
	return c;
}

static struct queue *queue_of(struct merge *m, uint32_t stream)
{
	struct queue *q;
	uint32_t i;

	/* few streams, and callers push runs of one stream: scan from the
	 * most recently added */
	for (i = m->nr_queues; i-- > 0;)
		if (m->queues[i]->stream == stream)
			return m->queues[i];
	if (grow_array(&m->queues, &m->cap_queues, (size_t)m->nr_queues + 1,
		       sizeof(*m->queues), 8, UINT32_MAX) < 0 ||
	    grow_array(&m->heap, &m->cap_heap, (size_t)m->nr_queues + 1,
		       sizeof(*m->heap), 8, UINT32_MAX) < 0)
		return NULL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->stream = stream;
	q->order = stream == PIPE_STREAM_SIDEBAND ? 0 : stream + 1;
	q->heap_pos = -1;
	m->queues[m->nr_queues++] = q;
	return q;
}

static const struct entry *queue_head(const struct queue *q)
{
	return (const struct entry *)(q->first->data + q->first->head);
}

/* The oldest of the records that came late (q->nr_late > 0). */
static const struct late *late_top(const struct queue *q)
{
	return q->late[0];
}

/* The late record goes first when it is strictly older than the FIFO's. */
static bool late_first(const struct queue *q)
{
	return q->nr_late &&
	       (!q->count || late_top(q)->e.time < queue_head(q)->time);
}

static uint64_t queue_time(const struct queue *q)
{
	return late_first(q) ? late_top(q)->e.time : queue_head(q)->time;
}

static bool queue_before(const void *qa, const void *qb)
{
	const struct queue *a = qa, *b = qb;
	uint64_t ta = queue_time(a), tb = queue_time(b);

	if (ta != tb)
		return ta < tb;
	return a->order < b->order;
}

static void queue_moved(void *q, uint32_t pos)
{
	((struct queue *)q)->heap_pos = (int32_t)pos;
}

static const struct heap_ops queue_heap = {
	.before = queue_before,
	.moved = queue_moved,
};

static bool late_before(const void *a, const void *b)
{
	return ((const struct late *)a)->e.time <
	       ((const struct late *)b)->e.time;
}

static const struct heap_ops late_heap = { .before = late_before };

static int queue_append_late(struct merge *m, struct queue *q,
			     const struct pipe_record *r)
{
	struct late *l;

	if (grow_array(&q->late, &q->cap_late, (size_t)q->nr_late + 1,
		       sizeof(*q->late), 16, UINT32_MAX) < 0)
		return -ENOMEM;
	l = malloc(sizeof(*l) + r->hdr->size);
	if (!l)
		return -ENOMEM;
	l->next = NULL;
	l->e.time = r->time;
	l->e.event = r->event;
	l->e.size = r->hdr->size;
	memcpy(&l->e + 1, r->hdr, r->hdr->size);
	heap_push(q->late, &q->nr_late, l, &late_heap);
	m->reordered++;
	m->count++;
	m->bytes += r->hdr->size;
	/* the queue's head may be older now */
	if (q->heap_pos < 0)
		heap_push(m->heap, &m->heap_len, q, &queue_heap);
	else
		heap_up(m->heap, (uint32_t)q->heap_pos, &queue_heap);
	return 0;
}

static int queue_append(struct merge *m, struct queue *q,
			const struct pipe_record *r)
{
	uint32_t size = r->hdr->size;
	uint32_t need = sizeof(struct entry) + ((size + 7u) & ~7u);
	struct entry *e;

	if (q->count && r->time < q->last_time)
		return queue_append_late(m, q, r);

	if (!q->last || CHUNK_SIZE - q->last->tail < need) {
		struct chunk *c = chunk_get(m);

		if (!c)
			return -ENOMEM;
		if (q->last)
			q->last->next = c;
		else
			q->first = c;
		q->last = c;
	}
	e = (struct entry *)(q->last->data + q->last->tail);
	e->time = r->time;
	e->event = r->event;
	e->size = size;
	memcpy(e + 1, r->hdr, size);
	q->last->tail += need;
	q->last_time = e->time;
	q->count++;
	m->count++;
	m->bytes += size;
	if (q->heap_pos < 0)
		heap_push(m->heap, &m->heap_len, q, &queue_heap);
	return 0;
}

int merge_push(struct merge *m, const struct pipe_record *recs, size_t nr)
{
	struct queue *q = NULL;
	size_t i;
	int ret;

	retire_flush(m);
	for (i = 0; i < nr; i++) {
		if (!q || q->stream != recs[i].stream) {
			q = queue_of(m, recs[i].stream);
			if (!q)
				return -ENOMEM;
		}
		ret = queue_append(m, q, &recs[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Take the head entry of q; returns its view. */
static void queue_take(struct merge *m, struct queue *q,
		       struct pipe_record *r)
{
	struct chunk *c = q->first;
	const struct entry *e;

	if (late_first(q)) {
		struct late *l = q->late[0];

		r->hdr = (const struct perf_event_header *)(&l->e + 1);
		r->time = l->e.time;
		r->stream = q->stream;
		r->event = l->e.event;
		heap_pop(q->late, &q->nr_late, &late_heap);
		m->count--;
		m->bytes -= l->e.size;
		l->next = m->retired_late; /* the view lives until the next call */
		m->retired_late = l;
		return;
	}
	e = queue_head(q);
	r->hdr = (const struct perf_event_header *)(e + 1);
	r->time = e->time;
	r->stream = q->stream;
	r->event = e->event;
	c->head += sizeof(*e) + ((e->size + 7u) & ~7u);
	q->count--;
	m->count--;
	m->bytes -= e->size;
	if (c->head == c->tail && (c->next || !q->count)) {
		/* the views still point into c: retire, free later */
		q->first = c->next;
		if (!q->first)
			q->last = NULL;
		c->next = m->retired;
		m->retired = c;
	}
}

void merge_pop(struct merge *m, uint64_t horizon, size_t max,
	       struct pipe_batch *out)
{
	size_t n = 0;

	retire_flush(m);
	out->flags = 0;
	max = popbuf_reserve(&m->out, max);
	while (n < max && m->heap_len) {
		struct queue *q = m->heap[0];

		if (queue_time(q) >= horizon && horizon != UINT64_MAX)
			break;
		queue_take(m, q, &m->out.recs[n++]);
		if (q->count || q->nr_late) {
			heap_down(m->heap, m->heap_len, 0, &queue_heap);
		} else {
			q->heap_pos = -1;
			heap_pop(m->heap, &m->heap_len, &queue_heap);
		}
	}
	out->recs = m->out.recs;
	out->nr = n;
}

size_t merge_bytes(const struct merge *m)
{
	return m->bytes;
}

size_t merge_count(const struct merge *m)
{
	return m->count;
}

uint64_t merge_oldest(const struct merge *m)
{
	return m->heap_len ? queue_time(m->heap[0]) : UINT64_MAX;
}

uint64_t merge_reordered(const struct merge *m)
{
	return m->reordered;
}
