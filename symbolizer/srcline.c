/*
 * srcline.c - addresses -> file:line and inline frames through libdw (see
 * srcline.h).  A binary's compile units are indexed once by address
 * range (from their DW_AT_ranges, so files without .debug_aranges work);
 * each address then costs one line-table search and one scope walk, the
 * same answer `addr2line -i -f` gives, and is cached.
 */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "grow.h"
#include "itab.h"
#include "search.h"
#include "srcline.h"
#include "trust.h"

#define TAB_FIRST 1024 /* slots of the tables' first room */
/* Address ranges indexed per binary (a libc has a few thousand). */
#define MAX_RANGES (UINT32_C(1) << 22)

/* One address range of a compile unit. */
struct cu_range {
	uint64_t lo, hi; /* [lo, hi) */
	Dwarf_Die cu;    /* the unit's DIE */
};

/* One cached address. */
struct entry {
	uint64_t vaddr;
	bool demangle;                      /* names demangled */
	struct pipe_srcline out;
	struct pipe_src_frame frames[];     /* out.nr of them */
};

/* A demangled function name, kept for sl's life. */
struct shown {
	const char *mangled; /* the DWARF's string (the key, by pointer) */
	char *name;          /* malloc'ed */
};

struct srcline {
	int fd;
	Dwarf *dbg;
	struct cu_range *ranges; /* sorted by lo */
	uint32_t nr_ranges;
	struct entry **cache;    /* owned, the addresses answered */
	size_t nr_cached, cap_cached;
	struct itab cache_tab;   /* cache by address */
	struct shown *names;     /* owned */
	size_t nr_names, cap_names;
	struct itab names_tab;   /* names by the DWARF's string */
	struct entry *scratch;   /* the last answer when the cache is full */
};

static const struct pipe_srcline none = {
	.size = sizeof(struct pipe_srcline),
	.frame_size = sizeof(struct pipe_src_frame),
};

const struct pipe_srcline *srcline_none(void)
{
	return &none;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_range(struct srcline *sl, size_t *cap, uint64_t lo,
		     uint64_t hi, const Dwarf_Die *cu)
{
	int ret;

	if (hi <= lo)
		return 0;
	ret = grow_array(&sl->ranges, cap, (size_t)sl->nr_ranges + 1,
			 sizeof(*sl->ranges), 256, MAX_RANGES);
	if (ret < 0)
		return ret;
	sl->ranges[sl->nr_ranges].lo = lo;
	sl->ranges[sl->nr_ranges].hi = hi;
	sl->ranges[sl->nr_ranges].cu = *cu;
	sl->nr_ranges++;
	return 0;
}

/* Every unit's address ranges, sorted. */
static int index_units(struct srcline *sl)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	size_t cap = 0;
	uint8_t unit_type;
	Dwarf_Half version;
	int ret = 0;

	while (ret == 0 && dwarf_get_units(sl->dbg, cu, &cu, &version,
					   &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (unit_type == DW_UT_skeleton)
			cudie = subdie;
		while (ret == 0 &&
		       (off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0)
			ret = add_range(sl, &cap, lo, hi, &cudie);
	}
	if (ret < 0)
		return ret;
	qsort(sl->ranges, sl->nr_ranges, sizeof(*sl->ranges), range_cmp);
	return 0;
}

int srcline_new(struct srcline **out, const char *path)
{
	struct pipe_err err;
	struct srcline *sl;
	struct stat st;
	int ret;

	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	sl->fd = trust_open(path, "cannot read", &st, &err);
	if (sl->fd < 0) {
		ret = sl->fd;
		free(sl);
		return ret;
	}
	sl->dbg = dwarf_begin(sl->fd, DWARF_C_READ);
	if (!sl->dbg) {
		srcline_free(sl);
		return -ENODATA;
	}
	ret = index_units(sl);
	if (ret == 0 && sl->nr_ranges == 0)
		ret = -ENODATA;
	if (ret < 0) {
		srcline_free(sl);
		return ret;
	}
	*out = sl;
	return 0;
}

void srcline_free(struct srcline *sl)
{
	size_t i;

	if (!sl)
		return;
	for (i = 0; i < sl->nr_cached; i++)
		free(sl->cache[i]);
	free(sl->cache);
	itab_free(&sl->cache_tab);
	for (i = 0; i < sl->nr_names; i++)
		free(sl->names[i].name);
	free(sl->names);
	itab_free(&sl->names_tab);
	free(sl->scratch);
	free(sl->ranges);
	if (sl->dbg)
		dwarf_end(sl->dbg);
	if (sl->fd >= 0)
		close(sl->fd);
	free(sl);
}

/* The unit covering vaddr, or false. */
static bool find_unit(const struct srcline *sl, uint64_t vaddr,
		      Dwarf_Die *cu)
{
	uint32_t lo, hi;

	/* the last range starting at or before vaddr */
	lo = (uint32_t)search_u64(sl->ranges, sl->nr_ranges,
				  sizeof(*sl->ranges),
				  offsetof(struct cu_range, lo), vaddr,
				  SEARCH_FIRST_ABOVE);
	/* ranges rarely nest; look back a little for an enclosing one */
	for (hi = lo; hi > 0 && lo - hi < 8; hi--) {
		const struct cu_range *r = &sl->ranges[hi - 1];

		if (vaddr >= r->lo && vaddr < r->hi) {
			*cu = r->cu;
			return true;
		}
	}
	return false;
}

/* The function name of a subprogram or inlined-subroutine DIE. */
static const char *raw_name(Dwarf_Die *die)
{
	static const int attrs[] = { DW_AT_linkage_name,
				     DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute a;
	const char *n;
	size_t i;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		n = dwarf_formstring(dwarf_attr_integrate(die, attrs[i], &a));
		if (n)
			return n;
	}
	return NULL;
}

/* Demangled names are found by the DWARF string's address. */
static uint64_t name_hash(const char *mangled)
{
	return (uint64_t)(uintptr_t)mangled * UINT64_C(0x9e3779b97f4a7c15);
}

static bool name_eq(const void *items, uint32_t item, const void *key)
{
	return ((const struct shown *)items)[item].mangled == key;
}

static uint64_t name_rehash(const void *items, uint32_t item)
{
	return name_hash(((const struct shown *)items)[item].mangled);
}

static const char *shown_name(struct srcline *sl, const char *name,
			      bool demangle)
{
	uint64_t h;
	uint32_t i;
	char *d;

	if (!name || !demangle || name[0] != '_' ||
	    (name[1] != 'Z' && name[1] != 'R'))
		return name;
	h = name_hash(name);
	i = itab_find(&sl->names_tab, h, name_eq, sl->names, name);
	if (i != ITAB_NONE)
		return sl->names[i].name;
	if (itab_reserve(&sl->names_tab, TAB_FIRST, UINT32_MAX / 2 + 1,
			 name_rehash, sl->names) < 0 ||
	    grow_array(&sl->names, &sl->cap_names, sl->nr_names + 1,
		       sizeof(*sl->names), 64, UINT32_MAX / 2) < 0)
		return name;
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE);
	if (!d)
		return name;
	sl->names[sl->nr_names] = (struct shown){ name, d };
	itab_put(&sl->names_tab, h, (uint32_t)sl->nr_names++);
	return d;
}

/* The file of DW_AT_call_file of an inlined call, or NULL. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nr;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nr) != 0 || idx >= nr)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static uint32_t die_udata(Dwarf_Die *die, int attr)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (dwarf_formudata(dwarf_attr(die, attr, &a), &v) != 0 ||
	    v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

/*
 * The DIEs around vaddr, innermost first, in *scopes (malloc'ed);
 * returns the count.  dwarf_getscopes stops at an inlined instance (its
 * scopes go on with the abstract origin's), so the chain is taken again
 * from the innermost function's DIE up through its parents, which
 * reaches the function it was inlined into.
 */
static int nest_of(Dwarf_Die *cu, uint64_t vaddr, Dwarf_Die **scopes)
{
	Dwarf_Die *first = NULL, fn;
	int i, n;

	*scopes = NULL;
	n = dwarf_getscopes(cu, vaddr, &first);
	for (i = 0; i < n; i++) {
		int tag = dwarf_tag(&first[i]);

		if (tag == DW_TAG_subprogram ||
		    tag == DW_TAG_inlined_subroutine)
			break;
	}
	if (i >= n) {
		free(first);
		return 0;
	}
	fn = first[i];
	free(first);
	return dwarf_getscopes_die(&fn, scopes);
}

/*
 * Fill up to SRCLINE_MAX_DEPTH levels into f; returns the count.  The
 * innermost level gets the address's line; each inlined call gives the
 * next level its call site, as addr2line -i does.
 */
static uint32_t walk(struct srcline *sl, Dwarf_Die *cu, uint64_t vaddr,
		     bool demangle, struct pipe_src_frame *f)
{
	Dwarf_Line *line = dwarf_getsrc_die(cu, vaddr);
	const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	Dwarf_Die *scopes = NULL;
	uint32_t nr = 0, lno = 0, col = 0;
	int i, n;
	int v;

	if (line && dwarf_lineno(line, &v) == 0 && v > 0)
		lno = (uint32_t)v;
	if (line && dwarf_linecol(line, &v) == 0 && v > 0)
		col = (uint32_t)v;
	n = nest_of(cu, vaddr, &scopes);
	for (i = 0; i < n && nr < SRCLINE_MAX_DEPTH; i++) {
		Dwarf_Die *d = &scopes[i];
		int tag = dwarf_tag(d);

		if (tag != DW_TAG_subprogram &&
		    tag != DW_TAG_inlined_subroutine)
			continue;
		memset(&f[nr], 0, sizeof(f[nr]));
		f[nr].function = shown_name(sl, raw_name(d), demangle);
		f[nr].file = file;
		f[nr].line = lno;
		f[nr].column = col;
		f[nr].decl_file = dwarf_decl_file(d);
		if (dwarf_decl_line(d, &v) == 0 && v > 0)
			f[nr].decl_line = (uint32_t)v;
		nr++;
		if (tag == DW_TAG_subprogram)
			break;
		f[nr - 1].inlined = 1;
		file = call_file(cu, d);
		lno = die_udata(d, DW_AT_call_line);
		col = die_udata(d, DW_AT_call_column);
	}
	free(scopes);
	if (nr == 0 && file) {
		/* a line without a function around it (assembly, say) */
		memset(&f[0], 0, sizeof(f[0]));
		f[0].file = file;
		f[0].line = lno;
		f[0].column = col;
		nr = 1;
	}
	return nr;
}

/* A cached address: the address and the demangling asked for. */
static uint64_t entry_hash(uint64_t vaddr, bool demangle)
{
	return (vaddr ^ demangle) * UINT64_C(0x9e3779b97f4a7c15);
}

struct entry_key {
	uint64_t vaddr;
	bool demangle;
};

static bool entry_eq(const void *items, uint32_t item, const void *key)
{
	const struct entry *e = ((struct entry *const *)items)[item];
	const struct entry_key *k = key;

	return e->vaddr == k->vaddr && e->demangle == k->demangle;
}

static uint64_t entry_rehash(const void *items, uint32_t item)
{
	const struct entry *e = ((struct entry *const *)items)[item];

	return entry_hash(e->vaddr, e->demangle);
}

const struct pipe_srcline *srcline_find(struct srcline *sl, uint64_t vaddr,
					bool demangle)
{
	struct pipe_src_frame f[SRCLINE_MAX_DEPTH];
	struct entry_key k = { vaddr, demangle };
	uint64_t h = entry_hash(vaddr, demangle);
	uint32_t i = itab_find(&sl->cache_tab, h, entry_eq, sl->cache, &k);
	struct entry *e;
	Dwarf_Die cu;
	uint32_t nr;

	if (i != ITAB_NONE)
		return &sl->cache[i]->out;
	if (sl->scratch && sl->scratch->vaddr == vaddr &&
	    sl->scratch->demangle == demangle)
		return &sl->scratch->out;
	nr = find_unit(sl, vaddr, &cu) ? walk(sl, &cu, vaddr, demangle, f)
				       : 0;
	e = malloc(sizeof(*e) + nr * sizeof(f[0]));
	if (!e)
		return &none;
	e->vaddr = vaddr;
	e->demangle = demangle;
	e->out = none;
	e->out.nr = nr;
	e->out.frames = e->frames;
	memcpy(e->frames, f, nr * sizeof(f[0]));
	if (sl->nr_cached < SRCLINE_CACHE_MAX &&
	    itab_reserve(&sl->cache_tab, TAB_FIRST, UINT32_MAX / 2 + 1,
			 entry_rehash, sl->cache) == 0 &&
	    grow_array(&sl->cache, &sl->cap_cached, sl->nr_cached + 1,
		       sizeof(*sl->cache), 1024, SRCLINE_CACHE_MAX) == 0) {
		itab_put(&sl->cache_tab, h, (uint32_t)sl->nr_cached);
		sl->cache[sl->nr_cached++] = e;
	} else {
		free(sl->scratch);
		sl->scratch = e;
	}
	return &e->out;
}
