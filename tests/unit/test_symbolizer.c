/*
 * test_symbolizer.c - the symbolizer against fixture binaries built by
 * tests/fixtures/Makefile: expected names and addresses come from nm,
 * readelf and c++filt, never from the code under test.  PIE and non-PIE
 * files, stripped libraries, PLT stubs, debug files, deleted binaries,
 * build-id checks, perf maps, files others own, C++ names.
 * test_symstate.c tests the kernel and process state.
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
#include "symfix.h"

static void test_nopie_and_pie(void)
{
	struct symbolizer *s = new_sym(true, NULL, NULL, NULL);
	char nopie[4200], pie[4200];
	struct pipe_symbol sym;
	uint64_t a;

	map_fixture(s, 10, "fx_nopie", 0, nopie, sizeof(nopie));
	map_fixture(s, 11, "fx_pie", PIE_BASE, pie, sizeof(pie));
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

	map_fixture(s, 20, "libfx_stripped.so", LIB_BASE, lib, sizeof(lib));
	path_of(full, sizeof(full), "libfx.so");
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

		map_fixture(s, 30, bins[i], PIE_BASE, path, sizeof(path));
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
	char hex[64];
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
	build_id_hex(dbg, hex, sizeof(hex));
	debug_file_of(debug_file, sizeof(debug_file), root, hex);
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
		gn = build_id_parse(hex, gid);
	}
	CHECK(access(gone, F_OK) != 0);
	debug_file_of(debug_file, sizeof(debug_file), root, hex);
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
	build_id_hex(pie, hex, sizeof(hex));
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

/* An impossible build-id size means "no build-id", not a bad record. */
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
	test_cxx();
	return test_result();
}
