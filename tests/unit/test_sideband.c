/*
 * test_sideband.c - lib/sideband.c: each record type's fields, and the
 * records too short for their type (or with a name that has no NUL)
 * refused, so the symbolizer and the json sink count the same damage;
 * and the host's struct pipe_sideband (record/decode.c) filled from it.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "decode.h"
#include "harness.h"
#include "sideband.h"

/* One record of up to 128 bytes, 8-byte aligned like a ring's. */
union rec {
	struct perf_event_header h;
	uint64_t align;
	uint8_t b[128];
};

static void rec_init(union rec *r, uint32_t type, uint16_t misc,
		     uint16_t size)
{
	memset(r, 0, sizeof(*r));
	r->h.type = type;
	r->h.misc = misc;
	r->h.size = size;
}

static void put32(union rec *r, size_t off, uint32_t v)
{
	memcpy(r->b + off, &v, sizeof(v));
}

static void put64(union rec *r, size_t off, uint64_t v)
{
	memcpy(r->b + off, &v, sizeof(v));
}

static void test_mmap(void)
{
	struct sideband sb;
	union rec r;

	rec_init(&r, PERF_RECORD_MMAP, 0, 48);
	put32(&r, 8, 7);
	put32(&r, 12, 8);
	put64(&r, 16, 0x400000);
	put64(&r, 24, 0x1000);
	put64(&r, 32, 0x200);
	memcpy(r.b + 40, "/bin/x", 7);
	CHECK(sideband_decode(&r.h, &sb) == 0);
	CHECK(sb.pid == 7 && sb.tid == 8);
	CHECK(sb.start == 0x400000 && sb.len == 0x1000 && sb.pgoff == 0x200);
	CHECK_STR(sb.name, "/bin/x");
	CHECK(!sb.build_id && sb.build_id_len == 0);

	/* the kernel pads the name to 8 bytes: 44 bytes is damage even with
	 * a NUL inside */
	memcpy(r.b + 40, "/x", 3);
	r.h.size = 44;
	CHECK(sideband_decode(&r.h, &sb) == -EINVAL);
	r.h.size = 48;
	memset(r.b + 40, 'x', 8);
	CHECK(sideband_decode(&r.h, &sb) == -EINVAL); /* no NUL */
}

static void test_mmap2(void)
{
	struct sideband sb;
	union rec r;

	rec_init(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, 88);
	put32(&r, 8, 9);
	put64(&r, 16, 0x1000);
	put64(&r, 24, 0x2000);
	r.b[40] = 20;
	memset(r.b + 44, 0xab, 20);
	put32(&r, 64, 5); /* PROT_READ | PROT_EXEC */
	memcpy(r.b + 72, "/lib/y.so", 10);
	CHECK(sideband_decode(&r.h, &sb) == 0);
	CHECK(sb.pid == 9 && sb.build_id == r.b + 44 &&
	      sb.build_id_len == 20 && sb.prot == 5);
	CHECK_STR(sb.name, "/lib/y.so");

	/* a length out of range means the bit was set over maj/min/ino */
	r.b[40] = 21;
	CHECK(sideband_decode(&r.h, &sb) == 0);
	CHECK(!sb.build_id && sb.build_id_len == 0);
	r.h.misc = 0;
	r.b[40] = 20;
	CHECK(sideband_decode(&r.h, &sb) == 0);
	CHECK(!sb.build_id);

	r.h.size = 79;
	memcpy(r.b + 72, "/y", 3);
	CHECK(sideband_decode(&r.h, &sb) == -EINVAL);
}

static void test_tasks(void)
{
	struct sideband sb;
	union rec r;

	rec_init(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 24);
	put32(&r, 8, 3);
	put32(&r, 12, 4);
	memcpy(r.b + 16, "sh", 3);
	CHECK(sideband_decode(&r.h, &sb) == 0);
	CHECK(sb.pid == 3 && sb.tid == 4 && sb.exec);
	CHECK_STR(sb.name, "sh");
	r.h.size = 16;
	CHECK(sideband_decode(&r.h, &sb) == -EINVAL);

	rec_init(&r, PERF_RECORD_FORK, 0, 32);
	put32(&r, 8, 5);
	put32(&r, 12, 1);
	put32(&r, 16, 6);
	put32(&r, 20, 2);
	put64(&r, 24, 1000);
	CHECK(sideband_decode(&r.h, &sb) == 0);
	CHECK(sb.type == PERF_RECORD_FORK && sb.pid == 5 && sb.ppid == 1 &&
	      sb.tid == 6 && sb.ptid == 2 && sb.time == 1000);
	r.h.type = PERF_RECORD_EXIT;
	r.h.size = 28; /* no room for the time */
	CHECK(sideband_decode(&r.h, &sb) == -EINVAL);

	rec_init(&r, PERF_RECORD_SAMPLE, 0, 16);
	CHECK(sideband_decode(&r.h, &sb) == -ENOENT);
	rec_init(&r, PERF_RECORD_MMAP, 0, 4); /* shorter than its header */
	CHECK(sideband_decode(&r.h, &sb) == -EINVAL);
}

static void test_lost_and_state(void)
{
	uint64_t lost = 0;
	union rec r;

	rec_init(&r, PERF_RECORD_LOST, 0, 24);
	put64(&r, 16, 12);
	CHECK(sideband_lost(&r.h, &lost) == 0 && lost == 12);
	r.h.size = 16;
	CHECK(sideband_lost(&r.h, &lost) == -EINVAL);
	rec_init(&r, PERF_RECORD_LOST_SAMPLES, 0, 16);
	put64(&r, 8, 5);
	CHECK(sideband_lost(&r.h, &lost) == 0 && lost == 5);
	r.h.size = 8;
	CHECK(sideband_lost(&r.h, &lost) == -EINVAL);
	rec_init(&r, PERF_RECORD_COMM, 0, 24);
	CHECK(sideband_lost(&r.h, &lost) == -ENOENT);

	rec_init(&r, PERF_RECORD_THROTTLE, 0, 24);
	CHECK(sideband_lost(&r.h, &lost) == -ENOENT);

	CHECK(sideband_is_state(PERF_RECORD_MMAP2));
	CHECK(sideband_is_state(PERF_RECORD_KSYMBOL));
	CHECK(!sideband_is_state(PERF_RECORD_SAMPLE));
	CHECK(!sideband_is_state(PERF_RECORD_LOST));
	CHECK(sideband_is_task(PERF_RECORD_EXIT));
	CHECK(!sideband_is_task(PERF_RECORD_KSYMBOL));
}

static void test_loss(void)
{
	struct sideband sb;
	union rec r;

	rec_init(&r, PERF_RECORD_LOST, 0, 24);
	put64(&r, 8, 77);
	put64(&r, 16, 12);
	CHECK(sideband_decode_loss(&r.h, &sb) == 0);
	CHECK(sb.id == 77 && sb.lost == 12);
	rec_init(&r, PERF_RECORD_UNTHROTTLE, 0, 32);
	put64(&r, 8, 500);
	put64(&r, 16, 78);
	CHECK(sideband_decode_loss(&r.h, &sb) == 0);
	CHECK(sb.type == PERF_RECORD_UNTHROTTLE && sb.time == 500 &&
	      sb.id == 78);
	r.h.size = 16;
	CHECK(sideband_decode_loss(&r.h, &sb) == -EINVAL);
	rec_init(&r, PERF_RECORD_MMAP, 0, 48);
	CHECK(sideband_decode_loss(&r.h, &sb) == -ENOENT);
}

/* What a plugin's sideband callback is given: the same fields, the
 * record's own time first and the body's when it has none. */
static void test_host_view(void)
{
	struct pipe_sideband out;
	struct pipe_record rec = { .time = 0 };
	union rec r;

	rec.hdr = &r.h;
	rec_init(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, 88);
	put32(&r, 8, 9);
	put32(&r, 12, 10);
	put64(&r, 16, 0x1000);
	put64(&r, 24, 0x2000);
	put64(&r, 32, 0x30);
	r.b[40] = 4;
	memset(r.b + 44, 0xcd, 4);
	put32(&r, 64, 1);
	memcpy(r.b + 72, "/lib/z.so", 10);
	CHECK(decode_sideband(&rec, &out) == 0);
	CHECK(out.size == sizeof(out) && out.type == PIPE_SB_MMAP &&
	      out.rec == &rec);
	CHECK(out.pid == 9 && out.tid == 10 && out.addr == 0x1000 &&
	      out.len == 0x2000 && out.pgoff == 0x30 && out.prot == 1);
	CHECK(out.build_id == r.b + 44 && out.build_id_size == 4);
	CHECK_STR(out.filename, "/lib/z.so");
	CHECK(!out.comm);

	rec_init(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 24);
	put32(&r, 8, 3);
	put32(&r, 12, 4);
	memcpy(r.b + 16, "sh", 3);
	CHECK(decode_sideband(&rec, &out) == 0);
	CHECK(out.type == PIPE_SB_COMM && out.exec == 1 && !out.filename);
	CHECK_STR(out.comm, "sh");

	rec_init(&r, PERF_RECORD_EXIT, 0, 32);
	put32(&r, 8, 5);
	put32(&r, 12, 1);
	put64(&r, 24, 900);
	CHECK(decode_sideband(&rec, &out) == 0);
	CHECK(out.type == PIPE_SB_EXIT && out.pid == 5 && out.ppid == 1 &&
	      out.time == 900);
	rec.time = 950;
	CHECK(decode_sideband(&rec, &out) == 0 && out.time == 950);

	rec_init(&r, PERF_RECORD_THROTTLE, 0, 24);
	put64(&r, 8, 800);
	put64(&r, 16, 42);
	CHECK(decode_sideband(&rec, &out) == 0);
	CHECK(out.type == PIPE_SB_THROTTLE && out.id == 42 &&
	      out.time == 950);
	rec_init(&r, PERF_RECORD_LOST_SAMPLES, 0, 16);
	put64(&r, 8, 6);
	CHECK(decode_sideband(&rec, &out) == 0);
	CHECK(out.type == PIPE_SB_LOST && out.lost == 6);
	r.h.size = 12;
	CHECK(decode_sideband(&rec, &out) == -EINVAL);
	rec_init(&r, PERF_RECORD_SAMPLE, 0, 16);
	CHECK(decode_sideband(&rec, &out) == -ENOENT);
}

int main(void)
{
	test_mmap();
	test_mmap2();
	test_tasks();
	test_lost_and_state();
	test_loss();
	test_host_view();
	return test_result();
}
