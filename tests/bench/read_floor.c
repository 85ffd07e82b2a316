/*
 * read_floor.c - the least any reader that checks every checksum pays
 * for a file, taken apart: the file mapped and hashed once with XXH3 (the
 * dispatching build, as pipe does) in blocks of the given size, and the
 * parts of that: mapping alone, read() into a reused buffer, and hashing
 * bytes already mapped.  container.sh runs it beside `pipe -k null` and
 * `pipe verify` on the same file.
 * Usage: read_floor FILE BLOCK_BYTES [MODE]; MODE is one of
 *   map-hash   map the file, hash every block (the default)
 *   map-touch  map the file, read one byte of each 4 KiB page
 *   read-hash  read() each block into one reused buffer, hash it
 *   mem-hash   hash a private copy already in memory (set-up not counted)
 * Prints the CPU seconds (user + sys) of that part and a sum of the
 * hashes (so none is optimized away).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>
#if defined(__x86_64__) && defined(__has_include)
#if __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>
#endif
#endif

static double cpu_seconds(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
	       ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) / 1e6;
}

static uint64_t hash_blocks(const uint8_t *p, size_t len, size_t blk)
{
	uint64_t sum = 0;
	size_t off, n;

	for (off = 0; off < len; off += n) {
		n = len - off < blk ? len - off : blk;
		sum += XXH3_64bits_withSeed(p + off, n, 1);
	}
	return sum;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "map-hash";
	uint64_t sum = 0;
	struct stat st;
	size_t blk, len, off;
	uint8_t *p, *buf;
	double t0;
	ssize_t got;
	int fd;

	if (argc < 3 || argc > 4 || (blk = strtoul(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: read_floor FILE BLOCK_BYTES [MODE]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		perror(argv[1]);
		return 1;
	}
	len = (size_t)st.st_size;
	t0 = cpu_seconds();
	if (strcmp(mode, "map-hash") == 0 || strcmp(mode, "map-touch") == 0) {
		p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		if (strcmp(mode, "map-hash") == 0)
			sum = hash_blocks(p, len, blk);
		else
			for (off = 0; off < len; off += 4096)
				sum += p[off];
		munmap(p, len);
	} else if (strcmp(mode, "read-hash") == 0) {
		/* page-aligned: into a buffer at another offset in its page
		 * than the file's, the kernel's copy ran 3.5x slower here */
		buf = aligned_alloc(4096, (blk + 4095) / 4096 * 4096);
		if (!buf)
			return 1;
		for (off = 0; off < len; off += (size_t)got) {
			got = pread(fd, buf, blk, (off_t)off);
			if (got <= 0) {
				perror("pread");
				return 1;
			}
			sum += XXH3_64bits_withSeed(buf, (size_t)got, 1);
		}
		free(buf);
	} else if (strcmp(mode, "mem-hash") == 0) {
		buf = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
		if (!buf)
			return 1;
		for (off = 0; off < len; off += (size_t)got) {
			got = pread(fd, buf + off, len - off, (off_t)off);
			if (got <= 0) {
				perror("pread");
				return 1;
			}
		}
		t0 = cpu_seconds();
		sum = hash_blocks(buf, len, blk);
		free(buf);
	} else {
		fprintf(stderr, "read_floor: unknown mode '%s'\n", mode);
		return 2;
	}
	printf("%.6f %016" PRIx64 "\n", cpu_seconds() - t0, sum);
	close(fd);
	return 0;
}
