/*
 * test_container_reader.c - the container writer and reader on memory
 * buffers, undamaged: round trips (seekable and streamed, with and
 * without a codec and the transform), the summary from END and the
 * index, files that are not ours or are from a newer pipe, unknown block
 * types, huge lengths, window and subset reads; the round trips on two
 * decoders, and with a window on four (all that the ThreadSanitizer run
 * takes).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crstate.h"
#include "ctest.h"
#include "harness.h"

static void test_round_trip(const struct pipe_plugin *codec, bool stream)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 };
	struct gen g;
	struct cw_stats ws;
	struct result res;

	gen_records(&g, 20000, 1);
	CHECK(write_file(&f, &g, meta, 4096, codec, true, &ws) == 0);
	CHECK(ws.records == g.nr);
	CHECK(ws.samples == g.samples);
	CHECK(ws.raw_bytes == g.len);
	CHECK(ws.stored_bytes == f.len);
	CHECK(ws.blocks > g.len / 4096);
	f.stream = stream;
	opens = closes = 0;
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr);
	CHECK(res.ordered);
	CHECK(res.hash == gen_hash(&g, 0, g.nr));
	CHECK(res.reports == 0);
	CHECK(!res.st.recovered);
	CHECK(res.st.records == g.nr);
	CHECK(res.st.samples == g.samples);
	CHECK(res.st.lost == 5);
	CHECK(res.st.blocks == ws.blocks);
	CHECK(res.st.blocks_decoded == ws.blocks);
	CHECK(res.st.raw_bytes == g.len);
	CHECK(res.st.t_first == g.recs[0].time);
	CHECK(res.st.t_last == g.recs[g.nr - 1].time);
	CHECK(!f.bad_seek);
	CHECK(opens == (codec ? (int)read_threads : 0));
	CHECK(closes == opens);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* The totals from END and the index equal those of a whole read; a cut
 * file has none. */
static void test_summary(void)
{
	struct meta *meta = make_meta();
	struct cr_stats st;
	struct mem f = { 0 }, cut = { 0 };
	struct result res;
	struct cw_stats ws;
	struct gen g;

	gen_records(&g, 5000, 3);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, &ws) == 0);
	read_file(&f, false, &res);
	CHECK(res.st.throttles == 2);
	CHECK(read_summary(&f, &st) == 0);
	CHECK(st.records == res.st.records);
	CHECK(st.samples == res.st.samples);
	CHECK(st.lost == res.st.lost);
	CHECK(st.throttles == res.st.throttles);
	CHECK(st.blocks == res.st.blocks);
	CHECK(st.raw_bytes == res.st.raw_bytes);
	CHECK(st.t_first == res.st.t_first);
	CHECK(st.t_last == res.st.t_last);
	CHECK(!st.recovered && !st.blocks_damaged && !st.torn_bytes);
	CHECK(st.file_bytes == f.len);
	/* without END the caller has to scan */
	cut.p = malloc(f.len);
	memcpy(cut.p, f.p, f.len - 8);
	cut.len = f.len - 8;
	CHECK(read_summary(&cut, &st) == 1);
	/* nor when END's record count disagrees with the index (a good
	 * END checksum over the changed count) */
	memcpy(cut.p, f.p, f.len);
	cut.len = f.len;
	{
		uint64_t salt = fmt_get64(cut.p + FMT_FH_FILE_ID);
		uint64_t end_off = cut.len - fmt_get64(cut.p + cut.len - 16);
		struct fmt_block eb;
		uint8_t *pl;

		CHECK(fmt_block_decode(&eb, cut.p + end_off, 4096, salt) == 0);
		CHECK(eb.type == FMT_END && eb.stored == FMT_END_SIZE_NOW);
		pl = cut.p + end_off + eb.hdr_size;
		fmt_put64(pl + 8, fmt_get64(pl + 8) + 1);
		eb.payload_sum = fmt_checksum(pl, eb.stored, salt);
		fmt_block_encode(&eb, salt, cut.p + end_off);
	}
	CHECK(read_summary(&cut, &st) == 1);
	free(cut.p);
	free(f.p);
	gen_free(&g);
	meta_free(meta);
}

static void patch_header(struct mem *f, uint16_t version, uint64_t incompat)
{
	fmt_put16(f->p + FMT_FH_VERSION, version);
	fmt_put64(f->p + FMT_FH_INCOMPAT, incompat);
	fmt_put64(f->p + FMT_FH_CHECKSUM,
		  fmt_checksum(f->p, FMT_FH_CHECKSUM, 0));
}

static void test_bad_files(void)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 }, t = { 0 };
	struct result res;
	struct gen g;

	gen_records(&g, 100, 3);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);

	t.p = (uint8_t *)"hello world, this is not a pipe file at all, no.....";
	t.len = 52;
	read_file(&t, false, &res);
	CHECK(res.ret == -EINVAL);
	CHECK_STR(res.msg, "cannot read 'x.dat': not a pipe file");
	t.len = 0;
	read_file(&t, false, &res);
	CHECK_STR(res.msg, "cannot read 'x.dat': not a pipe file");

	patch_header(&f, 2, 0);
	read_file(&f, false, &res);
	CHECK(res.ret == -EPROTO);
	CHECK_STR(res.msg,
		  "cannot read 'x.dat': written by a newer pipe (format version 2)");
	patch_header(&f, 1, 1);
	read_file(&f, false, &res);
	CHECK(res.ret == -EPROTO);
	patch_header(&f, 1, 0);
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF && res.nr == g.nr);

	/* text-mode damage: \r\n became \n */
	f.p[4] ^= 0x40;
	read_file(&f, false, &res);
	CHECK(res.ret == -EINVAL);
	CHECK(strstr(res.msg, "damaged file header") != NULL);
	f.p[4] ^= 0x40;
	f.p[50] ^= 1;
	read_file(&f, false, &res);
	CHECK_STR(res.msg,
		  "cannot read 'x.dat': damaged file header (checksum mismatch)");
	f.p[50] ^= 1;
	/* metadata payload */
	f.p[FMT_FILE_HDR_SIZE + FMT_BLOCK_HDR_SIZE + 3] ^= 1;
	read_file(&f, false, &res);
	CHECK_STR(res.msg,
		  "cannot read 'x.dat': damaged metadata block (checksum mismatch)");
	f.p[FMT_FILE_HDR_SIZE + FMT_BLOCK_HDR_SIZE + 3] ^= 1;
	f.p[FMT_FILE_HDR_SIZE + 10] ^= 1;
	read_file(&f, false, &res);
	CHECK_STR(res.msg,
		  "cannot read 'x.dat': damaged metadata block header");
	f.p[FMT_FILE_HDR_SIZE + 10] ^= 1;
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF && res.nr == g.nr);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* Splice a block of `type` before the END block. */
static void splice_block(struct mem *f, uint32_t type, struct mem *out)
{
	struct layout *l = malloc(sizeof(*l));
	uint64_t salt = fmt_get64(f->p + FMT_FH_FILE_ID);
	struct fmt_block b = { 0 };
	uint8_t blk[FMT_BLOCK_HDR_SIZE + 8 + 16];
	uint64_t end_at;
	struct pipe_err err;

	get_layout(f, l);
	end_at = l->off[l->nr - 1];
	CHECK(l->type[l->nr - 1] == FMT_END);
	b.hdr_size = FMT_BLOCK_HDR_SIZE;
	b.type = type;
	b.stored = b.raw = b.coded = 8;
	b.payload_sum = fmt_checksum("ABCDEFGH", 8, salt);
	fmt_block_encode(&b, salt, blk);
	memcpy(blk + FMT_BLOCK_HDR_SIZE, "ABCDEFGH", 8);
	fmt_put64(blk + FMT_BLOCK_HDR_SIZE + 8, sizeof(blk));
	fmt_put64(blk + FMT_BLOCK_HDR_SIZE + 16, salt);
	out->len = 0;
	mem_write(out, f->p, end_at, &err);
	mem_write(out, blk, sizeof(blk), &err);
	mem_write(out, f->p + end_at, f->len - end_at, &err);
	free(l);
}

/* A block whose header is good but claims lengths past the limit is never
 * allocated for: it counts as a bad header and the read goes on. */
static void test_huge_lengths(void)
{
	struct meta *meta = make_meta();
	struct layout *l = malloc(sizeof(*l));
	struct mem f = { 0 }, t = { 0 };
	struct pipe_err err;
	struct fmt_block b = { 0 };
	struct result res;
	struct gen g;
	uint8_t blk[FMT_BLOCK_HDR_SIZE + 8 + 16];
	uint64_t salt, at;

	gen_records(&g, 500, 15);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	get_layout(&f, l);
	salt = fmt_get64(f.p + FMT_FH_FILE_ID);
	at = l->off[2];
	b.hdr_size = FMT_BLOCK_HDR_SIZE;
	b.type = FMT_DATA;
	b.records = 1000000;
	b.stored = 8;
	b.raw = CONTAINER_LEN_MAX + 8;
	b.coded = b.raw;
	b.payload_sum = fmt_checksum("ABCDEFGH", 8, salt);
	fmt_block_encode(&b, salt, blk);
	memcpy(blk + FMT_BLOCK_HDR_SIZE, "ABCDEFGH", 8);
	fmt_put64(blk + FMT_BLOCK_HDR_SIZE + 8, sizeof(blk));
	fmt_put64(blk + FMT_BLOCK_HDR_SIZE + 16, salt);
	mem_write(&t, f.p, at, &err);
	mem_write(&t, blk, sizeof(blk), &err);
	mem_write(&t, f.p + at, f.len - at, &err);
	read_file(&t, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr);
	CHECK(res.reports == 1);
	CHECK(strstr(res.first_report, "bad block header") != NULL);
	gen_free(&g);
	free(f.p);
	free(t.p);
	free(l);
	meta_free(meta);
}

static void test_block_types(void)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 }, t = { 0 };
	struct result res;
	struct gen g;

	gen_records(&g, 500, 4);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, NULL) == 0);
	splice_block(&f, 0x80 | 9, &t);
	read_file(&t, false, &res);
	CHECK(res.ret == PIPE_EOF && res.nr == g.nr && res.reports == 0);
	splice_block(&f, 9, &t);
	read_file(&t, false, &res);
	CHECK(res.ret == -EPROTO);
	CHECK(strstr(res.msg, "is from a newer pipe") != NULL);
	gen_free(&g);
	free(f.p);
	free(t.p);
	meta_free(meta);
}

/* Records of g a window read must return (times from the first record). */
/* Time 0 of windows: the t_min of the file's first DATA block with one. */
static uint64_t first_block_time(const struct mem *f)
{
	uint64_t salt = fmt_get64(f->p + FMT_FH_FILE_ID);
	uint64_t at = FMT_FILE_HDR_SIZE;
	struct fmt_block b;

	while (at < f->len &&
	       fmt_block_decode(&b, f->p + at, f->len - at, salt) == 0) {
		if (b.type == FMT_DATA && b.t_min)
			return b.t_min;
		at += fmt_block_len(&b);
	}
	return 0;
}

static size_t window_want(const struct gen *g, uint64_t origin,
			  uint64_t *hash)
{
	uint64_t lo = window.start_ns ? origin + window.start_ns : 0;
	uint64_t hi = window.stop_ns ? origin + window.stop_ns : UINT64_MAX;
	size_t i, k, n = 0;

	*hash = 0;
	for (i = 0; i < g->nr; i++) {
		const struct pipe_record *r = &g->recs[i];
		bool keep;

		if (r->stream == PIPE_STREAM_SIDEBAND) {
			keep = r->time < hi;
		} else {
			keep = r->time >= lo && r->time < hi;
			if (window.nr_cpus) {
				bool cpu = false;

				for (k = 0; k < window.nr_cpus; k++)
					cpu = cpu ||
					      window.cpus[k] == r->stream;
				keep = keep && cpu;
			}
			if (window.nr_pids &&
			    r->hdr->type == PERF_RECORD_SAMPLE) {
				uint32_t pid;
				bool any = false;

				memcpy(&pid, (const uint8_t *)r->hdr + 24, 4);
				for (k = 0; k < window.nr_pids; k++)
					any = any || window.pids[k] == pid;
				keep = keep && any;
			}
		}
		if (keep) {
			n++;
			*hash += rec_hash(r);
		}
	}
	return n;
}

static void test_window(bool cut, bool stream)
{
	static const uint32_t cpus[] = { 1, 3 };
	static const uint32_t pids[] = { 7, 9, 200 };
	struct meta *meta = make_meta();
	struct mem f = { 0 };
	struct cw_stats ws;
	struct result res;
	struct gen g;
	uint64_t hash, origin;
	size_t want;

	gen_records(&g, 6000, 12);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, &ws) == 0);
	if (cut)
		f.len -= f.len / 7;
	f.stream = stream;
	origin = first_block_time(&f);

	window.start_ns = 0;
	window.stop_ns = 0;
	read_file(&f, false, &res);
	want = res.nr;

	memset(&window, 0, sizeof(window));
	window.start_ns = 2000000;
	window.stop_ns = 4000000;
	read_file(&f, false, &res);
	if (!stream) {
		/* a cut file lost its last blocks (the sideband's) */
		CHECK(cut ? res.nr <= window_want(&g, origin, &hash)
			  : res.nr == window_want(&g, origin, &hash));
		CHECK(cut || res.hash == hash);
		CHECK(res.st.blocks_decoded > 0);
		CHECK(res.st.blocks_decoded < ws.blocks / 4);
	}
	CHECK(res.ordered);
	CHECK(res.nr < want);
	CHECK(res.st.recovered == cut);
	/* CPU subset and pids, no window */
	memset(&window, 0, sizeof(window));
	window.cpus = cpus;
	window.nr_cpus = 2;
	window.pids = pids;
	window.nr_pids = 3;
	read_file(&f, false, &res);
	if (!cut) {
		CHECK(res.nr == window_want(&g, origin, &hash));
		CHECK(res.hash == hash);
	}
	CHECK(res.nr > 0 && res.nr < want);
	CHECK(res.ordered);
	memset(&window, 0, sizeof(window));
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/*
 * A window read gives the same records from a file (through its index) as
 * from a pipe (forward), and 8 bytes inserted before one block cost no
 * record in either: the reader checks each block the index leads to and
 * walks forward from the damage.
 */
static void test_window_same_from_index_and_pipe(void)
{
	static const uint64_t spans[][2] = {
		{ 2000000, 4000000 }, { 0, 3000000 }, { 5000000, 0 },
	};
	struct meta *meta = make_meta();
	struct mem f = { 0 }, s = { 0 };
	struct result a, b, c, d;
	struct layout *l = malloc(sizeof(*l));
	struct cw_stats ws;
	struct gen g;
	size_t i, k;

	gen_records(&g, 6000, 21);
	CHECK(write_file(&f, &g, meta, 4096, NULL, true, &ws) == 0);
	get_layout(&f, l);
	/* a DATA block a third of the way in */
	for (k = l->nr / 3; k < l->nr && l->type[k] != FMT_DATA; k++)
		;
	CHECK(k < l->nr);
	s.p = malloc(f.len + 8);
	s.len = f.len + 8;
	memcpy(s.p, f.p, l->off[k]);
	memset(s.p + l->off[k], 0, 8);
	memcpy(s.p + l->off[k] + 8, f.p + l->off[k], f.len - l->off[k]);
	for (i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		memset(&window, 0, sizeof(window));
		window.start_ns = spans[i][0];
		window.stop_ns = spans[i][1];
		f.stream = false;
		read_file(&f, false, &a);
		f.stream = true;
		read_file(&f, false, &b);
		CHECK(a.nr > 0 && a.nr == b.nr && a.hash == b.hash);
		s.stream = false;
		read_file(&s, false, &c);
		s.stream = true;
		read_file(&s, false, &d);
		CHECK(c.nr == a.nr && c.hash == a.hash);
		CHECK(d.nr == a.nr && d.hash == a.hash);
		CHECK(c.ordered && d.ordered);
	}
	memset(&window, 0, sizeof(window));
	free(s.p);
	free(l);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

/* The resident bytes of the mapping that starts at base, from
 * /proc/self/smaps; -1 when it is not found. */
static long mapped_rss(const void *base)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	bool in = false;
	long kb = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)base);
	while (kb < 0 && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, want, strlen(want));
		else if (in && !strncmp(line, "Rss:", 4))
			kb = strtol(line + 4, NULL, 10);
	}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* Which mappings' pages the reader may drop: shared ones only, however
 * many mappings the range spans. */
static void test_map_is_shared(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int fd = memfd_create("pipe-test", 0);
	uint8_t *shared, *priv, *anon, *heap = malloc(3 * pg);

	CHECK(fd >= 0 && ftruncate(fd, 5 * (off_t)pg) == 0);
	shared = mmap(NULL, 5 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	priv = mmap(NULL, 4 * pg, PROT_READ, MAP_PRIVATE, fd, 0);
	anon = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED && priv != MAP_FAILED &&
	      anon != MAP_FAILED && heap);
	/* a hole after it */
	CHECK(munmap(shared + 4 * pg, pg) == 0);
	CHECK(cr_map_is_shared(shared, 4 * pg));
	CHECK(cr_map_is_shared(shared + pg, pg + 5));
	CHECK(!cr_map_is_shared(shared, 5 * pg));
	/* two mappings, the same file */
	CHECK(mprotect(shared + 2 * pg, pg, PROT_READ) == 0);
	CHECK(cr_map_is_shared(shared, 4 * pg));
	CHECK(cr_map_is_shared(shared + pg, 2 * pg));
	CHECK(!cr_map_is_shared(priv, 4 * pg));
	CHECK(!cr_map_is_shared(anon, 4 * pg));
	CHECK(!cr_map_is_shared(heap, 3 * pg));
	munmap(shared, 4 * pg);
	munmap(priv, 4 * pg);
	munmap(anon, 4 * pg);
	free(heap);
	close(fd);
}

/*
 * A mapped file: a shared mapping's pages are dropped once read (a read
 * of a big file keeps a bounded part of it mapped), on one decoding
 * thread and on two; a private mapping's never are (they would come
 * back as zeros).
 */
static void test_mapped_drop(void)
{
	struct meta *meta = make_meta();
	struct mem f = { 0 };
	struct result res;
	uint8_t *copy;
	int fd = memfd_create("pipe-test", 0);
	uint32_t t;
	struct gen g;
	long rss;

	gen_records(&g, 200000, 3);
	CHECK(write_file(&f, &g, meta, 65536, NULL, true, NULL) == 0);
	CHECK(f.len > (8u << 20));
	CHECK(fd >= 0 && write(fd, f.p, f.len) == (ssize_t)f.len);
	copy = f.p;
	f.p = mmap(NULL, f.len, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(f.p != MAP_FAILED);
	read_mapped = true;
	for (t = 1; t <= 2; t++) {
		read_threads = t;
		read_file(&f, false, &res);
		CHECK(res.ret == PIPE_EOF);
		CHECK(res.nr == g.nr);
		CHECK(res.hash == gen_hash(&g, 0, g.nr));
		rss = mapped_rss(f.p);
		CHECK(rss >= 0 && rss < (long)(f.len / 2));
	}
	munmap(f.p, f.len);
	/* the heap copy (big enough to be mapped on its own), read twice */
	f.p = copy;
	read_file(&f, false, &res);
	read_file(&f, false, &res);
	CHECK(res.ret == PIPE_EOF);
	CHECK(res.nr == g.nr);
	CHECK(res.hash == gen_hash(&g, 0, g.nr));
	read_mapped = false;
	read_threads = 1;
	close(fd);
	gen_free(&g);
	free(f.p);
	meta_free(meta);
}

int main(void)
{
	if (!ct_threaded_only()) {
		test_summary();
		test_round_trip(NULL, false);
		test_round_trip(NULL, true);
		test_round_trip(&xor_codec, false);
		test_round_trip(&xor_codec, true);
		use_transform = true;
		test_round_trip(NULL, false);
		test_round_trip(&xor_codec, true);
		use_transform = false;
		test_bad_files();
		test_block_types();
		test_huge_lengths();
		test_window(false, false);
		test_window(true, false);
		test_window(false, true);
		test_window_same_from_index_and_pipe();
		test_map_is_shared();
		test_mapped_drop();
	}
	/* on two decoders: one worker, woken for several queued blocks at
	 * a time, and the reading thread, which runs the queued blocks it
	 * waits for (a read that waited for a sleeping worker would hang) */
	read_threads = 2;
	test_round_trip(NULL, false);
	test_round_trip(&xor_codec, false);
	/* the reads again on four decoding threads */
	read_threads = 4;
	test_round_trip(NULL, false);
	test_round_trip(&xor_codec, true);
	test_window(false, false);
	/* read block by block, each file reads as merged */
	CHECK(blocks_differ == 0);
	CHECK(blocks_whole > 0);
	return test_result();
}
