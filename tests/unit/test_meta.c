/*
 * test_meta.c - metadata round trip through meta_encode/meta_decode, the
 * id map, damaged metadata, and the sample decoder on hand-made records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "err.h"
#include "harness.h"
#include "meta.h"

static struct meta *make_meta(void)
{
	struct perf_event_attr a = { 0 };
	uint64_t ids[3] = { 11, 12, 13 }, ids2[2] = { 21, 22 };
	int32_t cpus[3] = { 0, 1, 5 };
	struct meta *m = meta_new();
	struct pipe_err err;

	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	a.sample_id_all = 1;
	CHECK(meta_add_event(m, &a, "cpu-clock", ids, 3, &err) == 0);
	a.config = 1;
	CHECK(meta_add_event(m, &a, "task-clock", ids2, 2, &err) == 1);
	CHECK(meta_set_streams(m, 3, cpus, &err) == 0);
	CHECK(meta_set_prop(m, "hostname", "box", &err) == 0);
	CHECK(meta_set_prop(m, "release", "6.1", &err) == 0);
	CHECK(meta_set_prop(m, "hostname", "box2", &err) == 0);
	return m;
}

static void test_roundtrip(void)
{
	struct meta *m = make_meta(), *d = NULL;
	const struct pipe_meta *v;
	const struct pipe_meta_event *evs;
	struct pipe_err err;
	uint8_t *buf;
	size_t len, cut;

	CHECK(meta_event_of_id(m, 12) == 0);
	CHECK(meta_event_of_id(m, 22) == 1);
	CHECK(meta_event_of_id(m, 99) == PIPE_EVENT_NONE);
	CHECK(meta_encode(m, &buf, &len, &err) == 0);
	CHECK(len % 8 == 0);
	CHECK(meta_decode(&d, buf, len, "t.dat", &err) == 0);
	if (d) {
		v = meta_view(d);
		CHECK(v->nr_events == 2);
		CHECK_STR(v->events[1].name, "task-clock");
		CHECK(v->events[1].attr->config == 1);
		CHECK(v->events[0].nr_ids == 3 && v->events[0].ids[2] == 13);
		CHECK(v->nr_streams == 3 && v->stream_cpu[2] == 5);
		CHECK_STR(meta_prop(d, "hostname"), "box2");
		CHECK_STR(meta_prop(d, "release"), "6.1");
		CHECK(meta_event_of_id(d, 21) == 1);
		/* asked again with no event added: the same events, not
		 * reallocated (a view asked for every sample cannot fail;
		 * ASan's realloc always moves) */
		evs = v->events;
		CHECK(meta_view(d) == v && v->events == evs);
		meta_free(d);
	}
	/* every truncation is refused or parses a prefix; none crashes */
	for (cut = 0; cut < len; cut++) {
		d = NULL;
		if (meta_decode(&d, buf, cut, "t.dat", &err) == 0)
			meta_free(d);
	}
	/* an item length past the end is refused with the file named */
	buf[4] = 0xff;
	buf[5] = 0xff;
	CHECK(meta_decode(&d, buf, len, "t.dat", &err) == -EINVAL);
	CHECK_STR(err.msg, "cannot read 't.dat': metadata item runs past its block");
	free(buf);
	meta_free(m);
}

static void test_decode(void)
{
	struct meta *m = make_meta();
	uint64_t rec[16] = { 0 };
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct pipe_record r = { h, 0, 0, PIPE_EVENT_NONE };
	struct pipe_sample s;
	struct pipe_sample_id id;

	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	rec[1] = 22;                       /* identifier: task-clock */
	rec[2] = 0x401000;                 /* ip */
	rec[3] = 77 | ((uint64_t)78 << 32); /* pid, tid */
	rec[4] = 123456789;                /* time */
	rec[5] = 1;                        /* cpu */
	rec[6] = 250000;                   /* period */
	rec[7] = 3;                        /* callchain nr */
	rec[8] = PERF_CONTEXT_USER;
	rec[9] = 0x401000;
	rec[10] = 0x402000;
	h->size = 11 * 8;
	CHECK(decode_sample(m, &r, &s) == 0);
	CHECK(s.event == 1 && s.id == 22 && s.ip == 0x401000);
	CHECK(s.pid == 77 && s.tid == 78 && s.time == 123456789);
	CHECK(s.cpu == 1 && s.period == 250000);
	CHECK(s.nr_callchain == 3 && s.callchain[2] == 0x402000);
	CHECK(decode_time(m, h) == 123456789);
	/* a callchain longer than the record is refused */
	rec[7] = 1000;
	CHECK(decode_sample(m, &r, &s) == -EINVAL);
	CHECK(s.callchain == NULL);
	h->size = 5 * 8;
	CHECK(decode_sample(m, &r, &s) == -EINVAL);
	/* a COMM with a sample_id_all trailer: TID TIME CPU IDENTIFIER */
	{
		uint64_t full[7] = { 0 };

		full[1] = 5 | ((uint64_t)5 << 32);
		memcpy(&full[2], "bash\0\0\0", 8);
		full[3] = 5 | ((uint64_t)6 << 32);
		full[4] = 999;
		full[5] = 0;
		full[6] = 11;
		struct perf_event_header fh = { PERF_RECORD_COMM, 0, 7 * 8 };

		memcpy(full, &fh, sizeof(fh));
		r.hdr = (struct perf_event_header *)full;
		CHECK(decode_sample_id(m, &r, &id) == 0);
		CHECK(id.time == 999 && id.tid == 6 && id.event == 0);
		CHECK(decode_time(m, r.hdr) == 999);
		fh.size = 3 * 8;
		memcpy(full, &fh, sizeof(fh));
		CHECK(decode_sample_id(m, &r, &id) == -EINVAL);
	}
	meta_free(m);
}

/* perf record's two events of one sample_type: ID, not IDENTIFIER */
static void test_decode_id(void)
{
	struct perf_event_attr a = { 0 };
	uint64_t ids[1] = { 31 }, ids2[1] = { 32 }, rec[8] = { 0 };
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct pipe_record r = { h, 0, 0, PIPE_EVENT_NONE };
	struct meta *m = meta_new();
	struct pipe_sample s;
	struct pipe_sample_id sid;
	struct pipe_err err;

	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	a.sample_id_all = 1;
	CHECK(meta_add_event(m, &a, "cpu-clock", ids, 1, &err) == 0);
	a.config = 1;
	CHECK(meta_add_event(m, &a, "task-clock", ids2, 1, &err) == 1);
	h->type = PERF_RECORD_SAMPLE;
	h->size = 7 * 8;
	rec[1] = 0x401000;                  /* ip */
	rec[2] = 7 | ((uint64_t)8 << 32);   /* pid, tid */
	rec[3] = 1000;                      /* time */
	rec[4] = 32;                        /* id: task-clock */
	rec[5] = 1;                         /* cpu */
	rec[6] = 250000;                    /* period */
	/* the decoder writes every field: what the record lacks reads 0,
	 * whatever the struct held before (a sink reuses one) */
	memset(&s, 0xa5, sizeof(s));
	CHECK(decode_sample(m, &r, &s) == 0);
	CHECK(s.event == 1 && s.id == 32 && s.period == 250000);
	CHECK(s.size == sizeof(s) && s.sample_type == a.sample_type);
	CHECK(s.misc == 0 && s.reserved == 0 && s.cpu_res == 0);
	CHECK(s.ip == 0x401000 && s.pid == 7 && s.tid == 8 && s.time == 1000);
	CHECK(s.cpu == 1 && s.addr == 0 && s.stream_id == 0);
	CHECK(s.callchain == NULL && s.nr_callchain == 0);
	CHECK(s.raw == NULL && s.raw_size == 0 && s.reserved2 == 0);
	CHECK(s.weight == 0 && s.data_src == 0 && s.transaction == 0);
	CHECK(s.phys_addr == 0 && s.cgroup == 0);
	/* and a record it refuses leaves nothing of the one before */
	h->type = PERF_RECORD_COMM;
	CHECK(decode_sample(m, &r, &s) == -EINVAL);
	CHECK(s.size == sizeof(s) && s.ip == 0 && s.pid == 0 && s.time == 0);
	CHECK(s.period == 0 && s.sample_type == 0 && s.id == 0);
	h->type = PERF_RECORD_SAMPLE;
	/* an EXIT's trailer: TID TIME ID CPU */
	{
		uint64_t ex[9] = { 0 };
		struct perf_event_header eh = { PERF_RECORD_EXIT, 0, 9 * 8 };

		memcpy(ex, &eh, sizeof(eh));
		ex[5] = 7 | ((uint64_t)8 << 32); /* TID */
		ex[6] = 2000;                    /* TIME */
		ex[7] = 31;                      /* ID: cpu-clock */
		ex[8] = 1;                       /* CPU */
		r.hdr = (struct perf_event_header *)ex;
		CHECK(decode_sample_id(m, &r, &sid) == 0);
		CHECK(sid.event == 0 && sid.time == 2000 && sid.cpu == 1);
		ex[7] = 32;
		CHECK(decode_sample_id(m, &r, &sid) == 0 && sid.event == 1);
	}
	meta_free(m);
}

/* A PERF_SAMPLE_RAW size near 4 GiB must not wrap its padded length to
 * a small one and pass the bounds check (a sink reading raw would then
 * run off the record). */
static void test_raw_size_cannot_wrap(void)
{
	struct perf_event_attr a = { 0 };
	uint64_t ids[1] = { 1 };
	struct meta *m = meta_new();
	uint64_t rec[4] = { 0 };
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct pipe_record r = { h, 0, 0, PIPE_EVENT_NONE };
	struct pipe_sample s;
	struct pipe_err err;
	uint32_t sizes[] = { 0xfffffffcu, 0xfffffff9u, 0xffffffffu, 13, 17 };
	size_t i;

	a.size = sizeof(a);
	a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	CHECK(meta_add_event(m, &a, "raw", ids, 1, &err) == 0);
	h->type = PERF_RECORD_SAMPLE;
	h->size = sizeof(rec);
	rec[1] = 42;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t sz = sizes[i];

		memcpy(&rec[2], &sz, 4);
		CHECK(decode_sample(m, &r, &s) == -EINVAL);
		CHECK(s.raw == NULL && s.raw_size == 0);
	}
	/* 4 bytes of size and 12 of data fill the 16 left exactly */
	memcpy(&rec[2], &(uint32_t){ 12 }, 4);
	CHECK(decode_sample(m, &r, &s) == 0);
	CHECK(s.raw_size == 12 && s.time == 42);
	/* a callchain count whose byte length wraps is refused too */
	a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	meta_free(m);
	m = meta_new();
	CHECK(meta_add_event(m, &a, "cc", ids, 1, &err) == 0);
	rec[2] = UINT64_C(1) << 61;
	CHECK(decode_sample(m, &r, &s) == -EINVAL);
	CHECK(s.callchain == NULL);
	meta_free(m);
}

/* A record shorter than the sample_id_all trailer its event declares:
 * the id is looked for inside it, never before it (the offset wrapped
 * below 0 and passed the bounds check; found by fuzz_decode). */
static void test_short_trailer_stays_inside(void)
{
	struct perf_event_attr a = { 0 };
	uint64_t ids[1] = { 31 }, ids2[1] = { 32 };
	struct meta *m = meta_new();
	struct perf_event_header *h = malloc(16);
	struct pipe_record r = { h, 0, 0, PIPE_EVENT_NONE };
	struct pipe_sample_id sid;
	struct pipe_err err;

	CHECK(h != NULL);
	a.size = sizeof(a);
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ID |
			PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU;
	a.sample_id_all = 1;
	CHECK(meta_add_event(m, &a, "cpu-clock", ids, 1, &err) == 0);
	a.config = 1;
	CHECK(meta_add_event(m, &a, "task-clock", ids2, 1, &err) == 1);
	memset(h, 0, 16);
	h->type = PERF_RECORD_EXIT;
	h->size = 16; /* the trailer alone would take 24 bytes */
	CHECK(decode_sample_id(m, &r, &sid) == -EINVAL);
	free(h);
	meta_free(m);
}

int main(void)
{
	test_roundtrip();
	test_decode();
	test_decode_id();
	test_raw_size_cannot_wrap();
	test_short_trailer_stays_inside();
	return test_result();
}
