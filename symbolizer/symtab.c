/*
 * symtab.c - compact sorted symbol tables (see symtab.h): a builder that
 * sorts raw entries with a natural-run merge sort (.symtab tables are
 * mostly ordered runs) or, for hash-ordered .dynsym, a radix sort; keeps
 * one symbol per address and copies only the names it keeps into one pool
 * (or keeps the mapped string table); binary search; lazy demangling.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <libiberty/demangle.h>

#include "err.h"
#include "grow.h"
#include "search.h"
#include "symtab.h"

/* Size given to the last symbol when its size is unknown (as perf does). */
#define SYMTAB_TAIL_SIZE 4096

/* 16 bytes: the sort moves these around */
struct symtab_raw {
	uint64_t start; /* address in the table's space */
	uint32_t name;  /* offset into the builder's strings */
	uint32_t size;  /* bytes (clamped to RAW_SIZE_MAX), 0: unknown */
};

/* The top two bits of a raw size hold the binding. */
#define RAW_SIZE_MAX ((UINT32_C(1) << 30) - 1)
#define RAW_SIZE(r) ((r)->size & RAW_SIZE_MAX)
#define RAW_BIND(r) ((r)->size >> 30)
/* Runs shorter than this are extended by insertion sort first. */
#define MIN_RUN 16

struct symtab_builder {
	const char *strs;        /* borrowed names */
	size_t len;              /* bytes in strs */
	void *map;               /* strs lie in this mapping, adopted */
	size_t map_len;          /* its length */
	struct symtab_raw *raw;  /* collected entries */
	size_t nr;               /* used entries */
	size_t cap;              /* allocated entries */
};

struct symtab_ent {
	uint64_t start; /* first address */
	uint32_t size;  /* bytes (clamped to 4 GiB - 1) */
	uint32_t name;  /* offset into pool */
};

_Static_assert(sizeof(struct symtab_ent) == SYMTAB_ENT_BYTES,
	       "an image's entries are the table's");

struct symtab {
	struct symtab_ent *ents; /* sorted by start, unique starts */
	uint32_t nr;             /* entries */
	char *pool;              /* NUL-terminated names */
	size_t pool_len;         /* bytes in pool */
	void *map;               /* mapping holding pool, or NULL */
	size_t map_len;          /* its length */
	bool ents_mapped;        /* ents lie in map too (an image) */
	const char **shown;      /* lazy: demangled name per entry, or NULL */
};

int symtab_builder_new(struct symtab_builder **out, const char *strs,
		       size_t len, size_t hint, struct pipe_err *err)
{
	struct symtab_builder *b;

	b = calloc(1, sizeof(*b));
	if (!b)
		return pipe_err_set(err, -ENOMEM, "cannot allocate symbols");
	if (hint > SYMTAB_MAX_ENTRIES)
		hint = SYMTAB_MAX_ENTRIES;
	if (hint < 16)
		hint = 16;
	b->raw = malloc(hint * sizeof(*b->raw));
	if (!b->raw) {
		free(b);
		return pipe_err_set(err, -ENOMEM, "cannot allocate symbols");
	}
	b->cap = hint;
	b->strs = strs;
	b->len = len;
	*out = b;
	return 0;
}

void symtab_builder_free(struct symtab_builder *b)
{
	if (!b)
		return;
	if (b->map)
		munmap(b->map, b->map_len);
	free(b->raw);
	free(b);
}

int symtab_builder_add(struct symtab_builder *b, uint64_t start,
		       uint64_t size, uint32_t name, enum symtab_bind bind)
{
	struct symtab_raw *r;
	int ret;

	ret = grow_array(&b->raw, &b->cap, b->nr + 1, sizeof(*b->raw), 64,
			 SYMTAB_MAX_ENTRIES);
	if (ret < 0)
		return ret;
	if (name >= b->len)
		return 0; /* no name: nothing to show */
	r = &b->raw[b->nr++];
	r->start = start;
	r->name = name;
	r->size = (size > RAW_SIZE_MAX ? RAW_SIZE_MAX : (uint32_t)size) |
		  ((uint32_t)bind << 30);
	return 0;
}

/* Merge the sorted runs a[lo..mid) and a[mid..hi) into dst, stably. */
static void merge_runs(const struct symtab_raw *a, struct symtab_raw *dst,
		       size_t lo, size_t mid, size_t hi)
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi) {
		if (a[j].start < a[i].start)
			dst[k++] = a[j++];
		else
			dst[k++] = a[i++];
	}
	memcpy(&dst[k], &a[i], (mid - i) * sizeof(*a));
	k += mid - i;
	memcpy(&dst[k], &a[j], (hi - j) * sizeof(*a));
}

/* Stable insertion of a[i] into the sorted a[lo..i). */
static void insert_one(struct symtab_raw *a, size_t lo, size_t i)
{
	struct symtab_raw x = a[i];
	size_t j = i;

	while (j > lo && a[j - 1].start > x.start) {
		a[j] = a[j - 1];
		j--;
	}
	a[j] = x;
}

/*
 * Natural-run merge sort: find the ascending runs (short ones extended to
 * MIN_RUN by insertion, as timsort does, for hash-ordered .dynsym), then
 * merge neighbours pass by pass.  Returns the sorted array (a or tmp).
 * `runs` holds the run starts and has room for n + 1 entries.
 */
static struct symtab_raw *sort_raw(struct symtab_raw *a,
				   struct symtab_raw *tmp, size_t *runs,
				   size_t n)
{
	size_t nr_runs = 0, i = 0;

	while (i < n) {
		size_t lo = i, want = lo + MIN_RUN < n ? lo + MIN_RUN : n;

		runs[nr_runs++] = lo;
		for (i = lo + 1; i < n && a[i].start >= a[i - 1].start; i++)
			;
		for (; i < want; i++)
			insert_one(a, lo, i);
	}
	runs[nr_runs] = n;
	while (nr_runs > 1) {
		size_t out = 0, r;
		struct symtab_raw *swap;

		for (r = 0; r < nr_runs; r += 2) {
			size_t lo = runs[r], hi;

			if (r + 1 < nr_runs) {
				hi = runs[r + 2];
				merge_runs(a, tmp, lo, runs[r + 1], hi);
			} else {
				hi = runs[r + 1];
				memcpy(&tmp[lo], &a[lo],
				       (hi - lo) * sizeof(*a));
			}
			runs[out++] = lo;
		}
		runs[out] = n;
		nr_runs = out;
		swap = a;
		a = tmp;
		tmp = swap;
	}
	return a;
}

/*
 * Stable LSD radix sort on start - min, 11 bits a pass, only as many
 * passes as the span needs (three for a 100 MiB library).  For tables
 * with no order to exploit (a .dynsym is in hash order).
 */
static struct symtab_raw *radix_raw(struct symtab_raw *a,
				    struct symtab_raw *tmp, size_t n)
{
	uint64_t min = UINT64_MAX, max = 0, span;
	unsigned shift;
	size_t i;

	for (i = 0; i < n; i++) {
		if (a[i].start < min)
			min = a[i].start;
		if (a[i].start > max)
			max = a[i].start;
	}
	span = max - min;
	for (shift = 0; shift < 64 && (span >> shift) != 0; shift += 11) {
		size_t count[2048] = { 0 }, sum = 0, c;
		struct symtab_raw *swap;

		for (i = 0; i < n; i++)
			count[((a[i].start - min) >> shift) & 2047]++;
		for (i = 0; i < 2048; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			tmp[count[((a[i].start - min) >> shift) & 2047]++] =
				a[i];
		swap = a;
		a = tmp;
		tmp = swap;
	}
	return a;
}

/* Mostly ordered (runs of 8 or more on average): merge the runs; else
 * radix.  Returns the sorted array (a or tmp). */
static struct symtab_raw *sort_any(struct symtab_raw *a,
				   struct symtab_raw *tmp, size_t *runs,
				   size_t n)
{
	size_t i, nr_runs = 1;

	for (i = 1; i < n; i++)
		nr_runs += a[i].start < a[i - 1].start;
	if (n / nr_runs >= 8)
		return sort_raw(a, tmp, runs, n);
	return radix_raw(a, tmp, n);
}

static const char *raw_name(const struct symtab_builder *b,
			    const struct symtab_raw *r)
{
	return r->name < b->len ? b->strs + r->name : "";
}

static size_t raw_name_len(const struct symtab_builder *b,
			   const struct symtab_raw *r)
{
	if (r->name >= b->len)
		return 0;
	return strnlen(b->strs + r->name, b->len - r->name);
}

static size_t underscores(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] == '_')
		n++;
	return n;
}

/*
 * Of two aliases at one address, is `x` better than `y`?  As perf does:
 * a known size, then not weak, then global over local, then fewer leading
 * underscores, then the longer name; else the first one seen stays.
 */
static bool raw_better(const struct symtab_builder *b,
		       const struct symtab_raw *x, const struct symtab_raw *y)
{
	size_t lx, ly, ux, uy;

	if ((RAW_SIZE(x) != 0) != (RAW_SIZE(y) != 0))
		return RAW_SIZE(x) != 0;
	if (RAW_BIND(x) != RAW_BIND(y))
		return RAW_BIND(x) > RAW_BIND(y);
	lx = raw_name_len(b, x);
	ly = raw_name_len(b, y);
	ux = underscores(raw_name(b, x), lx);
	uy = underscores(raw_name(b, y), ly);
	if (ux != uy)
		return ux < uy;
	return lx > ly;
}

/* Keep one entry per start, in place; returns the new count. */
static size_t dedup_raw(const struct symtab_builder *b, struct symtab_raw *a,
			size_t n)
{
	size_t i, out = 0;

	for (i = 0; i < n; i++) {
		if (out > 0 && a[out - 1].start == a[i].start) {
			if (raw_better(b, &a[i], &a[out - 1]))
				a[out - 1] = a[i];
			continue;
		}
		a[out++] = a[i];
	}
	return out;
}

void symtab_builder_adopt(struct symtab_builder *b, void *map,
			  size_t map_len)
{
	b->map = map;
	b->map_len = map_len;
}

/* Copy the kept names into a fresh pool, renumbering name offsets. */
static int copy_names(const struct symtab_builder *b,
		      struct symtab_raw *sorted, size_t n, struct symtab *t,
		      struct pipe_err *err)
{
	size_t i, pool_len = 0, off = 0;

	for (i = 0; i < n; i++)
		pool_len += raw_name_len(b, &sorted[i]) + 1;
	if (pool_len > UINT32_MAX)
		return pipe_err_set(err, -E2BIG, "symbol names too large");
	t->pool = malloc(pool_len ? pool_len : 1);
	if (!t->pool)
		return pipe_err_set(err, -ENOMEM, "cannot allocate symbols");
	for (i = 0; i < n; i++) {
		size_t len = raw_name_len(b, &sorted[i]);

		memcpy(t->pool + off, raw_name(b, &sorted[i]), len);
		t->pool[off + len] = '\0';
		sorted[i].name = (uint32_t)off;
		off += len + 1;
	}
	t->pool_len = pool_len;
	return 0;
}

int symtab_builder_finish(struct symtab_builder *b, struct symtab **out,
			  struct pipe_err *err)
{
	struct symtab_raw *tmp = NULL, *sorted;
	size_t *runs = NULL;
	struct symtab *t = NULL;
	size_t n = b->nr, i;
	int ret = -ENOMEM;

	t = calloc(1, sizeof(*t));
	if (!t)
		goto out;
	tmp = malloc((n ? n : 1) * sizeof(*tmp));
	runs = malloc((n + 1) * sizeof(*runs));
	if (!tmp || !runs)
		goto out;
	sorted = n ? sort_any(b->raw, tmp, runs, n) : b->raw;
	n = dedup_raw(b, sorted, n);
	t->ents = malloc((n ? n : 1) * sizeof(*t->ents));
	if (!t->ents)
		goto out;
	if (b->map) {
		/* names stay in the adopted mapping, touched only when shown */
		t->pool = (char *)b->strs;
		t->pool_len = b->len;
		t->map = b->map;
		t->map_len = b->map_len;
		b->map = NULL;
	} else {
		ret = copy_names(b, sorted, n, t, err);
		if (ret < 0)
			goto out;
	}
	for (i = 0; i < n; i++) {
		const struct symtab_raw *r = &sorted[i];
		uint64_t size = RAW_SIZE(r);

		if (size == 0)
			size = i + 1 < n ? sorted[i + 1].start - r->start
					 : SYMTAB_TAIL_SIZE;
		t->ents[i].start = r->start;
		t->ents[i].size = size > UINT32_MAX ? UINT32_MAX
						    : (uint32_t)size;
		t->ents[i].name = r->name;
	}
	t->nr = (uint32_t)n;
	*out = t;
	t = NULL;
	ret = 0;
out:
	if (ret == -ENOMEM)
		pipe_err_set(err, ret, "cannot allocate symbols");
	free(tmp);
	free(runs);
	symtab_free(t);
	return ret;
}

void symtab_free(struct symtab *t)
{
	uint32_t i;

	if (!t)
		return;
	if (t->shown) {
		for (i = 0; i < t->nr; i++)
			if (t->shown[i] != t->pool + t->ents[i].name)
				free((char *)t->shown[i]);
		free(t->shown);
	}
	if (!t->ents_mapped)
		free(t->ents);
	if (t->map)
		munmap(t->map, t->map_len);
	else
		free(t->pool);
	free(t);
}

void symtab_parts(const struct symtab *t, const void **ents, uint32_t *nr,
		  const char **pool, size_t *pool_len)
{
	*ents = t->ents;
	*nr = t->nr;
	*pool = t->pool;
	*pool_len = t->pool_len;
}

int symtab_from_parts(void *map, size_t map_len, const void *ents,
		      uint32_t nr, const char *pool, size_t pool_len,
		      struct symtab **out)
{
	const struct symtab_ent *e = ents;
	struct symtab *t;
	uint32_t i;

	*out = NULL;
	if ((uintptr_t)ents % _Alignof(struct symtab_ent) || pool_len == 0 ||
	    pool[pool_len - 1] != '\0' || nr > SYMTAB_MAX_ENTRIES)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (e[i].name >= pool_len || (i && e[i].start <= e[i - 1].start))
			return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ents = (struct symtab_ent *)e;
	t->ents_mapped = true;
	t->nr = nr;
	t->pool = (char *)pool;
	t->pool_len = pool_len;
	t->map = map;
	t->map_len = map_len;
	*out = t;
	return 0;
}

uint32_t symtab_count(const struct symtab *t)
{
	return t ? t->nr : 0;
}

bool symtab_find(const struct symtab *t, uint64_t addr, uint32_t *idx)
{
	size_t lo;

	if (!t || t->nr == 0)
		return false;
	lo = search_u64(t->ents, t->nr, sizeof(*t->ents),
			offsetof(struct symtab_ent, start), addr,
			SEARCH_FIRST_ABOVE);
	if (lo == 0)
		return false;
	lo--;
	if (addr - t->ents[lo].start >= t->ents[lo].size)
		return false;
	*idx = (uint32_t)lo;
	return true;
}

uint64_t symtab_start(const struct symtab *t, uint32_t idx)
{
	return t->ents[idx].start;
}

uint64_t symtab_size(const struct symtab *t, uint32_t idx)
{
	return t->ents[idx].size;
}

const char *symtab_name(const struct symtab *t, uint32_t idx)
{
	return t->pool + t->ents[idx].name;
}

static bool is_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* Demangled name (malloc'ed), keeping a "@plt" suffix as perf shows it;
 * NULL when it does not demangle. */
static char *demangle_plt(const char *name)
{
	static const char suffix[] = "@plt";
	size_t len = strlen(name), slen = sizeof(suffix) - 1;
	char *base, *d, *out;

	/* the flags c++filt uses, so names match its output */
	if (len <= slen || strcmp(name + len - slen, suffix) != 0)
		return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI |
						    DMGL_VERBOSE);
	base = strndup(name, len - slen);
	if (!base)
		return NULL;
	d = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE);
	free(base);
	if (!d)
		return NULL;
	out = malloc(strlen(d) + slen + 1);
	if (out) {
		memcpy(out, d, strlen(d));
		memcpy(out + strlen(d), suffix, slen + 1);
	}
	free(d);
	return out;
}

const char *symtab_display_name(struct symtab *t, uint32_t idx,
				bool demangle)
{
	const char *name = symtab_name(t, idx);
	char *d;

	if (!demangle || !is_mangled(name))
		return name;
	if (!t->shown) {
		t->shown = calloc(t->nr, sizeof(*t->shown));
		if (!t->shown)
			return name;
	}
	if (t->shown[idx])
		return t->shown[idx];
	d = demangle_plt(name);
	t->shown[idx] = d ? d : name;
	return t->shown[idx];
}
