/*
 * test_minidebug.c - MiniDebugInfo (.gnu_debugdata) against the fixture
 * tests/fixtures/Makefile builds as Fedora does (fx_inline_mini): its
 * functions at the addresses nm gives for the inflated section; files
 * without the section, with one that is not xz, and with xz that holds
 * no ELF.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fixtures.h"
#include "harness.h"
#include "minidebug.h"
#include "symtab.h"

static char fx[1024];   /* fixture dir */
static char work[1100]; /* scratch dir */

static int sh(const char *cmd)
{
	return system(cmd);
}

/* The address nm gives `sym` in `path`, 0 if none. */
static uint64_t nm_addr(const char *path, const char *sym)
{
	char cmd[2048], line[128] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' | awk '$3 == "
		 "\"%s\" { print $1 }'", path, sym);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	pclose(f);
	return strtoull(line, NULL, 16);
}

static void test_fixture(void)
{
	char bin[1200], cmd[8192], mini[1200];
	struct symtab *t = NULL;
	struct pipe_err err;
	const char *names[] = { "fx_work", "main" };
	uint32_t idx;
	size_t i;

	snprintf(bin, sizeof(bin), "%s/fx_inline_mini", fx);
	snprintf(mini, sizeof(mini), "%s/mini.elf", work);
	snprintf(cmd, sizeof(cmd), "objcopy --dump-section .gnu_debugdata="
		 "'%s.xz' '%s' && xz -dc '%s.xz' > '%s'", mini, bin, mini,
		 mini);
	CHECK(sh(cmd) == 0);
	CHECK(minidebug_read(bin, &t, &err) == 0);
	CHECK(t != NULL);
	if (!t)
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t a = nm_addr(mini, names[i]);

		CHECK(a != 0);
		CHECK(symtab_find(t, a + 1, &idx));
		CHECK_STR(symtab_name(t, idx), names[i]);
		CHECK(symtab_start(t, idx) == a);
	}
	symtab_free(t);
}

static void test_bad_files(void)
{
	char path[1200], cmd[8192];
	struct symtab *t = (struct symtab *)&t;
	struct pipe_err err;

	/* no section: nothing, no error */
	snprintf(path, sizeof(path), "%s/fx_inline_dbg", fx);
	CHECK(minidebug_read(path, &t, &err) == 0 && t == NULL);
	/* a section that is not xz */
	snprintf(cmd, sizeof(cmd), "head -c 4096 /dev/urandom > '%s/junk' && "
		 "objcopy --add-section .gnu_debugdata='%s/junk' "
		 "'%s/fx_inline_dbg' '%s/notxz'", work, work, fx, work);
	CHECK(sh(cmd) == 0);
	snprintf(path, sizeof(path), "%s/notxz", work);
	CHECK(minidebug_read(path, &t, &err) == -EINVAL && t == NULL);
	CHECK(strstr(err.msg, "not xz data") != NULL);
	/* xz holding no ELF */
	snprintf(cmd, sizeof(cmd), "xz -c '%s/junk' > '%s/junk.xz' && "
		 "objcopy --add-section .gnu_debugdata='%s/junk.xz' "
		 "'%s/fx_inline_dbg' '%s/notelf'", work, work, work, fx, work);
	CHECK(sh(cmd) == 0);
	snprintf(path, sizeof(path), "%s/notelf", work);
	CHECK(minidebug_read(path, &t, &err) < 0 && t == NULL);
	/* no file */
	snprintf(path, sizeof(path), "%s/no-such-file", work);
	CHECK(minidebug_read(path, &t, &err) == -ENOENT && t == NULL);
}

int main(void)
{
	char cmd[8192];
	int ret;

	if (sh("xz --version >/dev/null 2>&1 && objcopy --version "
	       ">/dev/null 2>&1") != 0) {
		printf("SKIP: no xz or objcopy\n");
		return 77;
	}
	ret = fixtures_build(fx, sizeof(fx));
	if (ret != 0)
		return ret;
	snprintf(work, sizeof(work), "%s/minidebug.%d", fx, (int)getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", work);
	if (sh(cmd) != 0)
		return 1;
	test_fixture();
	test_bad_files();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	sh(cmd);
	return test_result();
}
