/*
 * fdio.c - whole reads and writes on a file descriptor (fdio.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"

int fdio_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The one read loop: pread at *off, or read from the position if off
 * is NULL. */
static ssize_t read_loop(int fd, void *buf, size_t len, const off_t *off)
{
	char *p = buf;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		if (off)
			n = pread(fd, p + got, len - got, *off + (off_t)got);
		else
			n = read(fd, p + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

ssize_t fdio_read_full(int fd, void *buf, size_t len)
{
	return read_loop(fd, buf, len, NULL);
}

ssize_t fdio_pread_full(int fd, void *buf, size_t len, off_t off)
{
	return read_loop(fd, buf, len, &off);
}

int fdio_output(const struct pipe_host *host, struct pipe_ctx *ctx,
		const char *path, int *fd, bool *regular)
{
	struct stat st;
	FILE *f;
	int ret = host->open_output(ctx, path, &f);

	if (ret < 0)
		return ret;
	*fd = fileno(f);
	if (regular)
		*regular = fstat(*fd, &st) == 0 && S_ISREG(st.st_mode);
	return 0;
}
