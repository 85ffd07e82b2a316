/*
 * pdread.c - the perf.data reader (see pdread.h): a buffered forward
 * reader over the data (a file's data section or a pipe), the header,
 * attr and feature parsers, and the zstd stream of compressed records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "pdread.h"

#define IN_CAP (1u << 20)     /* forward buffer; > 2 records of 64 KiB */
#define REC_MAX 65535u        /* header.size is a u16 */

struct pdread {
	int fd;                   /* borrowed */
	char *name;               /* owned, for messages */
	char msg[512];            /* the last error */
	struct pdread_info info;
	struct pdread_stats st;
	bool started;             /* a kernel record was returned */
	/* the forward reader */
	uint8_t *buf;             /* IN_CAP bytes */
	size_t pos, len;          /* unread bytes are buf[pos, len) */
	uint64_t off;             /* file offset of buf[0] */
	uint64_t end;             /* offset where the data ends */
	bool eof;                 /* read() returned 0 */
	/* compressed records */
	ZSTD_DStream *zd;         /* one stream for the whole file */
	uint8_t *dbuf;            /* inflated bytes */
	size_t dcap, dpos, dlen;  /* unread are dbuf[dpos, dlen) */
	uint64_t dstart;          /* offset of the compressed record */
	/* a record copied to be 8-aligned */
	uint64_t *align;          /* REC_MAX + 1 bytes */
	/* ids sorted for lookup */
	uint64_t *id_keys;        /* sorted ids */
	uint32_t *id_events;      /* their events */
	uint32_t nr_sorted;
	bool ids_dirty;           /* events changed since the sort */
	int id_pos;               /* sample: u64 index of the id, -1 none */
	int id_back;              /* others: u64s from the end, 0 none */
	/* ID_INDEX entries, sorted by id when ix_dirty is false */
	struct ix_entry *ix;      /* owned, cap_ix slots */
	uint32_t nr_ix, cap_ix;
	bool ix_dirty;            /* entries added since the sort */
};

/* One PERF_RECORD_ID_INDEX entry: where an id's event was opened. */
struct ix_entry {
	uint64_t id;              /* sample id */
	uint64_t seq;             /* order read: the last entry of an id wins */
	int32_t cpu;              /* -1: any */
	int32_t tid;              /* -1: any */
};

static int fail(struct pdread *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct pdread *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return err;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* ---- reading ---------------------------------------------------------- */

static int read_full_at(struct pdread *r, uint64_t off, void *dst,
			size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(r->fd, (uint8_t *)dst + got, len - got,
			  (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(r, -errno, "cannot read '%s': %s", r->name,
				    strerror(errno));
		if (n == 0)
			return fail(r, -EINVAL,
				    "cannot read '%s': it ends at byte %" PRIu64
				    " inside its header", r->name, off + got);
		got += (size_t)n;
	}
	return 0;
}

/* Make at least `need` bytes readable at buf[pos]; returns the bytes
 * there (fewer at the end of the data), or negative errno. */
static ssize_t in_fill(struct pdread *r, size_t need)
{
	ssize_t n;
	uint64_t limit;
	size_t want;

	while (r->len - r->pos < need && !r->eof) {
		if (r->pos) {
			memmove(r->buf, r->buf + r->pos, r->len - r->pos);
			r->off += r->pos;
			r->len -= r->pos;
			r->pos = 0;
		}
		want = IN_CAP - r->len;
		limit = r->end - (r->off + r->len);
		if (r->end != UINT64_MAX && limit < want)
			want = (size_t)limit;
		if (!want) {
			r->eof = true;
			break;
		}
		n = read(r->fd, r->buf + r->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(r, -errno, "cannot read '%s': %s", r->name,
				    strerror(errno));
		if (n == 0)
			r->eof = true;
		r->len += (size_t)n;
	}
	return (ssize_t)(r->len - r->pos);
}

/* Skip `len` bytes of the forward stream (data that trails a record). */
static int in_skip(struct pdread *r, uint64_t len)
{
	ssize_t n;
	size_t step;

	while (len) {
		n = in_fill(r, 1);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return 1; /* ended inside the skipped bytes */
		step = (uint64_t)n < len ? (size_t)n : (size_t)len;
		r->pos += step;
		len -= step;
	}
	return 0;
}

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
	uint32_t nr, i;
	size_t used, off = 4, total = 0, wl;
	char *out = NULL, *w, *grown;

	if (len < 4)
		return;
	nr = rd32(p);
	for (i = 0; i < nr && off < len; i++) {
		w = hdr_string(p + off, len - off, &used);
		if (!w)
			break;
		off += used;
		wl = strlen(w);
		if (total + wl + 2 > (64u << 10)) {
			free(w);
			break;
		}
		grown = realloc(out, total + wl + 2);
		if (!grown) {
			free(w);
			break;
		}
		out = grown;
		if (total)
			out[total++] = ' ';
		memcpy(out + total, w, wl + 1);
		total += wl;
		free(w);
	}
	if (out) {
		free(r->info.cmdline);
		r->info.cmdline = out;
	}
}

static void add_build_id(struct pdread *r, const uint8_t *p, size_t size)
{
	struct pdread_build_id *b, *grown;
	uint16_t misc;
	size_t text;

	if (size <= PD_BUILD_ID_NAME_OFF ||
	    r->info.nr_build_ids >= PDREAD_BUILD_IDS_MAX)
		return;
	if ((r->info.nr_build_ids & (r->info.nr_build_ids - 1)) == 0) {
		grown = realloc(r->info.build_ids,
				(r->info.nr_build_ids ? 2 * r->info.nr_build_ids
						      : 16) * sizeof(*grown));
		if (!grown)
			return;
		r->info.build_ids = grown;
	}
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
		add_build_id(r, p + off, size);
		off += size;
	}
}

static void name_event(struct pdread *r, uint32_t e, const char *name)
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

/* The event holding sample id `id`, UINT32_MAX if none (a linear scan:
 * used while reading metadata only). */
static uint32_t event_by_id_scan(const struct pdread *r, uint64_t id)
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
		e = nr_ids ? event_by_id_scan(r, rd64(p + off)) : i;
		if (e == UINT32_MAX && r->info.nr_events == nr)
			e = i;
		name_event(r, e, name);
		free(name);
		off += (size_t)nr_ids * 8;
	}
}

static void parse_feature(struct pdread *r, uint32_t feat, const uint8_t *p,
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

static int add_event(struct pdread *r, const uint8_t *attr, size_t avail,
		     const uint64_t *ids_le, uint64_t nr_ids)
{
	struct pdread_event *ev, *grown;
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
	grown = realloc(r->info.events,
			(r->info.nr_events + 1) * sizeof(*grown));
	if (!grown)
		return fail(r, -ENOMEM, "cannot read '%s': out of memory",
			    r->name);
	r->info.events = grown;
	ev = &grown[r->info.nr_events];
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
	uint32_t lo = 0, hi;
	uint64_t id;

	if (r->ids_dirty && sort_ids(r) < 0)
		return UINT32_MAX;
	if (r->info.nr_events == 1)
		return 0;
	if (h->type == PERF_RECORD_SAMPLE && r->id_pos < 0)
		return r->info.nr_events ? 0 : UINT32_MAX;
	if (!record_id(r, h, &id))
		return UINT32_MAX;
	hi = r->nr_sorted;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->id_keys[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
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
	uint32_t lo = 0, hi;
	uint64_t id;

	if (r->ids_dirty && sort_ids(r) < 0)
		return -ENOMEM;
	if (!r->nr_ix || !r->info.nr_events || !record_id(r, h, &id))
		return -ENOENT;
	if (r->ix_dirty)
		sort_ix(r);
	hi = r->nr_ix;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
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

/* ---- file mode header ------------------------------------------------- */

static int read_attrs(struct pdread *r, const uint8_t *hdr)
{
	uint64_t attr_size = rd64(hdr + 16), off = rd64(hdr + 24);
	uint64_t size = rd64(hdr + 32), nr, i, ids_off, ids_size;
	uint8_t *buf;
	uint64_t *ids = NULL;
	int ret = 0;

	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096)
		return fail(r, -EINVAL,
			    "cannot read '%s': bad attr size %" PRIu64
			    " in its header", r->name, attr_size);
	nr = size / attr_size;
	if (size % attr_size || nr == 0 || nr > PDREAD_EVENTS_MAX ||
	    off > r->info.file_size || size > r->info.file_size - off)
		return fail(r, -EINVAL,
			    "cannot read '%s': bad attr section (%" PRIu64
			    " bytes at %" PRIu64 ")", r->name, size, off);
	buf = malloc(size);
	if (!buf)
		return fail(r, -ENOMEM, "cannot read '%s': out of memory",
			    r->name);
	ret = read_full_at(r, off, buf, size);
	for (i = 0; ret == 0 && i < nr; i++) {
		const uint8_t *fa = buf + i * attr_size;

		ids_off = rd64(fa + attr_size - 16);
		ids_size = rd64(fa + attr_size - 8);
		if (ids_size % 8 || ids_off > r->info.file_size ||
		    ids_size > r->info.file_size - ids_off ||
		    ids_size / 8 > PDREAD_IDS_MAX) {
			ret = fail(r, -EINVAL,
				   "cannot read '%s': bad id section of event "
				   "%" PRIu64, r->name, i);
			break;
		}
		ids = malloc(ids_size ? ids_size : 1);
		if (!ids) {
			ret = fail(r, -ENOMEM, "cannot read '%s': out of memory",
				   r->name);
			break;
		}
		ret = read_full_at(r, ids_off, ids, ids_size);
		if (ret == 0)
			ret = add_event(r, fa, attr_size - 16, ids,
					ids_size / 8);
		free(ids);
	}
	free(buf);
	return ret;
}

static int read_features(struct pdread *r, const uint8_t *hdr)
{
	uint64_t bits[PD_FEAT_BITS / 64], at, off, size;
	uint8_t sec[16], *buf;
	uint32_t f;
	int ret;

	memcpy(bits, hdr + 72, sizeof(bits));
	at = r->info.data_offset + r->info.data_size;
	for (f = 0; f < PD_FEAT_BITS; f++) {
		if (!(bits[f / 64] >> (f % 64) & 1))
			continue;
		if (at > r->info.file_size || r->info.file_size - at < 16)
			return fail(r, -EINVAL,
				    "cannot read '%s': its feature table "
				    "ends past the file", r->name);
		ret = read_full_at(r, at, sec, 16);
		if (ret < 0)
			return ret;
		at += 16;
		off = rd64(sec);
		size = rd64(sec + 8);
		if (off > r->info.file_size || size > r->info.file_size - off ||
		    size > PDREAD_FEATURE_MAX)
			continue; /* a feature we cannot trust: ignored */
		buf = malloc(size ? size : 1);
		if (!buf)
			return fail(r, -ENOMEM,
				    "cannot read '%s': out of memory", r->name);
		ret = read_full_at(r, off, buf, size);
		if (ret == 0)
			parse_feature(r, f, buf, size);
		free(buf);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int open_file_mode(struct pdread *r, const uint8_t *first16)
{
	uint8_t hdr[PD_FILE_HEADER];
	struct stat st;
	uint64_t hsize = rd64(first16 + 8);
	int ret;

	if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return fail(r, -EINVAL,
			    "cannot read '%s': a perf.data file in file mode "
			    "must be a regular file (pipe mode, perf record "
			    "-o -, streams)", r->name);
	r->info.file_size = (uint64_t)st.st_size;
	if (hsize < PD_FILE_HEADER || hsize > 4096)
		return fail(r, -EINVAL,
			    "cannot read '%s': bad header size %" PRIu64,
			    r->name, hsize);
	ret = read_full_at(r, 0, hdr, sizeof(hdr));
	if (ret < 0)
		return ret;
	r->info.data_offset = rd64(hdr + 40);
	r->info.data_size = rd64(hdr + 48);
	if (r->info.data_offset < hsize ||
	    r->info.data_offset > r->info.file_size)
		return fail(r, -EINVAL,
			    "cannot read '%s': its data starts at byte %" PRIu64
			    ", past its %" PRIu64 " bytes", r->name,
			    r->info.data_offset, r->info.file_size);
	ret = read_attrs(r, hdr);
	if (ret < 0)
		return ret;
	if (r->info.data_size == 0) {
		/* the recorder never came back to write sizes and features */
		r->info.size_unknown = true;
		r->end = r->info.file_size;
	} else {
		r->end = r->info.data_offset + r->info.data_size;
		if (r->end < r->info.data_offset)
			r->end = UINT64_MAX;
		ret = read_features(r, hdr);
		if (ret < 0)
			return ret;
	}
	if (lseek(r->fd, (off_t)r->info.data_offset, SEEK_SET) < 0)
		return fail(r, -errno, "cannot seek in '%s': %s", r->name,
			    strerror(errno));
	r->off = r->info.data_offset;
	return 0;
}

int pdread_open(struct pdread **out, int fd, const char *name, char *msg,
		size_t cap)
{
	struct pdread *r = calloc(1, sizeof(*r));
	uint8_t first[16];
	size_t got = 0;
	ssize_t n;
	int ret = -ENOMEM;

	*out = NULL;
	if (!r) {
		snprintf(msg, cap, "cannot read '%s': out of memory", name);
		return -ENOMEM;
	}
	r->fd = fd;
	r->end = UINT64_MAX;
	r->name = strdup(name);
	r->buf = malloc(IN_CAP);
	r->align = malloc(REC_MAX + 1);
	if (!r->name || !r->buf || !r->align) {
		snprintf(msg, cap, "cannot read '%s': out of memory", name);
		goto out;
	}
	/* 16 bytes tell the mode; read them forward (a pipe cannot seek) */
	while (got < sizeof(first)) {
		n = read(fd, first + got, sizeof(first) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EINVAL;
			snprintf(msg, cap, "cannot read '%s': %s", name,
				 n < 0 ? strerror(errno)
				       : "not a perf.data file (too short)");
			goto out;
		}
		got += (size_t)n;
	}
	if (rd64(first) == PD_MAGIC_SWAPPED) {
		ret = fail(r, -EINVAL,
			   "cannot read '%s': a big-endian perf.data file is "
			   "not supported", name);
	} else if (rd64(first) != PD_MAGIC) {
		ret = fail(r, -EINVAL,
			   "cannot read '%s': not a perf.data file (no "
			   "PERFILE2 magic)", name);
	} else if (rd64(first + 8) == PD_PIPE_HEADER) {
		r->info.pipe_mode = true;
		r->off = PD_PIPE_HEADER;
		ret = 0;
	} else {
		ret = open_file_mode(r, first);
	}
	if (ret < 0) {
		snprintf(msg, cap, "%s", r->msg);
		goto out;
	}
	*out = r;
	return 0;
out:
	pdread_free(r);
	return ret;
}

void pdread_free(struct pdread *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->info.nr_events; i++) {
		free(r->info.events[i].name);
		free(r->info.events[i].ids);
	}
	free(r->info.events);
	for (i = 0; i < r->info.nr_build_ids; i++)
		free(r->info.build_ids[i].path);
	free(r->info.build_ids);
	free(r->info.hostname);
	free(r->info.release);
	free(r->info.version);
	free(r->info.arch);
	free(r->info.cpudesc);
	free(r->info.cpuid);
	free(r->info.cmdline);
	free(r->id_keys);
	free(r->id_events);
	free(r->ix);
	ZSTD_freeDStream(r->zd);
	free(r->dbuf);
	free(r->align);
	free(r->buf);
	free(r->name);
	free(r);
}

/* ---- records ------------------------------------------------------------ */

/* The data ends inside a record (torn) or at an impossible one (bad):
 * remember where, and end the records. */
static int stop_at(struct pdread *r, uint64_t at, bool bad)
{
	uint64_t end = r->end != UINT64_MAX ? r->end : r->off + r->len;

	r->st.torn = !bad;
	r->st.bad = bad;
	r->st.stop_offset = at;
	r->st.lost_bytes = end > at ? end - at : 0;
	r->pos = r->len;
	r->eof = true;
	r->end = at;
	return PDREAD_END;
}

/* The next raw record of the forward stream, borrowed in buf. */
static int raw_next(struct pdread *r, const uint8_t **out)
{
	struct perf_event_header h;
	uint64_t at;
	ssize_t n;

	n = in_fill(r, sizeof(h));
	if (n < 0)
		return (int)n;
	at = r->off + r->pos;
	if (n == 0)
		return PDREAD_END;
	if ((size_t)n < sizeof(h))
		return stop_at(r, at, false);
	memcpy(&h, r->buf + r->pos, sizeof(h));
	/* a killed recorder leaves zeros where its last pages were */
	if (h.size < sizeof(h))
		return stop_at(r, at, !(r->info.size_unknown && h.size == 0 &&
					h.type == 0));
	n = in_fill(r, h.size);
	if (n < 0)
		return (int)n;
	if ((size_t)n < h.size)
		return stop_at(r, at, false);
	*out = r->buf + r->pos;
	r->pos += h.size;
	return 0;
}

static int inflate_grow(struct pdread *r, size_t need)
{
	size_t cap = r->dcap ? r->dcap : (256u << 10);
	uint8_t *p;

	while (cap < need)
		cap *= 2;
	if (cap > PDREAD_INFLATE_MAX + REC_MAX)
		return -E2BIG;
	p = realloc(r->dbuf, cap);
	if (!p)
		return -ENOMEM;
	r->dbuf = p;
	r->dcap = cap;
	return 0;
}

/* Append the output of one compressed record to dbuf (after the part of
 * a record the previous one left). */
static int inflate(struct pdread *r, const uint8_t *rec, uint64_t at)
{
	struct perf_event_header h;
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	size_t ret, start;
	uint64_t dsize;
	int err;

	memcpy(&h, rec, sizeof(h));
	if (h.type == PD_REC_COMPRESSED2) {
		if (h.size < 16)
			return fail(r, -EINVAL,
				    "cannot read '%s': a compressed record at "
				    "byte %" PRIu64 " is too short", r->name, at);
		dsize = rd64(rec + 8);
		if (dsize > (uint64_t)h.size - 16)
			return fail(r, -EINVAL,
				    "cannot read '%s': a compressed record at "
				    "byte %" PRIu64 " claims %" PRIu64
				    " bytes of %u", r->name, at, dsize, h.size);
		in.src = rec + 16;
		in.size = (size_t)dsize;
	} else {
		in.src = rec + 8;
		in.size = h.size - 8u;
	}
	in.pos = 0;
	if (!r->zd) {
		r->zd = ZSTD_createDStream();
		if (!r->zd || ZSTD_isError(ZSTD_initDStream(r->zd)))
			return fail(r, -ENOMEM,
				    "cannot read '%s': out of memory", r->name);
	}
	if (r->dpos) {
		memmove(r->dbuf, r->dbuf + r->dpos, r->dlen - r->dpos);
		r->dlen -= r->dpos;
		r->dpos = 0;
	}
	start = r->dlen;
	r->dstart = at;
	for (;;) {
		if (r->dcap - r->dlen < (64u << 10)) {
			err = inflate_grow(r, r->dlen + (64u << 10));
			if (err == -E2BIG)
				return fail(r, -E2BIG,
					    "cannot read '%s': the compressed "
					    "record at byte %" PRIu64
					    " inflates past %u MiB", r->name,
					    at, PDREAD_INFLATE_MAX >> 20);
			if (err < 0)
				return fail(r, err,
					    "cannot read '%s': out of memory",
					    r->name);
		}
		out.dst = r->dbuf + r->dlen;
		out.size = r->dcap - r->dlen;
		out.pos = 0;
		ret = ZSTD_decompressStream(r->zd, &out, &in);
		if (ZSTD_isError(ret))
			return fail(r, -EINVAL,
				    "cannot read '%s': the compressed record "
				    "at byte %" PRIu64 " does not inflate: %s",
				    r->name, at, ZSTD_getErrorName(ret));
		r->dlen += out.pos;
		if (in.pos == in.size && out.pos < out.size)
			break;
	}
	r->st.compressed++;
	r->st.inflated_bytes += r->dlen - start;
	return 0;
}

/* The next record from the inflated bytes: 0, or 1 when none is whole. */
static int inflated_next(struct pdread *r, const uint8_t **out)
{
	struct perf_event_header h;
	size_t left = r->dlen - r->dpos;

	if (left < sizeof(h))
		return 1;
	memcpy(&h, r->dbuf + r->dpos, sizeof(h));
	if (h.size < sizeof(h)) {
		/* cannot walk on: drop the rest of this output */
		r->st.bad = true;
		r->st.stop_offset = r->dstart;
		r->dpos = r->dlen;
		return 1;
	}
	if (left < h.size)
		return 1;
	*out = r->dbuf + r->dpos;
	r->dpos += h.size;
	return 0;
}

static void parse_header_attr(struct pdread *r, const uint8_t *p,
			      uint16_t size)
{
	uint32_t asz;
	int ret;

	if (r->started) {
		r->st.late_attrs++;
		return;
	}
	if (size < 8 + PERF_ATTR_SIZE_VER0)
		return;
	memcpy(&asz, p + 8 + 4, 4);
	if (asz < PERF_ATTR_SIZE_VER0 || asz > size - 8u)
		return;
	ret = add_event(r, p + 8, asz, (const uint64_t *)(const void *)
			(p + 8 + asz), (size - 8u - asz) / 8);
	if (ret < 0)
		r->st.late_attrs++; /* kept out; the message is not fatal */
}

/* PERF_RECORD_ID_INDEX: u64 nr, then nr entries of u64 id, idx, cpu,
 * tid (newer perf appends u64 machine_pid and vcpu per entry after them,
 * for guests: not used here).  perf record writes it before the kernel's
 * records; one after them is ignored (and counted). */
static void parse_id_index(struct pdread *r, const uint8_t *p, uint16_t size)
{
	struct ix_entry *grown;
	uint64_t nr, i;
	uint32_t cap;

	/* read once, before the records: sorted once, at the first lookup */
	nr = size >= 16 ? rd64(p + 8) : UINT64_MAX;
	if (r->started || nr > (size - 16u) / 32 ||
	    nr > PDREAD_ID_INDEX_MAX - r->nr_ix) {
		r->st.id_index_ignored++;
		return;
	}
	if (r->nr_ix + nr > r->cap_ix) {
		cap = r->cap_ix ? r->cap_ix : 64;
		while (cap < r->nr_ix + nr)
			cap *= 2;
		grown = realloc(r->ix, cap * sizeof(*grown));
		if (!grown) {
			r->st.id_index_ignored++;
			return;
		}
		r->ix = grown;
		r->cap_ix = cap;
	}
	for (i = 0; i < nr; i++) {
		const uint8_t *e = p + 16 + 32 * i;
		struct ix_entry *x = &r->ix[r->nr_ix];

		x->id = rd64(e);
		x->cpu = (int32_t)rd64(e + 16);
		x->tid = (int32_t)rd64(e + 24);
		x->seq = r->st.id_index + i;
		r->nr_ix++;
	}
	r->st.id_index += nr;
	r->ix_dirty = true;
}

static void parse_event_update(struct pdread *r, const uint8_t *p,
			       uint16_t size)
{
	uint32_t e;
	char name[256];
	size_t n;

	if (size < 24 || rd64(p + 8) != PD_EVENT_UPDATE_NAME)
		return;
	e = event_by_id_scan(r, rd64(p + 16));
	if (e == UINT32_MAX || r->info.events[e].name)
		return;
	n = strnlen((const char *)p + 24, size - 24u);
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, p + 24, n);
	name[n] = '\0';
	name_event(r, e, name);
}

/*
 * One of perf's own records: absorb it.  Returns 0 to go on, 1 when it is
 * a FINISHED_ROUND to hand out, PDREAD_END + 1 when data trailing it ran
 * past the end, or negative errno.
 */
static int user_record(struct pdread *r, const uint8_t *p, bool inflated,
		       uint64_t at)
{
	struct perf_event_header h;
	int ret;

	memcpy(&h, p, sizeof(h));
	switch (h.type) {
	case PD_REC_FINISHED_ROUND:
		r->st.rounds++;
		return 1;
	case PD_REC_HEADER_ATTR:
		parse_header_attr(r, p, h.size);
		return 0;
	case PD_REC_HEADER_FEATURE:
		if (h.size >= 16)
			parse_feature(r, (uint32_t)rd64(p + 8), p + 16,
				      h.size - 16u);
		return 0;
	case PD_REC_EVENT_UPDATE:
		parse_event_update(r, p, h.size);
		return 0;
	case PD_REC_HEADER_BUILD_ID:
		add_build_id(r, p, h.size);
		return 0;
	case PD_REC_ID_INDEX:
		parse_id_index(r, p, h.size);
		return 0;
	case PD_REC_HEADER_TRACING_DATA:
		/* the tracing data follows the record, 8-aligned */
		r->st.skipped++;
		if (h.size < 12 || inflated)
			return 0;
		ret = in_skip(r, ((uint64_t)rd32(p + 8) + 7) & ~UINT64_C(7));
		return ret == 1 ? stop_at(r, at, false) + 1 : ret;
	case PD_REC_AUXTRACE:
		r->st.skipped++;
		if (h.size < 16 || inflated)
			return 0;
		ret = in_skip(r, rd64(p + 8));
		return ret == 1 ? stop_at(r, at, false) + 1 : ret;
	default:
		r->st.skipped++;
		return 0;
	}
}

static const struct perf_event_header *aligned(struct pdread *r,
					       const uint8_t *p)
{
	uint16_t size;

	if (((uintptr_t)p & 7) == 0)
		return (const struct perf_event_header *)(const void *)p;
	memcpy(&size, p + 6, 2);
	memcpy(r->align, p, size);
	return (const struct perf_event_header *)(void *)r->align;
}

/* perf names the kernel's map "[kernel.kallsyms]_text", pgoff = _text.
 * Returns true for the one pipe's writer put first (see perfdata.h). */
static bool note_kernel_map(struct pdread *r, const uint8_t *p, uint16_t type,
			    uint16_t size)
{
	size_t name_off = type == PERF_RECORD_MMAP2 ? 72 : 40;
	static const char kmap[] = "[kernel.kallsyms]";

	if (size < name_off + sizeof(kmap) || rd32(p + 8) != UINT32_MAX)
		return false;
	if (memcmp(p + name_off, kmap, sizeof(kmap) - 1))
		return false;
	r->info.kernel_text = rd64(p + 32);
	return !r->started && type == PERF_RECORD_MMAP &&
	       size >= name_off + sizeof(PD_KERNEL_MAP) &&
	       !memcmp(p + name_off, PD_KERNEL_MAP, sizeof(PD_KERNEL_MAP)) &&
	       r->info.version && !strcmp(r->info.version, PD_PIPE_VERSION);
}

int pdread_next(struct pdread *r, const struct perf_event_header **out)
{
	const uint8_t *p = NULL;
	uint16_t type, size;
	uint64_t at;
	bool inflated;
	int ret;

	for (;;) {
		inflated = inflated_next(r, &p) == 0;
		if (inflated) {
			at = r->dstart;
		} else {
			at = r->off + r->pos;
			ret = raw_next(r, &p);
			if (ret != 0)
				return ret;
		}
		memcpy(&type, p, 2);
		memcpy(&size, p + 6, 2);
		if (!inflated && (type == PD_REC_COMPRESSED ||
				  type == PD_REC_COMPRESSED2)) {
			ret = inflate(r, p, at);
			if (ret < 0)
				return ret;
			continue;
		}
		if (type < PD_REC_USER_START) {
			if ((type == PERF_RECORD_MMAP ||
			     type == PERF_RECORD_MMAP2) && !r->info.kernel_text &&
			    note_kernel_map(r, p, type, size))
				continue;
			r->started = true;
			r->st.records++;
			*out = aligned(r, p);
			return 0;
		}
		ret = user_record(r, p, inflated, at);
		if (ret < 0)
			return ret;
		if (ret > 1)
			return PDREAD_END;
		if (ret == 1) {
			*out = aligned(r, p);
			return 0;
		}
	}
}

const struct pdread_info *pdread_info(const struct pdread *r)
{
	return &r->info;
}

const struct pdread_stats *pdread_stats(const struct pdread *r)
{
	return &r->st;
}

const char *pdread_error(const struct pdread *r)
{
	return r->msg;
}
