/*
 * test_transform.c - the column transform: byte-exact round trips of
 * generated blocks (with and without callchains and IDENTIFIER, several
 * events, other records), refusal of blocks it cannot split, and random
 * damage of encoded blocks; blocks encoded record by record (tenc) from
 * memory reused at once, as a ring's is.  Prints transform+zstd against zstd alone.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fakehost.h"
#include "harness.h"
#include "meta.h"
#include "pipe_plugin.h"
#include "rnd.h"
#include "transform.h"

#define ST_BASE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static uint64_t rnd_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	return rnd_xorshift(&rnd_state);
}

/* A growable record buffer for generated blocks. */
struct gen {
	uint8_t *p;
	size_t len;
	size_t cap;
	uint64_t time;
	uint64_t nr_samples;
};

static void gen_put(struct gen *g, const void *src, size_t n)
{
	if (g->len + n > g->cap) {
		g->cap = (g->len + n) * 2;
		g->p = realloc(g->p, g->cap);
	}
	memcpy(g->p + g->len, src, n);
	g->len += n;
}

static void gen_record(struct gen *g, uint32_t type, uint16_t misc,
		       const uint64_t *w, size_t nw)
{
	struct perf_event_header h = { type, misc, (uint16_t)(8 + 8 * nw) };

	gen_put(g, &h, sizeof(h));
	gen_put(g, w, 8 * nw);
}

/* One sample with event `ev`'s fields, as the kernel lays them out. */
static void gen_sample(struct gen *g, uint64_t st, uint64_t id, int chain)
{
	static const uint64_t user[6] = {
		0x5600aa001000, 0x5600aa001230, 0x5600aa004400,
		0x7fee11220010, 0x7fee11229990, 0x5600aa007770,
	};
	uint64_t w[80], ip;
	size_t n = 0, i, depth;
	bool kernel = rnd() % 4 == 0;

	ip = kernel ? 0xffffffff81000000ull + rnd() % 4096 :
		      user[rnd() % 6] + rnd() % 32;
	g->time += 100000 + rnd() % 5000;
	if (st & PERF_SAMPLE_IDENTIFIER)
		w[n++] = id;
	if (st & PERF_SAMPLE_IP)
		w[n++] = ip;
	if (st & PERF_SAMPLE_TID)
		w[n++] = 4000 + rnd() % 3 + ((4000 + rnd() % 5) << 32);
	if (st & PERF_SAMPLE_TIME)
		w[n++] = g->time;
	if (st & PERF_SAMPLE_ADDR)
		w[n++] = rnd();
	if (st & PERF_SAMPLE_ID)
		w[n++] = id;
	if (st & PERF_SAMPLE_STREAM_ID)
		w[n++] = id + 1;
	if (st & PERF_SAMPLE_CPU)
		w[n++] = rnd() % 2;
	if (st & PERF_SAMPLE_PERIOD)
		w[n++] = 100000 + rnd() % 10;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		depth = chain ? 2 + rnd() % 30 : 0;
		w[n++] = depth + (depth ? 1 + kernel : 0);
		if (depth && kernel) {
			w[n++] = PERF_CONTEXT_KERNEL;
			w[n++] = ip;
			w[n++] = PERF_CONTEXT_USER;
		} else if (depth) {
			w[n++] = PERF_CONTEXT_USER;
			/* sometimes the ip is not the first entry */
			w[n++] = rnd() % 8 ? ip : ip + 1;
		}
		for (i = 1; i < depth; i++)
			w[n++] = user[(i + rnd() % 2) % 6] + 8 * i;
	}
	gen_record(g, PERF_RECORD_SAMPLE,
		   kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
		   w, n);
	g->nr_samples++;
}

/* Non-sample records with sample_id_all trailers and odd sizes. */
static void gen_other(struct gen *g)
{
	uint64_t w[16];
	size_t i, n = 1 + rnd() % 12;

	for (i = 0; i < n; i++)
		w[i] = rnd();
	switch (rnd() % 4) {
	case 0:
		gen_record(g, PERF_RECORD_MMAP2, 2, w, n);
		break;
	case 1:
		gen_record(g, PERF_RECORD_COMM, 0x2000, w, n);
		break;
	case 2:
		gen_record(g, PERF_RECORD_LOST, 0, w, 2);
		break;
	default:
		gen_record(g, PERF_RECORD_THROTTLE, 0, w, 3);
		break;
	}
}

static struct meta *make_meta(const uint64_t *sts, uint32_t nr)
{
	struct meta *m = meta_new();
	struct perf_event_attr a;
	struct pipe_err err;
	uint64_t ids[2];
	uint32_t i;

	for (i = 0; m && i < nr; i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.sample_type = sts[i];
		a.sample_id_all = 1;
		ids[0] = 100 + 10 * i;
		ids[1] = 101 + 10 * i;
		CHECK(meta_add_event(m, &a, "ev", ids, 2, &err) == (int)i);
	}
	return m;
}

/* Encode, decode, compare; returns the encoded length (0 on refusal). */
static size_t round_trip(struct transform *t, const struct gen *g)
{
	const void *enc;
	size_t enc_len = 0;
	struct pipe_err err;
	uint8_t *back;
	int ret;

	ret = transform_encode(t, g->p, g->len, &enc, &enc_len);
	CHECK(ret == 0);
	if (ret < 0)
		return 0;
	back = malloc(g->len + 1);
	ret = transform_decode(t, enc, enc_len, back, g->len, &err);
	CHECK(ret == 0);
	if (ret < 0)
		printf("  decode: %s\n", err.msg);
	CHECK(memcmp(back, g->p, g->len) == 0);
	free(back);
	return enc_len;
}

static void test_layouts(void)
{
	static const uint64_t layouts[] = {
		ST_BASE | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CALLCHAIN,
		ST_BASE | PERF_SAMPLE_IDENTIFIER,
		ST_BASE | PERF_SAMPLE_CALLCHAIN,
		ST_BASE,
		PERF_SAMPLE_IP | PERF_SAMPLE_TID,
		PERF_SAMPLE_CALLCHAIN,
		ST_BASE | PERF_SAMPLE_ID | PERF_SAMPLE_ADDR |
			PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CALLCHAIN,
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME,
	};
	size_t i, k;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		struct meta *m = make_meta(&layouts[i], 1);
		struct transform *t;
		struct gen g = { 0 };

		CHECK(transform_new(&t, m, NULL) == 0);
		/* a block starting with other records, mixed, empty chains */
		for (k = 0; k < 3; k++)
			gen_other(&g);
		for (k = 0; k < 2000; k++) {
			if (rnd() % 10 == 0)
				gen_other(&g);
			gen_sample(&g, layouts[i], 100, rnd() % 20 != 0);
		}
		round_trip(t, &g);
		/* the same transform again: no state leaks across blocks */
		round_trip(t, &g);
		transform_free(t);
		meta_free(m);
		free(g.p);
	}
}

/* Two events sharing a ring through IDENTIFIER, one it cannot split. */
static void test_events(void)
{
	const uint64_t sts[3] = {
		ST_BASE | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CALLCHAIN,
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD,
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW,
	};
	struct meta *m = make_meta(sts, 3);
	struct transform *t;
	struct gen g = { 0 }, only = { 0 };
	const void *enc;
	size_t k, len;
	uint64_t w[4] = { 121, 5, 8, 0xabcdef };

	CHECK(transform_new(&t, m, NULL) == 0);
	for (k = 0; k < 3000; k++) {
		switch (rnd() % 5) {
		case 0:
			gen_sample(&g, sts[1], 110 + rnd() % 2, 1);
			break;
		case 1:
			/* RAW: copied whole */
			gen_record(&g, PERF_RECORD_SAMPLE, 2, w, 4);
			break;
		case 2:
			/* unknown id: copied whole */
			gen_sample(&g, sts[0], 999, 1);
			break;
		default:
			gen_sample(&g, sts[0], 100 + rnd() % 2, 1);
			break;
		}
	}
	/* a sample longer than its layout (padding): copied whole */
	w[0] = 100;
	gen_record(&g, PERF_RECORD_SAMPLE, 2, w, 4);
	round_trip(t, &g);

	/* nothing it can split: the writer stores the block as it is */
	w[0] = 121;
	for (k = 0; k < 10; k++) {
		gen_record(&only, PERF_RECORD_SAMPLE, 2, w, 4);
		gen_other(&only);
	}
	CHECK(transform_encode(t, only.p, only.len, &enc, &len) == -EINVAL);
	CHECK(transform_encode(t, only.p, 0, &enc, &len) == -EINVAL);
	transform_free(t);
	meta_free(m);
	free(g.p);
	free(only.p);
}

/* Malformed raw blocks are refused, not split. */
static void test_malformed(void)
{
	const uint64_t st = ST_BASE | PERF_SAMPLE_CALLCHAIN;
	struct meta *m = make_meta(&st, 1);
	struct transform *t;
	struct gen g = { 0 };
	const void *enc;
	size_t len, k;
	struct perf_event_header *h;

	CHECK(transform_new(&t, m, NULL) == 0);
	for (k = 0; k < 10; k++)
		gen_sample(&g, st, 0, 1);
	/* a torn last record */
	CHECK(transform_encode(t, g.p, g.len - 8, &enc, &len) == -EINVAL);
	CHECK(transform_encode(t, g.p, g.len - 3, &enc, &len) == -EINVAL);
	/* a record of size 0 would loop forever */
	h = (struct perf_event_header *)g.p;
	h->size = 0;
	CHECK(transform_encode(t, g.p, g.len, &enc, &len) == -EINVAL);
	h->size = 4;
	CHECK(transform_encode(t, g.p, g.len, &enc, &len) == -EINVAL);
	/* callchain nr that disagrees with the size: copied whole */
	h->size = 8 + 8 * 6 + 8 * 3;
	memset(g.p + 8, 0, 8 * 9);
	((uint64_t *)g.p)[6] = 1000;
	g.len = h->size;
	CHECK(transform_encode(t, g.p, g.len, &enc, &len) == -EINVAL);
	gen_sample(&g, st, 0, 1);
	round_trip(t, &g);
	transform_free(t);
	meta_free(m);
	free(g.p);
}

/*
 * Random records: well framed, random contents (samples whose callchain nr
 * lies, ids of other events, odd misc).  Encoding either refuses or round
 * trips byte for byte.
 */
static void test_random_records(void)
{
	const uint64_t sts[2] = {
		ST_BASE | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CALLCHAIN,
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME,
	};
	struct meta *m = make_meta(sts, 2);
	struct transform *t;
	struct gen g = { 0 };
	uint64_t w[40];
	const void *enc;
	size_t len, k, r, n, done = 0;

	CHECK(transform_new(&t, m, NULL) == 0);
	for (k = 0; k < 500; k++) {
		g.len = 0;
		for (r = 1 + rnd() % 40; r > 0; r--) {
			n = rnd() % 40;
			for (size_t i = 0; i < n; i++)
				w[i] = rnd() % 3 ? rnd() % 64 : rnd();
			if (n)
				w[0] = rnd() % 2 ? 100 + rnd() % 2 :
						   110 + rnd() % 2;
			if (n > 7)
				w[7] = rnd() % 2 ? n - 8 : rnd() % 64;
			if (n > 8 && rnd() % 2)
				w[8] = PERF_CONTEXT_USER;
			gen_record(&g, rnd() % 3 ? PERF_RECORD_SAMPLE :
				   (uint32_t)(rnd() % 20),
				   (uint16_t)rnd(), w, n);
		}
		if (transform_encode(t, g.p, g.len, &enc, &len) == 0) {
			round_trip(t, &g);
			done++;
		}
	}
	printf("random records: %zu of 500 blocks split\n", done);
	CHECK(done > 0);
	transform_free(t);
	meta_free(m);
	free(g.p);
}

/* Without events nothing can be split. */
static void test_no_events(void)
{
	struct meta *m = make_meta(NULL, 0);
	struct transform *t;
	struct gen g = { 0 };
	const void *enc;
	size_t len, k;
	uint8_t back[64];
	struct pipe_err err;
	/* version 1, one record, KIND holds one byte: event 0 */
	static const uint8_t fake[] = { 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					0, 0, 1 };

	CHECK(transform_new(&t, m, NULL) == 0);
	for (k = 0; k < 10; k++)
		gen_sample(&g, ST_BASE, 0, 1);
	CHECK(transform_encode(t, g.p, g.len, &enc, &len) == -EINVAL);
	/* a block that claims a sample of event 0 */
	CHECK(transform_decode(t, fake, sizeof(fake), back, 48, &err) ==
	      -EINVAL);
	CHECK(strstr(err.msg, "unknown event") != NULL);
	transform_free(t);
	meta_free(m);
	free(g.p);
}

/* Damaged encodings: -EINVAL with a message, or a decode of exactly
 * raw_len bytes; never a crash (the ASan build runs this). */
static void test_damage(void)
{
	const uint64_t st = ST_BASE | PERF_SAMPLE_IDENTIFIER |
			    PERF_SAMPLE_CALLCHAIN;
	struct meta *m = make_meta(&st, 1);
	struct transform *t;
	struct gen g = { 0 };
	const void *enc;
	uint8_t *copy, *back;
	size_t len, k, n;
	struct pipe_err err;
	int ret, refused = 0;

	CHECK(transform_new(&t, m, NULL) == 0);
	for (k = 0; k < 300; k++) {
		if (rnd() % 8 == 0)
			gen_other(&g);
		gen_sample(&g, st, 100, 1);
	}
	CHECK(transform_encode(t, g.p, g.len, &enc, &len) == 0);
	copy = malloc(len + 64);
	back = malloc(g.len + 64);
	memcpy(copy, enc, len);

	/* wrong raw_len and truncation */
	CHECK(transform_decode(t, copy, len, back, g.len - 8, &err) ==
	      -EINVAL);
	CHECK(strstr(err.msg, "transformed block") != NULL);
	CHECK(transform_decode(t, copy, len, back, g.len + 8, &err) ==
	      -EINVAL);
	for (n = 0; n < len; n += 1 + len / 97)
		CHECK(transform_decode(t, copy, n, back, g.len, &err) ==
		      -EINVAL);
	CHECK(transform_decode(t, copy, len, back, 65u << 20, &err) ==
	      -EINVAL);

	for (k = 0; k < 20000; k++) {
		memcpy(copy, enc, len);
		for (n = 1 + rnd() % 4; n > 0; n--)
			copy[rnd() % len] ^= (uint8_t)(1 + rnd() % 255);
		if (k % 7 == 0)
			copy[rnd() % 24] = (uint8_t)rnd(); /* the header */
		ret = transform_decode(t, copy, len, back, g.len, &err);
		CHECK(ret == 0 || ret == -EINVAL);
		if (ret < 0) {
			refused++;
			CHECK(err.msg[0] != '\0');
		}
	}
	printf("damage: %d of 20000 damaged blocks refused\n", refused);
	/* random bytes as input */
	for (k = 0; k < 2000; k++) {
		n = rnd() % 256;
		for (size_t i = 0; i < n; i++)
			copy[i] = (uint8_t)rnd();
		copy[0] = 1;
		ret = transform_decode(t, copy, n, back, rnd() % 512, &err);
		CHECK(ret == 0 || ret == -EINVAL);
	}
	transform_free(t);
	meta_free(m);
	free(copy);
	free(back);
	free(g.p);
}

/* ---- transform + zstd against zstd alone (informational) ---------- */

static size_t zstd_size(const struct pipe_plugin *p, void *state,
			const void *src, size_t len)
{
	size_t cap = p->bound(state, len), out = 0;
	void *dst = malloc(cap);

	if (p->compress(state, 0, src, len, dst, cap, &out) < 0)
		out = 0;
	free(dst);
	return out;
}

static void measure(void)
{
	const uint64_t st = ST_BASE | PERF_SAMPLE_IDENTIFIER |
			    PERF_SAMPLE_CALLCHAIN;
	static const size_t blocks[] = { 8192, 65536, 262144 };
	const char *build = getenv("BUILD");
	const struct pipe_plugin *p;
	struct pipe_ctx ctx = { 0 };
	char path[4096];
	void *dl, *state;
	struct meta *m = make_meta(&st, 1);
	struct transform *t;
	size_t b, off, plain, split, nr, len;
	const void *enc;

	snprintf(path, sizeof(path), "%s/plugins/codec_zstd.so",
		 build && *build ? build : "build");
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	p = dl ? dlsym(dl, PIPE_PLUGIN_SYMBOL) : NULL;
	if (!p || fakehost_args(&ctx, p, "level=3") < 0 ||
	    p->open(&fakehost, &ctx, &state) < 0) {
		printf("measure: zstd plugin not available, skipped\n");
		goto out;
	}
	CHECK(transform_new(&t, m, NULL) == 0);
	for (b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
		struct gen g = { 0 };

		plain = split = nr = 0;
		for (off = 0; off < 16; off++) {
			g.len = 0;
			while (g.len < blocks[b])
				gen_sample(&g, st, 100, 1);
			nr += g.nr_samples;
			g.nr_samples = 0;
			plain += zstd_size(p, state, g.p, g.len);
			CHECK(transform_encode(t, g.p, g.len, &enc, &len) == 0);
			split += zstd_size(p, state, enc, len);
		}
		printf("measure: %zu KiB blocks: zstd %.1f B/sample, "
		       "transform+zstd %.1f B/sample (%+.0f%%)\n",
		       blocks[b] >> 10, (double)plain / nr,
		       (double)split / nr,
		       100.0 * ((double)split - plain) / plain);
		free(g.p);
	}
	transform_free(t);
	p->close(state);
out:
	fakehost_release(&ctx);
	meta_free(m);
	if (dl)
		dlclose(dl);
}

/*
 * Records added one by one from a buffer overwritten after each add (a
 * ring's memory, reused once read): each block decodes to its records.
 * The second block has far more bytes in the small columns than the
 * first (short chains, every field), so its CHAIN column must move to
 * make room before it; the third reuses what the second grew.
 */
static void test_tenc(void)
{
	static const uint64_t sts[] = {
		ST_BASE | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CALLCHAIN,
		ST_BASE | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID |
			PERF_SAMPLE_ADDR | PERF_SAMPLE_STREAM_ID |
			PERF_SAMPLE_CALLCHAIN,
	};
	struct meta *m = make_meta(sts, 2);
	struct tenc *e = NULL;
	struct pipe_err err;
	struct transform *t;
	uint8_t ring[2048];
	const void *enc;
	size_t len, off, size, k;
	int block;

	CHECK(transform_new(&t, m, NULL) == 0);
	CHECK(tenc_new(&e, m, 4096) == 0);
	for (block = 0; block < 3; block++) {
		struct gen g = { 0 };
		uint8_t *back;

		for (k = 0; k < (block ? 6000u : 300u); k++) {
			if (rnd() % 16 == 0)
				gen_other(&g);
			if (block)
				gen_sample(&g, sts[1], 110, rnd() % 2);
			else
				gen_sample(&g, sts[0], 100, 1);
		}
		tenc_reset(e);
		for (off = 0; off < g.len; off += size) {
			size = ((const struct perf_event_header *)
				(g.p + off))->size;
			memcpy(ring, g.p + off, size);
			CHECK(tenc_add(e, ring, size) == 0);
			memset(ring, 0xaa, size);
		}
		CHECK(tenc_raw_len(e) == g.len);
		CHECK(tenc_finish(e, &enc, &len) == 0);
		back = malloc(g.len);
		CHECK(transform_decode(t, enc, len, back, g.len, &err) == 0);
		CHECK(memcmp(back, g.p, g.len) == 0);
		free(back);
		free(g.p);
	}
	tenc_free(e);
	transform_free(t);
	meta_free(m);
}

/* A block with no sample to split: refused, and what tenc_other holds
 * is the block as it came. */
static void test_tenc_other(void)
{
	const uint64_t st = ST_BASE | PERF_SAMPLE_IDENTIFIER;
	struct meta *m = make_meta(&st, 1);
	struct tenc *e = NULL;
	struct gen g = { 0 };
	const void *enc, *other;
	size_t len, off, size;
	uint64_t n = 0;

	CHECK(tenc_new(&e, m, 4096) == 0);
	for (off = 0; off < 50; off++)
		gen_other(&g);
	for (off = 0; off < g.len; off += size, n++) {
		size = ((const struct perf_event_header *)(g.p + off))->size;
		CHECK(tenc_add(e, g.p + off, size) == 0);
	}
	CHECK(tenc_records(e) == n);
	CHECK(tenc_finish(e, &enc, &len) == -EINVAL);
	tenc_other(e, &other, &len);
	CHECK(len == g.len && memcmp(other, g.p, len) == 0);
	CHECK(tenc_add(e, g.p, 4) == -EINVAL);
	tenc_free(e);
	tenc_free(NULL);
	meta_free(m);
	free(g.p);
}

int main(void)
{
	test_tenc();
	test_tenc_other();
	test_layouts();
	test_events();
	test_malformed();
	test_random_records();
	test_no_events();
	test_damage();
	measure();
	return test_result();
}
