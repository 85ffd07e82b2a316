/*
 * fuzz_pdread.c - the perf.data reader (formats/pdread.c) on a whole file
 * in memory: file mode or pipe mode (the header says which), attrs, ids,
 * features, compressed records, the id index; every record handed out is
 * read in full and its event and cpu looked up, as the perfdata source
 * does.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fdio.h"
#include "fuzz.h"
#include "pdread.h"

#define FUZZ_RECORDS 100000 /* records read per input at most */

static volatile uint64_t sink;

/* One memory file for every input: a regular file, as perf.data on disk
 * (pipe mode reads it forward only, as it would a pipe). */
static int input_fd(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0)
		fd = memfd_create("fuzz.data", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	if (fdio_write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	return fd;
}

static void use_info(const struct pdread_info *in)
{
	uint32_t i, j;

	for (i = 0; i < in->nr_events; i++) {
		char name[96];

		pdread_attr_name((const void *)in->events[i].attr, name,
				 sizeof(name));
		sink += strlen(name) + in->events[i].attr_size;
		if (in->events[i].name)
			sink += strlen(in->events[i].name);
		for (j = 0; j < in->events[i].nr_ids; j++)
			sink += in->events[i].ids[j];
	}
	for (i = 0; i < in->nr_build_ids; i++)
		sink += strlen(in->build_ids[i].path) + in->build_ids[i].len;
	if (in->hostname)
		sink += strlen(in->hostname);
	if (in->cmdline)
		sink += strlen(in->cmdline);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct perf_event_header *h;
	struct pdread *r = NULL;
	char msg[512];
	uint32_t n = 0, i;
	int32_t cpu, tid;
	int ret;

	if (pdread_open(&r, input_fd(data, size), "fuzz.data", msg,
			sizeof(msg)) < 0) {
		sink += strlen(msg);
		return 0;
	}
	use_info(pdread_info(r));
	while (n++ < FUZZ_RECORDS) {
		ret = pdread_next(r, &h);
		if (ret != 0) {
			if (ret < 0)
				sink += strlen(pdread_error(r));
			break;
		}
		if (h->size < sizeof(*h) || ((uintptr_t)h & 7))
			abort(); /* the reader promised whole, aligned records */
		for (i = 0; i < h->size; i++)
			sink += ((const uint8_t *)h)[i];
		sink += pdread_event_of(r, h);
		if (pdread_where(r, h, &cpu, &tid) == 0)
			sink += (uint32_t)cpu + (uint32_t)tid;
	}
	use_info(pdread_info(r));
	sink += pdread_stats(r)->records;
	pdread_free(r);
	return 0;
}
