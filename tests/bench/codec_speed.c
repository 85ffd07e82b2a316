/*
 * codec_speed.c - compression and decompression speed of the codec plugins
 * on the blocks of a real recording (issue 4).  Reads a pipe file written
 * with codec none (so each DATA payload is the codec's input: raw records
 * with transform 0, columns with transform 1), loads
 * PLUGDIR/codec_NAME.so with the tests' fake host, and times every block
 * through compress and decompress in CPU time of this thread.
 *
 * Usage: codec_speed PLUGDIR FILE NAME:LEVEL[:extreme][:dict=KIB] ...
 * Prints one line per codec: input MB, stored MB, ratio (record bytes /
 * stored), compress and decompress MB/s of codec input per core, and the
 * same speeds in record bytes (comp_rec, dec_rec: they differ from the
 * first two only with the transform, whose own time is not counted).
 * `:dict=32` estimates a trained dictionary (see run_dict).
 * Built by tests/bench/codecs.sh, not by the Makefile.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakehost.h"
#include "pipe_plugin.h"

#define MIN_SECONDS 0.5     /* time each direction at least this long */
#define MAX_BLOCKS 100000
#define BLOCK_MAX (64u << 20)

struct block {
	const uint8_t *data; /* codec input, borrowed from the file image */
	size_t len;          /* its length */
	size_t raw;          /* record bytes it stands for */
};

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads the whole file into *img (caller frees) and lists its DATA
 * blocks, which must be stored with codec none (docs/format.md). */
static int load_blocks(const char *path, uint8_t **img, struct block *bl,
		       size_t *nr)
{
	FILE *f = fopen(path, "rb");
	uint8_t *d = NULL;
	long size;
	size_t off, n = 0;

	if (!f) {
		fprintf(stderr, "codec_speed: cannot open '%s': %s\n", path,
			strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 64 ||
	    fseek(f, 0, SEEK_SET) < 0)
		goto bad;
	d = malloc((size_t)size);
	if (!d || fread(d, 1, (size_t)size, f) != (size_t)size)
		goto bad;
	off = d[10] | (size_t)d[11] << 8;
	while (off + 96 + 16 <= (size_t)size && n < MAX_BLOCKS) {
		const uint8_t *h = d + off;
		size_t hs = h[4] | (size_t)h[5] << 8;
		uint32_t stored = get32(h + 32), raw = get32(h + 36);
		size_t total = hs + ((stored + 7u) & ~7u) + 16;

		if (get32(h) != 0x4b4c4250 || hs < 96 || stored > BLOCK_MAX ||
		    off + total > (size_t)size)
			goto bad;
		if (h[6] == 2) {
			if (get32(h + 8) != 0) {
				fprintf(stderr, "codec_speed: '%s' is not "
					"written with codec none\n", path);
				goto bad_quiet;
			}
			bl[n].data = h + hs;
			bl[n].len = stored;
			bl[n].raw = raw;
			n++;
		}
		off += total;
	}
	fclose(f);
	*img = d;
	*nr = n;
	return 0;
bad:
	fprintf(stderr, "codec_speed: cannot read blocks of '%s'\n", path);
bad_quiet:
	free(d);
	fclose(f);
	return -1;
}

/* One opened codec and its compressed copies of the blocks. */
struct run {
	const struct pipe_plugin *p;
	void *st;
	struct pipe_ctx ctx;
	const char *spec;
	uint8_t **cbuf;  /* compressed block i */
	size_t *clen;    /* its length */
	uint32_t *did;   /* dictionary id used for block i */
};

/* Compresses blocks [from, nr) once; returns 0 or -1 with a message. */
static int run_compress(struct run *r, const struct block *bl, size_t from,
			size_t nr)
{
	size_t i;

	for (i = from; i < nr; i++) {
		if (r->p->compress(r->st, r->did[i], bl[i].data, bl[i].len,
				   r->cbuf[i], r->p->bound(r->st, bl[i].len),
				   &r->clen[i]) < 0) {
			fprintf(stderr, "codec_speed: %s: %s\n", r->spec,
				r->ctx.err);
			return -1;
		}
	}
	return 0;
}

static size_t sum_clen(const struct run *r, size_t from, size_t nr)
{
	size_t i, n = 0;

	for (i = from; i < nr; i++)
		n += r->clen[i];
	return n;
}

/*
 * The dictionary estimate (":dict" in the spec): trains a dict_size
 * dictionary on the first blocks (at least 100 times its size, cut in 16 KiB
 * samples), as a writer would, and sets every later block to use it.
 * Prints the ratio of the later blocks without and with it.  Returns the
 * number of training blocks, or -1.
 */
static long run_dict(struct run *r, const struct block *bl, size_t nr,
		     size_t dict_size)
{
	size_t i, ntrain = 0, tot = 0, nsmp = 0, dlen = 0, rawtail = 0;
	size_t *sizes = NULL, before, after, dstored = 0;
	uint8_t *smp = NULL, *dict = NULL, *dz = NULL;
	long ret = -1;

	if (!r->p->train || !r->p->add_dict) {
		fprintf(stderr, "codec_speed: %s: no dictionaries\n", r->spec);
		return -1;
	}
	while (ntrain < nr && tot < 100 * dict_size)
		tot += bl[ntrain++].len;
	if (ntrain >= nr) {
		fprintf(stderr, "codec_speed: too few blocks to train on\n");
		return -1;
	}
	smp = malloc(tot);
	sizes = malloc((tot / 16384 + ntrain + 1) * sizeof(*sizes));
	dict = malloc(dict_size);
	dz = malloc(r->p->bound(r->st, dict_size));
	if (!smp || !sizes || !dict || !dz)
		goto out;
	tot = 0;
	for (i = 0; i < ntrain; i++) {
		size_t off;

		memcpy(smp + tot, bl[i].data, bl[i].len);
		tot += bl[i].len;
		for (off = 0; off < bl[i].len; off += 16384)
			sizes[nsmp++] = bl[i].len - off < 16384 ?
					bl[i].len - off : 16384;
	}
	if (r->p->train(r->st, smp, sizes, (uint32_t)nsmp, dict, dict_size,
			&dlen) < 0 ||
	    r->p->add_dict(r->st, 1, dict, dlen) < 0 ||
	    r->p->compress(r->st, 0, dict, dlen, dz,
			   r->p->bound(r->st, dict_size), &dstored) < 0) {
		fprintf(stderr, "codec_speed: %s: %s\n", r->spec, r->ctx.err);
		goto out;
	}
	if (run_compress(r, bl, ntrain, nr) < 0)
		goto out;
	before = sum_clen(r, ntrain, nr);
	for (i = ntrain; i < nr; i++) {
		r->did[i] = 1;
		rawtail += bl[i].raw;
	}
	if (run_compress(r, bl, ntrain, nr) < 0)
		goto out;
	after = sum_clen(r, ntrain, nr);
	printf("  dict %zu B (stored %zu B) trained on %zu blocks; the other "
	       "%zu blocks: ratio %.2f without, %.2f with (%+.1f%%)\n",
	       dlen, dstored, ntrain, nr - ntrain, (double)rawtail / before,
	       (double)rawtail / after,
	       100.0 * ((double)after - (double)before) / (double)before);
	ret = (long)dstored;
out:
	free(smp);
	free(sizes);
	free(dict);
	free(dz);
	return ret;
}

/* Runs one codec spec over the blocks; prints its line. */
static int bench_one(const char *plugdir, const char *spec,
		     const struct block *bl, size_t nr)
{
	char name[64], path[4096], args[64];
	struct run r;
	int64_t level;
	size_t i, cap = 0, in = 0, raw = 0, stored = 0;
	uint8_t *dbuf = NULL;
	double t0, tc = 0, td = 0;
	long reps_c = 0, reps_d = 0, dstored = 0;
	const char *ds;
	void *so;
	int ret = -1;

	memset(&r, 0, sizeof(r));
	r.spec = spec;
	if (sscanf(spec, "%63[^:]:%" SCNd64, name, &level) != 2) {
		fprintf(stderr, "codec_speed: bad spec '%s'\n", spec);
		return -1;
	}
	snprintf(args, sizeof(args), "level=%" PRId64 "%s", level,
		 strstr(spec, ":extreme") ? ",extreme=on" : "");
	snprintf(path, sizeof(path), "%s/codec_%s.so", plugdir, name);
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		printf("%-14s not built (%s)\n", spec, dlerror());
		return 0;
	}
	r.p = dlsym(so, PIPE_PLUGIN_SYMBOL);
	if (!r.p || r.p->kind != PIPE_KIND_CODEC) {
		fprintf(stderr, "codec_speed: '%s' is no codec\n", path);
		goto out;
	}
	if (fakehost_args(&r.ctx, r.p, args) < 0 ||
	    r.p->open(&fakehost, &r.ctx, &r.st) < 0) {
		fprintf(stderr, "codec_speed: open %s: %s\n", spec, r.ctx.err);
		r.st = NULL;
		goto out;
	}
	r.cbuf = calloc(nr, sizeof(*r.cbuf));
	r.clen = calloc(nr, sizeof(*r.clen));
	r.did = calloc(nr, sizeof(*r.did));
	if (!r.cbuf || !r.clen || !r.did)
		goto out;
	for (i = 0; i < nr; i++) {
		r.cbuf[i] = malloc(r.p->bound(r.st, bl[i].len));
		if (!r.cbuf[i])
			goto out;
		if (bl[i].len > cap)
			cap = bl[i].len;
		in += bl[i].len;
		raw += bl[i].raw;
	}
	dbuf = malloc(cap ? cap : 1);
	if (!dbuf)
		goto out;
	ds = strstr(spec, ":dict=");
	if (ds) {
		dstored = run_dict(&r, bl, nr, strtoul(ds + 6, NULL, 10) << 10);
		if (dstored < 0)
			goto out;
	}
	t0 = cpu_now();
	do {
		if (run_compress(&r, bl, 0, nr) < 0)
			goto out;
		reps_c++;
		tc = cpu_now() - t0;
	} while (tc < MIN_SECONDS);
	stored = sum_clen(&r, 0, nr) + (size_t)dstored;
	for (i = 0; i < nr; i++) {
		if (r.p->decompress(r.st, r.did[i], r.cbuf[i], r.clen[i], dbuf,
				    bl[i].len) < 0 ||
		    memcmp(dbuf, bl[i].data, bl[i].len) != 0) {
			fprintf(stderr, "codec_speed: %s: round trip of block "
				"%zu failed: %s\n", spec, i, r.ctx.err);
			goto out;
		}
	}
	t0 = cpu_now();
	do {
		for (i = 0; i < nr; i++)
			r.p->decompress(r.st, r.did[i], r.cbuf[i], r.clen[i],
					dbuf, bl[i].len);
		reps_d++;
		td = cpu_now() - t0;
	} while (td < MIN_SECONDS);
	printf("%-14s %8.2f %8.3f %7.2f %9.1f %9.1f %9.1f %9.1f\n", spec,
	       in / 1e6, stored / 1e6, (double)raw / (double)stored,
	       in * reps_c / tc / 1e6, in * reps_d / td / 1e6,
	       raw * reps_c / tc / 1e6, raw * reps_d / td / 1e6);
	ret = 0;
out:
	for (i = 0; r.cbuf && i < nr; i++)
		free(r.cbuf[i]);
	free(r.cbuf);
	free(r.clen);
	free(r.did);
	free(dbuf);
	if (r.st)
		r.p->close(r.st);
	fakehost_release(&r.ctx);
	dlclose(so);
	return ret;
}

int main(int argc, char **argv)
{
	struct block *bl;
	uint8_t *img = NULL;
	size_t nr = 0;
	int i, rc = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: codec_speed PLUGDIR FILE "
			"NAME:LEVEL[:extreme][:dict=KIB]...\n");
		return 2;
	}
	bl = calloc(MAX_BLOCKS, sizeof(*bl));
	if (!bl || load_blocks(argv[2], &img, bl, &nr) < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%-14s %8s %8s %7s %9s %9s %9s %9s\n", "codec", "in_MB",
	       "out_MB", "ratio", "comp_MB/s", "dec_MB/s", "comp_rec",
	       "dec_rec");
	for (i = 3; i < argc; i++)
		if (bench_one(argv[1], argv[i], bl, nr) < 0)
			rc = 1;
	free(img);
	free(bl);
	return rc;
}
