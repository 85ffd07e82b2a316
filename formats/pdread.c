/*
 * pdread.c - the perf.data reader (see pdread.h): a buffered forward
 * reader over the data (a file's data section or a pipe), the file
 * header and attrs, the records and the zstd stream of compressed ones;
 * pdmeta.c parses the features and keeps the events and their ids.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "grow.h"
#include "pdrstate.h"
#include "sideband.h"

int fail(struct pdread *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return err;
}

/* ---- reading ---------------------------------------------------------- */

static int read_full_at(struct pdread *r, uint64_t off, void *dst,
			size_t len)
{
	ssize_t n = fdio_pread_full(r->fd, dst, len, (off_t)off);

	if (n < 0)
		return fail(r, (int)n, "cannot read '%s': %s", r->name,
			    strerror((int)-n));
	if ((size_t)n < len)
		return fail(r, -EINVAL,
			    "cannot read '%s': it ends at byte %" PRIu64
			    " inside its header", r->name, off + (size_t)n);
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
			ret = pdr_add_event(r, fa, attr_size - 16, ids,
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
			pdr_parse_feature(r, f, buf, size);
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
	n = fdio_read_full(fd, first, sizeof(first));
	if (n < (ssize_t)sizeof(first)) {
		ret = n < 0 ? (int)n : -EINVAL;
		snprintf(msg, cap, "cannot read '%s': %s", name,
			 n < 0 ? strerror((int)-n)
			       : "not a perf.data file (too short)");
		goto out;
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
	return grow_array(&r->dbuf, &r->dcap, need, 1, 256u << 10,
			  PDREAD_INFLATE_MAX + REC_MAX);
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
	ret = pdr_add_event(r, p + 8, asz, (const uint64_t *)(const void *)
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
	uint64_t nr, i;
	size_t cap;

	/* read once, before the records: sorted once, at the first lookup */
	nr = size >= 16 ? rd64(p + 8) : UINT64_MAX;
	if (r->started || nr > (size - 16u) / 32 ||
	    nr > PDREAD_ID_INDEX_MAX - r->nr_ix) {
		r->st.id_index_ignored++;
		return;
	}
	cap = r->cap_ix;
	if (grow_array(&r->ix, &cap, r->nr_ix + nr, sizeof(*r->ix), 64,
		       PDREAD_ID_INDEX_MAX) < 0) {
		r->st.id_index_ignored++;
		return;
	}
	r->cap_ix = (uint32_t)cap;
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
	e = pdr_event_by_id_scan(r, rd64(p + 16));
	if (e == UINT32_MAX || r->info.events[e].name)
		return;
	n = strnlen((const char *)p + 24, size - 24u);
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, p + 24, n);
	name[n] = '\0';
	pdr_name_event(r, e, name);
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
			pdr_parse_feature(r, (uint32_t)rd64(p + 8), p + 16,
					  h.size - 16u);
		return 0;
	case PD_REC_EVENT_UPDATE:
		parse_event_update(r, p, h.size);
		return 0;
	case PD_REC_HEADER_BUILD_ID:
		pdr_add_build_id(r, p, h.size);
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
static bool note_kernel_map(struct pdread *r, const uint8_t *p)
{
	static const char kmap[] = "[kernel.kallsyms]";
	struct sideband sb;

	if (sideband_decode(aligned(r, p), &sb) < 0 || sb.pid != UINT32_MAX ||
	    strncmp(sb.name, kmap, sizeof(kmap) - 1))
		return false;
	r->info.kernel_text = sb.pgoff;
	return !r->started && sb.type == PERF_RECORD_MMAP &&
	       !strcmp(sb.name, PD_KERNEL_MAP) &&
	       r->info.version && !strcmp(r->info.version, PD_PIPE_VERSION);
}

int pdread_next(struct pdread *r, const struct perf_event_header **out)
{
	const uint8_t *p = NULL;
	uint16_t type, size;
	uint64_t at;
	bool inflated;
	int ret;

	if (r->ids_failed)
		return fail(r, -ENOMEM, "cannot read '%s': no memory to index "
			    "its sample ids: %s", r->name, strerror(ENOMEM));
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
			    note_kernel_map(r, p))
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
