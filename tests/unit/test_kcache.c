/*
 * test_kcache.c - the kallsyms cache: written on the first read, used on
 * the next with the same bytes, rewritten when damaged, stale files of
 * other keys removed, off when PIPE_KALLSYMS_CACHE=off; every line kept
 * is a text symbol or _text.  Skips where /proc/kallsyms shows no
 * addresses.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "kcache.h"

static char dir[256];

/* The one cache file's path into buf: its count of kallsyms-* files. */
static int cache_files(char *buf, size_t cap)
{
	char sub[300];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(sub, sizeof(sub), "%s/pipe", dir);
	d = opendir(sub);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "kallsyms-", 9))
			continue;
		snprintf(buf, cap, "%s/%s", sub, e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static bool lines_wanted(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *sp = memchr(p, ' ', (size_t)(nl - p));

		if (p[0] != '#' &&
		    (!sp || !strchr("tTwW", sp[1]) || sp[2] != ' ') &&
		    strncmp(sp ? sp + 3 : p, "_text", 5))
			return false;
		p = nl + 1;
	}
	return true;
}

int main(void)
{
	char *a, *b, path[600], stale[600];
	size_t alen, blen;
	bool cached;
	FILE *f;

	unsetenv("PIPE_KALLSYMS_CACHE");
	snprintf(dir, sizeof(dir), "/tmp/pipe-kcache.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	setenv("XDG_CACHE_HOME", dir, 1);
	CHECK(kcache_kallsyms(&a, &alen, &cached) == 0);
	CHECK(!cached);
	if (cache_files(path, sizeof(path)) == 0) {
		printf("skipped: /proc/kallsyms shows no addresses here\n");
		free(a);
		rmdir(dir);
		return 77;
	}
	CHECK(lines_wanted(a, alen));
	CHECK(strstr(a, " _text\n") != NULL);
	/* the second read is the cache's, byte for byte */
	CHECK(kcache_kallsyms(&b, &blen, &cached) == 0);
	CHECK(cached);
	CHECK(blen == alen && memcmp(a, b, alen) == 0);
	free(b);
	/* a cut cache is not used, and is written again */
	CHECK(truncate(path, (off_t)alen - 3) == 0);
	CHECK(kcache_kallsyms(&b, &blen, &cached) == 0);
	CHECK(!cached);
	CHECK(blen == alen);
	free(b);
	CHECK(kcache_kallsyms(&b, &blen, &cached) == 0);
	CHECK(cached);
	free(b);
	/* a wrong line count is not used either */
	f = fopen(path, "r+");
	CHECK(f != NULL);
	if (f) {
		fseek(f, -3, SEEK_END);
		fputc('9', f);
		fclose(f);
	}
	CHECK(kcache_kallsyms(&b, &blen, &cached) == 0);
	CHECK(!cached);
	free(b);
	/* another key's file goes when the cache is written */
	snprintf(stale, sizeof(stale), "%s/pipe/kallsyms-0000000000000000", dir);
	f = fopen(stale, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK(unlink(path) == 0);
	CHECK(kcache_kallsyms(&b, &blen, &cached) == 0);
	CHECK(!cached);
	free(b);
	CHECK(access(stale, F_OK) != 0);
	CHECK(cache_files(path, sizeof(path)) == 1);
	/* off: /proc/kallsyms every time, nothing written */
	CHECK(unlink(path) == 0);
	setenv("PIPE_KALLSYMS_CACHE", "off", 1);
	CHECK(kcache_kallsyms(&b, &blen, &cached) == 0);
	CHECK(!cached);
	CHECK(blen + 16 == alen); /* no key in the header */
	free(b);
	CHECK(cache_files(path, sizeof(path)) == 0);
	free(a);
	snprintf(path, sizeof(path), "%s/pipe", dir);
	rmdir(path);
	rmdir(dir);
	return test_result();
}
