/*
 * sink_report.c - the `report` record sink: a table like
 * `perf report --stdio --no-children` (or --children), one per event,
 * with optional call graphs, CSV or folded stacks for flamegraph.pl.
 *
 * Memory is bounded by distinct symbols and callchains, not by samples:
 * each distinct (pid, address) is resolved once through a small cache,
 * samples add into a hash of rows keyed by resolved identities, and
 * callchains (when children, graphs or folded output need them) into a
 * hash of distinct chains from which graphs and children are computed at
 * the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe_plugin.h"

#define NONE UINT32_MAX
#define MAX_KEYS 6
#define MAX_CHAIN 512        /* frames kept per callchain */
#define MAX_ITEMS (UINT32_C(1) << 30) /* rows, symbols, chains, nodes */
#define RCACHE_BITS 14       /* resolution cache: 16K entries */
#define CCACHE_BITS 12       /* tid -> comm cache: 4K entries */
#define SCACHE_BITS 12       /* address -> srcline cache: 4K entries */
#define GRAPH_MIN_PERCENT 0.5

enum key { KEY_COMM, KEY_PID, KEY_DSO, KEY_SYM, KEY_CPU, KEY_SRCLINE,
	   NR_KEYS };
static const char *const key_names[NR_KEYS] = { "comm", "pid", "dso", "sym",
						"cpu", "srcline" };
static const char *const key_titles[NR_KEYS] = {
	"Command", "Pid", "Shared Object", "Symbol", "CPU", "Source:Line"
};

enum graph { GRAPH_CALLER, GRAPH_CALLEE, GRAPH_NONE };
enum format { FORMAT_TEXT, FORMAT_CSV, FORMAT_FOLDED };

/* An open-addressing index over items kept in the caller's array. */
struct htab {
	uint32_t *slots; /* item index + 1, 0: empty */
	uint32_t cap;    /* power of two, 0: not allocated */
	uint32_t nr;     /* used slots */
};

/* A growable array of fixed-size items. */
struct vec {
	void *items;
	uint32_t nr;
	uint32_t cap;
	uint32_t size; /* bytes per item */
};

struct str {
	const char *s; /* borrowed from the host (lives for the run) */
	uint64_t hash;
};

/* A resolved symbol identity. */
struct sym {
	const char *name;  /* NULL: unresolved */
	uint32_t dso;      /* index into strs, NONE: no map */
	uint32_t kernel;   /* 1: [k] */
	uint64_t offset;   /* unresolved: address in the dso (or ip) */
	uint64_t start;    /* named: its start (two functions may share a name) */
	uint64_t hash;
	uint32_t inlined;  /* 1: a function inlined there (inline=on) */
	uint32_t pad;
};

struct row {
	uint32_t event;
	uint32_t k[NR_KEYS]; /* comm, pid, dso, sym, cpu, srcline ids; NONE:
				unused */
	uint64_t hash;
	uint64_t samples;
	uint64_t period;     /* self */
	uint64_t children;   /* self + as a caller (children=on) */
	uint32_t stamp;      /* the last chain visit that met this row */
	uint32_t occ_off;    /* its graph's starts in report.occ */
	uint32_t occ_nr;
	uint32_t occ_fill;
};

struct chain {
	uint32_t event;
	uint32_t comm, pid, cpu; /* NONE where not kept */
	uint32_t src;            /* the leaf's srcline string, or NONE */
	uint32_t off, len;       /* frames (sym ids, leaf first) in pool */
	uint64_t hash;
	uint64_t samples;
	uint64_t period;
};

struct node {
	uint32_t sym;
	uint32_t child;   /* first child, NONE */
	uint32_t sibling; /* NONE */
	uint32_t kids;    /* distinct children, shown or not */
	uint64_t period;
};

/* Where a row's call graph starts: a chain and a frame of it. */
struct occ {
	uint32_t chain; /* index in chains */
	uint32_t pos;   /* frame index, leaf 0 */
};

/* One chain followed while a call graph is built. */
struct walk {
	uint32_t off;    /* its frames in pool */
	uint32_t len;
	uint32_t pos;    /* the frame this step reaches */
	int32_t dir;     /* +1 towards the root, -1 towards the leaf */
	uint32_t sym;    /* frame pos's symbol, for grouping */
	uint32_t pad;
	uint64_t period;
};

struct rcache {
	uint64_t ip;
	uint32_t pid;
	uint32_t gen;  /* 0: empty */
	uint32_t sym;
	uint32_t mode; /* bit 0: kernel; bit 1: looked up one byte back */
};

/* The srcline text of one sampled address. */
struct scache {
	uint64_t ip;
	uint32_t pid;
	uint32_t gen;  /* 0: empty */
	uint32_t str;  /* index into strs */
	uint32_t pad;
};

struct ccache {
	uint32_t tid;
	uint32_t gen;
	uint32_t comm;
	uint32_t pad;
};

struct event_total {
	uint64_t samples;
	uint64_t period;
};

struct report {
	const struct pipe_host *host;
	struct pipe_ctx *ctx;
	/* parameters */
	enum key keys[MAX_KEYS];
	uint32_t nr_keys;
	bool key_on[NR_KEYS];
	double percent_limit;
	int64_t top;
	bool children;
	bool inline_on;    /* inline frames in graphs and folded stacks */
	enum graph graph;
	enum format format;
	const char *output;
	const char *const *f_comm, *const *f_dso, *const *f_sym;
	uint32_t nr_f_comm, nr_f_dso, nr_f_sym;
	uint32_t *f_pid;
	uint32_t nr_f_pid;
	bool need_chains;
	/* state */
	FILE *out;         /* the host's output: never closed here */
	struct vec strs;   /* struct str: comms and dsos */
	struct htab strs_h;
	struct vec syms;   /* struct sym */
	struct htab syms_h;
	struct vec rows;   /* struct row */
	struct htab rows_h;
	struct vec chains; /* struct chain */
	struct htab chains_h;
	struct vec pool;   /* uint32_t frames of chains */
	struct vec nodes;  /* struct node: the graph being printed */
	struct occ *occ;   /* graph starts, grouped by row */
	struct walk *walks; /* scratch of build_graph */
	size_t walks_cap;
	uint32_t stamp;    /* chain visits, for rows met once per chain */
	struct rcache *rcache;
	struct ccache *ccache;
	struct scache *scache; /* srcline key only */
	struct vec owned;  /* char *: srcline texts, freed at close */
	uint32_t gen;      /* bumped when process state changes */
	struct event_total *totals;
	uint32_t nr_events;
	uint64_t lost, throttled, unthrottled, bad_samples;
	uint32_t frames[MAX_CHAIN];
};

static const struct pipe_param report_params[] = {
	{ "sort", PIPE_PARAM_LIST, 0, "comm+dso+sym",
	  "row keys, from comm, pid, dso, sym, cpu, srcline", NULL, 0, 0 },
	{ "percent_limit", PIPE_PARAM_STR, 0, "0",
	  "hide rows under this overhead percentage", NULL, 0, 0 },
	{ "top", PIPE_PARAM_INT, 0, "0",
	  "show at most this many rows per event (0: all)", NULL, 0,
	  1000000000 },
	{ "comm", PIPE_PARAM_LIST, 0, NULL,
	  "only samples of these commands", NULL, 0, 0 },
	{ "pid", PIPE_PARAM_LIST, 0, NULL,
	  "only samples of these process ids", NULL, 0, 0 },
	{ "dso", PIPE_PARAM_LIST, 0, NULL,
	  "only samples in these binaries (base or full name)", NULL, 0, 0 },
	{ "sym", PIPE_PARAM_LIST, 0, NULL,
	  "only samples in these symbols", NULL, 0, 0 },
	{ "children", PIPE_PARAM_BOOL, 0, "off",
	  "add callers' share from callchains (perf --children)", NULL, 0,
	  0 },
	{ "graph", PIPE_PARAM_ENUM, 0, "none",
	  "call graph under each row", "caller|callee|none", 0, 0 },
	{ "inline", PIPE_PARAM_BOOL, 0, "off",
	  "show inlined functions in graphs and folded stacks (DWARF)",
	  NULL, 0, 0 },
	{ "format", PIPE_PARAM_ENUM, 0, "text",
	  "output format (folded: stacks for flamegraph.pl)",
	  "text|csv|folded", 0, 0 },
	{ "output", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL, "-",
	  "output file (-: standard output)", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

/* ---- containers -------------------------------------------------------- */

static void *vec_at(const struct vec *v, uint32_t i)
{
	return (char *)v->items + (size_t)i * v->size;
}

/* Append a zeroed item; returns its index or NONE when out of memory. */
static uint32_t vec_push(struct vec *v)
{
	if (v->nr == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 64;
		void *n;

		if (v->cap >= MAX_ITEMS)
			return NONE;
		n = realloc(v->items, (size_t)cap * v->size);
		if (!n)
			return NONE;
		v->items = n;
		v->cap = cap;
	}
	memset(vec_at(v, v->nr), 0, v->size);
	return v->nr++;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

/* hash of item i, for rehashing */
typedef uint64_t (*hash_fn)(const struct vec *v, uint32_t i);

static int htab_grow(struct htab *h, const struct vec *v, hash_fn hf)
{
	uint32_t cap = h->cap ? h->cap * 2 : 256, i;
	uint32_t *slots;

	if (cap > 2 * MAX_ITEMS)
		return -E2BIG;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < v->nr; i++) {
		uint32_t s = (uint32_t)hf(v, i) & (cap - 1);

		while (slots[s])
			s = (s + 1) & (cap - 1);
		slots[s] = i + 1;
	}
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
	return 0;
}

static uint64_t str_hash_of(const struct vec *v, uint32_t i)
{
	return ((const struct str *)vec_at(v, i))->hash;
}

static uint64_t sym_hash_of(const struct vec *v, uint32_t i)
{
	return ((const struct sym *)vec_at(v, i))->hash;
}

static uint64_t row_hash_of(const struct vec *v, uint32_t i)
{
	return ((const struct row *)vec_at(v, i))->hash;
}

static uint64_t chain_hash_of(const struct vec *v, uint32_t i)
{
	return ((const struct chain *)vec_at(v, i))->hash;
}

/* Make room for one more item in h; returns 0 or negative errno. */
static int htab_reserve(struct htab *h, const struct vec *v, hash_fn hf)
{
	if ((uint64_t)(v->nr + 1) * 4 > (uint64_t)h->cap * 3)
		return htab_grow(h, v, hf);
	return 0;
}

/*
 * Probing: for (slot = htab_first(h, hash); (idx = htab_next(h, &slot))
 * != NONE;) visits the items stored along hash's probe sequence, up to
 * the first empty slot (none in a table not yet allocated).
 */
static uint32_t htab_first(const struct htab *h, uint64_t hash)
{
	return h->cap ? (uint32_t)hash & (h->cap - 1) : 0;
}

static uint32_t htab_next(const struct htab *h, uint32_t *slot)
{
	uint32_t idx;

	if (!h->cap || !h->slots[*slot])
		return NONE;
	idx = h->slots[*slot] - 1;
	*slot = (*slot + 1) & (h->cap - 1);
	return idx;
}

static void htab_put(struct htab *h, uint64_t hash, uint32_t idx)
{
	uint32_t s = (uint32_t)hash & (h->cap - 1);

	while (h->slots[s])
		s = (s + 1) & (h->cap - 1);
	h->slots[s] = idx + 1;
	h->nr++;
}

/* ---- interning ---------------------------------------------------------- */

static uint32_t intern_str(struct report *r, const char *s)
{
	uint64_t hash;
	uint32_t slot, idx;
	struct str *e;

	if (!s)
		return NONE;
	hash = hash_str(s);
	for (slot = htab_first(&r->strs_h, hash);
	     (idx = htab_next(&r->strs_h, &slot)) != NONE;) {
		e = vec_at(&r->strs, idx);
		if (e->hash == hash && strcmp(e->s, s) == 0)
			return idx;
	}
	if (htab_reserve(&r->strs_h, &r->strs, str_hash_of) < 0)
		return NONE;
	idx = vec_push(&r->strs);
	if (idx == NONE)
		return NONE;
	e = vec_at(&r->strs, idx);
	e->s = s;
	e->hash = hash;
	htab_put(&r->strs_h, hash, idx);
	return idx;
}

static const char *str_of(const struct report *r, uint32_t idx)
{
	if (idx == NONE)
		return NULL;
	return ((const struct str *)vec_at(&r->strs, idx))->s;
}

static bool sym_eq(const struct sym *a, const struct sym *b)
{
	if (a->dso != b->dso || a->kernel != b->kernel ||
	    a->inlined != b->inlined)
		return false;
	if (!a->name || !b->name)
		return !a->name && !b->name && a->offset == b->offset;
	return a->start == b->start && strcmp(a->name, b->name) == 0;
}

static uint32_t intern_sym(struct report *r, const struct pipe_symbol *ps,
			   bool kernel, bool inlined)
{
	struct sym k = { 0 }, *e;
	uint32_t slot, idx;

	k.name = ps->name;
	k.dso = intern_str(r, ps->dso);
	k.kernel = kernel;
	k.inlined = inlined;
	k.offset = ps->name ? 0 : ps->offset;
	/* static functions of one name in two files are two rows, as in
	 * perf; an inlined function is one row wherever it was inlined */
	k.start = ps->name && !inlined ? ps->sym_start : 0;
	k.hash = mix(mix(mix(mix(k.name ? hash_str(k.name) : k.offset, k.dso),
			     k.kernel), k.inlined), k.start);
	for (slot = htab_first(&r->syms_h, k.hash);
	     (idx = htab_next(&r->syms_h, &slot)) != NONE;) {
		e = vec_at(&r->syms, idx);
		if (e->hash == k.hash && sym_eq(e, &k))
			return idx;
	}
	if (htab_reserve(&r->syms_h, &r->syms, sym_hash_of) < 0)
		return NONE;
	idx = vec_push(&r->syms);
	if (idx == NONE)
		return NONE;
	*(struct sym *)vec_at(&r->syms, idx) = k;
	htab_put(&r->syms_h, k.hash, idx);
	return idx;
}

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
	uint64_t h = mix(mix(ip, pid), mode);
	struct rcache *c = &r->rcache[h & ((1u << RCACHE_BITS) - 1)];
	struct pipe_symbol ps = PIPE_INIT(ps);
	uint32_t id;

	if (c->gen == r->gen && c->ip == ip && c->pid == pid &&
	    c->mode == mode)
		return c->sym;
	if (r->host->symbolize(r->ctx, pid, ip - back, misc, &ps) < 0)
		memset(&ps, 0, sizeof(ps));
	if (!ps.name)
		ps.offset += back;
	id = intern_sym(r, &ps, kernel, false);
	if (id != NONE) {
		c->gen = r->gen;
		c->ip = ip;
		c->pid = pid;
		c->mode = mode;
		c->sym = id;
	}
	return id;
}

static uint32_t comm_of(struct report *r, uint32_t tid)
{
	struct ccache *c = &r->ccache[(tid * 2654435761u) >>
				      (32 - CCACHE_BITS)];

	if (c->gen == r->gen && c->tid == tid)
		return c->comm;
	c->gen = r->gen;
	c->tid = tid;
	c->comm = intern_str(r, r->host->thread_comm(r->ctx, tid));
	return c->comm;
}

/* ---- source lines ------------------------------------------------------- */

/* A copy of text kept for the run; its string id, or NONE. */
static uint32_t intern_copy(struct report *r, const char *text)
{
	char *copy = strdup(text);
	uint32_t id, slot;

	if (!copy)
		return NONE;
	id = intern_str(r, copy);
	if (id == NONE || str_of(r, id) != copy) {
		free(copy);
		return id;
	}
	slot = vec_push(&r->owned);
	if (slot == NONE) {
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
	uint64_t h = mix(ip, pid);
	struct scache *c = &r->scache[h & ((1u << SCACHE_BITS) - 1)];
	struct pipe_symbol ps = PIPE_INIT(ps);
	const struct pipe_srcline *sl;
	const struct pipe_src_frame *f = NULL;
	const char *base;
	char buf[1024];

	if (c->gen == r->gen && c->ip == ip && c->pid == pid)
		return c->str;
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
	c->str = intern_copy(r, buf);
	c->gen = c->str != NONE ? r->gen : 0;
	c->ip = ip;
	c->pid = pid;
	return c->str;
}

static bool is_inlined(const struct report *r, uint32_t sym)
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
		h = mix(h, k->k[i]);
	return h;
}

static struct row *row_get(struct report *r, const struct row *k)
{
	uint64_t hash = row_hash(k);
	uint32_t slot, idx;
	struct row *e;

	for (slot = htab_first(&r->rows_h, hash);
	     (idx = htab_next(&r->rows_h, &slot)) != NONE;) {
		e = vec_at(&r->rows, idx);
		if (e->hash == hash && e->event == k->event &&
		    memcmp(e->k, k->k, sizeof(e->k)) == 0)
			return e;
	}
	if (htab_reserve(&r->rows_h, &r->rows, row_hash_of) < 0)
		return NULL;
	idx = vec_push(&r->rows);
	if (idx == NONE)
		return NULL;
	e = vec_at(&r->rows, idx);
	e->event = k->event;
	memcpy(e->k, k->k, sizeof(e->k));
	e->hash = hash;
	htab_put(&r->rows_h, hash, idx);
	return e;
}

/* The row key of frame `sym` for a sample's comm, pid and cpu. */
static void row_key(const struct report *r, struct row *k, uint32_t event,
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
	uint64_t hash = mix(mix(mix(mix(event, comm), pid), cpu), src);
	uint32_t slot, idx, i;
	struct chain *c;

	for (i = 0; i < nr; i++)
		hash = mix(hash, r->frames[i]);
	hash = mix(hash, nr);
	for (slot = htab_first(&r->chains_h, hash);
	     (idx = htab_next(&r->chains_h, &slot)) != NONE;) {
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
	if (htab_reserve(&r->chains_h, &r->chains, chain_hash_of) < 0)
		return -ENOMEM;
	if (r->pool.nr + nr > MAX_ITEMS || r->pool.nr + nr < r->pool.nr)
		return -E2BIG;
	while (r->pool.cap < r->pool.nr + nr) {
		uint32_t cap = r->pool.cap ? r->pool.cap * 2 : 1024;
		void *n = realloc(r->pool.items,
				  (size_t)cap * sizeof(uint32_t));

		if (!n)
			return -ENOMEM;
		r->pool.items = n;
		r->pool.cap = cap;
	}
	idx = vec_push(&r->chains);
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
	htab_put(&r->chains_h, hash, idx);
	return 0;
}

/* Fill r->frames from the sample (leaf first); returns the count. */
static uint32_t sample_frames(struct report *r, const struct pipe_sample *s)
{
	uint16_t misc = s->misc;
	uint32_t nr = 0, id;
	uint64_t i;
	bool seen_ip = false;

	for (i = 0; i < s->nr_callchain && nr < MAX_CHAIN; i++) {
		uint64_t a = s->callchain[i];

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			if (a == (uint64_t)PERF_CONTEXT_KERNEL)
				misc = PERF_RECORD_MISC_KERNEL;
			else if (a == (uint64_t)PERF_CONTEXT_USER)
				misc = PERF_RECORD_MISC_USER;
			else
				misc = PERF_RECORD_MISC_CPUMODE_UNKNOWN;
			/* the first address of a context is where it was
			 * interrupted, not a return address */
			seen_ip = false;
			continue;
		}
		/* return addresses point after the call: look one back */
		id = resolve(r, s->pid, a, seen_ip, misc);
		if (id != NONE && r->inline_on)
			nr = add_inlines(r, nr, s->pid, a - seen_ip, misc, id);
		if (id != NONE)
			r->frames[nr++] = id;
		seen_ip = true;
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
	struct pipe_sample s = PIPE_INIT(s);
	struct row k, *row;
	uint32_t comm, event, nr, leaf, src = NONE;
	uint64_t period;

	if (r->host->decode_sample(r->ctx, rec, &s) < 0) {
		r->bad_samples++;
		return 0;
	}
	event = s.event < r->nr_events ? s.event : r->nr_events;
	period = (s.sample_type & PERF_SAMPLE_PERIOD) ? s.period : 1;
	r->totals[event].samples++;
	r->totals[event].period += period;
	comm = comm_of(r, s.tid);
	if (!sample_wanted(r, &s, comm))
		return 0;
	if (r->need_chains) {
		nr = sample_frames(r, &s);
	} else {
		r->frames[0] = resolve(r, s.pid, s.ip, 0, s.misc);
		nr = r->frames[0] != NONE;
	}
	leaf = leaf_of(r, nr);
	if (nr == 0 || !leaf_wanted(r, r->frames[leaf]))
		return 0;
	if (r->key_on[KEY_SRCLINE])
		src = srcline_of(r, s.pid, s.ip, s.misc);
	row_key(r, &k, event, comm, s.pid, s.cpu, r->frames[leaf], src);
	row = row_get(r, &k);
	if (!row)
		return -ENOMEM;
	row->samples++;
	row->period += period;
	if (!r->need_chains)
		return 0;
	return add_chain(r, event, r->key_on[KEY_COMM] ||
				   r->format == FORMAT_FOLDED ? comm : NONE,
			 r->key_on[KEY_PID] ? s.pid : NONE,
			 r->key_on[KEY_CPU] ? s.cpu : NONE, src, nr, period);
}

static int report_consume(void *state, const struct pipe_batch *b)
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
			if (++r->gen == 0)
				r->gen = 1;
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

/* ---- the end: children, graphs, output ---------------------------------- */

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/*
 * The row of frame j of chain c (frames f), created as needed; *first is
 * false when a frame nearer the leaf in this chain had the same row, so a
 * recursive function counts once.  Every chain visit takes a new stamp.
 */
static struct row *frame_row(struct report *r, const struct chain *c,
			     const uint32_t *f, uint32_t j, bool *first)
{
	struct row k, *row;

	row_key(r, &k, c->event, c->comm, c->pid, c->cpu, f[j], c->src);
	row = row_get(r, &k);
	if (!row)
		return NULL;
	*first = row->stamp != r->stamp;
	row->stamp = r->stamp;
	return row;
}

/* A new stamp for the next chain visit (0 marks no visit yet). */
static void next_stamp(struct report *r)
{
	if (++r->stamp == 0) {
		uint32_t i;

		for (i = 0; i < r->rows.nr; i++)
			((struct row *)vec_at(&r->rows, i))->stamp = 0;
		r->stamp = 1;
	}
}

static int compute_children(struct report *r)
{
	uint32_t i, j;
	bool first, leaf;

	for (i = 0; i < r->rows.nr; i++) {
		struct row *row = vec_at(&r->rows, i);

		row->children = row->period;
	}
	for (i = 0; i < r->chains.nr; i++) {
		const struct chain *c = vec_at(&r->chains, i);
		const uint32_t *f = vec_at(&r->pool, c->off);
		struct row *row;

		/* every distinct row above the leaf gets the period once;
		 * inlined functions have no rows */
		next_stamp(r);
		leaf = true;
		for (j = 0; j < c->len; j++) {
			if (is_inlined(r, f[j]))
				continue;
			row = frame_row(r, c, f, j, &first);
			if (!row)
				return -ENOMEM;
			if (first && !leaf)
				row->children += c->period;
			leaf = false;
		}
	}
	return 0;
}

/*
 * Where each row's call graph starts: (chain, frame) pairs grouped by
 * row in r->occ, row->occ_off and row->occ_nr.  Without children, a
 * leaf's row gets the whole chain; with children, every distinct row of
 * the chain gets the part seen from its frame nearest the leaf.  Linear
 * in the frames of the distinct chains.
 */
static int find_occurrences(struct report *r)
{
	uint32_t pass, i, j, total = 0;
	bool first;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < r->chains.nr; i++) {
			const struct chain *c = vec_at(&r->chains, i);
			const uint32_t *f = vec_at(&r->pool, c->off);

			next_stamp(r);
			for (j = 0; j < c->len; j++) {
				struct row *row;

				if (is_inlined(r, f[j]))
					continue;
				row = frame_row(r, c, f, j, &first);
				if (!row)
					return -ENOMEM;
				if (first && pass == 0) {
					row->occ_nr++;
				} else if (first) {
					r->occ[row->occ_off + row->occ_fill].chain = i;
					r->occ[row->occ_off + row->occ_fill].pos = j;
					row->occ_fill++;
				}
				if (!r->children)
					break; /* the leaf's row only */
			}
		}
		if (pass == 1)
			break;
		for (i = 0; i < r->rows.nr; i++) {
			struct row *row = vec_at(&r->rows, i);

			row->occ_off = total;
			row->occ_fill = 0;
			if (total + row->occ_nr < total ||
			    total + row->occ_nr > MAX_ITEMS)
				return -E2BIG;
			total += row->occ_nr;
		}
		r->occ = malloc(((size_t)total + 1) * sizeof(*r->occ));
		if (!r->occ)
			return -ENOMEM;
	}
	return 0;
}

static uint32_t node_new(struct report *r, uint32_t sym, uint64_t period)
{
	uint32_t idx = vec_push(&r->nodes);
	struct node *n;

	if (idx == NONE)
		return NONE;
	n = vec_at(&r->nodes, idx);
	n->sym = sym;
	n->child = NONE;
	n->sibling = NONE;
	n->period = period;
	return idx;
}

static int walk_cmp(const void *a, const void *b)
{
	const struct walk *x = a, *y = b;

	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/*
 * The children of node `at` from the walks w[0..n) (each at its next
 * frame): one child per symbol, kept only when the graph can show it
 * (GRAPH_MIN_PERCENT of total), except a root's lone child, which is
 * always shown.  Work is bounded by the walks that reach shown nodes.
 */
static int tree_grow(struct report *r, uint32_t at, struct walk *w,
		     size_t n, uint64_t total, bool root)
{
	size_t i, g, start, m, groups = 0;
	struct node *parent;
	uint32_t kid;
	uint64_t sum;
	int ret;

	for (i = 0; i < n; i++) {
		const uint32_t *f = vec_at(&r->pool, w[i].off);

		w[i].sym = f[w[i].pos];
	}
	qsort(w, n, sizeof(*w), walk_cmp);
	for (i = 0; i < n; i = g)
		for (g = i, groups++; g < n && w[g].sym == w[i].sym; g++)
			;
	/* print_graph tells a lone first child from several */
	((struct node *)vec_at(&r->nodes, at))->kids = (uint32_t)groups;
	for (start = 0; start < n; start = g) {
		sum = 0;
		for (g = start; g < n && w[g].sym == w[start].sym; g++)
			sum += w[g].period;
		if (!(root && groups == 1) &&
		    pct(sum, total) < GRAPH_MIN_PERCENT)
			continue;
		kid = node_new(r, w[start].sym, sum);
		if (kid == NONE)
			return -ENOMEM;
		parent = vec_at(&r->nodes, at);
		((struct node *)vec_at(&r->nodes, kid))->sibling = parent->child;
		parent->child = kid;
		/* the walks that go on below the kid, moved to the front of
		 * the group: entries before i are read already */
		for (m = 0, i = start; i < g; i++) {
			int64_t next = (int64_t)w[i].pos + w[i].dir;

			if (next < 0 || next >= (int64_t)w[i].len)
				continue;
			w[start + m] = w[i];
			w[start + m].pos = (uint32_t)next;
			m++;
		}
		if (m) {
			ret = tree_grow(r, kid, w + start, m, total, false);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/*
 * The call graph of one row into r->nodes (emptied first); *root is its
 * root node.  Callee order walks from a frame towards the root of the
 * chain, caller order towards the leaf; without children, a leaf row's
 * graph is the whole chain.
 */
static int build_graph(struct report *r, const struct row *row,
		       uint64_t total, uint32_t *root)
{
	size_t i, n = row->occ_nr;
	uint64_t sum = 0;
	int ret;

	r->nodes.nr = 0;
	*root = NONE;
	if (!n)
		return 0;
	if (n > r->walks_cap) {
		struct walk *w = realloc(r->walks, n * sizeof(*w));

		if (!w)
			return -ENOMEM;
		r->walks = w;
		r->walks_cap = n;
	}
	for (i = 0; i < n; i++) {
		const struct occ *o = &r->occ[row->occ_off + i];
		const struct chain *c = vec_at(&r->chains, o->chain);
		struct walk *w = &r->walks[i];

		w->off = c->off;
		w->len = c->len;
		w->period = c->period;
		w->dir = r->graph == GRAPH_CALLEE ? 1 : -1;
		w->pos = r->children ? o->pos :
			 r->graph == GRAPH_CALLEE ? 0 : c->len - 1;
		sum += c->period;
	}
	*root = node_new(r, NONE, sum);
	if (*root == NONE)
		return -ENOMEM;
	ret = tree_grow(r, *root, r->walks, n, total, true);
	return ret;
}

/* Display text of a symbol: "[.] name", "[k] name", or the unknown form. */
/*
 * Names come from the recording (COMM, file names, symbols): make buf
 * safe for a terminal in place.  C0 controls, DEL, bytes that are not
 * valid UTF-8 and the C1 controls (U+0080..U+009F) become "\xHH"; valid
 * UTF-8 stays.  `semi`, when not 0, replaces ';' (the folded format's
 * frame separator, as stackcollapse-perf.pl does).  Idempotent.
 */
static void text_clean(char *buf, size_t cap, char semi)
{
	const unsigned char *in;
	char tmp[1024];
	size_t n = 0, i = 0, len = strlen(buf);

	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	in = (const unsigned char *)tmp;
	while (i < len) {
		unsigned c = in[i], want = 1, k;
		bool ok = c >= 0x20 && c < 0x7f;

		if (c >= 0xc2 && c <= 0xf4) {
			unsigned lo = 0x80, hi = 0xbf;

			want = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
			if (c == 0xc2)
				lo = 0xa0; /* U+0080..U+009F: C1 controls */
			else if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* surrogates */
			else if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* above U+10FFFF */
			ok = i + want <= len && in[i + 1] >= lo &&
			     in[i + 1] <= hi;
			for (k = 2; ok && k < want; k++)
				ok = in[i + k] >= 0x80 && in[i + k] <= 0xbf;
			if (!ok)
				want = 1;
		}
		if (ok && n + want < cap) {
			memcpy(buf + n, in + i, want);
			if (semi && c == ';')
				buf[n] = semi;
			n += want;
		} else if (!ok && n + 4 < cap) {
			snprintf(buf + n, cap - n, "\\x%02x", c);
			n += 4;
		} else {
			break;
		}
		i += want;
	}
	buf[n] = '\0';
}

static void sym_text(const struct report *r, uint32_t id, char *buf,
		     size_t cap, bool marker)
{
	const struct sym *s = vec_at(&r->syms, id);
	const char *dso = str_of(r, s->dso);
	const char *base = dso ? strrchr(dso, '/') : NULL;
	const char *mk = !marker ? "" : s->kernel ? "[k] " : "[.] ";

	base = base ? base + 1 : dso;
	if (s->name && s->inlined)
		snprintf(buf, cap, "%s%s (inlined)", mk, s->name);
	else if (s->name)
		snprintf(buf, cap, "%s%s", mk, s->name);
	else if (dso)
		snprintf(buf, cap, "%s[unknown] %s+0x%" PRIx64, mk, base,
			 s->offset);
	else
		snprintf(buf, cap, "%s[unknown] 0x%" PRIx64, mk, s->offset);
	text_clean(buf, cap, 0);
}

static void key_text(const struct report *r, const struct row *row,
		     enum key key, char *buf, size_t cap)
{
	const char *dso, *base;

	switch (key) {
	case KEY_COMM:
		snprintf(buf, cap, "%s", str_of(r, row->k[KEY_COMM]) ?
						str_of(r, row->k[KEY_COMM]) :
						"[unknown]");
		text_clean(buf, cap, 0);
		break;
	case KEY_PID:
		snprintf(buf, cap, "%" PRIu32, row->k[KEY_PID]);
		break;
	case KEY_DSO:
		dso = str_of(r, row->k[KEY_DSO]);
		base = dso ? strrchr(dso, '/') : NULL;
		snprintf(buf, cap, "%s", base ? base + 1 : dso ? dso
							: "[unknown]");
		text_clean(buf, cap, 0);
		break;
	case KEY_SYM:
		sym_text(r, row->k[KEY_SYM], buf, cap, true);
		break;
	case KEY_CPU:
		snprintf(buf, cap, "%03" PRIu32, row->k[KEY_CPU]);
		break;
	case KEY_SRCLINE:
		snprintf(buf, cap, "%s", str_of(r, row->k[KEY_SRCLINE]) ?
					 str_of(r, row->k[KEY_SRCLINE]) :
					 "??:0");
		text_clean(buf, cap, 0);
		break;
	default:
		buf[0] = '\0';
	}
}


static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct report *r = arg;
	const struct row *x = vec_at(&r->rows, *(const uint32_t *)a);
	const struct row *y = vec_at(&r->rows, *(const uint32_t *)b);
	uint64_t vx = r->children ? x->children : x->period;
	uint64_t vy = r->children ? y->children : y->period;
	char bx[512], by[512];
	uint32_t i;
	int c;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	for (i = 0; i < r->nr_keys; i++) {
		key_text(r, x, r->keys[i], bx, sizeof(bx));
		key_text(r, y, r->keys[i], by, sizeof(by));
		c = strcmp(bx, by);
		if (c)
			return c;
	}
	return 0;
}

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int node_cmp(const void *a, const void *b, void *arg)
{
	const struct report *r = arg;
	const struct node *x = vec_at(&r->nodes, *(const uint32_t *)a);
	const struct node *y = vec_at(&r->nodes, *(const uint32_t *)b);

	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/*
 * Print the children of node `at` in perf's graph style: a lone child
 * continues the line below; several branch with their share of total.
 */
static void print_tree(struct report *r, uint32_t at, const char *prefix,
		       uint64_t total)
{
	/* at most 200 children can each hold GRAPH_MIN_PERCENT */
	uint32_t kids[256], nr, i, c;
	char name[1024], sub[4096];

	for (;;) {
		const struct node *n = vec_at(&r->nodes, at);
		const struct node *k;

		nr = 0;
		for (c = n->child; c != NONE && nr < 256;) {
			k = vec_at(&r->nodes, c);
			if (pct(k->period, total) >= GRAPH_MIN_PERCENT)
				kids[nr++] = c;
			c = k->sibling;
		}
		qsort_r(kids, nr, sizeof(kids[0]), node_cmp, r);
		k = nr ? vec_at(&r->nodes, kids[0]) : NULL;
		if (nr != 1 || k->period != n->period)
			break;
		/* a lone child carrying everything continues the line */
		sym_text(r, k->sym, name, sizeof(name), false);
		fprintf(r->out, "%s%s\n", prefix, name);
		at = kids[0];
	}
	for (i = 0; i < nr; i++) {
		const struct node *k = vec_at(&r->nodes, kids[i]);
		bool last = i + 1 == nr;
		char head[32];
		int hl;

		sym_text(r, k->sym, name, sizeof(name), false);
		hl = snprintf(head, sizeof(head), "--%.2f%%--",
			      pct(k->period, total));
		fprintf(r->out, "%s%s%s%s\n", prefix, last ? " " : "|", head,
			name);
		snprintf(sub, sizeof(sub), "%s%s%*s", prefix, last ? " " : "|",
			 hl, "");
		if (strlen(sub) < sizeof(sub) - 1)
			print_tree(r, kids[i], sub, total);
		if (!last)
			fprintf(r->out, "%s|\n", prefix);
	}
}

static int print_graph(struct report *r, const struct row *row,
		       uint64_t total)
{
	const struct node *root;
	char name[1024];
	uint32_t first, at;
	int ret;

	ret = build_graph(r, row, total, &at);
	if (ret < 0 || at == NONE)
		return ret;
	root = vec_at(&r->nodes, at);
	first = root->child;
	fprintf(r->out, "            |\n");
	if (first != NONE && root->kids == 1) {
		const struct node *f = vec_at(&r->nodes, first);

		sym_text(r, f->sym, name, sizeof(name), false);
		fprintf(r->out, "            ---%s\n", name);
		print_tree(r, first, "               ", total);
	} else {
		print_tree(r, at, "            ", total);
	}
	fprintf(r->out, "\n");
	return 0;
}

/* Rows of one event, sorted, in *out (malloc'd); returns the count. */
static uint32_t event_rows(struct report *r, uint32_t event, uint32_t **out)
{
	uint32_t *idx = malloc(((size_t)r->rows.nr + 1) * sizeof(*idx));
	uint32_t i, nr = 0;

	*out = idx;
	if (!idx)
		return 0;
	for (i = 0; i < r->rows.nr; i++)
		if (((const struct row *)vec_at(&r->rows, i))->event == event)
			idx[nr++] = i;
	qsort_r(idx, nr, sizeof(*idx), row_cmp, r);
	return nr;
}

static const char *event_name(const struct report *r, uint32_t e)
{
	const struct pipe_meta *m = r->host->meta(r->ctx);

	if (m && e < m->nr_events && pipe_meta_event(m, e)->name)
		return pipe_meta_event(m, e)->name;
	return "unknown";
}

static bool row_shown(const struct report *r, const struct row *row,
		      uint64_t total, uint32_t rank)
{
	uint64_t v = r->children ? row->children : row->period;

	if (r->top > 0 && rank >= r->top)
		return false;
	return pct(v, total) >= r->percent_limit;
}

static int print_text(struct report *r, uint32_t event, const uint32_t *idx,
		      uint32_t nr)
{
	const struct event_total *t = &r->totals[event];
	size_t width[MAX_KEYS];
	char buf[1024];
	uint32_t i, j, shown = 0;
	int ret;

	snprintf(buf, sizeof(buf), "%s", event_name(r, event));
	text_clean(buf, sizeof(buf), 0);
	fprintf(r->out, "#\n# Samples: %" PRIu64 " of event '%s'\n"
			"# Event count (approx.): %" PRIu64 "\n#\n",
		t->samples, buf, t->period);
	for (j = 0; j < r->nr_keys; j++)
		width[j] = strlen(key_titles[r->keys[j]]);
	for (i = 0; i < nr; i++) {
		const struct row *row = vec_at(&r->rows, idx[i]);

		if (!row_shown(r, row, t->period, i))
			break;
		shown++;
		for (j = 0; j + 1 < r->nr_keys; j++) {
			key_text(r, row, r->keys[j], buf, sizeof(buf));
			if (strlen(buf) > width[j])
				width[j] = strlen(buf);
		}
	}
	fprintf(r->out, r->children ? "# Children      Self  Samples"
				    : "# Overhead  Samples");
	for (j = 0; j < r->nr_keys; j++)
		fprintf(r->out, "  %-*s",
			j + 1 < r->nr_keys ? (int)width[j] : 0,
			key_titles[r->keys[j]]);
	fprintf(r->out, r->children ? "\n# ........  ........  .......":
				      "\n# ........  .......");
	for (j = 0; j < r->nr_keys; j++) {
		size_t w = j + 1 < r->nr_keys ? width[j]
					      : strlen(key_titles[r->keys[j]]);

		fputs("  ", r->out);
		while (w--)
			fputc('.', r->out);
	}
	fprintf(r->out, "\n#\n");
	for (i = 0; i < shown; i++) {
		const struct row *row = vec_at(&r->rows, idx[i]);

		if (r->children)
			fprintf(r->out, "  %7.2f%%  %7.2f%%  %7" PRIu64,
				pct(row->children, t->period),
				pct(row->period, t->period), row->samples);
		else
			fprintf(r->out, "  %7.2f%%  %7" PRIu64,
				pct(row->period, t->period), row->samples);
		for (j = 0; j < r->nr_keys; j++) {
			key_text(r, row, r->keys[j], buf, sizeof(buf));
			fprintf(r->out, "  %-*s",
				j + 1 < r->nr_keys ? (int)width[j] : 0, buf);
		}
		fputc('\n', r->out);
		if (r->graph == GRAPH_NONE)
			continue;
		ret = print_graph(r, row, t->period);
		if (ret < 0)
			return ret;
	}
	fprintf(r->out, "\n");
	return 0;
}

static void print_csv(struct report *r, uint32_t event, const uint32_t *idx,
		      uint32_t nr)
{
	const struct event_total *t = &r->totals[event];
	char buf[1024];
	uint32_t i, j;

	for (i = 0; i < nr; i++) {
		const struct row *row = vec_at(&r->rows, idx[i]);

		if (!row_shown(r, row, t->period, i))
			break;
		snprintf(buf, sizeof(buf), "%s", event_name(r, event));
		text_clean(buf, sizeof(buf), 0);
		csv_field(r->out, buf);
		if (r->children)
			fprintf(r->out, ",%.2f", pct(row->children, t->period));
		fprintf(r->out, ",%.2f,%" PRIu64 ",%" PRIu64,
			pct(row->period, t->period), row->samples, row->period);
		for (j = 0; j < r->nr_keys; j++) {
			key_text(r, row, r->keys[j], buf, sizeof(buf));
			fputc(',', r->out);
			csv_field(r->out, buf);
		}
		fputc('\n', r->out);
	}
}

/* flamegraph.pl input: "comm;root;...;leaf count", one distinct stack a
 * line, in first-seen order (flamegraph.pl sorts itself). */
static void print_folded(struct report *r)
{
	char name[1024];
	uint32_t i, j;

	for (i = 0; i < r->chains.nr; i++) {
		const struct chain *c = vec_at(&r->chains, i);
		const uint32_t *f = vec_at(&r->pool, c->off);
		const char *comm = str_of(r, c->comm);

		snprintf(name, sizeof(name), "%s", comm ? comm : "[unknown]");
		text_clean(name, sizeof(name), ':');
		fputs(name, r->out);
		for (j = c->len; j-- > 0;) {
			sym_text(r, f[j], name, sizeof(name), false);
			text_clean(name, sizeof(name), ':');
			fputc(';', r->out);
			fputs(name, r->out);
		}
		fprintf(r->out, " %" PRIu64 "\n", c->samples);
	}
}

static int report_finish(void *state)
{
	struct report *r = state;
	uint32_t e, nr, *idx, j;
	int ret = 0;

	if (r->children) {
		ret = compute_children(r);
		if (ret < 0)
			goto fail;
	}
	if (r->graph != GRAPH_NONE && r->format == FORMAT_TEXT) {
		ret = find_occurrences(r);
		if (ret < 0)
			goto fail;
	}
	if (r->format == FORMAT_FOLDED) {
		print_folded(r);
		goto flush;
	}
	if (r->format == FORMAT_TEXT) {
		uint64_t total = 0;

		for (e = 0; e <= r->nr_events; e++)
			total += r->totals[e].samples;
		fprintf(r->out, "# pipe report\n# Total samples: %" PRIu64
				"\n# Total Lost Samples: %" PRIu64
				"\n# Throttled: %" PRIu64 "\n",
			total, r->lost, r->throttled);
		if (r->bad_samples)
			fprintf(r->out, "# Malformed samples skipped: %" PRIu64
					"\n", r->bad_samples);
	} else {
		fprintf(r->out, "event%s,overhead,samples,period",
			r->children ? ",children" : "");
		for (j = 0; j < r->nr_keys; j++)
			fprintf(r->out, ",%s", key_names[r->keys[j]]);
		fputc('\n', r->out);
	}
	for (e = 0; e <= r->nr_events; e++) {
		if (r->totals[e].samples == 0)
			continue;
		nr = event_rows(r, e, &idx);
		if (!idx) {
			ret = -ENOMEM;
			goto fail;
		}
		if (r->format == FORMAT_TEXT)
			ret = print_text(r, e, idx, nr);
		else
			print_csv(r, e, idx, nr);
		free(idx);
		if (ret < 0)
			goto fail;
	}
flush:
	if (fflush(r->out) != 0 || ferror(r->out)) {
		r->host->error(r->ctx, "cannot write the report '%s': %s",
			       r->output, strerror(errno));
		return -EIO;
	}
	return 0;
fail:
	r->host->error(r->ctx, "cannot build the report: %s", strerror(-ret));
	return ret;
}

/* ---- setup -------------------------------------------------------------- */

static int parse_keys(struct report *r)
{
	const char *const *items;
	uint32_t n = r->host->arg_list(r->ctx, "sort", &items), i, k;

	if (n == 0 || n > MAX_KEYS) {
		r->host->error(r->ctx, "bad sort '%s': give 1 to %d keys",
			       r->host->arg_str(r->ctx, "sort"), MAX_KEYS);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < NR_KEYS; k++)
			if (strcmp(items[i], key_names[k]) == 0)
				break;
		if (k == NR_KEYS || r->key_on[k]) {
			r->host->error(r->ctx, "%s sort key '%s'",
				       k == NR_KEYS ? "unknown" : "repeated",
				       items[i]);
			r->host->hint(r->ctx,
				      "sort keys: comm, pid, dso, sym, cpu, "
				      "srcline, joined with '+'");
			return -EINVAL;
		}
		r->keys[r->nr_keys++] = k;
		r->key_on[k] = true;
	}
	return 0;
}

static int parse_filters(struct report *r)
{
	const char *const *pids;
	uint32_t i;
	char *end;

	r->nr_f_comm = r->host->arg_list(r->ctx, "comm", &r->f_comm);
	r->nr_f_dso = r->host->arg_list(r->ctx, "dso", &r->f_dso);
	r->nr_f_sym = r->host->arg_list(r->ctx, "sym", &r->f_sym);
	r->nr_f_pid = r->host->arg_list(r->ctx, "pid", &pids);
	if (r->nr_f_pid == 0)
		return 0;
	r->f_pid = calloc(r->nr_f_pid, sizeof(*r->f_pid));
	if (!r->f_pid)
		return -ENOMEM;
	for (i = 0; i < r->nr_f_pid; i++) {
		unsigned long v;

		errno = 0;
		v = strtoul(pids[i], &end, 10);
		if (errno || end == pids[i] || *end || v > UINT32_MAX) {
			r->host->error(r->ctx, "bad pid '%s': not a process id",
				       pids[i]);
			return -EINVAL;
		}
		r->f_pid[i] = (uint32_t)v;
	}
	return 0;
}

static void report_close(void *state)
{
	struct report *r = state;
	uint32_t i;

	if (!r)
		return;
	free(r->strs.items);
	free(r->strs_h.slots);
	free(r->syms.items);
	free(r->syms_h.slots);
	free(r->rows.items);
	free(r->rows_h.slots);
	free(r->chains.items);
	free(r->chains_h.slots);
	free(r->pool.items);
	free(r->nodes.items);
	free(r->occ);
	free(r->walks);
	free(r->rcache);
	free(r->ccache);
	free(r->scache);
	for (i = 0; i < r->owned.nr; i++)
		free(*(char **)vec_at(&r->owned, i));
	free(r->owned.items);
	free(r->totals);
	free(r->f_pid);
	free(r);
}

static int report_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	struct report *r = calloc(1, sizeof(*r));
	const char *limit;
	char *end;
	int ret;

	if (!r)
		return -ENOMEM;
	r->host = host;
	r->ctx = ctx;
	r->strs.size = sizeof(struct str);
	r->syms.size = sizeof(struct sym);
	r->rows.size = sizeof(struct row);
	r->chains.size = sizeof(struct chain);
	r->pool.size = sizeof(uint32_t);
	r->nodes.size = sizeof(struct node);
	r->owned.size = sizeof(char *);
	r->gen = 1;
	ret = parse_keys(r);
	if (ret == 0)
		ret = parse_filters(r);
	if (ret < 0)
		goto fail;
	limit = host->arg_str(ctx, "percent_limit");
	errno = 0;
	r->percent_limit = strtod(limit, &end);
	if (errno || end == limit || *end || r->percent_limit < 0 ||
	    r->percent_limit > 100) {
		host->error(ctx, "bad percent_limit '%s': give a number from "
			    "0 to 100", limit);
		ret = -EINVAL;
		goto fail;
	}
	r->top = host->arg_int(ctx, "top");
	r->children = host->arg_int(ctx, "children");
	r->inline_on = host->arg_int(ctx, "inline");
	if ((r->inline_on || r->key_on[KEY_SRCLINE]) &&
	    !PIPE_HOST_HAS(host, srcline)) {
		host->error(ctx, "this pipe gives no source lines (ABI %u.%u)",
			    host->abi >> 16, host->abi & 0xffff);
		ret = -ENOTSUP;
		goto fail;
	}
	if (r->key_on[KEY_SRCLINE] && r->children) {
		host->error(ctx, "sort key 'srcline' works without "
			    "children=on");
		ret = -EINVAL;
		goto fail;
	}
	r->graph = (enum graph)host->arg_int(ctx, "graph");
	r->format = (enum format)host->arg_int(ctx, "format");
	r->output = host->arg_str(ctx, "output");
	r->need_chains = r->children || r->format == FORMAT_FOLDED ||
			 (r->graph != GRAPH_NONE && r->format == FORMAT_TEXT);
	r->rcache = calloc(1u << RCACHE_BITS, sizeof(*r->rcache));
	r->ccache = calloc(1u << CCACHE_BITS, sizeof(*r->ccache));
	if (r->key_on[KEY_SRCLINE])
		r->scache = calloc(1u << SCACHE_BITS, sizeof(*r->scache));
	if (!r->rcache || !r->ccache ||
	    (r->key_on[KEY_SRCLINE] && !r->scache)) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = host->open_output(ctx, r->output, &r->out);
	if (ret < 0)
		goto fail;
	*state = r;
	return 0;
fail:
	report_close(r);
	return ret;
}

static int report_start(void *state)
{
	struct report *r = state;
	const struct pipe_meta *m = r->host->meta(r->ctx);

	r->nr_events = m ? m->nr_events : 0;
	/* one more slot for samples of no known event */
	r->totals = calloc((size_t)r->nr_events + 1, sizeof(*r->totals));
	if (!r->totals) {
		r->host->error(r->ctx, "cannot start the report: %s",
			       strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_SYMBOLS | PIPE_PLUGIN_OUTPUT,
	.name = "report",
	.summary = "where the time went: a perf-report table, graphs, CSV, "
		   "folded stacks",
	.version = "1",
	.params = report_params,
	.open = report_open,
	.close = report_close,
	.start_sink = report_start,
	.consume = report_consume,
	.finish = report_finish
);
