/*
 * train.c - `pipe train`: cut earlier recordings into blocks as the
 * writer would, transform them, and train the codec's dictionary on the
 * result (see train.h).  The writer trains on the same bytes, so a
 * dictionary made here fits `-c zstd:dict_file=FILE`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "grow.h"
#include "host.h"
#include "meta.h"
#include "output.h"
#include "params.h"
#include "run.h"
#include "train.h"
#include "transform.h"

#define TRAIN_PIECE (8u << 10)       /* training sample size */
#define TRAIN_FACTOR 100             /* bytes of samples per dict byte */
#define TRAIN_MAX (64u << 20)        /* most sample bytes kept */
#define TRAIN_STREAMS 4097

struct tstream {
	uint32_t stream;   /* stream id */
	uint8_t *buf;      /* raw records of the open block, owned */
	size_t len;
};

struct trainer {
	struct transform *tf;     /* owned, made with the first batch */
	struct tstream *s;        /* owned, nr of cap_s */
	uint32_t nr;
	size_t cap_s;
	size_t block;             /* raw bytes per block */
	uint8_t *samples;         /* training pieces, back to back */
	size_t len, cap;
	size_t *sizes;            /* size of each piece */
	uint32_t nr_sizes;
	size_t sizes_cap;
	uint64_t blocks;
};

static struct tstream *tstream_of(struct trainer *t, uint32_t stream)
{
	struct tstream *s;
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		if (t->s[i].stream == stream)
			return &t->s[i];
	if (t->nr >= TRAIN_STREAMS)
		return NULL;
	if (grow_array(&t->s, &t->cap_s, (size_t)t->nr + 1, sizeof(*t->s), 4,
		       TRAIN_STREAMS) < 0)
		return NULL;
	s = &t->s[t->nr];
	s->stream = stream;
	s->len = 0;
	s->buf = malloc(t->block);
	if (!s->buf)
		return NULL;
	t->nr++;
	return s;
}

static int add_piece(struct trainer *t, const uint8_t *p, size_t n)
{
	int ret = grow_array(&t->sizes, &t->sizes_cap, t->nr_sizes + 1,
			     sizeof(*t->sizes), 256, SIZE_MAX);

	if (ret < 0)
		return ret;
	memcpy(t->samples + t->len, p, n);
	t->len += n;
	t->sizes[t->nr_sizes++] = n;
	return 0;
}

/* Transform one block as the writer does and keep it in pieces. */
static int close_block(struct trainer *t, struct tstream *s,
		       struct pipe_err *err)
{
	const void *out = s->buf;
	size_t n = s->len, off;
	int ret;

	if (!s->len)
		return 0;
	if (transform_encode(t->tf, s->buf, s->len, &out, &n) < 0) {
		out = s->buf; /* the writer stores such blocks as they are */
		n = s->len;
	}
	for (off = 0; off < n && t->len < t->cap; off += TRAIN_PIECE) {
		size_t k = n - off < TRAIN_PIECE ? n - off : TRAIN_PIECE;

		if (k > t->cap - t->len)
			k = t->cap - t->len;
		ret = add_piece(t, (const uint8_t *)out + off, k);
		if (ret < 0)
			return pipe_err_set(err, ret,
					    "cannot keep training samples: out of memory");
	}
	s->len = 0;
	t->blocks++;
	return 0;
}

static int train_batch(void *opaque, const struct meta *m,
		       const struct pipe_batch *b, struct pipe_err *err)
{
	struct trainer *t = opaque;
	size_t i;
	int ret;

	if (!t->tf) {
		ret = transform_new(&t->tf, m, err);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < b->nr && t->len < t->cap; i++) {
		const struct pipe_record *r = &b->recs[i];
		struct tstream *s = tstream_of(t, r->stream);

		if (!s)
			return pipe_err_nomem(err, "cannot keep training "
					      "samples");
		if (s->len + r->hdr->size > t->block) {
			ret = close_block(t, s, err);
			if (ret < 0)
				return ret;
		}
		memcpy(s->buf + s->len, r->hdr, r->hdr->size);
		s->len += r->hdr->size;
	}
	return 0;
}

static int write_dict(const struct train_opts *o, const void *dict,
		      size_t len, struct pipe_err *err)
{
	struct output *out;
	int ret;

	ret = output_open(&out, o->output, o->force,
			  "add --force to overwrite it", NULL, err);
	if (ret < 0)
		return ret;
	if (fwrite(dict, 1, len, output_file(out)) != len) {
		ret = pipe_err_set(err, -errno ? -errno : -EIO,
				   "cannot write '%s': %s", o->output,
				   strerror(errno ? errno : EIO));
		output_abort(out);
		return ret;
	}
	return output_commit(out, err);
}

static void trainer_release(struct trainer *t)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		free(t->s[i].buf);
	free(t->s);
	free(t->samples);
	free(t->sizes);
	transform_free(t->tf);
}

int train_run(const struct train_opts *o, struct pipe_err *err)
{
	struct host_run hr = { .command_status = -1, .quiet = true };
	struct trainer t = { 0 };
	struct scan_result res = { 0 };
	struct inst *codec = NULL;
	uint8_t *dict = NULL;
	size_t dict_len = 0;
	uint32_t size, i;
	int ret;

	ret = inst_open(&codec, o->conf, PIPE_KIND_CODEC,
			o->codec ? o->codec : "zstd", &hr, err);
	if (ret < 0)
		return ret;
	if (!codec->p->train) {
		ret = pipe_err_set(err, -EINVAL,
				   "%s does not train dictionaries", codec->ctx.what);
		pipe_err_hint(err, "use -c zstd");
		goto out;
	}
	size = o->dict_size ? o->dict_size :
		(uint32_t)args_int(codec->ctx.args, "dict_size");
	t.block = (size_t)args_int(codec->ctx.args, "block");
	t.cap = (size_t)size * TRAIN_FACTOR;
	if (t.cap > TRAIN_MAX)
		t.cap = TRAIN_MAX;
	t.samples = malloc(t.cap);
	dict = malloc(size);
	if (!t.samples || !dict) {
		ret = pipe_err_nomem(err, "cannot train a dictionary of %u "
				     "bytes", size);
		goto out;
	}
	ret = run_read(o->conf, o->source, 0, train_batch, &t, &res,
		       err);
	/* the reader's metadata is gone: the open blocks use the copy */
	transform_free(t.tf);
	t.tf = NULL;
	if (ret == 0)
		ret = transform_new(&t.tf, res.meta, err);
	for (i = 0; ret == 0 && i < t.nr && t.len < t.cap; i++)
		ret = close_block(&t, &t.s[i], err);
	if (ret < 0)
		goto out;
	if (t.nr_sizes < 8) {
		ret = pipe_err_set(err, -EINVAL,
				   "too little data in '%s' to train a dictionary (%zu bytes)",
				   o->source, t.len);
		pipe_err_hint(err, "train on longer recordings, or with a smaller block=");
		goto out;
	}
	ret = inst_train(codec, t.samples, t.sizes, t.nr_sizes, dict, size,
			 &dict_len, err);
	if (ret < 0)
		goto out;
	ret = write_dict(o, dict, dict_len, err);
	if (ret == 0)
		fprintf(stderr, "pipe: trained a %zu-byte dictionary on %.1f MB "
			"of %llu blocks into '%s'\n", dict_len,
			(double)t.len / 1e6, (unsigned long long)t.blocks,
			o->output);
out:
	scan_result_release(&res);
	trainer_release(&t);
	free(dict);
	inst_free(codec);
	return ret;
}
