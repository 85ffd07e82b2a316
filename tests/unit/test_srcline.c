/*
 * test_srcline.c - source lines and inline frames against binutils'
 * `addr2line -a -i -f` on 1000 addresses spread over the text of an -O2
 * -g fixture with two levels of inlining (tests/fixtures/fx_inline.c),
 * and on a C++ fixture with -C; the expected answers come from addr2line,
 * never from the code under test.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "harness.h"
#include "srcline.h"

#define NR_ADDRS 1000

static char fx[4096]; /* fixture dir */

/* .text of path: its address and size, from readelf. */
static bool text_range(const char *path, uint64_t *lo, uint64_t *size)
{
	char cmd[8192], line[256] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' | sed -n "
		 "'s/.* \\.text  *PROGBITS  *\\([0-9a-f]*\\) [0-9a-f]* "
		 "\\([0-9a-f]*\\) .*/\\1 \\2/p'", path);
	f = popen(cmd, "r");
	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	pclose(f);
	return sscanf(line, "%" SCNx64 " %" SCNx64, lo, size) == 2;
}

static void chomp(char *s)
{
	char *d = strstr(s, " (discriminator");

	if (d)
		*d = '\0';
	s[strcspn(s, "\n")] = '\0';
}

/* Lines in a file (0: unreadable). */
static unsigned lines_of(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/*
 * binutils 2.40 names the wrong file for some functions of C++ headers
 * with DWARF 5 line tables (fx_cxx.cc:175 for placement new, whose file
 * has 60 lines): an answer whose file is shorter than its line is
 * impossible, and then only the line is compared.
 */
static bool impossible(const char *pos)
{
	const char *colon = strrchr(pos, ':');
	char file[1024];

	if (!colon || (size_t)(colon - pos) >= sizeof(file))
		return false;
	memcpy(file, pos, (size_t)(colon - pos));
	file[colon - pos] = '\0';
	return lines_of(file) < strtoul(colon + 1, NULL, 10);
}

/* Compare one address's levels with addr2line's lines for it. */
static void check_levels(const struct pipe_srcline *sl, uint64_t a,
			 char (*fn)[1024], char (*pos)[1024], int n)
{
	char want[1100];
	int i;

	/* no line: binutils may still name a symbol (and its file) */
	if (n == 1 && (strncmp(pos[0], "??:", 3) == 0 ||
		       strcmp(pos[0] + strlen(pos[0]) - 2, ":?") == 0)) {
		if (sl->nr != 0)
			printf("at 0x%" PRIx64 ": addr2line knows nothing, "
			       "we have %u levels\n", a, sl->nr);
		CHECK(sl->nr == 0);
		return;
	}
	if ((int)sl->nr != n)
		printf("at 0x%" PRIx64 ": %u levels, addr2line %d (%s %s)\n",
		       a, sl->nr, n, fn[0], pos[0]);
	CHECK((int)sl->nr == n);
	for (i = 0; i < n && i < (int)sl->nr; i++) {
		const struct pipe_src_frame *f = pipe_src_frame(sl, i);

		snprintf(want, sizeof(want), "%s:%u",
			 f->file ? f->file : "??", f->line);
		CHECK_STR(f->function ? f->function : "??", fn[i]);
		if (impossible(pos[i]))
			CHECK(f->line == strtoul(strrchr(pos[i], ':') + 1,
						 NULL, 10));
		else
			CHECK_STR(want, pos[i]);
		CHECK(f->inlined == (i + 1 < n));
	}
}

/*
 * Look up NR_ADDRS addresses of path's text and compare them all with
 * addr2line (-C when demangle).  Returns the deepest chain seen.
 */
static uint32_t compare(const char *name, bool demangle)
{
	static char fn[SRCLINE_MAX_DEPTH][1024], pos[SRCLINE_MAX_DEPTH][1024];
	char path[4200], list[4300], cmd[9000], line[1024];
	struct srcline *sl = NULL;
	uint64_t lo, size, step, a, cur = 0;
	uint32_t deepest = 0;
	bool have = false;
	FILE *f;
	int n = 0, i;

	snprintf(path, sizeof(path), "%s/%s", fx, name);
	snprintf(list, sizeof(list), "%s/%s.addrs.%d", fx, name, getpid());
	CHECK(text_range(path, &lo, &size));
	CHECK(srcline_new(&sl, path) == 0);
	if (!sl || size == 0)
		return 0;
	step = size / NR_ADDRS ? size / NR_ADDRS : 1;
	f = fopen(list, "w");
	CHECK(f != NULL);
	if (!f)
		goto out;
	for (i = 0, a = lo; i < NR_ADDRS && a < lo + size; i++, a += step)
		fprintf(f, "0x%" PRIx64 "\n", a);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "addr2line -a -i -f %s -e '%s' < '%s'",
		 demangle ? "-C" : "", path, list);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f)
		goto out;
	for (;;) {
		bool end = !fgets(line, sizeof(line), f);

		if (end || strncmp(line, "0x", 2) == 0) {
			if (have) {
				const struct pipe_srcline *r =
					srcline_find(sl, cur, demangle);

				check_levels(r, cur, fn, pos, n);
				if (r->nr > deepest)
					deepest = r->nr;
				/* the cached answer is the same */
				CHECK(srcline_find(sl, cur, demangle) == r);
			}
			if (end)
				break;
			cur = strtoull(line, NULL, 16);
			have = true;
			n = 0;
			continue;
		}
		if (!fgets(pos[n < SRCLINE_MAX_DEPTH ? n : 0], 1024, f))
			break;
		chomp(line);
		chomp(pos[n < SRCLINE_MAX_DEPTH ? n : 0]);
		if (n < SRCLINE_MAX_DEPTH)
			snprintf(fn[n++], sizeof(fn[0]), "%s", line);
	}
	pclose(f);
out:
	unlink(list);
	srcline_free(sl);
	return deepest;
}

static void test_inline_fixture(void)
{
	char path[4200];
	struct srcline *sl = NULL;

	/* fx_work's loop holds fx_mix inlined into fx_step into fx_work */
	CHECK(compare("fx_inline", false) >= 3);
	/* no DWARF in a stripped file */
	snprintf(path, sizeof(path), "%s/fx_inline_dbg", fx);
	CHECK(srcline_new(&sl, path) == -ENODATA);
	snprintf(path, sizeof(path), "%s/no-such-file", fx);
	CHECK(srcline_new(&sl, path) == -ENOENT);
	CHECK(srcline_new(&sl, "/dev/null") < 0);
	CHECK(srcline_none()->nr == 0);
}

static void test_cxx_fixture(void)
{
	CHECK(compare("fx_cxx", true) >= 1);
}

int main(void)
{
	int ret;

	if (system("addr2line --version >/dev/null 2>&1") != 0) {
		printf("SKIP: no addr2line (binutils)\n");
		return 77;
	}
	ret = fixtures_build(fx, sizeof(fx));
	if (ret != 0)
		return ret;
	test_inline_fixture();
	test_cxx_fixture();
	return test_result();
}
