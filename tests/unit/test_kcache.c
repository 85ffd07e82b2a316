/*
 * test_kcache.c - the kallsyms cache: written on the first read, used on
 * the next with the same bytes, rewritten when damaged, stale files of
 * other keys removed, off when PIPE_KALLSYMS_CACHE=off; every line kept
 * is a text symbol or _text.  The binary image beside it: saved and
 * mapped back byte for byte, not used when damaged, stale images removed;
 * a table over saved parts answers as the table it was saved from, and
 * parts that are no table are refused.  Whole reads of a file around the
 * first room.  Skips where /proc/kallsyms shows no addresses.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "harness.h"
#include "kcache.h"
#include "symtab.h"

static char dir[256];

/* The one `prefix`* file's path into buf: the count of such files. */
static int files_of(const char *prefix, char *buf, size_t cap)
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
		if (strncmp(e->d_name, prefix, strlen(prefix)))
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

/* A table of a few symbols, saved as parts and mapped back. */
static void test_table_parts(void)
{
	static const char names[] = "alpha\0beta\0gamma\0";
	struct symtab_builder *b;
	struct symtab *t = NULL, *u = NULL;
	struct pipe_err err;
	struct kcache_image img;
	const void *ents;
	const char *pool;
	size_t pool_len;
	uint32_t nr, idx, i;
	uint64_t *e64;
	char *copy;
	struct iovec v[2];

	CHECK(symtab_builder_new(&b, names, sizeof(names), 4, &err) == 0);
	CHECK(symtab_builder_add(b, 0x3000, 0x10, 11, SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_add(b, 0x1000, 0x100, 0, SYMTAB_GLOBAL) == 0);
	CHECK(symtab_builder_add(b, 0x2000, 0, 6, SYMTAB_LOCAL) == 0);
	CHECK(symtab_builder_finish(b, &t, &err) == 0);
	symtab_builder_free(b);
	symtab_parts(t, &ents, &nr, &pool, &pool_len);
	CHECK(nr == 3);
	v[0] = (struct iovec){ .iov_base = (void *)ents,
			       .iov_len = nr * SYMTAB_ENT_BYTES };
	v[1] = (struct iovec){ .iov_base = (void *)pool, .iov_len = pool_len };
	kcache_image_save(v, 2);
	CHECK(kcache_image_load(&img) == 0);
	CHECK(img.len == nr * SYMTAB_ENT_BYTES + pool_len);
	CHECK(img.map && symtab_from_parts(img.map, img.map_len, img.data, nr,
					   (const char *)img.data +
					   nr * SYMTAB_ENT_BYTES,
					   pool_len, &u) == 0);
	for (i = 0; u && i < 0x4000; i += 0x80) {
		uint32_t j;
		bool a = symtab_find(t, i, &idx), c = symtab_find(u, i, &j);

		CHECK(a == c);
		if (a && c)
			CHECK(!strcmp(symtab_name(t, idx), symtab_name(u, j)) &&
			      symtab_size(t, idx) == symtab_size(u, j));
	}
	symtab_free(u);
	/* parts that are no table: out of order, a name past the pool, a
	 * pool without its last NUL */
	copy = malloc(nr * SYMTAB_ENT_BYTES + pool_len);
	CHECK(copy != NULL);
	if (copy) {
		memcpy(copy, ents, nr * SYMTAB_ENT_BYTES);
		memcpy(copy + nr * SYMTAB_ENT_BYTES, pool, pool_len);
		e64 = (uint64_t *)copy;
		e64[2] = 0x500; /* the second start below the first */
		CHECK(symtab_from_parts(NULL, 0, copy, nr, copy + nr * 16,
					pool_len, &u) == -EINVAL);
		memcpy(copy, ents, nr * SYMTAB_ENT_BYTES);
		((uint32_t *)copy)[3] = (uint32_t)pool_len; /* name offset */
		CHECK(symtab_from_parts(NULL, 0, copy, nr, copy + nr * 16,
					pool_len, &u) == -EINVAL);
		memcpy(copy, ents, nr * SYMTAB_ENT_BYTES);
		CHECK(symtab_from_parts(NULL, 0, copy, nr, copy + nr * 16,
					pool_len - 1, &u) == -EINVAL);
		free(copy);
	}
	symtab_free(t);
}

/* The image: mapped back as saved; one changed byte, and it is not. */
static void test_image(void)
{
	char path[600], stale[600], blob[4096];
	struct kcache_image img;
	struct iovec v = { .iov_base = blob, .iov_len = sizeof(blob) };
	FILE *f;
	size_t i;

	for (i = 0; i < sizeof(blob); i++)
		blob[i] = (char)(i * 7);
	snprintf(stale, sizeof(stale), "%s/pipe/kallbin-0000000000000000", dir);
	f = fopen(stale, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	kcache_image_save(&v, 1);
	CHECK(access(stale, F_OK) != 0);
	CHECK(files_of("kallbin-", path, sizeof(path)) == 1);
	CHECK(kcache_image_load(&img) == 0);
	CHECK(img.len == sizeof(blob) && !memcmp(img.data, blob, sizeof(blob)));
	CHECK((uintptr_t)img.data % 8 == 0);
	munmap(img.map, img.map_len);
	f = fopen(path, "r+");
	CHECK(f != NULL);
	if (f) {
		fseek(f, 100, SEEK_SET);
		fputc('x', f);
		fclose(f);
	}
	CHECK(kcache_image_load(&img) == -ENOENT);
	CHECK(truncate(path, 10) == 0);
	CHECK(kcache_image_load(&img) == -ENOENT);
	CHECK(unlink(path) == 0);
	CHECK(kcache_image_load(&img) == -ENOENT);
	test_table_parts();
	CHECK(files_of("kallbin-", path, sizeof(path)) == 1);
	CHECK(unlink(path) == 0);
	/* off: no image either way */
	setenv("PIPE_KALLSYMS_CACHE", "off", 1);
	kcache_image_save(&v, 1);
	CHECK(files_of("kallbin-", path, sizeof(path)) == 0);
	CHECK(kcache_image_load(&img) == -ENOENT);
	unsetenv("PIPE_KALLSYMS_CACHE");
}

/* Whole reads of a pipe around the first room (64 KiB): every byte, and
 * a NUL after them. */
static void test_read_fd(void)
{
	static const size_t sizes[] = { 0, 65534, 65535, 65536, 200000 };
	static char want[200000];
	size_t i, j, len;
	char *got;
	FILE *f;

	for (j = 0; j < sizeof(want); j++)
		want[j] = (char)('a' + j % 26);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		f = tmpfile();
		CHECK(f && fwrite(want, 1, sizes[i], f) == sizes[i]);
		if (!f)
			continue;
		fflush(f);
		rewind(f);
		if (kcache_read_fd(fileno(f), &got, &len) == 0) {
			CHECK(len == sizes[i] && !memcmp(got, want, len) &&
			      got[len] == '\0');
			free(got);
		} else {
			CHECK(!"kcache_read_fd failed");
		}
		fclose(f);
	}
}

int main(void)
{
	char *a, *b, path[600], stale[600];
	size_t alen, blen;
	bool cached;
	FILE *f;

	unsetenv("PIPE_KALLSYMS_CACHE");
	test_read_fd();
	if (test_tmpdir(dir, sizeof(dir), "pipe-kcache") < 0)
		return 1;
	setenv("XDG_CACHE_HOME", dir, 1);
	CHECK(kcache_kallsyms(&a, &alen, &cached) == 0);
	CHECK(!cached);
	if (files_of("kallsyms-", path, sizeof(path)) == 0) {
		printf("skipped: /proc/kallsyms shows no addresses here\n");
		free(a);
		test_tmpdir_remove(dir);
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
	CHECK(files_of("kallsyms-", path, sizeof(path)) == 1);
	test_image();
	/* off: /proc/kallsyms every time, nothing written */
	CHECK(unlink(path) == 0);
	setenv("PIPE_KALLSYMS_CACHE", "off", 1);
	CHECK(kcache_kallsyms(&b, &blen, &cached) == 0);
	CHECK(!cached);
	CHECK(blen + 16 == alen); /* no key in the header */
	free(b);
	CHECK(files_of("kallsyms-", path, sizeof(path)) == 0);
	free(a);
	test_tmpdir_remove(dir);
	return test_result();
}
