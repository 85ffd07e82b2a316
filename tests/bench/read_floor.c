/*
 * read_floor.c - the least any reader that checks every checksum pays
 * for a file: map it and hash every byte once with XXH3 (the dispatching
 * build, as pipe does), in blocks of the given size.  container.sh runs
 * it beside `pipe -k null` and `pipe verify` on the same file.
 * Usage: read_floor FILE BLOCK_BYTES; prints the sum of the hashes.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>
#if defined(__x86_64__) && defined(__has_include)
#if __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>
#endif
#endif

int main(int argc, char **argv)
{
	const uint8_t *p;
	uint64_t sum = 0;
	struct stat st;
	size_t blk, off, n;
	int fd;

	if (argc != 3 || (blk = strtoul(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: read_floor FILE BLOCK_BYTES\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		perror(argv[1]);
		return 1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (off = 0; off < (size_t)st.st_size; off += n) {
		n = (size_t)st.st_size - off < blk ? (size_t)st.st_size - off : blk;
		sum += XXH3_64bits_withSeed(p + off, n, 1);
	}
	munmap((void *)p, (size_t)st.st_size);
	close(fd);
	printf("%016" PRIx64 "\n", sum);
	return 0;
}
