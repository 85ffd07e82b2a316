/*
 * test_fdio.c - lib/fdio.c: whole writes, reads that go on after short
 * reads (a pipe written in pieces) and stop at the end of the file, reads
 * at an offset, and the errno of a failing call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "harness.h"

#define BIG (1u << 20)

/* A file in /tmp, already unlinked; -1 on failure. */
static int tmp_file(void)
{
	char path[] = "/tmp/test_fdio.XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

static void test_file(void)
{
	char *in = malloc(BIG), *out = malloc(BIG);
	int fd = tmp_file();
	size_t i;

	CHECK(in && out && fd >= 0);
	if (!in || !out || fd < 0)
		goto out;
	for (i = 0; i < BIG; i++)
		in[i] = (char)(i * 7 + i / 251);
	CHECK(fdio_write_all(fd, in, BIG) == 0);
	CHECK(fdio_write_all(fd, in, 0) == 0);
	CHECK(fdio_pread_full(fd, out, BIG, 0) == (ssize_t)BIG);
	CHECK(memcmp(in, out, BIG) == 0);
	/* at an offset, and past the end: fewer bytes, then none */
	CHECK(fdio_pread_full(fd, out, 100, BIG - 40) == 40);
	CHECK(memcmp(out, in + BIG - 40, 40) == 0);
	CHECK(fdio_pread_full(fd, out, 100, BIG + 10) == 0);
	/* from the position, which pread left at the end of the writes */
	CHECK(fdio_read_full(fd, out, 10) == 0);
	CHECK(lseek(fd, 5, SEEK_SET) == 5);
	CHECK(fdio_read_full(fd, out, 10) == 10);
	CHECK(memcmp(out, in + 5, 10) == 0);
out:
	if (fd >= 0)
		close(fd);
	free(in);
	free(out);
}

/* A child writes 3 pieces with pauses: read_full waits for them all. */
static void test_pipe(void)
{
	char buf[64];
	int p[2];
	pid_t pid;

	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (int k = 0; k < 3; k++) {
			if (fdio_write_all(p[1], "abcd", 4) < 0)
				_exit(1);
			usleep(20000);
		}
		_exit(0);
	}
	close(p[1]);
	CHECK(fdio_read_full(p[0], buf, 10) == 10);
	CHECK(memcmp(buf, "abcdabcdab", 10) == 0);
	CHECK(fdio_read_full(p[0], buf, sizeof(buf)) == 2);
	close(p[0]);
	CHECK(pid > 0 && waitpid(pid, NULL, 0) == pid);
}

static void test_errors(void)
{
	char buf[8];
	int p[2];

	CHECK(fdio_write_all(-1, "x", 1) == -EBADF);
	CHECK(fdio_read_full(-1, buf, sizeof(buf)) == -EBADF);
	CHECK(fdio_pread_full(-1, buf, sizeof(buf), 0) == -EBADF);
	/* a pipe cannot pread */
	CHECK(pipe(p) == 0);
	CHECK(fdio_pread_full(p[0], buf, sizeof(buf), 0) == -ESPIPE);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_file();
	test_pipe();
	test_errors();
	return test_result();
}
