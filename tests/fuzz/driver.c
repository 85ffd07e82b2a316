/*
 * driver.c - a main() for the harnesses without libFuzzer: runs
 * LLVMFuzzerTestOneInput on every file named (directories are walked one
 * level deep), and with -m N also on N mutations of each (byte flips,
 * inserted and deleted runs, from a fixed seed, so a failure repeats).
 *
 *   fuzz_meta [-m N] FILE|DIR...
 *
 * Exit 0 when every input ran; a crash is the sanitizers' to report.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#define DRIVER_MAX_INPUT (16u << 20)

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
	/* xorshift64*: any fixed sequence will do */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1du;
}

/* One mutation of buf (len bytes, room for cap) in place; new length. */
static size_t mutate(uint8_t *buf, size_t len, size_t cap)
{
	size_t at = len ? rng() % len : 0, n = 1 + rng() % 8, i;

	switch (rng() % 5) {
	case 0: /* flip bits */
	case 1:
		for (i = 0; i < n && len; i++)
			buf[(at + i) % len] ^= (uint8_t)(1u << (rng() % 8));
		return len;
	case 2: /* an interesting value */
		if (len >= 4) {
			static const uint32_t vals[] = { 0, 1, 0x7f, 0xff,
				0xffff, 0x7fffffff, 0xfffffff8, 0xffffffff };
			uint32_t v = vals[rng() % 8];

			at = len - 4 ? rng() % (len - 4) : 0;
			memcpy(buf + at, &v, 4);
		}
		return len;
	case 3: /* insert n bytes */
		if (len + n > cap)
			return len;
		memmove(buf + at + n, buf + at, len - at);
		for (i = 0; i < n; i++)
			buf[at + i] = (uint8_t)rng();
		return len + n;
	default: /* delete n bytes */
		if (at + n > len)
			return len;
		memmove(buf + at, buf + at + n, len - at - n);
		return len - n;
	}
}

static int run_file(const char *path, long mutations)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf, *work;
	size_t len, cap;
	long m;

	if (!f) {
		fprintf(stderr, "driver: cannot open '%s'\n", path);
		return -1;
	}
	buf = malloc(DRIVER_MAX_INPUT);
	work = malloc(DRIVER_MAX_INPUT + 64);
	if (!buf || !work) {
		fclose(f);
		free(buf);
		free(work);
		return -1;
	}
	len = fread(buf, 1, DRIVER_MAX_INPUT, f);
	fclose(f);
	cap = len + 64;
	/* an exact-size copy, so a read past the input is caught */
	memcpy(work, buf, len);
	LLVMFuzzerTestOneInput(work, len);
	for (m = 0; m < mutations; m++) {
		size_t n = len, k, rounds = 1 + rng() % 4;
		uint8_t *exact;

		memcpy(work, buf, len);
		for (k = 0; k < rounds; k++)
			n = mutate(work, n, cap);
		exact = malloc(n ? n : 1);
		if (!exact)
			break;
		memcpy(exact, work, n);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
	}
	free(buf);
	free(work);
	return 0;
}

static int run_path(const char *path, long mutations, long *files)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int ret = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "driver: cannot open '%s'\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*files)++;
		return run_file(path, mutations);
	}
	d = opendir(path);
	if (!d)
		return -1;
	while (ret == 0 && (e = readdir(d))) {
		char sub[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
			(*files)++;
			ret = run_file(sub, mutations);
		}
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	long mutations = 0, files = 0;
	int i = 1;

	if (argc > 2 && strcmp(argv[1], "-m") == 0) {
		mutations = strtol(argv[2], NULL, 10);
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-m N] FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (; i < argc; i++)
		if (run_path(argv[i], mutations, &files) < 0)
			return 1;
	printf("%ld inputs, %ld mutations each\n", files, mutations);
	return 0;
}
