/*
 * cwriter.c - the container writer: splits records by stream and cuts
 * each stream into blocks on the caller's thread; an encoder (a worker
 * thread with opts.async, else inline) transforms, compresses, checksums
 * and writes them in order, with index blocks and the END block.
 * Append-only: bytes once handed to opts->write are never rewritten.
 * Layout: docs/format.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "container.h"
#include "crash.h"
#include "decode.h"
#include "err.h"
#include "format.h"
#include "host.h"
#include "meta.h"
#include "transform.h"

/* an index block at least every this many bytes or ns of record time */
#define CW_INDEX_BYTES (4u << 20)
#define CW_INDEX_NS UINT64_C(2000000000)
/*
 * Dictionaries (docs/format.md "Dictionaries in the writer"): train on
 * about 100x the dictionary size of coded bytes, cut into pieces; with
 * dict=auto keep one only if it saves CW_DICT_PAYS percent over a trial of
 * CW_DICT_TRIAL blocks; every CW_DICT_CHECK blocks compare again, and
 * retrain when the saving fell below half of what it was; at most
 * CW_DICT_MAX dictionaries per file.
 */
#define CW_DICT_SAMPLES 100
#define CW_DICT_SAMPLES_MAX (16u << 20)
#define CW_DICT_PIECE (8u << 10)
#define CW_DICT_TRIAL 16
#define CW_DICT_PAYS 5
#define CW_DICT_CHECK 64
#define CW_DICT_MAX CONTAINER_DICTS_MAX

/* sideband records held for ordering past this are released anyway */
#define CW_HOLD_MAX (64u << 20)

/* raw bytes waiting for the encoder when opts.queue_bytes is 0 */
#define CW_QUEUE_DEFAULT (16u << 20)
/* live, queued blocks wake the worker once this much waits, or flush/2 */
#define CW_KICK_BYTES (1u << 20)
/* live, the caller encodes queued blocks itself before it sleeps for up
 * to this long, while a block takes less (cwriter_idle) */
#define CW_INLINE_NS UINT64_C(5000000)
/* done jobs kept with their buffers for reuse */
#define CW_SPARE_MAX 8

/* record-time lag of a pending stream when flush_ns is 0 */
#define CW_LAG_DEFAULT UINT64_C(1000000000)

struct cw_stream {
	uint32_t id;            /* stream id */
	uint8_t *buf;           /* owned pending records */
	size_t len;             /* bytes pending */
	size_t cap;             /* bytes allocated */
	uint32_t records;       /* records pending */
	uint32_t samples;       /* of which samples */
	uint64_t t_min, t_max;  /* times of the pending records, ns */
	uint64_t pending_since; /* monotonic ns of the first tick seeing data */
};

/* A sideband record held until the caller's horizon passes its time. */
struct cw_held {
	uint64_t time;          /* record time, ns */
	size_t off;             /* offset of its bytes in the hold buffer */
	uint32_t size;          /* record bytes */
};

enum cw_job_kind {
	CW_JOB_DATA = 0,        /* a stream's raw records, to encode */
	CW_JOB_LOST = 1,        /* a LOST block, payload ready */
	CW_JOB_END = 2,         /* the last index and END; payload ready but
				   for the index offset and block count */
};

/* One block for the encoder, queued in file order. */
struct cw_job {
	struct cw_job *next;    /* queue or spare list */
	int kind;               /* enum cw_job_kind */
	struct fmt_block b;     /* header fields known when it was queued */
	uint8_t *buf;           /* owned: raw records or ready payload */
	size_t len;             /* bytes used */
	size_t cap;             /* bytes allocated */
	uint64_t queued_at;     /* monotonic ns (the caller's arrival time) */
};

struct cwriter {
	struct cw_opts opts;          /* copy; pointers borrowed */
	const struct meta *meta;      /* borrowed, outlives the writer */
	bool stacks;                  /* some event records user stacks */
	struct transform *tf;         /* owned, NULL: transform off */
	uint64_t salt;                /* low 8 bytes of the file id */
	uint64_t off;                 /* bytes written so far */
	uint64_t seq;                 /* next block sequence number */
	struct cw_stream **by_id;     /* CPU streams by id, may hold NULL */
	uint32_t nr_by_id;
	struct cw_stream *side;       /* the sideband stream, owned */
	uint32_t nr_streams;          /* CPU stream ids are below this */
	uint64_t last_time;           /* newest record time added */
	uint64_t horizon_cap;         /* records older may still come */
	uint64_t horizon_out;         /* largest horizon written */
	uint64_t arrival_ns;          /* monotonic: records came after, 0 */
	/* sideband records waiting for the cap (records per stream only) */
	struct cw_held *held;         /* owned, sorted by time */
	uint32_t nr_held;
	size_t held_cap;               /* bytes allocated for held */
	uint8_t *hold;                /* owned record bytes of `held` */
	size_t hold_len, hold_cap;
	uint8_t *hold2;               /* owned: where the rest is compacted */
	size_t hold2_cap;
	uint8_t *out;                 /* owned block assembly buffer */
	size_t out_cap;
	uint8_t *zbuf;                /* owned codec output buffer */
	size_t zcap;
	uint8_t *zbuf2;               /* owned: the other trial output */
	size_t zcap2;
	/* dictionaries */
	bool dict_on;                 /* the codec trains and takes them */
	uint32_t dict_cur;            /* id blocks use now, 0: none */
	uint32_t dict_last;           /* last id written */
	uint8_t *samples;             /* owned training bytes, or NULL */
	size_t samples_len, samples_cap;
	size_t *sizes;                /* owned piece sizes */
	uint32_t nr_sizes, sizes_cap;
	uint32_t trial_left;          /* blocks still compressed both ways */
	uint64_t trial_with, trial_without; /* their stored bytes */
	uint32_t pays_pct;            /* saving of the current dictionary */
	uint32_t since_check;         /* blocks since the last comparison */
	bool dict_given_up;           /* auto: dictionaries do not pay */
	uint8_t *idx;                 /* owned index entries since last index */
	size_t idx_len, idx_cap;
	uint32_t idx_nr;
	uint64_t idx_prev;            /* offset of the last index, 0: none */
	uint64_t idx_off_at;          /* file offset when it was written */
	uint64_t idx_time_at;         /* record time when it was written */
	bool idx_time_set;
	uint64_t lost;                /* PERF_RECORD_LOST sum */
	uint64_t throttles;           /* PERF_RECORD_THROTTLE records */
	uint64_t t_first, t_last;     /* record time range */
	bool have_time;
	bool finished;
	struct cw_stats st;           /* the adding side's counts */
	/* the encoder's side (its thread's alone while it runs) */
	uint64_t enc_first, enc_last; /* time range of DATA written, ns */
	uint64_t enc_stored;          /* bytes written */
	uint64_t enc_blocks;          /* DATA blocks written */
	uint64_t pub_stored;          /* enc_stored for cwriter_stats (atomic) */
	uint64_t pub_blocks;          /* enc_blocks likewise */
	/* the queue, under mu */
	pthread_mutex_t mu;
	pthread_cond_t work;          /* a job queued, or quit */
	pthread_cond_t room;          /* a job done */
	pthread_t thread;
	bool thread_on;               /* the worker runs */
	bool quit;                    /* the worker ends when the queue is empty */
	bool flush_req;               /* call opts.flush when the queue is empty */
	struct cw_job *head, *tail;   /* queued, oldest first */
	struct cw_job *spare;         /* done jobs, buffers kept */
	uint32_t nr_spare;
	size_t queued;                /* raw bytes of queued DATA jobs */
	bool asleep_ok;               /* queued jobs may wait for a kick */
	bool running;                 /* a job is being run (by either side) */
	uint64_t job_ns;              /* CPU ns of the last DATA job, or
					 UINT64_MAX: none yet */
	int enc_ret;                  /* first encoder failure, 0: none */
	struct pipe_err enc_err;      /* its message */
};

static int cw_write(struct cwriter *w, const void *buf, size_t len,
		    struct pipe_err *err)
{
	int ret = w->opts.write(w->opts.opaque, buf, len, err);

	if (ret < 0)
		return ret;
	w->off += len;
	w->enc_stored += len;
	return 0;
}


static int cw_index_add(struct cwriter *w, const struct fmt_block *b,
			uint64_t off)
{
	uint8_t *e;

	if (fmt_grow((void **)&w->idx, &w->idx_cap,
		     w->idx_len + FMT_INDEX_ENTRY, 4096))
		return -ENOMEM;
	e = w->idx + w->idx_len;
	memset(e, 0, FMT_INDEX_ENTRY);
	fmt_put64(e + 0, off);
	fmt_put64(e + 8, b->t_min);
	fmt_put64(e + 16, b->t_max);
	fmt_put32(e + 24, b->stream);
	fmt_put32(e + 28, b->records);
	fmt_put32(e + 32, b->dict);
	fmt_put32(e + 36, b->raw);
	e[40] = (uint8_t)b->type;
	w->idx_len += FMT_INDEX_ENTRY;
	w->idx_nr++;
	return 0;
}

/*
 * Append one block whose stored payload is `payload` (b->stored bytes);
 * fills in the sequence number and payload checksum.  One write call.
 */
static int cw_put_block(struct cwriter *w, struct fmt_block *b,
			const void *payload, struct pipe_err *err)
{
	size_t pad = fmt_pad8(b->stored);
	size_t total;
	uint8_t *p;
	uint64_t at = w->off;
	int ret;

	b->hdr_size = FMT_BLOCK_HDR_SIZE;
	b->seq = w->seq;
	/* horizons never decrease, even when a record broke the caller's
	 * promise and came older than the cap */
	if (b->horizon < w->horizon_out)
		b->horizon = w->horizon_out;
	w->horizon_out = b->horizon;
	b->payload_sum = fmt_checksum(payload, b->stored, w->salt);
	total = (size_t)fmt_block_len(b);
	if (fmt_grow((void **)&w->out, &w->out_cap, total, 4096))
		return pipe_err_set(err, -ENOMEM, "cannot write block: %s",
				    strerror(ENOMEM));
	p = w->out;
	fmt_block_encode(b, w->salt, p);
	memcpy(p + FMT_BLOCK_HDR_SIZE, payload, b->stored);
	memset(p + FMT_BLOCK_HDR_SIZE + b->stored, 0, pad);
	p += FMT_BLOCK_HDR_SIZE + b->stored + pad;
	fmt_put64(p, total);
	fmt_put64(p + 8, w->salt);
	ret = cw_write(w, w->out, total, err);
	if (ret < 0)
		return ret;
	w->seq++;
	if (b->type != FMT_INDEX && b->type != FMT_END &&
	    cw_index_add(w, b, at))
		return pipe_err_set(err, -ENOMEM, "cannot index block: %s",
				    strerror(ENOMEM));
	return 0;
}

/* The oldest time a record still to be written can have. */
static uint64_t cw_horizon(const struct cwriter *w)
{
	uint64_t h = w->last_time < w->horizon_cap ? w->last_time
						   : w->horizon_cap;
	uint32_t i;

	for (i = 0; i < w->nr_by_id; i++) {
		const struct cw_stream *s = w->by_id[i];

		if (s && s->len && s->t_min < h)
			h = s->t_min;
	}
	if (w->side && w->side->len && w->side->t_min < h)
		h = w->side->t_min;
	if (w->nr_held && w->held[0].time < h)
		h = w->held[0].time;
	return h;
}

static int cw_write_index(struct cwriter *w, struct pipe_err *err)
{
	struct fmt_block b = { 0 };
	uint8_t *payload;
	uint64_t at = w->off;
	size_t len = FMT_INDEX_HEAD + w->idx_len;
	uint32_t i;
	int ret;

	if (!w->idx_nr)
		return 0;
	payload = malloc(len);
	if (!payload)
		return pipe_err_set(err, -ENOMEM, "cannot write index: %s",
				    strerror(ENOMEM));
	fmt_put64(payload, w->idx_prev);
	fmt_put32(payload + 8, w->idx_nr);
	fmt_put32(payload + 12, FMT_INDEX_ENTRY);
	memcpy(payload + FMT_INDEX_HEAD, w->idx, w->idx_len);
	b.type = FMT_INDEX;
	b.stream = PIPE_STREAM_SIDEBAND;
	b.t_min = UINT64_MAX;
	for (i = 0; i < w->idx_nr; i++) {
		const uint8_t *e = w->idx + (size_t)i * FMT_INDEX_ENTRY;

		if (e[40] != FMT_DATA)
			continue;
		if (fmt_get64(e + 8) < b.t_min)
			b.t_min = fmt_get64(e + 8);
		if (fmt_get64(e + 16) > b.t_max)
			b.t_max = fmt_get64(e + 16);
	}
	if (b.t_min == UINT64_MAX)
		b.t_min = 0;
	b.horizon = w->horizon_out;
	b.stored = (uint32_t)len;
	b.raw = (uint32_t)len;
	b.coded = (uint32_t)len;
	ret = cw_put_block(w, &b, payload, err);
	free(payload);
	if (ret < 0)
		return ret;
	w->idx_prev = at;
	w->idx_off_at = w->off;
	w->idx_time_at = w->enc_last;
	w->idx_time_set = true;
	w->idx_len = 0;
	w->idx_nr = 0;
	return 0;
}

static int cw_maybe_index(struct cwriter *w, struct pipe_err *err)
{
	if (w->idx_nr >= FMT_INDEX_MAX_ENTRIES ||
	    w->off - w->idx_off_at >= CW_INDEX_BYTES ||
	    (w->idx_time_set && w->enc_last - w->idx_time_at >= CW_INDEX_NS))
		return cw_write_index(w, err);
	if (!w->idx_time_set && w->enc_first) {
		w->idx_time_at = w->enc_first;
		w->idx_time_set = true;
	}
	return 0;
}

static int cw_compress(struct cwriter *w, uint32_t dict, const void *src,
		       size_t len, uint8_t **buf, size_t *cap, size_t *out_len,
		       struct pipe_err *err)
{
	const struct pipe_plugin *c = w->opts.codec;
	struct crash_site site = host_enter(w->opts.codec_ctx, "bound");
	size_t bound = c->bound(w->opts.codec_state, len);
	int ret;

	host_leave(site);
	if (fmt_grow((void **)buf, cap, bound, 4096))
		return pipe_err_set(err, -ENOMEM, "cannot compress block: %s",
				    strerror(ENOMEM));
	site = host_enter(w->opts.codec_ctx, "compress");
	ret = c->compress(w->opts.codec_state, dict, src, len, *buf, *cap,
			  out_len);
	host_leave(site);
	if (ret < 0)
		return pipe_err_set(err, ret,
				    "codec '%s' cannot compress a block: %s",
				    c->name, strerror(-ret));
	if (*out_len > CONTAINER_LEN_MAX)
		return pipe_err_set(err, -EOVERFLOW,
				    "codec '%s' made a block above the limit",
				    c->name);
	return 0;
}

/* ---- dictionaries ------------------------------------------------------ */

static size_t cw_dict_target(const struct cwriter *w)
{
	size_t t = (size_t)w->opts.dict_size * CW_DICT_SAMPLES;

	return t < CW_DICT_SAMPLES_MAX ? t : CW_DICT_SAMPLES_MAX;
}

/* Start gathering training bytes (a no-op past the cap). */
static void cw_dict_collect(struct cwriter *w)
{
	if (w->samples || w->dict_last >= CW_DICT_MAX || w->dict_given_up ||
	    w->opts.dict_size < 256)
		return;
	w->samples = malloc(cw_dict_target(w));
	w->samples_cap = w->samples ? cw_dict_target(w) : 0;
	w->samples_len = 0;
	w->nr_sizes = 0;
}

static void cw_dict_drop_samples(struct cwriter *w)
{
	free(w->samples);
	w->samples = NULL;
	w->samples_len = 0;
	w->samples_cap = 0;
	w->nr_sizes = 0;
}

/* Keep coded bytes as training pieces while there is room. */
static void cw_dict_sample(struct cwriter *w, const uint8_t *p, size_t len)
{
	while (w->samples && len && w->samples_len < w->samples_cap) {
		size_t n = len < CW_DICT_PIECE ? len : CW_DICT_PIECE;

		if (n > w->samples_cap - w->samples_len)
			n = w->samples_cap - w->samples_len;
		if (w->nr_sizes == w->sizes_cap) {
			uint32_t c = w->sizes_cap ? w->sizes_cap * 2 : 256;
			size_t *v = realloc(w->sizes, c * sizeof(*v));

			if (!v)
				return;
			w->sizes = v;
			w->sizes_cap = c;
		}
		memcpy(w->samples + w->samples_len, p, n);
		w->samples_len += n;
		w->sizes[w->nr_sizes++] = n;
		p += n;
		len -= n;
	}
}

/* A DICT block for dictionary `id`, then the codec learns it. */
static int cw_dict_write(struct cwriter *w, uint32_t id, const void *dict,
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
	ret = cw_compress(w, 0, payload, len + 8, &w->zbuf2, &w->zcap2,
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
	w->dict_last = id;
	w->dict_cur = id;
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
	ret = c->train(w->opts.codec_state, w->samples, w->sizes, w->nr_sizes,
		       dict, w->opts.dict_size, &len);
	host_leave(site);
	cw_dict_drop_samples(w);
	if (ret < 0) {
		/* data a codec cannot train on goes without */
		w->dict_given_up = true;
		free(dict);
		return 0;
	}
	ret = cw_dict_write(w, w->dict_last + 1, dict, len, err);
	free(dict);
	if (ret < 0)
		return ret;
	w->trial_left = CW_DICT_TRIAL;
	w->trial_with = 0;
	w->trial_without = 0;
	w->since_check = 0;
	return 0;
}

/* A trial block was compressed both ways: weigh the dictionary. */
static void cw_dict_weigh(struct cwriter *w, size_t with, size_t without)
{
	uint64_t pct;
	bool first = w->pays_pct == UINT32_MAX;

	w->trial_with += with;
	w->trial_without += without;
	if (--w->trial_left)
		return;
	pct = w->trial_without > w->trial_with ?
		(w->trial_without - w->trial_with) * 100 / w->trial_without : 0;
	if (first)
		w->pays_pct = (uint32_t)pct;
	if (w->opts.dict_mode == CW_DICT_AUTO && pct < CW_DICT_PAYS) {
		w->dict_cur = 0;
		if (first)
			w->dict_given_up = true;
	}
	/* drifted: the saving fell below half of what it was */
	if (!first && pct * 2 < w->pays_pct) {
		w->pays_pct = UINT32_MAX;
		cw_dict_collect(w);
	}
	if (w->dict_cur == 0 && !w->samples)
		w->dict_given_up = true;
}

static int cw_dict_after_block(struct cwriter *w, struct pipe_err *err)
{
	if (!w->dict_on)
		return 0;
	if (w->samples && w->samples_len >= w->samples_cap)
		return cw_dict_train(w, err);
	if (w->dict_cur && !w->trial_left && !w->opts.dict_data &&
	    ++w->since_check >= CW_DICT_CHECK) {
		w->since_check = 0;
		w->trial_left = CW_DICT_TRIAL;
		w->trial_with = 0;
		w->trial_without = 0;
	}
	return 0;
}

/* Transform and compress len bytes; *stored points at w-owned bytes. */
static int cw_encode(struct cwriter *w, const uint8_t *raw, size_t len,
		     struct fmt_block *b, const void **stored,
		     struct pipe_err *err)
{
	const struct pipe_plugin *c = w->opts.codec;
	const void *coded = raw;
	size_t coded_len = len;
	size_t out_len = 0, plain = 0;
	int ret;

	b->transform = TRANSFORM_NONE;
	if (w->tf) {
		const void *t;
		size_t tlen;

		ret = transform_encode(w->tf, raw, len, &t, &tlen);
		if (ret == 0 && tlen <= CONTAINER_LEN_MAX) {
			coded = t;
			coded_len = tlen;
			b->transform = TRANSFORM_COLUMNS;
		} else if (ret < 0 && ret != -EINVAL) {
			return pipe_err_set(err, ret,
					    "cannot transform block: %s",
					    strerror(-ret));
		}
	}
	b->raw = (uint32_t)len;
	b->coded = (uint32_t)coded_len;
	b->codec = c ? c->codec_id : FMT_CODEC_NONE;
	b->dict = 0;
	if (b->codec == FMT_CODEC_NONE) {
		*stored = coded;
		b->stored = (uint32_t)coded_len;
		return 0;
	}
	cw_dict_sample(w, coded, coded_len);
	b->dict = w->dict_cur;
	ret = cw_compress(w, b->dict, coded, coded_len, &w->zbuf, &w->zcap,
			  &out_len, err);
	if (ret < 0)
		return ret;
	*stored = w->zbuf;
	b->stored = (uint32_t)out_len;
	if (!b->dict || !w->trial_left)
		return 0;
	ret = cw_compress(w, 0, coded, coded_len, &w->zbuf2, &w->zcap2,
			  &plain, err);
	if (ret < 0)
		return ret;
	cw_dict_weigh(w, out_len, plain);
	if (plain < out_len) {
		/* the smaller of the two goes out */
		*stored = w->zbuf2;
		b->stored = (uint32_t)plain;
		b->dict = 0;
	}
	return 0;
}

/* A DATA job: encode, write, index (the encoder's side). */
static int cw_encode_data(struct cwriter *w, struct cw_job *j,
			  struct pipe_err *err)
{
	const void *stored = NULL;
	int ret;

	ret = cw_encode(w, j->buf, j->len, &j->b, &stored, err);
	if (ret < 0)
		return ret;
	w->enc_blocks++;
	ret = cw_put_block(w, &j->b, stored, err);
	if (ret == 0)
		ret = cw_dict_after_block(w, err);
	if (ret < 0)
		return ret;
	if (j->b.t_min && (!w->enc_first || j->b.t_min < w->enc_first))
		w->enc_first = j->b.t_min;
	if (j->b.t_max > w->enc_last)
		w->enc_last = j->b.t_max;
	return cw_maybe_index(w, err);
}

static int cw_run_job(struct cwriter *w, struct cw_job *j,
		      struct pipe_err *err)
{
	int ret;

	switch (j->kind) {
	case CW_JOB_DATA:
		ret = cw_encode_data(w, j, err);
		break;
	case CW_JOB_LOST:
		ret = cw_put_block(w, &j->b, j->buf, err);
		break;
	default:
		ret = cw_write_index(w, err);
		if (ret < 0)
			break;
		fmt_put64(j->buf + 0, w->idx_prev);
		fmt_put64(j->buf + 32, w->enc_blocks);
		ret = cw_put_block(w, &j->b, j->buf, err);
		break;
	}
	__atomic_store_n(&w->pub_stored, w->enc_stored, __ATOMIC_RELAXED);
	__atomic_store_n(&w->pub_blocks, w->enc_blocks, __ATOMIC_RELAXED);
	return ret;
}

/* A job to fill: a spare one with its buffer, or a new one. */
static struct cw_job *cw_job_get(struct cwriter *w)
{
	struct cw_job *j = NULL;

	if (w->thread_on)
		pthread_mutex_lock(&w->mu);
	if (w->spare) {
		j = w->spare;
		w->spare = j->next;
		w->nr_spare--;
	}
	if (w->thread_on)
		pthread_mutex_unlock(&w->mu);
	if (!j)
		j = calloc(1, sizeof(*j));
	if (j) {
		j->next = NULL;
		j->len = 0;
		memset(&j->b, 0, sizeof(j->b));
	}
	return j;
}

/* Keep a done job for reuse, or free it (mu held when the worker runs). */
static void cw_job_put_locked(struct cwriter *w, struct cw_job *j)
{
	if (w->nr_spare < CW_SPARE_MAX) {
		j->next = w->spare;
		w->spare = j;
		w->nr_spare++;
		return;
	}
	free(j->buf);
	free(j);
}

static uint64_t cw_clock(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Run the job taken off the queue, with mu held on entry and return; one
 * job runs at a time, by the worker or by the caller in cwriter_idle. */
static void cw_run_locked(struct cwriter *w, struct cw_job *j)
{
	struct pipe_err e;
	uint64_t t;
	int ret;

	w->running = true;
	pthread_mutex_unlock(&w->mu);
	t = cw_clock(CLOCK_THREAD_CPUTIME_ID);
	/* after a failure the rest is dropped: the caller stops */
	ret = w->enc_ret ? 0 : cw_run_job(w, j, &e);
	t = cw_clock(CLOCK_THREAD_CPUTIME_ID) - t;
	pthread_mutex_lock(&w->mu);
	w->running = false;
	if (j->kind == CW_JOB_DATA) {
		w->queued -= j->len;
		w->job_ns = t;
	}
	if (ret < 0 && !w->enc_ret) {
		w->enc_err = e;
		w->enc_ret = ret;
	}
	cw_job_put_locked(w, j);
	pthread_cond_broadcast(&w->room);
}

static void *cw_worker(void *arg)
{
	struct cwriter *w = arg;
	struct cw_job *j;
	struct pipe_err e;
	int ret;

	crash_thread_begin(); /* a codec's stack overflow is reported too */
	pthread_mutex_lock(&w->mu);
	for (;;) {
		/* the caller may be running a job itself (cwriter_idle) */
		while (w->running ||
		       (!w->head && !w->quit && !w->flush_req))
			pthread_cond_wait(&w->work, &w->mu);
		j = w->head;
		if (!j && w->flush_req) {
			w->flush_req = false;
			w->running = true;
			pthread_mutex_unlock(&w->mu);
			ret = w->enc_ret ? 0 : w->opts.flush(w->opts.opaque, &e);
			pthread_mutex_lock(&w->mu);
			w->running = false;
			if (ret < 0 && !w->enc_ret) {
				w->enc_err = e;
				w->enc_ret = ret;
			}
			continue;
		}
		if (!j)
			break;
		w->head = j->next;
		if (!w->head) {
			w->tail = NULL;
			w->asleep_ok = false;
		}
		cw_run_locked(w, j);
	}
	pthread_mutex_unlock(&w->mu);
	crash_thread_end();
	return NULL;
}

/* The encoder's first failure, handed to the caller once seen (mu held). */
static int cw_enc_failed_locked(struct cwriter *w, struct pipe_err *err)
{
	if (!w->enc_ret)
		return 0;
	*err = w->enc_err;
	return w->enc_ret;
}

/* Records a dropped block stands for: its own, but a PERF_RECORD_LOST
 * among them for the records it counted. */
static uint64_t cw_lost_in(const struct cw_job *j, uint64_t *kernel)
{
	uint64_t n = j->b.records, v;
	size_t off = 0;

	while (off + sizeof(struct perf_event_header) <= j->len) {
		const struct perf_event_header *h = (const void *)(j->buf + off);

		if (h->size < sizeof(*h) || h->size > j->len - off)
			break;
		if (h->type == PERF_RECORD_LOST && h->size >= 24) {
			memcpy(&v, j->buf + off + 16, 8);
			n += v - 1;
			*kernel += v;
		}
		off += h->size;
	}
	return n;
}

/* A dropped block: its records are lost, and the file says so. */
static int cw_drop(struct cwriter *w, const struct fmt_block *b,
		   uint64_t lost, uint64_t kernel, struct pipe_err *err)
{
	w->st.dropped_records += b->records;
	w->st.dropped_samples += b->samples;
	w->st.dropped_blocks++;
	w->lost -= kernel; /* counted when added; now in `lost` */
	return cwriter_lost(w, b->stream, lost, err);
}

/*
 * Hand a job to the encoder, which owns it from here: run it now without
 * a worker; else queue it.  A full queue (opts.queue_bytes of raw DATA)
 * makes a live recording drop a CPU stream's block, counted and written
 * as lost, rather than stall the thread that drains the rings; anything
 * else waits for room.
 */
static int cw_queue(struct cwriter *w, struct cw_job *j, struct pipe_err *err)
{
	bool data = j->kind == CW_JOB_DATA;
	size_t limit = w->opts.queue_bytes;
	int ret;

	if (!w->thread_on) {
		ret = cw_run_job(w, j, err);
		cw_job_put_locked(w, j);
		return ret;
	}
	pthread_mutex_lock(&w->mu);
	ret = cw_enc_failed_locked(w, err);
	while (ret == 0 && data && w->queued && w->queued + j->len > limit &&
	       !(w->opts.drop_when_behind && j->b.stream != PIPE_STREAM_SIDEBAND)) {
		pthread_cond_signal(&w->work);
		pthread_cond_wait(&w->room, &w->mu);
		ret = cw_enc_failed_locked(w, err);
	}
	if (ret == 0 && data && w->queued && w->queued + j->len > limit) {
		struct fmt_block b = j->b;
		uint64_t kernel = 0, lost = cw_lost_in(j, &kernel);

		cw_job_put_locked(w, j);
		pthread_mutex_unlock(&w->mu);
		return cw_drop(w, &b, lost, kernel, err);
	}
	if (ret < 0) {
		cw_job_put_locked(w, j);
		pthread_mutex_unlock(&w->mu);
		return ret;
	}
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	if (data)
		w->queued += j->len;
	/* live, blocks wait for cwriter_idle, which encodes them or wakes
	 * the worker for them; a backlog, or anyone but a live recording,
	 * wakes it now */
	j->queued_at = w->arrival_ns;
	if (!w->opts.drop_when_behind || w->queued > limit / 4)
		pthread_cond_signal(&w->work);
	else
		w->asleep_ok = true;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* When the oldest job waiting for a kick must be written (mu held). */
static uint64_t cw_kick_due_locked(const struct cwriter *w)
{
	if (!w->asleep_ok || !w->head)
		return UINT64_MAX;
	return w->head->queued_at + w->opts.flush_ns / 2;
}

static int cw_flush_stream(struct cwriter *w, struct cw_stream *s,
			   struct pipe_err *err)
{
	struct cw_job *j;
	uint8_t *buf;
	size_t cap;

	if (!s->len)
		return 0;
	j = cw_job_get(w);
	if (!j)
		return pipe_err_set(err, -ENOMEM, "cannot write block: %s",
				    strerror(ENOMEM));
	/* the records move to the job; the stream takes its old buffer */
	buf = j->buf;
	cap = j->cap;
	j->buf = s->buf;
	j->cap = s->cap;
	j->len = s->len;
	s->buf = buf;
	s->cap = cap;
	j->kind = CW_JOB_DATA;
	j->b.type = FMT_DATA;
	j->b.stream = s->id;
	j->b.records = s->records;
	j->b.samples = s->samples;
	j->b.t_min = s->t_min;
	j->b.t_max = s->t_max;
	/* this stream's records leave the pending set before the horizon */
	s->len = 0;
	s->records = 0;
	s->samples = 0;
	s->pending_since = 0;
	j->b.horizon = cw_horizon(w);
	return cw_queue(w, j, err);
}

static int cw_stream_of(struct cwriter *w, uint32_t id, struct cw_stream **out,
			struct pipe_err *err)
{
	struct cw_stream *s = NULL;

	if (id == PIPE_STREAM_SIDEBAND && w->side) {
		*out = w->side;
		return 0;
	}
	if (id != PIPE_STREAM_SIDEBAND && id < w->nr_by_id && w->by_id[id]) {
		*out = w->by_id[id];
		return 0;
	}
	/* readers take a block of any other stream for damage */
	if (id != PIPE_STREAM_SIDEBAND && id >= w->nr_streams)
		return pipe_err_set(err, -EINVAL,
				    "cannot write record of stream %u: the metadata has %u streams",
				    id, w->nr_streams);
	if (id != PIPE_STREAM_SIDEBAND && id >= w->nr_by_id) {
		struct cw_stream **v = realloc(w->by_id, (id + 1) * sizeof(*v));

		if (!v)
			return pipe_err_set(err, -ENOMEM,
					    "cannot add stream: %s",
					    strerror(ENOMEM));
		memset(v + w->nr_by_id, 0, (id + 1 - w->nr_by_id) * sizeof(*v));
		w->by_id = v;
		w->nr_by_id = id + 1;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return pipe_err_set(err, -ENOMEM, "cannot add stream: %s",
				    strerror(ENOMEM));
	s->id = id;
	if (id == PIPE_STREAM_SIDEBAND)
		w->side = s;
	else
		w->by_id[id] = s;
	*out = s;
	return 0;
}

/*
 * Cut a sample's user stack dump to what the kernel copied: the rest of
 * the `size` bytes it reserves is stale ring memory.  The record at rec
 * (a copy the writer owns) shrinks in place; returns its new size.
 */
static uint16_t cw_trim_stack(const struct cwriter *w,
			      const struct pipe_record *r, uint8_t *rec)
{
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct pipe_record copy = *r;
	struct decode_stack u;
	struct pipe_sample smp;
	uint64_t keep, tail_at, end;

	copy.hdr = h;
	if (decode_sample_stack(w->meta, &copy, &smp, &u) < 0 || !u.stack)
		return h->size;
	keep = (u.dyn_size + 7) & ~UINT64_C(7);
	if (keep >= u.size)
		return h->size;
	/* size, dump, dyn_size, then the fields after the stack */
	tail_at = u.size_at + 8 + u.size + 8;
	end = h->size;
	memcpy(rec + u.size_at, &keep, 8);
	if (keep) {
		memmove(rec + u.size_at + 8 + keep, rec + u.size_at + 8 + u.size,
			end - (u.size_at + 8 + u.size));
	} else {
		/* an empty dump has no dyn_size */
		memmove(rec + u.size_at + 8, rec + tail_at, end - tail_at);
	}
	h->size = (uint16_t)(end - (u.size - keep) - (keep ? 0 : 8));
	return h->size;
}

/* Append one checked record to its stream's block, cutting it first
 * when the record would not fit. */
static int cw_append(struct cwriter *w, const struct pipe_record *r,
		     struct pipe_err *err)
{
	const struct perf_event_header *h = r->hdr;
	uint64_t time = r->time;
	struct cw_stream *s = NULL;
	uint16_t size;
	int ret;

	ret = cw_stream_of(w, r->stream, &s, err);
	if (ret < 0)
		return ret;
	if (s->len && s->len + h->size > w->opts.block_size) {
		ret = cw_flush_stream(w, s, err);
		if (ret < 0)
			return ret;
	}
	/* a whole block at once: no regrowing while it fills */
	if (fmt_grow((void **)&s->buf, &s->cap, s->len + h->size,
		     w->opts.block_size))
		return pipe_err_set(err, -ENOMEM, "cannot buffer records: %s",
				    strerror(ENOMEM));
	memcpy(s->buf + s->len, h, h->size);
	size = h->size;
	if (w->stacks && h->type == PERF_RECORD_SAMPLE)
		size = cw_trim_stack(w, r, s->buf + s->len);
	if (!s->len) {
		s->t_min = time;
		s->t_max = time;
		s->pending_since = w->arrival_ns;
	}
	if (time < s->t_min)
		s->t_min = time;
	if (time > s->t_max)
		s->t_max = time;
	s->len += size;
	s->records++;
	if (h->type == PERF_RECORD_SAMPLE) {
		s->samples++;
		w->st.samples++;
	}
	if (h->type == PERF_RECORD_LOST && h->size >= 24) {
		uint64_t n;

		memcpy(&n, (const uint8_t *)h + 16, 8);
		w->lost += n;
	}
	if (h->type == PERF_RECORD_THROTTLE)
		w->throttles++;
	if (time > w->last_time)
		w->last_time = time;
	/* records without a time (0) do not move the file's time range */
	if (time && (!w->have_time || time < w->t_first))
		w->t_first = time;
	if (time > w->t_last)
		w->t_last = time;
	if (time)
		w->have_time = true;
	w->st.records++;
	w->st.raw_bytes += size;
	return 0;
}

/* Move held records older than `before` (all: UINT64_MAX) to the
 * sideband's block, oldest first. */
static int cw_release_held(struct cwriter *w, uint64_t before,
			   struct pipe_err *err)
{
	uint32_t n = 0, i;
	size_t off = 0, tmp_cap;
	uint8_t *tmp;
	int ret = 0;

	while (n < w->nr_held && (w->held[n].time < before ||
				  before == UINT64_MAX)) {
		const struct cw_held *e = &w->held[n];
		struct pipe_record r = {
			.hdr = (const void *)(w->hold + e->off),
			.time = e->time,
			.stream = PIPE_STREAM_SIDEBAND,
			.event = PIPE_EVENT_NONE,
		};

		ret = cw_append(w, &r, err);
		if (ret < 0)
			return ret;
		n++;
	}
	if (!n)
		return 0;
	/* the rest, compacted into the other buffer, which becomes hold */
	if (fmt_grow((void **)&w->hold2, &w->hold2_cap, w->hold_len, 4096))
		return pipe_err_set(err, -ENOMEM, "cannot buffer records: %s",
				    strerror(ENOMEM));
	for (i = n; i < w->nr_held; i++) {
		struct cw_held *e = &w->held[i];

		memcpy(w->hold2 + off, w->hold + e->off, e->size);
		e->off = off;
		off += e->size;
		w->held[i - n] = *e;
	}
	tmp = w->hold;
	w->hold = w->hold2;
	w->hold2 = tmp;
	tmp_cap = w->hold_cap;
	w->hold_cap = w->hold2_cap;
	w->hold2_cap = tmp_cap;
	w->nr_held -= n;
	w->hold_len = off;
	return 0;
}

/*
 * The sideband gathers records from every CPU, so when records come per
 * stream its records come out of order: hold them, sorted by time, until
 * the caller's horizon passes them.
 */
static int cw_hold(struct cwriter *w, const struct pipe_record *r,
		   struct pipe_err *err)
{
	uint32_t size = r->hdr->size, i;

	if (fmt_grow((void **)&w->hold, &w->hold_cap, w->hold_len + size,
		     4096) ||
	    fmt_grow((void **)&w->held, &w->held_cap,
		     (w->nr_held + 1) * sizeof(*w->held), 1024))
		return pipe_err_set(err, -ENOMEM, "cannot buffer records: %s",
				    strerror(ENOMEM));
	memcpy(w->hold + w->hold_len, r->hdr, size);
	/* mostly in order already: insert from the end, after equal times */
	for (i = w->nr_held; i > 0 && w->held[i - 1].time > r->time; i--)
		w->held[i] = w->held[i - 1];
	w->held[i].time = r->time;
	w->held[i].off = w->hold_len;
	w->held[i].size = size;
	w->nr_held++;
	w->hold_len += size;
	if (w->hold_len > CW_HOLD_MAX) /* a caller that never raises the cap */
		return cw_release_held(w, UINT64_MAX, err);
	return 0;
}

static int cw_add_one(struct cwriter *w, const struct pipe_record *r,
		      struct pipe_err *err)
{
	const struct perf_event_header *h = r->hdr;

	if (h->size < sizeof(*h) || h->size % 8)
		return pipe_err_set(err, -EINVAL,
				    "cannot write record of type %u: size %u is not a multiple of 8",
				    h->type, h->size);
	if (r->stream == PIPE_STREAM_SIDEBAND &&
	    w->horizon_cap != UINT64_MAX)
		return cw_hold(w, r, err);
	return cw_append(w, r, err);
}

/*
 * A stream whose oldest pending record lags the newest record by more than
 * the flush interval (in record time) is written out: the horizon, and so
 * a reader's memory, never lags more than that behind.
 */
static int cw_flush_lagging(struct cwriter *w, struct pipe_err *err)
{
	uint64_t lag = w->opts.flush_ns ? w->opts.flush_ns : CW_LAG_DEFAULT;
	uint32_t i;
	int ret;

	if (w->last_time < lag)
		return 0;
	for (i = 0; i <= w->nr_by_id; i++) {
		struct cw_stream *s = i < w->nr_by_id ? w->by_id[i] : w->side;

		if (!s || !s->len || s->t_min >= w->last_time - lag)
			continue;
		ret = cw_flush_stream(w, s, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int cwriter_add(struct cwriter *w, const struct pipe_batch *b,
		struct pipe_err *err)
{
	size_t i;
	int ret;

	if (w->finished)
		return pipe_err_set(err, -EINVAL,
				    "cannot add records: the file is finished");
	for (i = 0; i < b->nr; i++) {
		ret = cw_add_one(w, &b->recs[i], err);
		if (ret < 0)
			return ret;
	}
	return cw_flush_lagging(w, err);
}

int cwriter_cap_horizon(struct cwriter *w, uint64_t cap,
			struct pipe_err *err)
{
	w->horizon_cap = cap;
	return cw_release_held(w, cap, err);
}

void cwriter_set_arrival(struct cwriter *w, uint64_t mono_ns)
{
	w->arrival_ns = mono_ns;
}

uint64_t cwriter_next_tick(struct cwriter *w)
{
	uint64_t next = UINT64_MAX;
	uint32_t i;

	if (w->thread_on) {
		pthread_mutex_lock(&w->mu);
		next = cw_kick_due_locked(w);
		pthread_mutex_unlock(&w->mu);
	}
	for (i = 0; i <= w->nr_by_id; i++) {
		const struct cw_stream *s = i < w->nr_by_id ? w->by_id[i]
							    : w->side;

		if (!s || !s->len)
			continue;
		if (!s->pending_since)
			return 0; /* not seen by a tick yet */
		if (s->pending_since + w->opts.flush_ns < next)
			next = s->pending_since + w->opts.flush_ns;
	}
	return next;
}

int cwriter_tick(struct cwriter *w, uint64_t now_ns, uint64_t early_ns,
		 struct pipe_err *err)
{
	uint32_t i;
	int ret;

	if (w->finished)
		return 0;
	for (i = 0; i <= w->nr_by_id; i++) {
		struct cw_stream *s = i < w->nr_by_id ? w->by_id[i] : w->side;

		if (!s || !s->len)
			continue;
		if (!s->pending_since)
			s->pending_since = now_ns ? now_ns : 1;
		if (now_ns + early_ns - s->pending_since < w->opts.flush_ns &&
		    now_ns >= s->pending_since)
			continue;
		ret = cw_flush_stream(w, s, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The END job: its payload but for what the encoder knows. */
static int cw_queue_end(struct cwriter *w, struct pipe_err *err)
{
	struct cw_job *j = cw_job_get(w);
	uint8_t *p;

	if (!j || fmt_grow((void **)&j->buf, &j->cap, FMT_END_SIZE_NOW, 4096)) {
		free(j);
		return pipe_err_set(err, -ENOMEM, "cannot end the file: %s",
				    strerror(ENOMEM));
	}
	p = j->buf;
	memset(p, 0, FMT_END_SIZE_NOW);
	fmt_put64(p + 8, w->st.records);
	fmt_put64(p + 16, w->st.samples);
	fmt_put64(p + 24, w->lost);
	fmt_put64(p + 40, w->t_first);
	fmt_put64(p + 48, w->t_last);
	fmt_put64(p + 56, w->st.raw_bytes);
	fmt_put64(p + FMT_END_THROTTLES, w->throttles);
	j->kind = CW_JOB_END;
	j->len = FMT_END_SIZE_NOW;
	j->b.type = FMT_END;
	j->b.stream = PIPE_STREAM_SIDEBAND;
	j->b.t_min = w->t_first;
	j->b.t_max = w->t_last;
	j->b.horizon = UINT64_MAX;
	j->b.stored = FMT_END_SIZE_NOW;
	j->b.raw = FMT_END_SIZE_NOW;
	j->b.coded = FMT_END_SIZE_NOW;
	return cw_queue(w, j, err);
}

/* Let the worker finish the queue and end; its failure, if any. */
static int cw_stop_worker(struct cwriter *w, struct pipe_err *err)
{
	int ret;

	if (!w->thread_on)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->thread_on = false;
	ret = w->enc_ret;
	if (ret < 0)
		*err = w->enc_err;
	return ret;
}

/* Write every pending block, oldest first (keeps the horizons
 * meaningful). */
static int cw_flush_all(struct cwriter *w, struct pipe_err *err)
{
	uint32_t i;
	int ret;

	ret = cw_release_held(w, UINT64_MAX, err);
	if (ret < 0)
		return ret;
	w->horizon_cap = UINT64_MAX;
	for (;;) {
		struct cw_stream *best = NULL;

		for (i = 0; i <= w->nr_by_id; i++) {
			struct cw_stream *s = i < w->nr_by_id ? w->by_id[i]
							      : w->side;

			if (s && s->len && (!best || s->t_min < best->t_min))
				best = s;
		}
		if (!best)
			break;
		ret = cw_flush_stream(w, best, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int cwriter_finish(struct cwriter *w, struct pipe_err *err)
{
	int ret;

	if (w->finished)
		return 0;
	ret = cw_flush_all(w, err);
	if (ret == 0)
		ret = cw_queue_end(w, err);
	if (ret == 0)
		ret = cw_stop_worker(w, err);
	if (ret < 0)
		return ret;
	w->finished = true;
	return 0;
}

int cwriter_cut(struct cwriter *w, struct pipe_err *err)
{
	struct pipe_err e2;
	int ret, ret2;

	if (w->finished)
		return 0;
	ret = cw_flush_all(w, err);
	ret2 = cw_stop_worker(w, ret < 0 ? &e2 : err);
	w->finished = true;
	return ret < 0 ? ret : ret2;
}

int cwriter_flush_output(struct cwriter *w, struct pipe_err *err)
{
	if (!w->opts.flush)
		return 0;
	if (!w->thread_on)
		return w->opts.flush(w->opts.opaque, err);
	pthread_mutex_lock(&w->mu);
	w->flush_req = true;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

void cwriter_idle(struct cwriter *w, uint64_t now_ns)
{
	uint64_t t0;

	if (!w->thread_on)
		return;
	t0 = cw_clock(CLOCK_MONOTONIC);
	pthread_mutex_lock(&w->mu);
	/* a training takes seconds: it stays on the worker */
	while (w->head && !w->running && !w->enc_ret &&
	       w->opts.dict_mode == CW_DICT_OFF &&
	       w->job_ns < w->opts.inline_ns &&
	       cw_clock(CLOCK_MONOTONIC) - t0 < w->opts.inline_ns) {
		struct cw_job *j = w->head;

		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		w->st.inline_blocks += j->kind == CW_JOB_DATA;
		cw_run_locked(w, j);
	}
	if (!w->head)
		w->asleep_ok = false;
	if ((w->head && !w->running &&
	     (w->queued >= CW_KICK_BYTES || cw_kick_due_locked(w) <= now_ns)) ||
	    w->flush_req) {
		pthread_cond_signal(&w->work);
		w->asleep_ok = false;
	}
	pthread_mutex_unlock(&w->mu);
}

int cwriter_lost(struct cwriter *w, uint32_t stream, uint64_t count,
		 struct pipe_err *err)
{
	struct cw_job *j;
	uint8_t *p;

	if (w->finished)
		return pipe_err_set(err, -EINVAL,
				    "cannot add lost counts: the file is finished");
	j = cw_job_get(w);
	if (!j || fmt_grow((void **)&j->buf, &j->cap, 16, 4096)) {
		free(j);
		return pipe_err_set(err, -ENOMEM, "cannot add lost counts: %s",
				    strerror(ENOMEM));
	}
	p = j->buf;
	fmt_put32(p, stream);
	fmt_put32(p + 4, 0);
	fmt_put64(p + 8, count);
	j->kind = CW_JOB_LOST;
	j->len = 16;
	j->b.type = FMT_LOST;
	j->b.stream = PIPE_STREAM_SIDEBAND;
	j->b.horizon = cw_horizon(w);
	j->b.stored = 16;
	j->b.raw = 16;
	j->b.coded = 16;
	w->lost += count;
	return cw_queue(w, j, err);
}

void cwriter_stats(const struct cwriter *w, struct cw_stats *st)
{
	*st = w->st;
	st->lost = w->lost;
	st->stored_bytes = __atomic_load_n(&w->pub_stored, __ATOMIC_RELAXED);
	st->blocks = __atomic_load_n(&w->pub_blocks, __ATOMIC_RELAXED);
}

void cwriter_free(struct cwriter *w)
{
	uint32_t i;

	if (!w)
		return;
	if (w->thread_on) {
		struct pipe_err ignored;

		cw_stop_worker(w, &ignored);
	}
	while (w->head) {
		struct cw_job *j = w->head;

		w->head = j->next;
		free(j->buf);
		free(j);
	}
	while (w->spare) {
		struct cw_job *j = w->spare;

		w->spare = j->next;
		free(j->buf);
		free(j);
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->room);
	for (i = 0; i < w->nr_by_id; i++) {
		if (w->by_id[i])
			free(w->by_id[i]->buf);
		free(w->by_id[i]);
	}
	if (w->side)
		free(w->side->buf);
	free(w->side);
	free(w->by_id);
	free(w->out);
	free(w->zbuf);
	free(w->zbuf2);
	free(w->samples);
	free(w->sizes);
	free(w->idx);
	free(w->held);
	free(w->hold);
	free(w->hold2);
	transform_free(w->tf);
	free(w);
}

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

	w->pays_pct = UINT32_MAX;
	if (!c || c->codec_id == FMT_CODEC_NONE || !c->add_dict)
		return 0;
	if (w->opts.dict_data) {
		w->dict_on = true;
		return cw_dict_write(w, 1, w->opts.dict_data, w->opts.dict_len,
				     err);
	}
	if (w->opts.dict_mode == CW_DICT_OFF || !c->train)
		return 0;
	w->dict_on = true;
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
