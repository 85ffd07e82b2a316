/*
 * pprof.c - the pprof profile builder (see pprof.h): open-addressing
 * tables over flat arrays while the samples come, then one pass that
 * builds libprotobuf-c's structs and packs them straight into zlib's gzip
 * stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fdio.h"
#include "grow.h"
#include "itab.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "strtab.h"

struct mapping {
	uint64_t start, limit, offset;
	int64_t filename, build_id;
};

struct function {
	int64_t name, filename;
	int64_t start_line;
};

struct location {
	uint64_t mapping, address;
	uint32_t lines;    /* first level in line_pool */
	uint32_t nr_lines;
};

struct sample {
	uint64_t hash;
	uint32_t locs;       /* first location id in loc_pool */
	uint32_t nr_locs;
	int64_t pid, tid;
	int64_t comm;        /* string index, 0: none */
	uint64_t vals;       /* first value in val_pool */
};

struct pprof {
	uint32_t nr_types;
	int64_t *type_names, *type_units;
	uint32_t default_type;
	int64_t time_nanos, duration_nanos;
	/* strings */
	struct strtab strs;  /* the string table, in order */
	/* items */
	struct mapping *maps;
	uint32_t nr_maps, cap_maps;
	struct itab map_tab;
	struct function *funcs;
	uint32_t nr_funcs, cap_funcs;
	struct itab func_tab;
	struct location *locs;
	uint32_t nr_locs, cap_locs;
	struct itab loc_tab;
	struct pprof_line *line_pool; /* the levels of every location */
	uint32_t nr_lines, cap_lines;
	/* samples */
	struct sample *samples;
	uint32_t nr_samples, cap_samples;
	struct itab sample_tab;
	uint64_t *loc_pool;
	size_t nr_pool, cap_pool;
	int64_t *val_pool;
	size_t nr_vals, cap_vals;
	int64_t key_pid, key_tid, key_comm;
};

/* ---- small helpers ------------------------------------------------------ */

#define TAB_FIRST 1024 /* slots of a table's first room */

/* Grow *arr (of *cap items of `size` bytes) to hold n items: grow_array
 * for the tables, whose counts are 32-bit. */
static int grow(void *arr, uint32_t *cap, size_t n, size_t size, size_t max)
{
	size_t c = *cap;
	int ret = grow_array(arr, &c, n, size, 64, max);

	*cap = (uint32_t)c;
	return ret;
}

/* Make room in t for one more of the builder's items. */
static int tab_reserve(const struct pprof *p, struct itab *t,
		       itab_hash_fn hash)
{
	return itab_reserve(t, TAB_FIRST, UINT32_MAX / 2 + 1, hash, p);
}

/* ---- strings ------------------------------------------------------------ */

int64_t pprof_string(struct pprof *p, const char *s)
{
	return strtab_add(&p->strs, s);
}

/* ---- set-up ------------------------------------------------------------- */

int pprof_new(struct pprof **out, uint32_t nr_types)
{
	struct pprof *p;

	*out = NULL;
	if (!nr_types || nr_types > PPROF_TYPES_MAX)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->nr_types = nr_types;
	p->strs.max = PPROF_STRINGS_MAX;
	p->type_names = calloc(nr_types, sizeof(int64_t));
	p->type_units = calloc(nr_types, sizeof(int64_t));
	if (!p->type_names || !p->type_units || pprof_string(p, "") != 0)
		goto oom;
	p->key_pid = pprof_string(p, "pid");
	p->key_tid = pprof_string(p, "tid");
	p->key_comm = pprof_string(p, "comm");
	if (p->key_pid < 0 || p->key_tid < 0 || p->key_comm < 0)
		goto oom;
	*out = p;
	return 0;
oom:
	pprof_free(p);
	return -ENOMEM;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	strtab_release(&p->strs);
	free(p->maps);
	itab_free(&p->map_tab);
	free(p->funcs);
	itab_free(&p->func_tab);
	free(p->locs);
	free(p->line_pool);
	itab_free(&p->loc_tab);
	free(p->samples);
	itab_free(&p->sample_tab);
	free(p->loc_pool);
	free(p->val_pool);
	free(p->type_names);
	free(p->type_units);
	free(p);
}

int pprof_type(struct pprof *p, uint32_t i, const char *type,
	       const char *unit)
{
	int64_t t = pprof_string(p, type), u = pprof_string(p, unit);

	if (i >= p->nr_types)
		return -EINVAL;
	if (t < 0 || u < 0)
		return t < 0 ? (int)t : (int)u;
	p->type_names[i] = t;
	p->type_units[i] = u;
	return 0;
}

void pprof_set_times(struct pprof *p, int64_t time_nanos,
		     int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

void pprof_set_default(struct pprof *p, uint32_t type_index)
{
	if (type_index < p->nr_types)
		p->default_type = type_index;
}

/* ---- mappings, functions, locations ------------------------------------ */

static uint64_t map_hash(int64_t filename)
{
	return itab_mix(0, (uint64_t)filename);
}

static bool map_eq(const void *items, uint32_t item, const void *key)
{
	const struct pprof *p = items;

	return p->maps[item].filename == *(const int64_t *)key;
}

static uint64_t map_rehash(const void *items, uint32_t item)
{
	const struct pprof *p = items;

	return map_hash(p->maps[item].filename);
}

uint64_t pprof_mapping(struct pprof *p, const char *filename,
		       uint64_t start, uint64_t limit, uint64_t offset,
		       const char *build_id)
{
	int64_t name = pprof_string(p, filename), bid = 0;
	struct mapping *m;
	uint32_t i;

	if (name < 0)
		return 0;
	i = itab_find(&p->map_tab, map_hash(name), map_eq, p, &name);
	if (i != ITAB_NONE)
		return i + 1;
	if (build_id && build_id[0]) {
		bid = pprof_string(p, build_id);
		if (bid < 0)
			return 0;
	}
	if (tab_reserve(p, &p->map_tab, map_rehash) < 0 ||
	    grow(&p->maps, &p->cap_maps, p->nr_maps + 1, sizeof(*p->maps),
		 PPROF_ITEMS_MAX) < 0)
		return 0;
	m = &p->maps[p->nr_maps];
	m->start = start;
	m->limit = limit;
	m->offset = offset;
	m->filename = name;
	m->build_id = bid;
	itab_put(&p->map_tab, map_hash(name), p->nr_maps);
	return ++p->nr_maps;
}

static uint64_t func_hash(const struct function *f)
{
	uint64_t h = itab_mix(0, (uint64_t)f->name);

	h = itab_mix(h, (uint64_t)f->filename);
	return itab_mix(h, (uint64_t)f->start_line);
}

static bool func_eq(const void *items, uint32_t item, const void *key)
{
	const struct function *a = &((const struct pprof *)items)->funcs[item];
	const struct function *f = key;

	return a->name == f->name && a->filename == f->filename &&
	       a->start_line == f->start_line;
}

static uint64_t func_rehash(const void *items, uint32_t item)
{
	return func_hash(&((const struct pprof *)items)->funcs[item]);
}

uint64_t pprof_function(struct pprof *p, const char *name,
			const char *filename, int64_t start_line)
{
	struct function f;
	uint32_t i;

	f.name = pprof_string(p, name);
	f.filename = filename ? pprof_string(p, filename) : 0;
	f.start_line = start_line;
	if (f.name < 0 || f.filename < 0)
		return 0;
	i = itab_find(&p->func_tab, func_hash(&f), func_eq, p, &f);
	if (i != ITAB_NONE)
		return i + 1;
	if (tab_reserve(p, &p->func_tab, func_rehash) < 0 ||
	    grow(&p->funcs, &p->cap_funcs, p->nr_funcs + 1, sizeof(f),
		 PPROF_ITEMS_MAX) < 0)
		return 0;
	p->funcs[p->nr_funcs] = f;
	itab_put(&p->func_tab, func_hash(&f), p->nr_funcs);
	return ++p->nr_funcs;
}

/* A location being looked up: its levels are the caller's. */
struct loc_key {
	uint64_t mapping, address;
	const struct pprof_line *lines;
	uint32_t nr_lines;
};

static uint64_t loc_hash(const struct loc_key *k)
{
	uint64_t h = itab_mix(itab_mix(0, k->address), k->mapping);
	uint32_t i;

	for (i = 0; i < k->nr_lines; i++)
		h = itab_mix(itab_mix(h, k->lines[i].function),
			     (uint64_t)k->lines[i].line);
	return h;
}

/* The key of the builder's location `item`. */
static struct loc_key loc_key_of(const struct pprof *p, uint32_t item)
{
	const struct location *l = &p->locs[item];

	return (struct loc_key){ l->mapping, l->address,
				 p->line_pool + l->lines, l->nr_lines };
}

static bool loc_eq(const void *items, uint32_t item, const void *key)
{
	struct loc_key a = loc_key_of(items, item);
	const struct loc_key *k = key;

	return a.mapping == k->mapping && a.address == k->address &&
	       a.nr_lines == k->nr_lines &&
	       !memcmp(a.lines, k->lines, k->nr_lines * sizeof(*k->lines));
}

static uint64_t loc_rehash(const void *items, uint32_t item)
{
	struct loc_key k = loc_key_of(items, item);

	return loc_hash(&k);
}

uint64_t pprof_location(struct pprof *p, uint64_t mapping, uint64_t address,
			const struct pprof_line *lines, uint32_t nr_lines)
{
	struct loc_key k = { mapping, address, lines, nr_lines };
	struct location *l;
	uint64_t h;
	uint32_t i;

	if (k.nr_lines > PPROF_LINES_MAX)
		k.nr_lines = PPROF_LINES_MAX;
	h = loc_hash(&k);
	i = itab_find(&p->loc_tab, h, loc_eq, p, &k);
	if (i != ITAB_NONE)
		return i + 1;
	if (tab_reserve(p, &p->loc_tab, loc_rehash) < 0 ||
	    grow(&p->locs, &p->cap_locs, p->nr_locs + 1, sizeof(*l),
		 PPROF_ITEMS_MAX) < 0 ||
	    grow(&p->line_pool, &p->cap_lines,
		 (size_t)p->nr_lines + k.nr_lines, sizeof(*lines),
		 PPROF_ITEMS_MAX) < 0)
		return 0;
	l = &p->locs[p->nr_locs];
	l->mapping = mapping;
	l->address = address;
	l->lines = p->nr_lines;
	l->nr_lines = k.nr_lines;
	memcpy(p->line_pool + p->nr_lines, lines,
	       k.nr_lines * sizeof(*lines));
	p->nr_lines += k.nr_lines;
	itab_put(&p->loc_tab, h, p->nr_locs);
	return ++p->nr_locs;
}

/* ---- samples ------------------------------------------------------------ */

struct sample_key {
	uint64_t hash;
	const uint64_t *locs;
	uint32_t nr_locs;
	int64_t pid, tid, comm;
};

static bool sample_eq(const void *items, uint32_t item, const void *key)
{
	const struct pprof *p = items;
	const struct sample *s = &p->samples[item];
	const struct sample_key *k = key;

	return s->hash == k->hash && s->nr_locs == k->nr_locs &&
	       s->pid == k->pid && s->tid == k->tid && s->comm == k->comm &&
	       !memcmp(p->loc_pool + s->locs, k->locs,
		       k->nr_locs * sizeof(uint64_t));
}

static uint64_t sample_rehash(const void *items, uint32_t item)
{
	return ((const struct pprof *)items)->samples[item].hash;
}

/* A new sample of key k, its values 0, as *item. */
static int sample_add(struct pprof *p, const struct sample_key *k,
		      uint32_t *item)
{
	struct sample *s;
	int ret;

	ret = tab_reserve(p, &p->sample_tab, sample_rehash);
	if (ret == 0)
		ret = grow(&p->samples, &p->cap_samples, p->nr_samples + 1,
			   sizeof(*s), PPROF_SAMPLES_MAX);
	if (ret == 0)
		ret = grow_array(&p->loc_pool, &p->cap_pool,
				 p->nr_pool + k->nr_locs, sizeof(uint64_t),
				 1024, SIZE_MAX);
	if (ret == 0)
		ret = grow_array(&p->val_pool, &p->cap_vals,
				 p->nr_vals + p->nr_types, sizeof(int64_t),
				 1024, SIZE_MAX);
	if (ret < 0)
		return ret;
	s = &p->samples[p->nr_samples];
	s->hash = k->hash;
	s->locs = (uint32_t)p->nr_pool;
	s->nr_locs = k->nr_locs;
	s->pid = k->pid;
	s->tid = k->tid;
	s->comm = k->comm;
	s->vals = p->nr_vals;
	memcpy(p->loc_pool + p->nr_pool, k->locs,
	       k->nr_locs * sizeof(uint64_t));
	p->nr_pool += k->nr_locs;
	memset(p->val_pool + p->nr_vals, 0, p->nr_types * sizeof(int64_t));
	p->nr_vals += p->nr_types;
	itab_put(&p->sample_tab, k->hash, p->nr_samples);
	*item = p->nr_samples++;
	return 0;
}

int pprof_sample(struct pprof *p, const uint64_t *locs, uint32_t nr_locs,
		 const int64_t *values, const struct pprof_labels *labels)
{
	struct sample_key k;
	struct sample *s;
	uint32_t i, item;
	int ret;

	if (nr_locs > PPROF_DEPTH_MAX)
		nr_locs = PPROF_DEPTH_MAX;
	k.locs = locs;
	k.nr_locs = nr_locs;
	k.pid = labels->pid;
	k.tid = labels->tid;
	k.comm = labels->comm ? pprof_string(p, labels->comm) : 0;
	if (k.comm < 0)
		return (int)k.comm;
	k.hash = itab_mix(itab_mix(0, (uint64_t)k.pid), (uint64_t)k.tid);
	k.hash = itab_mix(k.hash, (uint64_t)k.comm);
	for (i = 0; i < nr_locs; i++)
		k.hash = itab_mix(k.hash, locs[i]);
	item = itab_find(&p->sample_tab, k.hash, sample_eq, p, &k);
	if (item == ITAB_NONE) {
		ret = sample_add(p, &k, &item);
		if (ret < 0)
			return ret;
	}
	s = &p->samples[item];
	for (i = 0; i < p->nr_types; i++)
		p->val_pool[s->vals + i] += values[i];
	return 0;
}

uint64_t pprof_nr_samples(const struct pprof *p)
{
	return p->nr_samples;
}

uint64_t pprof_nr_locations(const struct pprof *p)
{
	return p->nr_locs;
}

/* ---- writing ------------------------------------------------------------- */

struct gz_out {
	ProtobufCBuffer base;      /* first: libprotobuf-c calls append */
	z_stream z;
	int fd;
	int err;                   /* first error, negative errno */
	uint8_t buf[1u << 16];
};

static int gz_drain(struct gz_out *g, int flush)
{
	int zr, ret;
	size_t len;

	do {
		g->z.next_out = g->buf;
		g->z.avail_out = sizeof(g->buf);
		zr = deflate(&g->z, flush);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		len = sizeof(g->buf) - g->z.avail_out;
		ret = fdio_write_all(g->fd, g->buf, len);
		if (ret < 0)
			return ret;
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

static void gz_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
	struct gz_out *g = (struct gz_out *)buffer;

	if (g->err)
		return;
	g->z.next_in = (Bytef *)(uintptr_t)data;
	g->z.avail_in = (uInt)len;
	g->err = gz_drain(g, Z_NO_FLUSH);
}

/* Arrays of structs and of pointers to them, for libprotobuf-c. */
struct packed {
	Perftools__Profiles__ValueType *types, **ptypes, period_type;
	Perftools__Profiles__Sample *samples, **psamples;
	Perftools__Profiles__Label *labels, **plabels;
	Perftools__Profiles__Mapping *maps, **pmaps;
	Perftools__Profiles__Location *locs, **plocs;
	Perftools__Profiles__Line *lines, **plines;
	Perftools__Profiles__Function *funcs, **pfuncs;
};

static void packed_free(struct packed *k)
{
	free(k->types);
	free(k->ptypes);
	free(k->samples);
	free(k->psamples);
	free(k->labels);
	free(k->plabels);
	free(k->maps);
	free(k->pmaps);
	free(k->locs);
	free(k->plocs);
	free(k->lines);
	free(k->plines);
	free(k->funcs);
	free(k->pfuncs);
}

/* calloc n structs of `size` into *a and n pointers into *pa */
static bool alloc2(void *a, void *pa, size_t n, size_t size)
{
	void **x = a, **px = pa;

	if (n == 0)
		n = 1;
	*x = calloc(n, size);
	*px = calloc(n, sizeof(void *));
	return *x && *px;
}

#define ALLOC2(a, pa, n) alloc2(&(a), &(pa), (n), sizeof(*(a)))

static int build(struct pprof *p, struct packed *k,
		 Perftools__Profiles__Profile *pr)
{
	static const Perftools__Profiles__ValueType vt0 =
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	static const Perftools__Profiles__Sample s0 =
		PERFTOOLS__PROFILES__SAMPLE__INIT;
	static const Perftools__Profiles__Label l0 =
		PERFTOOLS__PROFILES__LABEL__INIT;
	static const Perftools__Profiles__Mapping m0 =
		PERFTOOLS__PROFILES__MAPPING__INIT;
	static const Perftools__Profiles__Location o0 =
		PERFTOOLS__PROFILES__LOCATION__INIT;
	static const Perftools__Profiles__Line n0 =
		PERFTOOLS__PROFILES__LINE__INIT;
	static const Perftools__Profiles__Function f0 =
		PERFTOOLS__PROFILES__FUNCTION__INIT;
	size_t nl = 0;
	uint32_t i;

	if (!ALLOC2(k->types, k->ptypes, p->nr_types) ||
	    !ALLOC2(k->samples, k->psamples, p->nr_samples) ||
	    !ALLOC2(k->labels, k->plabels, 3 * (size_t)p->nr_samples) ||
	    !ALLOC2(k->maps, k->pmaps, p->nr_maps) ||
	    !ALLOC2(k->locs, k->plocs, p->nr_locs) ||
	    !ALLOC2(k->lines, k->plines, p->nr_lines) ||
	    !ALLOC2(k->funcs, k->pfuncs, p->nr_funcs))
		return -ENOMEM;
	for (i = 0; i < p->nr_types; i++) {
		k->types[i] = vt0;
		k->types[i].type = p->type_names[i];
		k->types[i].unit = p->type_units[i];
		k->ptypes[i] = &k->types[i];
	}
	for (i = 0; i < p->nr_samples; i++) {
		const struct sample *s = &p->samples[i];
		Perftools__Profiles__Sample *o = &k->samples[i];
		size_t first = nl;

		*o = s0;
		o->n_location_id = s->nr_locs;
		o->location_id = p->loc_pool + s->locs;
		o->n_value = p->nr_types;
		o->value = p->val_pool + s->vals;
		if (s->pid >= 0) {
			k->labels[nl] = l0;
			k->labels[nl].key = p->key_pid;
			k->labels[nl].num = s->pid;
			nl++;
		}
		if (s->tid >= 0) {
			k->labels[nl] = l0;
			k->labels[nl].key = p->key_tid;
			k->labels[nl].num = s->tid;
			nl++;
		}
		if (s->comm > 0) {
			k->labels[nl] = l0;
			k->labels[nl].key = p->key_comm;
			k->labels[nl].str = s->comm;
			nl++;
		}
		o->n_label = nl - first;
		o->label = k->plabels + first;
		k->psamples[i] = o;
	}
	for (i = 0; i < nl; i++)
		k->plabels[i] = &k->labels[i];
	for (i = 0; i < p->nr_maps; i++) {
		k->maps[i] = m0;
		k->maps[i].id = i + 1;
		k->maps[i].memory_start = p->maps[i].start;
		k->maps[i].memory_limit = p->maps[i].limit;
		k->maps[i].file_offset = p->maps[i].offset;
		k->maps[i].filename = p->maps[i].filename;
		k->maps[i].build_id = p->maps[i].build_id;
		k->maps[i].has_functions = 1;
		k->pmaps[i] = &k->maps[i];
	}
	for (i = 0; i < p->nr_lines; i++) {
		k->lines[i] = n0;
		k->lines[i].function_id = p->line_pool[i].function;
		k->lines[i].line = p->line_pool[i].line;
		k->plines[i] = &k->lines[i];
	}
	for (i = 0; i < p->nr_locs; i++) {
		k->locs[i] = o0;
		k->locs[i].id = i + 1;
		k->locs[i].mapping_id = p->locs[i].mapping;
		k->locs[i].address = p->locs[i].address;
		k->locs[i].n_line = p->locs[i].nr_lines;
		k->locs[i].line = k->plines + p->locs[i].lines;
		k->plocs[i] = &k->locs[i];
	}
	for (i = 0; i < p->nr_funcs; i++) {
		k->funcs[i] = f0;
		k->funcs[i].id = i + 1;
		k->funcs[i].name = p->funcs[i].name;
		k->funcs[i].system_name = p->funcs[i].name;
		k->funcs[i].filename = p->funcs[i].filename;
		k->funcs[i].start_line = p->funcs[i].start_line;
		k->pfuncs[i] = &k->funcs[i];
	}
	pr->n_sample_type = p->nr_types;
	pr->sample_type = k->ptypes;
	pr->n_sample = p->nr_samples;
	pr->sample = k->psamples;
	pr->n_mapping = p->nr_maps;
	pr->mapping = k->pmaps;
	pr->n_location = p->nr_locs;
	pr->location = k->plocs;
	pr->n_function = p->nr_funcs;
	pr->function = k->pfuncs;
	pr->n_string_table = p->strs.nr;
	pr->string_table = p->strs.strs;
	pr->time_nanos = p->time_nanos;
	pr->duration_nanos = p->duration_nanos;
	k->period_type = k->types[p->default_type];
	pr->period_type = &k->period_type;
	pr->default_sample_type = p->type_names[p->default_type];
	return 0;
}

int pprof_write(struct pprof *p, int fd, int level)
{
	Perftools__Profiles__Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct packed k;
	struct gz_out *g;
	int ret;

	memset(&k, 0, sizeof(k));
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	ret = build(p, &k, &pr);
	if (ret < 0)
		goto out;
	/* windowBits 15 + 16: a gzip header and trailer */
	if (deflateInit2(&g->z, level, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		ret = -ENOMEM;
		goto out;
	}
	g->base.append = gz_append;
	g->fd = fd;
	perftools__profiles__profile__pack_to_buffer(&pr, &g->base);
	ret = g->err;
	if (ret == 0) {
		g->z.next_in = NULL;
		g->z.avail_in = 0;
		ret = gz_drain(g, Z_FINISH);
	}
	deflateEnd(&g->z);
out:
	packed_free(&k);
	free(g);
	return ret;
}
