/*
 * fdio.h - whole reads and writes on a file descriptor: the loops that go
 * on after EINTR and short transfers, written once for the command and
 * the plugins; and a sink's output file as a descriptor.
 */
#ifndef PIPE_FDIO_H
#define PIPE_FDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "pipe_plugin.h"

/*
 * Write all len bytes of buf to fd. Returns 0, or negative errno of the
 * write that failed (-EIO for one that wrote nothing); how much went out
 * before a failure is not said.
 */
int fdio_write_all(int fd, const void *buf, size_t len);

/*
 * Read len bytes into buf from fd's position, stopping early only at the
 * end of the file. Returns the bytes read (fewer than len: the file ended)
 * or negative errno.
 */
ssize_t fdio_read_full(int fd, void *buf, size_t len);

/* fdio_read_full at offset off of fd (pread: the position stays). */
ssize_t fdio_pread_full(int fd, void *buf, size_t len, off_t off);

/*
 * For a sink that writes its output itself: the output `path` opened by
 * the host (open_output, with its rules and messages) as a descriptor,
 * *fd, which the host owns and closes; and whether it is a regular file
 * (*regular; NULL: not asked).  0 or open_output's negative errno.
 */
int fdio_output(const struct pipe_host *host, struct pipe_ctx *ctx,
		const char *path, int *fd, bool *regular);

#endif
