/*
 * scan.c - whole-file scans: `pipe info` (END and the index, or every
 * block) and `pipe verify` (every block decoded, the digest of the
 * records).  The digest needs each stream's records in order, not the
 * order across streams: it is fed block by block (creader_blocks), and
 * only a file whose blocks break that order is read again through the
 * merge.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "pipeline.h"
#include "xxh.h"

struct stream_hash {
	uint32_t stream;       /* stream id */
	XXH3_state_t *state;   /* owned */
	uint64_t last_time;    /* of the last record hashed */
};

struct digest {
	struct stream_hash *s; /* owned, nr used of cap */
	uint32_t nr;
	size_t cap;
	uint32_t *slot;        /* owned: 1 + index in s by stream id (the
				* sideband last), 0: none yet */
};

/* The hash of a stream, found in constant time: a crafted file may hold
 * as many streams as the format allows. */
static struct stream_hash *digest_stream(struct digest *d, uint32_t stream)
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
		return &d->s[d->slot[key] - 1];
	for (i = 0; key > META_MAX_STREAMS && i < d->nr; i++)
		if (d->s[i].stream == stream)
			return &d->s[i];
	if (grow_array(&d->s, &d->cap, (size_t)d->nr + 1, sizeof(*d->s), 16,
		       UINT32_MAX) < 0)
		return NULL;
	s = &d->s[d->nr];
	s->stream = stream;
	s->last_time = 0;
	s->state = XXH3_createState();
	if (!s->state)
		return NULL;
	XXH3_64bits_reset(s->state);
	d->nr++;
	if (key <= META_MAX_STREAMS)
		d->slot[key] = d->nr;
	return s;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct stream_hash *x = a, *y = b;

	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* Each stream's records in order, then the streams combined by id, into
 * *out: 0 or -ENOMEM. */
static int digest_final(struct digest *d, uint64_t *out,
			struct pipe_err *err)
{
	XXH3_state_t *all = XXH3_createState();
	uint32_t i;

	if (!all)
		return pipe_err_nomem(err, "cannot digest the records");
	if (d->nr)
		qsort(d->s, d->nr, sizeof(*d->s), cmp_stream);
	XXH3_64bits_reset(all);
	for (i = 0; i < d->nr; i++) {
		uint64_t sh = XXH3_64bits_digest(d->s[i].state);

		XXH3_64bits_update(all, &d->s[i].stream, sizeof(uint32_t));
		XXH3_64bits_update(all, &sh, sizeof(sh));
	}
	*out = XXH3_64bits_digest(all);
	XXH3_freeState(all);
	return 0;
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
static int open_file_read(struct pipeline *pl, const char *spec,
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
	return open_reader(pl, threads, err);
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

/* How read_file hands the records over: one of the two. */
struct read_to {
	run_batch_fn batch;       /* time-ordered batches */
	cr_block_fn block;        /* decoded blocks, in file order */
	void *opaque;
	struct pipeline *pl;      /* set by read_file, for the status line */
	uint64_t lines_skip;      /* damage lines an earlier read printed */
	uint64_t lines_said;      /* ... and this one, set by read_file */
};

/* A block to read_to's function, and the status line on. */
static int block_on(void *opaque, const struct cr_block *b,
		    struct pipe_err *err)
{
	struct read_to *to = opaque;
	int ret = to->block(to->opaque, b, err);

	status_update(to->pl);
	return ret;
}

/* The file of byte source `spec` to `to`, then res: 0, 1 when a block
 * function stopped the read, or a negative errno with err set. */
static int read_file(const struct conf *conf, const char *spec,
		     uint32_t threads, struct read_to *to,
		     struct scan_result *res, struct pipe_err *err)
{
	struct run_opts o = { .conf = conf, .quiet = true };
	struct pipeline pl = { .o = &o, .sigfd = -1 };
	struct pipe_batch b;
	uint64_t size = 0;
	int ret;

	memset(res, 0, sizeof(*res));
	to->pl = &pl;
	pl.lines_skip = to->lines_skip;
	ret = open_file_read(&pl, spec, threads, err);
	if (ret < 0)
		goto out;
	if (to->block) {
		ret = creader_blocks(pl.reader, block_on, to, err);
		if (ret != 0)
			goto out;
	}
	while (!to->block) {
		ret = creader_next(pl.reader, &b, err);
		if (ret == PIPE_EOF) {
			ret = 0;
			break;
		}
		if (ret == 0)
			ret = to->batch(to->opaque, creader_meta(pl.reader), &b,
					err);
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
	status_clear(&pl);
	to->lines_said = pl.lines_said;
	pipeline_free(&pl);
	return ret;
}

int run_read(const struct conf *conf, const char *spec, uint32_t threads,
	     run_batch_fn fn, void *opaque, struct scan_result *res,
	     struct pipe_err *err)
{
	struct read_to to = { .batch = fn, .opaque = opaque };

	return read_file(conf, spec, threads, &to, res, err);
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
	for (i = 0; i < b->nr; i++) {
		struct stream_hash *sh = digest_stream(&ss->d,
						       b->recs[i].stream);

		if (!sh)
			return pipe_err_nomem(err, "cannot digest the records");
		XXH3_64bits_update(sh->state, b->recs[i].hdr,
				   b->recs[i].hdr->size);
		if (b->recs[i].time < ss->last_time)
			ss->out_of_order++;
		else
			ss->last_time = b->recs[i].time;
	}
	return 0;
}

int run_scan(const struct conf *conf, const char *path, uint32_t threads,
	     struct scan_result *res, struct pipe_err *err)
{
	char *spec = file_spec(path);
	int ret;

	if (!spec)
		return pipe_err_nomem(err, "cannot read '%s'", path);
	ret = run_scan_spec(conf, spec, threads, res, err);
	free(spec);
	return ret;
}

/*
 * A block of the per-stream read: its records in one piece when they lie
 * in order, else one by one in time order.  A block that starts before
 * the last record of its stream, or before the horizon (the merge would
 * have released newer records already), stops the read: the file is
 * read again through the merge, which orders and counts them.
 */
static int scan_block(void *opaque, const struct cr_block *b,
		      struct pipe_err *err)
{
	struct scan_state *ss = opaque;
	struct stream_hash *sh;
	size_t i;

	if (!b->nr)
		return 0;
	sh = digest_stream(&ss->d, b->stream);
	if (!sh)
		return pipe_err_nomem(err, "cannot digest the records");
	if (b->recs[0].time < sh->last_time || b->recs[0].time < b->horizon)
		return 1;
	if (b->in_order)
		XXH3_64bits_update(sh->state, b->bytes, b->len);
	for (i = 0; !b->in_order && i < b->nr; i++)
		XXH3_64bits_update(sh->state, b->recs[i].hdr,
				   b->recs[i].hdr->size);
	sh->last_time = b->recs[b->nr - 1].time;
	return 0;
}

int run_scan_spec(const struct conf *conf, const char *spec,
		  uint32_t threads, struct scan_result *res,
		  struct pipe_err *err)
{
	struct scan_state ss = { { 0 }, 0, 0 };
	struct read_to to = { .block = scan_block, .opaque = &ss };
	uint64_t digest = 0;
	int ret;

	ret = read_file(conf, spec, threads, &to, res, err);
	if (ret > 0) {
		/* the blocks are out of order: in time order, merged, with
		 * the damage lines said already not said again (they come in
		 * file order) */
		struct read_to merged = {
			.batch = scan_batch,
			.opaque = &ss,
			.lines_skip = to.lines_said,
		};

		digest_release(&ss.d);
		memset(&ss, 0, sizeof(ss));
		scan_result_release(res);
		ret = read_file(conf, spec, threads, &merged, res, err);
	}
	if (ret == 0) {
		ret = digest_final(&ss.d, &digest, err);
		if (ret < 0)
			scan_result_release(res);
	}
	if (ret == 0) {
		res->out_of_order = ss.out_of_order;
		snprintf(res->digest, sizeof(res->digest), "%016llx",
			 (unsigned long long)digest);
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
		return pipe_err_nomem(err, "cannot read '%s'", path);
	if (!scan) {
		ret = open_file_read(&pl, spec, 1, err);
		if (ret == 0)
			ret = creader_summary(pl.reader, &res->st, err);
		if (ret == 0) {
			res->file_size = res->st.file_bytes;
			ret = copy_meta(&pl, spec, res, err);
			*scanned = false;
		}
		pipeline_free(&pl);
	}
	free(spec);
	if (ret > 0)
		return run_scan(conf, path, 0, res, err);
	return ret;
}

void scan_result_release(struct scan_result *res)
{
	meta_free(res->meta);
	res->meta = NULL;
}
