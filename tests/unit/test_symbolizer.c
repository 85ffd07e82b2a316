/*
 * test_symbolizer.c - the symbolizer against fixture binaries built by
 * tests/fixtures/Makefile: expected names and addresses come from nm,
 * readelf and c++filt, never from the code under test.  Also process
 * state (FORK, COMM exec, EXIT), kallsyms with a KASLR shift, a perf map,
 * deleted binaries, build-id checks and malformed sideband records.
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
#include "symbolizer.h"

#define PIE_BASE UINT64_C(0x555555554000)
#define LIB_BASE UINT64_C(0x7f1234500000)
/* above pid_max (4194304 at most), so never a live process's map; per
 * test process, so concurrent suites do not share the file */
#define FAKE_PID (UINT32_C(1000000000) + (uint32_t)getpid() % 100000u)

static char fx[4096];     /* fixture dir */
static int nr_warnings;
static char last_warning[1024];

static void on_warn(void *opaque, const char *line)
{
	(void)opaque;
	nr_warnings++;
	snprintf(last_warning, sizeof(last_warning), "%s", line);
}

/* First line of a command's output, trimmed; "" if none. */
static void run_line(const char *cmd, char *buf, size_t cap)
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
static uint64_t nm_addr(const char *path, const char *sym, bool dyn)
{
	char cmd[8192], line[256];

	snprintf(cmd, sizeof(cmd),
		 "nm %s --defined-only '%s' | awk '$3 == \"%s\" {print $1}'",
		 dyn ? "-D" : "", path, sym);
	run_line(cmd, line, sizeof(line));
	return line[0] ? strtoull(line, NULL, 16) : 0;
}

static uint32_t build_id_of(const char *path, uint8_t *id)
{
	char cmd[8192], hex[128];
	uint32_t n = 0;

	snprintf(cmd, sizeof(cmd),
		 "readelf -n '%s' | sed -n 's/.*Build ID: //p'", path);
	run_line(cmd, hex, sizeof(hex));
	while (hex[2 * n] && hex[2 * n + 1] && n < 20) {
		char byte[3] = { hex[2 * n], hex[2 * n + 1], 0 };

		id[n++] = (uint8_t)strtoul(byte, NULL, 16);
	}
	return n;
}

static void apply(struct symbolizer *s, const void *rec)
{
	symbolizer_apply(s, rec);
}

static void mmap2(struct symbolizer *s, uint32_t pid, uint64_t start,
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
static int map_elf(struct symbolizer *s, uint32_t pid, const char *elf,
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

static struct symbolizer *new_sym(bool demangle, const char *debug_dir,
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
static void check_sym(struct symbolizer *s, uint32_t pid, uint64_t ip,
		      const char *want, uint64_t want_off)
{
	struct pipe_symbol sym;

	CHECK(symbolizer_resolve(s, pid, ip, PERF_RECORD_MISC_USER, &sym) ==
	      0);
	CHECK_STR(sym.name, want);
	CHECK(sym.offset == want_off);
	CHECK(sym.flags & PIPE_SYM_RESOLVED);
}

static void path_of(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", fx, name);
}

static void test_nopie_and_pie(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	char nopie[4200], pie[4200];
	struct pipe_symbol sym;
	uint64_t a;

	path_of(nopie, sizeof(nopie), "fx_nopie");
	path_of(pie, sizeof(pie), "fx_pie");
	CHECK(map_elf(s, 10, nopie, nopie, 0, NULL, 0, false) > 0);
	CHECK(map_elf(s, 11, pie, pie, PIE_BASE, NULL, 0, false) > 0);
	a = nm_addr(nopie, "fx_alpha", false);
	CHECK(a != 0);
	check_sym(s, 10, a + 3, "fx_alpha", 3);
	check_sym(s, 10, nm_addr(nopie, "fx_hidden", false), "fx_hidden", 0);
	check_sym(s, 10, nm_addr(nopie, "main", false) + 1, "main", 1);
	check_sym(s, 11, PIE_BASE + nm_addr(pie, "fx_beta", false) + 2,
		  "fx_beta", 2);
	check_sym(s, 11, PIE_BASE + nm_addr(pie, "fx_gamma", false),
		  "fx_gamma", 0);
	/* the PIE without its bias is not in any map */
	CHECK(symbolizer_resolve(s, 11, nm_addr(pie, "fx_beta", false),
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK(sym.name == NULL && sym.dso == NULL);
	/* dso names */
	CHECK(symbolizer_resolve(s, 11, PIE_BASE + nm_addr(pie, "fx_beta",
							  false),
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK_STR(sym.dso, pie);
	CHECK_STR(sym.dso_short, "fx_pie");
	CHECK(sym.sym_start == nm_addr(pie, "fx_beta", false));
	CHECK(!(sym.flags & (PIPE_SYM_DELETED | PIPE_SYM_KERNEL)));
	symbolizer_free(s);
}

static void test_stripped_lib(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	char lib[4200], full[4200];
	struct pipe_symbol sym;
	uint64_t a;

	path_of(lib, sizeof(lib), "libfx_stripped.so");
	path_of(full, sizeof(full), "libfx.so");
	CHECK(map_elf(s, 20, lib, lib, LIB_BASE, NULL, 0, false) > 0);
	a = nm_addr(lib, "fx_lib_mul", true);
	CHECK(a != 0);
	check_sym(s, 20, LIB_BASE + a + 4, "fx_lib_mul", 4);
	check_sym(s, 20, LIB_BASE + nm_addr(lib, "fx_lib_add", true),
		  "fx_lib_add", 0);
	/* a static function: not in .dynsym, never named (nm of the full
	 * library gives its address) */
	a = nm_addr(full, "fx_lib_secret", false);
	CHECK(a != 0);
	CHECK(symbolizer_resolve(s, 20, LIB_BASE + a, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK(sym.name == NULL || strcmp(sym.name, "fx_lib_secret") != 0);
	CHECK_STR(sym.dso_short, "libfx_stripped.so");
	symbolizer_free(s);
}

/* The address objdump labels <label> in `path` (it names PLT stubs from
 * the relocations too, .plt.sec included), 0 if none. */
static uint64_t objdump_addr(const char *path, const char *label)
{
	char cmd[8400], line[256];

	snprintf(cmd, sizeof(cmd),
		 "objdump -d '%s' | awk '$2 == \"<%s>:\" {print $1; exit}'",
		 path, label);
	run_line(cmd, line, sizeof(line));
	return line[0] ? strtoull(line, NULL, 16) : 0;
}

/* PLT stubs, lazy (.plt after its header), stripped and IBT (.plt.sec);
 * aliases: the local one over the weak one, as perf. */
static void test_plt_and_aliases(void)
{
	static const char *const bins[] = { "fx_names", "fx_names_stripped",
					    "fx_names_ibt",
					    "libfxn_stripped.so" };
	char path[4200], cmd[8400], line[256];
	struct pipe_symbol sym;
	size_t i;
	uint64_t a;

	for (i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		struct symbolizer *s = new_sym(true, NULL, NULL, NULL);

		path_of(path, sizeof(path), bins[i]);
		CHECK(map_elf(s, 30, path, path, PIE_BASE, NULL, 0, false) > 0);
		a = objdump_addr(path, "fxn_id@plt");
		CHECK(a != 0);
		check_sym(s, 30, PIE_BASE + a + 4, "fxn_id@plt", 4);
		symbolizer_free(s);
	}
	/* the lazy .plt's header is ".plt" */
	path_of(path, sizeof(path), "fx_names");
	snprintf(cmd, sizeof(cmd),
		 "readelf -SW '%s' | awk '$2 == \".plt\" {print $4}'", path);
	run_line(cmd, line, sizeof(line));
	CHECK(line[0] != '\0');
	a = strtoull(line, NULL, 16);
	{
		struct symbolizer *s = new_sym(true, NULL, NULL, NULL);

		CHECK(map_elf(s, 31, path, path, PIE_BASE, NULL, 0, false) > 0);
		check_sym(s, 31, PIE_BASE + a + 2, ".plt", 2);
		a = nm_addr(path, "names_weak_work", false);
		CHECK(a != 0 && a == nm_addr(path, "names_local_work", false));
		CHECK(symbolizer_resolve(s, 31, PIE_BASE + a,
					 PERF_RECORD_MISC_USER, &sym) == 0);
		CHECK_STR(sym.name, "names_local_work");
		symbolizer_free(s);
	}
}

static void test_debug_files(void)
{
	char dbg[4200], link[4200], root[4200], debug_file[8400];
	char hex[64], cmd[9000];
	struct symbolizer *s;
	struct pipe_symbol sym;
	uint8_t id[20];
	uint32_t n;
	uint64_t a;

	path_of(dbg, sizeof(dbg), "fx_dbg");
	path_of(link, sizeof(link), "fx_link");
	path_of(root, sizeof(root), "debug");
	n = build_id_of(dbg, id);
	CHECK(n == 20);
	snprintf(cmd, sizeof(cmd),
		 "readelf -n '%s' | sed -n 's/.*Build ID: //p'", dbg);
	run_line(cmd, hex, sizeof(hex));
	snprintf(debug_file, sizeof(debug_file), "%s/.build-id/%.2s/%s.debug",
		 root, hex, hex + 2);
	a = nm_addr(debug_file, "fx_hidden", false);
	CHECK(a != 0);

	/* without debug_dir= the static function stays unnamed */
	s = new_sym(true, NULL, NULL, NULL);
	CHECK(map_elf(s, 30, dbg, dbg, PIE_BASE, id, n, false) > 0);
	CHECK(symbolizer_resolve(s, 30, PIE_BASE + a + 1,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK(sym.name == NULL);
	CHECK_STR(sym.dso, dbg);
	symbolizer_free(s);

	/* with it, found by build-id */
	s = new_sym(true, root, NULL, NULL);
	CHECK(map_elf(s, 30, dbg, dbg, PIE_BASE, id, n, false) > 0);
	check_sym(s, 30, PIE_BASE + a + 1, "fx_hidden", 1);
	check_sym(s, 30, PIE_BASE + nm_addr(debug_file, "fx_beta", false),
		  "fx_beta", 0);
	/* found by .gnu_debuglink in .debug/ beside the binary */
	snprintf(debug_file, sizeof(debug_file), "%s/.debug/fx_link.debug",
		 fx);
	CHECK(map_elf(s, 31, link, link, PIE_BASE, NULL, 0, false) > 0);
	check_sym(s, 31, PIE_BASE + nm_addr(debug_file, "fx_alpha", false) +
			 2, "fx_alpha", 2);
	symbolizer_free(s);
}

static void test_deleted(void)
{
	char pie[4200], deleted[4300], gone[4200], gone_del[4300];
	char root[4200], hex[64], debug_file[8400], cmd[8400];
	struct symbolizer *s;
	struct pipe_symbol sym;
	uint8_t id[20], gid[20];
	uint32_t n, gn = 0;
	FILE *f;
	uint64_t a;

	path_of(pie, sizeof(pie), "fx_pie");
	path_of(gone, sizeof(gone), "fx_gone");
	path_of(root, sizeof(root), "debug");
	snprintf(deleted, sizeof(deleted), "%s (deleted)", pie);
	snprintf(gone_del, sizeof(gone_del), "%s (deleted)", gone);
	n = build_id_of(pie, id);
	CHECK(n == 20);

	/* the same build at the path without the suffix: used, marked */
	nr_warnings = 0;
	s = new_sym(true, root, NULL, NULL);
	CHECK(map_elf(s, 40, pie, deleted, PIE_BASE, id, n, false) > 0);
	a = nm_addr(pie, "fx_alpha", false);
	check_sym(s, 40, PIE_BASE + a, "fx_alpha", 0);
	CHECK(symbolizer_resolve(s, 40, PIE_BASE + a, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK(sym.flags & PIPE_SYM_DELETED);
	CHECK_STR(sym.dso, deleted);
	CHECK(nr_warnings == 0);

	/* gone for good: its debug file by build-id */
	snprintf(cmd, sizeof(cmd), "%s/fx_gone.buildid", fx);
	f = fopen(cmd, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(fgets(hex, sizeof(hex), f) != NULL);
		fclose(f);
		hex[strcspn(hex, "\n")] = '\0';
		for (gn = 0; gn < 20 && hex[2 * gn]; gn++) {
			char byte[3] = { hex[2 * gn], hex[2 * gn + 1], 0 };

			gid[gn] = (uint8_t)strtoul(byte, NULL, 16);
		}
	}
	CHECK(access(gone, F_OK) != 0);
	snprintf(debug_file, sizeof(debug_file), "%s/.build-id/%.2s/%s.debug",
		 root, hex, hex + 2);
	CHECK(map_elf(s, 41, debug_file, gone_del, PIE_BASE, gid, gn, true) >
	      0);
	a = nm_addr(debug_file, "fx_gamma", false);
	CHECK(a != 0);
	check_sym(s, 41, PIE_BASE + a + 5, "fx_gamma", 5);
	CHECK(symbolizer_resolve(s, 41, PIE_BASE + a, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK(sym.flags & PIPE_SYM_DELETED);
	CHECK_STR(sym.dso_short, "fx_gone (deleted)");

	/* gone, and nowhere: unresolved, marked, binary and offset kept */
	gid[0] ^= 0xff;
	CHECK(map_elf(s, 42, debug_file, gone_del, PIE_BASE, gid, gn, true) >
	      0);
	CHECK(symbolizer_resolve(s, 42, PIE_BASE + a, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK(sym.name == NULL);
	CHECK(sym.flags & PIPE_SYM_DELETED);
	CHECK_STR(sym.dso, gone_del);
	symbolizer_free(s);
}

/* An impossible build-id size means "no build-id", not a bad record. */
/* Deleted, and a copy of the same build sits in a build-id tree. */
static void test_deleted_copy(void)
{
	char pie[4200], tree[4200], cmd[17000], hex[64], gone[4300];
	struct symbolizer *s;
	struct pipe_symbol sym;
	uint8_t id[20];
	uint32_t n;
	uint64_t a;

	path_of(pie, sizeof(pie), "fx_pie");
	path_of(tree, sizeof(tree), "copytree");
	n = build_id_of(pie, id);
	snprintf(cmd, sizeof(cmd),
		 "readelf -n '%s' | sed -n 's/.*Build ID: //p'", pie);
	run_line(cmd, hex, sizeof(hex));
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && mkdir -p '%s/.build-id/%.2s' && "
		 "cp '%s' '%s/.build-id/%.2s/%s'", tree, tree, hex, pie, tree,
		 hex, hex + 2);
	CHECK(system(cmd) == 0);
	snprintf(gone, sizeof(gone), "%s/nowhere/fx_pie (deleted)", fx);
	s = new_sym(true, tree, NULL, NULL);
	CHECK(map_elf(s, 45, pie, gone, PIE_BASE, id, n, false) > 0);
	a = nm_addr(pie, "fx_beta", false);
	check_sym(s, 45, PIE_BASE + a + 3, "fx_beta", 3);
	CHECK(symbolizer_resolve(s, 45, PIE_BASE + a, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK(sym.flags & PIPE_SYM_DELETED);
	symbolizer_free(s);
	/* without the tree: unresolved */
	s = new_sym(true, NULL, NULL, NULL);
	CHECK(map_elf(s, 45, pie, gone, PIE_BASE, id, n, false) > 0);
	CHECK(symbolizer_resolve(s, 45, PIE_BASE + a, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK(sym.name == NULL);
	symbolizer_free(s);
}

static void test_build_id_size(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	uint8_t junk[20];
	char pie[4200];

	memset(junk, 0xab, sizeof(junk));
	path_of(pie, sizeof(pie), "fx_pie");
	nr_warnings = 0;
	CHECK(map_elf(s, 51, pie, pie, PIE_BASE, junk, 254, false) > 0);
	check_sym(s, 51, PIE_BASE + nm_addr(pie, "fx_gamma", false) + 1,
		  "fx_gamma", 1);
	CHECK(nr_warnings == 0);
	symbolizer_free(s);
}

static void test_build_id_mismatch(void)
{
	char pie[4200];
	struct symbolizer *s;
	struct pipe_symbol sym;
	uint8_t id[20];
	uint32_t n;
	uint64_t a;

	path_of(pie, sizeof(pie), "fx_pie");
	n = build_id_of(pie, id);
	id[3] ^= 0x55;
	nr_warnings = 0;
	s = new_sym(true, NULL, NULL, NULL);
	CHECK(map_elf(s, 50, pie, pie, PIE_BASE, id, n, false) > 0);
	a = nm_addr(pie, "fx_beta", false);
	CHECK(symbolizer_resolve(s, 50, PIE_BASE + a, PERF_RECORD_MISC_USER,
				 &sym) == 0);
	CHECK(sym.flags & PIPE_SYM_BUILDID_MISMATCH);
	CHECK(nr_warnings == 1);
	CHECK(strstr(last_warning, "build-id") != NULL);
	CHECK(strstr(last_warning, pie) != NULL);
	/* once per binary */
	CHECK(symbolizer_resolve(s, 50, PIE_BASE + a + 1,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK(nr_warnings == 1);
	symbolizer_free(s);
}

static void test_perf_map(void)
{
	char path[64];
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	struct pipe_symbol sym;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", FAKE_PID);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "7f0000001000 40 jit_add\n"
		   "7f0000001040 100 Interpreter::run(int) [hot]\n"
		   "7f0000000800 20 jit_first\n");
	fclose(f);
	mmap2(s, FAKE_PID, 0x7f0000000000ULL, 0x10000, 0, "//anon", NULL, 0);
	check_sym(s, FAKE_PID, 0x7f0000001010ULL, "jit_add", 0x10);
	check_sym(s, FAKE_PID, 0x7f0000001040ULL,
		  "Interpreter::run(int) [hot]", 0);
	check_sym(s, FAKE_PID, 0x7f0000000805ULL, "jit_first", 5);
	CHECK(symbolizer_resolve(s, FAKE_PID, 0x7f0000001010ULL,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK_STR(sym.dso_short, path + strlen("/tmp/"));
	/* inside the anon map but not in the perf map */
	CHECK(symbolizer_resolve(s, FAKE_PID, 0x7f0000005000ULL,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK(sym.name == NULL);
	CHECK_STR(sym.dso, "//anon");
	CHECK(sym.offset == 0x5000);
	unlink(path);
	symbolizer_free(s);
}

/*
 * Files a recording names are untrusted: a perf map owned by another user
 * is ignored with a warning (as perf does: anyone can write /tmp), and a
 * FIFO where a binary or a perf map should be is refused at once.
 */
static void test_untrusted_files(void)
{
	char path[64], fifo[4200], want[300];
	struct symbolizer *s;
	struct pipe_symbol sym;
	FILE *f;

	/* a FIFO as the recorded binary: unresolved, no hang */
	snprintf(fifo, sizeof(fifo), "%s/fifo.%u", fx, (unsigned)getpid());
	unlink(fifo);
	CHECK(mkfifo(fifo, 0600) == 0);
	s = new_sym(true, NULL, NULL, NULL);
	mmap2(s, FAKE_PID, PIE_BASE, 0x10000, 0, fifo, NULL, 0);
	CHECK(symbolizer_resolve(s, FAKE_PID, PIE_BASE + 0x1234,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK(sym.name == NULL);
	CHECK_STR(sym.dso, fifo);
	symbolizer_free(s);
	unlink(fifo);

	/* a FIFO as the perf map */
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", FAKE_PID);
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0);
	s = new_sym(true, NULL, NULL, NULL);
	mmap2(s, FAKE_PID, 0x7f0000000000ULL, 0x10000, 0, "//anon", NULL, 0);
	CHECK(symbolizer_resolve(s, FAKE_PID, 0x7f0000001010ULL,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK(sym.name == NULL);
	symbolizer_free(s);
	unlink(path);

	if (geteuid() != 0) {
		printf("note: not root: the perf map owner check not run\n");
		return;
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "7f0000001000 40 planted\n");
	fclose(f);
	CHECK(chown(path, 65534, 65534) == 0);
	nr_warnings = 0;
	s = new_sym(true, NULL, NULL, NULL);
	mmap2(s, FAKE_PID, 0x7f0000000000ULL, 0x10000, 0, "//anon", NULL, 0);
	CHECK(symbolizer_resolve(s, FAKE_PID, 0x7f0000001010ULL,
				 PERF_RECORD_MISC_USER, &sym) == 0);
	CHECK(sym.name == NULL);
	CHECK(nr_warnings == 1);
	snprintf(want, sizeof(want), "'%s' is owned by uid 65534, not by you "
		 "or root: ignored", path);
	CHECK_STR(last_warning, want);
	symbolizer_free(s);
	/* the owner's (root's) own file is used */
	CHECK(chown(path, 0, 0) == 0);
	s = new_sym(true, NULL, NULL, NULL);
	mmap2(s, FAKE_PID, 0x7f0000000000ULL, 0x10000, 0, "//anon", NULL, 0);
	check_sym(s, FAKE_PID, 0x7f0000001010ULL, "planted", 0x10);
	symbolizer_free(s);
	unlink(path);
}

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
static void cxxfilt(const char *mangled, char *buf, size_t cap)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "c++filt '%s'", mangled);
	run_line(cmd, buf, cap);
}

static void test_cxx(void)
{
	char cxx[4200], cmd[8400], line[1024];
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	struct symbolizer *raw = new_sym(false, NULL, NULL, NULL);
	int nr = 0;
	FILE *f;

	path_of(cxx, sizeof(cxx), "fx_cxx");
	CHECK(map_elf(s, 60, cxx, cxx, PIE_BASE, NULL, 0, false) > 0);
	CHECK(map_elf(raw, 60, cxx, cxx, PIE_BASE, NULL, 0, false) > 0);
	snprintf(cmd, sizeof(cmd),
		 "nm --defined-only '%s' | awk '$2 ~ /[tTwW]/ && "
		 "$3 ~ /^_Z.*fxns/ {print $1, $3}'", cxx);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		char mangled[900], want[1024];
		unsigned long long a;
		struct pipe_symbol sym;

		if (sscanf(line, "%llx %899s", &a, mangled) != 2)
			continue;
		cxxfilt(mangled, want, sizeof(want));
		CHECK(symbolizer_resolve(s, 60, PIE_BASE + a,
					 PERF_RECORD_MISC_USER, &sym) == 0);
		CHECK_STR(sym.name, want);
		/* demangle=off: the mangled name (of this symbol or an
		 * alias at its address, as C1/C2 constructors are) */
		CHECK(symbolizer_resolve(raw, 60, PIE_BASE + a,
					 PERF_RECORD_MISC_USER, &sym) == 0);
		CHECK(sym.name && strncmp(sym.name, "_Z", 2) == 0);
		if (sym.name) {
			char again[1024];

			cxxfilt(sym.name, again, sizeof(again));
			CHECK_STR(again, want);
		}
		nr++;
	}
	if (f)
		pclose(f);
	/* area, operator+, describe, two scaled<> */
	CHECK(nr >= 5);
	symbolizer_free(s);
	symbolizer_free(raw);
}

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

		for (j = 0; j < 40; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[j] = x;
		}
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

int main(void)
{
	int ret = fixtures_build(fx, sizeof(fx));

	if (ret != 0)
		return ret;
	test_nopie_and_pie();
	test_stripped_lib();
	test_plt_and_aliases();
	test_debug_files();
	test_deleted();
	test_build_id_mismatch();
	test_build_id_size();
	test_deleted_copy();
	test_perf_map();
	test_untrusted_files();
	test_kallsyms();
	test_cxx();
	test_process_state();
	test_map_replacement();
	test_vdso();
	test_malformed();
	test_random_records();
	return test_result();
}
