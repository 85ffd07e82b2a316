/*
 * pdmeta.c - what a perf.data file says about its recording: the header
 * features (strings, the command line, build-ids, event names), the
 * events with their attrs and ids, the id to event lookup and the
 * ID_INDEX entries (where each id's event was opened).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "pdrstate.h"
#include "search.h"

/* ---- strings and features --------------------------------------------- */

/* A perf_header_string at p (len bytes left): u32 length, then the text
 * padded with NULs.  Returns a copy (NULL on a bad string) and sets *used. */
static char *hdr_string(const uint8_t *p, size_t len, size_t *used)
{
	uint32_t n;
	size_t text;
	char *s;

	if (len < 4)
		return NULL;
	n = rd32(p);
	if (n > len - 4 || n > (1u << 20))
		return NULL;
	text = strnlen((const char *)p + 4, n);
	s = malloc(text + 1);
	if (!s)
		return NULL;
	memcpy(s, p + 4, text);
	s[text] = '\0';
	*used = 4 + (size_t)n;
	return s;
}

static void set_string(char **dst, const uint8_t *p, size_t len)
{
	size_t used;
	char *s = hdr_string(p, len, &used);

	if (!s)
		return;
	free(*dst);
	*dst = s;
}

static void set_cmdline(struct pdread *r, const uint8_t *p, size_t len)
{
	struct bytebuf out = { .max = 64u << 10 };
	size_t used, off = 4, wl;
	uint32_t nr, i;
	char *w;

	if (len < 4)
		return;
	nr = rd32(p);
	for (i = 0; i < nr && off < len; i++) {
		w = hdr_string(p + off, len - off, &used);
		if (!w)
			break;
		off += used;
		wl = strlen(w);
		/* the word, a space before it, a NUL after it */
		if (bytebuf_reserve(&out, wl + 2) < 0) {
			free(w);
			break;
		}
		if (out.len)
			out.p[out.len++] = ' ';
		memcpy(out.p + out.len, w, wl + 1);
		out.len += wl;
		free(w);
	}
	if (out.p) {
		free(r->info.cmdline);
		r->info.cmdline = (char *)out.p;
	}
}

void pdr_add_build_id(struct pdread *r, const uint8_t *p, size_t size)
{
	struct pdread_build_id *b;
	uint16_t misc;
	size_t text;

	if (size <= PD_BUILD_ID_NAME_OFF ||
	    r->info.nr_build_ids >= PDREAD_BUILD_IDS_MAX)
		return;
	if (grow_array(&r->info.build_ids, &r->cap_build_ids,
		       (size_t)r->info.nr_build_ids + 1,
		       sizeof(*r->info.build_ids), 16,
		       PDREAD_BUILD_IDS_MAX) < 0)
		return;
	b = &r->info.build_ids[r->info.nr_build_ids];
	memcpy(&misc, p + 4, 2);
	b->misc = misc;
	memcpy(&b->pid, p + 8, 4);
	memcpy(b->id, p + 12, PD_BUILD_ID_MAX);
	b->len = PD_BUILD_ID_MAX;
	if ((misc & PD_MISC_BUILD_ID_SIZE) && p[12 + PD_BUILD_ID_MAX] &&
	    p[12 + PD_BUILD_ID_MAX] <= PD_BUILD_ID_MAX)
		b->len = p[12 + PD_BUILD_ID_MAX];
	text = strnlen((const char *)p + PD_BUILD_ID_NAME_OFF,
		       size - PD_BUILD_ID_NAME_OFF);
	b->path = malloc(text + 1);
	if (!b->path)
		return;
	memcpy(b->path, p + PD_BUILD_ID_NAME_OFF, text);
	b->path[text] = '\0';
	r->info.nr_build_ids++;
}

static void set_build_ids(struct pdread *r, const uint8_t *p, size_t len)
{
	size_t off = 0;
	uint16_t size;

	while (off + 8 <= len) {
		memcpy(&size, p + off + 6, 2);
		if (size < 8 || size > len - off)
			return;
		pdr_add_build_id(r, p + off, size);
		off += size;
	}
}

void pdr_name_event(struct pdread *r, uint32_t e, const char *name)
{
	char *s;

	if (e >= r->info.nr_events || !name[0])
		return;
	s = strdup(name);
	if (!s)
		return;
	free(r->info.events[e].name);
	r->info.events[e].name = s;
}

uint32_t pdr_event_by_id_scan(const struct pdread *r, uint64_t id)
{
	uint32_t e, i;

	for (e = 0; e < r->info.nr_events; e++)
		for (i = 0; i < r->info.events[e].nr_ids; i++)
			if (r->info.events[e].ids[i] == id)
				return e;
	return UINT32_MAX;
}

static void set_event_desc(struct pdread *r, const uint8_t *p, size_t len)
{
	uint32_t nr, asz, i, nr_ids, e;
	size_t off = 8, used;
	char *name;

	if (len < 8)
		return;
	nr = rd32(p);
	asz = rd32(p + 4);
	if (asz < PERF_ATTR_SIZE_VER0 || asz > len)
		return;
	for (i = 0; i < nr && off < len; i++) {
		if (len - off < (size_t)asz + 4)
			return;
		off += asz;
		nr_ids = rd32(p + off);
		off += 4;
		name = hdr_string(p + off, len - off, &used);
		if (!name)
			return;
		off += used;
		if (nr_ids > (len - off) / 8) {
			free(name);
			return;
		}
		/* match by the first id; by position when there are none */
		e = nr_ids ? pdr_event_by_id_scan(r, rd64(p + off)) : i;
		if (e == UINT32_MAX && r->info.nr_events == nr)
			e = i;
		pdr_name_event(r, e, name);
		free(name);
		off += (size_t)nr_ids * 8;
	}
}

void pdr_parse_feature(struct pdread *r, uint32_t feat, const uint8_t *p,
		       size_t len)
{
	struct pdread_info *in = &r->info;
	/* the features that are one perf_header_string */
	char **const strs[] = {
		[PD_FEAT_HOSTNAME] = &in->hostname,
		[PD_FEAT_OSRELEASE] = &in->release,
		[PD_FEAT_VERSION] = &in->version,
		[PD_FEAT_ARCH] = &in->arch,
		[PD_FEAT_CPUDESC] = &in->cpudesc,
		[PD_FEAT_CPUID] = &in->cpuid,
	};

	if (feat < sizeof(strs) / sizeof(strs[0]) && strs[feat]) {
		set_string(strs[feat], p, len);
		return;
	}
	switch (feat) {
	case PD_FEAT_BUILD_ID:
		set_build_ids(r, p, len);
		break;
	case PD_FEAT_NRCPUS:
		if (len >= 8) {
			in->nr_cpus_avail = rd32(p);
			in->nr_cpus_online = rd32(p + 4);
		}
		break;
	case PD_FEAT_TOTAL_MEM:
		if (len >= 8)
			in->total_mem_kb = rd64(p);
		break;
	case PD_FEAT_CMDLINE:
		set_cmdline(r, p, len);
		break;
	case PD_FEAT_EVENT_DESC:
		set_event_desc(r, p, len);
		break;
	case PD_FEAT_SAMPLE_TIME:
		if (len >= 16) {
			in->first_sample_ns = rd64(p);
			in->last_sample_ns = rd64(p + 8);
		}
		break;
	case PD_FEAT_CLOCKID:
		if (len >= 8) {
			in->has_clockid = true;
			in->clockid = rd64(p);
		}
		break;
	case PD_FEAT_CLOCK_DATA:
		if (len >= 24 && rd32(p) == 1) {
			in->has_clock_data = true;
			in->clockid = rd32(p + 4);
			in->has_clockid = true;
			in->clock_wall_ns = rd64(p + 8);
			in->clock_ref_ns = rd64(p + 16);
		}
		break;
	case PD_FEAT_COMPRESSED:
		if (len >= 20) {
			in->comp_type = rd32(p + 4);
			in->comp_level = rd32(p + 8);
			in->comp_mmap_len = rd32(p + 16);
		}
		break;
	default:
		break;
	}
}

/* ---- events and ids ----------------------------------------------------- */

int pdr_add_event(struct pdread *r, const uint8_t *attr, size_t avail,
		  const uint64_t *ids_le, uint64_t nr_ids)
{
	struct pdread_event *ev;
	struct perf_event_attr *a;
	uint32_t size, total = 0, e;

	if (r->info.nr_events >= PDREAD_EVENTS_MAX)
		return fail(r, -E2BIG, "cannot read '%s': more than %u events",
			    r->name, PDREAD_EVENTS_MAX);
	if (avail < PERF_ATTR_SIZE_VER0)
		return fail(r, -EINVAL,
			    "cannot read '%s': an event attr of %zu bytes is "
			    "too short", r->name, avail);
	memcpy(&size, attr + 4, 4);
	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > avail)
		return fail(r, -EINVAL,
			    "cannot read '%s': an event attr claims %u bytes "
			    "of %zu", r->name, size, avail);
	for (e = 0; e < r->info.nr_events; e++)
		total += r->info.events[e].nr_ids;
	if (nr_ids > PDREAD_IDS_MAX - total)
		return fail(r, -E2BIG,
			    "cannot read '%s': more than %u sample ids",
			    r->name, PDREAD_IDS_MAX);
	if (grow_array(&r->info.events, &r->cap_events,
		       (size_t)r->info.nr_events + 1, sizeof(*r->info.events),
		       4, PDREAD_EVENTS_MAX) < 0)
		return fail(r, -ENOMEM, "cannot read '%s': out of memory",
			    r->name);
	ev = &r->info.events[r->info.nr_events];
	memset(ev, 0, sizeof(*ev));
	if (size > PDREAD_ATTR_MAX)
		size = PDREAD_ATTR_MAX; /* newer fields than we know */
	memcpy(ev->attr, attr, size);
	a = (struct perf_event_attr *)ev->attr;
	a->size = size;
	ev->attr_size = size;
	if (nr_ids) {
		ev->ids = malloc(nr_ids * sizeof(*ev->ids));
		if (!ev->ids)
			return fail(r, -ENOMEM,
				    "cannot read '%s': out of memory",
				    r->name);
		memcpy(ev->ids, ids_le, nr_ids * sizeof(*ev->ids));
	}
	ev->nr_ids = (uint32_t)nr_ids;
	r->info.nr_events++;
	r->ids_dirty = true;
	return 0;
}

static int cmp_u64_pair(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];

	return x < y ? -1 : x > y;
}

/* Where the first event's sample_type puts the id (perf requires every
 * event of a file to share the sample_id layout). */
static void id_layout(struct pdread *r)
{
	const struct perf_event_attr *a =
		(const struct perf_event_attr *)r->info.events[0].attr;
	uint64_t t = a->sample_type;

	r->id_pos = -1;
	r->id_back = 0;
	if (t & PERF_SAMPLE_IDENTIFIER) {
		r->id_pos = 0;
		r->id_back = 1;
		return;
	}
	if (!(t & PERF_SAMPLE_ID))
		return;
	/* IP, TID, TIME, ADDR come before ID in a sample */
	r->id_pos = !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) +
		    !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ADDR);
	/* the trailer ends ... ID, STREAM_ID, CPU */
	if (a->sample_id_all)
		r->id_back = 1 + !!(t & PERF_SAMPLE_STREAM_ID) +
			     !!(t & PERF_SAMPLE_CPU);
}

static int sort_ids(struct pdread *r)
{
	uint32_t e, i, n = 0;
	uint64_t *pairs;

	free(r->id_keys);
	free(r->id_events);
	r->id_keys = NULL;
	r->id_events = NULL;
	r->nr_sorted = 0;
	r->ids_dirty = false;
	if (!r->info.nr_events)
		return 0;
	id_layout(r);
	for (e = 0; e < r->info.nr_events; e++)
		n += r->info.events[e].nr_ids;
	if (!n)
		return 0;
	pairs = malloc((size_t)n * 2 * sizeof(*pairs));
	r->id_keys = malloc((size_t)n * sizeof(*r->id_keys));
	r->id_events = malloc((size_t)n * sizeof(*r->id_events));
	if (!pairs || !r->id_keys || !r->id_events) {
		free(pairs);
		r->ids_failed = true;
		return -ENOMEM;
	}
	n = 0;
	for (e = 0; e < r->info.nr_events; e++) {
		for (i = 0; i < r->info.events[e].nr_ids; i++) {
			pairs[2 * n] = r->info.events[e].ids[i];
			pairs[2 * n + 1] = e;
			n++;
		}
	}
	qsort(pairs, n, 2 * sizeof(*pairs), cmp_u64_pair);
	for (i = 0; i < n; i++) {
		r->id_keys[i] = pairs[2 * i];
		r->id_events[i] = (uint32_t)pairs[2 * i + 1];
	}
	r->nr_sorted = n;
	free(pairs);
	return 0;
}

/* The sample id of record h, where the first event's layout puts it;
 * false when the record has none. */
static bool record_id(const struct pdread *r,
		      const struct perf_event_header *h, uint64_t *id)
{
	size_t at;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (r->id_pos < 0)
			return false;
		at = 8 + 8 * (size_t)r->id_pos;
		if (at + 8 > h->size)
			return false;
	} else {
		if (!r->id_back)
			return false;
		if (h->size < 8 + 8 * (size_t)r->id_back)
			return false;
		at = h->size - 8 * (size_t)r->id_back;
	}
	*id = rd64((const uint8_t *)h + at);
	return true;
}

uint32_t pdread_event_of(struct pdread *r, const struct perf_event_header *h)
{
	size_t lo;
	uint64_t id;

	if (r->ids_dirty && sort_ids(r) < 0)
		return UINT32_MAX;
	if (r->info.nr_events == 1)
		return 0;
	if (h->type == PERF_RECORD_SAMPLE && r->id_pos < 0)
		return r->info.nr_events ? 0 : UINT32_MAX;
	if (!record_id(r, h, &id))
		return UINT32_MAX;
	lo = search_u64(r->id_keys, r->nr_sorted, sizeof(*r->id_keys), 0, id,
			SEARCH_FIRST_NOT_BELOW);
	if (lo < r->nr_sorted && r->id_keys[lo] == id)
		return r->id_events[lo];
	return UINT32_MAX;
}

static int cmp_ix(const void *a, const void *b)
{
	const struct ix_entry *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort the index by id, keeping the last entry of each id. */
static void sort_ix(struct pdread *r)
{
	uint32_t i, n = 0;

	qsort(r->ix, r->nr_ix, sizeof(*r->ix), cmp_ix);
	for (i = 0; i < r->nr_ix; i++) {
		if (n && r->ix[n - 1].id == r->ix[i].id)
			n--;
		r->ix[n++] = r->ix[i];
	}
	r->nr_ix = n;
	r->ix_dirty = false;
}

int pdread_where(struct pdread *r, const struct perf_event_header *h,
		 int32_t *cpu, int32_t *tid)
{
	size_t lo;
	uint64_t id;

	if (r->ids_dirty && sort_ids(r) < 0)
		return -ENOMEM;
	if (!r->nr_ix || !r->info.nr_events || !record_id(r, h, &id))
		return -ENOENT;
	if (r->ix_dirty)
		sort_ix(r);
	lo = search_u64(r->ix, r->nr_ix, sizeof(*r->ix),
			offsetof(struct ix_entry, id), id,
			SEARCH_FIRST_NOT_BELOW);
	if (lo == r->nr_ix || r->ix[lo].id != id)
		return -ENOENT;
	*cpu = r->ix[lo].cpu;
	*tid = r->ix[lo].tid;
	return 0;
}

void pdread_attr_name(const struct perf_event_attr *a, char *buf, size_t cap)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend",
		"ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output",
		"cgroup-switches",
	};

	char mods[16];
	size_t n = 0;
	uint32_t i;

	/* perf's modifiers: the privilege levels kept when some are
	 * excluded, then one p per level of precise_ip */
	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		if (!a->exclude_user)
			mods[n++] = 'u';
		if (!a->exclude_kernel)
			mods[n++] = 'k';
		if (!a->exclude_hv)
			mods[n++] = 'h';
	}
	for (i = 0; i < a->precise_ip && i < 3; i++)
		mods[n++] = 'p';
	mods[n] = '\0';
	if (a->type == PERF_TYPE_HARDWARE &&
	    a->config < sizeof(hw) / sizeof(hw[0]))
		snprintf(buf, cap, "%s%s%s", hw[a->config], n ? ":" : "", mods);
	else if (a->type == PERF_TYPE_SOFTWARE &&
		 a->config < sizeof(sw) / sizeof(sw[0]))
		snprintf(buf, cap, "%s%s%s", sw[a->config], n ? ":" : "", mods);
	else
		snprintf(buf, cap, "event-%u:0x%" PRIx64, a->type,
			 (uint64_t)a->config);
}
