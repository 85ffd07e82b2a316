/*
 * test_frames.c - lib/frames.c: a callchain's frames leaf first, the
 * context markers left out, each frame's cpumode and which are return
 * addresses.
 */
#include "frames.h"
#include "harness.h"

static void test_contexts(void)
{
	const uint64_t chain[] = {
		(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
		0xffffffff81000020ULL,
		(uint64_t)PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000,
		(uint64_t)PERF_CONTEXT_GUEST, 0x1000,
	};
	struct pipe_sample s = PIPE_INIT(s);
	struct frames walk;
	struct frame f;

	s.misc = PERF_RECORD_MISC_KERNEL;
	s.ip = 0xffffffff81000010ULL;
	s.callchain = chain;
	s.nr_callchain = sizeof(chain) / sizeof(chain[0]);
	frames_init(&walk, &s);
	CHECK(frames_next(&walk, &f));
	CHECK(f.addr == 0xffffffff81000010ULL &&
	      f.misc == PERF_RECORD_MISC_KERNEL && !f.ret);
	CHECK(frames_next(&walk, &f));
	CHECK(f.addr == 0xffffffff81000020ULL && f.ret);
	/* a new context: its first address is where it was interrupted */
	CHECK(frames_next(&walk, &f));
	CHECK(f.addr == 0x401000 && f.misc == PERF_RECORD_MISC_USER &&
	      !f.ret);
	CHECK(frames_next(&walk, &f) && f.addr == 0x402000 && f.ret);
	CHECK(frames_next(&walk, &f) && f.addr == 0x403000 && f.ret);
	/* a context this walker does not name: cpumode unknown */
	CHECK(frames_next(&walk, &f));
	CHECK(f.addr == 0x1000 && !f.ret &&
	      f.misc == PERF_RECORD_MISC_CPUMODE_UNKNOWN);
	CHECK(!frames_next(&walk, &f));
	CHECK(!frames_next(&walk, &f));
}

/* Before any marker, the sample's own misc; no callchain, no frames. */
static void test_plain(void)
{
	const uint64_t chain[] = { 0x10, 0x20 };
	struct pipe_sample s = PIPE_INIT(s);
	struct frames walk;
	struct frame f;

	s.misc = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP;
	frames_init(&walk, &s);
	CHECK(!frames_next(&walk, &f));
	s.callchain = chain;
	s.nr_callchain = 2;
	frames_init(&walk, &s);
	CHECK(frames_next(&walk, &f) && f.addr == 0x10 && !f.ret &&
	      f.misc == (PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP));
	CHECK(frames_next(&walk, &f) && f.addr == 0x20 && f.ret);
	CHECK(!frames_next(&walk, &f));
}

int main(void)
{
	test_contexts();
	test_plain();
	return test_result();
}
