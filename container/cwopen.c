/*
 * cwopen.c - a new pipe file: its file id, the file header, the metadata
 * block, the first dictionary, and cwriter_new.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cwstate.h"
#include "transform.h"

static void cw_file_id(uint8_t id[16])
{
	struct timespec ts;
	uint64_t a, b;
	ssize_t n = getrandom(id, 16, 0);

	if (n == 16)
		return;
	/* no entropy source: time and pid still tell files apart */
	clock_gettime(CLOCK_REALTIME, &ts);
	a = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	b = (uint64_t)getpid() * UINT64_C(0x9e3779b97f4a7c15) ^ a;
	fmt_put64(id, a);
	fmt_put64(id + 8, b);
}

static int cw_file_header(struct cwriter *w, struct pipe_err *err)
{
	uint8_t h[FMT_FILE_HDR_SIZE] = { 0 };
	struct timespec ts;

	memcpy(h, FMT_MAGIC, FMT_MAGIC_LEN);
	fmt_put16(h + FMT_FH_VERSION, FMT_VERSION);
	fmt_put16(h + FMT_FH_HDR_SIZE, FMT_FILE_HDR_SIZE);
	fmt_put32(h + FMT_FH_CLOCK, FMT_CLOCK_PERF);
	cw_file_id(h + FMT_FH_FILE_ID);
	clock_gettime(CLOCK_REALTIME, &ts);
	fmt_put64(h + FMT_FH_CTIME,
		  (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	fmt_put64(h + FMT_FH_CHECKSUM,
		  fmt_checksum(h, FMT_FH_CHECKSUM, 0));
	w->salt = fmt_get64(h + FMT_FH_FILE_ID);
	return cw_write(w, h, sizeof(h), err);
}

/* META: the metadata with the codec name added, stored without a codec. */
static int cw_meta_block(struct cwriter *w, const struct meta *meta,
			 struct pipe_err *err)
{
	struct meta *copy = NULL;
	struct fmt_block b = { 0 };
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret;

	ret = meta_encode(meta, &buf, &len, err);
	if (ret < 0)
		return ret;
	if (w->opts.codec_name) {
		ret = meta_decode(&copy, buf, len, "metadata", err);
		free(buf);
		buf = NULL;
		if (ret < 0)
			goto out;
		ret = meta_set_prop(copy, "codec", w->opts.codec_name, err);
		if (ret < 0)
			goto out;
		ret = meta_encode(copy, &buf, &len, err);
		if (ret < 0)
			goto out;
	}
	if (len > CONTAINER_LEN_MAX) {
		ret = pipe_err_set(err, -EOVERFLOW,
				   "cannot write metadata: %zu bytes", len);
		goto out;
	}
	b.type = FMT_META;
	b.stream = PIPE_STREAM_SIDEBAND;
	b.stored = (uint32_t)len;
	b.raw = (uint32_t)len;
	b.coded = (uint32_t)len;
	ret = cw_put_block(w, &b, buf, err);
out:
	free(buf);
	meta_free(copy);
	return ret;
}

/* Dictionaries: a given one goes in now; else training starts. */
static int cw_dict_start(struct cwriter *w, struct pipe_err *err)
{
	const struct pipe_plugin *c = w->opts.codec;

	w->dict.pays_pct = UINT32_MAX;
	if (!c || c->codec_id == FMT_CODEC_NONE || !c->add_dict)
		return 0;
	if (w->opts.dict_data) {
		w->dict.on = true;
		return cw_dict_write(w, 1, w->opts.dict_data, w->opts.dict_len,
				     err);
	}
	if (w->opts.dict_mode == CW_DICT_OFF || !c->train)
		return 0;
	w->dict.on = true;
	cw_dict_collect(w);
	return 0;
}

int cwriter_new(struct cwriter **out, const struct cw_opts *opts,
		const struct meta *meta, struct pipe_err *err)
{
	struct cwriter *w;
	uint32_t i;
	int ret;

	if (opts->block_size < CONTAINER_BLOCK_MIN ||
	    opts->block_size > CONTAINER_BLOCK_MAX)
		return pipe_err_set(err, -EINVAL,
				    "bad block size %u: not in 4K..4M",
				    opts->block_size);
	w = calloc(1, sizeof(*w));
	if (!w)
		return pipe_err_set(err, -ENOMEM, "cannot start writer: %s",
				    strerror(ENOMEM));
	w->opts = *opts;
	w->meta = meta;
	for (i = 0; i < meta_nr_events(meta); i++)
		if (meta_attr(meta, i)->sample_type & PERF_SAMPLE_STACK_USER)
			w->stacks = true;
	w->nr_streams = meta_view(meta) && meta_view(meta)->nr_streams ?
			meta_view(meta)->nr_streams : META_MAX_STREAMS;
	w->horizon_cap = UINT64_MAX;
	w->job_ns = UINT64_MAX;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->room, NULL);
	if (!w->opts.queue_bytes)
		w->opts.queue_bytes = CW_QUEUE_DEFAULT;
	if (!w->opts.inline_ns)
		w->opts.inline_ns = CW_INLINE_NS;
	if (opts->transform) {
		ret = transform_new(&w->tf, meta, err);
		if (ret < 0)
			goto fail;
		w->cols = !w->stacks;
	}
	ret = cw_file_header(w, err);
	if (ret < 0)
		goto fail;
	ret = cw_meta_block(w, meta, err);
	if (ret < 0)
		goto fail;
	ret = cw_dict_start(w, err);
	if (ret < 0)
		goto fail;
	__atomic_store_n(&w->pub_stored, w->enc_stored, __ATOMIC_RELAXED);
	if (opts->async) {
		ret = -pthread_create(&w->thread, NULL, cw_worker, w);
		if (ret < 0) {
			pipe_err_set(err, ret, "cannot start the encoder: %s",
				     strerror(-ret));
			goto fail;
		}
		w->thread_on = true;
	}
	*out = w;
	return 0;
fail:
	cwriter_free(w);
	return ret;
}
