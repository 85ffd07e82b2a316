/*
 * report_collect.c - what the report does with each batch: resolve a
 * sample's addresses (through the resolution, comm and srcline caches),
 * filter it, and add it to its row and, when needed, its callchain.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "grow.h"
#include "report.h"

/* ---- resolution --------------------------------------------------------- */

static bool mode_is_kernel(uint16_t misc, uint64_t ip)
{
	uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode == PERF_RECORD_MISC_KERNEL ||
	       (mode == PERF_RECORD_MISC_CPUMODE_UNKNOWN &&
		ip >= 0xffff800000000000ULL);
}

/*
 * The symbol id of ip in pid, through the cache.  A return address is
 * looked up `back` (1) byte earlier, inside its call, but shown unresolved
 * with its recorded value, as perf does.
 */
static uint32_t resolve(struct report *r, uint32_t pid, uint64_t ip,
			uint32_t back, uint16_t misc)
{
	bool kernel = mode_is_kernel(misc, ip);
	uint32_t mode = (uint32_t)kernel | back << 1;
	struct addrcache_key *slot;
	const uint32_t *hit = addrcache_get(&r->rcache, pid, ip, mode, &slot);
	struct pipe_symbol ps = PIPE_INIT(ps);
	uint32_t id;

	if (hit)
		return *hit;
	if (r->host->symbolize(r->ctx, pid, ip - back, misc, &ps) < 0)
		memset(&ps, 0, sizeof(ps));
	if (!ps.name)
		ps.offset += back;
	id = intern_sym(r, &ps, kernel, false);
	if (id != NONE)
		*(uint32_t *)addrcache_put(&r->rcache, slot, pid, ip, mode) = id;
	return id;
}

static uint32_t comm_of(struct report *r, uint32_t tid)
{
	struct addrcache_key *slot;
	const uint32_t *hit = addrcache_get(&r->ccache, tid, 0, 0, &slot);
	uint32_t comm;

	if (hit)
		return *hit;
	comm = intern_str(r, r->host->thread_comm(r->ctx, tid));
	*(uint32_t *)addrcache_put(&r->ccache, slot, tid, 0, 0) = comm;
	return comm;
}

/* ---- source lines ------------------------------------------------------- */

/* A copy of text kept for the run; its string id, or NONE. */
static uint32_t intern_copy(struct report *r, const char *text)
{
	char *copy = strdup(text);
	uint32_t id, slot;

	if (!copy) {
		r->short_of_room = true;
		return NONE;
	}
	id = intern_str(r, copy);
	if (id == NONE || str_of(r, id) != copy) {
		free(copy);
		return id;
	}
	slot = vec_push(&r->owned);
	if (slot == NONE) {
		r->short_of_room = true;
		free(copy);
		((struct str *)vec_at(&r->strs, id))->s = "??:0";
		return id;
	}
	*(char **)vec_at(&r->owned, slot) = copy;
	return id;
}

/*
 * The srcline key of a sampled address as perf shows it: FILE:LINE of
 * the innermost level (the file's base name), else SYM+OFFSET (decimal),
 * else DSO[OFFSET] (hex), else ??:0.
 */
static uint32_t srcline_of(struct report *r, uint32_t pid, uint64_t ip,
			   uint16_t misc)
{
	struct addrcache_key *slot;
	const uint32_t *hit = addrcache_get(&r->scache, pid, ip, 0, &slot);
	struct pipe_symbol ps = PIPE_INIT(ps);
	const struct pipe_srcline *sl;
	const struct pipe_src_frame *f = NULL;
	const char *base;
	char buf[1024];
	uint32_t str;

	if (hit)
		return *hit;
	sl = r->host->srcline(r->ctx, pid, ip, misc);
	if (sl->nr > 0)
		f = pipe_src_frame(sl, 0);
	if (f && f->file && f->line) {
		base = strrchr(f->file, '/');
		snprintf(buf, sizeof(buf), "%s:%" PRIu32,
			 base ? base + 1 : f->file, f->line);
	} else if (r->host->symbolize(r->ctx, pid, ip, misc, &ps) == 0 &&
		   ps.name) {
		snprintf(buf, sizeof(buf), "%s+%" PRIu64, ps.name, ps.offset);
	} else if (ps.dso_short) {
		snprintf(buf, sizeof(buf), "%s[%" PRIx64 "]", ps.dso_short,
			 ps.offset);
	} else {
		snprintf(buf, sizeof(buf), "??:0");
	}
	str = intern_copy(r, buf);
	if (str != NONE)
		*(uint32_t *)addrcache_put(&r->scache, slot, pid, ip, 0) = str;
	return str;
}

bool is_inlined(const struct report *r, uint32_t sym)
{
	return ((const struct sym *)vec_at(&r->syms, sym))->inlined;
}

/*
 * Push the functions inlined at a frame's address (innermost first) into
 * r->frames from nr, ahead of the frame's own symbol `sym`, as perf's
 * call graphs show them; returns the new count.
 */
static uint32_t add_inlines(struct report *r, uint32_t nr, uint32_t pid,
			    uint64_t ip, uint16_t misc, uint32_t sym)
{
	const struct sym *s = vec_at(&r->syms, sym);
	struct pipe_symbol ps = PIPE_INIT(ps);
	const struct pipe_srcline *sl;
	uint32_t i, id;

	if (s->kernel || !s->name)
		return nr;
	sl = r->host->srcline(r->ctx, pid, ip, misc);
	ps.dso = str_of(r, s->dso);
	for (i = 0; i + 1 < sl->nr && nr + 1 < MAX_CHAIN; i++) {
		ps.name = pipe_src_frame(sl, i)->function;
		if (!ps.name)
			continue;
		id = intern_sym(r, &ps, false, true);
		if (id != NONE)
			r->frames[nr++] = id;
	}
	return nr;
}

/* The first frame that is no inlined function: the sample's own symbol. */
static uint32_t leaf_of(const struct report *r, uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (!is_inlined(r, r->frames[i]))
			return i;
	return 0;
}

/* ---- rows and chains ---------------------------------------------------- */

static uint64_t row_hash(const struct row *k)
{
	uint64_t h = k->event;
	int i;

	for (i = 0; i < NR_KEYS; i++)
		h = itab_mix(h, k->k[i]);
	return h;
}

struct row *row_get(struct report *r, const struct row *k)
{
	uint64_t hash;
	uint32_t slot, idx;
	struct row *e;

	/* samples in a row mostly fall in the same row: no hash for them */
	if (r->last_row) {
		e = vec_at(&r->rows, r->last_row - 1);
		if (e->event == k->event &&
		    memcmp(e->k, k->k, sizeof(e->k)) == 0)
			return e;
	}
	hash = row_hash(k);
	for (slot = itab_first(&r->rows_h, hash);
	     (idx = itab_next(&r->rows_h, &slot)) != NONE;) {
		e = vec_at(&r->rows, idx);
		if (e->hash == hash && e->event == k->event &&
		    memcmp(e->k, k->k, sizeof(e->k)) == 0) {
			r->last_row = idx + 1;
			return e;
		}
	}
	idx = vec_push_indexed(r, &r->rows, &r->rows_h, hash, row_hash_of);
	if (idx == NONE)
		return NULL;
	e = vec_at(&r->rows, idx);
	e->event = k->event;
	memcpy(e->k, k->k, sizeof(e->k));
	e->hash = hash;
	r->last_row = idx + 1;
	return e;
}

void row_key(const struct report *r, struct row *k, uint32_t event,
	     uint32_t comm, uint32_t pid, uint32_t cpu, uint32_t sym,
	     uint32_t src)
{
	const struct sym *s = vec_at(&r->syms, sym);

	memset(k, 0, sizeof(*k));
	k->event = event;
	k->k[KEY_COMM] = r->key_on[KEY_COMM] ? comm : NONE;
	k->k[KEY_PID] = r->key_on[KEY_PID] ? pid : NONE;
	k->k[KEY_DSO] = r->key_on[KEY_DSO] ? s->dso : NONE;
	k->k[KEY_SYM] = r->key_on[KEY_SYM] ? sym : NONE;
	k->k[KEY_CPU] = r->key_on[KEY_CPU] ? cpu : NONE;
	k->k[KEY_SRCLINE] = r->key_on[KEY_SRCLINE] ? src : NONE;
}

static int add_chain(struct report *r, uint32_t event, uint32_t comm,
		     uint32_t pid, uint32_t cpu, uint32_t src, uint32_t nr,
		     uint64_t period)
{
	uint64_t hash = itab_mix(itab_mix(event, comm), pid);
	uint32_t slot, idx, i;
	struct chain *c;
	int ret;

	hash = itab_mix(itab_mix(hash, cpu), src);
	for (i = 0; i < nr; i++)
		hash = itab_mix(hash, r->frames[i]);
	hash = itab_mix(hash, nr);
	for (slot = itab_first(&r->chains_h, hash);
	     (idx = itab_next(&r->chains_h, &slot)) != NONE;) {
		c = vec_at(&r->chains, idx);
		if (c->hash == hash && c->len == nr && c->event == event &&
		    c->comm == comm && c->pid == pid && c->cpu == cpu &&
		    c->src == src &&
		    memcmp(vec_at(&r->pool, c->off), r->frames,
			   nr * sizeof(uint32_t)) == 0) {
			c->samples++;
			c->period += period;
			return 0;
		}
	}
	ret = grow_array(&r->pool.items, &r->pool.cap,
			 (size_t)r->pool.nr + nr, sizeof(uint32_t), 1024,
			 MAX_ITEMS);
	if (ret < 0)
		return ret;
	idx = vec_push_indexed(r, &r->chains, &r->chains_h, hash,
			       chain_hash_of);
	if (idx == NONE)
		return -ENOMEM;
	c = vec_at(&r->chains, idx);
	c->event = event;
	c->comm = comm;
	c->pid = pid;
	c->cpu = cpu;
	c->src = src;
	c->off = r->pool.nr;
	c->len = nr;
	c->hash = hash;
	c->samples = 1;
	c->period = period;
	memcpy(vec_at(&r->pool, r->pool.nr), r->frames, nr * sizeof(uint32_t));
	r->pool.nr += nr;
	return 0;
}

/* Fill r->frames from the sample (leaf first); returns the count. */
static uint32_t sample_frames(struct report *r, const struct pipe_sample *s)
{
	struct frames walk;
	struct frame f;
	uint32_t nr = 0, id;

	frames_init(&walk, s);
	while (nr < MAX_CHAIN && frames_next(&walk, &f)) {
		/* return addresses point after the call: look one back */
		id = resolve(r, s->pid, f.addr, f.ret, f.misc);
		if (id != NONE && r->inline_on)
			nr = add_inlines(r, nr, s->pid, f.addr - f.ret, f.misc,
					 id);
		if (id != NONE)
			r->frames[nr++] = id;
	}
	if (nr == 0) {
		id = resolve(r, s->pid, s->ip, 0, s->misc);
		if (id != NONE && r->inline_on)
			nr = add_inlines(r, nr, s->pid, s->ip, s->misc, id);
		if (id != NONE)
			r->frames[nr++] = id;
	}
	return nr;
}

static bool in_list(const char *v, const char *const *items, uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (v && strcmp(v, items[i]) == 0)
			return true;
	return false;
}

static bool dso_matches(const struct report *r, uint32_t dso)
{
	const char *d = str_of(r, dso);
	const char *base;

	if (!d)
		return in_list("[unknown]", r->f_dso, r->nr_f_dso);
	base = strrchr(d, '/');
	return in_list(d, r->f_dso, r->nr_f_dso) ||
	       in_list(base ? base + 1 : d, r->f_dso, r->nr_f_dso);
}

static bool sample_wanted(struct report *r, const struct pipe_sample *s,
			  uint32_t comm)
{
	uint32_t i;

	if (r->nr_f_comm && !in_list(str_of(r, comm), r->f_comm, r->nr_f_comm))
		return false;
	if (r->nr_f_pid) {
		for (i = 0; i < r->nr_f_pid; i++)
			if (r->f_pid[i] == s->pid)
				break;
		if (i == r->nr_f_pid)
			return false;
	}
	return true;
}

static bool leaf_wanted(const struct report *r, uint32_t sym)
{
	const struct sym *s = vec_at(&r->syms, sym);

	if (r->nr_f_dso && !dso_matches(r, s->dso))
		return false;
	if (r->nr_f_sym && !in_list(s->name, r->f_sym, r->nr_f_sym))
		return false;
	return true;
}

static int add_sample(struct report *r, const struct pipe_record *rec)
{
	struct pipe_sample *s = &r->sample;
	struct row k, *row;
	uint32_t comm, event, nr, leaf, src = NONE;
	uint64_t period;

	if (r->host->decode_sample(r->ctx, rec, s) < 0) {
		r->bad_samples++;
		return 0;
	}
	event = s->event < r->nr_events ? s->event : r->nr_events;
	period = (s->sample_type & PERF_SAMPLE_PERIOD) ? s->period : 1;
	r->totals[event].samples++;
	r->totals[event].period += period;
	comm = comm_of(r, s->tid);
	if (!sample_wanted(r, s, comm))
		return 0;
	if (r->need_chains) {
		nr = sample_frames(r, s);
	} else {
		r->frames[0] = resolve(r, s->pid, s->ip, 0, s->misc);
		nr = r->frames[0] != NONE;
	}
	if (r->short_of_room)
		return -ENOMEM; /* not a sample with frames left out */
	leaf = leaf_of(r, nr);
	if (nr == 0 || !leaf_wanted(r, r->frames[leaf]))
		return 0;
	if (r->key_on[KEY_SRCLINE])
		src = srcline_of(r, s->pid, s->ip, s->misc);
	if (r->short_of_room)
		return -ENOMEM;
	row_key(r, &k, event, comm, s->pid, s->cpu, r->frames[leaf], src);
	row = row_get(r, &k);
	if (!row)
		return -ENOMEM;
	row->samples++;
	row->period += period;
	if (!r->need_chains)
		return 0;
	return add_chain(r, event, r->key_on[KEY_COMM] ||
				   r->format == FORMAT_FOLDED ? comm : NONE,
			 r->key_on[KEY_PID] ? s->pid : NONE,
			 r->key_on[KEY_CPU] ? s->cpu : NONE, src, nr, period);
}

int report_consume(void *state, const struct pipe_batch *b)
{
	struct report *r = state;
	size_t i;
	int ret;

	for (i = 0; i < b->nr; i++) {
		const struct pipe_record *rec = &b->recs[i];
		const struct perf_event_header *h = rec->hdr;
		uint64_t v;

		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			ret = add_sample(r, rec);
			if (ret < 0) {
				r->host->error(r->ctx,
					       "cannot add a sample: %s",
					       strerror(-ret));
				return ret;
			}
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
			/* what (pid, ip) and tid mean may have changed */
			addrcache_forget(&r->rcache);
			addrcache_forget(&r->ccache);
			addrcache_forget(&r->scache);
			break;
		case PERF_RECORD_LOST:
			if (h->size >= 24) {
				memcpy(&v, (const char *)h + 16, sizeof(v));
				r->lost += v;
			}
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (h->size >= 16) {
				memcpy(&v, (const char *)h + 8, sizeof(v));
				r->lost += v;
			}
			break;
		case PERF_RECORD_THROTTLE:
			r->throttled++;
			break;
		case PERF_RECORD_UNTHROTTLE:
			r->unthrottled++;
			break;
		default:
			break;
		}
	}
	return 0;
}
