/*
 * pdwrite.c - the perf.data writer (see pdwrite.h): a buffered output,
 * the header, attrs and features of file mode, their records in pipe
 * mode, and the zstd stream of compressed records.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "fdio.h"
#include "grow.h"
#include "pdwrite.h"

#define OUT_CAP (1u << 20)     /* output buffer */
#define CHUNK_MAX 60000u       /* raw bytes per compressed record: their
				* zstd output always fits one record */
#define COMP_MMAP_LEN (256u << 10) /* told to readers as their buffer */
#define ROUND_EVERY 16384u     /* records between FINISHED_ROUNDs */

struct bid {
	char *path;                /* owned */
	uint8_t id[PD_BUILD_ID_MAX];
	uint8_t len;
	bool kernel;
};

struct pdwrite {
	int fd;                    /* borrowed */
	char *name;                /* owned, for messages */
	char msg[512];
	bool pipe_mode;
	enum pdwrite_comp comp;
	int level;
	/* copies of the events */
	uint32_t nr_events;
	struct perf_event_attr *attrs; /* nr_events, zero-padded */
	char **names;                  /* owned */
	uint64_t **ids;                /* owned */
	uint32_t *nr_ids;
	/* header facts, copied */
	char *hostname, *release, *arch, *version, *cpudesc, *cmdline;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t kernel_text;
	/* output */
	uint8_t *out;              /* OUT_CAP bytes */
	size_t out_len;
	uint64_t written;          /* bytes handed to write() */
	uint64_t data_offset;      /* file mode: where records begin */
	/* compression */
	ZSTD_CStream *zc;
	uint8_t *chunk;            /* raw records waiting, CHUNK_MAX bytes */
	size_t chunk_len;
	uint8_t *zout;             /* one compressed record */
	/* counts */
	uint64_t first_time, last_time;
	uint32_t since_round;
	struct bid *bids;
	uint32_t nr_bids;
	size_t cap_bids;
	bool failed;               /* an earlier write failed */
};

static int fail(struct pdwrite *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct pdwrite *w, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
	va_end(ap);
	w->failed = true;
	return err;
}

/* ---- output ------------------------------------------------------------- */

static int write_all(struct pdwrite *w, const void *buf, size_t len)
{
	int ret = fdio_write_all(w->fd, buf, len);

	if (ret < 0)
		return fail(w, ret, "cannot write '%s': %s", w->name,
			    strerror(-ret));
	w->written += len;
	return 0;
}

static int out_flush(struct pdwrite *w)
{
	int ret;

	if (!w->out_len)
		return 0;
	ret = write_all(w, w->out, w->out_len);
	w->out_len = 0;
	return ret;
}

static int out_put(struct pdwrite *w, const void *p, size_t len)
{
	int ret;

	if (w->failed)
		return -EIO;
	if (w->out_len + len > OUT_CAP) {
		ret = out_flush(w);
		if (ret < 0)
			return ret;
		if (len > OUT_CAP)
			return write_all(w, p, len);
	}
	memcpy(w->out + w->out_len, p, len);
	w->out_len += len;
	return 0;
}

static uint64_t out_pos(const struct pdwrite *w)
{
	return w->written + w->out_len;
}

static int out_zeros(struct pdwrite *w, size_t n)
{
	static const uint8_t zeros[64];
	int ret = 0;

	while (n && ret == 0) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		ret = out_put(w, zeros, k);
		n -= k;
	}
	return ret;
}

static int out_u32(struct pdwrite *w, uint32_t v)
{
	return out_put(w, &v, 4);
}

static int out_u64(struct pdwrite *w, uint64_t v)
{
	return out_put(w, &v, 8);
}

static size_t string_size(const char *s)
{
	return 4 + ((strlen(s) + 1 + PD_NAME_ALIGN - 1) & ~(size_t)(PD_NAME_ALIGN - 1));
}

/* a perf_header_string: u32 padded length, the text, NULs to 64 */
static int out_string(struct pdwrite *w, const char *s)
{
	size_t len = strlen(s), padded = string_size(s) - 4;
	int ret;

	ret = out_u32(w, (uint32_t)padded);
	if (ret == 0)
		ret = out_put(w, s, len);
	if (ret == 0)
		ret = out_zeros(w, padded - len);
	return ret;
}

/* ---- set-up ------------------------------------------------------------ */

static char *dup_or_null(const char *s)
{
	return s && s[0] ? strdup(s) : NULL;
}

static int copy_events(struct pdwrite *w, const struct pdwrite_event *ev,
		       uint32_t nr)
{
	uint32_t i, size;

	w->attrs = calloc(nr, sizeof(*w->attrs));
	w->names = calloc(nr, sizeof(*w->names));
	w->ids = calloc(nr, sizeof(*w->ids));
	w->nr_ids = calloc(nr, sizeof(*w->nr_ids));
	if (!w->attrs || !w->names || !w->ids || !w->nr_ids)
		return -ENOMEM;
	w->nr_events = nr;
	for (i = 0; i < nr; i++) {
		size = ev[i].attr->size ? ev[i].attr->size
					: PERF_ATTR_SIZE_VER0;
		if (size > sizeof(w->attrs[i]))
			size = sizeof(w->attrs[i]);
		memcpy(&w->attrs[i], ev[i].attr, size);
		w->attrs[i].size = size;
		w->names[i] = strdup(ev[i].name ? ev[i].name : "unknown");
		w->ids[i] = malloc((ev[i].nr_ids ? ev[i].nr_ids : 1) *
				   sizeof(uint64_t));
		if (!w->names[i] || !w->ids[i])
			return -ENOMEM;
		memcpy(w->ids[i], ev[i].ids, ev[i].nr_ids * sizeof(uint64_t));
		w->nr_ids[i] = ev[i].nr_ids;
	}
	return 0;
}

/* File mode: a header to be patched at the end, the ids, the attrs. */
static int start_file(struct pdwrite *w)
{
	uint64_t ids_at = PD_FILE_HEADER;
	uint32_t i;
	int ret;

	ret = out_zeros(w, PD_FILE_HEADER);
	for (i = 0; ret == 0 && i < w->nr_events; i++)
		ret = out_put(w, w->ids[i], w->nr_ids[i] * sizeof(uint64_t));
	for (i = 0; ret == 0 && i < w->nr_events; i++) {
		ret = out_put(w, &w->attrs[i], sizeof(w->attrs[i]));
		if (ret == 0)
			ret = out_u64(w, ids_at);
		if (ret == 0)
			ret = out_u64(w, w->nr_ids[i] * sizeof(uint64_t));
		ids_at += w->nr_ids[i] * sizeof(uint64_t);
	}
	w->data_offset = out_pos(w);
	return ret;
}

static int feature_record(struct pdwrite *w, uint32_t feat, size_t len)
{
	struct perf_event_header h = { PD_REC_HEADER_FEATURE, 0,
				       (uint16_t)(16 + len) };
	int ret;

	if (16 + len > 65535)
		return 0; /* too big for a record: left out */
	ret = out_put(w, &h, sizeof(h));
	return ret ? ret : out_u64(w, feat);
}

static int feat_write(struct pdwrite *w, uint32_t f);

/* Pipe mode: attrs, names and the string features as records. */
static int start_pipe(struct pdwrite *w)
{
	struct perf_event_header h;
	const char *const strs[] = { w->hostname, w->release, w->version,
				     w->arch, w->cpudesc };
	const uint32_t feats[] = { PD_FEAT_HOSTNAME, PD_FEAT_OSRELEASE,
				   PD_FEAT_VERSION, PD_FEAT_ARCH,
				   PD_FEAT_CPUDESC };
	uint32_t i;
	size_t len;
	int ret;

	ret = out_u64(w, PD_MAGIC);
	if (ret == 0)
		ret = out_u64(w, PD_PIPE_HEADER);
	for (i = 0; ret == 0 && i < w->nr_events; i++) {
		len = 8 + w->attrs[i].size + 8 * (size_t)w->nr_ids[i];
		if (len > 65535)
			return fail(w, -E2BIG,
				    "cannot write '%s': event '%s' has too many "
				    "ids for pipe mode", w->name, w->names[i]);
		h.type = PD_REC_HEADER_ATTR;
		h.misc = 0;
		h.size = (uint16_t)len;
		ret = out_put(w, &h, sizeof(h));
		if (ret == 0)
			ret = out_put(w, &w->attrs[i], w->attrs[i].size);
		if (ret == 0)
			ret = out_put(w, w->ids[i], 8 * (size_t)w->nr_ids[i]);
	}
	for (i = 0; ret == 0 && i < sizeof(strs) / sizeof(strs[0]); i++) {
		if (!strs[i])
			continue;
		ret = feature_record(w, feats[i], string_size(strs[i]));
		if (ret == 0)
			ret = out_string(w, strs[i]);
	}
	if (ret == 0 && w->nr_cpus_avail) {
		ret = feature_record(w, PD_FEAT_NRCPUS, 8);
		if (ret == 0)
			ret = out_u32(w, w->nr_cpus_avail);
		if (ret == 0)
			ret = out_u32(w, w->nr_cpus_online);
	}
	/* perf sizes its inflate buffer from this feature */
	if (ret == 0 && w->comp != PDWRITE_COMP_NONE) {
		ret = feature_record(w, PD_FEAT_COMPRESSED, 20);
		if (ret == 0)
			ret = feat_write(w, PD_FEAT_COMPRESSED);
	}
	/* names: one EVENT_UPDATE per event, keyed by its first id */
	for (i = 0; ret == 0 && i < w->nr_events; i++) {
		size_t nl = (strlen(w->names[i]) + 1 + 7) & ~(size_t)7;

		if (!w->nr_ids[i] || nl > 4096)
			continue;
		h.type = PD_REC_EVENT_UPDATE;
		h.misc = 0;
		h.size = (uint16_t)(24 + nl);
		ret = out_put(w, &h, sizeof(h));
		if (ret == 0)
			ret = out_u64(w, PD_EVENT_UPDATE_NAME);
		if (ret == 0)
			ret = out_u64(w, w->ids[i][0]);
		if (ret == 0)
			ret = out_put(w, w->names[i], strlen(w->names[i]));
		if (ret == 0)
			ret = out_zeros(w, nl - strlen(w->names[i]));
	}
	return ret;
}

/*
 * perf places the kernel by the map record it synthesizes when it starts
 * ("[kernel.kallsyms]_text", pgoff = _text); pipe keeps _text in its
 * metadata instead, so write that record first, with a sample_id_all
 * trailer naming the first event.
 */
static int kernel_map(struct pdwrite *w)
{
	static const char name[] = PD_KERNEL_MAP;
	const struct perf_event_attr *a = &w->attrs[0];
	uint64_t t = a->sample_type, body[3], trailer[6] = { 0 };
	uint64_t id = w->nr_ids[0] ? w->ids[0][0] : 0;
	struct perf_event_header h;
	size_t nl = (sizeof(name) + 7) & ~(size_t)7, nt = 0;
	uint32_t pidtid[2] = { UINT32_MAX, 0 };
	int ret;

	if (!w->kernel_text)
		return 0;
	if (a->sample_id_all) {
		if (t & PERF_SAMPLE_TID)
			trailer[nt++] = (uint64_t)UINT32_MAX;
		if (t & PERF_SAMPLE_TIME)
			trailer[nt++] = 0;
		if (t & PERF_SAMPLE_ID)
			trailer[nt++] = id;
		if (t & PERF_SAMPLE_STREAM_ID)
			trailer[nt++] = id;
		if (t & PERF_SAMPLE_CPU)
			trailer[nt++] = 0;
		if (t & PERF_SAMPLE_IDENTIFIER)
			trailer[nt++] = id;
	}
	h.type = PERF_RECORD_MMAP;
	h.misc = PERF_RECORD_MISC_KERNEL;
	h.size = (uint16_t)(sizeof(h) + sizeof(pidtid) + sizeof(body) + nl +
			    8 * nt);
	body[0] = w->kernel_text;               /* start */
	body[1] = UINT64_MAX - w->kernel_text;  /* len */
	body[2] = w->kernel_text;               /* pgoff: _text */
	ret = out_put(w, &h, sizeof(h));
	if (ret == 0)
		ret = out_put(w, pidtid, sizeof(pidtid));
	if (ret == 0)
		ret = out_put(w, body, sizeof(body));
	if (ret == 0)
		ret = out_put(w, name, sizeof(name));
	if (ret == 0)
		ret = out_zeros(w, nl - sizeof(name));
	if (ret == 0)
		ret = out_put(w, trailer, 8 * nt);
	return ret;
}

int pdwrite_new(struct pdwrite **out, int fd, const char *name,
		bool pipe_mode, enum pdwrite_comp comp, int level,
		const struct pdwrite_event *events, uint32_t nr_events,
		const struct pdwrite_info *info, char *msg, size_t cap)
{
	struct pdwrite *w = calloc(1, sizeof(*w));
	struct stat st;
	int ret = -ENOMEM;

	*out = NULL;
	if (!w)
		goto oom;
	w->fd = fd;
	w->name = strdup(name);
	w->out = malloc(OUT_CAP);
	if (!w->name || !w->out || copy_events(w, events, nr_events) < 0)
		goto oom;
	w->pipe_mode = pipe_mode || fstat(fd, &st) < 0 ||
		       !S_ISREG(st.st_mode) ||
		       lseek(fd, 0, SEEK_CUR) != 0;
	w->comp = comp;
	w->level = level;
	w->hostname = dup_or_null(info->hostname);
	w->release = dup_or_null(info->release);
	w->arch = dup_or_null(info->arch);
	w->version = dup_or_null(info->version);
	w->cpudesc = dup_or_null(info->cpudesc);
	w->cmdline = dup_or_null(info->cmdline);
	w->nr_cpus_avail = info->nr_cpus_avail;
	w->nr_cpus_online = info->nr_cpus_online;
	w->kernel_text = info->kernel_text;
	if (comp != PDWRITE_COMP_NONE) {
		w->zc = ZSTD_createCStream();
		w->chunk = malloc(CHUNK_MAX);
		w->zout = malloc(65536);
		if (!w->zc || !w->chunk || !w->zout)
			goto oom;
		if (ZSTD_isError(ZSTD_initCStream(w->zc, level))) {
			snprintf(msg, cap, "cannot write '%s': zstd level %d "
				 "refused", name, level);
			ret = -EINVAL;
			goto out;
		}
	}
	ret = w->pipe_mode ? start_pipe(w) : start_file(w);
	if (ret == 0)
		ret = kernel_map(w);
	if (ret < 0) {
		snprintf(msg, cap, "%s", w->msg);
		goto out;
	}
	*out = w;
	return 0;
oom:
	snprintf(msg, cap, "cannot write '%s': out of memory", name);
out:
	pdwrite_free(w);
	return ret;
}

void pdwrite_free(struct pdwrite *w)
{
	uint32_t i;

	if (!w)
		return;
	for (i = 0; i < w->nr_events; i++) {
		if (w->names)
			free(w->names[i]);
		if (w->ids)
			free(w->ids[i]);
	}
	free(w->attrs);
	free(w->names);
	free(w->ids);
	free(w->nr_ids);
	for (i = 0; i < w->nr_bids; i++)
		free(w->bids[i].path);
	free(w->bids);
	free(w->hostname);
	free(w->release);
	free(w->arch);
	free(w->version);
	free(w->cpudesc);
	free(w->cmdline);
	ZSTD_freeCStream(w->zc);
	free(w->chunk);
	free(w->zout);
	free(w->out);
	free(w->name);
	free(w);
}

/* ---- records ----------------------------------------------------------- */

/* The waiting chunk as compressed records: one zstd stream for the file,
 * flushed at the end of each chunk so each record inflates to whole
 * records. */
static int chunk_flush(struct pdwrite *w)
{
	ZSTD_inBuffer in = { w->chunk, w->chunk_len, 0 };
	ZSTD_outBuffer zo;
	struct perf_event_header h;
	size_t head = w->comp == PDWRITE_COMP_V2 ? 16 : 8, left, pad;
	uint64_t dsize;
	int ret;

	if (!w->chunk_len)
		return 0;
	do {
		zo.dst = w->zout + head;
		zo.size = 65535 - head - 7;
		zo.pos = 0;
		left = ZSTD_compressStream2(w->zc, &zo, &in, ZSTD_e_flush);
		if (ZSTD_isError(left))
			return fail(w, -EIO, "cannot write '%s': zstd: %s",
				    w->name, ZSTD_getErrorName(left));
		dsize = zo.pos;
		pad = w->comp == PDWRITE_COMP_V2 ? (8 - (head + dsize) % 8) % 8
						 : 0;
		h.type = w->comp == PDWRITE_COMP_V2 ? PD_REC_COMPRESSED2
						    : PD_REC_COMPRESSED;
		h.misc = 0;
		h.size = (uint16_t)(head + dsize + pad);
		memcpy(w->zout, &h, sizeof(h));
		if (w->comp == PDWRITE_COMP_V2)
			memcpy(w->zout + 8, &dsize, 8);
		memset(w->zout + head + dsize, 0, pad);
		ret = out_put(w, w->zout, h.size);
		if (ret < 0)
			return ret;
	} while (left || in.pos < in.size);
	w->chunk_len = 0;
	return 0;
}

int pdwrite_record(struct pdwrite *w, const struct perf_event_header *h,
		   uint64_t time)
{
	int ret;

	if (h->type == PERF_RECORD_SAMPLE && time) {
		if (!w->first_time)
			w->first_time = time;
		w->last_time = time;
	}
	if (++w->since_round >= ROUND_EVERY) {
		ret = pdwrite_round(w);
		if (ret < 0)
			return ret;
	}
	if (w->comp == PDWRITE_COMP_NONE)
		return out_put(w, h, h->size);
	if (w->chunk_len + h->size > CHUNK_MAX) {
		ret = chunk_flush(w);
		if (ret < 0)
			return ret;
	}
	memcpy(w->chunk + w->chunk_len, h, h->size);
	w->chunk_len += h->size;
	return 0;
}

int pdwrite_round(struct pdwrite *w)
{
	struct perf_event_header h = { PD_REC_FINISHED_ROUND, 0, 8 };
	int ret;

	w->since_round = 0;
	ret = chunk_flush(w);
	return ret ? ret : out_put(w, &h, sizeof(h));
}

int pdwrite_build_id(struct pdwrite *w, const char *path, const uint8_t *id,
		     uint32_t len, bool kernel)
{
	struct bid *b;

	if (!len || len > PD_BUILD_ID_MAX || w->nr_bids >= PDWRITE_BUILD_IDS_MAX)
		return 0;
	if (grow_array(&w->bids, &w->cap_bids, (size_t)w->nr_bids + 1,
		       sizeof(*w->bids), 16, PDWRITE_BUILD_IDS_MAX) < 0)
		return -ENOMEM;
	b = &w->bids[w->nr_bids];
	b->path = strdup(path);
	if (!b->path)
		return -ENOMEM;
	memcpy(b->id, id, len);
	memset(b->id + len, 0, PD_BUILD_ID_MAX - len);
	b->len = (uint8_t)len;
	b->kernel = kernel;
	w->nr_bids++;
	return 0;
}

/* One build-id entry, as a record of its own in pipe mode. */
static int out_build_id(struct pdwrite *w, const struct bid *b, uint32_t type)
{
	struct perf_event_header h;
	size_t nl = (strlen(b->path) + 1 + PD_NAME_ALIGN - 1) &
		    ~(size_t)(PD_NAME_ALIGN - 1);
	uint8_t idbuf[24] = { 0 };
	int32_t pid = -1;
	int ret;

	if (PD_BUILD_ID_NAME_OFF + nl > 65535)
		return 0;
	h.type = type;
	h.misc = (uint16_t)((b->kernel ? PERF_RECORD_MISC_KERNEL
				       : PERF_RECORD_MISC_USER) |
			    PD_MISC_BUILD_ID_SIZE);
	h.size = (uint16_t)(PD_BUILD_ID_NAME_OFF + nl);
	memcpy(idbuf, b->id, b->len);
	idbuf[PD_BUILD_ID_MAX] = b->len;
	ret = out_put(w, &h, sizeof(h));
	if (ret == 0)
		ret = out_put(w, &pid, 4);
	if (ret == 0)
		ret = out_put(w, idbuf, sizeof(idbuf));
	if (ret == 0)
		ret = out_put(w, b->path, strlen(b->path));
	if (ret == 0)
		ret = out_zeros(w, nl - strlen(b->path));
	return ret;
}

/* ---- features (file mode) --------------------------------------------- */

struct section {
	uint64_t off;
	uint64_t size;
};

static int feat_cmdline(struct pdwrite *w)
{
	char *copy = strdup(w->cmdline), *save = NULL, *word;
	uint32_t nr = 0;
	int ret;

	if (!copy)
		return -ENOMEM;
	for (word = strtok_r(copy, " ", &save); word;
	     word = strtok_r(NULL, " ", &save))
		nr++;
	free(copy);
	copy = strdup(w->cmdline);
	if (!copy)
		return -ENOMEM;
	ret = out_u32(w, nr);
	for (word = strtok_r(copy, " ", &save); word && ret == 0;
	     word = strtok_r(NULL, " ", &save))
		ret = out_string(w, word);
	free(copy);
	return ret;
}

static int feat_event_desc(struct pdwrite *w)
{
	uint32_t i;
	int ret;

	ret = out_u32(w, w->nr_events);
	if (ret == 0)
		ret = out_u32(w, sizeof(w->attrs[0]));
	for (i = 0; ret == 0 && i < w->nr_events; i++) {
		ret = out_put(w, &w->attrs[i], sizeof(w->attrs[i]));
		if (ret == 0)
			ret = out_u32(w, w->nr_ids[i]);
		if (ret == 0)
			ret = out_string(w, w->names[i]);
		if (ret == 0)
			ret = out_put(w, w->ids[i], 8 * (size_t)w->nr_ids[i]);
	}
	return ret;
}

/* Write feature f's payload; 1 when the file has nothing for it. */
static int feat_write(struct pdwrite *w, uint32_t f)
{
	uint32_t i;
	int ret = 0;

	switch (f) {
	case PD_FEAT_BUILD_ID:
		if (!w->nr_bids)
			return 1;
		for (i = 0; ret == 0 && i < w->nr_bids; i++)
			ret = out_build_id(w, &w->bids[i], 0);
		return ret;
	case PD_FEAT_HOSTNAME:
		return w->hostname ? out_string(w, w->hostname) : 1;
	case PD_FEAT_OSRELEASE:
		return w->release ? out_string(w, w->release) : 1;
	case PD_FEAT_VERSION:
		return w->version ? out_string(w, w->version) : 1;
	case PD_FEAT_ARCH:
		return w->arch ? out_string(w, w->arch) : 1;
	case PD_FEAT_CPUDESC:
		return w->cpudesc ? out_string(w, w->cpudesc) : 1;
	case PD_FEAT_NRCPUS:
		if (!w->nr_cpus_avail)
			return 1;
		ret = out_u32(w, w->nr_cpus_avail);
		return ret ? ret : out_u32(w, w->nr_cpus_online);
	case PD_FEAT_CMDLINE:
		return w->cmdline ? feat_cmdline(w) : 1;
	case PD_FEAT_EVENT_DESC:
		return feat_event_desc(w);
	case PD_FEAT_SAMPLE_TIME:
		ret = out_u64(w, w->first_time);
		return ret ? ret : out_u64(w, w->last_time);
	case PD_FEAT_COMPRESSED:
		if (w->comp == PDWRITE_COMP_NONE)
			return 1;
		ret = out_u32(w, 0);             /* version */
		ret = ret ? ret : out_u32(w, PD_COMP_ZSTD);
		ret = ret ? ret : out_u32(w, (uint32_t)w->level);
		ret = ret ? ret : out_u32(w, 0); /* ratio: not measured */
		return ret ? ret : out_u32(w, COMP_MMAP_LEN);
	default:
		return 1;
	}
}

static int finish_file(struct pdwrite *w)
{
	static const uint32_t feats[] = {
		PD_FEAT_BUILD_ID, PD_FEAT_HOSTNAME, PD_FEAT_OSRELEASE,
		PD_FEAT_VERSION, PD_FEAT_ARCH, PD_FEAT_NRCPUS,
		PD_FEAT_CPUDESC, PD_FEAT_CMDLINE, PD_FEAT_EVENT_DESC,
		PD_FEAT_SAMPLE_TIME, PD_FEAT_COMPRESSED,
	};
	const uint32_t nf = sizeof(feats) / sizeof(feats[0]);
	struct section sec[sizeof(feats) / sizeof(feats[0])];
	uint64_t bits[PD_FEAT_BITS / 64] = { 0 }, data_end, table;
	uint8_t hdr[PD_FILE_HEADER];
	uint32_t i, n = 0;
	uint64_t fa = sizeof(w->attrs[0]) + 16, v;
	int ret;

	data_end = out_pos(w);
	/* the section table comes first; payloads follow it.  Which
	 * features have a payload is known before writing them. */
	table = data_end;
	for (i = 0; i < nf; i++)
		if (!(feats[i] == PD_FEAT_BUILD_ID && !w->nr_bids) &&
		    !(feats[i] == PD_FEAT_HOSTNAME && !w->hostname) &&
		    !(feats[i] == PD_FEAT_OSRELEASE && !w->release) &&
		    !(feats[i] == PD_FEAT_VERSION && !w->version) &&
		    !(feats[i] == PD_FEAT_ARCH && !w->arch) &&
		    !(feats[i] == PD_FEAT_CPUDESC && !w->cpudesc) &&
		    !(feats[i] == PD_FEAT_NRCPUS && !w->nr_cpus_avail) &&
		    !(feats[i] == PD_FEAT_CMDLINE && !w->cmdline) &&
		    !(feats[i] == PD_FEAT_COMPRESSED &&
		      w->comp == PDWRITE_COMP_NONE))
			bits[feats[i] / 64] |= UINT64_C(1) << (feats[i] % 64);
	for (i = 0; i < nf; i++)
		if (bits[feats[i] / 64] >> (feats[i] % 64) & 1)
			n++;
	ret = out_zeros(w, 16 * (size_t)n);
	for (i = 0, n = 0; ret == 0 && i < nf; i++) {
		if (!(bits[feats[i] / 64] >> (feats[i] % 64) & 1))
			continue;
		sec[n].off = out_pos(w);
		ret = feat_write(w, feats[i]);
		if (ret > 0)
			ret = -EINVAL; /* the bit promised a payload */
		sec[n].size = out_pos(w) - sec[n].off;
		n++;
	}
	if (ret == 0)
		ret = out_flush(w);
	if (ret < 0)
		return ret;
	memset(hdr, 0, sizeof(hdr));
	v = PD_MAGIC;
	memcpy(hdr, &v, 8);
	v = PD_FILE_HEADER;
	memcpy(hdr + 8, &v, 8);
	memcpy(hdr + 16, &fa, 8);
	v = w->data_offset - fa * w->nr_events;
	memcpy(hdr + 24, &v, 8);
	v = fa * w->nr_events;
	memcpy(hdr + 32, &v, 8);
	memcpy(hdr + 40, &w->data_offset, 8);
	v = data_end - w->data_offset;
	memcpy(hdr + 48, &v, 8);
	memcpy(hdr + 72, bits, sizeof(bits));
	if (pwrite(w->fd, sec, 16 * (size_t)n, (off_t)table) !=
		    (ssize_t)(16 * (size_t)n) ||
	    pwrite(w->fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		return fail(w, -errno, "cannot write '%s': %s", w->name,
			    strerror(errno));
	return 0;
}

int pdwrite_finish(struct pdwrite *w)
{
	uint32_t i;
	int ret;

	ret = pdwrite_round(w);
	if (ret == 0 && w->pipe_mode)
		for (i = 0; ret == 0 && i < w->nr_bids; i++)
			ret = out_build_id(w, &w->bids[i],
					   PD_REC_HEADER_BUILD_ID);
	if (ret == 0 && !w->pipe_mode)
		return finish_file(w);
	if (ret == 0)
		ret = out_flush(w);
	return ret;
}

const char *pdwrite_error(const struct pdwrite *w)
{
	return w->msg;
}

uint64_t pdwrite_bytes(const struct pdwrite *w)
{
	return out_pos(w);
}
