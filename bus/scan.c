/*
 * scan.c - whole-file scans: `pipe info` (END and the index, or every
 * block) and `pipe verify` (every block decoded, the digest of the
 * records).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "pipeline.h"

struct stream_hash {
	uint32_t stream;       /* stream id */
	XXH3_state_t *state;   /* owned */
};

struct digest {
	struct stream_hash *s; /* owned, nr used of cap */
	uint32_t nr, cap;
	uint32_t *slot;        /* owned: 1 + index in s by stream id (the
				* sideband last), 0: none yet */
};

/* The hash of a stream, found in constant time: a crafted file may hold
 * as many streams as the format allows. */
static XXH3_state_t *digest_stream(struct digest *d, uint32_t stream)
{
	uint32_t key = stream == PIPE_STREAM_SIDEBAND ? META_MAX_STREAMS
						      : stream;
	struct stream_hash *s;
	uint32_t i;

	if (!d->slot) {
		d->slot = calloc(META_MAX_STREAMS + 1, sizeof(*d->slot));
		if (!d->slot)
			return NULL;
	}
	if (key <= META_MAX_STREAMS && d->slot[key])
		return d->s[d->slot[key] - 1].state;
	for (i = 0; key > META_MAX_STREAMS && i < d->nr; i++)
		if (d->s[i].stream == stream)
			return d->s[i].state;
	if (d->nr == d->cap) {
		uint32_t cap = d->cap ? 2 * d->cap : 16;

		s = realloc(d->s, cap * sizeof(*s));
		if (!s)
			return NULL;
		d->s = s;
		d->cap = cap;
	}
	s = &d->s[d->nr];
	s->stream = stream;
	s->state = XXH3_createState();
	if (!s->state)
		return NULL;
	XXH3_64bits_reset(s->state);
	d->nr++;
	if (key <= META_MAX_STREAMS)
		d->slot[key] = d->nr;
	return s->state;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct stream_hash *x = a, *y = b;

	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* Each stream's records in order, then the streams combined by id. */
static uint64_t digest_final(struct digest *d)
{
	XXH3_state_t *all = XXH3_createState();
	uint64_t h = 0;
	uint32_t i;

	if (!all)
		return 0;
	if (d->nr)
		qsort(d->s, d->nr, sizeof(*d->s), cmp_stream);
	XXH3_64bits_reset(all);
	for (i = 0; i < d->nr; i++) {
		uint64_t sh = XXH3_64bits_digest(d->s[i].state);

		XXH3_64bits_update(all, &d->s[i].stream, sizeof(uint32_t));
		XXH3_64bits_update(all, &sh, sizeof(sh));
	}
	h = XXH3_64bits_digest(all);
	XXH3_freeState(all);
	return h;
}

static void digest_release(struct digest *d)
{
	uint32_t i;

	for (i = 0; i < d->nr; i++)
		XXH3_freeState(d->s[i].state);
	free(d->s);
	free(d->slot);
}

/* "file:" + path with the parameter syntax's specials escaped */
static char *file_spec(const char *path)
{
	size_t n = strlen(path), i, j = 5;
	char *s = malloc(5 + 2 * n + 1);

	if (!s)
		return NULL;
	memcpy(s, "file:", 5);
	for (i = 0; i < n; i++) {
		if (strchr(",+=\\:", path[i]))
			s[j++] = '\\';
		s[j++] = path[i];
	}
	s[j] = '\0';
	return s;
}

/* A pipeline of byte source `spec` and its reader, for whole-file
 * reads; free with pipeline_free. */
static int open_file_read(struct pipeline *pl, const char *spec, bool strict,
			  uint32_t threads, struct pipe_err *err)
{
	int ret;

	pl->hr.command_status = -1;
	pl->hr.tty = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &pl->t0);
	crash_install();
	ret = inst_open(&pl->src, pl->o->conf, PIPE_KIND_SOURCE, spec,
			&pl->hr, err);
	if (ret < 0)
		return ret;
	if (!(pl->src->p->flags & PIPE_PLUGIN_BYTES)) {
		ret = pipe_err_set(err, -EINVAL, "%s does not read pipe files",
				   pl->src->ctx.what);
		pipe_err_hint(err, "use -s file:FILE");
		return ret;
	}
	return open_reader(pl, strict, threads, err);
}

/* res->meta: a copy of the reader's metadata. */
static int copy_meta(struct pipeline *pl, const char *spec,
		     struct scan_result *res, struct pipe_err *err)
{
	uint8_t *buf;
	size_t len;
	int ret;

	ret = meta_encode(creader_meta(pl->reader), &buf, &len, err);
	if (ret == 0) {
		ret = meta_decode(&res->meta, buf, len, spec, err);
		free(buf);
	}
	return ret;
}

int run_read(const struct conf *conf, const char *spec, bool strict,
	     uint32_t threads, run_batch_fn fn, void *opaque,
	     struct scan_result *res, struct pipe_err *err)
{
	struct run_opts o = { .conf = conf, .quiet = true };
	struct pipeline pl = { .o = &o, .sigfd = -1 };
	struct pipe_batch b;
	uint64_t size = 0;
	int ret;

	memset(res, 0, sizeof(*res));
	ret = open_file_read(&pl, spec, strict, threads, err);
	if (ret < 0)
		goto out;
	for (;;) {
		ret = creader_next(pl.reader, &b, err);
		if (ret == PIPE_EOF) {
			ret = 0;
			break;
		}
		if (ret == 0)
			ret = fn(opaque, creader_meta(pl.reader), &b, err);
		if (ret < 0)
			goto out;
		status_update(&pl);
	}
	status_clear(&pl);
	creader_stats(pl.reader, &res->st);
	if (inst_byte_size(pl.src, &size) == 0)
		res->file_size = size;
	ret = copy_meta(&pl, spec, res, err);
out:
	pl.hr.meta = NULL;
	pipeline_free(&pl);
	return ret;
}

struct scan_state {
	struct digest d;
	uint64_t last_time;
	uint64_t out_of_order;
};

static int scan_batch(void *opaque, const struct meta *m,
		      const struct pipe_batch *b, struct pipe_err *err)
{
	struct scan_state *ss = opaque;
	size_t i;

	(void)m;
	(void)err;
	for (i = 0; i < b->nr; i++) {
		XXH3_state_t *st = digest_stream(&ss->d, b->recs[i].stream);

		if (!st)
			return -ENOMEM;
		XXH3_64bits_update(st, b->recs[i].hdr, b->recs[i].hdr->size);
		if (b->recs[i].time < ss->last_time)
			ss->out_of_order++;
		else
			ss->last_time = b->recs[i].time;
	}
	return 0;
}

int run_scan(const struct conf *conf, const char *path, bool strict,
	     uint32_t threads, struct scan_result *res, struct pipe_err *err)
{
	char *spec = file_spec(path);
	int ret;

	if (!spec)
		return -ENOMEM;
	ret = run_scan_spec(conf, spec, strict, threads, res, err);
	free(spec);
	return ret;
}

int run_scan_spec(const struct conf *conf, const char *spec, bool strict,
		  uint32_t threads, struct scan_result *res,
		  struct pipe_err *err)
{
	struct scan_state ss = { { 0 }, 0, 0 };
	int ret;

	ret = run_read(conf, spec, strict, threads, scan_batch, &ss, res, err);
	if (ret == 0) {
		res->out_of_order = ss.out_of_order;
		snprintf(res->digest, sizeof(res->digest), "%016llx",
			 (unsigned long long)digest_final(&ss.d));
	}
	digest_release(&ss.d);
	return ret;
}

int run_info(const struct conf *conf, const char *path, bool scan,
	     struct scan_result *res, bool *scanned, struct pipe_err *err)
{
	struct run_opts o = { .conf = conf, .quiet = true };
	struct pipeline pl = { .o = &o, .sigfd = -1 };
	char *spec = file_spec(path);
	int ret = 1;

	memset(res, 0, sizeof(*res));
	*scanned = true;
	if (!spec)
		return -ENOMEM;
	if (!scan) {
		ret = open_file_read(&pl, spec, false, 1, err);
		if (ret == 0)
			ret = creader_summary(pl.reader, &res->st, err);
		if (ret == 0) {
			res->file_size = res->st.file_bytes;
			ret = copy_meta(&pl, spec, res, err);
			*scanned = false;
		}
		pl.hr.meta = NULL;
		pipeline_free(&pl);
	}
	free(spec);
	if (ret > 0)
		return run_scan(conf, path, false, 0, res, err);
	return ret;
}

void scan_result_release(struct scan_result *res)
{
	meta_free(res->meta);
	res->meta = NULL;
}
