/*
 * test_codecs.c - round trips and damage for every codec plugin: loads
 * $BUILD/plugins/codec_*.so with the tests' fake host, skips codecs that
 * were not built (exit 77 when none was).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "fakehost.h"
#include "harness.h"
#include "pipe_plugin.h"
#include "rnd.h"

/*
 * The sanitizer builds instrument the plugins, not the libraries doing
 * the work: a codec whose library is slow (liblzma: seconds for 4 MiB)
 * gets its largest blocks and its every-level sweep on the normal build
 * only, where they cost half; its plugin code runs on every size below.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* One opened codec instance. */
struct inst {
	const struct pipe_plugin *p;
	void *state;
	struct pipe_ctx ctx;
};

/* Open codec p with the parameters `fmt` (printf-like, "" for the
 * defaults), as they would follow "NAME:" on the command line. */
static int inst_open(struct inst *in, const struct pipe_plugin *p,
		     const char *fmt, ...) PIPE_PRINTF(3, 4);

static int inst_open(struct inst *in, const struct pipe_plugin *p,
		     const char *fmt, ...)
{
	char text[128];
	va_list ap;
	int ret;

	memset(in, 0, sizeof(*in));
	in->p = p;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ret = fakehost_args(&in->ctx, p, text);
	if (ret == 0)
		ret = p->open(&fakehost, &in->ctx, &in->state);
	if (ret < 0)
		fakehost_release(&in->ctx);
	return ret;
}

static void inst_close(struct inst *in)
{
	in->p->close(in->state);
	in->state = NULL;
	fakehost_release(&in->ctx);
}

/* xorshift: reproducible test data */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return rnd_xorshift(&rnd_state);
}

static void fill_random(uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)rnd();
}

/* Synthetic PERF_RECORD_SAMPLE records (IDENTIFIER|IP|TID|TIME|CPU|PERIOD|
 * CALLCHAIN) filling len bytes; the tail is zero padding. */
static void fill_perf(uint8_t *buf, size_t len)
{
	static const uint64_t funcs[8] = {
		0x55d0c0de1000, 0x55d0c0de1234, 0x55d0c0de2040,
		0x7f12a0401100, 0x7f12a0402200, 0x7f12a0455abc,
		0x55d0c0de3300, 0x55d0c0de4444,
	};
	uint64_t t = 1000000000ull, w[64];
	size_t off = 0, n, i;

	memset(buf, 0, len);
	for (;;) {
		uint64_t depth = 3 + rnd() % 12;
		struct perf_event_header h;

		n = 0;
		w[n++] = 42;                          /* identifier */
		w[n++] = funcs[rnd() % 8] + rnd() % 64; /* ip */
		w[n++] = 1234ull | (1234ull + rnd() % 3) << 32; /* pid, tid */
		t += 250000 + rnd() % 1000;
		w[n++] = t;
		w[n++] = 1;                           /* cpu, res */
		w[n++] = 250000;                      /* period */
		w[n++] = depth + 1;
		w[n++] = PERF_CONTEXT_USER;
		w[n++] = w[1];
		for (i = 1; i < depth; i++)
			w[n++] = funcs[(i * 3 + rnd() % 2) % 8] + 16 * i;
		h.type = PERF_RECORD_SAMPLE;
		h.misc = PERF_RECORD_MISC_USER;
		h.size = (uint16_t)(sizeof(h) + n * 8);
		if (off + h.size > len)
			break;
		memcpy(buf + off, &h, sizeof(h));
		memcpy(buf + off + sizeof(h), w, n * 8);
		off += h.size;
	}
}

/* Compress then decompress; checks the bytes come back. */
static int round_trip(struct inst *in, uint32_t dict, const uint8_t *src,
		      size_t len, size_t *stored)
{
	size_t cap = in->p->bound(in->state, len), clen = 0;
	uint8_t *c = malloc(cap ? cap : 1);
	uint8_t *d = malloc(len ? len : 1);
	int ret;

	CHECK(cap >= len);
	ret = in->p->compress(in->state, dict, src, len, c, cap, &clen);
	CHECK(ret == 0);
	if (ret < 0) {
		printf("  %s: compress %zu: %s\n", in->p->name, len,
		       in->ctx.err);
		goto out;
	}
	CHECK(clen <= cap);
	ret = in->p->decompress(in->state, dict, c, clen, d, len);
	CHECK(ret == 0);
	if (ret < 0)
		printf("  %s: decompress %zu: %s\n", in->p->name, len,
		       in->ctx.err);
	CHECK(len == 0 || memcmp(src, d, len) == 0);
	if (stored)
		*stored = clen;
out:
	free(c);
	free(d);
	return ret;
}

/* Bad payloads and lengths must fail cleanly with a message. */
struct codec_case {
	const char *file;      /* basename under $BUILD/plugins */
	const char *name;
	uint32_t id;
	bool checks_payload;   /* garbage payloads are refused */
	bool detects_flips;    /* every payload change is caught */
	bool explains;         /* errors come with a host->error message */
	int levels[4];         /* level parameter values to try */
	int nr_levels;
	bool slow;             /* large blocks on the normal build only */
};

/* none stores bytes as they are, so only lengths can be wrong. */
static const struct codec_case cases[] = {
	{ "codec_none", "none", 0, false, false, true, { 0 }, 0, false },
	{ "codec_zlib", "zlib", 1, true, true, true, { 1, 6, 9 }, 3, false },
	{ "codec_lzma", "lzma", 2, true, false, true, { 0, 6, 9 }, 3, true },
	{ "codec_zstd", "zstd", 3, true, false, true, { -5, 1, 3, 19 }, 4,
	  false },
};

static void damage(struct inst *in, const uint8_t *src, size_t len,
		   const struct codec_case *cc)
{
	bool detects_flips = cc->detects_flips;
	size_t cap = in->p->bound(in->state, len), clen = 0, i;
	uint8_t *c = malloc(cap);
	uint8_t *bad = malloc(cap + 16);
	uint8_t *d = malloc(len + 16);
	int ret, caught = 0, tries = 0;

	ret = in->p->compress(in->state, 0, src, len, c, cap, &clen);
	CHECK(ret == 0);
	if (ret < 0)
		goto out;

	/* wrong raw_len, both ways */
	in->ctx.err[0] = '\0';
	CHECK(in->p->decompress(in->state, 0, c, clen, d, len - 1) == -EINVAL);
	CHECK(!cc->explains || in->ctx.err[0] != '\0');
	in->ctx.err[0] = '\0';
	CHECK(in->p->decompress(in->state, 0, c, clen, d, len + 1) == -EINVAL);
	CHECK(!cc->explains || in->ctx.err[0] != '\0');

	/* truncated */
	in->ctx.err[0] = '\0';
	CHECK(in->p->decompress(in->state, 0, c, clen - 1, d, len) < 0);
	CHECK(!cc->explains || in->ctx.err[0] != '\0');
	CHECK(in->p->decompress(in->state, 0, c, clen / 2, d, len) < 0);
	CHECK(in->p->decompress(in->state, 0, c, 0, d, len) < 0);

	/* trailing garbage */
	memcpy(bad, c, clen);
	memset(bad + clen, 0xa5, 16);
	CHECK(in->p->decompress(in->state, 0, bad, clen + 16, d, len) < 0);

	/* random byte damage: never a crash; detected where the format
	 * has a check */
	for (i = 0; i < 200; i++) {
		memcpy(bad, c, clen);
		bad[rnd() % clen] ^= (uint8_t)(1 + rnd() % 255);
		ret = in->p->decompress(in->state, 0, bad, clen, d, len);
		tries++;
		if (ret < 0) {
			caught++;
			CHECK(ret == -EINVAL);
		} else if (memcmp(d, src, len) != 0) {
			continue;
		} else {
			caught++; /* harmless flip, e.g. an unused bit */
		}
	}
	if (detects_flips)
		CHECK(caught == tries);
	printf("  %s: %d of %d damaged payloads refused or harmless\n",
	       in->p->name, caught, tries);

	/* garbage from the start */
	memset(bad, 0xff, clen);
	ret = in->p->decompress(in->state, 0, bad, clen, d, len);
	CHECK(!cc->checks_payload || ret < 0);

	/* destination too small for compress */
	fill_random(bad, 64);
	ret = in->p->compress(in->state, 0, src, len, bad, 4, &clen);
	CHECK(ret < 0);
	in->ctx.err[0] = '\0';
	/* the instance still works after all that */
	CHECK(round_trip(in, 0, src, len, NULL) == 0);
out:
	free(c);
	free(bad);
	free(d);
}

/* The level the l-th pass of test_sizes runs at (last: the default). */
static int level_of(const struct codec_case *cc, struct inst *in, int l)
{
	if (!cc->nr_levels)
		return 0;
	if (l < cc->nr_levels)
		return cc->levels[l];
	return (int)args_int(in->ctx.args, "level");
}

/*
 * small=: a block under 96 KiB takes that level, a larger one the level,
 * in any order on one instance (small, large, small again).
 */
static void test_zstd_small(const struct pipe_plugin *p, uint8_t *buf)
{
	static const size_t lens[] = { 32768, 262144, 32768 };
	size_t with[3], without[3], i;
	struct inst in;

	fill_perf(buf, 262144);
	CHECK(inst_open(&in, p, "level=1,small=19") == 0);
	for (i = 0; i < 3; i++)
		round_trip(&in, 0, buf, lens[i], &with[i]);
	inst_close(&in);
	CHECK(inst_open(&in, p, "level=1") == 0);
	for (i = 0; i < 3; i++)
		round_trip(&in, 0, buf, lens[i], &without[i]);
	inst_close(&in);
	CHECK(with[0] < without[0]);
	CHECK(with[1] == without[1]);
	CHECK(with[2] == with[0]);
}

/* Compress len bytes of src with libzstd itself at `level`, with the
 * tables hashLog and chainLog (0: the level's own), as the codec frames
 * a block: content size, no dictionary id.  The frame's length. */
static size_t zstd_ref(const uint8_t *src, size_t len, int level, int hlog,
		       int clog, uint8_t *dst, size_t cap)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t r;

	CHECK(c != NULL);
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(c, ZSTD_c_dictIDFlag, 0);
	ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, hlog);
	ZSTD_CCtx_setParameter(c, ZSTD_c_chainLog, clog);
	r = ZSTD_compress2(c, dst, cap, src, len);
	CHECK(!ZSTD_isError(r));
	ZSTD_freeCCtx(c);
	return r;
}

/*
 * The small level's blocks are zstd's at that level with the small
 * tables (hashLog 13, chainLog 12, or hashlog='s), the others zstd's at
 * the level with its own tables, on one instance in any order.
 */
static void test_zstd_small_tables(const struct pipe_plugin *p, uint8_t *buf)
{
	static const struct {
		const char *args;
		size_t len;
		int level, hlog, clog;
	} steps[] = {
		{ "level=1,small=3", 49152, 3, 13, 12 },
		{ "level=1,small=3", 262144, 1, 0, 0 },
		{ "level=1,small=3", 49152, 3, 13, 12 },
		{ "level=1,small=3,hashlog=14", 49152, 3, 14, 12 },
		{ "level=1,small=3,hashlog=14", 262144, 1, 14, 0 },
		/* a negative small level keeps its own tables */
		{ "level=1,small=-1", 49152, -1, 0, 0 },
	};
	size_t cap = ZSTD_compressBound(262144), got, want, i;
	uint8_t *a = malloc(cap), *b = malloc(cap);
	struct inst in = { 0 };
	const char *open_args = NULL;

	fill_perf(buf, 262144);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (!open_args || strcmp(open_args, steps[i].args)) {
			if (open_args)
				inst_close(&in);
			open_args = steps[i].args;
			CHECK(inst_open(&in, p, "%s", open_args) == 0);
		}
		CHECK(p->compress(in.state, 0, buf, steps[i].len, a, cap,
				  &got) == 0);
		want = zstd_ref(buf, steps[i].len, steps[i].level,
				steps[i].hlog, steps[i].clog, b, cap);
		CHECK(got == want && memcmp(a, b, got) == 0);
	}
	inst_close(&in);
	/* the small tables change the frame: the check above has teeth */
	got = zstd_ref(buf, 49152, 3, 13, 12, a, cap);
	want = zstd_ref(buf, 49152, 3, 0, 0, b, cap);
	CHECK(got != want || memcmp(a, b, got) != 0);
	free(a);
	free(b);
}

static void test_sizes(const struct codec_case *cc,
		       const struct pipe_plugin *p)
{
	static const size_t small[] = { 0, 1, 7, 4096, 65536 };
	size_t big = 4u << 20, stored, i, sizes[8] = { 0 };
	uint8_t *buf = malloc(big);
	struct inst in;
	int l;

	for (l = 0; l <= cc->nr_levels; l++) {
		bool dflt = l == cc->nr_levels;

		if (dflt)
			CHECK(inst_open(&in, p, "%s", "") == 0);
		else
			CHECK(inst_open(&in, p, "level=%d",
					cc->levels[l]) == 0);
		for (i = 0; i < sizeof(small) / sizeof(small[0]); i++) {
			fill_random(buf, small[i]);
			round_trip(&in, 0, buf, small[i], NULL);
			fill_perf(buf, small[i]);
			round_trip(&in, 0, buf, small[i], &stored);
			if (small[i] == 65536) {
				printf("  %s level %d: 64 KiB of samples"
				       " -> %zu bytes\n", cc->name,
				       level_of(cc, &in, l), stored);
				sizes[l] = stored;
			}
		}
		if (dflt && cc->slow && SANITIZED) {
			printf("  %s: 4 MiB blocks on the normal build\n",
			       cc->name);
		} else if (dflt) {
			fill_perf(buf, big);
			fill_random(buf + big / 2, big / 4);
			round_trip(&in, 0, buf, big, &stored);
			printf("  %s: 4 MiB mixed -> %zu bytes\n", cc->name,
			       stored);
			fill_random(buf, big);
			round_trip(&in, 0, buf, big, NULL);
		}
		inst_close(&in);
	}
	/* the level parameter is read: the fastest level is the largest */
	if (cc->nr_levels)
		CHECK(sizes[0] > sizes[cc->nr_levels - 1]);
	if (strcmp(cc->name, "lzma") == 0) {
		CHECK(inst_open(&in, p, "level=9,extreme=on") == 0);
		fill_perf(buf, 65536);
		round_trip(&in, 0, buf, 65536, NULL);
		inst_close(&in);
	}
	if (strcmp(cc->name, "zstd") == 0) {
		/* raw literals and a small hash table: larger, still exact */
		CHECK(inst_open(&in, p, "literals=raw,hashlog=14") == 0);
		fill_perf(buf, 65536);
		round_trip(&in, 0, buf, 65536, &stored);
		CHECK(stored > sizes[cc->nr_levels]);
		fill_random(buf, 65536);
		round_trip(&in, 0, buf, 65536, NULL);
		inst_close(&in);
		/* below zstd's smallest table: refused with a message */
		CHECK(inst_open(&in, p, "hashlog=3") < 0);
		CHECK(strstr(in.ctx.err, "zstd") != NULL);
		test_zstd_small(p, buf);
		test_zstd_small_tables(p, buf);
	}
	free(buf);
}

/*
 * Every level the plugin's table allows: empty, one byte, random, 64 KiB
 * and 256 KiB of samples round-trip (test_sizes does 4 MiB at the
 * default and a few levels).
 */
static void test_every_level(const struct codec_case *cc,
			     const struct pipe_plugin *p)
{
	static const size_t lens[] = { 0, 1, 4096, 65536, 256u << 10 };
	const struct pipe_param *lp = NULL, *t;
	uint8_t *buf = malloc(256u << 10);
	struct inst in;
	int64_t level;
	int n = 0;
	size_t i;

	for (t = p->params; t && t->name; t++)
		if (strcmp(t->name, "level") == 0)
			lp = t;
	if (!lp || (cc->slow && SANITIZED)) {
		if (lp)
			printf("  %s: every level on the normal build\n",
			       p->name);
		free(buf);
		return;
	}
	for (level = lp->min; level <= lp->max; level++) {
		if (inst_open(&in, p, "level=%lld", (long long)level) < 0) {
			printf("FAILED %s level %lld does not open\n", p->name,
			       (long long)level);
			test_failures++;
			continue;
		}
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			if (i == 2)
				fill_random(buf, lens[i]);
			else
				fill_perf(buf, lens[i]);
			CHECK(round_trip(&in, 0, buf, lens[i], NULL) == 0);
		}
		inst_close(&in);
		n++;
	}
	printf("  %s: %d levels (%lld..%lld) round-trip\n", p->name, n,
	       (long long)lp->min, (long long)lp->max);
	CHECK(n == lp->max - lp->min + 1);
	free(buf);
}

static void test_damage(const struct codec_case *cc,
			const struct pipe_plugin *p)
{
	size_t len = 65536;
	uint8_t *buf = malloc(len);
	struct inst in;

	CHECK(inst_open(&in, p, "%s", "") == 0);
	fill_perf(buf, len);
	damage(&in, buf, len, cc);
	fill_random(buf, len);
	damage(&in, buf, len, cc);
	if (cc->id == 1 || cc->id == 2) {
		/* no dictionaries: a dict id is an error, not ignored */
		size_t cap = p->bound(in.state, len), clen;
		uint8_t *c = malloc(cap);

		in.ctx.err[0] = '\0';
		CHECK(p->compress(in.state, 5, buf, len, c, cap, &clen) < 0);
		CHECK(strstr(in.ctx.err, "5") != NULL);
		CHECK(p->decompress(in.state, 5, c, cap, buf, len) < 0);
		free(c);
	}
	inst_close(&in);
	free(buf);
}

/*
 * A zstd frame written by another tool may carry a dictionary id: insert
 * one into frame c (which has none) and check the plugin honours it.  The
 * frame header is magic, descriptor, [window byte], [dict id], [size].
 */
static void frame_dict_ids(const struct pipe_plugin *p, struct inst *in,
			   const uint8_t *c, size_t clen, const uint8_t *block,
			   size_t len, const uint8_t *dict)
{
	uint8_t *f = malloc(clen + 4), *d = malloc(len);
	size_t at = 5 + ((c[4] & 0x20) ? 0 : 1);
	uint32_t zid = (uint32_t)dict[4] | (uint32_t)dict[5] << 8 |
		       (uint32_t)dict[6] << 16 | (uint32_t)dict[7] << 24;
	uint32_t id;
	int k;

	CHECK(zid != 0);
	for (k = 0; k < 2; k++) {
		id = k ? zid + 1 : zid;
		memcpy(f, c, at);
		f[4] |= 3; /* four-byte dictionary id */
		f[at] = (uint8_t)id;
		f[at + 1] = (uint8_t)(id >> 8);
		f[at + 2] = (uint8_t)(id >> 16);
		f[at + 3] = (uint8_t)(id >> 24);
		memcpy(f + at + 4, c + at, clen - at);
		in->ctx.err[0] = '\0';
		if (!k) {
			/* the dictionary's own id matches: decodes */
			CHECK(p->decompress(in->state, 1, f, clen + 4, d,
					    len) == 0);
			CHECK(memcmp(d, block, len) == 0);
			/* without a block dictionary: refused */
			CHECK(p->decompress(in->state, 0, f, clen + 4, d,
					    len) == -EINVAL);
		} else {
			CHECK(p->decompress(in->state, 1, f, clen + 4, d,
					    len) == -EINVAL);
		}
		if (k)
			printf("  zstd: %s\n", in->ctx.err);
		CHECK(k == 0 || strstr(in->ctx.err, "dictionary") != NULL);
	}
	free(f);
	free(d);
}

/* zstd: trained dictionary, ids, and their errors. */
static void test_zstd_dict(const struct pipe_plugin *p)
{
	enum { NR = 400, SAMPLE = 2048, BLOCK = 4096 };
	uint8_t *samples = malloc(NR * SAMPLE), *dict = malloc(32768);
	uint8_t *block = malloc(BLOCK), *c, *d = malloc(BLOCK);
	size_t sizes[NR], dict_len = 0, plain = 0, with = 0, cap, clen, i;
	struct inst in;
	int ret;

	for (i = 0; i < NR; i++) {
		fill_perf(samples + i * SAMPLE, SAMPLE);
		sizes[i] = SAMPLE;
	}
	CHECK(inst_open(&in, p, "level=3") == 0);
	ret = p->train(in.state, samples, sizes, NR, dict, 32768, &dict_len);
	CHECK(ret == 0);
	if (ret < 0) {
		printf("  train: %s\n", in.ctx.err);
		goto out;
	}
	CHECK(dict_len > 0 && dict_len <= 32768);
	CHECK(p->add_dict(in.state, 1, dict, dict_len) == 0);

	fill_perf(block, BLOCK);
	round_trip(&in, 0, block, BLOCK, &plain);
	round_trip(&in, 1, block, BLOCK, &with);
	printf("  zstd: 4 KiB of samples: %zu bytes, %zu with a dictionary\n",
	       plain, with);
	CHECK(with < plain);
	/* no dictionary after a dictionary block: the reference is reset */
	round_trip(&in, 0, block, BLOCK, &clen);
	CHECK(clen == plain);

	cap = p->bound(in.state, BLOCK);
	c = malloc(cap);
	CHECK(p->compress(in.state, 1, block, BLOCK, c, cap, &clen) == 0);
	/* the block header names the dictionary, the frame does not */
	CHECK(clen > 5 && (c[4] & 3) == 0);
	in.ctx.err[0] = '\0';
	CHECK(p->decompress(in.state, 7, c, clen, d, BLOCK) == -EINVAL);
	CHECK(strstr(in.ctx.err, "7") != NULL);
	in.ctx.err[0] = '\0';
	CHECK(p->compress(in.state, 9, block, BLOCK, c, cap, &clen) == -EINVAL);
	CHECK(strstr(in.ctx.err, "9") != NULL);
	CHECK(p->compress(in.state, 1, block, BLOCK, c, cap, &clen) == 0);
	/* missing dictionary: refused or wrong, never a crash */
	ret = p->decompress(in.state, 0, c, clen, d, BLOCK);
	CHECK(ret < 0 || memcmp(d, block, BLOCK) != 0);
	frame_dict_ids(p, &in, c, clen, block, BLOCK, dict);
	/* a second dictionary, and replacing the first */
	CHECK(p->add_dict(in.state, 2, samples, 1000) == 0);
	round_trip(&in, 2, block, BLOCK, NULL);
	CHECK(p->add_dict(in.state, 1, dict, dict_len) == 0);
	round_trip(&in, 1, block, BLOCK, NULL);
	free(c);

	/* bad ids and the per-instance cap */
	CHECK(p->add_dict(in.state, 0, dict, dict_len) == -EINVAL);
	CHECK(p->add_dict(in.state, 3, dict, 0) == -EINVAL);
	for (i = 3; i <= 64; i++)
		CHECK(p->add_dict(in.state, (uint32_t)i, dict, 256) == 0);
	in.ctx.err[0] = '\0';
	CHECK(p->add_dict(in.state, 65, dict, 256) < 0);
	CHECK(in.ctx.err[0] != '\0');

	/* training fails cleanly on too little data */
	in.ctx.err[0] = '\0';
	ret = p->train(in.state, samples, sizes, 2, dict, 32768, &dict_len);
	CHECK(ret == -EINVAL);
	CHECK(in.ctx.err[0] != '\0');
	CHECK(p->train(in.state, samples, sizes, 0, dict, 32768,
		       &dict_len) == -EINVAL);
out:
	inst_close(&in);
	free(samples);
	free(dict);
	free(block);
	free(d);
}

static const struct pipe_plugin *load(const char *build, const char *file,
				      void **dl)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/plugins/%s.so", build, file);
	*dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*dl)
		return NULL;
	return dlsym(*dl, PIPE_PLUGIN_SYMBOL);
}

int main(void)
{
	const char *build = getenv("BUILD");
	const struct pipe_plugin *p;
	char skipped[256] = "";
	size_t i, tested = 0;
	void *dl;

	if (!build || !*build)
		build = "build";
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct codec_case *cc = &cases[i];

		p = load(build, cc->file, &dl);
		if (!p) {
			size_t n = strlen(skipped);

			snprintf(skipped + n, sizeof(skipped) - n, " %s",
				 cc->name);
			printf("skip %s: %s\n", cc->name, dlerror());
			if (dl)
				dlclose(dl);
			continue;
		}
		printf("%s\n", cc->name);
		CHECK(p->abi == PIPE_ABI);
		CHECK(p->kind == PIPE_KIND_CODEC);
		CHECK(p->codec_id == cc->id);
		CHECK_STR(p->name, cc->name);
		CHECK(p->bound && p->compress && p->decompress);
		test_sizes(cc, p);
		test_every_level(cc, p);
		test_damage(cc, p);
		if (cc->id == 3)
			test_zstd_dict(p);
		tested++;
		dlclose(dl);
	}
	if (!tested) {
		printf("no codec plugin built in %s:%s\n", build, skipped);
		return 77;
	}
	return test_result();
}
