/*
 * fuzz_symbolizer.c - the symbolizer's sideband handling: the input is a
 * run of perf records (MMAP, MMAP2, COMM, FORK, EXIT and anything else),
 * each applied as the reader would hand it over (size clamped to what is
 * left, 8-aligned), and after each one an address of its pid resolved.
 * File names are made relative (to the working directory, where the
 * harness runs from the repository), so the run never opens the
 * machine's devices or /proc: ELF parsing has fuzz_elfsyms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fuzz.h"
#include "meta.h"
#include "symbolizer.h"

static char kallsyms[64];

static void on_warn(void *opaque, const char *line)
{
	(void)opaque;
	(void)line;
}

static void cleanup(void)
{
	unlink(kallsyms);
}

/* An empty kallsyms of this process. */
static void setup(void)
{
	FILE *f;

	snprintf(kallsyms, sizeof(kallsyms), "/tmp/pipe-fuzz-kallsyms.%ld",
		 (long)getpid());
	f = fopen(kallsyms, "w");
	if (f)
		fclose(f);
	atexit(cleanup);
}

/* No absolute names: MMAP's filename starts at byte 40, MMAP2's at 72. */
static void relative_name(uint8_t *rec, size_t size)
{
	const struct perf_event_header *h = (const void *)rec;
	size_t at = h->type == PERF_RECORD_MMAP ? 40 :
		    h->type == PERF_RECORD_MMAP2 ? 72 : 0;

	if (at && at < size && rec[at] == '/')
		rec[at] = '.';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbolizer_opts o = { 0 };
	struct symbolizer *s = NULL;
	struct pipe_symbol sym;
	struct pipe_err err;
	struct meta *m;
	size_t off = 0;
	uint8_t *rec;

	if (!kallsyms[0])
		setup();
	m = meta_new();
	o.demangle = true;
	o.kallsyms = kallsyms;
	o.warn = on_warn;
	if (!m || symbolizer_new(&s, &o, m, &err) < 0)
		goto out;
	rec = malloc(0x10000);
	if (!rec)
		goto out;
	while (size - off >= 8) {
		struct perf_event_header *h = (struct perf_event_header *)rec;
		size_t n;
		uint32_t pid;
		uint64_t ip;

		memcpy(rec, data + off, 8);
		n = h->size & ~7u;
		if (n < 8 || n > size - off)
			n = (size - off) & ~(size_t)7;
		if (n > 0xfff8)
			n = 0xfff8;
		memcpy(rec, data + off, n);
		h->size = (uint16_t)n;
		relative_name(rec, n);
		symbolizer_apply(s, h);
		pid = n >= 12 ? (uint32_t)(rec[8] | rec[9] << 8) : 0;
		memcpy(&ip, rec + (n >= 24 ? 16 : 0), 8);
		symbolizer_resolve(s, pid, ip, h->misc, &sym);
		symbolizer_comm(s, pid);
		off += n;
	}
	free(rec);
out:
	symbolizer_free(s);
	meta_free(m);
	return 0;
}
