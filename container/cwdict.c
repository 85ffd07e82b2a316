/*
 * cwdict.c - the writer's dictionaries: pieces of coded blocks sampled for
 * training, a dictionary trained and written, and with dict=auto the trial
 * that keeps it only while it pays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cwstate.h"
#include "grow.h"
#include "host.h"

static size_t cw_dict_target(const struct cwriter *w)
{
	size_t t = (size_t)w->opts.dict_size * CW_DICT_SAMPLES;

	return t < CW_DICT_SAMPLES_MAX ? t : CW_DICT_SAMPLES_MAX;
}

/* Start gathering training bytes (a no-op past the cap). */
void cw_dict_collect(struct cwriter *w)
{
	if (w->dict.samples || w->dict.last >= CW_DICT_MAX ||
	    w->dict.given_up || w->opts.dict_size < 256)
		return;
	w->dict.samples = malloc(cw_dict_target(w));
	w->dict.samples_cap = w->dict.samples ? cw_dict_target(w) : 0;
	w->dict.samples_len = 0;
	w->dict.nr_sizes = 0;
}

static void cw_dict_drop_samples(struct cwriter *w)
{
	free(w->dict.samples);
	w->dict.samples = NULL;
	w->dict.samples_len = 0;
	w->dict.samples_cap = 0;
	w->dict.nr_sizes = 0;
}

/* Keep coded bytes as training pieces while there is room. */
void cw_dict_sample(struct cwriter *w, const uint8_t *p, size_t len)
{
	while (w->dict.samples && len &&
	       w->dict.samples_len < w->dict.samples_cap) {
		size_t n = len < CW_DICT_PIECE ? len : CW_DICT_PIECE;

		if (n > w->dict.samples_cap - w->dict.samples_len)
			n = w->dict.samples_cap - w->dict.samples_len;
		if (grow_array(&w->dict.sizes, &w->dict.sizes_cap,
			       (size_t)w->dict.nr_sizes + 1,
			       sizeof(*w->dict.sizes), 256, UINT32_MAX))
			return;
		memcpy(w->dict.samples + w->dict.samples_len, p, n);
		w->dict.samples_len += n;
		w->dict.sizes[w->dict.nr_sizes++] = n;
		p += n;
		len -= n;
	}
}

/* A DICT block for dictionary `id`, then the codec learns it. */
int cw_dict_write(struct cwriter *w, uint32_t id, const void *dict,
		  size_t len, struct pipe_err *err)
{
	const struct pipe_plugin *c = w->opts.codec;
	struct fmt_block b = { 0 };
	struct crash_site site;
	uint8_t *payload;
	size_t out_len = 0;
	int ret;

	if (len > CONTAINER_LEN_MAX - 8)
		return pipe_err_set(err, -EOVERFLOW,
				    "cannot store a dictionary of %zu bytes",
				    len);
	payload = malloc(len + 8);
	if (!payload)
		return pipe_err_set(err, -ENOMEM, "cannot store dictionary: %s",
				    strerror(ENOMEM));
	fmt_put32(payload, c->codec_id);
	fmt_put32(payload + 4, 0);
	memcpy(payload + 8, dict, len);
	ret = cw_compress(w, 0, payload, len + 8, &w->zbuf2, &w->zcap2, 0,
			  &out_len, err);
	if (ret == 0) {
		b.type = FMT_DICT;
		b.codec = c->codec_id;
		b.stream = PIPE_STREAM_SIDEBAND;
		b.dict = id;
		b.raw = (uint32_t)(len + 8);
		b.coded = b.raw;
		b.stored = (uint32_t)out_len;
		b.horizon = w->horizon_out;
		ret = cw_put_block(w, &b, w->zbuf2, err);
	}
	free(payload);
	if (ret < 0)
		return ret;
	site = host_enter(w->opts.codec_ctx, "add_dict");
	ret = c->add_dict(w->opts.codec_state, id, dict, len);
	host_leave(site);
	if (ret < 0)
		return pipe_err_set(err, ret,
				    "codec '%s' cannot take dictionary %u: %s",
				    c->name, id, strerror(-ret));
	w->dict.last = id;
	w->dict.cur = id;
	return 0;
}

/* Enough training bytes: train, store, use, and try it out. */
static int cw_dict_train(struct cwriter *w, struct pipe_err *err)
{
	const struct pipe_plugin *c = w->opts.codec;
	struct crash_site site;
	size_t len = 0;
	uint8_t *dict;
	int ret;

	dict = malloc(w->opts.dict_size);
	if (!dict)
		return pipe_err_set(err, -ENOMEM, "cannot train: %s",
				    strerror(ENOMEM));
	site = host_enter(w->opts.codec_ctx, "train");
	ret = c->train(w->opts.codec_state, w->dict.samples, w->dict.sizes,
		       w->dict.nr_sizes, dict, w->opts.dict_size, &len);
	host_leave(site);
	cw_dict_drop_samples(w);
	if (ret < 0) {
		/* data a codec cannot train on goes without */
		w->dict.given_up = true;
		free(dict);
		return 0;
	}
	ret = cw_dict_write(w, w->dict.last + 1, dict, len, err);
	free(dict);
	if (ret < 0)
		return ret;
	w->dict.trial_left = CW_DICT_TRIAL;
	w->dict.trial_with = 0;
	w->dict.trial_without = 0;
	w->dict.since_check = 0;
	return 0;
}

/* A trial block was compressed both ways: weigh the dictionary. */
void cw_dict_weigh(struct cwriter *w, size_t with, size_t without)
{
	uint64_t pct;
	bool first = w->dict.pays_pct == UINT32_MAX;

	w->dict.trial_with += with;
	w->dict.trial_without += without;
	if (--w->dict.trial_left)
		return;
	pct = w->dict.trial_without > w->dict.trial_with ?
		(w->dict.trial_without - w->dict.trial_with) * 100 /
		w->dict.trial_without : 0;
	if (first)
		w->dict.pays_pct = (uint32_t)pct;
	if (w->opts.dict_mode == CW_DICT_AUTO && pct < CW_DICT_PAYS) {
		w->dict.cur = 0;
		if (first)
			w->dict.given_up = true;
	}
	/* drifted: the saving fell below half of what it was */
	if (!first && pct * 2 < w->dict.pays_pct) {
		w->dict.pays_pct = UINT32_MAX;
		cw_dict_collect(w);
	}
	if (w->dict.cur == 0 && !w->dict.samples)
		w->dict.given_up = true;
}

int cw_dict_after_block(struct cwriter *w, struct pipe_err *err)
{
	if (!w->dict.on)
		return 0;
	if (w->dict.samples && w->dict.samples_len >= w->dict.samples_cap)
		return cw_dict_train(w, err);
	if (w->dict.cur && !w->dict.trial_left && !w->opts.dict_data &&
	    ++w->dict.since_check >= CW_DICT_CHECK) {
		w->dict.since_check = 0;
		w->dict.trial_left = CW_DICT_TRIAL;
		w->dict.trial_with = 0;
		w->dict.trial_without = 0;
	}
	return 0;
}
