/*
 * threads.c - threads, processes and their maps from the sideband (see
 * threads.h).  Threads and processes live in open-addressing hash tables
 * keyed by id; command names are interned once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "search.h"
#include "strtab.h"
#include "threads.h"

struct u32map {
	uint32_t *keys; /* key per slot */
	void **vals;    /* value per slot, NULL: free slot */
	uint32_t cap;   /* slots, a power of two (0: not allocated) */
	uint32_t nr;    /* used slots */
};

struct thread {
	uint32_t tid;      /* thread id */
	uint32_t pid;      /* its process */
	const char *comm;  /* interned, or NULL when never named */
	uint32_t ptid;     /* forked by this thread (FORK), or its own tid */
	uint32_t ppid;     /* of this process */
	uint32_t gen;      /* death generation, matches the dead ring */
	bool dead;         /* EXIT seen */
};

struct proc {
	uint32_t pid;              /* process id */
	uint32_t users;            /* struct thread with this pid */
	struct threads_map *maps;  /* sorted, non-overlapping */
	uint32_t nr;               /* used maps */
	uint32_t cap;              /* allocated maps */
};

struct dead {
	uint32_t tid; /* exited thread */
	uint32_t gen; /* its generation at exit */
};

struct threads {
	struct u32map threads;                  /* tid -> struct thread */
	struct u32map procs;                    /* pid -> struct proc */
	struct strtab comms;                    /* interned command names */
	struct dead dead[THREADS_MAX_DEAD];     /* ring of exited threads */
	uint32_t dead_head;                     /* oldest entry */
	uint32_t dead_nr;                       /* entries in the ring */
	uint32_t gen;                           /* last generation given */
};

static uint32_t slot_of(const struct u32map *m, uint32_t key)
{
	return (key * UINT32_C(0x9e3779b1)) & (m->cap - 1);
}

static void *u32map_get(const struct u32map *m, uint32_t key)
{
	uint32_t i;

	if (m->cap == 0)
		return NULL;
	for (i = slot_of(m, key); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return NULL;
}

static int u32map_grow(struct u32map *m)
{
	struct u32map n;
	uint32_t i;

	n.cap = m->cap ? m->cap * 2 : 64;
	if (n.cap < m->cap)
		return -ENOMEM;
	n.nr = 0;
	n.keys = malloc(n.cap * sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		uint32_t j;

		if (!m->vals[i])
			continue;
		for (j = slot_of(&n, m->keys[i]); n.vals[j];
		     j = (j + 1) & (n.cap - 1))
			;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.nr++;
	}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

/* Insert a key known to be absent. */
static int u32map_add(struct u32map *m, uint32_t key, void *val)
{
	uint32_t i;

	if ((m->nr + 1) * 4 > m->cap * 3) {
		int ret = u32map_grow(m);

		if (ret < 0)
			return ret;
	}
	for (i = slot_of(m, key); m->vals[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	m->vals[i] = val;
	m->nr++;
	return 0;
}

/* Remove key, shifting later entries of its cluster back (no tombstones). */
static void u32map_del(struct u32map *m, uint32_t key)
{
	uint32_t mask = m->cap - 1, i, j;

	if (m->cap == 0)
		return;
	for (i = slot_of(m, key); m->vals[i]; i = (i + 1) & mask)
		if (m->keys[i] == key)
			break;
	if (!m->vals[i])
		return;
	m->vals[i] = NULL;
	m->nr--;
	for (j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
		uint32_t home = slot_of(m, m->keys[j]);

		/* move j back to the hole at i unless its home is in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = NULL;
			i = j;
		}
	}
}

static void u32map_release(struct u32map *m, void (*free_val)(void *))
{
	uint32_t i;

	for (i = 0; i < m->cap; i++)
		if (m->vals[i])
			free_val(m->vals[i]);
	free(m->keys);
	free(m->vals);
}

static void proc_free(void *p)
{
	struct proc *pr = p;

	free(pr->maps);
	free(pr);
}

int threads_new(struct threads **out)
{
	struct threads *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	*out = t;
	return 0;
}

void threads_free(struct threads *t)
{
	if (!t)
		return;
	u32map_release(&t->threads, free);
	u32map_release(&t->procs, proc_free);
	strtab_release(&t->comms);
	free(t);
}

static const char *comm_intern(struct threads *t, const char *name)
{
	int64_t i = strtab_add(&t->comms, name);

	return i < 0 ? NULL : t->comms.strs[i];
}

static struct proc *proc_get(struct threads *t, uint32_t pid)
{
	struct proc *p = u32map_get(&t->procs, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (u32map_add(&t->procs, pid, p) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static void proc_unuse(struct threads *t, uint32_t pid)
{
	struct proc *p = u32map_get(&t->procs, pid);

	if (!p || --p->users > 0)
		return;
	u32map_del(&t->procs, pid);
	proc_free(p);
}

/* The thread tid, created (or moved to pid) as needed; NULL on ENOMEM. */
static struct thread *thread_get(struct threads *t, uint32_t pid,
				 uint32_t tid)
{
	struct thread *th = u32map_get(&t->threads, tid);
	struct proc *p;

	if (th && th->pid == pid)
		return th;
	p = proc_get(t, pid);
	if (!p)
		return NULL;
	if (th) {
		uint32_t old = th->pid;

		p->users++;
		th->pid = pid;
		proc_unuse(t, old);
		return th;
	}
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->tid = tid;
	th->pid = pid;
	th->ptid = tid;
	th->ppid = pid;
	if (u32map_add(&t->threads, tid, th) < 0) {
		free(th);
		return NULL;
	}
	p->users++;
	return th;
}

int threads_set_comm(struct threads *t, uint32_t pid, uint32_t tid,
		     const char *comm, bool exec)
{
	struct thread *th = thread_get(t, pid, tid);
	const char *c = comm_intern(t, comm);

	if (!th || !c)
		return -ENOMEM;
	th->comm = c;
	th->dead = false;
	if (exec) {
		struct proc *p = u32map_get(&t->procs, pid);

		if (p)
			p->nr = 0;
	}
	return 0;
}

static int maps_reserve(struct proc *p, uint32_t want)
{
	size_t cap = p->cap;
	int ret = grow_array(&p->maps, &cap, want, sizeof(*p->maps), 16,
			     THREADS_MAX_MAPS);

	p->cap = (uint32_t)cap;
	return ret;
}

int threads_fork(struct threads *t, uint32_t pid, uint32_t ppid,
		 uint32_t tid, uint32_t ptid)
{
	const struct thread *parent = u32map_get(&t->threads, ptid);
	const char *comm = parent ? parent->comm : NULL;
	struct thread *th = u32map_get(&t->threads, tid);

	if (!comm) {
		/* a thread never named (started before the recording, its
		 * process synthesized from /proc): the process's name */
		parent = u32map_get(&t->threads, ppid);
		comm = parent ? parent->comm : NULL;
	}

	/*
	 * A live thread of this pid that already has a name saw its COMM
	 * before this FORK: records merged out of order.  The later name
	 * wins, and maps already there (an exec's) are kept.
	 */
	bool late = th && !th->dead && th->pid == pid && th->comm;

	if (late)
		comm = th->comm;
	if (pid != ppid) {
		struct proc *child = proc_get(t, pid);
		const struct proc *pp = u32map_get(&t->procs, ppid);
		int ret;

		if (!child)
			return -ENOMEM;
		if (!late)
			child->nr = 0;
		if (pp && pp->nr > 0 && child->nr == 0) {
			ret = maps_reserve(child, pp->nr);
			if (ret < 0)
				return ret;
			memcpy(child->maps, pp->maps,
			       pp->nr * sizeof(*pp->maps));
			child->nr = pp->nr;
		}
	}
	th = thread_get(t, pid, tid);
	if (!th)
		return -ENOMEM;
	th->comm = comm;
	th->ptid = ptid;
	th->ppid = ppid;
	th->dead = false;
	return 0;
}

void threads_exit(struct threads *t, uint32_t pid, uint32_t tid)
{
	struct thread *th = u32map_get(&t->threads, tid);
	struct dead *d;

	(void)pid;
	if (!th || th->dead)
		return;
	th->dead = true;
	th->gen = ++t->gen;
	if (t->dead_nr == THREADS_MAX_DEAD) {
		const struct dead *old = &t->dead[t->dead_head];
		struct thread *o = u32map_get(&t->threads, old->tid);

		if (o && o->dead && o->gen == old->gen) {
			uint32_t opid = o->pid;

			u32map_del(&t->threads, o->tid);
			free(o);
			proc_unuse(t, opid);
		}
		t->dead_head = (t->dead_head + 1) % THREADS_MAX_DEAD;
		t->dead_nr--;
	}
	d = &t->dead[(t->dead_head + t->dead_nr) % THREADS_MAX_DEAD];
	d->tid = tid;
	d->gen = th->gen;
	t->dead_nr++;
}

/* Index of the first map ending after addr (maps are sorted by both). */
static uint32_t first_ending_after(const struct proc *p, uint64_t addr)
{
	return (uint32_t)search_u64(p->maps, p->nr, sizeof(*p->maps),
				    offsetof(struct threads_map, end), addr,
				    SEARCH_FIRST_ABOVE);
}

int threads_add_map(struct threads *t, uint32_t pid, uint64_t start,
		    uint64_t len, uint64_t pgoff, struct dso *dso)
{
	struct threads_map nm = { start, start + len, pgoff, dso };
	struct threads_map left, right;
	struct proc *p;
	uint32_t i, j, nr_new;
	bool has_left, has_right;
	int ret;

	if (len == 0 || start + len < start)
		return -EINVAL;
	p = proc_get(t, pid);
	if (!p)
		return -ENOMEM;
	if (p->nr == 0 || p->maps[p->nr - 1].end <= start) {
		ret = maps_reserve(p, p->nr + 1);
		if (ret < 0)
			return ret;
		p->maps[p->nr++] = nm;
		return 0;
	}
	i = first_ending_after(p, start);
	for (j = i; j < p->nr && p->maps[j].start < nm.end; j++)
		;
	has_left = i < j && p->maps[i].start < start;
	has_right = i < j && p->maps[j - 1].end > nm.end;
	if (has_left) {
		left = p->maps[i];
		left.end = start;
	}
	if (has_right) {
		right = p->maps[j - 1];
		right.pgoff += nm.end - right.start;
		right.start = nm.end;
	}
	nr_new = p->nr - (j - i) + 1 + has_left + has_right;
	ret = maps_reserve(p, nr_new);
	if (ret < 0)
		return ret;
	memmove(&p->maps[i + has_left + 1 + has_right], &p->maps[j],
		(p->nr - j) * sizeof(*p->maps));
	if (has_left)
		p->maps[i++] = left;
	p->maps[i++] = nm;
	if (has_right)
		p->maps[i] = right;
	p->nr = nr_new;
	return 0;
}

const struct threads_map *threads_find_map(struct threads *t, uint32_t pid,
					   uint64_t ip)
{
	const struct proc *p = u32map_get(&t->procs, pid);
	uint32_t i;

	if (!p || p->nr == 0)
		return NULL;
	i = first_ending_after(p, ip);
	if (i < p->nr && p->maps[i].start <= ip)
		return &p->maps[i];
	return NULL;
}

const struct threads_map *threads_maps(struct threads *t, uint32_t pid,
				       uint32_t *nr)
{
	const struct proc *p = u32map_get(&t->procs, pid);

	*nr = p ? p->nr : 0;
	return p ? p->maps : NULL;
}

const char *threads_comm(struct threads *t, uint32_t tid)
{
	const struct thread *th = u32map_get(&t->threads, tid);
	const struct thread *up;

	if (!th || th->comm)
		return th ? th->comm : NULL;
	/*
	 * Forked before its parent was named: the parent's /proc COMM can
	 * be merged after a live FORK.  Ask the parent thread, then the
	 * parent process, as they are named now.
	 */
	up = u32map_get(&t->threads, th->ptid);
	if (up && up != th && up->comm)
		return up->comm;
	up = u32map_get(&t->threads, th->ppid);
	return up && up != th ? up->comm : NULL;
}
