/*
 * fdio.h - whole reads and writes on a file descriptor: the loops that go
 * on after EINTR and short transfers, written once for the command and
 * the plugins.
 */
#ifndef PIPE_FDIO_H
#define PIPE_FDIO_H

#include <stddef.h>
#include <sys/types.h>

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

#endif
