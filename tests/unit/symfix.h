/*
 * symfix.h - what the symbolizer unit tests (test_symbolizer.c,
 * test_symstate.c) share: the fixture directory, warnings caught, the
 * expected answers read with nm, readelf and objdump, records built and
 * applied, and the check of one resolved address.
 */
#ifndef PIPE_TEST_SYMFIX_H
#define PIPE_TEST_SYMFIX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "symbolizer.h"

#define PIE_BASE UINT64_C(0x555555554000)
#define LIB_BASE UINT64_C(0x7f1234500000)
/* above pid_max (4194304 at most), so never a live process's map; per
 * test process, so concurrent suites do not share the file */
#define FAKE_PID (UINT32_C(1000000000) + (uint32_t)getpid() % 100000u)

static char fx[4096];     /* fixture dir */
static int nr_warnings;
static char last_warning[1024];

static inline void on_warn(void *opaque, const char *line)
{
	(void)opaque;
	nr_warnings++;
	snprintf(last_warning, sizeof(last_warning), "%s", line);
}

/* First line of a command's output, trimmed; "" if none. */
static inline void run_line(const char *cmd, char *buf, size_t cap)
{
	FILE *f = popen(cmd, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)cap, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	pclose(f);
}

/* The address of `sym` in nm's output for path (-D for dynamic). */
static inline uint64_t nm_addr(const char *path, const char *sym, bool dyn)
{
	char cmd[8192], line[256];

	snprintf(cmd, sizeof(cmd),
		 "nm %s --defined-only '%s' | awk '$3 == \"%s\" {print $1}'",
		 dyn ? "-D" : "", path, sym);
	run_line(cmd, line, sizeof(line));
	return line[0] ? strtoull(line, NULL, 16) : 0;
}

/* The build id of path as readelf prints it (hex), "" if none. */
static inline void build_id_hex(const char *path, char *hex, size_t cap)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd),
		 "readelf -n '%s' | sed -n 's/.*Build ID: //p'", path);
	run_line(cmd, hex, cap);
}

/* The bytes of the hex build id `hex` into id (20 at most): how many. */
static inline uint32_t build_id_parse(const char *hex, uint8_t *id)
{
	uint32_t n = 0;

	while (hex[2 * n] && hex[2 * n + 1] && n < 20) {
		char byte[3] = { hex[2 * n], hex[2 * n + 1], 0 };

		id[n++] = (uint8_t)strtoul(byte, NULL, 16);
	}
	return n;
}

static inline uint32_t build_id_of(const char *path, uint8_t *id)
{
	char hex[128];

	build_id_hex(path, hex, sizeof(hex));
	return build_id_parse(hex, id);
}

static inline void apply(struct symbolizer *s, const void *rec)
{
	symbolizer_apply(s, rec);
}

static inline void mmap2(struct symbolizer *s, uint32_t pid, uint64_t start,
			 uint64_t len, uint64_t pgoff, const char *name,
			 const uint8_t *id, uint32_t id_len)
{
	uint64_t buf[(72 + 4096 + 8) / 8] = { 0 };
	struct perf_event_header *h = (void *)buf;
	char *p = (char *)buf;
	size_t n = strlen(name) + 1;

	h->type = PERF_RECORD_MMAP2;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)((72 + n + 7) & ~(size_t)7);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, &pid, 4);
	memcpy(p + 16, &start, 8);
	memcpy(p + 24, &len, 8);
	memcpy(p + 32, &pgoff, 8);
	if (id) {
		h->misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		p[40] = (char)id_len;
		memcpy(p + 44, id, id_len < 20 ? id_len : 20);
	}
	memcpy(p + 72, name, n);
	apply(s, buf);
}

/*
 * Map the executable PT_LOADs of `elf` (as readelf lists them) at `base`
 * the way the kernel does, under the recorded `name`.  `pgoff_by_vaddr`:
 * the file's offsets are unknown (a debug file), take them from vaddr.
 */
static inline int map_elf(struct symbolizer *s, uint32_t pid, const char *elf,
			  const char *name, uint64_t base, const uint8_t *id,
			  uint32_t id_len, bool pgoff_by_vaddr)
{
	char cmd[8192], line[512];
	FILE *f;
	int nr = 0;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", elf);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, va, pa, fsz, msz;
		char flags[8] = "";

		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx %7[RWE ]",
			   &off, &va, &pa, &fsz, &msz, flags) < 6)
			continue;
		if (!strchr(flags, 'E'))
			continue;
		mmap2(s, pid, base + (va & ~0xfffULL),
		      ((va + msz + 0xfff) & ~0xfffULL) - (va & ~0xfffULL),
		      pgoff_by_vaddr ? va & ~0xfffULL : off & ~0xfffULL, name,
		      id, id_len);
		nr++;
	}
	pclose(f);
	return nr;
}

static inline struct symbolizer *new_sym(bool demangle, const char *debug_dir,
					 const char *kallsyms, const struct meta *m)
{
	struct symbolizer_opts o = { 0 };
	struct symbolizer *s = NULL;
	struct pipe_err err;

	o.demangle = demangle;
	o.debug_dir = debug_dir;
	o.kallsyms = kallsyms;
	o.warn = on_warn;
	if (symbolizer_new(&s, &o, m, &err) < 0) {
		printf("symbolizer_new: %s\n", err.msg);
		exit(1);
	}
	return s;
}

/* Resolve base + vaddr in pid and check the name and the offset. */
static inline void check_sym(struct symbolizer *s, uint32_t pid, uint64_t ip,
			     const char *want, uint64_t want_off)
{
	struct pipe_symbol sym;

	CHECK(symbolizer_resolve(s, pid, ip, PERF_RECORD_MISC_USER, &sym) ==
	      0);
	CHECK_STR(sym.name, want);
	CHECK(sym.offset == want_off);
	CHECK(sym.flags & PIPE_SYM_RESOLVED);
}

static inline void path_of(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", fx, name);
}

/* The debug file of build-id `hex` in the build-id tree under root. */
static inline void debug_file_of(char *buf, size_t cap, const char *root,
				 const char *hex)
{
	snprintf(buf, cap, "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
}

/* Map the fixture `name` (its path into buf) whole for pid at base, as
 * its own name and with no build id. */
static inline void map_fixture(struct symbolizer *s, uint32_t pid,
			       const char *name, uint64_t base, char *buf,
			       size_t cap)
{
	path_of(buf, cap, name);
	CHECK(map_elf(s, pid, buf, buf, base, NULL, 0, false) > 0);
}

#endif
