/*
 * test_container_damage.c - the container reader on damaged files: cuts
 * at every block edge and at a stride of offsets, one flipped byte in
 * every header byte and at a stride of payload bytes, seeded random
 * damage of several kinds at once, the damage line and strict mode; the
 * same again on four decoding threads (all that the ThreadSanitizer run
 * takes).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctest.h"
#include "harness.h"
#include "rnd.h"

/* Cut at `cut`: what is read must be exactly the blocks complete before
 * it, with the rest reported as a torn tail.  Returns true when so. */
static bool cut_reads_right(const struct mem *f, const struct layout *l,
			    bool stream, size_t cut)
{
	struct mem t = { 0 };
	struct result res;
	size_t i, want = 0, full = 0;

	t.p = f->p;
	t.len = cut;
	t.stream = stream;
	for (i = 0; i < l->nr; i++) {
		if (l->end[i] <= cut && l->type[i] == FMT_DATA)
			want += l->records[i];
		if (l->end[i] <= cut)
			full = l->end[i];
	}
	read_file(&t, false, &res);
	/* file header or metadata cut: unreadable */
	if (cut < l->end[0])
		return res.ret == -EINVAL;
	if (res.ret != PIPE_EOF || res.nr != want || !res.ordered ||
	    !res.st.recovered || res.st.torn_bytes != cut - full ||
	    (cut != full && res.reports != 1) ||
	    (cut == full && res.reports != 0) || t.bad_seek) {
		printf("cut %zu (%s): ret %d nr %zu want %zu torn %llu full %zu reports %d seek %d rec %d\n",
		       cut, stream ? "stream" : "file", res.ret, res.nr, want,
		       (unsigned long long)res.st.torn_bytes, full,
		       res.reports, t.bad_seek, res.st.recovered);
		return false;
	}
	return true;
}

/*
 * A cut file reads exactly the blocks complete before the cut: cut at
 * each block's edge and one byte either side, and at a stride of offsets
 * (1 + offset % 397, so every distance from an edge comes up) over a
 * file of about 15 blocks of every kind.  Sparse (the ThreadSanitizer
 * run, where the threads' hand-offs are what is checked, and those
 * depend on how many blocks are whole, which the edges cover): the
 * stride is 1 + offset % 1999.
 */
static void test_cuts(bool stream, bool sparse)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 }, t = { 0 };
	struct result res;
	struct gen g;
	size_t cut, i, bad = 0, tries = 0;
	int d;

	gen_records(&g, 1000, 5);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	get_layout(&f, l);
	CHECK(l->end[l->nr - 1] == f.len);
	CHECK(l->nr > 10);
	for (i = 0; i < l->nr; i++) {
		for (d = -1; d <= 1; d++) {
			cut = l->end[i] + d;
			if (cut >= f.len)
				continue;
			tries++;
			bad += !cut_reads_right(&f, l, stream, cut);
		}
	}
	for (cut = 0; cut < f.len; cut += 1 + cut % (sparse ? 1999 : 397)) {
		tries++;
		bad += !cut_reads_right(&f, l, stream, cut);
	}
	CHECK(tries > (sparse ? 60 : 200));
	CHECK(bad == 0);
	/* the torn tail message */
	t.p = f.p;
	t.len = l->end[3] + 20;
	t.stream = stream;
	read_file(&t, false, &res);
	CHECK(strstr(res.first_report, "torn tail in 'x.dat' at offset") ==
	      res.first_report);
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}

/* Flip the byte at pos and read: never a crash; everything outside the
 * hit block is read, and a damaged data block is reported.  Returns the
 * number of things wrong. */
static size_t flip_reads_right(struct mem *f, const struct layout *l,
			       const struct gen *g, size_t pos)
{
	struct result res;
	size_t i, hit = l->nr, lo, bad = 0;

	for (i = 0; i < l->nr; i++)
		if (pos >= l->off[i] && pos < l->end[i])
			hit = i;
	f->p[pos] ^= 0x10;
	read_file(f, false, &res);
	f->p[pos] ^= 0x10;
	/* the file header or the metadata: unreadable (a changed version
	 * reads as a newer pipe's file, whose header it cannot check) */
	if (hit == l->nr || hit == 0) {
		if (res.ret == -EINVAL ||
		    (res.ret == -EPROTO && pos >= FMT_FH_VERSION &&
		     pos < FMT_FH_VERSION + 2))
			return 0;
		printf("flip %zu (%s): ret %d\n", pos,
		       hit ? "file header" : "metadata", res.ret);
		return 1;
	}
	lo = g->nr - (l->type[hit] == FMT_DATA ? l->records[hit] : 0);
	if (res.ret != PIPE_EOF || res.nr < lo || res.nr > g->nr ||
	    !res.ordered || (res.reports == 0 && res.nr != g->nr)) {
		printf("flip %zu (block %zu type %u): ret %d nr %zu of %zu reports %d %s\n",
		       pos, hit, l->type[hit], res.ret, res.nr, g->nr,
		       res.reports, res.msg);
		bad++;
	}
	if (l->type[hit] == FMT_DATA && res.nr != g->nr && res.reports != 1) {
		printf("flip %zu (block %zu): %d reports\n", pos, hit,
		       res.reports);
		bad++;
	}
	return bad;
}

/*
 * One flipped byte, over a file of about 15 blocks: every byte of the
 * file header and of the headers of the first and the last block of each
 * type (META, DATA, INDEX, END), one byte of each 8-byte field of the
 * other block headers (a different byte in each block), and payload
 * bytes at a stride (1 + offset % 131).  Sparse (for the threaded reads,
 * which decode the same way): one byte of each header field everywhere,
 * and the first, middle and last byte of each payload.
 */
/* no block before block i (dir -1), or after it (1), has its type */
static bool first_of_type(const struct layout *l, size_t i, int dir)
{
	size_t k;

	for (k = i + dir; k < l->nr; k += dir)
		if (l->type[k] == l->type[i])
			return false;
	return true;
}

static void test_flips(const struct pipe_plugin *codec, bool sparse)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 };
	struct gen g;
	size_t pos, i, bad = 0, tries = 0;

	gen_records(&g, 1000, 6);
	CHECK(write_file(&f, &g, meta, 4096, codec, true, NULL) == 0);
	get_layout(&f, l);
	CHECK(l->nr > 10);
	for (pos = 0; pos < FMT_FILE_HDR_SIZE; pos += sparse ? 8 : 1, tries++)
		bad += flip_reads_right(&f, l, &g, pos);
	for (i = 0; i < l->nr; i++) {
		uint64_t end = l->off[i] + FMT_BLOCK_HDR_SIZE;
		bool all = !sparse && (first_of_type(l, i, -1) ||
				       first_of_type(l, i, 1));

		for (pos = l->off[i] + (all ? 0 : i % 8); pos < end;
		     pos += all ? 1 : 8, tries++)
			bad += flip_reads_right(&f, l, &g, pos);
	}
	for (pos = 0; pos < f.len && !sparse; pos += 1 + pos % 131) {
		for (i = 0; i < l->nr; i++)
			if (pos >= l->off[i] && pos < l->end[i])
				break;
		if (i == l->nr || pos < l->off[i] + FMT_BLOCK_HDR_SIZE)
			continue; /* a header byte: flipped above */
		tries++;
		bad += flip_reads_right(&f, l, &g, pos);
	}
	for (i = 0; i < l->nr && sparse; i++) {
		uint64_t a = l->off[i] + FMT_BLOCK_HDR_SIZE;
		struct fmt_block b;

		CHECK(fmt_block_decode(&b, f.p + l->off[i], l->end[i] - l->off[i],
				       fmt_get64(f.p + FMT_FH_FILE_ID)) == 0);
		if (!b.stored)
			continue;
		bad += flip_reads_right(&f, l, &g, a);
		bad += flip_reads_right(&f, l, &g, a + b.stored / 2);
		bad += flip_reads_right(&f, l, &g, a + b.stored - 1);
		tries += 3;
	}
	CHECK(tries > (sparse ? 200 : 800));
	CHECK(bad == 0);
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}
/* A mapped file read by a pool (block headers read with read_at, the
 * trailers checked by the decoders) reads as one thread reads a copy:
 * the same records, totals and damage lines, for damage in every DATA
 * block's header, payload and trailer.  Sparse (the ThreadSanitizer
 * run, which checks the pool's hand-offs, not the decoding): one of the
 * four places in each DATA block, each place in turn, so that every
 * place is still damaged in some block. */
static void test_mapped_pool(const struct pipe_plugin *codec, size_t nr,
			     uint32_t block, bool sparse)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 };
	struct result one, pool;
	uint32_t threads = read_threads;
	size_t i, k, tries = 0, data = 0;
	struct gen g;

	gen_records(&g, nr, 6);
	CHECK(write_file(&f, &g, meta, block, codec, true, NULL) == 0);
	get_layout(&f, l);
	for (i = 0; i < l->nr; i++) {
		uint64_t at[] = {
			l->off[i] + 1 + i % 8,               /* header */
			l->off[i] + FMT_BLOCK_HDR_SIZE + 3,  /* payload */
			l->end[i] - FMT_TRAILER_SIZE + i % 8, /* trailer: length */
			l->end[i] - 8 + i % 8,               /* ... and salt */
		};
		size_t places = sizeof(at) / sizeof(at[0]);

		if (l->type[i] != FMT_DATA)
			continue;
		for (k = 0; k < places; k++) {
			if (sparse && k != data % places)
				continue;
			tries++;
			f.p[at[k]] ^= 0x10;
			read_threads = 1;
			read_mapped = false;
			read_file(&f, false, &one);
			read_threads = threads;
			read_mapped = true;
			read_file(&f, false, &pool);
			read_mapped = false;
			f.p[at[k]] ^= 0x10;
			if (one.ret != pool.ret || one.nr != pool.nr ||
			    one.hash != pool.hash ||
			    one.reports != pool.reports ||
			    strcmp(one.first_report, pool.first_report) ||
			    one.st.blocks_damaged != pool.st.blocks_damaged ||
			    memcmp(one.order, pool.order, sizeof(one.order))) {
				printf("mapped, %u threads, flip at %" PRIu64
				       ": %zu records, '%s' vs %zu, '%s'\n",
				       threads, at[k], one.nr,
				       one.first_report, pool.nr,
				       pool.first_report);
				CHECK(0);
			}
			CHECK(one.reports >= 1);
		}
		data++;
	}
	CHECK(tries >= (sparse ? 8 : 20));
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}

/* Several kinds of damage at once (1 to 6 of them), at seeded random
 * places, `rounds` times: the reader always ends, with records or one
 * clear error, and never crashes. */
static void test_random_damage(const struct pipe_plugin *codec, int rounds)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 }, t = { 0 };
	struct result res;
	struct gen g;
	uint32_t x = 12345;
	int it, k, bad = 0;

	gen_records(&g, 3000, 14);
	CHECK(write_file(&f, &g, meta, 4096, codec, true, NULL) == 0);
	t.p = malloc(f.len * 2);
	for (it = 0; it < rounds; it++) {
		int ops = 1 + it % 6;

		memcpy(t.p, f.p, f.len);
		t.len = f.len;
		for (k = 0; k < ops; k++) {
			size_t pos, n;

			rnd_lcg32(&x);
			pos = (x >> 8) % t.len;
			switch ((x >> 4) % 5) {
			case 0:
				t.p[pos] ^= (uint8_t)(1 + (x >> 24) % 255);
				break;
			case 1:
				n = t.len - pos < 8 ? t.len - pos : 8;
				memset(t.p + pos, 0xff, n);
				break;
			case 2:
				n = t.len - pos < 100 ? t.len - pos : 100;
				memset(t.p + pos, 0, n);
				break;
			case 3:
				if (pos > 2000)
					t.len = pos;
				break;
			default:
				/* a stretch of the file again, 8-aligned */
				pos &= ~(size_t)7;
				n = (x >> 16) % 9000 & ~(size_t)7;
				if (pos + n <= t.len &&
				    t.len + n <= f.len * 2) {
					memmove(t.p + pos + n, t.p + pos,
						t.len - pos);
					t.len += n;
				}
			}
		}
		read_file(&t, false, &res);
		if (res.ret != PIPE_EOF && res.ret != -EINVAL &&
		    res.ret != -EPROTO)
			bad++;
		if (res.ret == PIPE_EOF && res.nr > 2 * g.nr)
			bad++;
	}
	CHECK(bad == 0);
	gen_free(&g);
	free(f.p);
	free(t.p);
	meta_free(meta);
}

static void test_damage_line_and_strict(void)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 };
	struct result res;
	struct gen g;
	size_t i, d = 0;
	char want[256];

	gen_records(&g, 3000, 7);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	get_layout(&f, l);
	for (i = 3; i < l->nr; i++) {
		if (l->type[i] == FMT_DATA) {
			d = i;
			break;
		}
	}
	CHECK(d > 0);
	f.p[l->off[d] + FMT_BLOCK_HDR_SIZE + 20] ^= 1;
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.reports == 1);
	CHECK(res.nr == g.nr - l->records[d]);
	CHECK(res.st.blocks_damaged == 1);
	CHECK(res.st.records_damaged == l->records[d]);
	snprintf(want, sizeof(want),
		 "damaged block in 'x.dat' at offset %llu: ",
		 (unsigned long long)l->off[d]);
	CHECK(!strncmp(res.first_report, want, strlen(want)));
	snprintf(want, sizeof(want),
		 " %u records skipped: payload checksum mismatch",
		 l->records[d]);
	CHECK(strstr(res.first_report, want) != NULL);
	CHECK(strstr(res.first_report, ", time ") != NULL);
	read_file(&f, true, &res);
	CHECK(res.ret == -EIO);
	CHECK(!strncmp(res.msg, "damaged block in 'x.dat' at offset", 34));
	CHECK(res.reports == 0);
	/* a bad header resyncs on the next block */
	f.p[l->off[d] + FMT_BLOCK_HDR_SIZE + 20] ^= 1;
	f.p[l->off[d] + 30] ^= 1;
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.reports == 1);
	CHECK(res.nr == g.nr - l->records[d]);
	CHECK(strstr(res.first_report, "bad block header") != NULL);
	gen_free(&g);
	free(f.p);
	free(l);
	meta_free(meta);
}

int main(void)
{
	if (!ct_threaded_only()) {
		test_damage_line_and_strict();
		test_cuts(false, false);
		test_cuts(true, false);
		test_flips(NULL, false);
		test_flips(&xor_codec, false);
		use_transform = true;
		test_flips(&xor_codec, false);
		use_transform = false;
		test_random_damage(NULL, 150);
		test_random_damage(&xor_codec, 150);
	}
	/* the reads again on four decoding threads: every kind of damage,
	 * fewer times (the decoding is the same) */
	read_threads = 4;
	test_cuts(false, ct_threaded_only());
	test_flips(&xor_codec, true);
	test_random_damage(&xor_codec, 48);
	test_damage_line_and_strict();
	/* blocks shorter than what a first touch maps (the headers read
	 * through the mapping) and longer (read with read_at) */
	read_threads = 2;
	test_mapped_pool(NULL, 1000, 4096, ct_threaded_only());
	test_mapped_pool(&xor_codec, 1000, 4096, ct_threaded_only());
	test_mapped_pool(NULL, 12000, 131072, ct_threaded_only());
	/* read block by block, each file reads as merged */
	CHECK(blocks_differ == 0);
	CHECK(blocks_whole > 0);
	return test_result();
}
