/*
 * test_symstate.c - the symbolizer's state from sideband records: kallsyms
 * with a KASLR shift, process state (FORK, COMM exec, EXIT), maps that
 * replace others, the vDSO, malformed and random records; running out of
 * memory said once, naming what was not kept.  Fixture
 * binaries and expected values as in test_symbolizer.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "fixtures.h"
#include "harness.h"
#include "meta.h"
#include "rnd.h"
#include "symbolizer.h"
#include "symfix.h"
#include "symstate.h"

static void test_kallsyms(void)
{
	char path[4200];
	struct meta *m = meta_new();
	struct symbolizer *s;
	struct pipe_symbol sym;
	struct pipe_err err;
	uint64_t shift = UINT64_C(0x1a000000);
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms.test", fx);
	f = fopen(path, "w");
	CHECK(f != NULL && m != NULL);
	if (!f || !m)
		return;
	fprintf(f, "ffffffff81000000 T _text\n"
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81001000 T do_syscall_64\n"
		   "ffffffff81001200 t helper_local\n"
		   "ffffffff81002000 D some_data\n"
		   "ffffffff81003000 T schedule\n"
		   "ffffffffc0001000 t e1000_xmit\t[e1000]\n");
	fclose(f);
	CHECK(meta_set_prop(m, "kernel_text", "ffffffff9b000000", &err) == 0);
	s = new_sym(true, NULL, path, m);
	CHECK(symbolizer_resolve(s, 1, 0xffffffff81001000ULL + shift + 0x10,
				 PERF_RECORD_MISC_KERNEL, &sym) == 0);
	CHECK_STR(sym.name, "do_syscall_64");
	CHECK(sym.offset == 0x10);
	CHECK(sym.sym_start == 0xffffffff81001000ULL + shift);
	CHECK_STR(sym.dso, "[kernel.kallsyms]");
	CHECK(sym.flags & PIPE_SYM_KERNEL);
	/* local text symbol; data ends the previous symbol's reach */
	CHECK(symbolizer_resolve(s, 1, 0xffffffff81001204ULL + shift,
				 PERF_RECORD_MISC_KERNEL, &sym) == 0);
	CHECK_STR(sym.name, "helper_local");
	/* a module's symbol: the module is its binary */
	CHECK(symbolizer_resolve(s, 1, 0xffffffffc0001004ULL + shift,
				 PERF_RECORD_MISC_KERNEL, &sym) == 0);
	CHECK_STR(sym.name, "e1000_xmit");
	CHECK_STR(sym.dso, "[e1000]");
	CHECK(sym.flags & PIPE_SYM_KERNEL);
	/* unknown cpumode, kernel half: still the kernel */
	CHECK(symbolizer_resolve(s, 1, 0xffffffff81003008ULL + shift,
				 PERF_RECORD_MISC_CPUMODE_UNKNOWN, &sym) == 0);
	CHECK_STR(sym.name, "schedule");
	/* without the shift, this address would be do_syscall_64 */
	CHECK(symbolizer_resolve(s, 1, 0xffffffff81001010ULL,
				 PERF_RECORD_MISC_KERNEL, &sym) == 0);
	CHECK(sym.name == NULL);
	CHECK(sym.flags & PIPE_SYM_KERNEL);
	symbolizer_free(s);

	/* a different kernel build recorded: one warning */
	nr_warnings = 0;
	CHECK(meta_set_prop(m, "kernel_build_id",
			    "0123456789abcdef0123456789abcdef01234567",
			    &err) == 0);
	s = new_sym(true, NULL, path, m);
	CHECK(symbolizer_resolve(s, 1, 0xffffffff81001000ULL + shift,
				 PERF_RECORD_MISC_KERNEL, &sym) == 0);
	CHECK(symbolizer_resolve(s, 1, 0xffffffff81001000ULL + shift,
				 PERF_RECORD_MISC_KERNEL, &sym) == 0);
	if (access("/sys/kernel/notes", R_OK) == 0) {
		CHECK(nr_warnings == 1);
		CHECK(strstr(last_warning, "kernel build-id") != NULL);
	}
	symbolizer_free(s);
	meta_free(m);
	unlink(path);
}

/* c++filt's output for one name */
static void comm(struct symbolizer *s, uint32_t pid, uint32_t tid,
		 const char *name, bool exec)
{
	uint64_t buf[8] = { 0 };
	struct perf_event_header *h = (void *)buf;
	char *p = (char *)buf;

	h->type = PERF_RECORD_COMM;
	h->misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0;
	h->size = 16 + 24;
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, &tid, 4);
	snprintf(p + 16, 16, "%s", name);
	apply(s, buf);
}

static void task(struct symbolizer *s, uint32_t type, uint32_t pid,
		 uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	uint32_t buf[8] = { 0 };
	struct perf_event_header *h = (void *)buf;

	h->type = type;
	h->size = 32;
	buf[2] = pid;
	buf[3] = ppid;
	buf[4] = tid;
	buf[5] = ptid;
	apply(s, buf);
}

static void test_process_state(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	char pie[4200];
	struct pipe_symbol sym;
	uint64_t a;
	uint32_t i;

	path_of(pie, sizeof(pie), "fx_pie");
	a = PIE_BASE + nm_addr(pie, "fx_alpha", false);
	CHECK_STR(symbolizer_comm(s, 100), "[unknown]");
	CHECK_STR(symbolizer_comm(s, 0), "swapper");
	comm(s, 100, 100, "parent", false);
	CHECK(map_elf(s, 100, pie, pie, PIE_BASE, NULL, 0, false) > 0);
	check_sym(s, 100, a, "fx_alpha", 0);
	/* a new process inherits maps and comm */
	task(s, PERF_RECORD_FORK, 101, 100, 101, 100);
	CHECK_STR(symbolizer_comm(s, 101), "parent");
	check_sym(s, 101, a, "fx_alpha", 0);
	/* a new thread shares its process's maps */
	task(s, PERF_RECORD_FORK, 100, 100, 102, 100);
	CHECK_STR(symbolizer_comm(s, 102), "parent");
	comm(s, 100, 102, "worker", false);
	CHECK_STR(symbolizer_comm(s, 102), "worker");
	CHECK_STR(symbolizer_comm(s, 100), "parent");
	/* exec drops the child's maps, not the parent's */
	comm(s, 101, 101, "child", true);
	CHECK_STR(symbolizer_comm(s, 101), "child");
	CHECK(symbolizer_resolve(s, 101, a, PERF_RECORD_MISC_USER, &sym) ==
	      0);
	CHECK(sym.name == NULL && sym.dso == NULL);
	check_sym(s, 100, a, "fx_alpha", 0);
	/* forked by a thread never named: the process's name */
	task(s, PERF_RECORD_FORK, 104, 100, 104, 177);
	CHECK_STR(symbolizer_comm(s, 104), "parent");
	/* forked before its parent was named: named as the parent is now */
	task(s, PERF_RECORD_FORK, 106, 105, 106, 105);
	CHECK_STR(symbolizer_comm(s, 106), "[unknown]");
	comm(s, 105, 105, "late", false);
	CHECK_STR(symbolizer_comm(s, 106), "late");
	/* a FORK merged after the child's own COMM keeps the newer name */
	comm(s, 103, 103, "renamed", false);
	task(s, PERF_RECORD_FORK, 103, 100, 103, 100);
	CHECK_STR(symbolizer_comm(s, 103), "renamed");
	check_sym(s, 103, a, "fx_alpha", 0);
	/* exited threads stay known for trailing samples ... */
	task(s, PERF_RECORD_EXIT, 101, 100, 101, 100);
	CHECK_STR(symbolizer_comm(s, 101), "child");
	/* ... until enough later exits push them out */
	for (i = 0; i < 1100; i++) {
		comm(s, 5000 + i, 5000 + i, "short", false);
		task(s, PERF_RECORD_EXIT, 5000 + i, 1, 5000 + i, 1);
	}
	CHECK_STR(symbolizer_comm(s, 101), "[unknown]");
	CHECK_STR(symbolizer_comm(s, 6099), "short");
	CHECK_STR(symbolizer_comm(s, 100), "parent");
	check_sym(s, 100, a, "fx_alpha", 0);
	symbolizer_free(s);
}

static void test_map_replacement(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	char pie[4200], lib[4200];
	uint64_t a, b;
	struct pipe_symbol sym;

	path_of(pie, sizeof(pie), "fx_pie");
	path_of(lib, sizeof(lib), "libfx.so");
	a = nm_addr(pie, "fx_alpha", false);
	b = nm_addr(lib, "fx_lib_add", false);
	/* one big map of the PIE over the whole range, pgoff 0 */
	mmap2(s, 70, PIE_BASE, 0x100000, 0, pie, NULL, 0);
	check_sym(s, 70, PIE_BASE + a, "fx_alpha", 0);
	/* the library mapped over the middle: splits the PIE's map */
	mmap2(s, 70, PIE_BASE + 0x40000, 0x10000, 0, lib, NULL, 0);
	check_sym(s, 70, PIE_BASE + 0x40000 + b + 1, "fx_lib_add", 1);
	check_sym(s, 70, PIE_BASE + a, "fx_alpha", 0);
	/* the right part keeps its file offsets */
	CHECK(symbolizer_resolve(s, 70, PIE_BASE + 0x60010,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK_STR(sym.dso_short, "fx_pie");
	CHECK(sym.offset == 0x60010);
	/* a map over everything replaces all */
	mmap2(s, 70, PIE_BASE - 0x1000, 0x200000, 0, lib, NULL, 0);
	CHECK(symbolizer_resolve(s, 70, PIE_BASE + a, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK_STR(sym.dso_short, "libfx.so");
	/* out-of-order appends: insertion keeps the array sorted */
	mmap2(s, 71, 0x30000000, 0x1000, 0, lib, NULL, 0);
	mmap2(s, 71, 0x10000000, 0x1000, 0, pie, NULL, 0);
	mmap2(s, 71, 0x20000000, 0x1000, 0, lib, NULL, 0);
	CHECK(symbolizer_resolve(s, 71, 0x10000010, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK_STR(sym.dso_short, "fx_pie");
	CHECK(symbolizer_resolve(s, 71, 0x20000010, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK_STR(sym.dso_short, "libfx.so");
	CHECK(symbolizer_resolve(s, 71, 0x20001000, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK(sym.dso == NULL);
	symbolizer_free(s);
}

/* [vdso] is named from this process's own copy of the same kernel's */
static void test_vdso(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	unsigned long long lo = 0, hi = 0;
	struct pipe_symbol sym;
	char line[512];
	void *h, *fn;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%llx-%llx", &lo, &hi);
	if (f)
		fclose(f);
	h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	if (!lo || !fn) {
		printf("note: no vdso here, vdso test not run\n");
		symbolizer_free(s);
		return;
	}
	mmap2(s, 90, lo, hi - lo, 0, "[vdso]", NULL, 0);
	CHECK(symbolizer_resolve(s, 90, (uint64_t)(uintptr_t)fn + 2,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK(sym.name && strstr(sym.name, "clock_gettime"));
	CHECK(sym.offset == 2);
	CHECK_STR(sym.dso, "[vdso]");
	dlclose(h);
	symbolizer_free(s);
}

static void test_malformed(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	uint64_t buf[32];
	struct perf_event_header *h = (void *)buf;
	struct pipe_symbol sym;
	uint16_t types[] = { PERF_RECORD_MMAP, PERF_RECORD_MMAP2,
			     PERF_RECORD_COMM, PERF_RECORD_FORK,
			     PERF_RECORD_EXIT };
	size_t t;
	uint16_t size;

	comm(s, 80, 80, "keep", false);
	mmap2(s, 80, 0x1000, 0x1000, 0, "/nonexistent/keep", NULL, 0);
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (size = 0; size <= 96; size += 8) {
			memset(buf, 'x', sizeof(buf));
			h->type = types[t];
			h->misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
			h->size = size;
			/* pid 80: a parsed short record would hit it */
			memcpy((char *)buf + 8, "\x50\0\0\0\x50\0\0\0", 8);
			apply(s, buf);
		}
	}
	/* counted: every size of the three with a name (none has a NUL),
	 * and FORK and EXIT below their 32 bytes */
	CHECK(symbolizer_nr_malformed(s) == 3 * 13 + 2 * 4);
	CHECK_STR(symbolizer_comm(s, 80), "keep");
	CHECK(symbolizer_resolve(s, 80, 0x1010, PERF_RECORD_MISC_USER, &sym) ==
	      0);
	CHECK_STR(sym.dso, "/nonexistent/keep");
	CHECK(sym.name == NULL);
	CHECK(sym.offset == 0x10);
	symbolizer_free(s);
}

/* Random sideband records of every kind and size: nothing crashes (the
 * ASan build checks every access), and resolving stays possible. */
static void test_random_records(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	static const uint16_t types[] = { PERF_RECORD_MMAP, PERF_RECORD_MMAP2,
					  PERF_RECORD_COMM, PERF_RECORD_FORK,
					  PERF_RECORD_EXIT };
	uint64_t x = 0x9e3779b97f4a7c15ULL, buf[40];
	struct pipe_symbol sym;
	int i, j;

	for (i = 0; i < 20000; i++) {
		struct perf_event_header *h = (void *)buf;

		for (j = 0; j < 40; j++)
			buf[j] = rnd_xorshift(&x);
		h->type = types[x % 5];
		h->size = (uint16_t)(8 * (1 + (x >> 8) % 40));
		if (x & 0x100000) /* small pids and tids collide more */
			memset((char *)buf + 8, (int)(x >> 24) & 3, 16);
		symbolizer_apply(s, h);
		symbolizer_comm(s, (uint32_t)(x >> 32) & 3);
		CHECK(symbolizer_resolve(s, (uint32_t)(x >> 40) & 0x03030303,
					 buf[5], (uint16_t)(x >> 50),
					 &sym) == 0);
	}
	symbolizer_free(s);
}

/* The first failure for want of memory is said, what failed first; the
 * ones after it add nothing. */
static void test_out_of_memory(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);

	nr_warnings = 0;
	sym_oom(s, UNKNOWN_LATER, "load the symbols of '%s'", "/bin/x");
	sym_oom(s, UNKNOWN_LATER, "keep the process state");
	CHECK(nr_warnings == 1);
	CHECK_STR(last_warning, "cannot load the symbols of '/bin/x': Cannot "
		  "allocate memory: later samples may show [unknown]");
	symbolizer_free(s);
}

int main(void)
{
	int ret = fixtures_build(fx, sizeof(fx));

	if (ret != 0)
		return ret;
	test_kallsyms();
	test_process_state();
	test_map_replacement();
	test_vdso();
	test_malformed();
	test_random_records();
	test_out_of_memory();
	return test_result();
}
